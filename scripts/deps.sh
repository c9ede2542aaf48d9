#!/bin/sh
# deps.sh [--list] GROUP...: the Debian packages each make target needs, in
# one place. Every target that needs packages calls this first (the Makefile,
# tests/bogo/build-runner.sh, tests/ngtcp2/run.sh), and .ci/run asks it which
# packages a fresh machine must get (--list), so the lists cannot drift.
#
# Quiet when everything is installed. When packages are missing: as root,
# installs them all with one apt-get (after apt-get update); otherwise names
# them all in one "sudo apt-get install -y ..." line and exits 1, so that the
# caller stops before building anything. --list prints the packages of the
# groups, one per line, installed or not, and exits.
#
# Groups:
#   build     compiler, make, pkg-config, OpenSSL 3 libcrypto (qtls's only
#             dependency)
#   cc:NAME   the C compiler the build uses: cc:gcc (in build), cc:clang;
#             cc:clang-san adds clang's sanitizer runtimes
#   certs     the openssl CLI, for scripts/gen-certs.sh's test certificates
#   unit      cmocka, the unit test framework
#   compress  zlib, brotli and zstd: certificate compression (RFC 8879, src/crypto/compress.c),
#             optional for make, needed by make check and make fuzz
#   gnutls    GnuTLS 3.7, the in-process interop peer (test_gnutls, make bench)
#             and the TLS-over-TCP matrix's GnuTLS peer (tests/tcp/gnutls_peer.c)
#   tcp       Go, for the TLS-over-TCP matrix's crypto/tls peer (tests/tcp/go_peer,
#             the standard library only); its OpenSSL peer needs build's libssl-dev
#   ngtcp2    ngtcp2 0.12 and its crypto header (ngtcp2/ngtcp2_crypto.h):
#             libqtls_ngtcp2 and its test
#   h3        ngtcp2 + nghttp3: the HTTP/3 examples and tests/h3/e2e.sh. The
#             GnuTLS peers (gtlsclient, gtlsserver) are fetched with apt-get
#             download by scripts/h3peers.sh and unpacked, not installed:
#             ngtcp2-server's package would enable a system service.
#   callgrind valgrind, for make bench CALLGRIND=1
#   bogo      Go and its x/crypto, x/sys modules, to build BoGo's runner
#   pq        make pq: dpkg-source and xz for OpenSSL 3.5's source package
#             (tests/pq/ossl35.sh builds it, with perl's Configure); Go 1.24 is
#             unpacked from Debian 13's .debs (tests/pq/go124.sh), not installed
#   interop   what ngtcp2 0.12.1's source package needs to build its examples;
#             for tests/nginx/run.sh, PCRE2 (nginx's rewrite module) and the
#             clients h2load (nghttp2-client) and gnutls-cli (gnutls-bin)
#   curl      what curl 7.88.1's source package needs for tests/curl/run.sh's
#             build (nghttp2, nghttp3, zlib; ngtcp2 is built from source, qtls
#             is the only TLS library) and its checks (openssl s_server,
#             nghttpd from nghttp2-server, binutils' readelf and nm)
set -eu

packages() {
    case $1 in
    build) echo "make gcc libc6-dev pkg-config libssl-dev" ;;
    cc:gcc | cc:cc | cc:) ;;
    cc:clang) echo "clang" ;;
    cc:clang-san) echo "clang libclang-rt-14-dev" ;;
    cc:*) echo "deps.sh: no Debian package known for the compiler '${1#cc:}'" >&2; return 1 ;;
    certs) echo "openssl" ;;
    unit) echo "libcmocka-dev" ;;
    compress) echo "zlib1g-dev libbrotli-dev libzstd-dev" ;;
    gnutls) echo "libgnutls28-dev" ;;
    tcp) echo "golang-go" ;;
    ngtcp2) echo "libngtcp2-dev libngtcp2-crypto-gnutls-dev" ;;
    h3) echo "libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev" ;;
    callgrind) echo "valgrind" ;;
    bogo) echo "golang-go golang-golang-x-crypto-dev golang-golang-x-sys-dev xz-utils dpkg-dev" ;;
    pq) echo "dpkg-dev xz-utils perl" ;;
    interop)
        echo "autoconf automake libtool make g++ pkg-config dpkg-dev xz-utils openssl"
        echo "libssl-dev libnghttp3-dev libev-dev curl"
        echo "libpcre2-dev zlib1g-dev nghttp2-client gnutls-bin"
        ;;
    curl)
        echo "autoconf automake libtool make pkg-config dpkg-dev xz-utils openssl libssl-dev"
        echo "libnghttp2-dev libnghttp3-dev zlib1g-dev nghttp2-server binutils"
        ;;
    *) echo "deps.sh: unknown group '$1'" >&2; return 1 ;;
    esac
}

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

list=0
if [ "${1:-}" = --list ]; then
    list=1
    shift
fi
[ $# -gt 0 ] || { echo "usage: $0 [--list] GROUP..." >&2; exit 2; }

all=""
for group in "$@"; do
    pkgs=$(packages "$group") || exit 2
    for pkg in $pkgs; do
        case " $all " in *" $pkg "*) ;; *) all="$all $pkg" ;; esac
    done
done

if [ "$list" -eq 1 ]; then
    for pkg in $all; do echo "$pkg"; done
    exit 0
fi

missing=""
for pkg in $all; do
    installed "$pkg" || missing="$missing $pkg"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing Debian packages (for: $*). Install them with:" >&2
    echo "    sudo apt-get install -y $missing" >&2
    exit 1
fi
echo "deps.sh: installing $missing (for: $*)" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/qtls-deps.XXXXXX")
# shellcheck disable=SC2086 # one word per package
if apt-get update >"$log" 2>&1 && apt-get install -y --no-install-recommends $missing >>"$log" 2>&1; then
    rm -f "$log"
    echo "deps.sh: installed $missing" >&2
    exit 0
fi
tail -n 20 "$log" >&2
echo "deps.sh: apt-get could not install: $missing (full log: $log)" >&2
exit 1
