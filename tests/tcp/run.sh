#!/bin/bash
# tests/tcp/run.sh BUILD_DIR CERTS_DIR [QTLS_PEER]: TLS 1.3 over TCP on loopback, the peer under
# test (QTLS_PEER, by default BUILD_DIR/tests/tcp/qtls_peer: tests/tcp/tls_peer.c on libqtls)
# against three other implementations, in both roles:
#   ossl    BUILD_DIR/tests/tcp/ossl_peer    the same tls_peer.c on the system's OpenSSL libssl
#   gnutls  BUILD_DIR/tests/tcp/gnutls_peer  GnuTLS 3.7 (tests/tcp/gnutls_peer.c)
#   go      BUILD_DIR/tests/tcp/go_peer      Go 1.19 crypto/tls (tests/tcp/go_peer/main.go)
# A case is named CLIENT_SERVER_CASE: qtls_gnutls_hrr is qtls's client against GnuTLS's
# server, gnutls_qtls_hrr the other way round. The cases (tests/tcp/README.md says more):
#   suite_aes128 suite_aes256 suite_chacha20   both sides offer that suite only
#   group_x25519 group_p256 group_p384         both sides offer that group only
#   hrr                  the client's key share is X25519, the server takes P-384 only
#   resumption           a second connection resumes the first's session
#   0rtt_accepted        ... and sends 12000 bytes of early data, which the server takes
#   0rtt_rejected        ... which the server refuses though it resumes (resent after)
#   0rtt_rejected_newkey ... to a second server process, whose ticket key is another:
#                        a full handshake, early data rejected and resent
#   keyupdate_by_qtls    the qtls side sends 3 KeyUpdates (update_requested) during 1 MB of
#                        echo; the other side answers each with its own
#   keyupdate_by_peer    the same, sent by the other side
#   bulk_16m             16 MB each way (the server echoes), every byte checked
#   close_client_first   the client sends close_notify first, the server answers with its own
#   close_server_first   the server sends 64 kB, then close_notify first
#   client_cert          the server requires a certificate, the client presents client.pem
#   pha                  post-handshake authentication: the server asks after the first data
#   tls12_refused        the other side speaks TLS 1.2 only: both fail, with alert
#                        protocol_version (70), except that GnuTLS's TLS 1.2-only server
#                        answers a ClientHello of TLS 1.3 suites with handshake_failure (40)
# Every case moves data (checked byte by byte against a pattern) and ends with close_notify
# both ways; both sides must agree on version, suite, group, resumption, early data and byte
# counts, and the case's own expectations must hold on each side that reports them (Go cannot
# report KeyUpdates or tickets: n/a). Go has no 0-RTT, cannot send a KeyUpdate and has no
# post-handshake authentication: those pairs are listed as not applicable, with the reason.
#
# The peer under test may be any tls_peer: with the ossl_peer binary in qtls's place every
# case must pass, which is how the harness itself is checked. tls12_refused then gives the
# stand-in --tls13-only (qtls_peer gets no such option: TLS 1.3 only is qtls's own behaviour).
#
# Each process runs under timeout(1) and has its own I/O timeout; servers are killed at the
# end of each case. A qtls_peer log with a sanitizer report (ASan, LSan, UBSan, TSan) fails its
# case. Output follows cmocka's format, so that scripts/run-tests.sh counts the cases (skipped
# ones are listed, not counted there). TCP_CASES="qtls_ossl_hrr ..." runs only those;
# QTLS_SKIPPED (make check SKIP=...) containing gnutls skips the GnuTLS cases.
# Logs: BUILD_DIR/tcp-logs/NAME.{client,server,server2}.log.
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 BUILD_DIR CERTS_DIR [QTLS_PEER]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
CERTS=$(cd "$2" && pwd) || exit 2
TCP=$BUILD/tests/tcp
QTLS=${3:-$TCP/qtls_peer}
case $QTLS in /*) ;; *) QTLS=$PWD/$QTLS ;; esac
LOGS=$BUILD/tcp-logs
IO_TIMEOUT=10   # each peer's --timeout: no progress for this long fails the connection
PROC_TIMEOUT=40 # timeout(1) around each process
SAN_PATTERN='ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|WARNING: ThreadSanitizer\|runtime error:'

rm -rf "$LOGS"
mkdir -p "$LOGS"

# shellcheck source=../lib/tls_peers.sh
. "$(dirname "$0")/../lib/tls_peers.sh"

PEERS="ossl gnutls go"
CASES="suite_aes128 suite_aes256 suite_chacha20 group_x25519 group_p256 group_p384 hrr resumption
0rtt_accepted 0rtt_rejected 0rtt_rejected_newkey keyupdate_by_qtls keyupdate_by_peer bulk_16m
close_client_first close_server_first client_cert pha tls12_refused"

trap stop_servers EXIT

bin_of() { # KIND
    case $1 in
    qtls) echo "$QTLS" ;;
    ossl) echo "$TCP/ossl_peer" ;;
    gnutls) echo "$TCP/gnutls_peer" ;;
    go) echo "$TCP/go_peer" ;;
    esac
}

# The peer under test: qtls, or a stand-in (the harness check).
UNDER_TEST_LIB=$("$QTLS" version 2>/dev/null | sed -n 's/^lib=\([^ ]*\).*/\1/p')
STAND_IN=0
case $UNDER_TEST_LIB in qtls-*) ;; "") ;; *) STAND_IN=1 ;; esac

# Why a peer cannot run a case (empty: it can).
skip_reason() { # PEER CASE
    case $1:$2 in
    go:0rtt_*) echo "Go 1.19 crypto/tls has no 0-RTT (no early data in its tickets or ClientHello)" ;;
    go:keyupdate_by_peer) echo "Go 1.19 crypto/tls has no API to send a KeyUpdate (it answers them: keyupdate_by_qtls)" ;;
    go:pha) echo "Go 1.19 crypto/tls has no post-handshake authentication (its client does not offer it, its server cannot ask)" ;;
    gnutls:*)
        case " ${QTLS_SKIPPED:-} " in
        *" gnutls "*) echo "make check SKIP=gnutls" ;;
        esac
        ;;
    esac
}

# ---- what each side is given --------------------------------------------------------------

suite_of() {
    case $1 in
    suite_aes128) echo TLS_AES_128_GCM_SHA256 ;;
    suite_aes256) echo TLS_AES_256_GCM_SHA384 ;;
    suite_chacha20) echo TLS_CHACHA20_POLY1305_SHA256 ;;
    esac
}
group_of() {
    case $1 in
    group_x25519) echo X25519 ;;
    group_p256) echo P-256 ;;
    group_p384) echo P-384 ;;
    esac
}

# Options of a side. ROLE: server|client; QTLS_SIDE: 1 if this side is the peer under test.
args_of() { # CASE ROLE QTLS_SIDE
    local c=$1 role=$2 q=$3
    case $c in
    suite_*) echo "--ciphersuites $(suite_of "$c")" ;;
    group_*) echo "--groups $(group_of "$c")" ;;
    hrr) [ "$role" = server ] && echo "--groups P-384" || echo "--groups X25519:P-384" ;;
    keyupdate_by_qtls) [ "$q" = 1 ] && echo "--key-update-after 256k --key-updates 3" ;;
    keyupdate_by_peer) [ "$q" = 0 ] && echo "--key-update-after 256k --key-updates 3" ;;
    tls12_refused)
        if [ "$q" = 0 ]; then
            echo "--tls12-only"
        elif [ "$STAND_IN" = 1 ]; then
            echo "--tls13-only"
        fi
        ;;
    esac
    if [ "$role" = server ]; then
        case $c in
        resumption) echo "--connections 2 --echo" ;;
        0rtt_accepted) echo "--connections 2 --echo --max-early-data 16384" ;;
        0rtt_rejected) echo "--connections 2 --echo --max-early-data 16384 --reject-early-data-from 2" ;;
        0rtt_rejected_newkey) echo "--echo --max-early-data 16384" ;;
        close_client_first) echo "--expect 64k" ;;
        close_server_first) echo "--send 64k --close-first" ;;
        client_cert) echo "--echo --require-client-cert" ;;
        pha) echo "--echo --post-handshake-auth" ;;
        *) echo "--echo" ;;
        esac
    else
        local cc="--client-cert $CERTS/client.pem --client-key $CERTS/client.key"
        case $c in
        resumption) echo "--resume --send 64k --expect-echo" ;;
        0rtt_*) echo "--resume --early-data 12000 --send 64k --expect-echo" ;;
        keyupdate_*) echo "--send 1m --expect-echo" ;;
        bulk_16m) echo "--send 16m --expect-echo" ;;
        close_client_first) echo "--send 64k" ;;
        close_server_first) echo "--expect 64k --wait-close" ;;
        client_cert) echo "--send 64k --expect-echo $cc" ;;
        pha) echo "--send 64k --expect-echo --post-handshake-auth $cc" ;;
        *) echo "--send 64k --expect-echo" ;;
        esac
    fi
}

# What must hold: "SIDE:CONN:KEY=VALUE ...", SIDE client, server or server2 (the second
# server of 0rtt_rejected_newkey). qtls_client/qtls_server/peer_client/peer_server name the
# side by what runs there.
expect_of() { # CASE QTLS_ROLE PEER
    local c=$1 qrole=$2 peer=$3 prole
    [ "$qrole" = client ] && prole=server || prole=client
    case $c in
    suite_*) echo "client:1:suite=$(suite_of "$c") server:1:suite=$(suite_of "$c")" ;;
    group_*) echo "client:1:group=$(group_of "$c") server:1:group=$(group_of "$c") client:1:hrr=0 server:1:hrr=0" ;;
    hrr) echo "client:1:group=P-384 server:1:group=P-384 client:1:hrr=1 server:1:hrr=1" ;;
    resumption) echo "client:1:resumed=0 server:1:resumed=0 client:2:resumed=1 server:2:resumed=1" ;;
    0rtt_accepted)
        echo "client:1:early=not_sent server:1:early=not_sent"
        echo "client:2:resumed=1 server:2:resumed=1 client:2:early=accepted server:2:early=accepted"
        echo "client:2:early_bytes=12000 server:2:early_bytes=12000"
        ;;
    0rtt_rejected)
        echo "client:2:resumed=1 server:2:resumed=1 client:2:early=rejected server:2:early=rejected"
        echo "client:2:early_bytes=12000 server:2:early_bytes=0"
        ;;
    0rtt_rejected_newkey)
        echo "client:1:resumed=0 server:1:resumed=0"
        echo "client:2:resumed=0 server2:1:resumed=0 client:2:early=rejected server2:1:early=rejected"
        echo "client:2:early_bytes=12000 server2:1:early_bytes=0"
        ;;
    keyupdate_by_qtls)
        echo "$qrole:1:keyupdates_sent=3 $qrole:1:keyupdates_recv=3"
        echo "$prole:1:keyupdates_sent=3 $prole:1:keyupdates_recv=3"
        ;;
    keyupdate_by_peer)
        echo "$prole:1:keyupdates_sent=3 $prole:1:keyupdates_recv=3"
        echo "$qrole:1:keyupdates_sent=3 $qrole:1:keyupdates_recv=3"
        ;;
    bulk_16m) echo "client:1:bytes_out=16777216 client:1:bytes_in=16777216 server:1:bytes_in=16777216 server:1:bytes_out=16777216" ;;
    close_client_first) echo "client:1:bytes_out=65536 server:1:bytes_in=65536 client:1:bytes_in=0" ;;
    close_server_first) echo "server:1:bytes_out=65536 client:1:bytes_in=65536 server:1:bytes_in=0" ;;
    client_cert) echo "server:1:client_cert=handshake server:1:certreq_sent=1 client:1:certreq_recv=1" ;;
    pha) echo "server:1:client_cert=post_handshake server:1:certreq_sent=1 client:1:certreq_recv=1" ;;
    tls12_refused)
        local a=70
        # GnuTLS's TLS 1.2-only server does not read supported_versions: it takes the
        # ClientHello as TLS 1.2 and finds none of its suites there
        [ "$peer:$qrole" = gnutls:client ] && a=40
        echo "server:1:alert_sent=$a client:1:alert_recv=$a"
        ;;
    esac
}

# ---- running a case -----------------------------------------------------------------------

WHY=""
CASE_LOGS=()

# field FILE PREFIX KEY: KEY's value on the line that starts with PREFIX ("conn 2", "result").


# Waits up to SECS for a server to end on its own; then it is killed. Sets RC.

# check_value SIDE_LOG PREFIX KEY WANT IS_QTLS LABEL
check_value() {
    local v
    v=$(field "$1" "$2" "$3")
    if [ -z "$v" ]; then
        WHY="$WHY $6 $2: no $3 in its report;"
    elif [ "$v" = n/a ] && [ "$5" = 0 ]; then
        : # the other implementation cannot tell
    elif [ "$v" != "$4" ]; then
        WHY="$WHY $6 $2: $3=$v, wanted $4;"
    fi
}

# The two sides of one connection agree.
check_agree() { # CLOG CPREFIX SLOG SPREFIX
    local k a b
    for k in version suite group hrr resumed early; do
        a=$(field "$1" "$2" "$k")
        b=$(field "$3" "$4" "$k")
        case "$a$b" in *n/a*) continue ;; esac
        [ "$a" = "$b" ] || WHY="$WHY $k: client $2 says $a, server $4 says $b;"
    done
    a=$(field "$1" "$2" bytes_out)
    b=$(field "$3" "$4" bytes_in)
    [ "$a" = "$b" ] || WHY="$WHY client $2 sent $a bytes, server $4 received $b;"
    a=$(field "$1" "$2" bytes_in)
    b=$(field "$3" "$4" bytes_out)
    [ "$a" = "$b" ] || WHY="$WHY server $4 sent $b bytes, client $2 received $a;"
}

run_case() { # CLIENT_KIND SERVER_KIND CASE
    local ck=$1 sk=$2 c=$3 name=$1_$2_$3 qrole peer cq sq cbin sbin crc src src2="" port2=""
    local clog=$LOGS/$name.client.log slog=$LOGS/$name.server.log slog2=$LOGS/$name.server2.log
    WHY=""
    CASE_LOGS=()
    if [ "$ck" = qtls ]; then qrole=client peer=$sk cq=1 sq=0; else qrole=server peer=$ck cq=0 sq=1; fi
    cbin=$(bin_of "$ck")
    sbin=$(bin_of "$sk")
    for b in "$cbin" "$sbin"; do
        [ -x "$b" ] || WHY="$WHY $b is not built;"
    done
    [ -z "$UNDER_TEST_LIB" ] && WHY="$WHY $QTLS version gave no lib= line;"
    [ -n "$WHY" ] && return 1

    # shellcheck disable=SC2046 # options are words
    start_server "$sbin" "$slog" $(args_of "$c" server "$sq") || { stop_servers; return 1; }
    local port=$PORT conn2=()
    if [ "$c" = 0rtt_rejected_newkey ]; then
        # shellcheck disable=SC2046
        start_server "$sbin" "$slog2" $(args_of "$c" server "$sq") || { stop_servers; return 1; }
        port2=$PORT
        conn2=(--connect2 "127.0.0.1:$port2")
    fi
    CASE_LOGS+=("$clog")
    # shellcheck disable=SC2046
    timeout -k 2 "$PROC_TIMEOUT" "$cbin" client --connect "127.0.0.1:$port" "${conn2[@]}" \
        --ca "$CERTS/ca.pem" --timeout "$IO_TIMEOUT" $(args_of "$c" client "$cq") >"$clog" 2>&1
    crc=$?
    # a server ends once its connections have: 5 s for it after a client that succeeded, 1 s
    # after one that failed (the second server of 0rtt_rejected_newkey may never get one)
    local grace=5
    [ "$crc" = 0 ] || grace=1
    wait_server "${SERVER_PIDS[0]}" "$grace"
    src=$RC
    if [ -n "$port2" ]; then
        wait_server "${SERVER_PIDS[1]}" "$grace"
        src2=$RC
    fi
    SERVER_PIDS=()

    [ "$crc" = 124 ] || [ "$crc" = 137 ] && WHY="$WHY the client timed out (${PROC_TIMEOUT} s);"
    [ "$src" = killed ] && WHY="$WHY the server had not ended $grace s after the client: killed;"
    [ "$src2" = killed ] && WHY="$WHY the second server had not ended $grace s after the client: killed;"
    # the peer under test: no sanitizer report, whatever the outcome
    local qlogs=("$clog") l
    [ "$qrole" = server ] && qlogs=("$slog" ${port2:+"$slog2"})
    for l in "${qlogs[@]}"; do
        grep -q "$SAN_PATTERN" "$l" 2>/dev/null && WHY="$WHY sanitizer report in $(basename "$l");"
    done

    local want kv side conn key val log q label
    if [ "$c" = tls12_refused ]; then
        # both sides fail in the handshake, with the expected alert
        grep -q '^result fail handshake ' "$clog" || WHY="$WHY the client did not fail in the handshake;"
        grep -q '^result fail handshake ' "$slog" || WHY="$WHY the server did not fail in the handshake;"
        [ "$crc" != 0 ] || WHY="$WHY the client exited 0;"
        [ "$src" != 0 ] || WHY="$WHY the server exited 0;"
    else
        [ "$crc" = 0 ] && grep -q '^result ok ' "$clog" ||
            WHY="$WHY client: exit $crc, $(grep '^result' "$clog" | cut -c1-300);"
        [ "$src" = 0 ] && grep -q '^result ok ' "$slog" ||
            WHY="$WHY server: exit $src, $(grep '^result' "$slog" | cut -c1-300);"
        if [ -n "$port2" ]; then
            [ "$src2" = 0 ] && grep -q '^result ok ' "$slog2" ||
                WHY="$WHY second server: exit $src2, $(grep '^result' "$slog2" | cut -c1-300);"
        fi
        [ -n "$WHY" ] && return 1
        # every connection: TLS 1.3, close_notify both ways, both sides agree
        local nconn=1
        grep -q '^conn 2 ' "$clog" && nconn=2
        for ((conn = 1; conn <= nconn; conn++)); do
            check_value "$clog" "conn $conn" version TLSv1.3 "$cq" client
            check_value "$clog" "conn $conn" close ok "$cq" client
            if [ "$conn" = 2 ] && [ -n "$port2" ]; then
                check_agree "$clog" "conn 2" "$slog2" "conn 1"
            else
                check_value "$slog" "conn $conn" version TLSv1.3 "$sq" server
                check_value "$slog" "conn $conn" close ok "$sq" server
                check_agree "$clog" "conn $conn" "$slog" "conn $conn"
            fi
        done
        if [ -n "$port2" ]; then
            check_value "$slog2" "conn 1" version TLSv1.3 "$sq" server2
            check_value "$slog2" "conn 1" close ok "$sq" server2
        fi
    fi
    for kv in $(expect_of "$c" "$qrole" "$peer"); do
        side=${kv%%:*}
        want=${kv#*:}
        conn=${want%%:*}
        want=${want#*:}
        key=${want%%=*}
        val=${want#*=}
        case $side in
        client) log=$clog q=$cq ;;
        server) log=$slog q=$sq ;;
        server2) log=$slog2 q=$sq ;;
        esac
        label="$side ($( [ "$q" = 1 ] && echo "peer under test" || echo "$peer"))"
        check_value "$log" "conn $conn" "$key" "$val" "$q" "$label"
    done
    [ -z "$WHY" ]
}

show_log() {
    echo "---- $1 (last 15 lines)"
    tail -n 15 "$1" 2>/dev/null | cut -c1-400
}

wanted() {
    [ -z "${TCP_CASES:-}" ] && return 0
    case " $TCP_CASES " in *" $1 "*) return 0 ;; esac
    return 1
}

t0=$(date +%s)
npass=0
failed=()
skipped=()
na=()
echo "[==========] Running TLS over TCP interop tests: $QTLS (${UNDER_TEST_LIB:-?})$( [ "$STAND_IN" = 1 ] && echo ", a stand-in for qtls") against ossl, gnutls, go (logs: $LOGS)."
for peer in $PEERS; do
    for c in $CASES; do
        for pair in "qtls $peer" "$peer qtls"; do
            # shellcheck disable=SC2086
            set -- $pair
            name=$1_$2_$c
            wanted "$name" || continue
            why=$(skip_reason "$peer" "$c")
            if [ -n "$why" ]; then
                # A pair the peer cannot play is not a test (a feature it lacks); one left out
                # on request (SKIP=gnutls) is a skip, and says so.
                case $why in
                "make check SKIP="*) echo "[  SKIPPED ] $name: $why"; skipped+=("$name: $why") ;;
                *) echo "[  N/A     ] $name: $why"; na+=("$name: $why") ;;
                esac
                continue
            fi
            echo "[ RUN      ] $name"
            t1=$(date +%s%N)
            if run_case "$1" "$2" "$c"; then
                npass=$((npass + 1))
                echo "[       OK ] $name ($((($(date +%s%N) - t1) / 1000000)) ms)"
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
    "${#na[@]} pair(s) the peer cannot play$([ ${#skipped[@]} -gt 0 ] &&
        echo ", ${#skipped[@]} skipped on request")."
echo "[  PASSED  ] $npass test(s)."
if [ ${#na[@]} -gt 0 ]; then
    echo "[  N/A     ] ${#na[@]} pair(s) not applicable, the peer lacks the feature:"
    for s in "${na[@]}"; do echo "[  N/A     ] $s"; done
fi
if [ ${#skipped[@]} -gt 0 ]; then
    echo "[  SKIPPED ] ${#skipped[@]} test(s), listed below:"
    for s in "${skipped[@]}"; do echo "[  SKIPPED ] $s"; done
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "[  FAILED  ] ${#failed[@]} test(s), listed below:"
    for f in "${failed[@]}"; do echo "[  FAILED  ] $f"; done
    exit 1
fi
exit 0
