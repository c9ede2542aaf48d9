/*
 * Put this directory first on the include path (pkg-config --cflags qtls does)
 * and <openssl/ssl.h> gives the system OpenSSL 3 declarations plus the QUIC
 * API that quictls-era sources expect to find there.
 */
#ifndef QTLS_COMPAT_OPENSSL_SSL_H
#define QTLS_COMPAT_OPENSSL_SSL_H
#include_next <openssl/ssl.h>
#include <openssl/quic.h> /* OPENSSL_INFO_QUIC, as quictls's ssl.h includes it */
#include <qtls/quic.h>
#endif
