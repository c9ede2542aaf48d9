#!/bin/sh
# gen-ocsp.sh CA_PEM CA_KEY LEAF_PEM OUT_DER [good|revoked]
#
# Writes OUT_DER: a DER OCSP response about LEAF_PEM, signed by its issuer
# CA_PEM/CA_KEY, valid for a day, saying "good" (default) or "revoked". Made
# with the openssl CLI's own responder (openssl ocsp -index), offline, for the
# OCSP stapling tests and the HAProxy interop run.
set -eu
if [ $# -lt 4 ] || [ $# -gt 5 ]; then
    echo "usage: $0 CA_PEM CA_KEY LEAF_PEM OUT_DER [good|revoked]" >&2
    exit 2
fi
ca=$1 cakey=$2 leaf=$3 out=$4 status=${5:-good}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

serial=$(openssl x509 -in "$leaf" -noout -serial | sed 's/^serial=//')
subject=$(openssl x509 -in "$leaf" -noout -subject -nameopt compat | sed 's/^subject=//')
# The responder's database (the format of openssl ca's index.txt): V = valid,
# R = revoked since the given time. The expiry column is not consulted.
case $status in
good) printf 'V\t491231235959Z\t\t%s\tunknown\t%s\n' "$serial" "$subject" ;;
revoked) printf 'R\t491231235959Z\t200101000000Z\t%s\tunknown\t%s\n' "$serial" "$subject" ;;
*) echo "gen-ocsp.sh: status '$status': want good or revoked" >&2; exit 2 ;;
esac >"$tmp/index.txt"

if ! openssl ocsp -issuer "$ca" -cert "$leaf" -no_nonce -reqout "$tmp/req.der" \
        >"$tmp/log" 2>&1 ||
    ! openssl ocsp -index "$tmp/index.txt" -rsigner "$ca" -rkey "$cakey" -CA "$ca" \
        -reqin "$tmp/req.der" -respout "$out" -ndays 1 >>"$tmp/log" 2>&1; then
    echo "gen-ocsp.sh: openssl ocsp failed:" >&2
    cat "$tmp/log" >&2
    exit 1
fi
