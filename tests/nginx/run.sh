#!/bin/bash
# tests/nginx/run.sh: nginx 1.26, unmodified, serving HTTPS over TCP and HTTP/3
# over QUIC, and proxying to an HTTPS upstream, with qtls as its only TLS library.
#
# Proves the drop-in claim for nginx: Debian 13's nginx source package (1.26.3,
# Debian's patches applied) is built with its own ./configure (not Debian's
# rules) with --with-http_ssl_module --with-http_v2_module --with-http_v3_module
# against qtls's OpenSSL-style prefix (make install-compat), without a change to
# its code. nginx's configure must find quictls's SSL_set_quic_method API (the
# native QUIC path, with 0-RTT), not fall back to its "OpenSSL compat" QUIC layer.
# One nginx (a master and two workers, LD_BIND_NOW=1) then serves one port over
# TCP and QUIC, two server blocks chosen by SNI, to clients that are not qtls,
# and to the project's h3client.
#
# Checks:
#   source        apt-get source nginx from trixie (private apt configuration) is 1.26
#   build         nginx configures and compiles against the prefix
#   links-qtls    the binary needs libqtls (from the prefix), not libssl.so.3
#   nm-u          every libssl name it imports is one libqtls defines
#   bind-now      LD_BIND_NOW=1 nginx -V: every symbol resolves; ssl, v2, v3 in
#   quic-native   configure found SSL_set_quic_method: NGX_QUIC without
#                 NGX_QUIC_OPENSSL_COMPAT in objs/ngx_auto_config.h
#   config        nginx -t accepts the configuration
#   start         nginx listens on the port over TCP and UDP
#   tcp-http1 tcp-h2   Debian's curl (system libssl) fetches both files, bytes
#                 checked, certificate verified against the test CA, TLS 1.3,
#                 HTTP/1.1 and h2; the alt-svc header names the port
#   tcp-sni-b     openssl s_client (system OpenSSL) with SNI b.example gets the
#                 second server block's certificate, verified as b.example
#   tcp-sni-mismatch  curl to c.example gets the default certificate and
#                 refuses it (exit 60): the checks above can fail
#   tcp-gnutls    gnutls-cli (GnuTLS) fetches index.html over TLS 1.3
#   tcp-0rtt      three times openssl s_client -sess_out, then -sess_in
#                 -early_data: "Early data was accepted", the response arrives,
#                 and nginx logged the request with $ssl_early_data 1 (on either
#                 worker: the ticket keys are shared by nginx's workers)
#   h3-get        h3client fetches both files over HTTP/3, verified
#   h3-sni-b      ... --sni=b.example: the second block's certificate
#   h3-sni-mismatch ... --sni=c.example: refused by the client
#   h3-resume-0rtt  connections each resume the session the one before kept and
#                 send their requests as 0-RTT, which nginx accepts; at least 3, and
#                 until one used a ticket from the other worker (at most 10)
#   h3-gtlsclient Debian's gtlsclient (ngtcp2 on GnuTLS) fetches both files
#   proxy         nginx as a TLS client through qtls: proxy_pass https:// to
#                 openssl s_server -WWW (system OpenSSL), proxy_ssl_verify on,
#                 proxy_ssl_name, SNI; the proxied bytes checked
#   proxy-wrong-name  the same upstream with a proxy_ssl_name its certificate
#                 does not carry: 502, and nginx says why
#   proxy-wrong-ca    ... with another CA as proxy_ssl_trusted_certificate: 502
#   h2load-h2 h2load-h1  h2load (nghttp2-client) runs 200 requests over 4
#                 connections, all succeed (a check, not a benchmark)
#   quit          nginx -s quit: nginx exits 0; no worker died (no "exited on
#                 signal" / "signal 11" in error.log)
# Every nginx runs with LD_BIND_NOW=1.
#
# Usage: tests/nginx/run.sh   (make interop runs it)
#   QTLS_NGINX_DIR=DIR  work directory (default build/nginx)
#   JOBS=N              parallel build jobs
# Exit status 0 when every check passed. Last line "N passed, N failed, N skipped".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${QTLS_NGINX_DIR:-$ROOT/build/nginx}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SRC=$W/src/nginx
OBJ=$W/obj
PREFIX=$W/qtls-compat
LOGS=$W/logs
RUN=$W/run
SYSLIBSSL=$(ls /usr/lib/*/libssl.so.3 2>/dev/null | head -n 1)

mkdir -p "$W" || exit 1
W=$(cd "$W" && pwd)
exec 9>"$W/.lock"
flock -w 900 9 || { echo "nginx: another run holds $W/.lock" >&2; exit 1; }
rm -rf "$LOGS" "$RUN"
mkdir -p "$LOGS" "$RUN"

# shellcheck source=../lib/results.sh
. "$ROOT/tests/lib/results.sh"
# shellcheck source=../lib/debsrc.sh
. "$ROOT/tests/lib/debsrc.sh"
# shellcheck source=../lib/linkcheck.sh
. "$ROOT/tests/lib/linkcheck.sh"

# Packages: scripts/deps.sh installs them as root and otherwise names them
# (interop has libpcre2-dev, nghttp2-client's h2load, gnutls-bin's gnutls-cli).
# shellcheck disable=SC2034 # nfail is results.sh's
"$ROOT/scripts/deps.sh" build interop certs h3 || { nfail=1; finish; }
for tool in curl:curl openssl:openssl gnutls-cli:gnutls-bin h2load:nghttp2-client; do
    command -v "${tool%%:*}" >/dev/null ||
        die deps "${tool%%:*} is missing: apt-get install ${tool#*:} (scripts/deps.sh interop)"
done

# ---------------------------------------------------------------- qtls

QBUILD=$W/qtls-build
{ make -C "$ROOT" -j"$JOBS" BUILD="$QBUILD" all &&
    make -C "$ROOT" BUILD="$QBUILD" PREFIX="$PREFIX" install-compat; } \
    >"$LOGS/qtls.log" 2>&1 || die qtls "make all install-compat failed" "$LOGS/qtls.log"

# ---------------------------------------------------------------- nginx source

# The Debian mirror's trixie index can name an upload its pool does not hold
# (yet, or any more); then this pinned one, checked against its .dsc's digest,
# comes from the pool directly. dpkg-source checks the rest against the .dsc.
NGINX_PIN=1.26.3-3+deb13u1
NGINX_PIN_SHA256=3d2b08a2d04f0ebc59be4d03969f643b0c7990b5b580db050da4abd57b059266
nginx_pinned_source() {
    local dl=$W/apt/src/nginx mirror dsc=nginx_$NGINX_PIN.dsc f
    mirror=${QTLS_DEBIAN_MIRROR:-$(debsrc_find_mirror | head -n 1)}
    [ -n "$mirror" ] || return 1
    echo "apt-get source nginx failed: the pinned $NGINX_PIN from $mirror's pool" >>"$LOGS/apt.log"
    rm -rf "$dl" && mkdir -p "$dl" || return 1
    curl -sSf -o "$dl/$dsc" "$mirror/pool/main/n/nginx/${dsc//+/%2b}" >>"$LOGS/apt.log" 2>&1 &&
        echo "$NGINX_PIN_SHA256  $dl/$dsc" | sha256sum -c >>"$LOGS/apt.log" 2>&1 || return 1
    for f in $(awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $3 }' \
        "$dl/$dsc"); do
        curl -sSf -o "$dl/$f" "$mirror/pool/main/n/nginx/${f//+/%2b}" >>"$LOGS/apt.log" 2>&1 ||
            return 1
    done
    rm -rf "$SRC"
    dpkg-source -x "$dl/$dsc" "$SRC" >>"$LOGS/apt.log" 2>&1 && touch "$SRC/.qtls-unpacked"
}

debsrc_init "$W/apt" "$LOGS/apt.log" trixie
debsrc_source nginx "$SRC" || nginx_pinned_source ||
    die source "apt-get source nginx (trixie) failed" "$LOGS/apt.log"
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version 2>/dev/null)
case $ver in
1.26.*) pass "source ($ver)" ;;
*) die source "trixie's nginx is $ver, not 1.26" ;;
esac

# ---------------------------------------------------------------- build

# nginx's own configure, out of tree (--builddir); run again, from scratch,
# when its arguments or the prefix's headers change (configure probes them).
cfg=(--prefix="$RUN" --builddir="$OBJ"
     --with-http_ssl_module --with-http_v2_module --with-http_v3_module
     --with-cc-opt="-I$PREFIX/include"
     --with-ld-opt="-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib")
key="${cfg[*]} $(cat "$PREFIX"/include/openssl/*.h "$PREFIX"/include/qtls/*.h | md5sum)"
if [ "$(cat "$OBJ/.qtls-config" 2>/dev/null)" != "$key" ]; then
    rm -rf "$OBJ"
    (cd "$SRC" && ./configure "${cfg[@]}") >"$LOGS/configure.log" 2>&1 ||
        die build "nginx's configure failed against qtls" "$LOGS/configure.log"
    echo "$key" >"$OBJ/.qtls-config"
else
    echo "configured before with the same arguments and headers" >"$LOGS/configure.log"
fi
rm -f "$OBJ/nginx" # relinked every run, against the qtls just built
make -C "$SRC" -f "$OBJ/Makefile" -j"$JOBS" >"$LOGS/build.log" 2>&1 ||
    die build "nginx did not build against qtls" "$LOGS/build.log"
NGINX=$OBJ/nginx
[ -x "$NGINX" ] || die build "no $NGINX after make" "$LOGS/build.log"
pass build

linkcheck_libs "$NGINX" "$PREFIX"
linkcheck_imports "$NGINX" "$PREFIX" "$SYSLIBSSL" "$LOGS"

if LD_BIND_NOW=1 "$NGINX" -V >"$LOGS/V.log" 2>&1 &&
    grep -q -- '--with-http_v3_module' "$LOGS/V.log" && grep -q 'TLS SNI support enabled' "$LOGS/V.log"; then
    pass "bind-now ($(grep -m1 'built with' "$LOGS/V.log"))"
else
    fail bind-now "LD_BIND_NOW=1 nginx -V failed or lacks http_v3 / SNI" && tail -n 5 "$LOGS/V.log"
fi

AUTO=$OBJ/ngx_auto_config.h
if grep -q '^#define NGX_QUIC_OPENSSL_COMPAT' "$AUTO"; then
    fail quic-native "configure chose nginx's OpenSSL compat QUIC layer (NGX_QUIC_OPENSSL_COMPAT)"
elif ! grep -q '^#define NGX_QUIC  *1' "$AUTO"; then
    fail quic-native "configure found no QUIC support (no NGX_QUIC in $AUTO)"
else
    pass "quic-native (SSL_set_quic_method found, no NGX_QUIC_OPENSSL_COMPAT)"
fi

# ---------------------------------------------------------------- set-up

BUILD=$QBUILD
WORK=$RUN
# shellcheck source=../../scripts/h3peers.sh
. "$ROOT/scripts/h3peers.sh"
h3_setup 2>"$LOGS/setup.log" || die setup "h3_setup failed" "$LOGS/setup.log"
h3_gtls_setup || true
PKI=$RUN/pki
mkdir -p "$PKI" "$RUN/logs"

# Two server blocks: the default (the ECDSA test leaf: localhost, 127.0.0.1)
# and b.example, an RSA leaf made here by the test CA.
{
    openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/b.key" -subj /CN=b.example \
        -out "$PKI/b.csr" &&
        printf 'subjectAltName=DNS:b.example\nextendedKeyUsage=serverAuth\n' >"$PKI/b.ext" &&
        openssl x509 -req -in "$PKI/b.csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca.key" \
            -CAcreateserial -days 30 -extfile "$PKI/b.ext" -out "$PKI/b.pem"
} >"$LOGS/pki.log" 2>&1 || die pki "cannot make b.example's certificate" "$LOGS/pki.log"

tcp_port_open() { grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp 2>/dev/null; }
free_port() {
    local p=$((20000 + RANDOM % 30000))
    while udp_port_open "$p" || tcp_port_open "$p"; do p=$((p + 1)); done
    echo "$p"
}
PORT=$(free_port)
UPSTREAM=$(free_port)
[ "$UPSTREAM" != "$PORT" ] || UPSTREAM=$((PORT + 1))

CONF=$RUN/nginx.conf
user=""
[ "$(id -u)" -eq 0 ] && user="user root;" # workers read the work tree as the caller
cat >"$CONF" <<EOF
$user
worker_processes 2;
daemon off;
pid $RUN/nginx.pid;
error_log $LOGS/error.log info;
events { worker_connections 256; }
http {
    log_format qtls 'pid=\$pid \$server_name sni=\$ssl_server_name \$server_protocol \$ssl_protocol '
                    'early=\$ssl_early_data "\$request" \$status \$body_bytes_sent';
    access_log $LOGS/access.log qtls;
    default_type application/octet-stream;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_early_data on;
    http2 on;
    root $HTDOCS;

    server {
        listen 127.0.0.1:$PORT ssl default_server;
        listen 127.0.0.1:$PORT quic reuseport default_server;
        server_name localhost;
        ssl_certificate $CERTS/ecdsa256.pem;
        ssl_certificate_key $CERTS/ecdsa256.key;
        add_header alt-svc 'h3=":$PORT"; ma=60' always;

        location /proxy/ {
            proxy_pass https://127.0.0.1:$UPSTREAM/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate $CERTS/ca.pem;
            proxy_ssl_name localhost;
            proxy_ssl_server_name on;
        }
        location /proxy-wrong-name/ {
            proxy_pass https://127.0.0.1:$UPSTREAM/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate $CERTS/ca.pem;
            proxy_ssl_name wrong.example;
            proxy_ssl_server_name on;
            proxy_ssl_session_reuse off; # a full handshake, verified
        }
        location /proxy-wrong-ca/ {
            proxy_pass https://127.0.0.1:$UPSTREAM/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate $CERTS/other-ca.pem;
            proxy_ssl_name localhost;
            proxy_ssl_server_name on;
            proxy_ssl_session_reuse off; # a full handshake, verified
        }
    }
    server {
        listen 127.0.0.1:$PORT ssl;
        listen 127.0.0.1:$PORT quic;
        server_name b.example;
        ssl_certificate $PKI/b.pem;
        ssl_certificate_key $PKI/b.key;
        add_header alt-svc 'h3=":$PORT"; ma=60' always;
    }
}
EOF
NGX=(env LD_BIND_NOW=1 "$NGINX" -p "$RUN" -e "$LOGS/error.log" -c "$CONF")
if "${NGX[@]}" -t >"$LOGS/config.log" 2>&1; then
    pass config
else
    die config "nginx -t refused the configuration" "$LOGS/config.log"
fi

# The upstream for the proxy checks: the system's OpenSSL, not qtls.
(cd "$HTDOCS" && exec timeout -k 2 300 openssl s_server -quiet -WWW -accept "127.0.0.1:$UPSTREAM" \
    -cert "$CERTS/ecdsa256.pem" -key "$CERTS/ecdsa256.key" >"$LOGS/s_server.log" 2>&1) &
UPSTREAM_PID=$!

timeout -k 2 300 "${NGX[@]}" >"$LOGS/nginx.out" 2>&1 &
SERVER_PID=$!
SERVER_PORT=$PORT
stop_all() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
    [ -n "$UPSTREAM_PID" ] && kill "$UPSTREAM_PID" 2>/dev/null
    wait 2>/dev/null
}
trap stop_all EXIT
for _ in $(seq 100); do
    udp_port_open "$PORT" && tcp_port_open "$PORT" && tcp_port_open "$UPSTREAM" && break
    kill -0 "$SERVER_PID" 2>/dev/null || die start "nginx exited" "$LOGS/error.log"
    sleep 0.05
done
if udp_port_open "$PORT" && tcp_port_open "$PORT"; then
    pass "start (port $PORT, TCP and UDP)"
else
    die start "nginx does not listen on TCP and UDP $PORT" "$LOGS/error.log"
fi

# ---------------------------------------------------------------- TCP

# access_has WHAT: a line of the access log has it (nginx writes it when a request ends).
access_has() {
    local _
    for _ in $(seq 20); do
        grep -qF -- "$1" "$LOGS/access.log" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# tcp_fetch NAME HTTP_VERSION ARGS...: curl fetches both files over HTTPS on TCP.
tcp_fetch() {
    local name=$1 want=$2 why="" f
    shift 2
    local dl=$RUN/$name.download log=$LOGS/$name.curl.log
    rm -rf "$dl" && mkdir -p "$dl"
    timeout -k 2 30 curl -sS -v --cacert "$CERTS/ca.pem" --resolve "localhost:$PORT:127.0.0.1" \
        -D "$dl/headers" -w '%{http_version}\n' "$@" \
        -o "$dl/index.html" "https://localhost:$PORT/index.html" \
        -o "$dl/big.bin" "https://localhost:$PORT/big.bin" >"$LOGS/$name.curl.out" 2>"$log"
    local rc=$?
    [ $rc -eq 0 ] || why="$why curl exited $rc;"
    [ "$(paste -sd' ' "$LOGS/$name.curl.out")" = "$want $want" ] ||
        why="$why HTTP versions '$(paste -sd' ' "$LOGS/$name.curl.out")', wanted $want;"
    for f in index.html big.bin; do
        cmp -s "$HTDOCS/$f" "$dl/$f" || why="$why $f did not arrive intact;"
    done
    grep -q 'SSL connection using TLSv1.3' "$log" || why="$why not TLS 1.3;"
    grep -qi "^alt-svc: h3=\":$PORT\"" "$dl/headers" || why="$why no alt-svc header for h3 on $PORT;"
    if [ -z "$why" ]; then
        pass "$name ($(grep -m1 'SSL connection using' "$log" | sed 's/^\* //'))"
    else
        fail "$name" "$why"
        tail -n 5 "$log"
    fi
}
tcp_fetch tcp-http1 1.1 --http1.1
tcp_fetch tcp-h2 2 --http2

# SNI b.example: the second block's certificate, verified against that name.
timeout -k 2 20 openssl s_client -connect "127.0.0.1:$PORT" -servername b.example \
    -verify_hostname b.example -CAfile "$CERTS/ca.pem" -verify_return_error </dev/null \
    >"$LOGS/tcp-sni-b.log" 2>&1
if grep -q '^subject=CN = b.example' "$LOGS/tcp-sni-b.log" &&
    grep -q 'Verify return code: 0 (ok)' "$LOGS/tcp-sni-b.log" &&
    grep -q 'TLSv1.3' "$LOGS/tcp-sni-b.log"; then
    pass tcp-sni-b
else
    fail tcp-sni-b "s_client with SNI b.example did not get b.example's certificate, verified"
    grep -E '^subject=|Verify return|error' "$LOGS/tcp-sni-b.log" | head -n 5
fi

# A name neither block has: the default certificate, which curl refuses.
timeout -k 2 20 curl -sS --cacert "$CERTS/ca.pem" --resolve "c.example:$PORT:127.0.0.1" \
    -o /dev/null "https://c.example:$PORT/index.html" >"$LOGS/tcp-sni-mismatch.log" 2>&1
rc=$?
if [ $rc -eq 60 ]; then
    pass tcp-sni-mismatch
else
    fail tcp-sni-mismatch "curl to c.example exited $rc, wanted 60 (certificate refused)"
fi

# GnuTLS over TCP: one request; stdin stays open until the body has come.
gout=$LOGS/tcp-gnutls.out
{
    printf 'GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    for _ in $(seq 100); do
        grep -qF "$(cat "$HTDOCS/index.html")" "$gout" 2>/dev/null && break
        sleep 0.05
    done
} | timeout -k 2 20 gnutls-cli --x509cafile="$CERTS/ca.pem" -p "$PORT" localhost \
    >"$gout" 2>"$LOGS/tcp-gnutls.err"
if grep -q 'HTTP/1.1 200 OK' "$gout" && grep -qF "$(cat "$HTDOCS/index.html")" "$gout" &&
    grep -q '^- Description: (TLS1.3' "$gout"; then
    pass "tcp-gnutls ($(sed -n 's/^- Description: //p' "$gout" | head -n 1))"
else
    fail tcp-gnutls "gnutls-cli did not fetch index.html over TLS 1.3"
    tail -n 5 "$LOGS/tcp-gnutls.err" "$gout"
fi

# 0-RTT over TCP, three times: a session from a full handshake (its ticket allows early data),
# then a connection that sends its request as early data with that ticket. nginx's two workers
# take connections as they come, so tickets also go from one worker to the other: the access
# log's pid says which served each. (Each round starts from a full handshake: nginx answers an
# early "Connection: close" request and closes before the handshake is done, as it does on
# OpenSSL, so that connection may end without a new ticket.)
workers_of() { grep -F -- "$1" "$LOGS/access.log" | sed -n 's/^pid=\([0-9]*\) .*/\1/p' | sort -u | wc -l; }
why=""
for i in 1 2 3; do
    sess=$RUN/tcp.session.$i log=$LOGS/tcp-0rtt.$i.log
    printf 'GET /index.html?tcp-full-%s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$i" |
        timeout -k 2 20 openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
            -CAfile "$CERTS/ca.pem" -verify_return_error -sess_out "$sess" -ign_eof \
            >"$LOGS/tcp-0rtt.$i.full.log" 2>&1
    [ -s "$sess" ] || why="$why $i: no session from the full handshake;"
    printf 'GET /index.html?tcp-early-%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' \
        "$i" >"$RUN/early.txt"
    timeout -k 2 20 openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
        -CAfile "$CERTS/ca.pem" -verify_return_error -sess_in "$sess" \
        -early_data "$RUN/early.txt" -ign_eof </dev/null >"$log" 2>&1
    grep -q '^Reused, TLSv1.3' "$log" || why="$why $i: not resumed;"
    grep -q 'Early data was accepted' "$log" || why="$why $i: early data not accepted;"
    grep -qF "$(cat "$HTDOCS/index.html")" "$log" || why="$why $i: no response body;"
    access_has "early=1 \"GET /index.html?tcp-early-$i " ||
        why="$why $i: nginx did not log \$ssl_early_data 1;"
done
if [ -z "$why" ]; then
    pass "tcp-0rtt (3 of 3 accepted, served by $(workers_of 'tcp-early-') worker(s))"
else
    fail tcp-0rtt "$why"
    grep 'tcp-' "$LOGS/access.log"
fi

# ---------------------------------------------------------------- QUIC

# h3 NAME EXPECT ARGS...: h3client (or gtlsclient) fetches both files over one connection;
# EXPECT "KEY=VALUE ..." must be in what the qtls client saw.
h3() {
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
        pass "$name${seen:+ ($seen)}"
    else
        fail "$name" "$why"
        tail -n 5 "$CLOG"
    fi
}
h3 h3-get qtls "kind=full alpn=h3"
h3 h3-sni-b qtls "kind=full alpn=h3" --sni=b.example
h3_run_client qtls h3-sni-mismatch "" --sni=c.example
if [ "$CLIENT_RC" -ne 0 ] && grep -qi 'certificate' "$CLOG"; then
    pass h3-sni-mismatch
else
    fail h3-sni-mismatch "a certificate for c.example was accepted (exit $CLIENT_RC)"
fi
# Resumption and 0-RTT: a full handshake, then connections that each resume the session the
# one before kept and send their requests as 0-RTT, all accepted. Each comes from a new UDP
# port, which reuseport hashes to either of nginx's workers; the run goes on (3 at least, 10 at
# most) until a ticket one worker issued was used with the other, since workers that do not
# share their ticket keys fail exactly there. The access log's pid says which served each.
h3_pid() { grep -F "HTTP/3.0" "$LOGS/access.log" | tail -n 1 | sed -n 's/^pid=\([0-9]*\) .*/\1/p'; }
rm -f "$RUN/h3.session"
h3 h3-resume-0rtt.0 qtls "kind=full" --session="$RUN/h3.session"
why="" crossed=0 n=0 early_logged=0 prev=$(h3_pid)
while [ $n -lt 10 ] && { [ $n -lt 3 ] || [ $crossed -eq 0 ]; }; do
    n=$((n + 1))
    nlog=$(wc -l <"$LOGS/access.log")
    h3_run_client qtls "h3-resume-0rtt.$n" "" --session="$RUN/h3.session"
    seen=$(h3_seen_by_client)
    [ "$CLIENT_RC" -eq 0 ] || why="$why $n: client exited $CLIENT_RC;"
    why="$why$(h3_bodies_ok | sed "s/^/ $n: /" | tr '\n' ';')"
    case " $seen " in *" kind=resumed "*" early=accepted "*) ;; *) why="$why $n: saw $seen;" ;; esac
    for _ in $(seq 20); do [ "$(wc -l <"$LOGS/access.log")" -ge $((nlog + 2)) ] && break; sleep 0.05; done
    early_logged=$((early_logged + $(tail -n +"$((nlog + 1))" "$LOGS/access.log" | grep -c 'HTTP/3.0 TLSv1.3 early=1')))
    cur=$(h3_pid)
    [ -n "$prev" ] && [ -n "$cur" ] && [ "$cur" != "$prev" ] && crossed=$((crossed + 1))
    prev=$cur
    [ -z "$why" ] || break
done
if [ -n "$why" ]; then
    fail h3-resume-0rtt "$why"
    tail -n 5 "$CLOG"
else
    pass "h3-resume-0rtt ($n resumed, 0-RTT accepted; $crossed with a ticket from the other worker; nginx logged \$ssl_early_data 1 for $early_logged requests)"
fi
if [ -n "$GTLS_WHY" ]; then
    fail h3-gtlsclient "no GnuTLS client: $GTLS_WHY"
else
    h3 h3-gtlsclient gtls ""
fi

# ---------------------------------------------------------------- proxy

# proxy NAME PATH STATUS: GET PATH over TLS 1.3 from nginx; wants STATUS (and for 200
# big.bin's bytes, from the upstream).
proxy() {
    local name=$1 path=$2 want=$3 why="" code
    code=$(timeout -k 2 30 curl -sS --cacert "$CERTS/ca.pem" --resolve "localhost:$PORT:127.0.0.1" \
        -o "$RUN/$name.body" -w '%{http_code}' "https://localhost:$PORT$path" 2>"$LOGS/$name.curl.log")
    [ "$code" = "$want" ] || why="$why status $code, wanted $want;"
    if [ "$want" = 200 ]; then
        cmp -s "$HTDOCS/big.bin" "$RUN/$name.body" || why="$why the proxied big.bin differs;"
    fi
    if [ -z "$why" ]; then
        pass "$name"
    else
        fail "$name" "$why"
        tail -n 3 "$LOGS/error.log"
    fi
}
proxy proxy /proxy/big.bin 200
proxy proxy-wrong-name /proxy-wrong-name/big.bin 502
grep -q 'upstream SSL certificate does not match "wrong.example"' "$LOGS/error.log" ||
    fail proxy-wrong-name "error.log does not say the upstream certificate does not match"
proxy proxy-wrong-ca /proxy-wrong-ca/big.bin 502
grep -q 'upstream SSL certificate verify error' "$LOGS/error.log" ||
    fail proxy-wrong-ca "error.log does not say the upstream certificate did not verify"

# ---------------------------------------------------------------- h2load

h2load_run() {
    local name=$1
    shift
    timeout -k 2 60 h2load -n 200 -c 4 "$@" "https://127.0.0.1:$PORT/index.html" \
        >"$LOGS/$name.log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ] && grep -q 'requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored' \
        "$LOGS/$name.log" && grep -q 'TLS Protocol: TLSv1.3' "$LOGS/$name.log"; then
        pass "$name ($(grep -m1 '^finished in' "$LOGS/$name.log"))"
    else
        fail "$name" "h2load exited $rc or not every request succeeded"
        grep -E '^requests:|TLS|error' "$LOGS/$name.log" | head -n 5
    fi
}
h2load_run h2load-h2
h2load_run h2load-h1 --h1

# ---------------------------------------------------------------- quit

"${NGX[@]}" -s quit >"$LOGS/quit.log" 2>&1
wait "$SERVER_PID"
rc=$?
SERVER_PID=""
crashes=$(grep -E 'exited on signal|signal 11|\[alert\]' "$LOGS/error.log" | head -n 3)
if [ $rc -eq 0 ] && [ -z "$crashes" ]; then
    pass quit
else
    fail quit "nginx exited $rc; $crashes"
fi
finish
