#!/usr/bin/env bash
# Runs BoringSSL's BoGo runner against the qtls shim in two modes: QUIC (the runner's mock QUIC
# transport) and TCP (TLS 1.3 records over the socket the shim connects back on).
#
#   tests/bogo/run.sh            (what `make bogo` runs)
#
# 1. builds the runner from Debian's packages (build-runner.sh, cached);
# 2. builds the shim on build/libqtls.a (QTLS_BOGO_LIB overrides the library);
# 3. lists each mode's tests with a stand-in shim: the QUIC-mode tests are those the runner
#    starts with -quic, the TCP-mode ones those with neither -quic nor -dtls (disabled ones
#    included);
# 4. runs each mode's tests with 2 workers, config.json's ErrorMap and DisabledTests, and
#    -allow-unimplemented (the shim exits 89 for what qtls does not do). A test named in
#    config.json's TestErrorMap runs in a run of its own whose ErrorMap has those entries too
#    (the per-test error map of newer runners, which this 2022 runner lacks);
#    In TCP mode the config gets "HalfRTTTickets": 0 (an OpenSSL server's tickets come after
#    the client's Finished);
# 5. matches each test missing from a mode's results against the config.json DisabledTests
#    pattern that disables it (a test that disappears without one counts as failed), and asks
#    the shim once more why it answered 89 to each skipped one (runs of one worker, whose
#    UNIMPLEMENTED lines come in the order the shim logged its reasons);
# 6. prints, per mode, counts per family, the failing tests and the line
#    "N passed, N failed, N skipped" (skipped = unimplemented + disabled), then the same line for
#    both modes together, last; and writes each mode's per-family table with every skip's reason
#    to build/bogo/table-quic.md and table-tcp.md (BOGO_UPDATE_README=1: also into
#    tests/bogo/README.md, between its bogo-table and bogo-tcp-table markers).
#
# Environment: BOGO_MODE (quic, tcp or "quic tcp", the default), BOGO_TEST (runner -test
# pattern, default *QUIC* for QUIC mode and * for TCP mode), BOGO_WORKERS (default 2),
# BOGO_TIMEOUT (seconds for each mode's runs, default 900), BOGO_CFLAGS (for the shim, default
# -O1 -g; make passes its own), QTLS_BOGO_LIB (the qtls archive). Exits 1 if any test failed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/bogo
OUT=$ROOT/build/bogo
LIB=${QTLS_BOGO_LIB:-$ROOT/build/libqtls.a}
MODES=${BOGO_MODE:-quic tcp}
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

runner() { (cd "$RUNNER_DIR" && "$RUNNER" "$@"); }

# --- config.json, read line by line (one key per line) ------------------------
# The DisabledTests patterns, "pattern<TAB>reason".
awk '/"DisabledTests"/ { on = 1; next }
     on && /^ *}/ { on = 0 }
     on && match($0, /^ *"[^"]+": "/) {
         line = $0; sub(/^ *"/, "", line); pat = line; sub(/": ".*/, "", pat)
         why = line; sub(/^[^"]*": "/, "", why); sub(/",? *$/, "", why)
         print pat "\t" why
     }' "$HERE/config.json" > "$OUT/patterns.tsv"
# TestErrorMap: "test<TAB>{ the test's own ErrorMap entries }", one test a line.
awk '/"TestErrorMap"/ { on = 1; next }
     on && /^ *}/ { on = 0 }
     on && match($0, /^ *"[^"]+": \{.*\}/) {
         line = $0; sub(/^ *"/, "", line); t = line; sub(/": \{.*/, "", t)
         m = line; sub(/^[^{]*\{/, "", m); sub(/\},? *$/, "", m)
         print t "\t" m
     }' "$HERE/config.json" > "$OUT/test-errors.tsv"
# The config a group of TestErrorMap tests runs with: config.json with the group's entries added
# at the end of its ErrorMap (Go's JSON decoder keeps a map key's last value).
group_config() { # $1: the mode's config, $2: the entries, $3: the file to write
    awk -v add="$2" '/"ErrorMap"/ { on = 1 }
         on && /^    }/ { print "        , " add; on = 0 }
         { print }' "$1" > "$3"
}
# Each mode's config. TCP: an OpenSSL-style server sends its tickets after the client's
# Finished, so the runner is to expect none before half-RTT data (BoringSSL sends two there,
# and so does qtls over QUIC: the runner's default).
cp "$HERE/config.json" "$OUT/config-quic.json"
awk 'NR == 1 && /^\{/ { print; print "    \"HalfRTTTickets\": 0,"; next } { print }' \
    "$HERE/config.json" > "$OUT/config-tcp.json"

# --- the listing passes: which tests run in each mode (disabled ones included) --
# A stand-in shim answers 89 to the mode's tests and fails the others, so a mode's tests are
# the skipped ones.
list_mode() { # $1: mode, $2: the -test pattern
    cat > "$OUT/list-shim.sh" <<SH
#!/bin/sh
quic=0; dtls=0
for a in "\$@"; do
    [ "\$a" = "-is-handshaker-supported" ] && { echo No; exit 0; }
    [ "\$a" = "-quic" ] && quic=1
    [ "\$a" = "-dtls" ] && dtls=1
done
case $1 in
quic) [ \$quic = 1 ] && exit 89 ;;
tcp) [ \$quic = 0 ] && [ \$dtls = 0 ] && exit 89 ;;
esac
exit 1
SH
    chmod +x "$OUT/list-shim.sh"
    runner -shim-path "$OUT/list-shim.sh" -test "$2" -num-workers "$WORKERS" \
        -allow-unimplemented -include-disabled -json-output "$OUT/list-$1.json" >/dev/null 2>&1 || true
    names "$OUT/list-$1.json" | awk '$2 == "SKIP" { print $1 }' | sort > "$OUT/all-$1.txt"
    names "$OUT/list-$1.json" | awk '$2 != "SKIP" { print $1 }' | sort > "$OUT/other-$1.txt"
}

# --- one mode -------------------------------------------------------------------
# Runs the mode's tests: the TestErrorMap groups, then the rest; merges their results into
# $OUT/results-$mode.txt. Sets rc (124 if a run timed out).
run_mode() {
    local mode=$1 main=() tests
    rm -f "$OUT"/results-"$mode"*.json "$OUT/unimplemented-$mode.log" "$OUT/runner-$mode.log"
    # The mode's TestErrorMap tests, grouped by their entries.
    awk -F'\t' 'NR == FNR { want[$1] = 1; next } ($1 in want)' "$OUT/all-$mode.txt" \
        "$OUT/test-errors.tsv" > "$OUT/test-errors-$mode.tsv"
    local g=0 entries
    while IFS= read -r entries; do
        g=$((g + 1))
        group_config "$OUT/config-$mode.json" "$entries" "$OUT/config-$mode-$g.json"
        tests=$(awk -F'\t' -v e="$entries" '$2 == e { print $1 }' "$OUT/test-errors-$mode.tsv" | paste -sd';')
        set +e
        (cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$OUT/unimplemented-$mode.log" \
            timeout "$TIMEOUT" "$RUNNER" -shim-path "$OUT/shim" -shim-config "$OUT/config-$mode-$g.json" \
            -test "$tests" -num-workers "$WORKERS" -allow-unimplemented \
            -json-output "$OUT/results-$mode-$g.json" -pipe) >> "$OUT/runner-$mode.log" 2>&1
        set -e
    done < <(cut -f2 "$OUT/test-errors-$mode.tsv" | sort -u)
    # The rest. TCP mode's list is too long for one argument: every test of the pattern but the
    # other modes' (the DTLS ones, which reach the shim, answer 89 and are left out below).
    if [ "$mode" = quic ]; then
        main=(-test "$(cut -f1 "$OUT/test-errors-$mode.tsv" | sort | comm -13 - "$OUT/all-$mode.txt" | paste -sd';')")
    else
        main=(-test "$PATTERN_TCP" -skip "$(cut -f1 "$OUT/test-errors-$mode.tsv" | cat - "$OUT/other-$mode.txt" | paste -sd';')")
    fi
    set +e
    (cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$OUT/unimplemented-$mode.log" \
        timeout "$TIMEOUT" "$RUNNER" -shim-path "$OUT/shim" -shim-config "$OUT/config-$mode.json" \
        "${main[@]}" -num-workers "$WORKERS" -allow-unimplemented \
        -json-output "$OUT/results-$mode.json" -pipe) >> "$OUT/runner-$mode.log" 2>&1
    rc=$?
    set -e
    : > "$OUT/results-$mode.txt"
    for f in "$OUT"/results-"$mode".json "$OUT"/results-"$mode"-*.json; do
        [ -s "$f" ] && names "$f" >> "$OUT/results-$mode.txt"
    done
    # Only the mode's own tests (TCP mode's main run reaches the DTLS ones too).
    sort -u "$OUT/results-$mode.txt" | awk 'NR == FNR { want[$1] = 1; next } ($1 in want)' \
        "$OUT/all-$mode.txt" - > "$OUT/results-$mode.sorted" && mv "$OUT/results-$mode.sorted" "$OUT/results-$mode.txt"
}

# Family: the name up to its first '-' (QUIC-TLS13-* and QUIC-ECH-* by two parts).
family_awk='function family(n,   p) { split(n, p, "-"); return p[1] == "QUIC" ? p[1] "-" p[2] : p[1] }'

# The reasons for the tests in $2 (one a line), into reasons-<n> beside it: "test<TAB>reason".
why_chunk() {
    local mode=$1 list=$2 part=0 names
    local out=${list/list-/reasons-}
    : > "$out"
    [ -s "$list" ] || return 0
    # Runs of at most ~100 KB of names (one argument), each in order.
    split -C 100000 "$list" "$list.part-"
    for names in "$list".part-*; do
        part=$((part + 1))
        rm -f "$names.log"
        (cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$names.log" timeout "$TIMEOUT" "$RUNNER" \
            -shim-path "$OUT/shim" -shim-config "$OUT/config-$mode.json" \
            -test "$(paste -sd';' "$names")" -num-workers 1 -allow-unimplemented -pipe) \
            > "$names.out" 2>&1 || true
        sed -n 's/^UNIMPLEMENTED (\(.*\))$/\1/p' "$names.out" > "$names.order"
        touch "$names.log"
        if [ "$(wc -l < "$names.order")" -eq "$(wc -l < "$names.log")" ]; then
            paste "$names.order" "$names.log" >> "$out"
            continue
        fi
        local t
        while read -r t; do
            rm -f "$names.one"
            (cd "$RUNNER_DIR" && QTLS_BOGO_UNIMPLEMENTED_LOG="$names.one" timeout 60 "$RUNNER" \
                -shim-path "$OUT/shim" -shim-config "$OUT/config-$mode.json" -test "$t" \
                -num-workers 1 -allow-unimplemented) > /dev/null 2>&1 || true
            printf '%s\t%s\n' "$t" "$(head -n1 "$names.one" 2>/dev/null || echo '(no reason logged)')" >> "$out"
        done < "$names"
    done
}

# Counts, the skips' reasons, the table. Sets passed, failed, unimpl, disabled.
summarize_mode() {
    local mode=$1 label=$2
    # Each test the runner did not report must be disabled by a pattern (the runner's glob: '*').
    : > "$OUT/disabled-$mode.txt"
    : > "$OUT/vanished-$mode.txt"
    local t why pat reason
    while read -r t; do
        why=
        while IFS=$'\t' read -r pat reason; do
            # shellcheck disable=SC2053  # the pattern is a glob on purpose
            if [[ $t == $pat ]]; then why="$pat: $reason"; break; fi
        done < "$OUT/patterns.tsv"
        if [ -n "$why" ]; then
            printf '%s DISABLED\t%s\n' "$t" "$why" >> "$OUT/disabled-$mode.txt"
        else
            echo "$t VANISHED" >> "$OUT/vanished-$mode.txt"
        fi
    done < <(awk '{print $1}' "$OUT/results-$mode.txt" | comm -23 "$OUT/all-$mode.txt" -)

    # Why the shim answered 89: the skipped tests once more, in $WORKERS runs of one worker
    # each. With one worker the runner's UNIMPLEMENTED lines come in the order the shims logged
    # their reasons; a run whose counts differ falls back to one runner per test.
    awk '$2 == "SKIP" { print $1 }' "$OUT/results-$mode.txt" > "$OUT/skipped-$mode.txt"
    rm -rf "$OUT/why-$mode"
    mkdir -p "$OUT/why-$mode"
    local w
    for ((w = 0; w < WORKERS; w++)); do
        awk -v w="$w" -v n="$WORKERS" '(NR - 1) % n == w' "$OUT/skipped-$mode.txt" > "$OUT/why-$mode/list-$w"
        why_chunk "$mode" "$OUT/why-$mode/list-$w" &
    done
    wait
    cat "$OUT"/why-"$mode"/reasons-* 2>/dev/null | sort > "$OUT/skip-reasons-$mode.txt" || true

    cut -f1 "$OUT/disabled-$mode.txt" | sort - "$OUT/results-$mode.txt" "$OUT/vanished-$mode.txt" \
        > "$OUT/summary-$mode.txt"

    awk "$family_awk"'{
        f = family($1); fam[f] = 1;
        if ($2 == "PASS") pass[f]++; else if ($2 == "FAIL" || $2 == "VANISHED") fail[f]++; else skip[f]++;
    } END {
        for (f in fam) printf "  %-48s %3d passed, %3d failed, %3d skipped\n", f, pass[f], fail[f], skip[f];
    }' "$OUT/summary-$mode.txt" | sort

    # The README's table: per family, then every skip with its reason.
    {
        echo "| family | passed | failed | skipped | why skipped |"
        echo "|---|---|---|---|---|"
        awk -F'\t' "$family_awk"'
            FILENAME ~ /disabled/ { split($1, a, " "); why[a[1]] = "disabled: " $2; next }
            FILENAME ~ /skip-reasons/ { why[$1] = "unimplemented: " $2; next }
            {
            split($0, q, " "); n = q[1]; st = q[2]; f = family(n);
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
        }' "$OUT/disabled-$mode.txt" "$OUT/skip-reasons-$mode.txt" "$OUT/summary-$mode.txt" | sort
    } > "$OUT/table-$mode.md"

    failed=$(awk '$2 == "FAIL" || $2 == "VANISHED"' "$OUT/summary-$mode.txt" | wc -l)
    passed=$(awk '$2 == "PASS"' "$OUT/summary-$mode.txt" | wc -l)
    unimpl=$(awk '$2 == "SKIP"' "$OUT/summary-$mode.txt" | wc -l)
    disabled=$(wc -l < "$OUT/disabled-$mode.txt")
    {
        echo
        echo "$(wc -l < "$OUT/all-$mode.txt") $label tests: **$passed passed, $failed failed, $((unimpl + disabled)) skipped**" \
            "($unimpl where the shim exits 89, $disabled disabled in config.json)."
    } >> "$OUT/table-$mode.md"
    if [ -s "$OUT/unimplemented-$mode.log" ]; then
        echo "unimplemented (the shim's exit 89), by reason:"
        sort "$OUT/unimplemented-$mode.log" | uniq -c | sort -rn | sed 's/^ */  /'
    fi
    if [ "$failed" -gt 0 ]; then
        echo "failing tests (details in $OUT/runner-$mode.log):"
        awk '$2 == "FAIL" { print "  " $1 }' "$OUT/summary-$mode.txt"
        awk '$2 == "VANISHED" { print "  " $1 " (not run, and no DisabledTests pattern matches it)" }' \
            "$OUT/summary-$mode.txt"
    fi
}

update_readme() { # $1: marker name, $2: table
    awk -v table="$2" -v begin="<!-- $1:begin -->" -v end="<!-- $1:end -->" '
        $0 == begin { print; while ((getline l < table) > 0) print l; skip = 1; next }
        $0 == end { skip = 0 }
        !skip' "$HERE/README.md" > "$OUT/README.md.new" && mv "$OUT/README.md.new" "$HERE/README.md"
}

PATTERN_TCP=${BOGO_TEST:-*}
total_pass=0 total_fail=0 total_skip=0 status=0
for mode in $MODES; do
    case $mode in
    quic) label=QUIC-mode; pattern=${BOGO_TEST:-*QUIC*}; marker=bogo-table ;;
    tcp) label=TCP-mode; pattern=$PATTERN_TCP; marker=bogo-tcp-table ;;
    *) echo "bogo: unknown mode '$mode' (BOGO_MODE: quic, tcp)" >&2; exit 1 ;;
    esac
    echo "== $label tests =="
    list_mode "$mode" "$pattern"
    if [ ! -s "$OUT/all-$mode.txt" ]; then
        echo "bogo: no $label test matches '$pattern'" >&2
        status=1
        continue
    fi
    t2=$(date +%s)
    run_mode "$mode"
    t3=$(date +%s)
    if [ ! -s "$OUT/results-$mode.txt" ]; then
        tail -n 30 "$OUT/runner-$mode.log"
        echo "bogo: the runner wrote no results (exit $rc); log in $OUT/runner-$mode.log" >&2
        echo "0 passed, 1 failed, 0 skipped"
        total_fail=$((total_fail + 1))
        status=1
        continue
    fi
    summarize_mode "$mode" "$label"
    [ -n "${BOGO_UPDATE_README:-}" ] && update_readme "$marker" "$OUT/table-$mode.md"
    echo "runner build $((t1 - t0))s, tests $((t3 - t2))s; skipped = $unimpl unimplemented by the shim + $disabled disabled in config.json"
    echo "$passed passed, $failed failed, $((unimpl + disabled)) skipped"
    total_pass=$((total_pass + passed))
    total_fail=$((total_fail + failed))
    total_skip=$((total_skip + unimpl + disabled))
    [ "$failed" -eq 0 ] && [ "$rc" -ne 124 ] || status=1
done
echo "== total, $MODES: $(( $(date +%s) - t0 ))s =="
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
