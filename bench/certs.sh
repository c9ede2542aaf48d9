#!/bin/sh
# bench/certs.sh DIR: the benchmark's certificates, made once (bench/run.sh, bench/pq.sh).
# cert.pem: ECDSA P-256, self-signed, CN and SAN localhost, CA:TRUE (openssl req -x509 adds
# basicConstraints CA:TRUE). other.pem: a second one with the same names and another key, the
# "wrong trust anchor" of the self-test.
set -eu
dir=$1
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
