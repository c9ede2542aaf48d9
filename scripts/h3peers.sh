# shellcheck shell=bash disable=SC2034 # sets variables for the scripts that source it
# h3peers.sh: sourced by scripts/demo.sh and tests/h3/e2e.sh. Starts HTTP/3
# servers and runs clients over UDP loopback, every process under a timeout:
#
#   qtls   examples/h3server, examples/h3client (ngtcp2 + nghttp3 on qtls)
#   gtls   ngtcp2 0.12.1's own examples built on GnuTLS, as Debian ships them
#          (gtlsserver in ngtcp2-server, gtlsclient in ngtcp2-client)
#
# The caller sets BUILD (where h3client/h3server are; absolute) and WORK (a
# scratch directory), then calls h3_setup and h3_gtls_setup. The GnuTLS examples are used from
# /usr when installed, else from the .debs unpacked (never installed: the
# ngtcp2-server package would enable a system service) under
# ${QTLS_GTLS_ROOT:-$BUILD/gtls-root}, fetched with apt-get download.

H3_CONN_TIMEOUT=${H3_CONN_TIMEOUT:-5}           # seconds a client gives a connection
H3_CLIENT_TIMEOUT=$((H3_CONN_TIMEOUT + 10))        # then timeout(1) kills it
H3_SERVER_TIMEOUT=${H3_SERVER_TIMEOUT:-300}

# h3_setup: certificates, documents, our binaries. Prints why it fails.
h3_setup() {
    CERTS=${QTLS_CERTS:-$BUILD/certs}
    HTDOCS=$WORK/htdocs
    mkdir -p "$WORK" "$HTDOCS" || return 1
    "$(dirname "${BASH_SOURCE[0]}")/gen-certs.sh" "$CERTS" || return 1
    echo "hello from qtls over HTTP/3" >"$HTDOCS/index.html"
    [ -s "$HTDOCS/big.bin" ] || head -c 200000 /dev/urandom >"$HTDOCS/big.bin"
    local b
    for b in h3client h3server; do
        if [ ! -x "$BUILD/$b" ]; then
            echo "$BUILD/$b is missing (make demo and make check build it: they install libngtcp2-dev, libngtcp2-crypto-gnutls-dev and libnghttp3-dev)" >&2
            return 1
        fi
    done
}

# h3_gtls_download DIR: the .debs of Debian's GnuTLS examples into DIR/debs.
h3_gtls_download() {
    (cd "$1/debs" && apt-get download ngtcp2-client ngtcp2-server libngtcp2-9 \
        libngtcp2-crypto-gnutls2 libev4) >>"$1/apt.log" 2>&1
}

# Sets GTLS_ENV, GTLSCLIENT, GTLSSERVER; or GTLS_WHY and returns 1.
h3_gtls_setup() {
    GTLS_WHY=""
    GTLS_ENV=""
    if [ -x /usr/bin/gtlsclient ] && [ -x /usr/sbin/gtlsserver ]; then
        GTLSCLIENT=/usr/bin/gtlsclient
        GTLSSERVER=/usr/sbin/gtlsserver
        return 0
    fi
    local dir=${QTLS_GTLS_ROOT:-$BUILD/gtls-root}
    GTLSCLIENT=$dir/root/usr/bin/gtlsclient
    GTLSSERVER=$dir/root/usr/sbin/gtlsserver
    if [ ! -x "$GTLSCLIENT" ] || [ ! -x "$GTLSSERVER" ]; then
        mkdir -p "$dir/debs" || return 1
        rm -f "$dir"/debs/*.deb "$dir/apt.log"
        # As root, a machine whose package lists were never fetched gets them once.
        if ! h3_gtls_download "$dir" && ! { [ "$(id -u)" -eq 0 ] &&
            apt-get update >>"$dir/apt.log" 2>&1 && h3_gtls_download "$dir"; }; then
            GTLS_WHY="gtlsclient/gtlsserver are not installed and apt-get download failed"
            GTLS_WHY="$GTLS_WHY (see $dir/apt.log); apt-get install ngtcp2-client ngtcp2-server"
            return 1
        fi
        rm -rf "$dir/root"
        local deb
        for deb in "$dir"/debs/*.deb; do
            dpkg-deb -x "$deb" "$dir/root" || { GTLS_WHY="dpkg-deb -x $deb failed"; return 1; }
        done
    fi
    GTLS_ENV="LD_LIBRARY_PATH=$(find "$dir/root" -name '*.so*' -printf '%h\n' | sort -u |
        paste -sd:)"
    local missing
    missing=$(env "$GTLS_ENV" ldd "$GTLSCLIENT" "$GTLSSERVER" 2>/dev/null | grep 'not found' | sort -u |
        tr -s ' \t\n' ' ')
    if [ -n "$missing" ]; then
        GTLS_WHY="the unpacked gtlsclient/gtlsserver miss libraries:$missing"
        return 1
    fi
}

# ---------------------------------------------------------------- servers

SERVER_PID=""
SERVER_PORT=""
SERVER_LOG=""

udp_port_open() { grep -qi ":$(printf '%04X' "$1") " /proc/net/udp 2>/dev/null; }

# h3_start_server KIND NAME ARGS...: the server answers on 127.0.0.1:$SERVER_PORT.
h3_start_server() {
    local kind=$1 name=$2
    shift 2
    SERVER_LOG=$WORK/$name.server.log
    if [ "$kind" = qtls ]; then
        # -k 10: stopping sends SIGTERM through timeout(1), which kills 10 s later; a
        # sanitizer build's exit (LeakSanitizer's scan) on a loaded machine needs the time.
        timeout -k 10 "$H3_SERVER_TIMEOUT" "$BUILD/h3server" --dir="$HTDOCS" --ca="$CERTS/ca.pem" \
            "$@" 127.0.0.1 0 "$CERTS/ecdsa256.key" "$CERTS/ecdsa256.pem" >"$SERVER_LOG" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 100); do
            SERVER_PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$SERVER_LOG")
            [ -n "$SERVER_PORT" ] && return 0
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.05
        done
    else
        SERVER_PORT=$((20000 + RANDOM % 30000))
        while udp_port_open "$SERVER_PORT"; do SERVER_PORT=$((SERVER_PORT + 1)); done
        # shellcheck disable=SC2086 # GTLS_ENV is one word or none
        timeout -k 2 "$H3_SERVER_TIMEOUT" env $GTLS_ENV "$GTLSSERVER" -q -d "$HTDOCS" "$@" \
            127.0.0.1 "$SERVER_PORT" "$CERTS/ecdsa256.key" "$CERTS/ecdsa256.pem" \
            >"$SERVER_LOG" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 100); do
            udp_port_open "$SERVER_PORT" && return 0
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.05
        done
    fi
    echo "$kind server did not start listening (log: $SERVER_LOG)" >&2
    h3_stop_server
    return 1
}

# h3_stop_server: stops the server; SERVER_RC is its exit status (examples/h3server exits 0 on
# SIGTERM, so anything else is a failure: a sanitizer's report at exit, a crash, a timeout).
SERVER_RC=0
h3_stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_RC=$?
    SERVER_PID=""
}

# h3_server_clean: the qtls server stopped with status 0 and its log holds no sanitizer
# report (a leak or a data race found while it shut down would otherwise pass unseen).
h3_server_clean() {
    [ "$SERVER_RC" -eq 0 ] || return 1
    ! grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|WARNING: ThreadSanitizer\|runtime error:' \
        "$SERVER_LOG"
}

# ---------------------------------------------------------------- clients

# h3_run_client KIND NAME TAG ARGS...: fetches index.html and big.bin from the
# running server into $DL. Sets CLOG, DL, CLIENT_RC, CLIENT_MS. Options are
# given in qtls's words and translated for gtlsclient:
#   --session=FILE  --no-early-data  --ciphers=chacha20  --cert=F --key=F
h3_run_client() {
    local kind=$1 name=$2 tag=$3 a t0 t1
    shift 3
    local args=()
    CLOG=$WORK/$name.client$tag.log
    DL=$WORK/$name.download$tag
    rm -rf "$DL"
    mkdir -p "$DL"
    for a in "$@"; do
        case $kind:$a in
        qtls:--ciphers=chacha20) args+=(--ciphers=TLS_CHACHA20_POLY1305_SHA256) ;;
        gtls:--ciphers=chacha20)
            args+=(--ciphers=NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305) ;;
        gtls:--session=*) args+=(--session-file="${a#--session=}" --tp-file="${a#--session=}.tp") ;;
        gtls:--no-early-data) args+=(--disable-early-data) ;;
        *) args+=("$a") ;;
        esac
    done
    t0=$(date +%s%N)
    if [ "$kind" = qtls ]; then
        SSLKEYLOGFILE=$WORK/$name.keylog timeout -k 2 "$H3_CLIENT_TIMEOUT" "$BUILD/h3client" \
            --ca="$CERTS/ca.pem" --timeout="$H3_CONN_TIMEOUT" --output="$DL" "${args[@]}" \
            "https://127.0.0.1:$SERVER_PORT/index.html" "https://127.0.0.1:$SERVER_PORT/big.bin" \
            >"$CLOG" 2>&1
    else
        # shellcheck disable=SC2086
        timeout -k 2 "$H3_CLIENT_TIMEOUT" env $GTLS_ENV "$GTLSCLIENT" -q \
            --exit-on-all-streams-close --timeout="${H3_CONN_TIMEOUT}s" \
            --handshake-timeout="${H3_CONN_TIMEOUT}s" \
            --download="$DL" "${args[@]}" 127.0.0.1 "$SERVER_PORT" \
            https://localhost/index.html https://localhost/big.bin >"$CLOG" 2>&1
    fi
    CLIENT_RC=$?
    t1=$(date +%s%N)
    CLIENT_MS=$(((t1 - t0) / 1000000))
}

# h3_bodies_ok: both files arrived intact. Prints what did not.
h3_bodies_ok() {
    local f ok=0
    for f in index.html big.bin; do
        if ! cmp -s "$HTDOCS/$f" "$DL/$f"; then
            echo "$f did not arrive intact"
            ok=1
        fi
    done
    return $ok
}

h3_bytes() { cat "$DL/index.html" "$DL/big.bin" 2>/dev/null | wc -c; }

# What a connection negotiated, as "kind=.. suite=.. group=.. alpn=.. hrr=..
# early=..": from a qtls client's summary line, or the qtls server's log
# line for connection N.
h3_seen_by_client() {
    local seen ocsp comp
    seen=$(sed -n 's/^summary: handshake=\([^ ]*\) suite=\([^ ]*\) group=\([^ ]*\) alpn=\([^ ]*\) hrr=\([^ ]*\) early_data=\([^ ]*\) .*/kind=\1 suite=\2 group=\3 alpn=\4 hrr=\5 early=\6/p' \
        "$CLOG")
    ocsp=$(sed -n 's/^summary: .* \(ocsp=[^ ]*\).*$/\1/p' "$CLOG") # with h3client --ocsp
    comp=$(sed -n 's/^summary: .* \(cert_compression=[^ ]*\).*$/\1/p' "$CLOG") # --cert-compression
    echo "$seen${ocsp:+ $ocsp}${comp:+ $comp}"
}
h3_seen_by_server() {
    sed -n "s/^conn $1 [^ ]*: \\([a-z]*\\) handshake, \\([^,]*\\), \\([^,]*\\), ALPN \\([^,]*\\), HRR \\([a-z]*\\), 0-RTT \\([a-z]*\\),.*/kind=\\1 suite=\\2 group=\\3 alpn=\\4 hrr=\\5 early=\\6/p" \
        "$SERVER_LOG"
}
# h3_field SEEN KEY
h3_field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# The last lines of a log, for a failure report.
h3_show_log() {
    echo "---- $1 (last 30 lines)"
    tail -n 30 "$1" 2>/dev/null
}
