#!/bin/bash
# tests/pq/go124.sh [DIR]: Go 1.24 from Debian 13's (trixie's) binary packages golang-1.24-go
# and golang-1.24-src, downloaded through tests/lib/debsrc.sh's private apt configuration and
# unpacked with dpkg-deb -x under DIR (default build/go124): not installed, nothing on the
# system changes. Go 1.24's crypto/tls offers X25519MLKEM768 (on by default), the hybrid
# tests/pq/run.sh tests qtls against.
#
# Skipped when DIR/.qtls-stamp names the same .debs. Last line on success:
#   go124: GOROOT (go version go1.24.x linux/amd64)
# On failure says why and exits non-zero. To use it:
#   GOROOT=DIR/usr/lib/go-1.24 GOTOOLCHAIN=local DIR/usr/lib/go-1.24/bin/go ...
#   QTLS_PQ_DIR=DIR   work directory (default build/pq): .debs and logs
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/go124}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
W=${QTLS_PQ_DIR:-$ROOT/build/pq}
LOGS=$W/logs
DEBS=$W/debs-go124
GOROOT=$OUT/usr/lib/go-1.24

die() { # WHY [LOG]
    echo "go124: FAILED: $1" >&2
    if [ -n "${2:-}" ] && [ -f "$2" ]; then
        echo "---- last lines of $2" >&2
        tail -n 20 "$2" >&2
    fi
    exit 1
}

mkdir -p "$W" "$LOGS" || die "cannot create $W"
exec 9>"$W/.go124.lock"
flock -w 600 9 || die "another run holds $W/.go124.lock"

# shellcheck source=../lib/debsrc.sh
. "$ROOT/tests/lib/debsrc.sh"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian's dpkg package)"

debsrc_init "$W/apt-trixie" "$LOGS/apt.log" trixie
if ! ls "$DEBS"/golang-1.24-go_*.deb "$DEBS"/golang-1.24-src_*.deb >/dev/null 2>&1; then
    rm -rf "$DEBS"
    debsrc_download "$DEBS" golang-1.24-go golang-1.24-src ||
        die "apt-get download golang-1.24-go golang-1.24-src (trixie) failed" "$LOGS/apt.log"
fi
stamp=$(cd "$DEBS" && echo golang-1.24-go_*.deb golang-1.24-src_*.deb)

gover() { env GOROOT="$GOROOT" GOTOOLCHAIN=local GOENV=off "$GOROOT/bin/go" version 2>&1; }
if [ -f "$OUT/.qtls-stamp" ] && [ "$(cat "$OUT/.qtls-stamp")" = "$stamp" ] &&
    v=$(gover) && case $v in "go version go1.24"*) true ;; *) false ;; esac; then
    echo "go124: $GOROOT ($v, cached)"
    exit 0
fi

rm -rf "$OUT"
mkdir -p "$OUT" || die "cannot create $OUT"
for deb in "$DEBS"/golang-1.24-go_*.deb "$DEBS"/golang-1.24-src_*.deb; do
    dpkg-deb -x "$deb" "$OUT" 2>>"$LOGS/go124.log" || die "dpkg-deb -x $deb failed" "$LOGS/go124.log"
done
# golang-1.24-go's GOROOT links src, pkg/include and the like to /usr/share/go-1.24, which
# golang-1.24-src would have installed: point them into OUT instead
find "$OUT" -type l -lname '/usr/*' | while read -r l; do
    t=$(readlink "$l")
    ln -sfn "$OUT$t" "$l"
done
v=$(gover) || die "$GOROOT/bin/go version failed: $v"
case $v in "go version go1.24"*) ;; *) die "$GOROOT/bin/go version says '$v', not go1.24" ;; esac
echo "$stamp" >"$OUT/.qtls-stamp"
echo "go124: $GOROOT ($v)"
