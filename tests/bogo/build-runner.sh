#!/usr/bin/env bash
# Builds BoringSSL's BoGo test runner (ssl/test/runner) from Debian 12's own
# packages, offline, into build/bogo/runner.test.
#
#  - the source: Debian's `android-platform-external-boringssl` (bookworm main),
#    fetched with `apt-get source` through a private apt configuration under
#    build/bogo/apt (a deb-src entry for bookworm main on the mirror this
#    machine already uses); the machine's own sources and lists are untouched;
#  - the compiler: Debian's Go (golang-go, 1.19);
#  - the Go modules: Debian's source packages golang-golang-x-crypto-dev and
#    golang-golang-x-sys-dev, wired in with `replace` directives, with
#    GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off GOTOOLCHAIN=local.
#
# Nothing of BoringSSL goes into the repository: it all lives under build/bogo
# (ignored). The unpacked source and the runner binary are cached there; the
# script rebuilds only when they are missing. BOGO_REFRESH=1 forces a fresh
# download and build.
#
# Prints the path of the runner binary on its last line.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BOGO_DIR:-$ROOT/build/bogo}
PKG=android-platform-external-boringssl
RUNNER=$OUT/runner.test
mkdir -p "$OUT"

log() { printf 'build-runner: %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------
# Listed in scripts/deps.sh (group bogo): installed there as root, named otherwise.
"$ROOT/scripts/deps.sh" bogo || exit 1
GOCODE=/usr/share/gocode/src
for m in golang.org/x/crypto golang.org/x/sys; do
    [ -d "$GOCODE/$m" ] || { log "no $GOCODE/$m"; exit 1; }
done

if [ -x "$RUNNER" ] && [ -z "${BOGO_REFRESH:-}" ] &&
    [ -n "$(find "$OUT/src" -mindepth 3 -maxdepth 5 -type d -path '*/ssl/test/runner' 2>/dev/null)" ]; then
    log "cached: $RUNNER"
    echo "$RUNNER"
    exit 0
fi

# --- the source package, through a private apt configuration ---------------
# (tests/lib/debsrc.sh: the mirror is the one this machine's apt uses.)
. "$ROOT/tests/lib/debsrc.sh"
[ -n "${BOGO_DEBIAN_MIRROR:-}" ] && export QTLS_DEBIAN_MIRROR=$BOGO_DEBIAN_MIRROR
debsrc_init "$OUT/apt" "$OUT/apt.log"
SRC=$OUT/src
rm -rf "$SRC"
mkdir -p "$SRC"
log "apt-get source $PKG (private lists in $OUT/apt)"
if ! debsrc_update ||
    ! (cd "$SRC" && apt-get "${DEBSRC_APT[@]}" source --download-only -qq "$PKG" >>"$OUT/apt.log" 2>&1); then
    log "apt-get failed:"
    tail -n 20 "$OUT/apt.log" >&2
    exit 1
fi
ORIG=$(ls "$SRC"/${PKG}_*.orig.tar.* 2>/dev/null | head -n1)
[ -n "$ORIG" ] || { log "no orig tarball downloaded"; exit 1; }
log "unpacking $(basename "$ORIG")"
tar -C "$SRC" -xf "$ORIG"
TOP=$(find "$SRC" -mindepth 3 -maxdepth 5 -type d -path '*/ssl/test/runner' | head -n1)
[ -n "$TOP" ] || { log "no ssl/test/runner in the source package"; exit 1; }
MODDIR=$(cd "$TOP/../../.." && pwd)   # the directory with go.mod
[ -f "$MODDIR/go.mod" ] || { log "no go.mod at $MODDIR"; exit 1; }

# --- go.mod: Debian's modules through replace, nothing downloaded ----------
# "go 1.13" -> "go 1.19" turns on module graph pruning; golang.org/x/net is
# not needed by the runner and is not packaged in a usable version.
cd "$MODDIR"
cp go.mod go.mod.orig
{
    echo "module boringssl.googlesource.com/boringssl"
    echo
    echo "go 1.19"
    echo
    echo "require ("
    echo "	golang.org/x/crypto v0.0.0"
    echo "	golang.org/x/sys v0.0.0"
    echo ")"
    echo
    echo "replace golang.org/x/crypto => $GOCODE/golang.org/x/crypto"
    echo "replace golang.org/x/sys => $GOCODE/golang.org/x/sys"
} > go.mod
rm -f go.sum
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off GOTELEMETRY=off
export GOPATH=$OUT/gopath GOCACHE=$OUT/gocache
mkdir -p "$GOPATH" "$GOCACHE"
log "go test -c ($(go version))"
start=$(date +%s)
(cd "$TOP" && go test -c -o "$RUNNER.tmp" .) >&2
mv "$RUNNER.tmp" "$RUNNER"
log "runner built in $(( $(date +%s) - start ))s: $RUNNER"
echo "$RUNNER"
