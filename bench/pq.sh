#!/bin/sh
# bench/pq.sh DIR OSSL35: the post-quantum rows of make bench (bench/README.md), after run.sh.
#
#   1. the first flights: the bytes each side writes at the initial level (ClientHello,
#      ServerHello) with X25519 alone, X25519MLKEM768 alone, and X25519MLKEM768 beside an X25519
#      share (qtls's and OpenSSL 3.5's default shape)
#   2. full QUIC handshakes on qtls (bench_qtls -s full | pq | pq2), PQ_ROUNDS rounds of PQ_N,
#      order rotated; CPU per handshake and the hybrid's ratio to X25519's, on the system's
#      libcrypto (qtls's own ML-KEM) and on OSSL35's (libcrypto's ML-KEM)
#   3. ML-KEM per operation (bench_mlkem): qtls's own against OpenSSL 3.5's in one process,
#      MLKEM_ROUNDS rounds of MLKEM_N operations each, order alternating
# Medians over rounds. Results also in DIR/pq.txt.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 DIR OSSL35_PREFIX" >&2
    exit 2
fi
dir=$1
ossl35=$2
PQ_ROUNDS=${PQ_ROUNDS:-${ROUNDS:-9}}
PQ_N=${PQ_N:-${N:-2000}}
MLKEM_ROUNDS=${MLKEM_ROUNDS:-7}
MLKEM_N=${MLKEM_N:-2000}
CPU=${CPU:-1}
pin=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
    pin="taskset -c $CPU"
fi
out=$dir/pq.txt
: >"$out"
"$(dirname "$0")/certs.sh" "$dir"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "?"; else print v[int((NR + 1) / 2)] }'; }

echo "== post-quantum: first flights (bytes at the initial level)"
for s in full pq pq2; do
    $pin env BENCH_FLIGHT=1 "$dir/bench_qtls" -d "$dir" -s "$s" -t | grep '^FLIGHT' | tee -a "$out"
done

# libcrypto of a run: the system's (qtls's own ML-KEM) or OSSL35's (libcrypto's ML-KEM)
for lib in system ossl35; do
    if [ "$lib" = ossl35 ]; then
        env="LD_LIBRARY_PATH=$ossl35/lib"
    else
        env="QTLS_BENCH_SYSTEM=1"
    fi
    echo "== post-quantum: full QUIC handshakes on qtls, libcrypto $lib: $PQ_ROUNDS rounds x $PQ_N"
    r=1
    while [ "$r" -le "$PQ_ROUNDS" ]; do
        case $((r % 3)) in
        1) order="full pq pq2" ;;
        2) order="pq pq2 full" ;;
        *) order="pq2 full pq" ;;
        esac
        line="round $r:"
        for s in $order; do
            o=$($pin env $env "$dir/bench_qtls" -d "$dir" -s "$s" -n "$PQ_N" -w 20)
            echo "$o lib=$lib round=$r" >>"$out"
            line="$line $(echo "$o" | awk '{print $2 " " $4}')"
        done
        echo "$line"
        r=$((r + 1))
    done
done

cpu_of() { # LIB SCEN: the median CPU µs per handshake
    name=qtls/$2
    [ "$2" = full ] && name=qtls
    grep "^TIME $name " "$out" | grep "lib=$1 " | sed 's/.*cpu_us=\([0-9.]*\).*/\1/' | median
}

echo "== post-quantum: ML-KEM per operation, qtls's own and OpenSSL 3.5's, $MLKEM_ROUNDS rounds x $MLKEM_N"
LD_LIBRARY_PATH=$ossl35/lib $pin "$dir/bench_mlkem" -n "$MLKEM_N" -r "$MLKEM_ROUNDS" | tee -a "$out"

op_of() { # IMPL PARAM OP: the median µs
    grep "^MLKEM $1 $2 " "$out" | sed "s/.*$3_us=\([0-9.]*\).*/\1/" | median
}

echo
echo "| handshake (QUIC, qtls, CPU µs median) | libcrypto 3.0 (own ML-KEM) | libcrypto 3.5 (its ML-KEM) |"
echo "|---|---|---|"
for s in full pq pq2; do
    a=$(cpu_of system "$s")
    b=$(cpu_of ossl35 "$s")
    fa=$(cpu_of system full)
    fb=$(cpu_of ossl35 full)
    echo "| $s | $a ($(echo "$a $fa" | awk '{printf "%.2fx", $1 / $2}')) | $b ($(echo "$b $fb" | awk '{printf "%.2fx", $1 / $2}')) |"
done
echo
echo "| ML-KEM (µs median) | qtls own | OpenSSL 3.5 | own / 3.5 |"
echo "|---|---|---|---|"
for p in ML-KEM-768 ML-KEM-1024; do
    for op in keygen encaps decaps; do
        a=$(op_of own "$p" "$op")
        b=$(op_of libcrypto "$p" "$op")
        echo "| $p $op | $a | $b | $(echo "$a $b" | awk '{ if ($2 > 0) printf "%.2fx", $1 / $2; else print "?" }') |"
    done
done
