#!/bin/bash
# tests/h3/e2e.sh BUILD: HTTP/3 end to end over UDP loopback, for make check.
#
# Pairings (client -> server):
#   qtls_qtls        examples/h3client -> examples/h3server
#   gtlsclient_qtls  Debian's gtlsclient (ngtcp2 0.12.1 on GnuTLS) -> h3server
#   qtls_gtlsserver  h3client -> Debian's gtlsserver
# Cases, each fetching index.html and a 200 kB file whose bytes are checked:
#   full        one connection, a full handshake
#   resumption  a second connection resumes the first's session, without 0-RTT
#   0rtt        a second connection resumes and its requests go as 0-RTT,
#               which the server accepts
#   hrr         the server takes P-384 only, the client's key share is X25519:
#               HelloRetryRequest, then P-384
#   chacha20    the client offers TLS_CHACHA20_POLY1305_SHA256 only
# and more for qtls_qtls:
#   restart     as 0rtt, with the server restarted between the connections:
#               its --ticket-keys file carries the ticket key over
#   ocsp        the server staples an OCSP response (scripts/gen-ocsp.sh) that
#               the client asked for, verified and found "good"
#   certcomp_zlib, certcomp_brotli, certcomp_zstd: the server compresses its
#               certificate (RFC 8879) with the one algorithm the client accepts
# What was negotiated is read from the qtls side of each pairing: the client's
# summary line, or the server's log line for the connection.
#
# One thing GnuTLS's client cannot do: resume without offering 0-RTT. It
# always sets GNUTLS_ENABLE_EARLY_DATA, so on resumption its ClientHello
# carries early_data and qtls accepts it; --disable-early-data only keeps the
# requests out of 0-RTT. gtlsclient_qtls_resumption therefore checks that the
# handshake resumed and that no request came in 0-RTT, and lets the TLS-level
# early-data status be what GnuTLS asked for.
#
# Every process runs under timeout(1); a failing case prints its reasons and
# the peers' logs. Output follows cmocka's format, so that
# scripts/run-tests.sh counts it like the C test binaries: a "[  PASSED  ] N
# test(s)." line and, if any failed, "[  FAILED  ] N test(s), listed below:".
# H3_CASES="qtls_qtls_full ..." runs only those. Logs: BUILD/h3-e2e/.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
WORK=$BUILD/h3-e2e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../scripts/h3peers.sh
. "$ROOT/scripts/h3peers.sh"

rm -rf "$WORK"
mkdir -p "$WORK"
trap 'h3_stop_server' EXIT

PAIRS="qtls_qtls gtlsclient_qtls qtls_gtlsserver"
CASES="full resumption 0rtt hrr chacha20"
npass=0
failed=()

echo "[==========] Running HTTP/3 end-to-end tests (logs: $WORK)."
setup_why=""
if ! h3_setup 2>"$WORK/setup.log"; then
    setup_why="set-up failed: $(cat "$WORK/setup.log")"
fi
h3_gtls_setup

# Expectations: "KEY=VALUE ..." that what the qtls side saw must contain.
expect_of() { # CASE CONN(1|2) CLIENT_KIND
    case $1:$2:$3 in
    resumption:2:gtls) echo "kind=resumed alpn=h3" ;;
    full:1:* | resumption:1:* | 0rtt:1:*) echo "kind=full hrr=no early=none alpn=h3" ;;
    resumption:2:*) echo "kind=resumed early=none alpn=h3" ;;
    restart:1:*) echo "kind=full early=none alpn=h3" ;;
    0rtt:2:* | restart:2:*) echo "kind=resumed early=accepted alpn=h3" ;;
    hrr:1:*) echo "kind=full hrr=yes group=secp384r1 alpn=h3" ;;
    chacha20:1:*) echo "kind=full suite=TLS_CHACHA20_POLY1305_SHA256 alpn=h3" ;;
    ocsp:1:*) echo "kind=full alpn=h3 ocsp=good" ;;
    certcomp_*:1:*) echo "kind=full alpn=h3 cert_compression=${1#certcomp_}" ;;
    esac
}

server_args() { # SERVER_KIND CASE
    case $1:$2 in
    qtls:restart) echo "--ticket-keys=$WORK/restart.ticket-keys" ;;
    qtls:hrr) echo "--groups=P-384" ;;
    qtls:ocsp) echo "--ocsp=$WORK/ocsp-good.der" ;;
    qtls:certcomp_*) echo "--cert-compression=zstd,brotli,zlib" ;;
    gtls:hrr) echo "--groups=-GROUP-ALL:+GROUP-SECP384R1" ;;
    esac
}

client_args() { # CASE CONN SESSION_FILE
    case $1:$2 in
    chacha20:*) echo "--ciphers=chacha20" ;;
    ocsp:*) echo "--ocsp" ;;
    certcomp_*) echo "--cert-compression=${1#certcomp_}" ;;
    resumption:2) echo "--session=$3 --no-early-data" ;;
    resumption:* | 0rtt:* | restart:*) echo "--session=$3" ;;
    esac
}

WHY=""
# One connection: the client ran cleanly, the bodies are intact, and the
# qtls side saw what the case expects.
check_conn() { # NAME CKIND CASE CONN
    local name=$1 ckind=$2 case=$3 conn=$4 seen kv
    [ "$CLIENT_RC" -eq 0 ] || WHY="$WHY connection $conn: client exited $CLIENT_RC;"
    local bad
    bad=$(h3_bodies_ok | tr '\n' ';')
    [ -z "$bad" ] || WHY="$WHY connection $conn: $bad"
    if [ "$ckind" = qtls ]; then
        seen=$(h3_seen_by_client)
    else
        seen=$(h3_seen_by_server "$conn")
    fi
    if [ -z "$seen" ]; then
        WHY="$WHY connection $conn: no handshake report from the qtls side;"
        return
    fi
    for kv in $(expect_of "$case" "$conn" "$ckind"); do
        case " $seen " in
        *" $kv "*) ;;
        *) WHY="$WHY connection $conn: wanted $kv, saw: $seen;" ;;
        esac
    done
    [ "$ckind" = gtls ] || return
    if [ "$case:$conn" = 0rtt:2 ] && ! grep -q "^conn 2 .*(request in 0-RTT)" "$SERVER_LOG"; then
        WHY="$WHY connection 2: the server got no request in 0-RTT;"
    elif [ "$case:$conn" = resumption:2 ] && grep -q "(request in 0-RTT)" "$SERVER_LOG"; then
        WHY="$WHY connection 2: a request came in 0-RTT despite --disable-early-data;"
    fi
}

# A qtls server that exited non-zero or logged a sanitizer report fails the case.
check_server_exit() { # SERVER_KIND
    [ "$1" = qtls ] || return 0
    h3_server_clean || WHY="$WHY the qtls server exited $SERVER_RC or logged a sanitizer report;"
}

run_case() { # PAIR CASE
    local pair=$1 case=$2 name=$1_$2 ckind skind conns=1 conn
    case $pair in
    qtls_qtls) ckind=qtls skind=qtls ;;
    gtlsclient_qtls) ckind=gtls skind=qtls ;;
    qtls_gtlsserver) ckind=qtls skind=gtls ;;
    esac
    case $case in resumption | 0rtt | restart) conns=2 ;; esac
    WHY=""
    CASE_LOGS=()
    if [ -n "$setup_why" ]; then
        WHY=$setup_why
        return 1
    fi
    if [ "$ckind" = gtls ] || [ "$skind" = gtls ]; then
        if [ -n "$GTLS_WHY" ]; then
            WHY="no GnuTLS peer: $GTLS_WHY"
            return 1
        fi
    fi
    if [ "$case" = ocsp ] && ! "$ROOT/scripts/gen-ocsp.sh" "$CERTS/ca.pem" "$CERTS/ca.key" \
        "$CERTS/ecdsa256.pem" "$WORK/ocsp-good.der" 2>>"$WORK/$name.err"; then
        WHY="scripts/gen-ocsp.sh failed: $(cat "$WORK/$name.err")"
        return 1
    fi
    # shellcheck disable=SC2046
    if ! h3_start_server "$skind" "$name" $(server_args "$skind" "$case") 2>>"$WORK/$name.err"; then
        WHY="the $skind server did not start"
        CASE_LOGS+=("$SERVER_LOG")
        return 1
    fi
    CASE_LOGS+=("$SERVER_LOG")
    for conn in $(seq "$conns"); do
        if [ "$case:$conn" = restart:2 ]; then
            h3_stop_server
            check_server_exit "$skind"
            # shellcheck disable=SC2046
            if ! h3_start_server "$skind" "$name.2" $(server_args "$skind" "$case") \
                2>>"$WORK/$name.err"; then
                WHY="the restarted $skind server did not start"
                CASE_LOGS+=("$SERVER_LOG")
                return 1
            fi
            CASE_LOGS+=("$SERVER_LOG")
        fi
        # shellcheck disable=SC2046
        h3_run_client "$ckind" "$name" ".$conn" $(client_args "$case" "$conn" "$WORK/$name.session")
        CASE_LOGS+=("$CLOG")
        [ "$ckind" = gtls ] && sleep 0.1 # the server logs the handshake after the client's exit
        check_conn "$name" "$ckind" "$case" "$conn"
    done
    h3_stop_server
    check_server_exit "$skind"
    [ -z "$WHY" ]
}

wanted() {
    [ -z "${H3_CASES:-}" ] && return 0
    case " $H3_CASES " in *" $1 "*) return 0 ;; esac
    return 1
}

t0=$(date +%s)
for pair in $PAIRS; do
    cases=$CASES
    [ "$pair" = qtls_qtls ] && cases="$cases restart ocsp certcomp_zlib certcomp_brotli certcomp_zstd"
    for case in $cases; do
        wanted "${pair}_$case" || continue
        echo "[ RUN      ] ${pair}_$case"
        if run_case "$pair" "$case"; then
            npass=$((npass + 1))
            echo "[       OK ] ${pair}_$case"
        else
            echo "${pair}_$case:$WHY"
            for l in "${CASE_LOGS[@]}"; do h3_show_log "$l"; done
            failed+=("${pair}_$case")
            echo "[  FAILED  ] ${pair}_$case"
        fi
    done
done

echo "[==========] $((npass + ${#failed[@]})) test(s) run in $(($(date +%s) - t0)) s."
echo "[  PASSED  ] $npass test(s)."
if [ ${#failed[@]} -gt 0 ]; then
    echo "[  FAILED  ] ${#failed[@]} test(s), listed below:"
    for f in "${failed[@]}"; do echo "[  FAILED  ] $f"; done
    exit 1
fi
exit 0
