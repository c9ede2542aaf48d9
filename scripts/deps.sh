#!/bin/sh
# deps.sh: makes sure the Debian packages qtls's build and tests need are
# installed. Quiet when they are. When some are missing: as root, installs
# them with apt-get; otherwise names them and exits 1.
#
#   gcc, make (or build-essential)  compiler and make
#   pkg-config                      finds libcrypto and writes qtls.pc users' flags
#   libssl-dev                      OpenSSL 3 libcrypto (qtls's only dependency)
#   libcmocka-dev                   the unit test framework
#   libgnutls28-dev                 the independent TLS 1.3 peer for interop tests
#   openssl                         the CLI, to make the test certificates
#   libngtcp2-dev, libnghttp3-dev   ngtcp2 0.12 and nghttp3 0.8: the ngtcp2 crypto
#                                   backend and the HTTP/3 examples (make check, make demo)
#
# ngtcp2's GnuTLS example client and server (ngtcp2-client, ngtcp2-server), the
# HTTP/3 peers of make check and make demo, are used from /usr when installed
# (CI installs them); otherwise scripts/h3peers.sh unpacks their .debs under
# build/ with apt-get download, without installing ngtcp2-server's service.
set -eu

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

missing=""
if ! installed build-essential && ! { installed gcc && installed make; }; then
    missing="build-essential"
fi
for pkg in pkg-config libssl-dev libcmocka-dev libgnutls28-dev openssl libngtcp2-dev \
    libnghttp3-dev; do
    installed "$pkg" || missing="$missing $pkg"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "deps.sh: installing $missing" >&2
    apt-get update
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
    exit 0
fi
echo "deps.sh: missing Debian packages; install them with:" >&2
echo "    sudo apt-get install -y $missing" >&2
exit 1
