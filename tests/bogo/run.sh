#!/usr/bin/env bash
# Runs BoringSSL's BoGo runner in QUIC mode against the qtls shim.
#
#   tests/bogo/run.sh            (what `make bogo` runs)
#
# 1. builds the runner from Debian's packages (build-runner.sh, cached);
# 2. builds the shim on build/libqtls.a (QTLS_BOGO_LIB overrides the library);
# 3. runs every QUIC-mode test (found by a listing pass among the names that
#    contain "QUIC") with 2 workers, config.json's ErrorMap and DisabledTests, and
#    -allow-unimplemented (the shim exits 89 for what qtls does not do);
# 4. matches each QUIC-mode test missing from the results against the
#    config.json DisabledTests pattern that disables it (a test that disappears
#    without one counts as failed), asks the shim once more, test by test, why
#    it answered 89 to each skipped one;
# 5. prints counts per family, the failing tests, and the closing line
#    "N passed, N failed, N skipped" (skipped = unimplemented + disabled), and
#    writes the per-family table with every skip's reason to
#    build/bogo/table.md (BOGO_UPDATE_README=1: also into tests/bogo/README.md,
#    between its bogo-table markers).
#
# Environment: BOGO_TEST (runner -test pattern, default *QUIC*), BOGO_WORKERS
# (default 2), BOGO_TIMEOUT (seconds for the whole run, default 900),
# BOGO_CFLAGS (for the shim, default -O1 -g; make passes its own),
# QTLS_BOGO_LIB (the qtls archive). Exits 1 if any test failed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/bogo
OUT=$ROOT/build/bogo
LIB=${QTLS_BOGO_LIB:-$ROOT/build/libqtls.a}
PATTERN=${BOGO_TEST:-*QUIC*}
WORKERS=${BOGO_WORKERS:-2}
TIMEOUT=${BOGO_TIMEOUT:-900}
mkdir -p "$OUT"

t0=$(date +%s)
RUNNER=$("$HERE/build-runner.sh" | tail -n1)
t1=$(date +%s)
RUNNER_DIR=$(find "$OUT/src" -mindepth 3 -maxdepth 5 -type d -path '*/ssl/test/runner' | head -n1)
[ -d "$RUNNER_DIR" ] || { echo "bogo: runner sources missing under $OUT/src" >&2; exit 1; }

# --- the shim ---------------------------------------------------------------
[ -f "$LIB" ] || { echo "bogo: $LIB not built (run make first)" >&2; exit 1; }
# What a program linking the archive needs beside it (libcrypto, the compression libraries): the
# Makefile passes its QTLS_LIBS.
LIBCRYPTO=${QTLS_BOGO_LIBS:-$(pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)}
# --whole-archive: the shim looks session functions up weakly, and a weak
# reference alone would not pull their object file out of the archive.
${CC:-cc} -std=c11 ${BOGO_CFLAGS:--O1 -g} -Wall -Wextra -Wno-unused-parameter \
    -I"$ROOT/include/compat" -I"$ROOT/include" \
    -o "$OUT/shim" "$HERE/shim.c" \
    -Wl,--whole-archive "$LIB" -Wl,--no-whole-archive $LIBCRYPTO

# The JSON is indented one key per line: "Name": { "actual": "PASS", ... }.
names() { awk -F'"' '/^    "[^"]+": \{/ { name=$2 } /"actual":/ { print name, $4 }' "$1"; }

# --- the listing pass: which tests run in QUIC mode (disabled ones included) --
# A stand-in shim answers 89 when it sees -quic and fails otherwise, so the
# QUIC-mode tests are the skipped ones.
cat > "$OUT/list-shim.sh" <<'SH'
#!/bin/sh
for a in "$@"; do
    [ "$a" = "-is-handshaker-supported" ] && { echo No; exit 0; }
    [ "$a" = "-quic" ] && exit 89
done
exit 1
SH
chmod +x "$OUT/list-shim.sh"
(cd "$RUNNER_DIR" && "$RUNNER" -shim-path "$OUT/list-shim.sh" -test "$PATTERN" \
    -num-workers "$WORKERS" -allow-unimplemented -include-disabled \
    -json-output "$OUT/all.json" >/dev/null 2>&1) || true
names "$OUT/all.json" | awk '$2 == "SKIP" { print $1 }' | sort > "$OUT/all.txt"
[ -s "$OUT/all.txt" ] || { echo "bogo: no QUIC-mode test matches '$PATTERN'" >&2; exit 1; }
QUIC_TESTS=$(paste -sd';' "$OUT/all.txt")

# --- the run ------------------------------------------------------------------
rm -f "$OUT/results.json" "$OUT/unimplemented.log"
t2=$(date +%s)
set +e
(cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$OUT/unimplemented.log" timeout "$TIMEOUT" "$RUNNER" -shim-path "$OUT/shim" \
    -shim-config "$HERE/config.json" -test "$QUIC_TESTS" -num-workers "$WORKERS" \
    -allow-unimplemented -json-output "$OUT/results.json" -pipe) > "$OUT/runner.log" 2>&1
rc=$?
set -e
t3=$(date +%s)
if [ ! -s "$OUT/results.json" ]; then
    tail -n 30 "$OUT/runner.log"
    echo "bogo: the runner wrote no results (exit $rc); log in $OUT/runner.log" >&2
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi

# --- summary ------------------------------------------------------------------
names "$OUT/results.json" | sort > "$OUT/results.txt"

# The DisabledTests patterns, "pattern<TAB>reason" (config.json: one key per line).
awk '/"DisabledTests"/ { on = 1; next }
     on && /^ *}/ { on = 0 }
     on && match($0, /^ *"[^"]+": "/) {
         line = $0; sub(/^ *"/, "", line); pat = line; sub(/": ".*/, "", pat)
         why = line; sub(/^[^"]*": "/, "", why); sub(/",? *$/, "", why)
         print pat "\t" why
     }' "$HERE/config.json" > "$OUT/patterns.tsv"
# Each test the runner did not report must be disabled by a pattern (the runner's glob: '*').
: > "$OUT/disabled.txt"
: > "$OUT/vanished.txt"
while read -r t; do
    why=
    while IFS=$'\t' read -r pat reason; do
        # shellcheck disable=SC2053  # the pattern is a glob on purpose
        if [[ $t == $pat ]]; then why="$pat: $reason"; break; fi
    done < "$OUT/patterns.tsv"
    if [ -n "$why" ]; then
        printf '%s DISABLED\t%s\n' "$t" "$why" >> "$OUT/disabled.txt"
    else
        echo "$t VANISHED" >> "$OUT/vanished.txt"
    fi
done < <(awk '{print $1}' "$OUT/results.txt" | comm -23 "$OUT/all.txt" -)

# Why the shim answered 89: each skipped test once more, alone, with its own log.
: > "$OUT/skip-reasons.txt"
for t in $(awk '$2 == "SKIP" { print $1 }' "$OUT/results.txt"); do
    rm -f "$OUT/why.log"
    (cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$OUT/why.log" timeout 60 "$RUNNER" \
        -shim-path "$OUT/shim" -shim-config "$HERE/config.json" -test "$t" -num-workers 1 \
        -allow-unimplemented) > /dev/null 2>&1 || true
    printf '%s\t%s\n' "$t" "$(head -n1 "$OUT/why.log" 2>/dev/null || echo '(no reason logged)')" \
        >> "$OUT/skip-reasons.txt"
done

cut -f1 "$OUT/disabled.txt" | sort - "$OUT/results.txt" "$OUT/vanished.txt" > "$OUT/summary.txt"

# Family: the name up to its first '-' (QUIC-TLS13-* and QUIC-ECH-* by two parts).
awk '{
    n = $1; split(n, p, "-");
    f = p[1]; if (f == "QUIC") f = p[1] "-" p[2];
    fam[f] = 1;
    if ($2 == "PASS") pass[f]++; else if ($2 == "FAIL" || $2 == "VANISHED") fail[f]++; else skip[f]++;
} END {
    for (f in fam) printf "  %-48s %3d passed, %3d failed, %3d skipped\n", f, pass[f], fail[f], skip[f];
}' "$OUT/summary.txt" | sort

# The README's table: per family, then every skip with its reason.
{
    echo "| family | passed | failed | skipped | why skipped |"
    echo "|---|---|---|---|---|"
    awk -F'\t' 'FILENAME ~ /disabled/ { split($1, a, " "); why[a[1]] = "disabled: " $2; next }
                FILENAME ~ /skip-reasons/ { why[$1] = "unimplemented: " $2; next }
                {
        split($0, q, " "); n = q[1]; st = q[2]; split(n, p, "-");
        f = p[1]; if (f == "QUIC") f = p[1] "-" p[2];
        fam[f] = 1;
        if (st == "PASS") pass[f]++; else if (st == "FAIL" || st == "VANISHED") fail[f]++;
        else { skip[f]++; r[f, why[n]]++; if (!((f, why[n]) in seen)) { seen[f, why[n]] = 1; list[f] = list[f] SUBSEP why[n] } }
    } END {
        for (f in fam) {
            reasons = ""
            k = split(substr(list[f], 2), rs, SUBSEP)
            for (i = 1; i <= k; i++)
                reasons = reasons (i > 1 ? "<br>" : "") r[f, rs[i]] " × " rs[i]
            gsub(/\|/, "\\|", reasons)
            printf "| %s | %d | %d | %d | %s |\n", f, pass[f], fail[f], skip[f], reasons
        }
    }' "$OUT/disabled.txt" "$OUT/skip-reasons.txt" "$OUT/summary.txt" | sort
} > "$OUT/table.md"

failed=$(awk '$2 == "FAIL" || $2 == "VANISHED"' "$OUT/summary.txt" | wc -l)
passed=$(awk '$2 == "PASS"' "$OUT/summary.txt" | wc -l)
unimpl=$(awk '$2 == "SKIP"' "$OUT/summary.txt" | wc -l)
disabled=$(wc -l < "$OUT/disabled.txt")
{
    echo
    echo "$(wc -l < "$OUT/all.txt") QUIC-mode tests: **$passed passed, $failed failed, $((unimpl + disabled)) skipped**" \
        "($unimpl where the shim exits 89, $disabled disabled in config.json)."
} >> "$OUT/table.md"
if [ -n "${BOGO_UPDATE_README:-}" ]; then
    awk -v table="$OUT/table.md" '
        /<!-- bogo-table:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
        /<!-- bogo-table:end -->/ { skip = 0 }
        !skip' "$HERE/README.md" > "$OUT/README.md.new" && mv "$OUT/README.md.new" "$HERE/README.md"
fi
if [ -s "$OUT/unimplemented.log" ]; then
    echo "unimplemented (the shim's exit 89), by reason:"
    sort "$OUT/unimplemented.log" | uniq -c | sort -rn | sed 's/^ */  /'
fi
if [ "$failed" -gt 0 ]; then
    echo "failing tests (details in $OUT/runner.log):"
    awk '$2 == "FAIL" { print "  " $1 }' "$OUT/summary.txt"
    awk '$2 == "VANISHED" { print "  " $1 " (not run, and no DisabledTests pattern matches it)" }' \
        "$OUT/summary.txt"
fi
echo "runner build $((t1 - t0))s, tests $((t3 - t2))s; skipped = $unimpl unimplemented by the shim + $disabled disabled in config.json"
echo "$passed passed, $failed failed, $((unimpl + disabled)) skipped"
[ "$failed" -eq 0 ] && [ "$rc" -ne 124 ]
