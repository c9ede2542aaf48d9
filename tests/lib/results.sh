# shellcheck shell=bash
# tests/lib/results.sh: sourced by the interop scripts (tests/ngtcp2/run.sh,
# tests/haproxy/run.sh). One PASS/FAIL/SKIP line per check and a last line
# "N passed, N failed, N skipped"; the exit status is 0 only when something
# passed and nothing failed. The caller sets LOGS (where its logs are).

npass=0 nfail=0 nskip=0
pass() { npass=$((npass + 1)); echo "PASS $1"; }
skip() { nskip=$((nskip + 1)); echo "SKIP $1: $2"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $1: $2"; }

finish() {
    echo "logs: $LOGS"
    echo "$npass passed, $nfail failed, $nskip skipped"
    [ "$nfail" -eq 0 ] && [ "$npass" -gt 0 ]
    exit $?
}

# die NAME WHY [LOG]: a step that stops the run: say why, show the errors (or
# the end) of its log, count it, finish.
die() {
    fail "$1" "$2"
    if [ -n "${3:-}" ] && [ -f "$3" ]; then
        if grep -qE ': error: |undefined reference' "$3"; then
            echo "---- errors in $3"
            grep -E ': error: |undefined reference' "$3" | head -n 40
        else
            echo "---- last lines of $3"
            tail -n 40 "$3"
        fi
        echo "----"
    fi
    finish
}
