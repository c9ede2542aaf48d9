#!/bin/sh
# install-compat.sh PREFIX BUILD [CC]: turns a `make install` prefix into an OpenSSL-style
# prefix, for build systems that take an OpenSSL directory (--with-openssl=DIR,
# OPENSSL_ROOT_DIR, PKG_CONFIG_PATH=DIR/lib/pkgconfig) and must not be modified. make
# install-compat runs `make install` and then this; DESTDIR is honoured as there.
#
#   include/openssl/  the libssl headers are qtls's compat headers (include/compat/openssl:
#                     ssl.h, quic.h, tls1.h, sslerr.h; each includes the system's with
#                     #include_next and adds quictls's declarations); every other header of
#                     the system's OpenSSL (libcrypto's, and libssl's that quictls does not
#                     change: ssl3.h, dtls1.h, ...) is a symlink to the system's file. The
#                     directory is complete, so <openssl/evp.h> resolves whether or not the
#                     system directory is also on the include path, and probes that read
#                     DIR/include/openssl/opensslv.h (CMake's FindOpenSSL) find the version.
#   lib/libssl.so     -> libqtls.so.0: -L DIR/lib -lssl links qtls, and the program records
#   lib/libssl.a      -> libqtls.a     libqtls.so.0 as NEEDED (its soname), never libssl.so.3.
#   lib/libcrypto.so  -> the system's libcrypto.so.3 (and libcrypto.a when it exists).
#   lib/pkgconfig/    libssl.pc (qtls: -lqtls, Cflags -I DIR/include), libcrypto.pc (the
#                     system's library; its Cflags name DIR/include too, whose libcrypto
#                     headers are the system's), openssl.pc (both). Their Version is the
#                     system libcrypto's: qtls implements that release's libssl API.
#
# No libssl.so.3 is made: a program linked against the system's libssl must keep loading it,
# whatever LD_LIBRARY_PATH says.
set -eu

if [ $# -lt 2 ]; then
    echo "usage: $0 PREFIX BUILD_DIR [CC]" >&2
    exit 2
fi
PREFIX=$1
BUILD=$2
CC=${3:-cc}
DEST=${DESTDIR:-}$PREFIX
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() {
    echo "install-compat: $*" >&2
    exit 1
}

command -v pkg-config >/dev/null 2>&1 || die "needs pkg-config: sudo apt-get install -y pkg-config"
pkg-config --exists libcrypto ||
    die "pkg-config finds no libcrypto: sudo apt-get install -y libssl-dev"
[ -f "$DEST/lib/libqtls.so.0" ] || die "$DEST/lib/libqtls.so.0 is missing: run make install first"

# The system's OpenSSL header directories, as the compiler finds them (Debian splits them:
# /usr/include/openssl and /usr/include/<multiarch>/openssl for configuration.h).
sys_incdirs=$(printf '#include <openssl/opensslv.h>\n#include <openssl/configuration.h>\n' |
    $CC -E -x c - 2>/dev/null |
    sed -n 's|^# [0-9][0-9]* "\(/.*\)/openssl/[^/]*\.h".*|\1/openssl|p' | sort -u)
[ -n "$sys_incdirs" ] || die "$CC finds no <openssl/opensslv.h>: sudo apt-get install -y libssl-dev"

install -d "$DEST/include/openssl" "$DEST/lib/pkgconfig"
inc=$(cd "$DEST/include/openssl" && pwd -P)
for d in $sys_incdirs; do
    [ "$(cd "$d" && pwd -P)" != "$inc" ] ||
        die "PREFIX $PREFIX would replace the system's OpenSSL headers in $d"
done

# The system's headers first (symlinks), then qtls's compat headers over their names.
for d in $sys_incdirs; do
    for h in "$d"/*.h; do
        ln -sfn "$h" "$DEST/include/openssl/$(basename "$h")"
    done
done
for h in "$ROOT"/include/compat/openssl/*.h; do
    rm -f "$DEST/include/openssl/$(basename "$h")"
    install -m 644 "$h" "$DEST/include/openssl/"
done

sys_libdir=$(pkg-config --variable=libdir libcrypto)
[ -e "$sys_libdir/libcrypto.so" ] ||
    die "no $sys_libdir/libcrypto.so: sudo apt-get install -y libssl-dev"
ln -sfn libqtls.so.0 "$DEST/lib/libssl.so"
ln -sfn libqtls.a "$DEST/lib/libssl.a"
ln -sfn "$(readlink -f "$sys_libdir/libcrypto.so")" "$DEST/lib/libcrypto.so"
if [ -e "$sys_libdir/libcrypto.a" ]; then
    ln -sfn "$sys_libdir/libcrypto.a" "$DEST/lib/libcrypto.a"
fi

version=$(pkg-config --modversion libcrypto)
qtls_version=$(sed -n 's/^#define QTLS_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/qtls/quic.h")
crypto_private=$(pkg-config --libs --static libcrypto | sed 's/-L[^ ]*//g; s/-lcrypto//g; s/^ *//')

cat >"$DEST/lib/pkgconfig/libssl.pc" <<EOF
prefix=$PREFIX
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: OpenSSL-libssl
Description: qtls $qtls_version: TLS 1.3 for QUIC with the quictls API, in place of libssl
Version: $version
Requires.private: libcrypto
Libs: -L\${libdir} -lqtls
Cflags: -I\${includedir}
EOF

cat >"$DEST/lib/pkgconfig/libcrypto.pc" <<EOF
prefix=$PREFIX
includedir=\${prefix}/include
libdir=$sys_libdir
enginesdir=$(pkg-config --variable=enginesdir libcrypto)
modulesdir=$(pkg-config --variable=modulesdir libcrypto)

Name: OpenSSL-libcrypto
Description: OpenSSL cryptography library (the system's, with qtls's OpenSSL-style headers)
Version: $version
Libs: -L\${libdir} -lcrypto
Libs.private: $crypto_private
Cflags: -I\${includedir}
EOF

cat >"$DEST/lib/pkgconfig/openssl.pc" <<EOF
prefix=$PREFIX
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: OpenSSL
Description: qtls $qtls_version in place of libssl, with the system's libcrypto
Version: $version
Requires: libssl libcrypto
EOF

echo "install-compat: OpenSSL-style prefix in $DEST (libssl -> qtls, libcrypto -> $sys_libdir)"
