#!/bin/bash
# bench/servers.sh TLS_CONNS: HAProxy 2.6 and nginx 1.26 on qtls against the same servers on
# the system OpenSSL 3.0 (libssl-dev). `make bench-servers` runs it (bench/README.md,
# "Servers: HAProxy and nginx, qtls vs OpenSSL 3.0"); not part of CI.
#
# The qtls servers are the interop tests' (tests/haproxy/run.sh, tests/nginx/run.sh, run
# first: they build or relink them against the working tree's qtls, and check them). The
# OpenSSL servers are built here, under build/servers/, once, from the same source packages
# (the .dsc those scripts fetched, unpacked again by tests/lib/debsrc.sh) with the same make
# and configure options, less what needs a QUIC API the system libssl lacks: HAProxy without
# USE_QUIC, nginx with its OpenSSL compat QUIC layer (what is measured is TCP).
#
# Each server runs one worker (HAProxy nbthread 1, one process; nginx worker_processes 1)
# pinned to CPU SERVER_CPU, with TLS 1.3 only, X25519 only, ECDSA P-256 (scripts/gen-certs.sh's
# ecdsa256), and a 2-byte answer ("http-request return ... string ok", nginx 'return 200 "ok"').
# The clients, pinned to CLIENT_CPU, offer TLS_AES_128_GCM_SHA256 only.
#
# Rows, in ROUNDS interleaved rounds (the order of the four servers rotates; each run is a
# fresh server process, warmed up with WARM requests that offer resumption first):
#   full-h2load   h2load --h1 -H 'Connection: close': N requests, each on a new TCP connection
#                 (h2load reconnects when the server closes), C at a time, against a server
#                 with no session tickets and no session cache: h2load resumes whenever it can,
#                 so the warm-up checks that nothing resumed. Every request must succeed,
#                 TLSv1.3 with TLS_AES_128_GCM_SHA256 and X25519 (h2load's own report).
#   full-tickets  bench/tls_conns.c (system libssl) "load": N requests, each on a new
#                 connection, no resumption offered, against the server's defaults (two
#                 session tickets after each full handshake).
#   resumed       tls_conns "load ... resume": RES_N requests, each on a new connection that
#                 resumes with the newest ticket (PSK with X25519); all but the first C must.
# Each run also checks that the kernel accepted at least as many connections as requests.
# The figure is requests per second of the server's CPU time: utime + stime from
# /proc/PID/stat of the server's processes (HAProxy's one; nginx's master and worker),
# before and after the client's run.
#
# Idle memory: for each server and library, a fresh server with room for IDLE connections;
# tls_conns "idle" opens IDLE connections (handshake done, no request) and holds them; the
# server's VmRSS (HAProxy's process; nginx's master + worker) and, when gdb is there, the heap
# in use of the process holding them (glibc's malloc_stats()) before and with them give KB per
# connection. Then they are closed and opened again (CYCLES times): a heap that does not come
# back when they close, or climbs from one cycle to the next, would be a per-connection leak.
#
# Knobs (environment): N (5000), C (16), RES_N (N), ROUNDS (7), WARM (300), IDLE (10000),
# CYCLES (2), SERVER_CPU (1), CLIENT_CPU (0), JOBS (nproc), QTLS_SERVERS_DIR (build/servers),
# QTLS_HAPROXY_DIR / QTLS_NGINX_DIR (the interop scripts' directories), PHASES ("cpu idle").
# Writes $QTLS_SERVERS_DIR/results.md (the tables), raw.txt (one line per run) and logs/.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TLS_CONNS=${1:?usage: $0 TLS_CONNS (the bench/tls_conns.c program)}
TLS_CONNS=$(cd "$(dirname "$TLS_CONNS")" && pwd)/$(basename "$TLS_CONNS")
OUT=${QTLS_SERVERS_DIR:-$ROOT/build/servers}
HW=${QTLS_HAPROXY_DIR:-$ROOT/build/haproxy}
NW=${QTLS_NGINX_DIR:-$ROOT/build/nginx}
N=${N:-5000}
C=${C:-16}
RES_N=${RES_N:-$N}
ROUNDS=${ROUNDS:-7}
WARM=${WARM:-300}
IDLE=${IDLE:-10000}
CYCLES=${CYCLES:-2}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
PHASES=${PHASES:-cpu idle}
LOGS=$OUT/logs
RUN=$OUT/run
RAW=$OUT/raw.txt
RESULTS=$OUT/results.md
HZ=$(getconf CLK_TCK)

mkdir -p "$OUT" || exit 1
exec 9>"$OUT/.lock"
flock -n 9 || { echo "servers.sh: another run holds $OUT/.lock" >&2; exit 1; }
rm -rf "$LOGS" "$RUN"
mkdir -p "$LOGS" "$RUN"
ulimit -n "$(ulimit -Hn)" # both ends hold IDLE sockets
if [ "$(ulimit -n)" -lt $((IDLE + 200)) ]; then
    echo "servers.sh: ulimit -n is $(ulimit -n), IDLE=$IDLE needs more" >&2
    exit 1
fi
die() {
    echo "servers.sh: $1${2:+ (see $2)}" >&2
    [ -n "${2:-}" ] && tail -n 20 "$2" >&2
    exit 1
}
for tool in h2load taskset; do
    command -v $tool >/dev/null || die "$tool is missing (scripts/deps.sh interop)"
done
# taskset when there are those CPUs; the server is started by a simple command, so that $! is it
PIN_S=() PIN_C=()
[ "$(nproc)" -gt "$SERVER_CPU" ] && PIN_S=(taskset -c "$SERVER_CPU")
[ "$(nproc)" -gt "$CLIENT_CPU" ] && PIN_C=(taskset -c "$CLIENT_CPU")

# ---------------------------------------------------------------- the qtls servers

echo "servers.sh: the interop tests build and check the qtls servers"
for t in haproxy nginx; do
    "$ROOT/tests/$t/run.sh" >"$LOGS/interop-$t.log" 2>&1 ||
        echo "servers.sh: warning: tests/$t/run.sh: $(tail -n 1 "$LOGS/interop-$t.log")" >&2
done
declare -A BIN
BIN[haproxy.qtls]=$HW/src/haproxy/haproxy
BIN[nginx.qtls]=$NW/obj/nginx

# ---------------------------------------------------------------- the OpenSSL servers

# shellcheck source=../tests/lib/debsrc.sh
. "$ROOT/tests/lib/debsrc.sh"
HSRC=$OUT/src/haproxy
debsrc_init "$HW/apt" "$LOGS/apt.log"
debsrc_source haproxy "$HSRC" || die "cannot unpack haproxy's source from $HW/apt" "$LOGS/apt.log"
if [ ! -x "$HSRC/haproxy" ]; then
    echo "servers.sh: building HAProxy on the system OpenSSL"
    make -C "$HSRC" -j"$JOBS" TARGET=linux-glibc USE_OPENSSL=1 >"$LOGS/build-haproxy.log" 2>&1 ||
        die "HAProxy did not build on the system OpenSSL" "$LOGS/build-haproxy.log"
fi
BIN[haproxy.openssl]=$HSRC/haproxy

NSRC=$OUT/src/nginx
NOBJ=$OUT/obj-nginx
debsrc_init "$NW/apt" "$LOGS/apt.log" trixie
debsrc_source nginx "$NSRC" || die "cannot unpack nginx's source from $NW/apt" "$LOGS/apt.log"
if [ ! -x "$NOBJ/nginx" ]; then
    echo "servers.sh: building nginx on the system OpenSSL"
    (cd "$NSRC" && ./configure --prefix="$RUN" --builddir="$NOBJ" --with-http_ssl_module \
        --with-http_v2_module --with-http_v3_module) >"$LOGS/configure-nginx.log" 2>&1 ||
        die "nginx's configure failed on the system OpenSSL" "$LOGS/configure-nginx.log"
    make -C "$NSRC" -f "$NOBJ/Makefile" -j"$JOBS" >"$LOGS/build-nginx.log" 2>&1 ||
        die "nginx did not build on the system OpenSSL" "$LOGS/build-nginx.log"
fi
BIN[nginx.openssl]=$NOBJ/nginx

for k in "${!BIN[@]}"; do
    [ -x "${BIN[$k]}" ] || die "no ${BIN[$k]} for $k"
    case $k in
    *.qtls) want='libqtls\.so' ;;
    *) want='libssl\.so\.3 => /' ;;
    esac
    grep -q "$want" <<<"$(ldd "${BIN[$k]}")" || die "${BIN[$k]} does not link $want"
done

# The interop scripts relink their binaries on every run: hold their locks while measuring.
exec 8>"$HW/.lock" 7>"$NW/.lock"
if ! flock -w 900 8 || ! flock -w 900 7; then die "cannot take the interop scripts' locks"; fi

"$ROOT/scripts/gen-certs.sh" "$OUT/certs" || die "gen-certs.sh failed"
CERT=$OUT/certs/ecdsa256.pem
KEY=$OUT/certs/ecdsa256.key
cat "$CERT" "$KEY" >"$RUN/site.pem"

# ---------------------------------------------------------------- servers

tcp_port_open() { grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp 2>/dev/null; }
free_port() {
    local p=$((20000 + RANDOM % 30000))
    while tcp_port_open "$p"; do p=$((p + 1)); done
    echo "$p"
}

# start SERVER LIB NAME MAXCONN TICKETS: a fresh server; sets SPID and PORT. TICKETS "off": no
# session tickets and no session cache, so that no client can resume (h2load resumes when it can).
start() {
    local server=$1 lib=$2 name=$3 maxconn=$4 tickets=$5 conf=$RUN/$3.conf
    local hnotickets="" hcache="" nnotickets=""
    if [ "$tickets" = off ]; then
        hnotickets=" no-tls-tickets" hcache="tune.ssl.cachesize 0"
        nnotickets="ssl_session_tickets off; ssl_session_cache off;"
    fi
    PORT=$(free_port)
    if [ "$server" = haproxy ]; then
        cat >"$conf" <<EOF
global
    nbthread 1
    maxconn $maxconn
    no strict-limits # 2 fds per connection with IDLE=10000 is above a hard limit of 20000
    $hcache
defaults
    mode http
    timeout client 600s
    timeout connect 5s
    timeout server 10s
    timeout http-request 600s
    timeout http-keep-alive 600s
frontend bench
    bind 127.0.0.1:$PORT ssl crt $RUN/site.pem ssl-min-ver TLSv1.3 curves X25519 alpn http/1.1$hnotickets
    http-request return status 200 content-type text/plain string ok
EOF
        "${PIN_S[@]}" "${BIN[$server.$lib]}" -db -f "$conf" >"$LOGS/$name.log" 2>&1 7>&- 8>&- 9>&- &
    else
        cat >"$conf" <<EOF
$([ "$(id -u)" -eq 0 ] && echo "user root;")
worker_processes 1;
worker_rlimit_nofile $(ulimit -Hn);
daemon off;
pid $RUN/$name.pid;
error_log $LOGS/$name.log warn;
events { worker_connections $maxconn; }
http {
    access_log off;
    default_type text/plain;
    ssl_protocols TLSv1.3;
    ssl_ecdh_curve X25519;
    keepalive_timeout 600s;
    client_header_timeout 600s;
    $nnotickets
    server {
        listen 127.0.0.1:$PORT ssl backlog=4096;
        ssl_certificate $CERT;
        ssl_certificate_key $KEY;
        location / { return 200 "ok"; }
    }
}
EOF
        "${PIN_S[@]}" "${BIN[$server.$lib]}" -p "$RUN" -e "$LOGS/$name.log" -c "$conf" \
            >"$LOGS/$name.out" 2>&1 7>&- 8>&- 9>&- &
    fi
    SPID=$!
    for _ in $(seq 200); do
        # nginx: its worker is up too
        tcp_port_open "$PORT" && { [ "$server" = haproxy ] || [ -n "$(pgrep -P "$SPID")" ]; } && return 0
        kill -0 "$SPID" 2>/dev/null || die "$name exited" "$LOGS/$name.log"
        sleep 0.05
    done
    die "$name does not listen on $PORT" "$LOGS/$name.log"
}
stop() {
    kill "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=""
}
trap '[ -n "${SPID:-}" ] && stop' EXIT
pids() { echo "$SPID" $(pgrep -P "$SPID"); } # the server and its workers
cpu_ticks() { # "utime stime" of the server's processes, in clock ticks
    local p
    for p in $(pids); do sed 's/^.*) //' "/proc/$p/stat"; done |
        awk '{ u += $12; s += $13 } END { print u + 0, s + 0 }'
}
passive_opens() { # TCP connections accepted in this network namespace so far
    awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "PassiveOpens") c = i; h = 1 } else print $c }' \
        /proc/net/snmp
}
rss_kb() {
    local p t=0
    for p in $(pids); do t=$((t + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status"))); done
    echo "$t"
}
load() { # N C [resume]: tls_conns's load against the server
    "${PIN_C[@]}" "$TLS_CONNS" load 127.0.0.1 "$PORT" "$@"
}

# ---------------------------------------------------------------- handshakes per CPU second

H2LOAD=(h2load --h1 -H 'Connection: close' -t 1 -m 1 --tls13-ciphers=TLS_AES_128_GCM_SHA256
        --groups=X25519)
# measure NAME ROW CMD...: requests per server CPU second of CMD; appends to raw.txt.
measure() {
    local name=$1 row=$2 u0 s0 u1 s1 o0 o1 log=$LOGS/$1.$2.log
    shift 2
    read -r u0 s0 < <(cpu_ticks)
    o0=$(passive_opens)
    "$@" >"$log" 2>&1
    local rc=$?
    read -r u1 s1 < <(cpu_ticks)
    o1=$(passive_opens)
    local t=$((u1 + s1 - u0 - s0))
    local why="" n ok reused=-
    case $row in
    full-h2load)
        n=$N
        ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$log")
        grep -q 'TLS Protocol: TLSv1.3' "$log" || why="$why not TLSv1.3;"
        grep -q 'Cipher: TLS_AES_128_GCM_SHA256' "$log" || why="$why not TLS_AES_128_GCM_SHA256;"
        grep -q 'Server Temp Key: X25519' "$log" || why="$why not X25519;"
        ;;
    full-tickets | resumed)
        n=$N
        [ "$row" = resumed ] && n=$RES_N
        ok=$(sed -n 's/^requests .* ok \([0-9]*\) .*/\1/p' "$log")
        reused=$(sed -n 's/.* reused \([0-9]*\) .*/\1/p' "$log")
        grep -q 'proto TLSv1.3 cipher TLS_AES_128_GCM_SHA256 group X25519' "$log" ||
            why="$why not TLSv1.3 TLS_AES_128_GCM_SHA256 X25519;"
        if [ "$row" = resumed ]; then
            [ "${reused:-0}" -ge $((n - C)) ] || why="$why only ${reused:-0} of $n resumed;"
        else
            [ "${reused:-1}" -eq 0 ] || why="$why ${reused:-?} resumed;"
        fi
        ;;
    esac
    [ $rc -eq 0 ] || why="$why client exited $rc;"
    [ "${ok:-0}" = "$n" ] || why="$why ${ok:-0} of $n succeeded;"
    # one connection per request (other programs' connections can only add to the count)
    [ $((o1 - o0)) -ge "$n" ] || why="$why $((o1 - o0)) connections accepted for $n requests;"
    [ -n "$why" ] && die "$name $row:$why" "$log"
    local rate
    rate=$(awk -v n="$n" -v t=$t -v hz="$HZ" 'BEGIN { printf "%.0f", n * hz / t }')
    echo "$round $name $row $n $t $rate $reused $((u1 - u0)) $((s1 - s0))" >>"$RAW"
    printf '  %-16s %-8s %6s req/s of server CPU (%d requests, %.2f s CPU, %.0f%% system%s)\n' \
        "$name" "$row" "$rate" "$n" "$(awk -v t=$t -v hz="$HZ" 'BEGIN { print t / hz }')" \
        "$(awk -v a=$((s1 - s0)) -v t=$t 'BEGIN { print 100 * a / t }')" \
        "$([ "$reused" != - ] && echo ", $reused resumed")"
}

configs=(haproxy.qtls haproxy.openssl nginx.qtls nginx.openssl)
warm() { # NAME RESUMES: WARM requests offering resumption; RESUMES 0: none may resume, 1: most
    local log=$LOGS/$1.warm.log reused
    load "$WARM" "$C" resume >"$log" 2>&1 || die "$1: warm-up failed" "$log"
    reused=$(sed -n 's/.* reused \([0-9]*\) .*/\1/p' "$log")
    if [ "$2" = 0 ] && [ "$reused" != 0 ]; then
        die "$1: $reused connections resumed on a server without tickets" "$log"
    elif [ "$2" = 1 ] && [ "$reused" -lt $((WARM - C)) ]; then
        die "$1: only $reused of $WARM connections resumed" "$log"
    fi
}
if [[ " $PHASES " == *" cpu "* ]]; then
    : >"$RAW"
    echo "servers.sh: $ROUNDS rounds: full N=$N, resumed RES_N=$RES_N, $C connections at a time"
    for round in $(seq "$ROUNDS"); do
        echo "round $round"
        for i in 0 1 2 3; do
            k=${configs[$(((i + round - 1) % 4))]}
            # Without tickets: h2load's full handshakes. The warm-up offers resumption, to check
            # that nothing resumes.
            start "${k%.*}" "${k#*.}" "$k.notickets" 1024 off
            warm "$k" 0
            measure "$k" full-h2load "${PIN_C[@]}" "${H2LOAD[@]}" -n "$N" -c "$C" \
                "https://127.0.0.1:$PORT/"
            stop
            # The default: two tickets after each full handshake, one after a resumption.
            start "${k%.*}" "${k#*.}" "$k" 1024 on
            warm "$k" 1
            measure "$k" full-tickets load "$N" "$C"
            measure "$k" resumed load "$RES_N" "$C" resume
            stop
        done
    done
fi

# ---------------------------------------------------------------- idle memory

IDLE_RAW=$OUT/idle.txt
# heap_kb: the bytes malloc has handed out and not had back in the server's TLS process (HAProxy's
# one, nginx's worker), from glibc's malloc_stats() called in it by gdb (it prints to the
# process's stderr, the log); "-" without gdb. RSS misses what was allocated and never touched.
heap_kb() {
    local p=$SPID log=$LOGS/$name.log
    [ "${server:-}" = nginx ] && p=$(pgrep -P "$SPID" | head -n 1)
    local before
    before=$(grep -c '^in use bytes' "$log")
    # (gdb's exit status is 1 here even when the call worked: "Couldn't write extended state")
    command -v gdb >/dev/null && gdb -p "$p" -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1
    if [ "$(grep -c '^in use bytes' "$log")" -gt "$before" ]; then
        awk '/^in use bytes/ { b = $NF } END { print int(b / 1024) }' "$log"
    else
        echo -
    fi
}
if [[ " $PHASES " == *" idle "* ]]; then
    : >"$IDLE_RAW"
    echo "servers.sh: idle memory, $IDLE connections, $CYCLES cycles"
    for k in "${configs[@]}"; do
        server=${k%.*} name=$k.idle
        start "$server" "${k#*.}" "$name" $((IDLE + 100)) on
        warm "$name" 1
        sleep 0.5
        rss0=$(rss_kb) heap0=$(heap_kb)
        line="$k $IDLE $rss0 $heap0"
        coproc IDLER { "${PIN_C[@]}" "$TLS_CONNS" idle 127.0.0.1 "$PORT" "$IDLE" "$CYCLES" \
            2>"$LOGS/$name.client.log" 7>&- 8>&- 9>&-; }
        for cycle in $(seq "$CYCLES"); do
            read -r word okc failc <&"${IDLER[0]}" || die "$k: the idle client stopped" "$LOGS/$name.client.log"
            [ "$word" = ready ] && [ "$okc" = "$IDLE" ] ||
                die "$k: cycle $cycle: $okc connections of $IDLE, $failc failed" "$LOGS/$name.client.log"
            sleep 1
            rss1=$(rss_kb) heap1=$(heap_kb)
            echo >&"${IDLER[1]}"
            read -r word alive <&"${IDLER[0]}"
            [ "$alive" = "$IDLE" ] || die "$k: the server closed $((IDLE - alive)) idle connections" "$LOGS/$name.log"
            sleep 1
            rssc=$(rss_kb) heapc=$(heap_kb)
            line="$line $rss1 $heap1 $rssc $heapc"
            printf '  %-16s cycle %d: RSS %d KB, %d KB with %d connections (%.1f KB each), %d KB after closing them; heap %s, %s, %s KB\n' \
                "$k" "$cycle" "$rss0" "$rss1" "$IDLE" \
                "$(awk -v a="$rss0" -v b="$rss1" -v n="$IDLE" 'BEGIN { print (b - a) / n }')" "$rssc" \
                "$heap0" "$heap1" "$heapc"
            echo >&"${IDLER[1]}"
        done
        wait "$IDLER_PID" 2>/dev/null
        echo "$line" >>"$IDLE_RAW"
        stop
    done
fi

# ---------------------------------------------------------------- results

{
    echo "## Servers: requests, each on a new connection, per second of server CPU"
    echo
    echo "$(date -u +%Y-%m-%dT%H:%MZ), qtls at $(git -C "$ROOT" describe --always --dirty 2>/dev/null)," \
        "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
        "ROUNDS=$ROUNDS N=$N RES_N=$RES_N C=$C IDLE=$IDLE"
    echo
    if [ -s "$RAW" ]; then
        echo "| server | connections | qtls: req/s of server CPU, median (min–max) | OpenSSL 3.0 | qtls/OpenSSL | server CPU µs per request: qtls, OpenSSL |"
        echo "|---|---|---|---|---|---|"
        awk '
        { v[$2 " " $3] = v[$2 " " $3] " " $6 }
        function med(s,   a, n, i, j, t) {
            n = split(s, a, " ")
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            lo = a[1]; hi = a[n]
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            split("haproxy nginx", S, " "); split("full-h2load full-tickets resumed", R, " ")
            D["full-h2load"] = "full handshake (h2load; no tickets)"
            D["full-tickets"] = "full handshake, 2 tickets issued (tls_conns)"
            D["resumed"] = "resumed, 1 ticket issued (tls_conns)"
            for (s = 1; s <= 2; s++) for (r = 1; r <= 3; r++) {
                q = med(v[S[s] ".qtls " R[r]]); qs = sprintf("%.0f (%.0f–%.0f)", q, lo, hi)
                o = med(v[S[s] ".openssl " R[r]]); os = sprintf("%.0f (%.0f–%.0f)", o, lo, hi)
                printf "| %s | %s | %s | %s | %.2f× | %.0f, %.0f |\n", S[s], D[R[r]], qs, os, q / o, 1e6 / q, 1e6 / o
            }
        }' "$RAW"
        echo
    fi
    if [ -s "$IDLE_RAW" ]; then
        echo "| server | library | RSS (KB): idle, with $IDLE connections, after closing them | RSS KB per connection | heap (KB): idle, with, after closing | heap KB per connection | later cycles: RSS with / after, heap with / after (KB) |"
        echo "|---|---|---|---|---|---|---|"
        awk '{
            split($1, k, "."); n = $2
            later = ""
            for (i = 9; i + 3 <= NF; i += 4)
                later = later (later ? "; " : "") $i " / " $(i + 2) ", " $(i + 1) " / " $(i + 3)
            hk = $4 == "-" || $6 == "-" ? "-" : sprintf("%.1f", ($6 - $4) / n)
            printf "| %s | %s | %d, %d, %d | %.1f | %s, %s, %s | %s | %s |\n", k[1], k[2], $3, $5, $7,
                ($5 - $3) / n, $4, $6, $8, hk, later
        }' "$IDLE_RAW"
    fi
} >"$RESULTS"
echo
cat "$RESULTS"
