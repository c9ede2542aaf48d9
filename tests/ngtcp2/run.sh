#!/bin/bash
# tests/ngtcp2/run.sh: ngtcp2 0.12.1, unmodified, on qtls.
#
# Proves that a program written for quictls builds and runs against qtls:
# ngtcp2's quictls crypto backend (crypto/openssl/openssl.c + crypto/shared.c)
# and its example HTTP/3 client and server (examples/*_openssl.cc) are
# compiled with qtls's compat include directory first on the include path and
# linked with -lqtls -lcrypto (never -lssl). Then the examples complete
# handshakes with each other and with Debian's GnuTLS builds of the same
# examples (gtlsclient/gtlsserver), and fetch files over HTTP/3.
#
# The ngtcp2 source is Debian 12's source package, fetched at test time with a
# private apt configuration (the machine's apt sources are only read, to learn
# which mirror it uses) and cached, like every build output, under
# build/ngtcp2/ (QTLS_NGTCP2_DIR overrides). Nothing is ever committed.
#
# Checks: the backend compiles; the examples link (a missing qtls symbol is
# listed with the prototype from the system <openssl/ssl.h>); they need
# libqtls and not libssl. Cases (client -> server, each fetching two files):
#   werror       ngtcp2 --enable-werror builds lib/ and the backend
#   default      qtls -> qtls; TLS_AES_128_GCM_SHA256; SSLKEYLOGFILE lines
#   aes256 chacha20 ccm   the client restricts the suite; it is negotiated
#   p256 hrr     client offers P-256 only; server takes P-384 only (HRR)
#   hybrid       X25519MLKEM768 with an X25519 share beside it, both sides: the ClientHello
#                (about 1.5 KB) no longer fits one Initial packet and ngtcp2 sends it in
#                two CRYPTO frames; the ServerHello's ciphertext comes back (1.1 KB)
#   hybrid-gtlsserver   the same client to GnuTLS, which knows no ML-KEM: it takes the
#                X25519 share, no HelloRetryRequest
#   rsa ecdsa384 server certificate types
#   v2draft key-update    QUIC v2 draft; 1-RTT key updates
#   h09          h09client -> h09server (hq-interop)
#   gtlsclient gtlsserver GnuTLS examples against qtls, both directions
#   verify-client verify-client-gtlsclient verify-client-gtlsserver
#                server requires a client certificate and gets one
#   verify-client-nocert  ... and refuses a client without one
#   resume resume-gtlsclient resume-gtlsserver   a second connection
#                resumes the first's session and has its 0-RTT accepted
#
# Usage: tests/ngtcp2/run.sh
#   QTLS_NGTCP2_CASES="default hrr ..."  run only these cases
#   QTLS_DEBIAN_MIRROR=URL               Debian mirror, if apt's can't be read
#   JOBS=N                               parallel build jobs
# Exit status: 0 when every check passed, 1 otherwise. The last line is
# "N passed, N failed, N skipped". Logs: build/ngtcp2/logs/.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${QTLS_NGTCP2_DIR:-$ROOT/build/ngtcp2}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
UPSTREAM=0.12.1
SRC=$W/src/ngtcp2-$UPSTREAM
OBJ=$W/obj
PREFIX=$W/qtls-prefix
GROOT=$W/gnutls-root
LOGS=$W/logs
APTDIR=$W/apt


mkdir -p "$W" || exit 1
exec 9>"$W/.lock"
if ! flock -w 900 9; then
    echo "ngtcp2: another run holds $W/.lock" >&2
    exit 1
fi
rm -rf "$LOGS"
mkdir -p "$LOGS"

. "$ROOT/tests/lib/results.sh"
case_wanted() {
    [ -z "${QTLS_NGTCP2_CASES:-}" ] && return 0
    case " $QTLS_NGTCP2_CASES " in *" $1 "*) return 0 ;; esac
    return 1
}

# ---------------------------------------------------------------- packages

# The packages this script needs are listed in scripts/deps.sh (group interop),
# which installs them as root and otherwise names them.
"$ROOT/scripts/deps.sh" build interop || { nfail=1; finish; }

# ---------------------------------------------------------------- source

# Debian's source package, through a private apt configuration (tests/lib/debsrc.sh).
. "$ROOT/tests/lib/debsrc.sh"
debsrc_init "$APTDIR" "$LOGS/apt.log"
debsrc_source ngtcp2 "$SRC" || die source "apt-get source ngtcp2 / dpkg-source -x failed" "$LOGS/apt.log"
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version 2>/dev/null)
case $ver in
"$UPSTREAM"[-+]*) ;;
*) die source "bookworm's ngtcp2 is $ver, not $UPSTREAM" ;;
esac

# Debian's GnuTLS builds of the same examples, unpacked (never installed:
# ngtcp2-server's postinst would enable a service).
have_gnutls=0
if [ ! -x "$GROOT/usr/bin/gtlsclient" ] || [ ! -x "$GROOT/usr/sbin/gtlsserver" ]; then
    if debsrc_download "$W/debs" ngtcp2-client ngtcp2-server libngtcp2-9 \
        libngtcp2-crypto-gnutls2; then
        rm -rf "$GROOT"
        for deb in "$W"/debs/*.deb; do dpkg -x "$deb" "$GROOT" || break; done
    fi
fi
GLIB=$GROOT/usr/lib/x86_64-linux-gnu
if [ -x "$GROOT/usr/bin/gtlsclient" ] && [ -x "$GROOT/usr/sbin/gtlsserver" ]; then
    if LD_LIBRARY_PATH=$GLIB ldd "$GROOT/usr/bin/gtlsclient" "$GROOT/usr/sbin/gtlsserver" |
        grep -q 'not found'; then
        gnutls_why="gtlsclient/gtlsserver miss libraries: $(LD_LIBRARY_PATH=$GLIB ldd \
            "$GROOT/usr/bin/gtlsclient" | grep 'not found' | tr -s ' \t\n' ' ')"
    else
        have_gnutls=1
    fi
else
    gnutls_why="could not fetch ngtcp2-client/ngtcp2-server (see $LOGS/apt.log)"
fi

# ---------------------------------------------------------------- qtls

make -C "$ROOT" -j"$JOBS" BUILD="$W/qtls-build" PREFIX="$PREFIX" all >"$LOGS/qtls-build.log" 2>&1 ||
    die qtls-build "make in $ROOT failed" "$LOGS/qtls-build.log"
# qtls.pc is made once per build dir; remake it so it names this PREFIX.
rm -f "$W/qtls-build/qtls.pc"
make -C "$ROOT" BUILD="$W/qtls-build" PREFIX="$PREFIX" install >>"$LOGS/qtls-build.log" 2>&1 ||
    die qtls-build "make install PREFIX=$PREFIX failed" "$LOGS/qtls-build.log"

ssl_cflags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags qtls) ||
    die qtls-pc "pkg-config --cflags qtls failed"
ssl_libs=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --libs qtls) ||
    die qtls-pc "pkg-config --libs qtls failed"
case " $ssl_libs " in
*" -lssl "*) die qtls-pc "pkg-config --libs qtls names -lssl: $ssl_libs" ;;
esac
case " $ssl_libs " in
*" -lqtls "*"-lcrypto "*) ;;
*) die qtls-pc "pkg-config --libs qtls is not -lqtls ... -lcrypto: $ssl_libs" ;;
esac
ssl_libs="$ssl_libs -Wl,-rpath,$PREFIX/lib"

# ---------------------------------------------------------------- ngtcp2

if [ ! -x "$SRC/configure" ]; then
    (cd "$SRC" && autoreconf -i) >"$LOGS/autoreconf.log" 2>&1 ||
        die ngtcp2-autoreconf "autoreconf -i failed" "$LOGS/autoreconf.log"
fi

cfg_args=(--with-openssl --without-gnutls --without-boringssl --without-picotls
          --without-wolfssl --with-libnghttp3 --with-libev
          --disable-shared --enable-static
          "OPENSSL_CFLAGS=$ssl_cflags" "OPENSSL_LIBS=$ssl_libs")
mkdir -p "$OBJ"
if [ ! -f "$OBJ/config.status" ] || [ "$(cat "$OBJ/.qtls-config" 2>/dev/null)" != "${cfg_args[*]}" ]; then
    rm -f "$OBJ/.qtls-config"
    (cd "$OBJ" && "$SRC/configure" "${cfg_args[@]}") >"$LOGS/configure.log" 2>&1
    rc=$?
    if grep -q 'checking for SSL_is_quic... no' "$LOGS/configure.log"; then
        echo "---- config.log around the SSL_is_quic link test"
        grep -A 12 'checking for SSL_is_quic' "$OBJ/config.log" | head -n 20
        die ngtcp2-configure "configure's link test of SSL_is_quic against qtls failed"
    fi
    [ $rc -eq 0 ] || die ngtcp2-configure "configure failed" "$LOGS/configure.log"
    grep -q 'libngtcp2_crypto_openssl: *yes' "$LOGS/configure.log" &&
        grep -q 'Examples: *yes' "$LOGS/configure.log" ||
        die ngtcp2-configure "configure did not enable the openssl backend and examples" "$LOGS/configure.log"
    echo "${cfg_args[*]}" >"$OBJ/.qtls-config"
fi

# Relink the examples every run so they meet the qtls just built.
EXAMPLES="client server h09client h09server simpleclient"
for e in $EXAMPLES; do rm -f "$OBJ/examples/$e"; done
make -C "$OBJ" -k -j"$JOBS" >"$LOGS/ngtcp2-build.log" 2>&1
build_rc=$?

# What qtls lacks or declares differently, as the compiler and linker saw it.
summarise_build() {
    local log=$LOGS/ngtcp2-build.log sym where decl
    if grep -q ': error: ' "$log"; then
        echo "compile errors (qtls declarations as ngtcp2 uses them):"
        grep ': error: ' "$log" | sed "s|$SRC/||; s|^.*/\\.\\./||" | sort -u | head -n 40 | sed 's/^/  /'
    fi
    if grep -q 'undefined reference to' "$log"; then
        echo "undefined references (missing from libqtls), with the system prototype:"
        grep -o 'undefined reference to `[A-Za-z0-9_]*' "$log" | sed 's/.*`//' | sort -u |
            while read -r sym; do
                where=$(grep -m1 "undefined reference to \`$sym'" "$log" |
                    grep -o '[A-Za-z0-9_]*\.c[c]*:[0-9]*' | head -n 1)
                decl=$(grep -h -m1 -E "[ *]$sym\(" /usr/include/openssl/ssl.h 2>/dev/null |
                    sed 's/^ *//')
                [ -n "$decl" ] || decl="(no plain prototype in openssl/ssl.h; see its macros)"
                printf '  %-36s %-40s %s\n' "$sym" "${where:-?}" "$decl"
            done
    fi
}

[ -f "$OBJ/crypto/openssl/.libs/libngtcp2_crypto_openssl.a" ] ||
    { summarise_build; die ngtcp2-crypto-openssl "the quictls backend did not build" "$LOGS/ngtcp2-build.log"; }
pass "ngtcp2 crypto/openssl backend compiled against qtls headers"

built="" notbuilt=""
for e in $EXAMPLES; do
    if [ -x "$OBJ/examples/$e" ]; then built="$built $e"; else notbuilt="$notbuilt $e"; fi
done
echo "examples linked:${built:- none}; not linked:${notbuilt:- none}"
if [ $build_rc -ne 0 ] || [ -n "$notbuilt" ]; then
    summarise_build
    if [ ! -x "$OBJ/examples/client" ] || [ ! -x "$OBJ/examples/server" ]; then
        die ngtcp2-examples "examples/client and examples/server did not link against qtls" "$LOGS/ngtcp2-build.log"
    fi
    fail ngtcp2-build "make exited $build_rc; not linked:${notbuilt:- none}"
else
    pass "ngtcp2 examples ($EXAMPLES) built against qtls"
fi

needed=$(readelf -d "$OBJ/examples/client" "$OBJ/examples/server" 2>/dev/null | grep NEEDED)
if echo "$needed" | grep -q 'libssl\.so'; then
    fail linkage "examples need libssl: $(echo "$needed" | grep libssl | head -n 1)"
elif ! echo "$needed" | grep -q 'libqtls\.so'; then
    fail linkage "examples do not need libqtls.so"
else
    pass "examples link libqtls.so and libcrypto, not libssl"
fi

# ngtcp2's own --enable-werror build (-Wall -Wextra -Werror and more) of the
# library and the quictls backend: a quictls header compiles cleanly there.
if case_wanted werror; then
    OBJW=$W/obj-werror
    mkdir -p "$OBJW"
    if [ ! -f "$OBJW/config.status" ] ||
        [ "$(cat "$OBJW/.qtls-config" 2>/dev/null)" != "--enable-werror ${cfg_args[*]}" ]; then
        rm -f "$OBJW/.qtls-config"
        (cd "$OBJW" && "$SRC/configure" --enable-werror "${cfg_args[@]}") \
            >"$LOGS/configure-werror.log" 2>&1 &&
            echo "--enable-werror ${cfg_args[*]}" >"$OBJW/.qtls-config"
    fi
    if [ ! -f "$OBJW/.qtls-config" ]; then
        fail werror "configure --enable-werror failed (see $LOGS/configure-werror.log)"
    elif make -C "$OBJW/lib" -j"$JOBS" >"$LOGS/ngtcp2-werror.log" 2>&1 &&
        make -C "$OBJW/crypto" -j"$JOBS" >>"$LOGS/ngtcp2-werror.log" 2>&1; then
        pass "werror (ngtcp2 --enable-werror builds the quictls backend on qtls headers)"
    else
        fail werror "ngtcp2 --enable-werror build failed:"
        grep -E ': (error|warning): ' "$LOGS/ngtcp2-werror.log" | sed "s|^.*/ngtcp2-$UPSTREAM/||" | sort -u |
            head -n 10 | sed 's/^/  /'
    fi
fi

# ---------------------------------------------------------------- runs

"$ROOT/scripts/gen-certs.sh" "$W/certs" || die certs "scripts/gen-certs.sh failed"
CERTS=$W/certs
HTDOCS=$W/htdocs
mkdir -p "$HTDOCS"
echo "hello from ngtcp2 on qtls" >"$HTDOCS/index.html"
[ -s "$HTDOCS/big.txt" ] || head -c 196608 /dev/urandom | base64 >"$HTDOCS/big.txt"

QSERVER=$OBJ/examples/server
QCLIENT=$OBJ/examples/client
port=$((20000 + RANDOM % 20000))

# Kinds: qtls (examples/{client,server}, HTTP/3), h09 (examples/h09{client,
# server} on qtls, ALPN hq-interop), gnutls (Debian's gtls{client,server}).
server_cmd() { # KIND -> command prefix
    case $1 in
    qtls) echo "$QSERVER" ;;
    h09) echo "$OBJ/examples/h09server" ;;
    gnutls) echo "env LD_LIBRARY_PATH=$GLIB $GROOT/usr/sbin/gtlsserver" ;;
    esac
}
client_cmd() {
    case $1 in
    qtls) echo "$QCLIENT" ;;
    h09) echo "$OBJ/examples/h09client" ;;
    gnutls) echo "env LD_LIBRARY_PATH=$GLIB $GROOT/usr/bin/gtlsclient" ;;
    esac
}

# The debug logs interleave hex dumps; these lines are what to read first.
show_log() {
    echo "---- $1 (hex dumps left out; full log in $1)"
    grep -vE '^[0-9a-f]{8}  ' "$1" | tail -n 25
}

started_at() { grep -qi ":$(printf '%04X' "$1") " /proc/net/udp 2>/dev/null; }

SERVER_PID=""
start_server() { # NAME KIND KEY CERT ARGS...
    local name=$1 kind=$2 key=$3 cert=$4
    shift 4
    port=$((port + 1))
    # shellcheck disable=SC2046
    timeout -k 2 60 $(server_cmd "$kind") "$@" -d "$HTDOCS" --timeout=10s \
        127.0.0.1 "$port" "$key" "$cert" >"$LOGS/$name.server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 50); do
        started_at "$port" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 0 # /proc may hide it; the client retransmits anyway
}
stop_server() {
    [ -n "$SERVER_PID" ] || return
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
}
trap 'stop_server' EXIT

# run_client NAME TAG KIND ARGS...: one client run; sets CLOG and DL.
run_client() {
    local name=$1 tag=$2 kind=$3
    shift 3
    CLOG=$LOGS/$name.client$tag.log
    DL=$LOGS/$name.download$tag
    rm -rf "$DL"
    mkdir -p "$DL"
    # shellcheck disable=SC2046
    SSLKEYLOGFILE=$LOGS/$name.keylog$tag timeout -k 2 20 $(client_cmd "$kind") "$@" \
        --download="$DL" --exit-on-all-streams-close --timeout=5s --handshake-timeout=5s \
        127.0.0.1 "$port" https://localhost/index.html https://localhost/big.txt \
        >"$CLOG" 2>&1
}

# check_client RC KIND: what every client run must show. Prints reasons.
check_client() {
    local rc=$1 alpn=h3 why=""
    [ "$2" = h09 ] && alpn=hq-interop
    [ "$rc" -eq 0 ] || why="$why client exited $rc;"
    grep -q 'QUIC handshake has completed' "$CLOG" || why="$why client: no 'handshake has completed';"
    grep -q "Negotiated ALPN is $alpn" "$CLOG" || why="$why client: ALPN $alpn not negotiated;"
    cmp -s "$HTDOCS/index.html" "$DL/index.html" || why="$why index.html did not arrive intact;"
    cmp -s "$HTDOCS/big.txt" "$DL/big.txt" || why="$why big.txt did not arrive intact;"
    echo "$why"
}

# handshake NAME SERVER_KIND CLIENT_KIND "SERVER_ARGS" "CLIENT_ARGS" [KEYNAME] [PATTERN...]
# One connection; each PATTERN (extended regexp) must appear in the client log.
handshake() {
    local name=$1 skind=$2 ckind=$3 sargs=$4 cargs=$5 keyname=${6:-ecdsa256} why rc p
    shift 6 2>/dev/null || shift $#
    case_wanted "$name" || return 0
    if [ "$skind" = gnutls ] || [ "$ckind" = gnutls ]; then
        [ $have_gnutls -eq 1 ] || { skip "$name" "$gnutls_why"; return 0; }
    fi
    # shellcheck disable=SC2086
    if ! start_server "$name" "$skind" "$CERTS/$keyname.key" "$CERTS/$keyname.pem" $sargs; then
        fail "$name" "server ($skind) exited at start"
        show_log "$LOGS/$name.server.log"
        SERVER_PID=""
        return
    fi
    # shellcheck disable=SC2086
    run_client "$name" "" "$ckind" $cargs
    rc=$?
    stop_server
    why=$(check_client "$rc" "$ckind")
    grep -q 'QUIC handshake has completed' "$LOGS/$name.server.log" ||
        why="$why server: no 'handshake has completed';"
    for p in "$@"; do
        grep -qE -- "$p" "$CLOG" || why="$why client log lacks /$p/;"
    done
    if [ -z "$why" ]; then
        pass "$name ($ckind client -> $skind server)"
    else
        fail "$name" "$why"
        show_log "$CLOG"
        show_log "$LOGS/$name.server.log"
    fi
}

# refused NAME SERVER_KIND CLIENT_KIND "SERVER_ARGS" "CLIENT_ARGS" PATTERN: the
# handshake must fail, and PATTERN (extended regexp) must be in the client log.
refused() {
    local name=$1 skind=$2 ckind=$3 sargs=$4 cargs=$5 pat=$6 why=""
    case_wanted "$name" || return 0
    # shellcheck disable=SC2086
    if ! start_server "$name" "$skind" "$CERTS/ecdsa256.key" "$CERTS/ecdsa256.pem" $sargs; then
        fail "$name" "server ($skind) exited at start"
        show_log "$LOGS/$name.server.log"
        SERVER_PID=""
        return
    fi
    # shellcheck disable=SC2086
    run_client "$name" "" "$ckind" $cargs
    stop_server
    ! grep -q 'QUIC handshake has completed' "$LOGS/$name.server.log" ||
        why="$why server completed the handshake;"
    [ ! -s "$DL/index.html" ] || why="$why index.html arrived;"
    grep -qE -- "$pat" "$CLOG" || why="$why client log lacks /$pat/;"
    if [ -z "$why" ]; then
        pass "$name ($ckind client -> $skind server refused, as it must be)"
    else
        fail "$name" "$why"
        show_log "$CLOG"
        show_log "$LOGS/$name.server.log"
    fi
}

# resume NAME SERVER_KIND CLIENT_KIND: two connections to one server; the
# second resumes the first's session and sends 0-RTT data, which the server
# must accept.
resume() {
    local name=$1 skind=$2 ckind=$3 why="" rc
    case_wanted "$name" || return 0
    if [ "$skind" = gnutls ] || [ "$ckind" = gnutls ]; then
        [ $have_gnutls -eq 1 ] || { skip "$name" "$gnutls_why"; return 0; }
    fi
    local sess=$LOGS/$name.session tp=$LOGS/$name.tp
    rm -f "$sess" "$tp"
    if ! start_server "$name" "$skind" "$CERTS/ecdsa256.key" "$CERTS/ecdsa256.pem"; then
        fail "$name" "server ($skind) exited at start"
        show_log "$LOGS/$name.server.log"
        SERVER_PID=""
        return
    fi
    run_client "$name" .1 "$ckind" --session-file="$sess" --tp-file="$tp"
    rc=$?
    local first=$CLOG
    why=$(check_client "$rc" "$ckind")
    [ -s "$sess" ] || why="$why first connection stored no session (no NewSessionTicket handled);"
    if [ -z "$why" ]; then
        run_client "$name" .2 "$ckind" --session-file="$sess" --tp-file="$tp"
        rc=$?
        why=$(check_client "$rc" "$ckind")
        grep -qE 'pkt tx .*type=0RTT' "$CLOG" || why="$why second connection sent no 0-RTT packet;"
        ! grep -q 'Early data was rejected' "$CLOG" || why="$why server rejected early data;"
    fi
    stop_server
    if [ -z "$why" ]; then
        pass "$name ($ckind client -> $skind server, resumed with 0-RTT)"
    else
        fail "$name" "$why"
        show_log "$first"
        [ "$CLOG" = "$first" ] || show_log "$CLOG"
        show_log "$LOGS/$name.server.log"
    fi
}

HRR_RANDOM='03 03 cf 21  ad 74 e5 9a 61 11 be 1d'

handshake default qtls qtls "" "" ecdsa256 \
    'Negotiated cipher suite is TLS_AES_128_GCM_SHA256'
if case_wanted default; then
    lack=""
    for label in CLIENT_HANDSHAKE_TRAFFIC_SECRET SERVER_HANDSHAKE_TRAFFIC_SECRET \
        CLIENT_TRAFFIC_SECRET_0 SERVER_TRAFFIC_SECRET_0 EXPORTER_SECRET; do
        grep -q "^$label " "$LOGS/default.keylog" 2>/dev/null || lack="$lack $label"
    done
    if [ -z "$lack" ]; then
        pass "keylog (client's SSLKEYLOGFILE) has the five TLS 1.3 secrets"
    else
        fail keylog "$LOGS/default.keylog lacks$lack"
    fi
fi
handshake aes256 qtls qtls "" "--ciphers=TLS_AES_256_GCM_SHA384" ecdsa256 \
    'Negotiated cipher suite is TLS_AES_256_GCM_SHA384'
handshake chacha20 qtls qtls "" "--ciphers=TLS_CHACHA20_POLY1305_SHA256" ecdsa256 \
    'Negotiated cipher suite is TLS_CHACHA20_POLY1305_SHA256'
handshake ccm qtls qtls "" "--ciphers=TLS_AES_128_CCM_SHA256" ecdsa256 \
    'Negotiated cipher suite is TLS_AES_128_CCM_SHA256'
handshake p256 qtls qtls "" "--groups=P-256" ecdsa256
handshake hrr qtls qtls "--groups=P-384" "" ecdsa256 "$HRR_RANDOM"
PQ_GROUPS="--groups=X25519MLKEM768:X25519"
handshake hybrid qtls qtls "$PQ_GROUPS" "$PQ_GROUPS" ecdsa256 \
    'frm tx [0-9]+ Initial CRYPTO\(0x06\) offset=[1-9][0-9]* len=' \
    'frm rx [0-9]+ Initial CRYPTO\(0x06\) offset=0 len=(1[0-9]{3}|[2-9][0-9]{2})'
handshake hybrid-gtlsserver gnutls qtls "" "$PQ_GROUPS" ecdsa256 \
    'frm tx [0-9]+ Initial CRYPTO\(0x06\) offset=[1-9][0-9]* len='
handshake rsa qtls qtls "" "" rsa
handshake ecdsa384 qtls qtls "" "" ecdsa384
handshake v2draft qtls qtls "" "-v v2draft" ecdsa256 'negotiated version is 0x709a50c4'
handshake key-update qtls qtls "" "--key-update=10ms" ecdsa256 'Updating traffic key'
handshake h09 h09 h09 "" "" ecdsa256
handshake gtlsclient qtls gnutls "" "" ecdsa256
handshake gtlsserver gnutls qtls "" "" ecdsa256
CLIENT_CERT="--key=$CERTS/client.key --cert=$CERTS/client.pem"
handshake verify-client qtls qtls "--verify-client" "$CLIENT_CERT" ecdsa256
handshake verify-client-gtlsclient qtls gnutls "--verify-client" "$CLIENT_CERT" ecdsa256
handshake verify-client-gtlsserver gnutls qtls "--verify-client" "$CLIENT_CERT" ecdsa256
# certificate_required (116 = 0x74) as a QUIC CRYPTO_ERROR 0x174
refused verify-client-nocert qtls qtls "--verify-client" "" 'CRYPTO_ERROR\(0x174\)'
resume resume qtls qtls
resume resume-gtlsclient qtls gnutls
resume resume-gtlsserver gnutls qtls

finish
