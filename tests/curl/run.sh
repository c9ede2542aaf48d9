#!/bin/bash
# tests/curl/run.sh: curl 7.88.1 with qtls as its only TLS library.
#
# Proves that curl, a real consumer of the OpenSSL API, builds and runs with
# qtls in place of libssl and nothing else: Debian 12's curl source,
# unmodified, is configured --with-openssl=COMPAT --without-gnutls
# --with-ngtcp2 --with-nghttp3 --with-nghttp2, where COMPAT is the
# OpenSSL-style prefix make install-compat lays out, whose libssl is libqtls.
# One binary then speaks HTTPS over TCP (HTTP/1.1 and HTTP/2, curl's
# vtls/openssl.c on qtls) and HTTP/3 (ngtcp2 0.12.1's own quictls crypto
# backend, libngtcp2_crypto_openssl, built from Debian's ngtcp2 source
# against COMPAT, with curl's vquic/curl_ngtcp2.c), to servers that are not
# qtls as well as to qtls's.
#
# Sources are Debian's source packages (tests/lib/debsrc.sh), cached with
# every build output under build/curl/ (QTLS_CURL_DIR overrides); builds are
# reused while their inputs are unchanged. Nothing here is committed.
#
# Checks (one PASS/FAIL/SKIP line each):
#   ngtcp2 / curl  libngtcp2_crypto_openssl and curl build on COMPAT; curl's
#               configure reports OpenSSL as its one TLS library, HTTP/2
#               (nghttp2) and HTTP/3 (ngtcp2 + nghttp3)
#   linkage     curl, libcurl and the quictls backend need libqtls, never
#               libssl.so.3 or libgnutls; ldd curl loads this build's libqtls
#               and neither of them
#   symbols     nothing curl, libcurl or libngtcp2_crypto_openssl leaves
#               undefined is defined only by the system libssl (the list,
#               with prototypes, is qtls's missing surface); each reference
#               names libqtls's symbol version
#   bind-now    curl -V runs under LD_BIND_NOW=1, shows OpenSSL/ as its only
#               TLS library (no GnuTLS, no MultiSSL), HTTP2 and HTTP3, and the
#               loader binds every SSL_* to libqtls
#   tcp-h1      HTTPS over TCP from openssl s_server -WWW (the system OpenSSL):
#               two files, bytes compared; -v shows the handshake messages
#               from the message callback ("TLSv1.3 (OUT), TLS handshake,
#               Client hello (1)" ...) and "SSL connection using TLSv1.3 /
#               TLS_AES_..."; s_server closes after each response, so the
#               second file takes a second connection, which resumes the
#               first's session ("SSL re-using session ID", and the server
#               sends no Certificate)
#   tcp-h2      curl --http2 from Debian's nghttpd (nghttp2-server, on the
#               system OpenSSL): ALPN h2, two files over one connection, then
#               a third transfer (--next, bound to 127.0.0.1 so that it
#               cannot take the cached connection) on a new connection that
#               resumes the session
#   tcp-wrong-ca tcp-wrong-name   the wrong CA, a certificate for another
#               name, over TCP: curl exits 60 (CURLE_PEER_FAILED_VERIFICATION)
#   h3-qtls     curl --http3-only fetches two files from examples/h3server
#               (qtls), verifying against the test CA; bytes compared;
#               SSLKEYLOGFILE gets qtls's secrets
#   h3-gtls     the same from Debian's gtlsserver (ngtcp2 on GnuTLS)
#   h3-coexist  h3-qtls with the system libssl.so.3 preloaded: curl's and
#               the backend's SSL_* still bind to libqtls
#   h3-wrong-ca h3-wrong-name   as tcp-wrong-*, over HTTP/3
# Every curl run has LD_BIND_NOW=1.
#
# Usage: tests/curl/run.sh
#   QTLS_DEBIAN_MIRROR=URL  Debian mirror, if apt's can't be read
#   JOBS=N                  parallel build jobs
# Exit status: 0 when every check passed, 1 otherwise. The last line is
# "N passed, N failed, N skipped". Logs: build/curl/logs/.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${QTLS_CURL_DIR:-$ROOT/build/curl}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
CURL_VER=7.88.1
NGTCP2_VER=0.12.1
CURL_SRC=$W/src/curl-$CURL_VER
NG_SRC=$W/src/ngtcp2-$NGTCP2_VER
QBUILD=$W/qtls-build
COMPAT=$W/compat
NG_OBJ=$W/ngtcp2-obj
NG_PREFIX=$W/ngtcp2-prefix
CURL_OBJ=$W/curl-obj
CURL_PREFIX=$W/curl-prefix
LOGS=$W/logs
APTDIR=$W/apt

mkdir -p "$W" || exit 1
exec 9>"$W/.lock"
if ! flock -w 900 9; then
    echo "curl: another run holds $W/.lock" >&2
    exit 1
fi
rm -rf "$LOGS"
mkdir -p "$LOGS"

. "$ROOT/tests/lib/results.sh"

# ---------------------------------------------------------------- packages

# shellcheck disable=SC2034 # nfail is results.sh's
"$ROOT/scripts/deps.sh" build interop h3 curl || { nfail=1; finish; }

# ---------------------------------------------------------------- sources

. "$ROOT/tests/lib/debsrc.sh"
debsrc_init "$APTDIR" "$LOGS/apt.log"
# An older version of this script patched the unpacked curl source (for its
# GnuTLS + OpenSSL build): unpack it afresh, so that curl is Debian's as is.
[ ! -f "$CURL_SRC/.qtls-patched" ] || rm -rf "$CURL_SRC" "$CURL_OBJ" "$CURL_PREFIX"
debsrc_source curl "$CURL_SRC" || die source "apt-get source curl failed" "$LOGS/apt.log"
debsrc_source ngtcp2 "$NG_SRC" || die source "apt-get source ngtcp2 failed" "$LOGS/apt.log"
check_version() { # NAME SRC UPSTREAM
    local ver
    ver=$(dpkg-parsechangelog -l "$2/debian/changelog" -S Version 2>/dev/null)
    case $ver in
    "$3"[-+]*) ;;
    *) die source "bookworm's $1 is $ver, not $3" ;;
    esac
}
check_version curl "$CURL_SRC" "$CURL_VER"
check_version ngtcp2 "$NG_SRC" "$NGTCP2_VER"

# ---------------------------------------------------------------- qtls

# A stamp of everything qtls is made from: a change rebuilds what depends on it.
# (A change to src/*.c alone needs no relink: everything links libqtls.so.)
qtls_stamp=$(cd "$ROOT" && cat Makefile src/libqtls.map scripts/install-compat.sh \
    include/compat/openssl/*.h include/qtls/*.h | sha1sum | cut -c1-12)

# The OpenSSL-style prefix (make install-compat, scripts/install-compat.sh):
# <openssl/ssl.h> is qtls's compat header, every other OpenSSL header the
# system's; lib/libssl.so is libqtls, lib/libcrypto.so the system's;
# openssl.pc, libssl.pc and libcrypto.pc say so. It also builds
# examples/h3server in $QBUILD for the HTTP/3 checks.
make -C "$ROOT" -j"$JOBS" BUILD="$QBUILD" PREFIX="$COMPAT" all >"$LOGS/qtls-build.log" 2>&1 ||
    die qtls-build "make in $ROOT failed" "$LOGS/qtls-build.log"
rm -f "$QBUILD/qtls.pc"
rm -rf "$COMPAT"
make -C "$ROOT" BUILD="$QBUILD" PREFIX="$COMPAT" install-compat >"$LOGS/compat.log" 2>&1 ||
    die compat "make install-compat PREFIX=$COMPAT failed" "$LOGS/compat.log"
COMPAT_PC=$COMPAT/lib/pkgconfig
[ "$(readelf -d "$COMPAT/lib/libssl.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = libqtls.so.0 ] ||
    die compat "$COMPAT/lib/libssl.so is not libqtls"
RPATHS="-Wl,-rpath,$COMPAT/lib -Wl,-rpath,$NG_PREFIX/lib"

# ---------------------------------------------------------------- ngtcp2

# libngtcp2 and ngtcp2's quictls backend (libngtcp2_crypto_openssl), built
# from the same 0.12.1 source into a private prefix with their .pc files.
# Debian ships no quictls backend; building the core from the same source
# keeps the two at one version.
if [ ! -x "$NG_SRC/configure" ]; then
    (cd "$NG_SRC" && autoreconf -i) >"$LOGS/ngtcp2-autoreconf.log" 2>&1 ||
        die ngtcp2-autoreconf "autoreconf -i failed" "$LOGS/ngtcp2-autoreconf.log"
fi
ng_args=(--prefix="$NG_PREFIX" --enable-lib-only --with-openssl --without-gnutls
         --without-boringssl --without-picotls --without-wolfssl --without-jemalloc
         --enable-shared --disable-static
         "PKG_CONFIG_PATH=$COMPAT_PC" "LDFLAGS=$RPATHS")
ng_key="${ng_args[*]} qtls=$qtls_stamp"
if [ ! -f "$NG_PREFIX/lib/pkgconfig/libngtcp2_crypto_openssl.pc" ] ||
    [ "$(cat "$NG_OBJ/.qtls-config" 2>/dev/null)" != "$ng_key" ]; then
    rm -rf "$NG_OBJ" "$NG_PREFIX"
    mkdir -p "$NG_OBJ"
    (cd "$NG_OBJ" && "$NG_SRC/configure" "${ng_args[@]}") >"$LOGS/ngtcp2-configure.log" 2>&1 ||
        die ngtcp2-configure "configure failed" "$LOGS/ngtcp2-configure.log"
    grep -q 'libngtcp2_crypto_openssl: *yes' "$LOGS/ngtcp2-configure.log" ||
        die ngtcp2-configure "configure did not enable the quictls backend on $COMPAT" \
            "$LOGS/ngtcp2-configure.log"
    { make -C "$NG_OBJ/lib" -j"$JOBS" install && make -C "$NG_OBJ/crypto" -j"$JOBS" install; } \
        >"$LOGS/ngtcp2-build.log" 2>&1 ||
        die ngtcp2-build "building libngtcp2 and libngtcp2_crypto_openssl failed" \
            "$LOGS/ngtcp2-build.log"
    echo "$ng_key" >"$NG_OBJ/.qtls-config"
fi
NG_CRYPTO_SO=$(readlink -f "$NG_PREFIX/lib/libngtcp2_crypto_openssl.so")
[ -f "$NG_CRYPTO_SO" ] || die ngtcp2-build "no libngtcp2_crypto_openssl.so in $NG_PREFIX/lib"
pass "ngtcp2 $NGTCP2_VER quictls backend (libngtcp2_crypto_openssl) built on $COMPAT"

# ---------------------------------------------------------------- curl

# OpenSSL (that is, qtls) is the only TLS library: --without-gnutls is curl's
# default but said here, as is every other TLS library's absence.
curl_args=(--prefix="$CURL_PREFIX" --disable-static --enable-shared
           --with-openssl="$COMPAT" --without-gnutls --without-wolfssl --without-mbedtls
           --without-bearssl --without-rustls --without-nss
           --with-ngtcp2="$NG_PREFIX" --with-nghttp3 --with-nghttp2
           --disable-manual --disable-ldap --disable-ldaps --disable-rtsp --disable-dict
           --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smtp
           --disable-gopher --disable-mqtt --disable-smb --without-libpsl --without-brotli
           --without-zstd --without-libidn2 --without-librtmp --without-libssh2
           --without-libgsasl --without-ca-bundle --without-ca-path
           "LDFLAGS=$RPATHS")
curl_key="${curl_args[*]} qtls=$qtls_stamp ng=$(stat -c %Y "$NG_CRYPTO_SO")"
if [ ! -x "$CURL_PREFIX/bin/curl" ] || [ "$(cat "$CURL_OBJ/.qtls-config" 2>/dev/null)" != "$curl_key" ]; then
    rm -rf "$CURL_OBJ" "$CURL_PREFIX"
    mkdir -p "$CURL_OBJ"
    (cd "$CURL_OBJ" && "$CURL_SRC/configure" "${curl_args[@]}") >"$LOGS/curl-configure.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "---- config.log, last failing test"
        grep -B 30 'configure: error' "$CURL_OBJ/config.log" | tail -n 40
        die curl-configure "configure failed" "$LOGS/curl-configure.log"
    fi
    for want in 'SSL: *enabled (OpenSSL[^,]*)$' 'HTTP2: *enabled (nghttp2)' 'HTTP3: *enabled (ngtcp2'; do
        grep -q "$want" "$LOGS/curl-configure.log" ||
            die curl-configure "configure's summary lacks /$want/" "$LOGS/curl-configure.log"
    done
    grep -q 'USE_NGTCP2_CRYPTO_OPENSSL 1' "$CURL_OBJ/lib/curl_config.h" ||
        die curl-configure "curl did not pick ngtcp2's quictls backend"
    if ! { nice make -C "$CURL_OBJ/lib" -j"$JOBS" && nice make -C "$CURL_OBJ/src" -j"$JOBS"; } \
        >"$LOGS/curl-build.log" 2>&1; then
        die curl-build "make failed (lib/, src/)" "$LOGS/curl-build.log"
    fi
    { make -C "$CURL_OBJ/lib" install && make -C "$CURL_OBJ/src" install; } \
        >"$LOGS/curl-install.log" 2>&1 ||
        die curl-build "make install failed" "$LOGS/curl-install.log"
    echo "$curl_key" >"$CURL_OBJ/.qtls-config"
fi
CURL=$CURL_PREFIX/bin/curl
LIBCURL=$(readlink -f "$CURL_PREFIX/lib/libcurl.so")
pass "curl $CURL_VER built with qtls (OpenSSL API) as its only TLS library, nghttp2, ngtcp2 $NGTCP2_VER + nghttp3"

# ---------------------------------------------------------------- linkage

# What each object needs, and what the loader gives the binary.
needed_of() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' '; }
why=""
for f in "$CURL" "$LIBCURL" "$NG_CRYPTO_SO"; do
    case " $(needed_of "$f") " in *" libssl.so"*) why="$why $(basename "$f") needs libssl;" ;; esac
    case " $(needed_of "$f") " in *" libgnutls"*) why="$why $(basename "$f") needs libgnutls;" ;; esac
done
case " $(needed_of "$LIBCURL") " in
*" libqtls.so.0 "*) ;;
*) why="$why libcurl does not need libqtls.so.0 (needs: $(needed_of "$LIBCURL"));" ;;
esac
case " $(needed_of "$NG_CRYPTO_SO") " in
*" libqtls.so.0 "*) ;;
*) why="$why libngtcp2_crypto_openssl does not need libqtls.so.0;" ;;
esac
loaded=$(ldd "$CURL" 2>&1)
echo "$loaded" >"$LOGS/ldd.txt"
for lib in 'libssl\.so' 'libgnutls' 'libwolfssl' 'libmbedtls' 'libnss3' 'libbearssl' 'librustls'; do
    echo "$loaded" | grep -q "$lib" &&
        why="$why ldd curl loads $(echo "$loaded" | grep -m1 "$lib" | tr -s ' \t' ' ');"
done
echo "$loaded" | grep -q 'not found' && why="$why ldd curl: $(echo "$loaded" | grep 'not found' | tr -s ' \t\n' ' ');"
echo "$loaded" | grep -q "libqtls\.so\.0 => $COMPAT/lib/" ||
    why="$why ldd curl does not load this build's libqtls;"
if [ -z "$why" ]; then
    pass "linkage (ldd curl: $(awk '/=>/ { print $1 }' "$LOGS/ldd.txt" |
        grep -E 'qtls|crypto|ngtcp2|nghttp' | paste -sd' '); no libssl.so.3, no libgnutls)"
else
    fail linkage "$why"
fi

# ---------------------------------------------------------------- symbols

# Every symbol curl, libcurl and the quictls backend leave undefined that the
# system libssl defines must be defined by libqtls: those it does not are the
# gaps in qtls's surface. (Symbol versions are set aside: only names count.)
sys_libssl=$(ldconfig -p 2>/dev/null | awk '/libssl\.so\.3 .*x86-64/ { print $NF; exit }')
[ -n "$sys_libssl" ] || sys_libssl=$(pkg-config --variable=libdir libcrypto)/libssl.so.3
defs() { nm -D --defined-only "$1" 2>/dev/null | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }' | sort -u; }
if [ ! -f "$sys_libssl" ]; then
    fail symbols "the system libssl.so.3 is not found (libssl3 is part of libssl-dev's dependencies)"
else
    defs "$sys_libssl" >"$LOGS/libssl.defs"
    defs "$(readlink -f "$COMPAT/lib/libssl.so")" >"$LOGS/qtls.defs"
    for f in "$CURL" "$LIBCURL" "$NG_CRYPTO_SO"; do
        nm -D -u "$f" | awk '{ sub(/@.*/, "", $2); print $2 }'
    done | sort -u >"$LOGS/undefined.syms"
    comm -12 "$LOGS/undefined.syms" "$LOGS/libssl.defs" >"$LOGS/libssl-used.syms"
    comm -23 "$LOGS/libssl-used.syms" "$LOGS/qtls.defs" >"$LOGS/missing.syms"
    nused=$(wc -l <"$LOGS/libssl-used.syms")
    # libqtls's symbol version (QTLS_1): the references to it must name it, so
    # that they cannot bind to libssl.so.3's should both be in one process.
    qver=$(nm -D --defined-only "$(readlink -f "$COMPAT/lib/libssl.so")" |
        sed -n 's/.* SSL_CTX_new@@\(.*\)$/\1/p')
    unversioned=""
    if [ -n "$qver" ]; then
        for f in "$CURL" "$LIBCURL" "$NG_CRYPTO_SO"; do
            nm -D -u "$f" | awk '{ print $2 }'
        done | awk -F@ 'NR == FNR { used[$1] = 1; next } ($1 in used) && $2 != v { print }' \
            v="$qver" "$LOGS/libssl-used.syms" - | sort -u >"$LOGS/unversioned.syms"
        unversioned=$(head -n 5 "$LOGS/unversioned.syms" | paste -sd' ')
    fi
    if [ -n "$unversioned" ]; then
        fail symbols "references to libssl names not bound to version $qver: $unversioned"
    elif [ ! -s "$LOGS/missing.syms" ]; then
        pass "symbols (all $nused libssl symbols curl, libcurl and the quictls backend use are in libqtls${qver:+, every reference versioned $qver})"
    else
        fail symbols "$(wc -l <"$LOGS/missing.syms") of the $nused libssl symbols used are not in libqtls: $(paste -sd' ' "$LOGS/missing.syms")"
        while read -r sym; do
            # A declaration's first line: no comment or directive before the name.
            decl=$(grep -h -m1 -E "^[^*#/]*[ *]$sym\(" /usr/include/openssl/ssl.h 2>/dev/null |
                sed 's/^ *//')
            printf '  %-40s %s\n' "$sym" "${decl:-(no plain prototype in openssl/ssl.h; see its macros)}"
        done <"$LOGS/missing.syms"
    fi
fi

# ---------------------------------------------------------------- curl -V
# LD_BIND_NOW: every symbol of every object is resolved at start, so a gap
# anywhere stops the program here rather than in the middle of a transfer;
# LD_DEBUG=bindings shows where each libssl symbol came from.
LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$LOGS/bindings "$CURL" -V >"$LOGS/curl-V.txt" 2>&1
rc=$?
why=""
[ $rc -eq 0 ] || why="$why curl -V exited $rc ($(head -c 300 "$LOGS/curl-V.txt"));"
for want in 'HTTP3' 'HTTP2' 'OpenSSL/' "ngtcp2/$NGTCP2_VER" 'nghttp3/' 'nghttp2/'; do
    grep -q "$want" "$LOGS/curl-V.txt" || why="$why curl -V lacks $want;"
done
for unwanted in 'MultiSSL' 'GnuTLS' 'wolfSSL' 'mbedTLS' 'NSS/' 'BearSSL' 'rustls'; do
    ! grep -q "$unwanted" "$LOGS/curl-V.txt" || why="$why curl -V shows $unwanted;"
done
# Where the loader bound libcurl's SSL_* references: libqtls and nothing else.
cat "$LOGS"/bindings.* 2>/dev/null |
    sed -n "s/.*binding file \([^ ]*\) \[0\] to \([^ ]*\) \[0\]: normal symbol \`\(SSL_[A-Za-z0-9_]*\)'.*/\1 \2 \3/p" \
    >"$LOGS/ssl-bindings.txt"
rm -f "$LOGS"/bindings.*
nb=$(wc -l <"$LOGS/ssl-bindings.txt")
[ "$nb" -gt 0 ] || why="$why LD_DEBUG=bindings showed no SSL_* binding;"
bad=$(awk '$2 !~ /libqtls\.so\.0$/' "$LOGS/ssl-bindings.txt" | head -n 3 | tr '\n' ';')
[ -z "$bad" ] || why="$why SSL_* bound outside libqtls: $bad"
if [ -z "$why" ]; then
    pass "bind-now (LD_BIND_NOW=1 curl -V: $(head -n 1 "$LOGS/curl-V.txt" | cut -d' ' -f4-); $nb SSL_* bindings, all to libqtls)"
else
    fail bind-now "$why"
fi

# ---------------------------------------------------------------- HTTP/3

# Servers and certificates as make check's HTTP/3 tests have them (scripts/h3peers.sh):
# examples/h3server from the qtls build above, Debian's gtlsserver unpacked.
# shellcheck disable=SC2034 # BUILD, QTLS_CERTS and QTLS_GTLS_ROOT are h3peers.sh's
{
    BUILD=$QBUILD
    WORK=$W/run
    QTLS_CERTS=$W/certs
    QTLS_GTLS_ROOT=$W/gtls-root
}
rm -rf "$WORK"
# shellcheck source=../../scripts/h3peers.sh
. "$ROOT/scripts/h3peers.sh"
trap 'h3_stop_server; stop_tcp_server' EXIT
h3_setup >"$LOGS/h3-setup.log" 2>&1 || die h3-setup "scripts/h3peers.sh's h3_setup failed" "$LOGS/h3-setup.log"
have_gtls=1
h3_gtls_setup || have_gtls=0

# curl_fetch NAME PORT ARGS...: index.html and big.bin from localhost:PORT
# (resolved to 127.0.0.1, so SNI and the DNS name are checked) into $DL,
# with the environment CURL_ENV (VAR=VALUE words) added. With AGAIN=(ARGS...)
# non-empty, the same command line goes on (--next, the same ARGS and
# AGAIN's) to fetch index.html once more into $DL/again.html: curl's share
# keeps the TLS session cache across --next.
# Sets CLOG, DL, CURL_RC, HTTP_VERSIONS.
CURL_ENV=()
AGAIN=()
curl_fetch() {
    local name=$1 p=$2 again=()
    shift 2
    CLOG=$LOGS/$name.curl.log
    DL=$WORK/$name.download
    rm -rf "$DL"
    mkdir -p "$DL"
    local common=(-v -sS --resolve "localhost:$p:127.0.0.1" --connect-timeout 10
                  -w '%{http_version} %{http_code}\n' "$@")
    [ ${#AGAIN[@]} -eq 0 ] ||
        again=(--next "${common[@]}" "${AGAIN[@]}" -o "$DL/again.html" "https://localhost:$p/index.html")
    env "${CURL_ENV[@]}" SSLKEYLOGFILE="$LOGS/$name.keylog" LD_BIND_NOW=1 timeout -k 2 30 "$CURL" \
        "${common[@]}" -o "$DL/index.html" "https://localhost:$p/index.html" \
        -o "$DL/big.bin" "https://localhost:$p/big.bin" "${again[@]}" \
        >"$LOGS/$name.curl.out" 2>"$CLOG"
    CURL_RC=$?
    HTTP_VERSIONS=$(paste -sd' ' "$LOGS/$name.curl.out")
}
bodies_why() {
    local f
    for f in index.html big.bin; do
        cmp -s "$HTDOCS/$f" "$DL/$f" || printf ' %s did not arrive intact;' "$f"
    done
}
show() { echo "---- $1 (last 20 lines)"; tail -n 20 "$1"; }

# h3_fetch NAME SERVER_KIND [CHECK]: CHECK, a function, adds its reasons
# (printed) and may set NOTE for the PASS line.
h3_fetch() {
    local name=$1 kind=$2 check=${3:-} why="" label
    NOTE=""
    if ! h3_start_server "$kind" "$name" 2>>"$LOGS/$name.start.log"; then
        fail "$name" "the $kind server did not start: $(tail -n 3 "$SERVER_LOG" 2>/dev/null | tr '\n' ' ')"
        return
    fi
    curl_fetch "$name" "$SERVER_PORT" --http3-only --cacert "$CERTS/ca.pem"
    h3_stop_server
    [ "$CURL_RC" -eq 0 ] || why="$why curl exited $CURL_RC;"
    [ "$HTTP_VERSIONS" = "3 200 3 200" ] || why="$why http_version/code: '$HTTP_VERSIONS', wanted '3 200 3 200';"
    why="$why$(bodies_why)"
    grep -q 'Verified certificate just fine' "$CLOG" || why="$why no 'Verified certificate just fine';"
    # The keys came from qtls: curl hands SSLKEYLOGFILE to SSL_CTX_set_keylog_callback.
    for label in CLIENT_HANDSHAKE_TRAFFIC_SECRET CLIENT_TRAFFIC_SECRET_0; do
        grep -q "^$label " "$LOGS/$name.keylog" 2>/dev/null || why="$why keylog lacks $label;"
    done
    if [ -n "$check" ]; then
        local out
        out=$(mktemp)
        "$check" >"$out"
        why="$why$(cat "$out")"
        rm -f "$out"
    fi
    if [ -z "$why" ]; then
        pass "$name (curl --http3-only -> $kind server, verified against the test CA, $(wc -c <"$HTDOCS/big.bin")+$(wc -c <"$HTDOCS/index.html") bytes intact$NOTE)"
    else
        fail "$name" "$why"
        show "$CLOG"
        show "$SERVER_LOG"
    fi
}

h3_fetch h3-qtls qtls
if [ $have_gtls -eq 1 ]; then
    h3_fetch h3-gtls gtls
else
    skip h3-gtls "$GTLS_WHY"
fi

# The system libssl in the same process (as when another library of the
# program links it): with it preloaded, curl's and the quictls backend's
# SSL_* references must still bind to libqtls (its symbol version), and the
# fetch must work as above.
coexist_check() {
    local wrong
    grep -h "file=$sys_libssl .*generating link map" "$LOGS"/coexist.ld.* >/dev/null 2>&1 ||
        printf ' libssl.so.3 was not loaded;'
    wrong=$(grep -h -E "binding file [^ ]*(libcurl|libngtcp2_crypto_openssl)[^ ]* \[0\] to [^ ]*libssl\.so\.3 " \
        "$LOGS"/coexist.ld.* 2>/dev/null | sed -n "s/.*symbol \`\([^']*\)'.*/\1/p" | sort -u)
    [ -z "$wrong" ] || printf ' bound to libssl.so.3: %s;' "$(echo "$wrong" | head -n 8 | paste -sd' ')"
    NQ=$(cat "$LOGS"/coexist.ld.* 2>/dev/null |
        grep -cE "binding file [^ ]*(libcurl|libngtcp2_crypto_openssl)[^ ]* \[0\] to [^ ]*libqtls\.so\.0 ")
    [ "$NQ" -gt 0 ] || printf ' no binding from libcurl or the backend to libqtls;'
    NOTE="; libssl.so.3 preloaded: $NQ bindings from libcurl and the backend to libqtls, none to libssl"
    # The debug output is large; keep only what was checked.
    grep -h -E "generating link map|binding file .*(libssl\.so\.3|libqtls\.so\.0) " "$LOGS"/coexist.ld.* \
        >"$LOGS/coexist.bindings.txt" 2>/dev/null
    rm -f "$LOGS"/coexist.ld.*
}
if [ -f "$sys_libssl" ]; then
    rm -f "$LOGS"/coexist.ld.*
    CURL_ENV=("LD_PRELOAD=$sys_libssl" "LD_DEBUG=files,bindings" "LD_DEBUG_OUTPUT=$LOGS/coexist.ld")
    h3_fetch h3-coexist qtls coexist_check
    CURL_ENV=()
else
    skip h3-coexist "no system libssl.so.3"
fi

# The wrong CA, then the wrong name: curl must refuse with 60
# (CURLE_PEER_FAILED_VERIFICATION) and fetch nothing.
h3_refused() { # NAME CACERT HOST WHAT
    local name=$1 ca=$2 host=$3 what=$4 why="" rc
    if ! h3_start_server qtls "$name" 2>>"$LOGS/$name.start.log"; then
        fail "$name" "the qtls server did not start"
        return
    fi
    CLOG=$LOGS/$name.curl.log
    LD_BIND_NOW=1 timeout -k 2 30 "$CURL" -v -sS --http3-only --cacert "$ca" \
        --resolve "$host:$SERVER_PORT:127.0.0.1" -o "$WORK/$name.body" \
        "https://$host:$SERVER_PORT/index.html" 2>"$CLOG"
    rc=$?
    h3_stop_server
    [ $rc -eq 60 ] || why="$why curl exited $rc, not 60;"
    [ ! -s "$WORK/$name.body" ] || why="$why a body arrived;"
    if [ -z "$why" ]; then
        pass "$name (curl --http3-only refuses $what: exit 60, $(grep -m1 '^curl: (60)' "$CLOG" | cut -c1-90))"
    else
        fail "$name" "$why"
        show "$CLOG"
    fi
}
h3_refused h3-wrong-ca "$CERTS/other-ca.pem" localhost "a server the CA did not sign"
h3_refused h3-wrong-name "$CERTS/ca.pem" wrong.example "a certificate for another name"

# ---------------------------------------------------------------- TCP

# HTTPS over TCP from servers on the system OpenSSL: openssl s_server -WWW
# (HTTP/1.1 requests, HTTP/1.0 answers, one connection each) and Debian's
# nghttpd (HTTP/2 only), both serving $HTDOCS byte for byte.
TCP_PID=""
stop_tcp_server() {
    [ -n "$TCP_PID" ] || return 0
    kill "$TCP_PID" 2>/dev/null
    wait "$TCP_PID" 2>/dev/null
    TCP_PID=""
}
tcp_port_open() { grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp 2>/dev/null; }
start_tcp_server() { # KIND (s_server, nghttpd) NAME
    TCP_PORT=$((20000 + RANDOM % 30000))
    while tcp_port_open "$TCP_PORT"; do TCP_PORT=$((TCP_PORT + 1)); done
    TCP_LOG=$LOGS/$2.server.log
    case $1 in
    s_server)
        (cd "$HTDOCS" && exec timeout -k 2 120 openssl s_server -quiet -WWW -accept "127.0.0.1:$TCP_PORT" \
            -cert "$CERTS/ecdsa256.pem" -key "$CERTS/ecdsa256.key") >"$TCP_LOG" 2>&1 &
        ;;
    nghttpd)
        timeout -k 2 120 nghttpd -a 127.0.0.1 -d "$HTDOCS" "$TCP_PORT" \
            "$CERTS/ecdsa256.key" "$CERTS/ecdsa256.pem" >"$TCP_LOG" 2>&1 &
        ;;
    esac
    TCP_PID=$!
    for _ in $(seq 100); do
        tcp_port_open "$TCP_PORT" && return 0
        kill -0 "$TCP_PID" 2>/dev/null || break
        sleep 0.05
    done
    stop_tcp_server
    return 1
}

# What curl -v prints from its message callback (SSL_CTX_set_msg_callback) for
# a full TLS 1.3 handshake, and its summary line: readable names, no Unknown.
handshake_why() {
    local line
    for line in 'TLSv1.3 (OUT), TLS handshake, Client hello (1):' \
        'TLSv1.3 (IN), TLS handshake, Server hello (2):' \
        'TLSv1.3 (IN), TLS handshake, Encrypted Extensions (8):' \
        'TLSv1.3 (IN), TLS handshake, Certificate (11):' \
        'TLSv1.3 (IN), TLS handshake, CERT verify (15):' \
        'TLSv1.3 (IN), TLS handshake, Finished (20):' \
        'TLSv1.3 (OUT), TLS handshake, Finished (20):' \
        'TLSv1.3 (IN), TLS handshake, Newsession Ticket (4):' \
        'SSL connection using TLSv1.3 / TLS_AES_' 'SSL certificate verify ok.'; do
        grep -qF -- "$line" "$CLOG" || printf ' -v lacks "%s";' "$line"
    done
    line=$(grep -m1 -E '^\* (TLS|SSL).*(Unknown|unknown)' "$CLOG")
    [ -z "$line" ] || printf ' -v shows "%s";' "$line"
}
# Two connections, the second resuming the first's session: curl offers the
# cached session, and the server, taking it, sends no Certificate.
resumed_why() {
    local nconn ncert
    nconn=$(grep -c '^\* Connected to localhost' "$CLOG")
    ncert=$(grep -c '^\* TLSv1.3 (IN), TLS handshake, Certificate (11):' "$CLOG")
    [ "$nconn" = 2 ] || printf ' %s connections, not 2;' "$nconn"
    grep -q '^\* SSL re-using session ID' "$CLOG" || printf ' no "SSL re-using session ID";'
    [ "$ncert" = 1 ] || printf ' %s Certificate messages in 2 connections (the second was not resumed);' "$ncert"
}
tcp_pass_note() {
    printf '%s; %s' "$(grep -m1 'SSL connection using' "$CLOG" | sed 's/^\* //')" \
        "$(grep -m1 'SSL re-using session ID' "$CLOG" | sed 's/^\* //')"
}

if start_tcp_server s_server tcp-h1; then
    curl_fetch tcp-h1 "$TCP_PORT" --http1.1 --cacert "$CERTS/ca.pem"
    stop_tcp_server
    why=""
    [ "$CURL_RC" -eq 0 ] || why="$why curl exited $CURL_RC;"
    case $HTTP_VERSIONS in "1"*" 200 1"*" 200") ;; *) why="$why http_version/code: '$HTTP_VERSIONS';" ;; esac
    grep -q '^> GET /index.html HTTP/1.1' "$CLOG" || why="$why no HTTP/1.1 request in -v;"
    why="$why$(bodies_why)$(handshake_why)$(resumed_why)"
    if [ -z "$why" ]; then
        pass "tcp-h1 (HTTPS over TCP from openssl s_server -WWW, bytes intact, the handshake in -v: $(tcp_pass_note) on the second connection, no Certificate)"
    else
        fail tcp-h1 "$why"
        show "$CLOG"
        show "$TCP_LOG"
    fi
else
    fail tcp-h1 "openssl s_server did not start: $(tail -n 3 "$TCP_LOG" | tr '\n' ' ')"
fi

if start_tcp_server nghttpd tcp-h2; then
    # --interface: a connection bound to a given local address is not the
    # cached one (curl's tool has no --fresh-connect), the session cache's
    # key (name, port, TLS settings) is unchanged.
    AGAIN=(--interface 127.0.0.1)
    curl_fetch tcp-h2 "$TCP_PORT" --http2 --cacert "$CERTS/ca.pem"
    AGAIN=()
    stop_tcp_server
    why=""
    [ "$CURL_RC" -eq 0 ] || why="$why curl exited $CURL_RC;"
    [ "$HTTP_VERSIONS" = "2 200 2 200 2 200" ] ||
        why="$why http_version/code: '$HTTP_VERSIONS', wanted '2 200 2 200 2 200';"
    grep -q 'ALPN: server accepted h2' "$CLOG" || why="$why no 'ALPN: server accepted h2';"
    grep -q '^\* Re-using existing connection' "$CLOG" || why="$why big.bin did not reuse the h2 connection;"
    cmp -s "$HTDOCS/index.html" "$DL/again.html" || why="$why the third transfer's index.html did not arrive intact;"
    why="$why$(bodies_why)$(handshake_why)$(resumed_why)"
    if [ -z "$why" ]; then
        pass "tcp-h2 (curl --http2 from nghttpd: ALPN h2, two files on one connection, bytes intact; a third on a new one: $(tcp_pass_note), no Certificate)"
    else
        fail tcp-h2 "$why"
        show "$CLOG"
        show "$TCP_LOG"
    fi
else
    fail tcp-h2 "nghttpd did not start: $(tail -n 3 "$TCP_LOG" | tr '\n' ' ')"
fi

# The wrong CA, then the wrong name, over TCP: exit 60 and nothing fetched.
tcp_refused() { # NAME CACERT HOST WHAT
    local name=$1 ca=$2 host=$3 what=$4 why="" rc
    if ! start_tcp_server s_server "$name"; then
        fail "$name" "openssl s_server did not start"
        return
    fi
    CLOG=$LOGS/$name.curl.log
    LD_BIND_NOW=1 timeout -k 2 30 "$CURL" -v -sS --cacert "$ca" \
        --resolve "$host:$TCP_PORT:127.0.0.1" -o "$WORK/$name.body" \
        "https://$host:$TCP_PORT/index.html" 2>"$CLOG"
    rc=$?
    stop_tcp_server
    [ $rc -eq 60 ] || why="$why curl exited $rc, not 60;"
    [ ! -s "$WORK/$name.body" ] || why="$why a body arrived;"
    if [ -z "$why" ]; then
        pass "$name (curl over TCP refuses $what: exit 60, $(grep -m1 '^curl: (60)' "$CLOG" | cut -c1-90))"
    else
        fail "$name" "$why"
        show "$CLOG"
    fi
}
tcp_refused tcp-wrong-ca "$CERTS/other-ca.pem" localhost "a server the CA did not sign"
tcp_refused tcp-wrong-name "$CERTS/ca.pem" wrong.example "a certificate for another name"

finish
