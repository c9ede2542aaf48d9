#!/bin/sh
# bench/run.sh DIR: the handshake benchmark of bench/README.md, run by `make bench`.
#
# DIR holds the programs (bench_openssl, bench_gnutls, bench_qtls,
# libheapcount.so); the certificates are made there on first use and the
# results are written there (results.md, times.txt, heap.txt, callgrind.*).
#
# Knobs (environment): ROUNDS (9) rounds of N (2000) handshakes per library,
# interleaved; HEAP_M (1000) pairs for the heap figures; CALLGRIND=1 adds the
# instruction counts (CG_N=200 handshakes under valgrind per library) and
# qtls's inclusive profile; CPU (1) the core to pin to, when taskset exists
# and there is more than one.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
ROUNDS=${ROUNDS:-9}
N=${N:-2000}
HEAP_M=${HEAP_M:-1000}
CG_N=${CG_N:-200}
CALLGRIND=${CALLGRIND:-}
CPU=${CPU:-1}
libs="openssl gnutls qtls"
# The other handshakes (bench_*.c -s): the libraries whose harness can do each.
scens="resume early hrr"
scen_libs() { # SCEN
    case $1 in
    early) echo qtls ;; # OpenSSL 3.0 libssl has no QUIC API, so no QUIC 0-RTT
    *) echo "openssl qtls" ;;
    esac
}

# --- the certificate: ECDSA P-256, self-signed, CN and SAN localhost, CA:TRUE ---
# (openssl req -x509 adds basicConstraints CA:TRUE). other.pem is a second one with
# the same names and another key: the "wrong trust anchor" of the self-test.
mkcert() { # CERT KEY
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost -keyout "$dir/$2" \
        -out "$dir/$1" 2>"$dir/openssl-req.log" || {
        cat "$dir/openssl-req.log" >&2
        exit 1
    }
}
[ -f "$dir/cert.pem" ] && [ -f "$dir/key.pem" ] || mkcert cert.pem key.pem
[ -f "$dir/other.pem" ] || mkcert other.pem other-key.pem

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

# --- 4. instructions (CALLGRIND=1) ---
: >"$dir/callgrind.txt"
if [ "$CALLGRIND" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "bench: CALLGRIND=1 needs valgrind (apt-get install -y valgrind)" >&2
        exit 1
    fi
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
        callgrind_annotate --auto=no --inclusive=yes "$dir/callgrind.$l.out" \
            >"$dir/callgrind.$l.inclusive.txt" 2>/dev/null || true
        callgrind_annotate --auto=no --inclusive=yes --tree=caller "$dir/callgrind.$l.out" \
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
            callgrind_annotate --auto=no --inclusive=yes "$f.out" >"$f.inclusive.txt" 2>/dev/null || true
        done
    done
fi

# --- 5. the tables ---
awk -v rounds="$ROUNDS" -v n="$N" -v heap_m="$HEAP_M" -v cg_n="$CG_N" '
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
FILENAME ~ /heap.txt$/ {
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
    split("full resume early hrr", sn, " ")
    slabel["full"] = "full"; slabel["resume"] = "resumed (d2i_SSL_SESSION, psk_dhe_ke, 1 ticket)"
    slabel["early"] = "resumed + 0-RTT accepted"; slabel["hrr"] = "HelloRetryRequest (P-256 share, X25519 taken)"
    for (i = 1; i <= 4; i++) {
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
}' "$dir/times.txt" "$dir/heap.txt" "$dir/callgrind.txt" | tee "$dir/results.md"

# --- 6. where qtls's instructions go ---
if [ "$CALLGRIND" = 1 ] && [ -s "$dir/callgrind.qtls.inclusive.txt" ]; then
    {
        echo
        echo "qtls, callgrind inclusive, named functions (per handshake; full lists in" \
            "$dir/callgrind.*.inclusive.txt, callers in callgrind.*.callers.txt):"
        echo
        echo "| Ir/handshake | share | function |"
        echo "|---:|---:|---|"
        grep -E '^ *[0-9,]+ \( *[0-9.]+%\)  ' "$dir/callgrind.qtls.inclusive.txt" |
            grep -v -E 'PROGRAM TOTALS|\?\?\?:0x|below main|libc_start|/bench/bench_' |
            head -45 |
            awk -v n="$CG_N" '{
                ir = $0; sub(/ \(.*$/, "", ir); gsub(/[ ,]/, "", ir)
                share = $0; sub(/^[^(]*\( */, "", share); sub(/%\).*$/, "", share)
                fn = $0; sub(/^[^)]*\)  */, "", fn); lib = ""
                if (index(fn, " [")) { lib = fn; sub(/^.* \[/, "", lib); sub(/\]$/, "", lib) }
                sub(/ \[.*$/, "", fn); sub(/^\?\?\?:/, "", fn)
                if (sub(/^.*\/src\//, "src/", fn)) lib = "qtls"
                else { sub(/^.*\//, "", lib); sub(/^.*:/, "", fn) }
                printf "| %.0f | %.1f %% | %s (%s) |\n", ir / n, share, fn, lib
            }'
    } | tee -a "$dir/results.md"
fi
echo
echo "results: $dir/results.md"
