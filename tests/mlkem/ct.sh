#!/bin/bash
# ct.sh CT_CHECK: the constant-time check of qtls's ML-KEM (src/crypto/mlkem.c). Runs CT_CHECK
# (tests/mlkem/ct_check.c, built by make without sanitizers) under valgrind's memcheck, which
# reports every branch and memory index that depends on the secrets ct_check marks undefined.
# Each case prints a cmocka-style summary, so that make check counts it (scripts/run-tests.sh):
#   ct_mlkem768, ct_mlkem1024   keygen, encaps and decaps (both outcomes of implicit
#                               rejection) with no report
#   ct_control_is_reported      a deliberate branch on a secret is reported: the check works
# valgrind is scripts/deps.sh's callgrind group (make check installs it).
set -uo pipefail

bin=${1:?usage: ct.sh CT_CHECK}
log=$(mktemp "${TMPDIR:-/tmp}/mlkem-ct.XXXXXX")
trap 'rm -f "$log"' EXIT
failed=0

report() { # report NAME OK(0/1)
    echo "[ RUN      ] $1"
    if [ "$2" -eq 1 ]; then
        echo "[       OK ] $1"
        echo "[  PASSED  ] 1 test(s)."
    else
        echo "[  FAILED  ] $1"
        echo "[  FAILED  ] 1 test(s), listed below:"
        echo "[  FAILED  ] $1"
        failed=1
    fi
}

if ! command -v valgrind > /dev/null; then
    echo "ct.sh: valgrind is not installed (apt-get install valgrind)"
    for t in ct_mlkem768 ct_mlkem1024 ct_control_is_reported; do report "$t" 0; done
    exit 1
fi

memcheck() { # memcheck ARG: ct_check ARG under memcheck, its output in $log
    valgrind -q --error-exitcode=99 --track-origins=yes "$bin" "$1" > "$log" 2>&1
}

for p in 768 1024; do
    memcheck "$p"
    status=$?
    [ "$status" -ne 0 ] && cat "$log"
    report "ct_mlkem$p" "$([ "$status" -eq 0 ] && echo 1 || echo 0)"
done

memcheck control
status=$?
ok=0
if [ "$status" -eq 99 ] && grep -q 'depends on uninitialised value' "$log"; then
    ok=1
else
    echo "ct.sh: memcheck did not report the control's branch on a secret (status $status)"
    cat "$log"
fi
report ct_control_is_reported "$ok"

exit $failed
