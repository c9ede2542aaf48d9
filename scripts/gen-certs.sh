#!/bin/sh
# gen-certs.sh DIR: throwaway test PKI for qtls's tests and demo.
#
# Writes into DIR only, once (DIR/done marks a complete run), and prints
# nothing unless something fails. Every key is fresh: nothing here is a
# secret worth keeping.
#
#   ca.pem/.key            root CA, ECDSA P-256, CN "qtls test CA"
#   inter.pem/.key         intermediate CA signed by the root
#   ecdsa256 ecdsa384 rsa ed25519   server leaves signed by the root, each
#                          with NAME.pem, NAME.key and NAME-chain.pem (the leaf
#                          alone: the root is not sent, RFC 8446 §4.4.2)
#   ecdsa256-inter.pem/.key and ecdsa256-inter-chain.pem (leaf, then inter)
#   other-ca.pem/.key      an unrelated root, for "untrusted" tests
#   other-leaf.pem/.key    a server leaf signed by other-ca
#   expired.pem/.key       a server leaf signed by the root, expired in 2020
#   client.pem/.key        client leaf (clientAuth), CN "qtls test client"
#
# Server leaves carry subjectAltName DNS:localhost, DNS:server.example,
# IP:127.0.0.1.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
[ -f "$dir/done" ] && exit 0
mkdir -p "$dir"

tmp="$dir/.gen-certs.$$"
rm -rf "$tmp"
mkdir -p "$tmp/db"
: >"$tmp/db/index.txt"
log="$tmp/log"
trap 'rm -rf "$tmp"' EXIT

# Runs openssl quietly; on failure shows what it said and stops.
ossl() {
    if ! openssl "$@" >>"$log" 2>&1; then
        echo "gen-certs.sh: openssl $1 failed:" >&2
        cat "$log" >&2
        exit 1
    fi
}

# One configuration for everything, so the system openssl.cnf plays no part.
cnf="$tmp/qtls.cnf"
cat >"$cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
default_ca = ca_sect
[ca_sect]
database = $tmp/db/index.txt
new_certs_dir = $tmp/db
rand_serial = yes
default_md = sha256
policy = pol
unique_subject = no
copy_extensions = none
[pol]
commonName = supplied
[root_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[inter_ext]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:server.example, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

# key NAME ALG: writes $tmp/NAME.key (ec256, ec384, rsa, ed25519).
key() {
    case $2 in
    ec256) ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/$1.key" ;;
    ec384) ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$tmp/$1.key" ;;
    rsa) ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/$1.key" ;;
    ed25519) ossl genpkey -algorithm ED25519 -out "$tmp/$1.key" ;;
    esac
}

# root NAME CN: a self-signed root CA.
root() {
    key "$1" ec256
    ossl req -config "$cnf" -x509 -new -key "$tmp/$1.key" -subj "/CN=$2" -days 3650 \
        -extensions root_ext -out "$tmp/$1.pem"
}

# issue NAME ALG ISSUER EXT CN: a certificate for a fresh key, signed by ISSUER.
issue() {
    key "$1" "$2"
    ossl req -config "$cnf" -new -key "$tmp/$1.key" -subj "/CN=$5" -days 3650 \
        -CA "$tmp/$3.pem" -CAkey "$tmp/$3.key" -extensions "$4" -out "$tmp/$1.pem"
}

root ca "qtls test CA"
root other-ca "qtls other CA"
issue inter ec256 ca inter_ext "qtls test intermediate"

for leaf in ecdsa256:ec256 ecdsa384:ec384 rsa:rsa ed25519:ed25519; do
    name=${leaf%%:*}
    issue "$name" "${leaf#*:}" ca server_ext "qtls test server $name"
    cp "$tmp/$name.pem" "$tmp/$name-chain.pem"
done

issue ecdsa256-inter ec256 inter server_ext "qtls test server via intermediate"
cat "$tmp/ecdsa256-inter.pem" "$tmp/inter.pem" >"$tmp/ecdsa256-inter-chain.pem"

issue other-leaf ec256 other-ca server_ext "qtls test server of other CA"
issue client ec256 ca client_ext "qtls test client"

# The expired leaf: OpenSSL 3.0's req/x509 cannot backdate, `openssl ca` can.
key expired ec256
ossl req -config "$cnf" -new -key "$tmp/expired.key" -subj "/CN=qtls test expired" \
    -out "$tmp/expired.csr"
ossl ca -batch -notext -config "$cnf" -cert "$tmp/ca.pem" -keyfile "$tmp/ca.key" \
    -in "$tmp/expired.csr" -startdate 20200101000000Z -enddate 20200201000000Z \
    -extensions server_ext -out "$tmp/expired.pem"

for f in "$tmp"/*.pem "$tmp"/*.key; do
    mv -f "$f" "$dir/"
done
: >"$dir/done"
