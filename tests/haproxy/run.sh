#!/bin/bash
# tests/haproxy/run.sh: HAProxy 2.6, unmodified, serving HTTP/3 on qtls.
#
# Proves the drop-in claim for a server: Debian 12's haproxy source package
# (2.6.12, Debian's patches applied) is built with USE_QUIC=1 against qtls's
# OpenSSL-style prefix (make install-compat: SSL_INC/SSL_LIB point there, as
# they would at a quictls install), without a change to its code. Then a
# QUIC-only frontend serves two files from HAProxy's own "http-request return"
# to the project's h3client and to Debian's gtlsclient (ngtcp2 on GnuTLS).
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
#   resume-0rtt   a second connection resumes the first's session and its
#                 requests go as 0-RTT, which HAProxy accepts
#   gtlsclient    Debian's gtlsclient fetches both files
#   tcp-http1 tcp-h2   the same port over TCP (a TCP bind beside the QUIC one in
#                 the same frontend): Debian's curl (system libssl) fetches both
#                 files with HTTP/1.1 and with h2, bytes checked, TLS 1.3
#   tcp-sni-b     ... b.example gets the crt-list's RSA certificate over TCP
#   tcp-ocsp      openssl s_client -status gets the stapled response over TCP
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

# Packages: scripts/deps.sh installs them as root and otherwise names them.
"$ROOT/scripts/deps.sh" build interop certs h3 || { nfail=1; finish; }

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

needed=$(ldd "$HAPROXY")
if echo "$needed" | grep -q 'libssl\.so'; then
    fail links-qtls "the binary needs a libssl: $(echo "$needed" | grep libssl)"
elif ! echo "$needed" | grep -q "libqtls\.so.* => $PREFIX/lib/"; then
    fail links-qtls "libqtls does not come from $PREFIX/lib: $(echo "$needed" | grep qtls)"
else
    pass links-qtls
fi

# Imported names that the system libssl defines and libqtls does not.
defined() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u; }
nm -D --undefined-only "$HAPROXY" | awk '{print $2}' | sed 's/@.*//' | sort -u >"$LOGS/imports"
defined "$SYSLIBSSL" >"$LOGS/libssl.names"
defined "$PREFIX/lib/libssl.so" >"$LOGS/qtls.names"
only_libssl=$(comm -12 "$LOGS/imports" "$LOGS/libssl.names" | comm -23 - "$LOGS/qtls.names")
if [ -n "$only_libssl" ]; then
    fail nm-u "imports only libssl defines: $(echo "$only_libssl" | tr '\n' ' ')"
else
    pass "nm-u ($(comm -12 "$LOGS/imports" "$LOGS/qtls.names" | wc -l) libssl names, all from qtls)"
fi

if LD_BIND_NOW=1 "$HAPROXY" -vv >"$LOGS/vv.log" 2>&1 && grep -q '+QUIC' "$LOGS/vv.log"; then
    pass bind-now
else
    fail bind-now "LD_BIND_NOW=1 haproxy -vv failed or lacks +QUIC" && tail -n 5 "$LOGS/vv.log"
fi

# ---------------------------------------------------------------- set-up

BUILD=$QBUILD
WORK=$W/run
# shellcheck source=../../scripts/h3peers.sh
. "$ROOT/scripts/h3peers.sh"
h3_setup 2>"$LOGS/setup.log" || die setup "h3_setup failed" "$LOGS/setup.log"
h3_gtls_setup || true
PKI=$W/run/pki
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
while udp_port_open "$SERVER_PORT"; do SERVER_PORT=$((SERVER_PORT + 1)); done
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
EOF
if LD_BIND_NOW=1 "$HAPROXY" -c -f "$CFG" >"$LOGS/config.log" 2>&1; then
    pass config
else
    die config "haproxy -c refused the configuration" "$LOGS/config.log"
fi

LD_BIND_NOW=1 timeout -k 2 300 "$HAPROXY" -db -f "$CFG" >"$LOGS/haproxy.log" 2>&1 &
SERVER_PID=$!
trap 'h3_stop_server' EXIT
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

h3_stop_server
finish
