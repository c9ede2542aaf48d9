#!/bin/bash
# tests/haproxy/run.sh: HAProxy 2.6, unmodified, serving HTTP/3 on qtls.
#
# Proves the drop-in claim for a server: Debian 12's haproxy source package
# (2.6.12, Debian's patches applied) is built with USE_QUIC=1 against qtls's
# OpenSSL-style prefix (make install-compat: SSL_INC/SSL_LIB point there, as
# they would at a quictls install), without a change to its code. Then a
# frontend serves two files from HAProxy's own "http-request return" over QUIC
# to the project's h3client and to Debian's gtlsclient (ngtcp2 on GnuTLS), and
# over TCP on the same port to Debian's curl and openssl. A second frontend
# proxies to TLS backends that are not qtls (openssl s_server), with HAProxy as
# a TLS client on qtls.
#
# Checks:
#   source        apt-get source haproxy (private apt configuration) is 2.6
#   build         HAProxy compiles and links against the prefix
#   links-qtls    the binary needs libqtls (from the prefix), not libssl.so.3
#   nm-u          no symbol it imports is one only the system libssl defines
#   bind-now      LD_BIND_NOW=1 haproxy -vv: every symbol resolves; QUIC is in
#   config        haproxy -c accepts the configuration (crt-list, OCSP file)
#   get           h3client fetches both files, bytes checked, certificate and
#                 host name verified against the test CA
#   sni-default   ... the default certificate (ECDSA, localhost/127.0.0.1)
#   sni-b         --sni=b.example gets the crt-list's RSA certificate for
#                 b.example (verified against that name)
#   sni-mismatch  --sni=c.example gets the default certificate, which the
#                 client refuses: the check above can fail
#   ocsp          the client asks for OCSP status; HAProxy staples the
#                 response from the .ocsp file; the client verifies it: good
#   pq-quic       h3client and HAProxy, both on qtls's default groups,
#                 agree on X25519MLKEM768 without a HelloRetryRequest
#   resume-0rtt   a second connection resumes the first's session and its
#                 requests go as 0-RTT, which HAProxy accepts
#   gtlsclient    Debian's gtlsclient fetches both files
#   tcp-http1 tcp-h2   the same port over TCP (a TCP bind beside the QUIC one in
#                 the same frontend): Debian's curl (system libssl) fetches both
#                 files with HTTP/1.1 and with h2, bytes checked, TLS 1.3
#   tcp-sni-b     ... b.example gets the crt-list's RSA certificate over TCP
#   tcp-ocsp      openssl s_client -status gets the stapled response over TCP
#   pq-tcp        OpenSSL 3.5's s_client (tests/pq/ossl35.sh builds it once
#                 into build/ossl35, minutes the first time) offering only
#                 X25519MLKEM768 negotiates it with HAProxy's TCP bind
#   tcp-0rtt      the TCP bind has allow-0rtt: s_client -sess_out, then
#                 -sess_in -early_data with the request as the only data:
#                 resumed (HAProxy's ssl_fc_is_resumed too), "Early data was
#                 accepted", and the response to the early request arrives
#   backend-tls   HAProxy as a TLS client: curl -> a second frontend -> a
#                 backend "server ... ssl verify required ca-file sni
#                 verifyhost" -> openssl s_server -WWW -tls1_3 (system OpenSSL
#                 3.0); both files arrive intact, HAProxy's ssl_bc_protocol
#                 says TLSv1.3 for both backend connections
#   backend-resume  the second backend connection resumes the first's session,
#                 which HAProxy keeps with i2d_SSL_SESSION/d2i_SSL_SESSION
#                 (per thread: the proxy frontend runs on thread 1)
#   backend-badname  a backend whose certificate (same CA) is for b.example:
#                 HAProxy refuses it (503) and s_server gets its alert
#   backend-badca ... a self-signed certificate for localhost: the same
# Every HAProxy runs with LD_BIND_NOW=1.
#
# Usage: tests/haproxy/run.sh   (make interop runs it)
#   QTLS_HAPROXY_DIR=DIR  work directory (default build/haproxy)
#   JOBS=N                parallel build jobs
# Exit status 0 when every check passed. Last line "N passed, N failed, N skipped".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${QTLS_HAPROXY_DIR:-$ROOT/build/haproxy}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SRC=$W/src/haproxy
PREFIX=$W/qtls-compat
LOGS=$W/logs
SYSLIBSSL=$(ls /usr/lib/*/libssl.so.3 2>/dev/null | head -n 1)

mkdir -p "$W" || exit 1
exec 9>"$W/.lock"
flock -w 900 9 || { echo "haproxy: another run holds $W/.lock" >&2; exit 1; }
rm -rf "$LOGS" "$W/run"
mkdir -p "$LOGS" "$W/run"

# shellcheck source=../lib/results.sh
. "$ROOT/tests/lib/results.sh"
# shellcheck source=../lib/debsrc.sh
. "$ROOT/tests/lib/debsrc.sh"
# shellcheck source=../lib/linkcheck.sh
. "$ROOT/tests/lib/linkcheck.sh"

# Packages: scripts/deps.sh installs them as root and otherwise names them.
"$ROOT/scripts/deps.sh" build interop certs h3 pq || { nfail=1; finish; }

# ---------------------------------------------------------------- qtls

QBUILD=$W/qtls-build
{ make -C "$ROOT" -j"$JOBS" BUILD="$QBUILD" all &&
    make -C "$ROOT" BUILD="$QBUILD" PREFIX="$PREFIX" install-compat; } \
    >"$LOGS/qtls.log" 2>&1 || die qtls "make all install-compat failed" "$LOGS/qtls.log"

# ---------------------------------------------------------------- HAProxy

debsrc_init "$W/apt" "$LOGS/apt.log"
debsrc_source haproxy "$SRC" || die source "apt-get source haproxy failed" "$LOGS/apt.log"
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version 2>/dev/null)
case $ver in
2.6.*) pass "source ($ver)" ;;
*) die source "bookworm's haproxy is $ver, not 2.6" ;;
esac

# HAProxy's Makefile does not track headers outside its tree: rebuild from
# scratch when the prefix's headers changed.
stamp=$(cat "$PREFIX"/include/openssl/*.h "$PREFIX"/include/qtls/*.h | md5sum)
if [ "$(cat "$W/.headers" 2>/dev/null)" != "$stamp" ]; then
    make -C "$SRC" clean >/dev/null 2>&1
    echo "$stamp" >"$W/.headers"
fi
rm -f "$SRC/haproxy" # relinked every run, against the qtls just built
make -C "$SRC" -j"$JOBS" TARGET=linux-glibc USE_OPENSSL=1 USE_QUIC=1 \
    SSL_INC="$PREFIX/include" SSL_LIB="$PREFIX/lib" LDFLAGS="-Wl,-rpath,$PREFIX/lib" \
    >"$LOGS/build.log" 2>&1 || die build "HAProxy did not build against qtls" "$LOGS/build.log"
HAPROXY=$SRC/haproxy
pass build

linkcheck_libs "$HAPROXY" "$PREFIX"
linkcheck_imports "$HAPROXY" "$PREFIX" "$SYSLIBSSL" "$LOGS"

if LD_BIND_NOW=1 "$HAPROXY" -vv >"$LOGS/vv.log" 2>&1 && grep -q '+QUIC' "$LOGS/vv.log"; then
    pass bind-now
else
    fail bind-now "LD_BIND_NOW=1 haproxy -vv failed or lacks +QUIC" && tail -n 5 "$LOGS/vv.log"
fi

# ---------------------------------------------------------------- set-up

# OpenSSL 3.5's openssl for pq-tcp, before any server starts (the servers run under a
# timeout, and the first build takes minutes): tests/pq/ossl35.sh's last line names it.
O35=$("$ROOT/tests/pq/ossl35.sh" 2>"$LOGS/ossl35.log" | tail -n 1 |
    sed -n 's/^ossl35: \([^ ]*\) (.*/\1/p')
[ -x "$O35/bin/openssl" ] || O35=""

BUILD=$QBUILD
WORK=$W/run
# shellcheck source=../../scripts/h3peers.sh
. "$ROOT/scripts/h3peers.sh"
h3_setup 2>"$LOGS/setup.log" || die setup "h3_setup failed" "$LOGS/setup.log"
h3_gtls_setup || true
PKI=$W/run/pki
# tcp_port_open PORT: something listens on TCP PORT (IPv4 or IPv6).
tcp_port_open() {
    awk -v p="$(printf '%04X' "$1")" '$4 == "0A" && $2 ~ (":" p "$") { f = 1 } END { exit !f }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
mkdir -p "$PKI"

# Two sites: the default (the ECDSA test leaf: localhost, 127.0.0.1) with its
# OCSP response and issuer beside it, as HAProxy looks for them; and
# b.example, an RSA leaf made here by the test CA.
cat "$CERTS/ecdsa256.pem" "$CERTS/ecdsa256.key" >"$PKI/site-a.pem"
cp "$CERTS/ca.pem" "$PKI/site-a.pem.issuer"
"$ROOT/scripts/gen-ocsp.sh" "$CERTS/ca.pem" "$CERTS/ca.key" "$CERTS/ecdsa256.pem" \
    "$PKI/site-a.pem.ocsp" 2>"$LOGS/pki.log" || die pki "gen-ocsp.sh failed" "$LOGS/pki.log"
{
    openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/b.key" -subj /CN=b.example \
        -out "$PKI/b.csr" &&
        printf 'subjectAltName=DNS:b.example\nextendedKeyUsage=serverAuth\n' >"$PKI/b.ext" &&
        openssl x509 -req -in "$PKI/b.csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca.key" \
            -CAcreateserial -days 30 -extfile "$PKI/b.ext" -out "$PKI/b.pem"
} >>"$LOGS/pki.log" 2>&1 || die pki "cannot make b.example's certificate" "$LOGS/pki.log"
cat "$PKI/b.pem" "$PKI/b.key" >"$PKI/site-b.pem"
printf '%s\n%s b.example\n' "$PKI/site-a.pem" "$PKI/site-b.pem" >"$PKI/crt-list"

SERVER_PORT=$((20000 + RANDOM % 30000))
while udp_port_open "$SERVER_PORT" || tcp_port_open "$SERVER_PORT"; do
    SERVER_PORT=$((SERVER_PORT + 1))
done
# ---------------------------------------------------------------- TLS backends (not qtls)
# Three `openssl s_server -WWW` (the system OpenSSL 3.0, TLS 1.3 only) serving the same
# files from BE_ROOT under /ok/, /badname/ and /badca/: the test CA's localhost
# certificate; b.example's (same CA, another name); a self-signed localhost certificate.
BE_ROOT=$W/run/be-root
mkdir -p "$BE_ROOT"
for d in ok badname badca; do ln -sfn "$HTDOCS" "$BE_ROOT/$d"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$PKI/other.key" -out "$PKI/other.pem" >>"$LOGS/pki.log" 2>&1 ||
    die pki "cannot make the self-signed certificate" "$LOGS/pki.log"

# A free TCP port from a random start, not one taken here already.
TAKEN_PORTS=" $SERVER_PORT "
free_tcp_port() {
    local p=$((20000 + RANDOM % 30000))
    while tcp_port_open "$p" || udp_port_open "$p" || [[ $TAKEN_PORTS == *" $p "* ]]; do
        p=$((p + 1))
    done
    TAKEN_PORTS="$TAKEN_PORTS$p "
    echo "$p"
}
BE_PIDS=()
# be_start NAME CERT KEY: sets BE_PORT.
be_start() {
    BE_PORT=$(free_tcp_port)
    (cd "$BE_ROOT" && exec timeout -k 2 300 openssl s_server -WWW -tls1_3 -accept "127.0.0.1:$BE_PORT" \
        -cert "$2" -key "$3") >"$LOGS/be-$1.log" 2>&1 &
    BE_PIDS+=($!)
    for _ in $(seq 100); do
        tcp_port_open "$BE_PORT" && return 0
        sleep 0.05
    done
    die "backend-$1" "openssl s_server did not listen on $BE_PORT" "$LOGS/be-$1.log"
}
be_stop() {
    local p
    for p in "${BE_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    BE_PIDS=()
}
trap 'be_stop' EXIT
be_start ok "$CERTS/ecdsa256.pem" "$CERTS/ecdsa256.key"
BE_OK_PORT=$BE_PORT
be_start badname "$PKI/b.pem" "$PKI/b.key"
BE_BADNAME_PORT=$BE_PORT
be_start badca "$PKI/other.pem" "$PKI/other.key"
BE_BADCA_PORT=$BE_PORT
PROXY_PORT=$(free_tcp_port)

CFG=$W/run/haproxy.cfg
cat >"$CFG" <<EOF
global
    tune.bufsize 262144
defaults
    mode http
    timeout client 10s
    timeout connect 5s
    timeout server 10s
frontend h3
    bind quic4@127.0.0.1:$SERVER_PORT ssl crt-list $PKI/crt-list alpn h3 allow-0rtt
    bind 127.0.0.1:$SERVER_PORT ssl crt-list $PKI/crt-list alpn h2,http/1.1 allow-0rtt
    http-request return status 200 content-type application/octet-stream file $HTDOCS/big.bin if { path /big.bin }
    http-request return status 200 content-type text/html file $HTDOCS/index.html
    http-after-response set-header X-Resumed %[ssl_fc_is_resumed]
# HAProxy as a TLS client (qtls's client side): a frontend whose paths go to the backends.
# HAProxy keeps a server's session per thread and the backends' HTTP/1.0 answers close the
# client's connection, so the proxy frontend runs on one thread for backend-resume.
frontend proxy
    bind 127.0.0.1:$PROXY_PORT ssl crt $PKI/site-a.pem alpn http/1.1 thread 1
    use_backend be_ok if { path_beg /ok/ }
    use_backend be_badname if { path_beg /badname/ }
    use_backend be_badca if { path_beg /badca/ }
backend be_ok
    http-response set-header X-Backend-TLS "%[ssl_bc_protocol] %[ssl_bc_cipher] resumed=%[ssl_bc_is_resumed]"
    server s1 127.0.0.1:$BE_OK_PORT ssl verify required ca-file $CERTS/ca.pem sni str(localhost) verifyhost localhost
backend be_badname
    server s1 127.0.0.1:$BE_BADNAME_PORT ssl verify required ca-file $CERTS/ca.pem sni str(localhost) verifyhost localhost
backend be_badca
    server s1 127.0.0.1:$BE_BADCA_PORT ssl verify required ca-file $CERTS/ca.pem sni str(localhost) verifyhost localhost
EOF
if LD_BIND_NOW=1 "$HAPROXY" -c -f "$CFG" >"$LOGS/config.log" 2>&1; then
    pass config
else
    die config "haproxy -c refused the configuration" "$LOGS/config.log"
fi

LD_BIND_NOW=1 timeout -k 2 300 "$HAPROXY" -db -f "$CFG" >"$LOGS/haproxy.log" 2>&1 &
SERVER_PID=$!
trap 'h3_stop_server; be_stop' EXIT
for _ in $(seq 100); do
    udp_port_open "$SERVER_PORT" && break
    kill -0 "$SERVER_PID" 2>/dev/null || die start "HAProxy exited" "$LOGS/haproxy.log"
    sleep 0.05
done
udp_port_open "$SERVER_PORT" || die start "HAProxy does not listen on UDP $SERVER_PORT" "$LOGS/haproxy.log"

# ---------------------------------------------------------------- clients

# client NAME KIND EXPECT ARGS...: one connection fetching both files;
# EXPECT "KEY=VALUE ..." must be in what the qtls client saw.
client() {
    local name=$1 kind=$2 expect=$3 why="" kv seen
    shift 3
    h3_run_client "$kind" "$name" "" "$@"
    [ "$CLIENT_RC" -eq 0 ] || why="$why client exited $CLIENT_RC;"
    why="$why$(h3_bodies_ok | tr '\n' ';')"
    if [ "$kind" = qtls ]; then
        seen=$(h3_seen_by_client)
        for kv in $expect; do
            case " $seen " in *" $kv "*) ;; *) why="$why wanted $kv, saw: $seen;" ;; esac
        done
    fi
    if [ -z "$why" ]; then
        pass "$name"
    else
        fail "$name" "$why"
        tail -n 5 "$CLOG"
    fi
}

client get qtls "kind=full alpn=h3"
client sni-b qtls "kind=full alpn=h3" --sni=b.example
h3_run_client qtls sni-mismatch "" --sni=c.example
if [ "$CLIENT_RC" -ne 0 ] && grep -q 'certificate' "$CLOG"; then
    pass sni-mismatch
else
    fail sni-mismatch "a certificate for c.example was accepted (exit $CLIENT_RC)"
fi
client ocsp qtls "kind=full ocsp=good" --ocsp
# Post-quantum: h3client's defaults and HAProxy's (qtls's: neither sets groups) agree on
# X25519MLKEM768.
client pq-quic qtls "kind=full group=X25519MLKEM768 hrr=no"
rm -f "$W/run/session"
client resume-0rtt.1 qtls "kind=full" --session="$W/run/session"
client resume-0rtt.2 qtls "kind=resumed early=accepted" --session="$W/run/session"
if [ -n "$GTLS_WHY" ]; then
    fail gtlsclient "no GnuTLS client: $GTLS_WHY"
else
    client gtlsclient gtls ""
fi

# ---------------------------------------------------------------- the same port over TCP
# The same frontend's TCP bind, through qtls's record layer, to clients that are not qtls:
# Debian's curl (system libssl) and openssl s_client.

# tcp_fetch NAME HTTP_VERSION HOST ARGS...: curl fetches both files over HTTPS on TCP.
tcp_fetch() {
    local name=$1 want=$2 host=$3 why="" f
    shift 3
    local dl=$W/run/$name.download log=$LOGS/$name.curl.log
    rm -rf "$dl" && mkdir -p "$dl"
    timeout -k 2 30 curl -sS -v --cacert "$CERTS/ca.pem" --resolve "$host:$SERVER_PORT:127.0.0.1" \
        -w '%{http_version}\n' "$@" -o "$dl/index.html" "https://$host:$SERVER_PORT/index.html" \
        -o "$dl/big.bin" "https://$host:$SERVER_PORT/big.bin" >"$LOGS/$name.curl.out" 2>"$log"
    local rc=$?
    [ $rc -eq 0 ] || why="$why curl exited $rc;"
    [ "$(paste -sd' ' "$LOGS/$name.curl.out")" = "$want $want" ] ||
        why="$why HTTP versions '$(paste -sd' ' "$LOGS/$name.curl.out")', wanted $want;"
    for f in index.html big.bin; do
        cmp -s "$HTDOCS/$f" "$dl/$f" || why="$why $f did not arrive intact;"
    done
    grep -q 'SSL connection using TLSv1.3' "$log" || why="$why not TLS 1.3;"
    if [ -z "$why" ]; then
        pass "$name ($(grep -m1 'SSL connection using' "$log" | sed 's/^\* //'))"
    else
        fail "$name" "$why"
        tail -n 5 "$log"
    fi
}

tcp_fetch tcp-http1 1.1 localhost --http1.1
tcp_fetch tcp-h2 2 localhost --http2
tcp_fetch tcp-sni-b 1.1 b.example --http1.1
# OCSP stapling over TCP: s_client asks, HAProxy staples the .ocsp file's response.
echo Q | timeout -k 2 20 openssl s_client -connect "127.0.0.1:$SERVER_PORT" -servername localhost \
    -CAfile "$CERTS/ca.pem" -verify_return_error -status -tls1_3 >"$LOGS/tcp-ocsp.log" 2>&1
if grep -q 'OCSP Response Status: successful' "$LOGS/tcp-ocsp.log" &&
    grep -q 'Cert Status: good' "$LOGS/tcp-ocsp.log"; then
    pass tcp-ocsp
else
    fail tcp-ocsp "openssl s_client -status got no good stapled response"
    tail -n 5 "$LOGS/tcp-ocsp.log"
fi

# Post-quantum over TCP: Debian's curl and openssl (3.0) cannot, so OpenSSL 3.5's s_client
# (tests/pq/ossl35.sh builds it once, into build/ossl35, and says where) offers only
# X25519MLKEM768 to HAProxy's TCP bind.
if [ -n "$O35" ]; then
    echo Q | LD_LIBRARY_PATH=$O35/lib timeout -k 2 20 "$O35/bin/openssl" s_client \
        -connect "127.0.0.1:$SERVER_PORT" -servername localhost -CAfile "$CERTS/ca.pem" \
        -verify_return_error -tls1_3 -groups X25519MLKEM768 >"$LOGS/pq-tcp.log" 2>&1
    if grep -q 'Negotiated TLS1.3 group: X25519MLKEM768' "$LOGS/pq-tcp.log" &&
        grep -q 'Verify return code: 0 (ok)' "$LOGS/pq-tcp.log"; then
        pass "pq-tcp ($(LD_LIBRARY_PATH=$O35/lib "$O35/bin/openssl" version | cut -d' ' -f1-2) s_client)"
    else
        fail pq-tcp "OpenSSL 3.5's s_client did not negotiate X25519MLKEM768"
        tail -n 5 "$LOGS/pq-tcp.log"
    fi
else
    fail pq-tcp "tests/pq/ossl35.sh failed: $(tail -n 3 "$LOGS/ossl35.log" | paste -sd' ')"
fi

# 0-RTT over TCP: s_client keeps the session of a first connection, then sends a request as
# early data on a second one. The TCP bind has allow-0rtt, as the QUIC one.
REQ=$W/run/early.req
printf 'GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >"$REQ"
rm -f "$W/run/tcp.session"
timeout -k 2 20 openssl s_client -connect "127.0.0.1:$SERVER_PORT" -servername localhost \
    -CAfile "$CERTS/ca.pem" -verify_return_error -tls1_3 -ign_eof -sess_out "$W/run/tcp.session" \
    <"$REQ" >"$LOGS/tcp-0rtt.1.log" 2>&1
timeout -k 2 20 openssl s_client -connect "127.0.0.1:$SERVER_PORT" -servername localhost \
    -CAfile "$CERTS/ca.pem" -verify_return_error -tls1_3 -ign_eof -sess_in "$W/run/tcp.session" \
    -early_data "$REQ" </dev/null >"$LOGS/tcp-0rtt.2.log" 2>&1
why=""
[ -s "$W/run/tcp.session" ] || why="$why no session from the first connection;"
grep -q '^Reused, TLSv1.3' "$LOGS/tcp-0rtt.2.log" || why="$why not resumed;"
grep -q 'Early data was accepted' "$LOGS/tcp-0rtt.2.log" || why="$why early data not accepted;"
grep -q '^HTTP/1.1 200' "$LOGS/tcp-0rtt.2.log" || why="$why no 200 response;"
grep -qF "$(cat "$HTDOCS/index.html")" "$LOGS/tcp-0rtt.2.log" || why="$why not index.html's body;"
grep -qi '^x-resumed: 1' "$LOGS/tcp-0rtt.2.log" || why="$why HAProxy did not see a resumption;"
if [ -z "$why" ]; then
    pass tcp-0rtt
else
    fail tcp-0rtt "$why"
    tail -n 8 "$LOGS/tcp-0rtt.2.log"
fi

# ---------------------------------------------------------------- HAProxy as a TLS client
# curl -> HAProxy's proxy frontend -> openssl s_server (system OpenSSL 3.0): HAProxy's
# server side of qtls verifies the backend's certificate against the test CA and the name
# localhost.

# be_fetch NAME PATH...: curl fetches https://localhost:PROXY_PORT/PATH for each; sets
# BE_CODES (the status codes) and BE_LOG (curl's -v log, response headers included).
be_fetch() {
    local name=$1 p args=()
    shift
    local dl=$W/run/$name.download
    rm -rf "$dl" && mkdir -p "$dl"
    for p in "$@"; do args+=(-o "$dl/$(basename "$p")" "https://localhost:$PROXY_PORT/$p"); done
    BE_LOG=$LOGS/$name.curl.log
    BE_DL=$dl
    BE_CODES=$(timeout -k 2 60 curl -sS -v --http1.1 --cacert "$CERTS/ca.pem" \
        --resolve "localhost:$PROXY_PORT:127.0.0.1" -w '%{http_code} ' "${args[@]}" 2>"$BE_LOG")
    BE_CODES=${BE_CODES% }
}

be_fetch backend-tls ok/index.html ok/big.bin
why=""
[ "$BE_CODES" = "200 200" ] || why="$why status codes '$BE_CODES', wanted 200 200;"
for f in index.html big.bin; do
    cmp -s "$HTDOCS/$f" "$BE_DL/$f" || why="$why $f did not arrive intact;"
done
betls=$(sed -n 's/^< [Xx]-[Bb]ackend-[Tt][Ll][Ss]: \(.*\)\r$/\1/p' "$BE_LOG")
[ "$(echo "$betls" | grep -c '^TLSv1.3 ')" -eq 2 ] ||
    why="$why the backend connections were not both TLS 1.3 ($(echo "$betls" | paste -sd';'));"
if [ -z "$why" ]; then
    pass "backend-tls ($(echo "$betls" | head -n 1 | cut -d' ' -f1-2))"
else
    fail backend-tls "$why"
    tail -n 5 "$BE_LOG"
fi
# The second backend connection resumed the first's session, which HAProxy kept with
# i2d_SSL_SESSION and gave back with d2i_SSL_SESSION and SSL_set_session.
if [ "$(echo "$betls" | sed -n 2p | sed 's/.* //')" = resumed=1 ]; then
    pass backend-resume
else
    fail backend-resume "second backend connection: '$(echo "$betls" | sed -n 2p)', wanted resumed=1"
fi
# Negative: a certificate for another name, then one from another CA: HAProxy refuses both
# backends (503 after its retries), so the positive check above can fail.
for neg in badname badca; do
    be_fetch "backend-$neg" "$neg/index.html"
    alert=$(grep -o -m1 'alert [a-z ]*:' "$LOGS/be-$neg.log" | sed 's/:$//')
    if [ "$BE_CODES" != 503 ] && [ "$BE_CODES" != 502 ]; then
        fail "backend-$neg" "HAProxy answered '$BE_CODES' through a backend it should refuse"
    elif grep -q '^FILE:' "$LOGS/be-$neg.log" || [ -z "$alert" ]; then
        fail "backend-$neg" "s_server got no alert from HAProxy, or served a file"
    else
        pass "backend-$neg ($BE_CODES, s_server got $alert)"
    fi
done

h3_stop_server
finish
