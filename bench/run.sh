#!/bin/sh
# bench/run.sh DIR: the handshake benchmark of bench/README.md, run by `make bench`.
#
# DIR holds the programs (bench_openssl, bench_gnutls, bench_qtls,
# libheapcount.so); the certificates are made there on first use and the
# results are written there (results.md, times.txt, heap.txt, callgrind.*).
#
# Knobs (environment): ROUNDS (9) rounds of N (2000) handshakes per library,
# interleaved; HEAP_M (1000) pairs for the heap figures; HEAP_BIG (100000) qtls
# pairs kept alive at once for the large heap figure (0: skip it); T_ROUNDS (5)
# rounds of T_N (1000) handshakes per thread, 1 thread then 2 (order alternating),
# unpinned; T_PRIO=1 runs them each in a new session whose autogroup has nice -19
# (root only; see bench/README.md: with autogroup scheduling, another session's
# busy processes otherwise leave this one about one CPU); CALLGRIND=1 adds the instruction counts (CG_N=200 handshakes under
# valgrind per library) and qtls's inclusive profile; CPU (1) the core to pin the
# one-thread runs to, when taskset exists and there is more than one.
# TLS over TCP (bench_tcp_openssl, bench_tcp_qtls: bench/bench_tcp.c on each library):
# TCP_ROUNDS (ROUNDS) rounds of TCP_N (N) handshakes per scenario, BULK_N (20000) 16 KB
# records per bulk run, TCP_CG_N (100) handshakes under callgrind (bulk: CG_N records);
# TCP=0 skips them.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
ROUNDS=${ROUNDS:-9}
N=${N:-2000}
HEAP_M=${HEAP_M:-1000}
HEAP_BIG=${HEAP_BIG:-100000}
T_ROUNDS=${T_ROUNDS:-5}
T_N=${T_N:-1000}
T_PRIO=${T_PRIO:-}
CG_N=${CG_N:-200}
CALLGRIND=${CALLGRIND:-}
CPU=${CPU:-1}
TCP=${TCP:-1}
TCP_ROUNDS=${TCP_ROUNDS:-$ROUNDS}
TCP_N=${TCP_N:-$N}
BULK_N=${BULK_N:-20000}
TCP_CG_N=${TCP_CG_N:-100}
libs="openssl gnutls qtls"
# TLS over TCP: the handshakes (full: tickets off; resume: each library's default tickets;
# resume1: one ticket on both) and the bulk rows (one 16 KB record per "handshake").
tcp_scens="full resume resume1 bulk-aes128 bulk-aes256 bulk-chacha"
tcp_n() { # SCEN: the timed count of a run
    case $1 in
    bulk-*) echo "$BULK_N" ;;
    *) echo "$TCP_N" ;;
    esac
}
# The other handshakes (bench_*.c -s): the libraries whose harness can do each.
# cold: first contact, a fresh client SSL_CTX (sharing the loaded trust store) per handshake.
scens="resume early hrr cold"
scen_libs() { # SCEN
    case $1 in
    early) echo qtls ;; # OpenSSL 3.0 libssl has no QUIC API, so no QUIC 0-RTT
    *) echo "openssl qtls" ;;
    esac
}
# The handshakes timed in 1 and 2 threads sharing one client and one server SSL_CTX.
tscens="full resume early"

# --- the certificates (bench/certs.sh): ECDSA P-256, and a second one as the wrong anchor ---
"$(dirname "$0")/certs.sh" "$dir"

pin=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
    pin="taskset -c $CPU"
fi
bin() { echo "$dir/bench_$1"; }

echo "== make bench: OpenSSL $(openssl version | cut -d' ' -f2), GnuTLS" \
    "$(pkg-config --modversion gnutls 2>/dev/null || echo '?'), qtls $(git -C "$(dirname "$0")" \
    rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPU," \
    "${pin:-not pinned}"

# --- 1. self-test: the configuration works and the client really verifies ---
for l in $libs; do
    $pin "$(bin $l)" -d "$dir" -t || {
        echo "bench: the $l self-test failed" >&2
        exit 1
    }
done

# --- 2. timing: ROUNDS rounds, each runs every program once, order rotated ---
: >"$dir/times.txt"
echo "== timing: $ROUNDS rounds x $N handshakes per library (+20 warm-up)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    case $((r % 3)) in
    1) order="openssl gnutls qtls" ;;
    2) order="gnutls qtls openssl" ;;
    *) order="qtls openssl gnutls" ;;
    esac
    line="round $r:"
    for l in $order; do
        out=$($pin "$(bin $l)" -d "$dir" -n "$N" -w 20) || {
            echo "bench: $l failed in round $r" >&2
            exit 1
        }
        echo "$out round=$r" >>"$dir/times.txt"
        line="$line $(echo "$out" | awk '{print $2 " " $4 " " $6}')"
    done
    echo "$line"
    r=$((r + 1))
done

# --- 2b. the same for resumed, resumed + 0-RTT and HRR handshakes (self-test first) ---
for s in $scens; do
    for l in $(scen_libs "$s"); do
        $pin "$(bin $l)" -d "$dir" -s "$s" -t >/dev/null || {
            echo "bench: the $l -s $s self-test failed" >&2
            exit 1
        }
    done
    echo "== timing -s $s: $ROUNDS rounds x $N handshakes ($(scen_libs "$s"))"
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        order=$(scen_libs "$s")
        [ $((r % 2)) = 0 ] && order=$(echo "$order" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
        line="round $r:"
        for l in $order; do
            out=$($pin "$(bin $l)" -d "$dir" -s "$s" -n "$N" -w 20) || {
                echo "bench: $l -s $s failed in round $r" >&2
                exit 1
            }
            echo "$out round=$r" >>"$dir/times.txt"
            line="$line $(echo "$out" | awk '{print $2 " " $4}')"
        done
        echo "$line"
        r=$((r + 1))
    done
done

# --- 2c. threads: 1 then 2 threads on the shared contexts, not pinned (both cores) ---
: >"$dir/threads.txt"
# T_PRIO=1: the run in a session of its own (setsid) whose autogroup gets nice -19, so
# that the scheduler weighs it against other sessions' load (nice alone does not, with
# kernel.sched_autogroup_enabled=1); a no-op where that is not permitted.
prio() {
    if [ "$T_PRIO" = 1 ]; then
        setsid -w sh -c 'echo -19 >/proc/self/autogroup 2>/dev/null; exec "$@"' prio "$@"
    else
        "$@"
    fi
}
if [ "$T_ROUNDS" -gt 0 ]; then
    echo "== threads: $T_ROUNDS rounds x $T_N handshakes per thread, 1 and 2 threads, not pinned" \
        "(load $(cut -d' ' -f1-3 /proc/loadavg)${T_PRIO:+, T_PRIO=1: autogroup nice -19})"
    for s in $tscens; do
        r=1
        while [ "$r" -le "$T_ROUNDS" ]; do
            line="-s $s round $r:"
            # spin: the reference, a compute loop sharing nothing (bench_common.c), run in
            # the same round: its 2-thread gain is what the machine gives two threads now.
            for l in spin $(scen_libs "$s"); do
                order="1 2"
                [ $((r % 2)) = 0 ] && order="2 1"
                for t in $order; do
                    if [ "$l" = spin ]; then
                        args="-s spin"
                        b=qtls
                    else
                        args="-s $s"
                        b=$l
                    fi
                    out=$(prio "$(bin $b)" -d "$dir" $args -T "$t" -n "$T_N" -w 20) || {
                        echo "bench: $l -s $s -T $t failed in round $r" >&2
                        exit 1
                    }
                    [ "$l" = spin ] && out=$(echo "$out" | sed "s/^THREADS spin /THREADS spin@$s /")
                    echo "$out round=$r" >>"$dir/threads.txt"
                    line="$line $(echo "$out" | awk '{print $2 " T" substr($3, 9) " " $5 " " $7}')"
                done
            done
            echo "$line"
            r=$((r + 1))
        done
    done
fi

# --- 2d. TLS over TCP: self-test, then TCP_ROUNDS rounds per scenario, order alternating ---
if [ "$TCP" = 1 ]; then
    for s in $tcp_scens; do
        for l in openssl qtls; do
            $pin "$(bin tcp_$l)" -d "$dir" -s "$s" -t >/dev/null || {
                echo "bench: the tcp_$l -s $s self-test failed" >&2
                $pin "$(bin tcp_$l)" -d "$dir" -s "$s" -t >&2 || true
                exit 1
            }
        done
        echo "== tcp -s $s: $TCP_ROUNDS rounds x $(tcp_n "$s") $(case $s in bulk-*) echo records ;; *) echo handshakes ;; esac) (openssl qtls)"
        r=1
        while [ "$r" -le "$TCP_ROUNDS" ]; do
            order="openssl qtls"
            [ $((r % 2)) = 0 ] && order="qtls openssl"
            line="round $r:"
            for l in $order; do
                out=$($pin "$(bin tcp_$l)" -d "$dir" -s "$s" -n "$(tcp_n "$s")" -w 20) || {
                    echo "bench: tcp_$l -s $s failed in round $r" >&2
                    exit 1
                }
                echo "$out round=$r" >>"$dir/times.txt"
                line="$line $(echo "$out" | awk '{print $2 " " $4}')"
            done
            echo "$line"
            r=$((r + 1))
        done
    done
fi

# --- 3. heap: held per established connection, allocations per handshake ---
: >"$dir/heap.txt"
for l in $libs openssl+release_buffers; do
    case $l in
    openssl+release_buffers) b=openssl rb=1 ;;
    *) b=$l rb=0 ;;
    esac
    BENCH_OPENSSL_RELEASE_BUFFERS=$rb GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
        LD_PRELOAD="$dir/libheapcount.so" "$(bin $b)" -d "$dir" -m "$HEAP_M" >>"$dir/heap.txt"
done
# TCP: an idle established connection (tickets read, one small exchange), with and without
# SSL_MODE_RELEASE_BUFFERS; "per_handshake" is the full TCP handshake's.
if [ "$TCP" = 1 ]; then
    for l in openssl qtls; do
        for rb in 0 1; do
            BENCH_RELEASE_BUFFERS=$rb GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
                LD_PRELOAD="$dir/libheapcount.so" "$(bin tcp_$l)" -d "$dir" -m "$HEAP_M" >>"$dir/heap.txt"
        done
    done
fi
# --- 3b. HEAP_BIG qtls pairs alive at once (a server's and its clients' heap) ---
: >"$dir/heapbig.txt"
if [ "$HEAP_BIG" -gt 0 ]; then
    echo "== heap: $HEAP_BIG qtls pairs established and kept alive at once"
    GLIBC_TUNABLES=glibc.malloc.tcache_count=0 LD_PRELOAD="$dir/libheapcount.so" \
        "$(bin qtls)" -d "$dir" -m "$HEAP_BIG" | sed 's/^HEAP qtls /HEAP qtls@big /' >>"$dir/heapbig.txt"
fi

# --- 4. instructions (CALLGRIND=1) ---
: >"$dir/callgrind.txt"
if [ "$CALLGRIND" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "bench: CALLGRIND=1 needs valgrind (apt-get install -y valgrind)" >&2
        exit 1
    fi
    # callgrind_annotate runs inside $dir: run from the source tree, it can list a function
    # under two spellings of its path (relative and absolute), each with part of its cost.
    cg_annotate() { # FILE (in $dir) OPTIONS...
        _cgf=$1
        shift
        (cd "$dir" && callgrind_annotate "$@" "$_cgf")
    }
    echo "== callgrind: $CG_N handshakes per library after 5 warm-up"
    for l in $libs; do
        name=$(valgrind --tool=callgrind --collect-atstart=no \
            --callgrind-out-file="$dir/callgrind.$l.out" "$(bin $l)" -d "$dir" -c "$CG_N" \
            2>"$dir/callgrind.$l.log" | awk '$1 == "CALLGRIND" { print $2 }')
        ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$dir/callgrind.$l.log")
        if [ -z "$name" ] || [ -z "$ir" ]; then
            echo "bench: callgrind run of $l failed, see $dir/callgrind.$l.log" >&2
            exit 1
        fi
        echo "CG $name ir=$ir n=$CG_N" >>"$dir/callgrind.txt"
        cg_annotate "callgrind.$l.out" --auto=no --inclusive=yes \
            >"$dir/callgrind.$l.inclusive.txt" 2>/dev/null || true
        cg_annotate "callgrind.$l.out" --auto=no --inclusive=yes --tree=caller \
            >"$dir/callgrind.$l.callers.txt" 2>/dev/null || true
    done
    for s in $scens; do
        for l in $(scen_libs "$s"); do
            f="$dir/callgrind.$l.$s"
            name=$(valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f.out" \
                "$(bin $l)" -d "$dir" -s "$s" -c "$CG_N" 2>"$f.log" |
                awk '$1 == "CALLGRIND" { print $2 }')
            ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$f.log")
            if [ -z "$name" ] || [ -z "$ir" ]; then
                echo "bench: callgrind run of $l -s $s failed, see $f.log" >&2
                exit 1
            fi
            echo "CG $name ir=$ir n=$CG_N" >>"$dir/callgrind.txt"
            cg_annotate "callgrind.$l.$s.out" --auto=no --inclusive=yes >"$f.inclusive.txt" 2>/dev/null || true
        done
    done
    # The first handshake of the process (contexts made, nothing else warm), and 2 threads.
    cg_one() { # FILE-SUFFIX NAME N ARGS...
        f="$dir/callgrind.$1"
        cname=$2
        cn=$3
        shift 3
        valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f.out" "$@" \
            >"$f.stdout" 2>"$f.log" || {
            echo "bench: callgrind run $cname failed, see $f.log" >&2
            exit 1
        }
        ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$f.log")
        [ -n "$ir" ] || {
            echo "bench: callgrind run $cname collected nothing, see $f.log" >&2
            exit 1
        }
        echo "CG $cname ir=$ir n=$cn" >>"$dir/callgrind.txt"
        cg_annotate "${f##*/}.out" --auto=no --inclusive=yes >"$f.inclusive.txt" 2>/dev/null || true
    }
    for l in openssl qtls; do
        cg_one "$l.first" "$l/first" 1 "$(bin $l)" -d "$dir" -s cold -w 0 -c 1
    done
    th=$((CG_N / 2))
    for s in $tscens; do
        n=qtls
        [ "$s" = full ] || n=qtls/$s
        cg_one "qtls.$s.T2" "$n/T2" $((th * 2)) "$(bin qtls)" -d "$dir" -s "$s" -T 2 -c "$th"
    done
    # TLS over TCP: per handshake (TCP_CG_N) or per 16 KB record (CG_N), both libraries
    if [ "$TCP" = 1 ]; then
        echo "== callgrind, TCP: $TCP_CG_N handshakes or $CG_N records per library and scenario"
        for s in $tcp_scens; do
            cn=$TCP_CG_N
            case $s in bulk-*) cn=$CG_N ;; esac
            for l in openssl qtls; do
                n=$l-tcp
                [ "$s" = full ] || n=$l-tcp/$s
                cg_one "$l-tcp.$s" "$n" "$cn" "$(bin tcp_$l)" -d "$dir" -s "$s" -c "$cn"
                cg_annotate "callgrind.$l-tcp.$s.out" --auto=no --inclusive=yes --threshold=100 \
                    >"$dir/callgrind.$l-tcp.$s.inclusive.txt" 2>/dev/null || true # every function
                [ "$l" = qtls ] && cg_annotate "callgrind.$l-tcp.$s.out" --auto=no --inclusive=yes \
                    --tree=caller >"$dir/callgrind.$l-tcp.$s.callers.txt" 2>/dev/null || true
            done
        done
    fi
fi

# --- 5. the tables ---
awk -v rounds="$ROUNDS" -v n="$N" -v heap_m="$HEAP_M" -v cg_n="$CG_N" -v heap_big="$HEAP_BIG" \
    -v t_rounds="$T_ROUNDS" -v t_n="$T_N" -v t_prio="$T_PRIO" -v tcp_rounds="$TCP_ROUNDS" \
    -v tcp_n="$TCP_N" -v bulk_n="$BULK_N" -v tcp_cg_n="$TCP_CG_N" '
function sort(a, k,    i, j, t) {
    for (i = 2; i <= k; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
}
function median(a, k) { sort(a, k); return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
function val(s,    p) { p = index(s, "="); return substr(s, p + 1) + 0 }
function thousands(x,    s, o) {
    s = sprintf("%.0f", x); o = ""
    while (length(s) > 3) { o = " " substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
    return s o
}
FILENAME ~ /times.txt$/ {
    r = val($7); cpu[$2, r] = val($4); wall[$2, r] = val($5); best[$2, r] = val($6); next
}
FILENAME ~ /threads\.txt$/ {
    for (i = 3; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) + 0 }
    k = $2 SUBSEP f["threads"] SUBSEP f["round"]
    ths[k] = f["hs_per_s"]; thc[k] = f["cpu_us"]; thcores[k] = f["cores"]; thv[k] = f["vcsw"]; thiv[k] = f["ivcsw"]
    thname[$2] = 1; next
}
FILENAME ~ /heapbig\.txt$/ {
    if ($3 == "held") { bc = val($4); bs = val($5); bl = val($7) }
    if ($3 == "mallinfo") { bmc = val($4); bms = val($5); bml = val($7) }
    next
}
FILENAME ~ /heap\.txt$/ {
    if ($3 == "held") { hc[$2] = val($4); hs[$2] = val($5); hl[$2] = val($6) }
    if ($3 == "mallinfo") { mc[$2] = val($4); ms[$2] = val($5) }
    if ($3 == "per_handshake") { allocs[$2] = val($4); abytes[$2] = val($5); peak[$2] = val($6) }
    next
}
FILENAME ~ /callgrind.txt$/ { ir[$2] = val($3) / val($4); next }
END {
    split("openssl gnutls_quic qtls", names, " ")
    label["openssl"] = "A OpenSSL 3.0 libssl, BIO pair"
    label["gnutls_quic"] = "B GnuTLS 3.7 QUIC mode"
    label["qtls"] = "Q qtls, SSL_QUIC_METHOD"
    for (i = 1; i <= 3; i++) {
        l = names[i]; k = 0
        for (r = 1; r <= rounds; r++)
            if ((l, r) in cpu) { k++; c[k] = cpu[l, r]; w[k] = wall[l, r]; b[k] = best[l, r] }
        if (k == 0) continue
        med[l] = median(c, k); lo[l] = c[1]; hi[l] = c[k]; wmed[l] = median(w, k)
        bmed[l] = median(b, k)
    }
    # speed vs OpenSSL: per round (same minute), then the median over rounds
    for (i = 1; i <= 3; i++) {
        l = names[i]; k = 0
        for (r = 1; r <= rounds; r++)
            if ((l, r) in cpu && ("openssl", r) in cpu) {
                k++; q[k] = cpu["openssl", r] / cpu[l, r]; qb[k] = best["openssl", r] / best[l, r]
            }
        if (k == 0) continue
        rmed[l] = median(q, k); rlo[l] = q[1]; rhi[l] = q[k]
        bratio[l] = median(qb, k); blo[l] = qb[1]; bhi[l] = qb[k]
    }
    printf "\n| library | µs CPU per handshake, median [min–max] | handshakes/s (1/CPU) | handshakes/s (wall) | speed vs OpenSSL, per round: median [min–max] | µs CPU, best %s-handshake block (median) | speed vs OpenSSL, best blocks: median [min–max] |", "100"
    if (length(ir)) printf " instructions/handshake (callgrind Ir) |"
    printf "\n|---|---:|---:|---:|---:|---:|---:|"
    if (length(ir)) printf "---:|"
    printf "\n"
    for (i = 1; i <= 3; i++) {
        l = names[i]
        if (!(l in med)) continue
        printf "| %s | **%.1f** [%.1f–%.1f] | %.0f | %.0f | %.2f× [%.2f–%.2f] | %.1f | %.2f× [%.2f–%.2f] |",
            label[l], med[l], lo[l], hi[l], 1e6 / med[l], 1e6 / wmed[l], rmed[l], rlo[l], rhi[l],
            bmed[l], bratio[l], blo[l], bhi[l]
        if (length(ir)) printf " %s |", (l in ir) ? sprintf("%.2f M", ir[l] / 1e6) : "-"
        printf "\n"
    }
    printf "\n(%d interleaved rounds x %d handshakes; one handshake = client + server work on one core)\n", rounds, n
    # the other handshakes: OpenSSL and qtls, the ratio per round within the scenario rounds
    printf "\n| handshake | OpenSSL 3.0 libssl µs CPU, median [min–max] | qtls µs CPU, median [min–max] | qtls speed vs OpenSSL, same handshake, per round | qtls vs OpenSSL full (medians) |"
    if (length(ir)) printf " OpenSSL Ir | qtls Ir |"
    printf "\n|---|---:|---:|---:|---:|"
    if (length(ir)) printf "---:|---:|"
    printf "\n"
    split("full resume early hrr cold", sn, " ")
    slabel["full"] = "full"; slabel["resume"] = "resumed (d2i_SSL_SESSION, psk_dhe_ke, 1 ticket)"
    slabel["early"] = "resumed + 0-RTT accepted"; slabel["hrr"] = "HelloRetryRequest (P-256 share, X25519 taken)"
    slabel["cold"] = "cold: first contact (fresh client SSL_CTX, shared trust store)"
    for (i = 1; i <= 5; i++) {
        on = sn[i] == "full" ? "openssl" : "openssl/" sn[i]; qn = sn[i] == "full" ? "qtls" : "qtls/" sn[i]
        ko = kq = kr = 0
        for (r = 1; r <= rounds; r++) {
            if ((on, r) in cpu) { ko++; co[ko] = cpu[on, r] }
            if ((qn, r) in cpu) { kq++; cq[kq] = cpu[qn, r] }
            if ((on, r) in cpu && (qn, r) in cpu) { kr++; cr[kr] = cpu[on, r] / cpu[qn, r] }
        }
        if (ko + kq == 0) continue
        mo = ko ? median(co, ko) : 0; mq = kq ? median(cq, kq) : 0
        printf "| %s | %s | %s | %s | %s |", slabel[sn[i]],
            ko ? sprintf("%.1f [%.1f–%.1f]", mo, co[1], co[ko]) : "- (no QUIC API)",
            kq ? sprintf("**%.1f** [%.1f–%.1f]", mq, cq[1], cq[kq]) : "-",
            kr ? sprintf("%.2f× [%.2f–%.2f]", median(cr, kr), cr[1], cr[kr]) : "-",
            (kq && ("openssl" in med)) ? sprintf("%.2f×", med["openssl"] / mq) : "-"
        if (length(ir))
            printf " %s | %s |", (on in ir) ? sprintf("%.2f M", ir[on] / 1e6) : "-",
                (qn in ir) ? sprintf("%.2f M", ir[qn] / 1e6) : "-"
        printf "\n"
    }
    printf "\n(full: the rounds above; the others: their own %d rounds, OpenSSL and qtls alternating order)\n", rounds
    printf "\n| library | heap held per connection: client / server (bytes, usable size) | mallinfo2: client / server | allocations per handshake | bytes allocated per handshake | peak heap during one handshake |\n"
    printf "|---|---:|---:|---:|---:|---:|\n"
    split("openssl openssl+release_buffers gnutls_quic qtls", hn, " ")
    for (i = 1; i <= 4; i++) {
        l = hn[i]
        if (!(l in mc)) continue
        printf "| %s | %s / %s | %s / %s | %s | %s | %s |\n", l,
            (l in hc) ? thousands(hc[l]) : "-", (l in hs) ? thousands(hs[l]) : "-",
            thousands(mc[l]), thousands(ms[l]), (l in allocs) ? thousands(allocs[l]) : "-",
            (l in abytes) ? thousands(abytes[l]) : "-", (l in peak) ? thousands(peak[l]) : "-"
        if ((l in hl) && hl[l] != 0) printf "WARNING: %s leaked %s bytes per pair\n", l, hl[l]
    }
    printf "\n(%d established pairs kept alive; transport buffers not counted; 0 bytes leaked per pair unless warned)\n", heap_m
    # first contact: the Ir of a cold handshake beside the warm one
    if (("qtls/cold" in ir) || ("openssl/cold" in ir)) {
        printf "\n| first contact (callgrind Ir per handshake) | OpenSSL 3.0 libssl | qtls | qtls − warm |\n|---|---:|---:|---:|\n"
        split("warm cold first", cn, " ")
        clabel["warm"] = "warm: full handshake, long-lived client SSL_CTX (certificate decode cache filled)"
        clabel["cold"] = "cold: fresh client SSL_CTX per handshake (empty decode cache, no session)"
        clabel["first"] = "the first handshake of the process (contexts made, nothing run yet; 1 handshake)"
        for (i = 1; i <= 3; i++) {
            on = cn[i] == "warm" ? "openssl" : "openssl/" cn[i]; qn = cn[i] == "warm" ? "qtls" : "qtls/" cn[i]
            printf "| %s | %s | %s | %s |\n", clabel[cn[i]],
                (on in ir) ? sprintf("%.2f M", ir[on] / 1e6) : "-",
                (qn in ir) ? sprintf("**%.2f M**", ir[qn] / 1e6) : "-",
                ((qn in ir) && ("qtls" in ir)) ? sprintf("%+.2f M", (ir[qn] - ir["qtls"]) / 1e6) : "-"
        }
    }
    # threads: 2 threads on one client and one server SSL_CTX against 1, per round
    if (length(thname)) {
        printf "\n| handshake, library | 1 thread: handshakes/s | 2 threads: handshakes/s | 2 threads ÷ 1, per round: median [min–max] | that ÷ the reference gain, same round | CPU µs/handshake, 1 / 2 threads | cores busy (CPU ÷ wall), 1 / 2 threads | context switches per 2-thread run, voluntary / involuntary |"
        if (length(ir)) printf " Ir/handshake, 1 / 2 threads |"
        printf "\n|---|---:|---:|---:|---:|---:|---:|---:|"
        if (length(ir)) printf "---:|"
        printf "\n"
        split("spin@full qtls openssl spin@resume qtls/resume openssl/resume spin@early qtls/early", tn, " ")
        for (i = 1; i <= 8; i++) {
            l = tn[i]
            if (!(l in thname)) continue
            ref = l; if (ref !~ /^spin@/) { ref = l; if (!sub(/^[^\/]*\//, "", ref)) ref = "full"; ref = "spin@" ref }
            k1 = k2 = kr = kq = 0
            for (r = 1; r <= t_rounds; r++) {
                t1 = l SUBSEP 1 SUBSEP r; t2 = l SUBSEP 2 SUBSEP r
                if (t1 in ths) { k1++; h1[k1] = ths[t1]; c1[k1] = thc[t1]; o1[k1] = thcores[t1] }
                if (t2 in ths) {
                    k2++; h2[k2] = ths[t2]; c2[k2] = thc[t2]; o2[k2] = thcores[t2]; v2[k2] = thv[t2]; iv2[k2] = thiv[t2]
                }
                if ((t1 in ths) && (t2 in ths)) {
                    kr++; tr[kr] = ths[t2] / ths[t1]
                    s1 = ref SUBSEP 1 SUBSEP r; s2 = ref SUBSEP 2 SUBSEP r
                    if ((s1 in ths) && (s2 in ths)) { kq++; tq[kq] = tr[kr] / (ths[s2] / ths[s1]) }
                }
            }
            if (k1 == 0 || k2 == 0) continue
            sc = l; sub(/\/.*/, "", sc); hn2 = l; if (!sub(/^[^\/]*\//, "", hn2)) hn2 = "full"
            if (l ~ /^spin@/) { hn2 = "reference: a compute loop sharing nothing, in the " substr(l, 6) " rounds"; lname = "no library" }
            else lname = sc == "qtls" ? "qtls" : "OpenSSL libssl"
            printf "| %s, %s | %.0f | %.0f | **%.2f×** [%.2f–%.2f] | %s | %.1f / %.1f | %.2f / %.2f | %.0f / %.0f |",
                hn2, lname, median(h1, k1), median(h2, k2),
                median(tr, kr), tr[1], tr[kr], (l ~ /^spin@/ || kq == 0) ? "-" : sprintf("%.2f", median(tq, kq)),
                median(c1, k1), median(c2, k2), median(o1, k1), median(o2, k2),
                median(v2, k2), median(iv2, k2)
            if (length(ir))
                printf " %s |", ((l in ir) && ((l "/T2") in ir)) ? sprintf("%.2f M / %.2f M", ir[l] / 1e6, ir[l "/T2"] / 1e6) : "-"
            printf "\n"
        }
        printf "\n(%d rounds x %d handshakes (or loops) per thread, 1 and 2 threads alternating first, not pinned%s; target 2 threads ≥ 1.85× 1 thread. On a shared host the second core may be busy: the reference shows what two threads could get in the same round, \"cores busy\" how much of 2 CPUs the threads got, and voluntary switches would show a thread blocking on a lock)\n", t_rounds, t_n, t_prio == 1 ? ", each run in its own session with autogroup nice -19 (T_PRIO=1)" : ""
    }
    # HEAP_BIG established qtls pairs alive at once
    if (bmc + bms > 0) {
        printf "\n| qtls, %s established pairs alive at once | client side | server side | target |\n|---|---:|---:|---:|\n", thousands(heap_big)
        printf "| heap held, usable bytes (heapcount) | %.1f MB | **%.1f MB** | server ≤ 150 MB |\n", bc * heap_big / 1e6, bs * heap_big / 1e6
        printf "| heap held, mallinfo2 (with chunk headers) | %.1f MB | %.1f MB | |\n", bmc * heap_big / 1e6, bms * heap_big / 1e6
        printf "| per connection, heapcount / mallinfo2 | %s / %s B | %s / %s B | |\n", thousands(bc), thousands(bmc), thousands(bs), thousands(bms)
        printf "| left after freeing all of them | %s B | (mallinfo2: %s B) | 0 |\n", thousands(bl), thousands(bml)
        printf "\n(MB = 10^6 bytes; the pairs are established one after another, kept, then every client is freed, then every server)\n"
    }
    # TLS over TCP (bench_tcp.c on each library): OpenSSL and qtls, ratios per round
    if (("openssl-tcp", 1) in cpu || ("qtls-tcp", 1) in cpu) {
        printf "\n| TLS 1.3 over TCP, BIO pair, one thread | OpenSSL 3.0 libssl µs CPU, median [min–max] | OpenSSL handshakes/s | qtls µs CPU, median [min–max] | qtls handshakes/s | qtls speed vs OpenSSL, per round: median [min–max] | best 100-handshake blocks: median [min–max] |"
        if (length(ir)) printf " OpenSSL Ir | qtls Ir | Ir, OpenSSL ÷ qtls |"
        printf "\n|---|---:|---:|---:|---:|---:|---:|"
        if (length(ir)) printf "---:|---:|---:|"
        printf "\n"
        split("full resume resume1", tsn, " ")
        tlabel["full"] = "full handshake (tickets off on both)"
        tlabel["resume"] = "resumed, psk_dhe_ke, tickets at each library default (num_tickets 2: 1 after a resumption, both)"
        tlabel["resume1"] = "resumed, psk_dhe_ke, num_tickets 1 on both"
        for (i = 1; i <= 3; i++) {
            sfx = tsn[i] == "full" ? "" : "/" tsn[i]; on = "openssl-tcp" sfx; qn = "qtls-tcp" sfx
            ko = kq = kr = kb = 0
            for (r = 1; r <= tcp_rounds; r++) {
                if ((on, r) in cpu) { ko++; co[ko] = cpu[on, r] }
                if ((qn, r) in cpu) { kq++; cq[kq] = cpu[qn, r] }
                if ((on, r) in cpu && (qn, r) in cpu) {
                    kr++; cr[kr] = cpu[on, r] / cpu[qn, r]
                    if (best[qn, r] > 0) { kb++; cb[kb] = best[on, r] / best[qn, r] }
                }
            }
            if (ko + kq == 0) continue
            mo = ko ? median(co, ko) : 0; mq = kq ? median(cq, kq) : 0
            printf "| %s | %s | %s | %s | %s | %s | %s |", tlabel[tsn[i]],
                ko ? sprintf("%.1f [%.1f–%.1f]", mo, co[1], co[ko]) : "-", ko ? sprintf("%.0f", 1e6 / mo) : "-",
                kq ? sprintf("**%.1f** [%.1f–%.1f]", mq, cq[1], cq[kq]) : "-", kq ? sprintf("%.0f", 1e6 / mq) : "-",
                kr ? sprintf("**%.2f×** [%.2f–%.2f]", median(cr, kr), cr[1], cr[kr]) : "-",
                kb ? sprintf("%.2f× [%.2f–%.2f]", median(cb, kb), cb[1], cb[kb]) : "-"
            if (length(ir))
                printf " %s | %s | %s |", (on in ir) ? sprintf("%.2f M", ir[on] / 1e6) : "-",
                    (qn in ir) ? sprintf("%.2f M", ir[qn] / 1e6) : "-",
                    ((on in ir) && (qn in ir)) ? sprintf("%.2f×", ir[on] / ir[qn]) : "-"
            printf "\n"
        }
        printf "\n(%d rounds x %d handshakes per library and row, OpenSSL and qtls alternating first; one handshake = both SSL objects and a BIO pair made, both sides run with SSL_do_handshake in turn, checked, freed; middlebox compatibility on; resumed rows include the client reading its tickets)\n", tcp_rounds, tcp_n
        printf "\n| 16 KB records, one direction (SSL_write 16384 → SSL_read), BIO pair | OpenSSL 3.0 libssl MB/s, median [min–max] | qtls MB/s, median [min–max] | qtls vs OpenSSL, per round: median [min–max] | best 100-record blocks: median [min–max] |"
        if (length(ir)) printf " OpenSSL Ir/record | qtls Ir/record | qtls − OpenSSL |"
        printf "\n|---|---:|---:|---:|---:|"
        if (length(ir)) printf "---:|---:|---:|"
        printf "\n"
        split("aes128 aes256 chacha", bsn, " ")
        blabel["aes128"] = "TLS_AES_128_GCM_SHA256"; blabel["aes256"] = "TLS_AES_256_GCM_SHA384"
        blabel["chacha"] = "TLS_CHACHA20_POLY1305_SHA256"
        for (i = 1; i <= 3; i++) {
            on = "openssl-tcp/bulk-" bsn[i]; qn = "qtls-tcp/bulk-" bsn[i]
            ko = kq = kr = kb = 0
            for (r = 1; r <= tcp_rounds; r++) {
                if ((on, r) in cpu) { ko++; co[ko] = 16384 / cpu[on, r] }
                if ((qn, r) in cpu) { kq++; cq[kq] = 16384 / cpu[qn, r] }
                if ((on, r) in cpu && (qn, r) in cpu) {
                    kr++; cr[kr] = cpu[on, r] / cpu[qn, r]
                    if (best[qn, r] > 0) { kb++; cb[kb] = best[on, r] / best[qn, r] }
                }
            }
            if (ko + kq == 0) continue
            printf "| %s | %s | %s | %s | %s |", blabel[bsn[i]],
                ko ? sprintf("%.0f [%.0f–%.0f]", median(co, ko), co[1], co[ko]) : "-",
                kq ? sprintf("**%.0f** [%.0f–%.0f]", median(cq, kq), cq[1], cq[kq]) : "-",
                kr ? sprintf("**%.2f×** [%.2f–%.2f]", median(cr, kr), cr[1], cr[kr]) : "-",
                kb ? sprintf("%.2f× [%.2f–%.2f]", median(cb, kb), cb[1], cb[kb]) : "-"
            if (length(ir))
                printf " %s | %s | %s |", (on in ir) ? sprintf("%.1f k", ir[on] / 1e3) : "-",
                    (qn in ir) ? sprintf("%.1f k", ir[qn] / 1e3) : "-",
                    ((on in ir) && (qn in ir)) ? sprintf("%+.1f k", (ir[qn] - ir[on]) / 1e3) : "-"
            printf "\n"
        }
        printf "\n(%d rounds x %d records per library and suite, OpenSSL and qtls alternating first, over one connection each; MB = 10^6 bytes of application data per CPU second, the writer sealing and the reader opening in one thread)\n", tcp_rounds, bulk_n
    }
    if ("qtls-tcp" in mc || "openssl-tcp" in mc) {
        printf "\n| TCP, idle established connection (tickets read, 4 bytes each way) | heap held: client / server (bytes, usable size) | mallinfo2: client / server | allocations per full TCP handshake | bytes allocated per handshake | peak heap during one handshake |\n"
        printf "|---|---:|---:|---:|---:|---:|\n"
        split("openssl-tcp openssl-tcp+release_buffers qtls-tcp qtls-tcp+release_buffers", hn, " ")
        for (i = 1; i <= 4; i++) {
            l = hn[i]
            if (!(l in mc)) continue
            printf "| %s | %s / %s | %s / %s | %s | %s | %s |\n", l,
                (l in hc) ? thousands(hc[l]) : "-", (l in hs) ? thousands(hs[l]) : "-",
                thousands(mc[l]), thousands(ms[l]), (l in allocs) ? thousands(allocs[l]) : "-",
                (l in abytes) ? thousands(abytes[l]) : "-", (l in peak) ? thousands(peak[l]) : "-"
            if ((l in hl) && hl[l] != 0) printf "WARNING: %s leaked %s bytes per pair\n", l, hl[l]
        }
        printf "\n(%d idle connections kept alive; the BIO pairs freed before the reading; 0 bytes leaked per pair unless warned)\n", heap_m
    }
}' "$dir/times.txt" "$dir/heap.txt" "$dir/callgrind.txt" "$dir/threads.txt" "$dir/heapbig.txt" | tee "$dir/results.md"

# --- 6. where qtls's instructions go ---
# named_top FILE N ROWS: the ROWS costliest named functions of an inclusive profile, per
# handshake (or record) over N, as table rows (the harness's own functions left out).
named_top() {
    grep -E '^ *[0-9,]+ \( *[0-9.]+%\)  ' "$1" |
        grep -v -E 'PROGRAM TOTALS|\?\?\?:0x|below main|libc_start|bench/bench_[a-z_]*\.c:' |
        awk -v n="$2" '{
            ir = $0; sub(/ \(.*$/, "", ir); gsub(/[ ,]/, "", ir)
            share = $0; sub(/^[^(]*\( */, "", share); sub(/%\).*$/, "", share)
            fn = $0; sub(/^[^)]*\)  */, "", fn); lib = ""
            if (index(fn, " [")) { lib = fn; sub(/^.* \[/, "", lib); sub(/\]$/, "", lib) }
            sub(/ \[.*$/, "", fn); sub(/^\?\?\?:/, "", fn)
            if (fn ~ /(^|\/)src\//) { sub(/^(.*\/)?src\//, "src/", fn); lib = "qtls" }
            else { sub(/^.*\//, "", lib); sub(/^.*:/, "", fn) }
            k = fn " (" lib ")"; if (!(k in sir)) { sir[k] = ir; ssh[k] = share }
        }
        END { for (k in sir) printf "%.0f\t%.1f\t%s\n", sir[k] / n, ssh[k], k }' |
        sort -t "$(printf '\t')" -k1,1 -rn | head -"$3" |
        awk -F "$(printf '\t')" '{ printf "| %s | %s %% | %s |\n", $1, $2, $3 }'
}
if [ "$CALLGRIND" = 1 ] && [ -s "$dir/callgrind.qtls.inclusive.txt" ]; then
    {
        echo
        echo "qtls, callgrind inclusive, named functions (per handshake; full lists in" \
            "$dir/callgrind.*.inclusive.txt, callers in callgrind.*.callers.txt):"
        echo
        echo "| Ir/handshake | share | function |"
        echo "|---:|---:|---|"
        named_top "$dir/callgrind.qtls.inclusive.txt" "$CG_N" 45
    } | tee -a "$dir/results.md"
fi
# --- 6b. where qtls's instructions go on the TCP rows ---
if [ "$CALLGRIND" = 1 ] && [ "$TCP" = 1 ]; then
    for s in full resume1 bulk-aes128; do
        f="$dir/callgrind.qtls-tcp.$s.inclusive.txt"
        [ -s "$f" ] || continue
        cn=$TCP_CG_N
        unit=handshake
        case $s in bulk-*) cn=$CG_N unit="16 KB record" ;; esac
        {
            echo
            echo "qtls over TCP, -s $s, callgrind inclusive, named functions (per $unit; full list in $f):"
            echo
            echo "| Ir/$unit | share | function |"
            echo "|---:|---:|---|"
            named_top "$f" "$cn" 40
        } | tee -a "$dir/results.md"
    done
fi
echo
echo "results: $dir/results.md"
