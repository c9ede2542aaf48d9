#!/bin/bash
# run.sh BUILD_DIR CC: the fuzzing build mode (-DQTLS_FUZZING: fixed randomness, any signature,
# Finished or binder accepted; src/crypto/crypto.c) must never reach a library that make builds.
# Each check prints a cmocka-style summary so that make check counts it as a test.
#   control:  src/crypto/crypto.c compiled with -DQTLS_FUZZING does carry the marker (so the two
#             checks below can fail, and the marker has not been renamed under them)
#   archive:  no object of BUILD_DIR/libqtls.a defines the marker or holds its text
#   shared:   BUILD_DIR/libqtls.so holds neither
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BUILD=$1
CC=${2:-cc}
SYMBOL=qtls_fuzzing_build_marker
TEXT='QTLS_FUZZING_BUILD: insecure'

failed=0
report() { # report NAME PROBLEM (empty = passed)
    echo "[ RUN      ] fuzzmode_$1"
    if [ -z "$2" ]; then
        echo "[       OK ] fuzzmode_$1"
        echo "[  PASSED  ] 1 test(s)."
    else
        echo "fuzzmode_$1: $2"
        echo "[  FAILED  ] fuzzmode_$1"
        echo "[  FAILED  ] 1 test(s), listed below:"
        echo "[  FAILED  ] fuzzmode_$1"
        failed=1
    fi
}

# has_marker FILE: the symbol in its symbol table or the text anywhere in its bytes.
has_marker() {
    nm -A "$1" 2>/dev/null | grep -q " [A-Za-z] $SYMBOL\$" || grep -qaF "$TEXT" "$1"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzzmode.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! $CC -Iinclude -Isrc -D_GNU_SOURCE -DOPENSSL_SUPPRESS_DEPRECATED -std=c11 -O1 \
        -DQTLS_FUZZING -c src/crypto/crypto.c -o "$tmp/crypto-fuzzing.o" 2>"$tmp/cc.log"; then
    report control "src/crypto/crypto.c does not compile with -DQTLS_FUZZING: $(head -3 "$tmp/cc.log")"
elif ! has_marker "$tmp/crypto-fuzzing.o"; then
    report control "-DQTLS_FUZZING compiled no $SYMBOL into crypto.o: the checks below test nothing"
else
    report control ""
fi

for lib in archive:libqtls.a shared:libqtls.so; do
    name=${lib%%:*} file=$BUILD/${lib#*:}
    if [ ! -f "$file" ]; then
        report "$name" "$file is missing (build first)"
    elif has_marker "$file"; then
        report "$name" "$file contains the fuzzing build ($SYMBOL): built with -DQTLS_FUZZING"
    else
        report "$name" ""
    fi
done
exit $failed
