#!/bin/bash
# tests/pq/quic/run.sh BUILD_DIR CERTS_DIR: post-quantum hybrid key exchange over QUIC's TLS
# interface. Three programs, one TLS each, speak frame.h's records (what a QUIC stack carries in
# CRYPTO frames, per encryption level) over two FIFOs:
#   qtls    BUILD_DIR/tests/pq/quic/qtls_side    qtls, quictls API (SSL_QUIC_METHOD)
#   ossl35  BUILD_DIR/tests/pq/quic/ossl35_side  OpenSSL 3.5's libssl, its SSL_set_quic_tls_cbs
#   go124   BUILD_DIR/tests/pq/quic/go_side      Go 1.24's crypto/tls QUICConn
# make pq builds them and runs this. A case is named CLIENT_SERVER_CASE (qtls_ossl35_default:
# qtls's client, OpenSSL 3.5's server):
#   x25519mlkem768       both sides X25519MLKEM768 only              X25519MLKEM768, hrr=0
#   secp256r1mlkem768    both sides SecP256r1MLKEM768 only (not Go)  SecP256r1MLKEM768, hrr=0
#   default              neither side given groups                   X25519MLKEM768, hrr=0
#   client_default_server_x25519  the client's default, the server X25519 only: X25519, hrr=0
#                        (each client's default sends an X25519 key share beside the hybrid's)
#   hrr_to_hybrid        client X25519:X25519MLKEM768, server X25519MLKEM768 only:
#                        X25519MLKEM768; hrr=1 from qtls's and OpenSSL 3.5's clients (their one
#                        key share is X25519's: the second ClientHello carries the hybrid's),
#                        hrr=0 from Go's (it sends both shares whenever the hybrid is allowed)
# each in both roles between qtls and each peer; then the harness itself, without qtls:
# OpenSSL 3.5 against itself, Go against itself and the two against each other in
# x25519mlkem768. Every case must see, on both sides: exit 0 and a "result ok" line; the same
# suite and the same SHA-256 of the handshake and 1-RTT traffic secrets of both directions
# (and the DIGEST record the peer sent matching its own: peer_digest=match); the case's group
# and hrr, read off the ServerHello on the wire by both (wire_group), and from the library
# (group: SSL_get0_group_name; Go 1.24 has no getter and says n/a, its group is proven by
# being configured alone, and by the other side's report); ALPN h3; each side's transport
# parameters received by the other; and the client must have received application-level
# handshake bytes (the server's session tickets, through SSL_process_quic_post_handshake,
# SSL_read or HandleData). A missing program fails its cases and names what builds it.
# PQ_QUIC_CASES="qtls_ossl35_default ..." runs only those. Logs: BUILD_DIR/pq-quic-logs/.
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR CERTS_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
CERTS=$(cd "$2" && pwd) || exit 2
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$BUILD/tests/pq/quic
LOGS=$BUILD/pq-quic-logs
TIMEOUT=10
PROC_TIMEOUT=30
SAN_PATTERN='ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|WARNING: ThreadSanitizer\|runtime error:'

exec 9>"$BUILD/.pq-quic-run.lock"
flock -w 600 9 || { echo "$0: another run holds $BUILD/.pq-quic-run.lock" >&2; exit 1; }
rm -rf "$LOGS"
mkdir -p "$LOGS"
# shellcheck source-path=SCRIPTDIR source=../../lib/results.sh
. "$ROOT/tests/lib/results.sh"

# CLIENT SERVER CASE
PAIRS="
qtls ossl35 x25519mlkem768
ossl35 qtls x25519mlkem768
qtls ossl35 secp256r1mlkem768
ossl35 qtls secp256r1mlkem768
qtls ossl35 default
ossl35 qtls default
qtls ossl35 client_default_server_x25519
ossl35 qtls client_default_server_x25519
qtls ossl35 hrr_to_hybrid
ossl35 qtls hrr_to_hybrid
qtls go124 x25519mlkem768
go124 qtls x25519mlkem768
qtls go124 default
go124 qtls default
qtls go124 client_default_server_x25519
go124 qtls client_default_server_x25519
qtls go124 hrr_to_hybrid
go124 qtls hrr_to_hybrid
ossl35 ossl35 x25519mlkem768
go124 go124 x25519mlkem768
ossl35 go124 x25519mlkem768
go124 ossl35 x25519mlkem768
"

bin_of() { # KIND
    case $1 in
    qtls) echo "$BIN/qtls_side" ;;
    ossl35) echo "$BIN/ossl35_side" ;;
    go124) echo "$BIN/go_side" ;;
    esac
}
build_hint() { # KIND
    case $1 in
    qtls) echo "make pq builds it (tests/pq/quic/qtls_side.c on libqtls.a)" ;;
    ossl35) echo "make pq builds it (tests/pq/ossl35.sh: OpenSSL 3.5 into build/ossl35; needs dpkg-dev xz-utils)" ;;
    go124) echo "make pq builds it (tests/pq/go124.sh: Go 1.24 into build/go124; needs dpkg)" ;;
    esac
}

groups_of() { # CASE ROLE
    case $1 in
    x25519mlkem768) echo X25519MLKEM768 ;;
    secp256r1mlkem768) echo SecP256r1MLKEM768 ;;
    default) ;;
    client_default_server_x25519) [ "$2" = server ] && echo X25519 ;;
    hrr_to_hybrid) [ "$2" = server ] && echo X25519MLKEM768 || echo X25519:X25519MLKEM768 ;;
    esac
}

expect_of() { # CASE CLIENT_KIND: "GROUP HRR"
    case $1 in
    hrr_to_hybrid) [ "$2" = go124 ] && echo "X25519MLKEM768 0" || echo "X25519MLKEM768 1" ;;
    x25519mlkem768 | default) echo "X25519MLKEM768 0" ;;
    secp256r1mlkem768) echo "SecP256r1MLKEM768 0" ;;
    client_default_server_x25519) echo "X25519 0" ;;
    esac
}

norm_group() {
    case $(echo "$1" | tr '[:upper:]' '[:lower:]') in
    0x11ec | x25519mlkem768) echo X25519MLKEM768 ;;
    0x11eb | secp256r1mlkem768) echo SecP256r1MLKEM768 ;;
    0x11ed | secp384r1mlkem1024) echo SecP384r1MLKEM1024 ;;
    0x0201 | mlkem768) echo MLKEM768 ;;
    0x0202 | mlkem1024) echo MLKEM1024 ;;
    0x001d | x25519) echo X25519 ;;
    0x0017 | p-256 | secp256r1 | prime256v1) echo P-256 ;;
    0x0018 | p-384 | secp384r1) echo P-384 ;;
    *) echo "$1" ;;
    esac
}

field() { # LOG KEY
    sed -n "s/^result ok .* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1
}

WHY=""
run_case() { # CLIENT SERVER CASE
    local ck=$1 sk=$2 c=$3 name=$1_$2_$3 cbin sbin g k spid crc src a b want_group want_hrr
    local clog=$LOGS/$name.client.log slog=$LOGS/$name.server.log
    local cerr=$LOGS/$name.client.stderr slerr=$LOGS/$name.server.stderr
    local c2s=$LOGS/$name.c2s s2c=$LOGS/$name.s2c
    local cargs=() sargs=()
    WHY=""
    cbin=$(bin_of "$ck")
    sbin=$(bin_of "$sk")
    for k in "$ck" "$sk"; do
        [ -x "$(bin_of "$k")" ] || { WHY="$WHY $(bin_of "$k") is not built: $(build_hint "$k");"; }
    done
    [ -n "$WHY" ] && return 1
    g=$(groups_of "$c" client)
    [ -n "$g" ] && cargs=(--groups "$g")
    g=$(groups_of "$c" server)
    [ -n "$g" ] && sargs=(--groups "$g")
    rm -f "$c2s" "$s2c"
    mkfifo "$c2s" "$s2c" || { WHY=" mkfifo failed;"; return 1; }

    timeout -k 2 "$PROC_TIMEOUT" "$sbin" server --in "$c2s" --out "$s2c" \
        --cert "$CERTS/ecdsa256.pem" --key "$CERTS/ecdsa256.key" --timeout "$TIMEOUT" \
        "${sargs[@]}" >"$slog" 2>"$slerr" &
    spid=$!
    timeout -k 2 "$PROC_TIMEOUT" "$cbin" client --in "$s2c" --out "$c2s" --ca "$CERTS/ca.pem" \
        --timeout "$TIMEOUT" "${cargs[@]}" >"$clog" 2>"$cerr" &
    local cpid=$!
    # Once one side has ended, the other gets 5 s; then an open() it may still be blocked in
    # (its peer died before opening the FIFOs) is satisfied here, so that it fails at once.
    while kill -0 "$spid" 2>/dev/null && kill -0 "$cpid" 2>/dev/null; do sleep 0.02; done
    for _ in $(seq 250); do
        kill -0 "$spid" 2>/dev/null || kill -0 "$cpid" 2>/dev/null || break
        sleep 0.02
    done
    if kill -0 "$spid" 2>/dev/null || kill -0 "$cpid" 2>/dev/null; then
        WHY="$WHY one side had not ended 5 s after the other;"
        (exec 3<>"$c2s" 4<>"$s2c" && sleep 0.2) 2>/dev/null
    fi
    wait "$cpid"
    crc=$?
    wait "$spid"
    src=$?
    rm -f "$c2s" "$s2c"

    [ "$crc" = 124 ] || [ "$crc" = 137 ] && WHY="$WHY the client timed out (${PROC_TIMEOUT} s);"
    [ "$src" = 124 ] || [ "$src" = 137 ] && WHY="$WHY the server timed out (${PROC_TIMEOUT} s);"
    for l in "$clog" "$slog" "$cerr" "$slerr"; do
        grep -q "$SAN_PATTERN" "$l" 2>/dev/null && WHY="$WHY sanitizer report in $(basename "$l");"
    done
    [ "$crc" = 0 ] && grep -q '^result ok ' "$clog" ||
        WHY="$WHY client ($ck): exit $crc, $(grep '^result' "$clog" | cut -c1-300);"
    [ "$src" = 0 ] && grep -q '^result ok ' "$slog" ||
        WHY="$WHY server ($sk): exit $src, $(grep '^result' "$slog" | cut -c1-300);"
    [ -n "$WHY" ] && return 1

    read -r want_group want_hrr <<<"$(expect_of "$c" "$ck")"
    for side in "client $ck $clog" "server $sk $slog"; do
        # shellcheck disable=SC2086
        set -- $side
        a=$(norm_group "$(field "$3" wire_group)")
        [ "$a" = "$want_group" ] || WHY="$WHY $1 ($2): wire_group=$a, wanted $want_group;"
        a=$(field "$3" hrr)
        [ "$a" = "$want_hrr" ] || WHY="$WHY $1 ($2): hrr=$a, wanted $want_hrr;"
        a=$(field "$3" group)
        if [ "$2" = go124 ]; then
            [ "$a" = n/a ] || WHY="$WHY $1 ($2): group=$a, Go 1.24 has no getter;"
        else
            a=$(norm_group "$a")
            [ "$a" = "$want_group" ] || WHY="$WHY $1 ($2): group=$a, wanted $want_group;"
        fi
        a=$(field "$3" alpn)
        [ "$a" = h3 ] || WHY="$WHY $1 ($2): alpn=$a, wanted h3;"
        a=$(field "$3" peer_digest)
        [ "$a" = match ] || WHY="$WHY $1 ($2): peer_digest=$a (its 1-RTT secrets' digest against the peer's);"
    done
    for k in suite c_hs s_hs c_ap s_ap; do
        a=$(field "$clog" "$k")
        b=$(field "$slog" "$k")
        if [ -z "$a" ] || [ "$a" = none ]; then
            WHY="$WHY client: no $k;"
        elif [ "$a" != "$b" ]; then
            WHY="$WHY $k: the client says $a, the server $b;"
        fi
    done
    a=$(field "$clog" peer_tp)
    b=$(field "$slog" tp)
    [ "$a" = "$b" ] || WHY="$WHY transport parameters: the server sent $b, the client got $a;"
    a=$(field "$slog" peer_tp)
    b=$(field "$clog" tp)
    [ "$a" = "$b" ] || WHY="$WHY transport parameters: the client sent $b, the server got $a;"
    a=$(field "$clog" app_in)
    [ "${a:-0}" -gt 0 ] || WHY="$WHY the client received no application-level handshake bytes (tickets);"
    REPORT="group=$want_group hrr=$want_hrr suite=$(field "$clog" suite) c_ap=$(field "$clog" c_ap | cut -c1-16)..."
    [ -z "$WHY" ]
}

wanted() {
    [ -z "${PQ_QUIC_CASES:-}" ] && return 0
    case " $PQ_QUIC_CASES " in *" $1 "*) return 0 ;; esac
    return 1
}

echo "== post-quantum over QUIC's TLS interface: qtls_side, ossl35_side (OpenSSL 3.5), go_side (Go 1.24)"
t0=$(date +%s)
while read -r ck sk c; do
    [ -n "$ck" ] || continue
    name=${ck}_${sk}_$c
    wanted "$name" || continue
    t1=$(date +%s%N)
    REPORT=""
    if run_case "$ck" "$sk" "$c"; then
        pass "$name ($((($(date +%s%N) - t1) / 1000000)) ms, $REPORT)"
    else
        fail "$name" "${WHY# }"
        for l in "$LOGS/$name.client.log" "$LOGS/$name.server.log" "$LOGS/$name.client.stderr" \
            "$LOGS/$name.server.stderr"; do
            [ -s "$l" ] || continue
            echo "---- $l (last 12 lines)"
            tail -n 12 "$l" | cut -c1-400
        done
    fi
done <<<"$PAIRS"
echo "$(($(date +%s) - t0)) s"
finish
