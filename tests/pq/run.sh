#!/bin/bash
# tests/pq/run.sh BUILD_DIR CERTS_DIR [QTLS_PEER]: post-quantum hybrid key exchange over TCP on
# loopback, the peer under test (QTLS_PEER, by default BUILD_DIR/tests/tcp/qtls_peer:
# tests/tcp/tls_peer.c on libqtls) against two implementations that have the hybrids, in both
# roles:
#   ossl35  BUILD_DIR/tests/pq/ossl35_peer  the same tls_peer.c on OpenSSL 3.5 (Debian 13's
#                                           source, tests/pq/ossl35.sh)
#   go124   BUILD_DIR/tests/pq/go124_peer   tests/tcp/go_peer built with Go 1.24 (Debian 13's,
#                                           tests/pq/go124.sh): X25519MLKEM768 only
# make pq builds both and runs this. A case is named CLIENT_SERVER_CASE, as in tests/tcp/run.sh
# (qtls_ossl35_default: qtls's client against OpenSSL 3.5's server). The cases (groups lists in
# OpenSSL 3.5's spelling; README.md says more):
#   x25519mlkem768       both sides X25519MLKEM768 only                  group it, hrr=0
#   secp256r1mlkem768    both sides SecP256r1MLKEM768 only (not Go)     group it, hrr=0
#   secp384r1mlkem1024   both sides SecP384r1MLKEM1024 only (not Go)    group it, hrr=0
#   mlkem768 mlkem1024   both sides the pure ML-KEM group only (not Go) group it, hrr=0
#   default              neither side given groups                      X25519MLKEM768, hrr=0
#   fallback_x25519      client X25519MLKEM768:X25519, server X25519 only: X25519
#   fallback_two_shares  client *X25519MLKEM768:*X25519, server X25519 only: X25519, hrr=0
#                        (not Go's client: no such syntax, and it sends both shares anyway)
#   server_prefers_hybrid  client *X25519:*X25519MLKEM768 (X25519 first), server
#                        X25519MLKEM768/X25519 (two tuples: the hybrid preferred; Go's server:
#                        X25519MLKEM768:X25519): X25519MLKEM768. Go 1.24's client is given
#                        X25519:X25519MLKEM768, but crypto/tls keeps its own order of
#                        CurvePreferences (the hybrid first)
#   server_classical_first  server X25519:X25519MLKEM768, client default (shares for both,
#                        the hybrid first): OpenSSL 3.5's server takes the client's preference
#                        within a tuple, X25519MLKEM768; Go's keeps its own order, the same;
#                        qtls's takes the client's first share in a group of its own, as
#                        OpenSSL 3.0 does: X25519MLKEM768 too. hrr=0
# Whether fallback_x25519, fallback_two_shares and server_prefers_hybrid need a HelloRetryRequest depends on the key shares the client sends,
# which each implementation chooses its own way (key_shares_of below):
#   OpenSSL 3.5  the groups marked "*", or the first group alone when none is marked
#   qtls         the first group and, when that is post-quantum, the first classical group
#                after it; "*" is accepted and ignored (docs/limits.md "key shares")
#   Go 1.24      X25519MLKEM768 and X25519 whenever the hybrid is allowed
# so fallback_x25519 has hrr=1 from OpenSSL's client only, and server_prefers_hybrid hrr=1
# from qtls's only (its share is X25519's; the server asks for the hybrid).
# Every case moves 64 kB each way (echoed, checked byte by byte) and ends with close_notify both
# ways; both sides must agree on version, suite, group and hrr. Groups are compared by name:
# OpenSSL 3.5's SSL_get_negotiated_group has no NID for the hybrids, and tls_peer prints the
# codepoint (0x11ec) then, which is mapped here to its name.
#
# With ossl35_peer as the peer under test every case must pass: the harness check. A missing
# peer fails its cases and names what builds it. Output follows cmocka's format;
# PQ_CASES="qtls_ossl35_default ..." runs only those. Logs: BUILD_DIR/pq-logs/NAME.*.log.
set -uo pipefail
set -f # the groups lists (*X25519...) are words, never globs

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 BUILD_DIR CERTS_DIR [QTLS_PEER]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
CERTS=$(cd "$2" && pwd) || exit 2
PQ=$BUILD/tests/pq
QTLS=${3:-$BUILD/tests/tcp/qtls_peer}
case $QTLS in /*) ;; *) QTLS=$PWD/$QTLS ;; esac
LOGS=$BUILD/pq-logs
IO_TIMEOUT=10
PROC_TIMEOUT=40
SAN_PATTERN='ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|WARNING: ThreadSanitizer\|runtime error:'

# one run at a time per build directory (the logs and the servers' ports are per run)
exec 9>"$BUILD/.pq-run.lock"
flock -w 600 9 || { echo "$0: another run holds $BUILD/.pq-run.lock" >&2; exit 1; }
rm -rf "$LOGS"
mkdir -p "$LOGS"

# shellcheck source=../lib/tls_peers.sh
. "$(dirname "$0")/../lib/tls_peers.sh"

PEERS=${PQ_PEERS:-"ossl35 go124"}
CASES="x25519mlkem768 secp256r1mlkem768 secp384r1mlkem1024 mlkem768 mlkem1024 default
fallback_x25519 fallback_two_shares server_prefers_hybrid server_classical_first"

trap stop_servers EXIT

bin_of() { # KIND
    case $1 in
    qtls) echo "$QTLS" ;;
    ossl35) echo "$PQ/ossl35_peer" ;;
    go124) echo "$PQ/go124_peer" ;;
    esac
}
# What builds a missing binary.
build_hint() { # BIN
    case $1 in
    */ossl35_peer) echo "make pq builds it (tests/pq/ossl35.sh: OpenSSL 3.5 into build/ossl35; needs dpkg-dev xz-utils)" ;;
    */go124_peer) echo "make pq builds it (tests/pq/go124.sh: Go 1.24 into build/go124; needs dpkg)" ;;
    *) echo "make $1" ;;
    esac
}
is_go() { [ "$1" = go124 ]; }

UNDER_TEST_LIB=$("$QTLS" version 2>/dev/null | sed -n 's/^lib=\([^ ]*\).*/\1/p')

# Why a pair cannot be played (empty: it can).
na_reason() { # CLIENT_KIND SERVER_KIND CASE
    local k
    for k in "$1" "$2"; do
        is_go "$k" || continue
        case $3 in
        secp256r1mlkem768 | secp384r1mlkem1024 | mlkem768 | mlkem1024)
            echo "Go 1.24 crypto/tls has X25519MLKEM768 only"
            return
            ;;
        esac
    done
    if is_go "$1" && [ "$3" = fallback_two_shares ]; then
        echo "Go 1.24's client has no key share syntax (it sends both shares anyway: fallback_x25519)"
    fi
}

# ---- what each side is given --------------------------------------------------------------

groups_of() { # CASE ROLE KIND: the --groups value, empty for none
    local c=$1 role=$2 k=$3
    case $c in
    x25519mlkem768) echo X25519MLKEM768 ;;
    secp256r1mlkem768) echo SecP256r1MLKEM768 ;;
    secp384r1mlkem1024) echo SecP384r1MLKEM1024 ;;
    mlkem768) echo MLKEM768 ;;
    mlkem1024) echo MLKEM1024 ;;
    default) ;;
    fallback_x25519)
        [ "$role" = server ] && echo X25519 || echo X25519MLKEM768:X25519
        ;;
    fallback_two_shares)
        [ "$role" = server ] && echo X25519 || echo '*X25519MLKEM768:*X25519'
        ;;
    server_classical_first) [ "$role" = server ] && echo X25519:X25519MLKEM768 ;;
    server_prefers_hybrid)
        if [ "$role" = server ]; then
            is_go "$k" && echo X25519MLKEM768:X25519 || echo X25519MLKEM768/X25519
        else
            is_go "$k" && echo X25519:X25519MLKEM768 || echo '*X25519:*X25519MLKEM768'
        fi
        ;;
    esac
}

args_of() { # CASE ROLE KIND
    local g
    g=$(groups_of "$@")
    [ -n "$g" ] && echo "--groups $g"
    if [ "$2" = server ]; then echo "--echo"; else echo "--send 64k --expect-echo"; fi
}

# The client's key share policy (see the top): go, openssl35 or qtls. The peer under test is
# qtls's unless it is a stand-in (its version line says which library).
key_shares_of() { # CLIENT_KIND
    case $1 in
    go124) echo go ;;
    ossl35) echo openssl35 ;;
    qtls) case $UNDER_TEST_LIB in qtls-*) echo qtls ;; *) echo openssl35 ;; esac ;;
    esac
}

# The server's choice among the client's key shares: the client's first share in a group the
# server has, for all three (qtls as OpenSSL 3.0 and 3.5 within a tuple; Go's own fixed order
# gives the same here).
server_choice_of() { # SERVER_KIND
    echo client
}

# What must hold on both sides: "group=NAME hrr=N".
expect_of() { # CASE CLIENT_KIND SERVER_KIND
    local c=$1 ks
    ks=$(key_shares_of "$2")
    case $c in
    x25519mlkem768 | default) echo "group=X25519MLKEM768 hrr=0" ;;
    secp256r1mlkem768) echo "group=SecP256r1MLKEM768 hrr=0" ;;
    secp384r1mlkem1024) echo "group=SecP384r1MLKEM1024 hrr=0" ;;
    mlkem768) echo "group=MLKEM768 hrr=0" ;;
    mlkem1024) echo "group=MLKEM1024 hrr=0" ;;
    fallback_x25519) [ "$ks" = openssl35 ] && echo "group=X25519 hrr=1" || echo "group=X25519 hrr=0" ;;
    fallback_two_shares) echo "group=X25519 hrr=0" ;;
    server_classical_first)
        [ "$(server_choice_of "$3")" = qtls ] && echo "group=X25519 hrr=0" ||
            echo "group=X25519MLKEM768 hrr=0"
        ;;
    server_prefers_hybrid)
        [ "$ks" = qtls ] && echo "group=X25519MLKEM768 hrr=1" || echo "group=X25519MLKEM768 hrr=0"
        ;;
    esac
}

# A group as reported (a name in any case, or tls_peer's 0xNNNN for a group without a NID) to
# OpenSSL 3.5's name for it.
norm_group() {
    case $(echo "$1" | tr '[:upper:]' '[:lower:]') in
    0x11ec | x25519mlkem768) echo X25519MLKEM768 ;;
    0x11eb | secp256r1mlkem768) echo SecP256r1MLKEM768 ;;
    0x11ed | secp384r1mlkem1024) echo SecP384r1MLKEM1024 ;;
    0x0200 | mlkem512) echo MLKEM512 ;;
    0x0201 | mlkem768) echo MLKEM768 ;;
    0x0202 | mlkem1024) echo MLKEM1024 ;;
    0x001d | x25519) echo X25519 ;;
    0x0017 | p-256 | secp256r1 | prime256v1) echo P-256 ;;
    0x0018 | p-384 | secp384r1) echo P-384 ;;
    *) echo "$1" ;;
    esac
}

# ---- running a case -----------------------------------------------------------------------

WHY=""
CASE_LOGS=()




check_value() { # LOG KEY WANT LABEL
    local v
    v=$(field "$1" "conn 1" "$2")
    [ "$2" = group ] && v=$(norm_group "$v")
    if [ -z "$v" ]; then
        WHY="$WHY $4: no $2 in its report;"
    elif [ "$v" != "$3" ]; then
        WHY="$WHY $4: $2=$v, wanted $3;"
    fi
}

check_agree() { # CLOG SLOG
    local k a b
    for k in version suite group hrr; do
        a=$(field "$1" "conn 1" "$k")
        b=$(field "$2" "conn 1" "$k")
        if [ "$k" = group ]; then a=$(norm_group "$a"); b=$(norm_group "$b"); fi
        [ "$a" = "$b" ] || WHY="$WHY $k: the client says $a, the server $b;"
    done
    a=$(field "$1" "conn 1" bytes_out)
    b=$(field "$2" "conn 1" bytes_in)
    [ "$a" = "$b" ] || WHY="$WHY the client sent $a bytes, the server received $b;"
    a=$(field "$1" "conn 1" bytes_in)
    b=$(field "$2" "conn 1" bytes_out)
    [ "$a" = "$b" ] || WHY="$WHY the server sent $b bytes, the client received $a;"
}

REPORT=""
run_case() { # CLIENT_KIND SERVER_KIND CASE
    local ck=$1 sk=$2 c=$3 name=$1_$2_$3 cbin sbin crc src b kv l qlog
    local clog=$LOGS/$name.client.log slog=$LOGS/$name.server.log
    WHY=""
    REPORT=""
    CASE_LOGS=()
    cbin=$(bin_of "$ck")
    sbin=$(bin_of "$sk")
    for b in "$cbin" "$sbin"; do
        [ -x "$b" ] || WHY="$WHY $b is not built: $(build_hint "$b");"
    done
    [ -z "$UNDER_TEST_LIB" ] && WHY="$WHY $QTLS version gave no lib= line;"
    [ -n "$WHY" ] && return 1

    # shellcheck disable=SC2046 # options are words
    start_server "$sbin" "$slog" $(args_of "$c" server "$sk") || { stop_servers; return 1; }
    CASE_LOGS+=("$clog")
    # shellcheck disable=SC2046
    timeout -k 2 "$PROC_TIMEOUT" "$cbin" client --connect "127.0.0.1:$PORT" --ca "$CERTS/ca.pem" \
        --timeout "$IO_TIMEOUT" $(args_of "$c" client "$ck") >"$clog" 2>&1
    crc=$?
    local grace=5
    [ "$crc" = 0 ] || grace=1
    wait_server "${SERVER_PIDS[0]}" "$grace"
    src=$RC
    SERVER_PIDS=()

    [ "$crc" = 124 ] || [ "$crc" = 137 ] && WHY="$WHY the client timed out (${PROC_TIMEOUT} s);"
    [ "$src" = killed ] && WHY="$WHY the server had not ended $grace s after the client: killed;"
    [ "$ck" = qtls ] && qlog=$clog || qlog=$slog
    grep -q "$SAN_PATTERN" "$qlog" 2>/dev/null && WHY="$WHY sanitizer report in $(basename "$qlog");"
    [ "$crc" = 0 ] && grep -q '^result ok ' "$clog" ||
        WHY="$WHY client: exit $crc, $(grep '^result' "$clog" | cut -c1-300);"
    [ "$src" = 0 ] && grep -q '^result ok ' "$slog" ||
        WHY="$WHY server: exit $src, $(grep '^result' "$slog" | cut -c1-300);"
    [ -n "$WHY" ] && return 1
    check_value "$clog" version TLSv1.3 client
    check_value "$slog" version TLSv1.3 server
    check_value "$clog" close ok client
    check_value "$slog" close ok server
    check_agree "$clog" "$slog"
    for kv in $(expect_of "$c" "$ck" "$sk"); do
        check_value "$clog" "${kv%%=*}" "${kv#*=}" "client ($ck)"
        check_value "$slog" "${kv%%=*}" "${kv#*=}" "server ($sk)"
    done
    REPORT="group=$(norm_group "$(field "$clog" "conn 1" group)") hrr=$(field "$clog" "conn 1" hrr)"
    [ -z "$WHY" ]
}

show_log() {
    echo "---- $1 (last 15 lines)"
    tail -n 15 "$1" 2>/dev/null | cut -c1-400
}

wanted() {
    [ -z "${PQ_CASES:-}" ] && return 0
    case " $PQ_CASES " in *" $1 "*) return 0 ;; esac
    return 1
}

t0=$(date +%s)
npass=0
failed=()
na=()
libs=""
for peer in $PEERS; do
    libs="$libs $peer=$("$(bin_of "$peer")" version 2>/dev/null | sed -n 's/^lib=\([^ ]*\).*/\1/p')"
done
echo "[==========] Running post-quantum hybrid TLS tests: $QTLS (${UNDER_TEST_LIB:-?}) against$libs (logs: $LOGS)."
for peer in $PEERS; do
    for c in $CASES; do
        for pair in "qtls $peer" "$peer qtls"; do
            # shellcheck disable=SC2086
            set -- $pair
            name=$1_$2_$c
            wanted "$name" || continue
            why=$(na_reason "$1" "$2" "$c")
            if [ -n "$why" ]; then
                echo "[  N/A     ] $name: $why"
                na+=("$name: $why")
                continue
            fi
            echo "[ RUN      ] $name"
            t1=$(date +%s%N)
            if run_case "$1" "$2" "$c"; then
                npass=$((npass + 1))
                echo "[       OK ] $name ($((($(date +%s%N) - t1) / 1000000)) ms, $REPORT)"
            else
                echo "$name ($((($(date +%s%N) - t1) / 1000000)) ms):$WHY"
                for l in "${CASE_LOGS[@]}"; do show_log "$l"; done
                failed+=("$name")
                echo "[  FAILED  ] $name"
            fi
        done
    done
done

echo "[==========] $((npass + ${#failed[@]})) test(s) run in $(($(date +%s) - t0)) s," \
    "${#na[@]} pair(s) the peer cannot play."
echo "[  PASSED  ] $npass test(s)."
if [ ${#na[@]} -gt 0 ]; then
    echo "[  N/A     ] ${#na[@]} pair(s) not applicable, the peer lacks the feature:"
    for s in "${na[@]}"; do echo "[  N/A     ] $s"; done
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "[  FAILED  ] ${#failed[@]} test(s), listed below:"
    for f in "${failed[@]}"; do echo "[  FAILED  ] $f"; done
    exit 1
fi
[ "$npass" -gt 0 ]
