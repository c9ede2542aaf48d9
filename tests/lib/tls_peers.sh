# shellcheck shell=bash
# tests/lib/tls_peers.sh: sourced by the harnesses that run a tests/tcp tls_peer (or a peer that
# prints the same report) as server and client on loopback (tests/tcp/run.sh, tests/pq/run.sh).
# The caller sets CERTS, PROC_TIMEOUT, IO_TIMEOUT, WHY (the case's failures so far) and
# CASE_LOGS (the case's logs).
#
#   start_server BIN LOG ARGS...   a server on an ephemeral port: sets PORT, or adds to WHY
#   wait_server PID SECS           waits for a process, killing it after SECS: sets RC
#   stop_servers                   kills the servers still running
#   field FILE PREFIX KEY          KEY's value on the first line of FILE that starts PREFIX

SERVER_PIDS=()
stop_servers() {
    local p
    for p in "${SERVER_PIDS[@]}"; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    SERVER_PIDS=()
}

field() { # FILE PREFIX KEY
    sed -n "s/^$2 .* $3=\([^ ]*\).*/\1/p" "$1" | head -n 1
}

start_server() { # BIN LOG ARGS...: sets PORT
    local bin=$1 log=$2 pid
    shift 2
    timeout -k 2 "$PROC_TIMEOUT" "$bin" server --port 0 --cert "$CERTS/ecdsa256.pem" \
        --key "$CERTS/ecdsa256.key" --ca "$CERTS/ca.pem" --timeout "$IO_TIMEOUT" "$@" \
        >"$log" 2>&1 &
    pid=$!
    SERVER_PIDS+=("$pid")
    CASE_LOGS+=("$log")
    PORT=""
    for _ in $(seq 200); do
        PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$log")
        [ -n "$PORT" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.025
    done
    WHY="$WHY the server ($bin) did not start;"
    return 1
}

wait_server() { # PID SECS: sets RC
    local pid=$1 i
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        RC=killed
    else
        wait "$pid" 2>/dev/null
        RC=$?
    fi
}
