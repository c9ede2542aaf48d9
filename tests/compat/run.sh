#!/bin/bash
# tests/compat/run.sh WORKDIR CC "CFLAGS" MAKE-ARGS...: make install-compat, for make check.
#
# Installs with `make MAKE-ARGS install-compat` into WORKDIR/prefix (and once more under a
# DESTDIR), then builds tests/compat/quictls_app.c, a program written for quictls, the way an
# unmodified build system would: with nothing but the prefix's pkg-config files, and with
# -I DIR/include -L DIR/lib -lssl -lcrypto; and likewise tests/compat/ossl35_app.c, a program
# written for OpenSSL 3.5's QUIC TLS API (SSL_set_quic_tls_cbs). Each binary must record
# libqtls.so.0, never libssl.so.3, as NEEDED and must complete its in-memory QUIC handshake
# with LD_BIND_NOW=1.
# CFLAGS are the build's (the sanitizer flags under SANITIZE=1, which the program needs to load
# a sanitized libqtls.so). Output follows cmocka's format so that scripts/run-tests.sh counts
# it: a "[  PASSED  ] N test(s)." line and, if any failed, "[  FAILED  ] N test(s), ...".
set -uo pipefail

if [ $# -lt 3 ]; then
    echo "usage: $0 WORKDIR CC CFLAGS [MAKE-ARGS...]" >&2
    exit 2
fi
WORK=$1
CC=$2
CFLAGS=$3
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
APPS="quictls_app ossl35_app" # tests/compat/NAME.c
PREFIX=$WORK/prefix
rm -rf "$WORK"
mkdir -p "$WORK"

npass=0
failed=()
why=""
t0=$(date +%s)

run_case() {
    local name=$1
    shift
    echo "[ RUN      ] $name"
    why=""
    if "case_$name" "$@" >"$WORK/$name.log" 2>&1 && [ -z "$why" ]; then
        echo "[       OK ] $name"
        npass=$((npass + 1))
    else
        [ -n "$why" ] || why="see $WORK/$name.log"
        echo "$name: $why"
        tail -n 15 "$WORK/$name.log" | sed 's/^/    /'
        echo "[  FAILED  ] $name"
        failed+=("$name")
    fi
}

# The tools every case needs; a missing one fails the case and names its package.
need_tools() {
    local t pkg
    for t in pkg-config:pkg-config readelf:binutils "${CC%% *}":gcc; do
        pkg=${t#*:}
        t=${t%%:*}
        command -v "$t" >/dev/null 2>&1 || { why="needs $t: sudo apt-get install -y $pkg"; return 1; }
    done
}

submake() {
    # a make of its own, not a job of make check's jobserver
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" "$@"
}

# NEEDED of BIN: libqtls.so.0 present, no libssl.so.
check_needed() {
    local needed
    needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    echo "NEEDED: $needed"
    case " $needed " in *" libqtls.so.0 "*) ;; *) why="NEEDED has no libqtls.so.0: $needed"; return 1 ;; esac
    case " $needed " in *" libssl.so"*) why="NEEDED names the system libssl: $needed"; return 1 ;; esac
}

run_app() { # NAME BIN: BIN, built from tests/compat/NAME.c, says "NAME: ok"
    local name=$1 out
    shift
    out=$(LD_BIND_NOW=1 "$@" 2>&1)
    echo "$out"
    case $out in "$name: ok"*) ;; *) why="$name failed: $(echo "$out" | head -n 3)"; return 1 ;; esac
}

case_install() {
    need_tools || return 1
    submake "$@" install-compat PREFIX="$PREFIX" || { why="make install-compat failed"; return 1; }
    local d=$PREFIX/include/openssl h
    for h in ssl.h quic.h tls1.h sslerr.h; do
        cmp "$ROOT/include/compat/openssl/$h" "$d/$h" || { why="$d/$h is not qtls's"; return 1; }
    done
    for h in evp.h x509.h opensslv.h ssl3.h configuration.h; do
        [ -L "$d/$h" ] && [ -f "$d/$h" ] || { why="$d/$h is not a symlink to the system's"; return 1; }
    done
    [ "$(readlink "$PREFIX/lib/libssl.so")" = libqtls.so.0 ] || { why="libssl.so is not libqtls.so.0"; return 1; }
    [ -f "$PREFIX/lib/libqtls.so.0" ] || { why="no libqtls.so.0"; return 1; }
    readelf -d "$PREFIX/lib/libcrypto.so" | grep -q 'SONAME.*libcrypto\.so\.3' ||
        { why="lib/libcrypto.so is not the system's libcrypto.so.3"; return 1; }
    [ ! -e "$PREFIX/lib/libssl.so.3" ] || { why="a libssl.so.3 would shadow the system's"; return 1; }
    for h in openssl libssl libcrypto; do
        [ -f "$PREFIX/lib/pkgconfig/$h.pc" ] || { why="no $h.pc"; return 1; }
    done
    # the version a configure script compares against is the system libcrypto's
    [ "$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion openssl)" = \
        "$(pkg-config --modversion libcrypto)" ] || { why="openssl.pc version"; return 1; }
}

case_destdir() {
    need_tools || return 1
    local stage=$WORK/stage
    submake "$@" install-compat DESTDIR="$stage" PREFIX=/opt/qtls-compat ||
        { why="make install-compat DESTDIR=... failed"; return 1; }
    [ -f "$stage/opt/qtls-compat/include/openssl/ssl.h" ] &&
        [ -L "$stage/opt/qtls-compat/lib/libssl.so" ] &&
        [ -f "$stage/opt/qtls-compat/lib/libqtls.so.0" ] || { why="files not under DESTDIR"; return 1; }
    grep -qx 'prefix=/opt/qtls-compat' "$stage/opt/qtls-compat/lib/pkgconfig/libssl.pc" ||
        { why="libssl.pc does not name PREFIX without DESTDIR"; return 1; }
}

# pkg-config only: what meson, curl's configure with PKG_CONFIG_PATH, CMake's pkg_check_modules do.
case_pkgconfig() {
    need_tools || return 1
    [ -f "$PREFIX/lib/pkgconfig/libssl.pc" ] || { why="no install (see the install case)"; return 1; }
    local flags
    flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs libssl libcrypto) ||
        { why="pkg-config libssl libcrypto failed"; return 1; }
    echo "pkg-config: $flags"
    local app
    for app in $APPS; do
        # shellcheck disable=SC2086
        $CC $CFLAGS -o "$WORK/${app}_pc" "$ROOT/tests/compat/$app.c" $flags \
            -Wl,-rpath,"$PREFIX/lib" ||
            { why="$app does not compile with pkg-config's flags: $flags"; return 1; }
        check_needed "$WORK/${app}_pc" && run_app "$app" "$WORK/${app}_pc" || return 1
    done
}

# An OpenSSL directory given by hand (--with-openssl=DIR): -I DIR/include -L DIR/lib -lssl
# -lcrypto, at run time through LD_LIBRARY_PATH; -I /usr/include after DIR/include as well.
case_flags() {
    need_tools || return 1
    [ -d "$PREFIX/include/openssl" ] || { why="no install (see the install case)"; return 1; }
    local inc app
    for app in $APPS; do
        for inc in "" "-I/usr/include"; do
            # shellcheck disable=SC2086
            $CC $CFLAGS -I "$PREFIX/include" $inc -o "$WORK/${app}_l" "$ROOT/tests/compat/$app.c" \
                -L "$PREFIX/lib" -lssl -lcrypto ||
                { why="$app does not compile with -I DIR/include $inc -L DIR/lib -lssl -lcrypto"; return 1; }
            check_needed "$WORK/${app}_l" || return 1
            LD_LIBRARY_PATH=$PREFIX/lib run_app "$app" "$WORK/${app}_l" || return 1
        done
    done
    # <openssl/evp.h> came through the prefix (a symlink to the system's), <openssl/ssl.h> is qtls's
    $CC -I "$PREFIX/include" -M "$ROOT/tests/compat/quictls_app.c" >"$WORK/deps" ||
        { why="gcc -M failed"; return 1; }
    grep -q "$PREFIX/include/openssl/evp.h" "$WORK/deps" &&
        grep -q "$PREFIX/include/openssl/ssl.h" "$WORK/deps" ||
        { why="headers did not resolve through DIR/include: $(tr -s ' \\\n' ' ' <"$WORK/deps")"; return 1; }
}

echo "[==========] Running make install-compat tests (logs: $WORK)."
run_case install "$@"
run_case destdir "$@"
run_case pkgconfig
run_case flags
echo "[==========] $((npass + ${#failed[@]})) test(s) run in $(($(date +%s) - t0)) s."
echo "[  PASSED  ] $npass test(s)."
if [ ${#failed[@]} -gt 0 ]; then
    echo "[  FAILED  ] ${#failed[@]} test(s), listed below:"
    for f in "${failed[@]}"; do echo "[  FAILED  ] $f"; done
    exit 1
fi
exit 0
