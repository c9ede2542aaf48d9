#!/bin/bash
# demo.sh BUILD: what make demo shows.
#
#   1. TLS handshakes in memory: BUILD/demo (examples/demo.c), qtls client and
#      server through the SSL_QUIC_METHOD callbacks, no network.
#   2. HTTP/3 over UDP loopback: the qtls example server (examples/h3server,
#      ngtcp2 0.12.1 + nghttp3 0.8 on qtls) serves a directory; the qtls
#      example client fetches a page twice, the second time resuming the
#      first session with its requests in 0-RTT; then the same against
#      ngtcp2's own GnuTLS examples, gtlsclient -> qtls server and qtls client
#      -> gtlsserver. One table row per connection.
#
# Uses the throwaway CA and certificates of scripts/gen-certs.sh
# (QTLS_CERTS, default BUILD/certs). Logs: BUILD/demo-h3/. Exit status 0
# when every row succeeded.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
WORK=$BUILD/demo-h3
# shellcheck source-path=SCRIPTDIR source=h3peers.sh
. "$(dirname "$0")/h3peers.sh"
trap 'h3_stop_server' EXIT

echo "== 1. TLS 1.3 handshakes in memory (qtls client <-> qtls server, no network)"
echo
"$BUILD/demo" || exit 1
echo

echo "== 2. HTTP/3 over UDP loopback (ngtcp2 0.12.1 + nghttp3 0.8; qtls, and GnuTLS 3.7 peers)"
echo
rm -rf "$WORK"
h3_setup || exit 1
if ! h3_gtls_setup; then
    echo "demo: $GTLS_WHY" >&2
    exit 1
fi

ROWS=()
nfail=0

# row PAIR SEEN: one line of the table from what the connection negotiated.
row() {
    local pair=$1 seen=$2 why=$3 kind early result=ok
    kind=$(h3_field "$seen" kind)
    [ "$(h3_field "$seen" hrr)" = yes ] && kind="$kind+HRR"
    early=$(h3_field "$seen" early)
    [ "$early" = none ] && early=-
    if [ -n "$why" ]; then
        result="FAILED:$why"
        nfail=$((nfail + 1))
    fi
    ROWS+=("$(printf '%-28s %-11s %-29s %-10s %-5s %-9s %7s %7s  %s' "$pair" "${kind:--}" \
        "$(h3_field "$seen" suite)" "$(h3_field "$seen" group)" "$(h3_field "$seen" alpn)" \
        "$early" "$(h3_bytes)" "${CLIENT_MS}ms" "$result")")
}

# connect NAME CKIND PAIR CONN WANT_KIND WANT_EARLY: one client run and its row.
connect() {
    local name=$1 ckind=$2 pair=$3 conn=$4 want_kind=$5 want_early=$6 seen why=""
    h3_run_client "$ckind" "$name" ".$conn" --session="$WORK/$name.session"
    [ "$ckind" = gtls ] && sleep 0.1 # the server logs the handshake when it completes
    if [ "$ckind" = qtls ]; then seen=$(h3_seen_by_client); else seen=$(h3_seen_by_server "$conn"); fi
    [ "$CLIENT_RC" -eq 0 ] || why="$why client exited $CLIENT_RC (log: $CLOG);"
    why="$why$(h3_bodies_ok | sed 's/$/;/' | tr -d '\n')"
    [ "$(h3_field "$seen" kind)" = "$want_kind" ] || why="$why not a $want_kind handshake;"
    [ "$(h3_field "$seen" early)" = "$want_early" ] || why="$why 0-RTT not $want_early;"
    row "$pair" "$seen" "$why"
}

# pair NAME SKIND CKIND LABEL: a server, a full handshake, a resumed one with 0-RTT.
pair() {
    local name=$1 skind=$2 ckind=$3 label=$4
    if ! h3_start_server "$skind" "$name"; then
        CLIENT_MS=0
        row "$label" "" " the $skind server did not start (log: $SERVER_LOG)"
        return
    fi
    connect "$name" "$ckind" "$label" 1 full none
    [ "$name" = qtls ] && FIRST_FETCH=$CLOG
    connect "$name" "$ckind" "$label" 2 resumed accepted
    h3_stop_server
}

FIRST_FETCH=""
pair qtls qtls qtls "qtls -> qtls"
pair gtlsclient qtls gtls "gtlsclient -> qtls"
pair gtlsserver gtls qtls "qtls -> gtlsserver"

if [ -n "$FIRST_FETCH" ]; then
    echo "The qtls client's first fetch (examples/h3client):"
    grep -v '^summary:' "$FIRST_FETCH" | sed 's/^/    /'
    echo
fi
printf '%-28s %-11s %-29s %-10s %-5s %-9s %7s %7s  %s\n' "peer pair (client -> server)" \
    handshake suite group ALPN 0-RTT bytes time result
for r in "${ROWS[@]}"; do echo "$r"; done
echo
echo "GnuTLS peers: $GTLSCLIENT, $GTLSSERVER. Logs: $WORK/"
if [ "$nfail" -ne 0 ]; then
    echo "demo: $nfail of ${#ROWS[@]} connections failed" >&2
    exit 1
fi
echo "all ${#ROWS[@]} HTTP/3 connections succeeded"
