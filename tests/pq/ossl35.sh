#!/bin/bash
# tests/pq/ossl35.sh [PREFIX]: OpenSSL 3.5 from Debian 13's (trixie's) own source package,
# Debian's patches applied, built once into PREFIX (default build/ossl35): libssl, libcrypto,
# the default providers and the openssl app, for the post-quantum interop peers of
# tests/pq/run.sh and tests/pq/mlkem_xcheck.c. Nothing is installed on the system: the source
# comes through tests/lib/debsrc.sh's private apt configuration (build/pq/apt-trixie).
#
# Skipped when PREFIX/.qtls-stamp matches this build (source version and Configure options).
# Prints where it is on success (last line: "ossl35: PREFIX (OpenSSL 3.5.x ...)"); otherwise
# says why and exits non-zero. Needs dpkg-dev and xz-utils (scripts/deps.sh group pq), gcc,
# make and perl. Takes about 9 minutes on 2 cores (make -j2 build_sw), seconds when cached.
#   QTLS_PQ_DIR=DIR   work directory (default build/pq): source and logs
#   JOBS=N            parallel build jobs (default nproc)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=${1:-$ROOT/build/ossl35}
case $PREFIX in /*) ;; *) PREFIX=$PWD/$PREFIX ;; esac
W=${QTLS_PQ_DIR:-$ROOT/build/pq}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SRC=$W/src/openssl
LOGS=$W/logs
# no-tests/no-docs: neither is needed, and they are half the build; no-legacy: the legacy
# provider's old ciphers are not used by anything here
OPTIONS="shared no-tests no-docs no-legacy"

die() { # WHY [LOG]
    echo "ossl35: FAILED: $1" >&2
    if [ -n "${2:-}" ] && [ -f "$2" ]; then
        echo "---- last lines of $2" >&2
        tail -n 30 "$2" >&2
    fi
    exit 1
}

mkdir -p "$W" "$LOGS" || die "cannot create $W"
exec 9>"$W/.ossl35.lock"
flock -w 1800 9 || die "another build holds $W/.ossl35.lock"

# shellcheck source=../lib/debsrc.sh
. "$ROOT/tests/lib/debsrc.sh"
for tool in dpkg-source xz perl make gcc; do
    command -v "$tool" >/dev/null ||
        die "$tool is missing: scripts/deps.sh pq installs it (dpkg-dev xz-utils perl make gcc)"
done

debsrc_init "$W/apt-trixie" "$LOGS/apt.log" trixie
# The newest version in trixie's Sources first; should the mirror not (yet, or any longer)
# serve that one's files, an older 3.5 that the index also lists: debsrc_source unpacks
# whatever .dsc is already downloaded into its directory.
if ! debsrc_source openssl "$SRC"; then
    dl=$W/apt-trixie/src/openssl
    for v in $(apt-cache "${DEBSRC_APT[@]}" showsrc openssl 2>>"$LOGS/apt.log" |
        sed -n 's/^Version: //p' | sort -rV); do
        rm -f "$dl"/*
        echo "ossl35: trying openssl=$v" >>"$LOGS/apt.log"
        (cd "$dl" && apt-get "${DEBSRC_APT[@]}" source --download-only "openssl=$v") \
            >>"$LOGS/apt.log" 2>&1 && break
    done
    debsrc_source openssl "$SRC" ||
        die "apt-get source openssl (trixie) / dpkg-source -x failed" "$LOGS/apt.log"
fi
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version 2>/dev/null)
case $ver in
3.5.*) ;;
*) die "trixie's openssl source is '$ver', not 3.5" ;;
esac

stamp="debian=$ver options=$OPTIONS prefix=$PREFIX"
if [ -f "$PREFIX/.qtls-stamp" ] && [ "$(cat "$PREFIX/.qtls-stamp")" = "$stamp" ] &&
    [ -x "$PREFIX/bin/openssl" ]; then
    echo "ossl35: $PREFIX ($(LD_LIBRARY_PATH=$PREFIX/lib "$PREFIX/bin/openssl" version), cached)"
    exit 0
fi

t0=$(date +%s)
rm -rf "$PREFIX" "$W/obj-ossl35"
mkdir -p "$W/obj-ossl35" || die "cannot create $W/obj-ossl35"
# out of tree, so that the unpacked source stays as dpkg-source left it
# shellcheck disable=SC2086 # options are words
(cd "$W/obj-ossl35" && "$SRC/Configure" linux-x86_64 $OPTIONS --prefix="$PREFIX" \
    --libdir=lib --openssldir="$PREFIX/ssl" -Wl,-rpath,"$PREFIX/lib") \
    >"$LOGS/ossl35-configure.log" 2>&1 || die "Configure failed" "$LOGS/ossl35-configure.log"
nice make -C "$W/obj-ossl35" -j"$JOBS" build_sw >"$LOGS/ossl35-build.log" 2>&1 ||
    die "make build_sw failed" "$LOGS/ossl35-build.log"
make -C "$W/obj-ossl35" install_sw >"$LOGS/ossl35-install.log" 2>&1 ||
    die "make install_sw failed" "$LOGS/ossl35-install.log"
v=$("$PREFIX/bin/openssl" version 2>&1) || die "$PREFIX/bin/openssl does not run: $v"
case $v in "OpenSSL 3.5."*) ;; *) die "$PREFIX/bin/openssl is '$v', not 3.5" ;; esac
"$PREFIX/bin/openssl" list -kem-algorithms 2>/dev/null | grep -q ML-KEM-768 ||
    die "$PREFIX/bin/openssl lists no ML-KEM-768"
echo "$stamp" >"$PREFIX/.qtls-stamp"
echo "ossl35: built in $(($(date +%s) - t0)) s"
echo "ossl35: $PREFIX ($v)"
