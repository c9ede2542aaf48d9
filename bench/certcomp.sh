#!/bin/bash
# bench/certcomp.sh BUILD: what certificate compression (RFC 8879) does to a server's first
# flight (make bench-certcomp; results in bench/README.md, "Certificate compression").
#
#  1. TLS bytes of the server's first flight (ServerHello at Initial; EncryptedExtensions,
#     Certificate or CompressedCertificate, CertificateVerify, Finished at Handshake), in
#     memory, for an RSA-2048 chain of 3 certificates and an ECDSA P-256 chain of 2, with the
#     certificate uncompressed and with each algorithm (BUILD/bench/certcomp_flight).
#  2. The same chains over UDP loopback, examples/h3server and h3client (ngtcp2 0.12, the
#     client's Initial padded to 1200 bytes): from the server's qlog, the bytes it sent before
#     the client's second datagram arrived, against the 3x limit of RFC 9000 §8.1 (3600), and
#     whether its whole Handshake-level CRYPTO data went out then. If not, the server waited
#     for the client to validate its address: one more round trip before the client's Finished.
#
# The certificates are made here with the openssl CLI (BUILD/bench/certcomp/), with the
# extensions a public CA's certificates carry (AIA, CRL distribution points, policies, key
# usages); they are synthetic, so real chains, with SCTs, compress a little differently.
set -euo pipefail

BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$BUILD/bench/certcomp
CERTS=$BUILD/certs
mkdir -p "$OUT"
cd "$OUT"

# ---- an RSA-2048 PKI: root -> intermediate 1 -> intermediate 2 -> leaf (sent: leaf, 2, 1)
ossl() { openssl "$@" >>"$OUT/openssl.log" 2>&1 || { tail -n 20 "$OUT/openssl.log" >&2; exit 1; }; }
if [ ! -f rsa3-chain.pem ]; then
    cat >ext.cnf <<'EOF'
[ca]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = caIssuers;URI:http://pki.example.net/ca/issuer.der, OCSP;URI:http://ocsp.example.net/
crlDistributionPoints = URI:http://crl.example.net/ca/latest.crl
certificatePolicies = 2.23.140.1.2.1, 1.3.6.1.4.1.44947.1.1.1
[leaf]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, DNS:www.example.net, DNS:example.net, IP:127.0.0.1
authorityInfoAccess = caIssuers;URI:http://pki.example.net/inter2/issuer.der, OCSP;URI:http://ocsp.example.net/
crlDistributionPoints = URI:http://crl.example.net/inter2/latest.crl
certificatePolicies = 2.23.140.1.2.1
EOF
    ossl req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days 30 \
        -subj "/C=US/O=qtls bench/CN=qtls bench RSA Root" -addext "basicConstraints=critical,CA:true" \
        -addext "keyUsage=critical,keyCertSign,cRLSign"
    issue() { # NAME SUBJECT ISSUER SECTION
        ossl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
        ossl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -days 30 \
            -sha256 -extfile ext.cnf -extensions "$4" -out "$1.pem"
    }
    issue inter1 "/C=US/O=qtls bench/CN=qtls bench RSA Intermediate 1" root ca
    issue inter2 "/C=US/O=qtls bench/CN=qtls bench RSA Intermediate 2" inter1 ca
    issue leaf "/C=US/ST=California/L=San Francisco/O=qtls bench/CN=localhost" inter2 leaf
    cat leaf.pem inter2.pem inter1.pem >rsa3-chain.pem
fi

# label chain key trust-anchor
CHAINS="rsa2048x3 $OUT/rsa3-chain.pem $OUT/leaf.key $OUT/root.pem
ecdsa256x2 $CERTS/ecdsa256-inter-chain.pem $CERTS/ecdsa256-inter.key $CERTS/ca.pem"
ALGS="none zlib brotli zstd"

# ---- 1. in memory
echo "## 1. TLS bytes of the server's first flight (in memory)"
echo
echo "| chain | certificate | Certificate message | Initial (ServerHello) | Handshake level | first flight |"
echo "|---|---|---:|---:|---:|---:|"
while read -r label chain key _; do
    QTLS_CERTS=$CERTS "$BUILD/bench/certcomp_flight" "$chain" "$key" "$label" |
        while read -r l alg cert init hs; do
            echo "| $l | $alg | $cert | $init | $hs | $((init + hs)) |"
        done
done <<<"$CHAINS"

# ---- 2. over UDP loopback with ngtcp2
# qlog_flight SQLOG: "SENT_BEFORE HS_CRYPTO_BEFORE HS_CRYPTO_TOTAL SERVER_PACKETS_BEFORE"
qlog_flight() {
    awk '
    function crypto_end(line,   s, m, off, len, end, best) {
        best = 0; s = line
        while (match(s, /"frame_type":"crypto","offset":[0-9]+,"length":[0-9]+/)) {
            m = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
            split(m, f, /[:,]/); off = f[4] + 0; len = f[6] + 0
            end = off + len; if (end > best) best = end
        }
        return best
    }
    /"name":"transport:packet_received"/ { recv++ }
    /"name":"transport:packet_sent"/ {
        match($0, /"raw":\{"length":[0-9]+/); n = substr($0, RSTART + 16, RLENGTH - 16) + 0
        hs = index($0, "\"packet_type\":\"handshake\"") > 0
        e = hs ? crypto_end($0) : 0
        if (e > total) total = e
        if (recv == 1) { before += n; pkts++; if (e > hs_before) hs_before = e }
    }
    END { print before + 0, hs_before + 0, total + 0, pkts + 0 }' "$1"
}

echo
echo "## 2. Over UDP loopback (ngtcp2 0.12, client Initial 1200 bytes, limit 3 x 1200 = 3600)"
echo
echo "| chain | certificate | server bytes before the client's 2nd datagram | Handshake CRYPTO sent then / total | fits under 3x | round trips to the client's Finished |"
echo "|---|---|---:|---:|---|---:|"
mkdir -p htdocs
echo ok >htdocs/index.html
while read -r label chain key ca; do
    for alg in $ALGS; do
        name=$label-$alg
        rm -rf "qlog-$name" && mkdir -p "qlog-$name"
        comp=()
        [ "$alg" = none ] || comp=("--cert-compression=$alg")
        timeout 20 "$BUILD/h3server" --dir=htdocs --qlog-dir="qlog-$name" "${comp[@]}" \
            127.0.0.1 0 "$key" "$chain" >"$name.server.log" 2>&1 &
        pid=$!
        port=""
        for _ in $(seq 100); do
            port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$name.server.log")
            [ -n "$port" ] && break
            sleep 0.05
        done
        timeout 10 "$BUILD/h3client" --ca="$ca" --sni=localhost "${comp[@]}" \
            "https://127.0.0.1:$port/index.html" >"$name.client.log" 2>&1 || {
            echo "certcomp.sh: $name: the client failed (log: $OUT/$name.client.log)" >&2
            kill "$pid" 2>/dev/null
            exit 1
        }
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
        read -r before hsb total _ <<<"$(qlog_flight "qlog-$name"/*.sqlog)"
        if [ "$hsb" -ge "$total" ]; then fits=yes rtt=1; else fits=no rtt=2; fi
        echo "| $label | $alg | $before | $hsb / $total | $fits | $rtt |"
    done
done <<<"$CHAINS"
