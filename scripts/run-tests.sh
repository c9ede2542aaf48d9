#!/bin/bash
# run-tests.sh BIN...: runs each cmocka test binary (at most 300 s each),
# shows its output, and ends with one line "N passed, N failed" summed from
# cmocka's summary lines. A binary that ends without a summary (crash,
# sanitizer abort, timeout) or exits non-zero while its summary reports no
# failure counts as one failed test, and so does a ThreadSanitizer report in
# its output whatever the status (TSAN_OPTIONS=exitcode=0, or a child process
# whose status is not read). Exits non-zero if anything failed.
# QTLS_SKIPPED names the suites make check was asked to skip (SKIP=...); the
# summary line then ends with them, so a skip is never silent.
set -uo pipefail

export CMOCKA_MESSAGE_OUTPUT=stdout
TIMEOUT=${QTLS_TEST_TIMEOUT:-300}

passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/run-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

for bin in "$@"; do
    echo "=== $bin"
    timeout -k 10 "$TIMEOUT" "$bin" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}

    # "[  PASSED  ] 3 test(s)." and "[  FAILED  ] 1 test(s), listed below:",
    # once per cmocka group; the "[  FAILED  ] test_name" lines don't match.
    p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*/\1/p' "$log" |
        awk '{ s += $1 } END { print s + 0 }')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*/\1/p' "$log" |
        awk '{ s += $1 } END { print s + 0 }')
    summaries=$(grep -c '^\[  \(PASSED\|FAILED\)  \] [0-9][0-9]* test(s)' "$log")

    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "=== $bin: timed out after ${TIMEOUT} s"
        f=$((f + 1))
    elif [ "$summaries" -eq 0 ]; then
        echo "=== $bin: no cmocka summary (exit status $status)"
        f=$((f + 1))
    elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "=== $bin: exit status $status with no failed test reported"
        f=1
    elif [ "$f" -eq 0 ] && grep -q '^WARNING: ThreadSanitizer:' "$log"; then
        echo "=== $bin: ThreadSanitizer report with exit status $status"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
done

skipped=${QTLS_SKIPPED:-}
if [ -n "$skipped" ]; then
    echo "$passed passed, $failed failed; skipped on request (SKIP): $skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
