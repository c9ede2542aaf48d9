/*
 * Put this directory first on the include path (pkg-config --cflags qtls does)
 * and <openssl/ssl.h> gives the system OpenSSL 3 declarations plus the QUIC
 * API that quictls-era sources expect to find there, and OpenSSL 3.5's third-party QUIC API.
 */
#ifndef QTLS_COMPAT_OPENSSL_SSL_H
#define QTLS_COMPAT_OPENSSL_SSL_H
#include_next <openssl/ssl.h>
#include <openssl/quic.h> /* OPENSSL_INFO_QUIC, as quictls's ssl.h includes it */
#include <qtls/quic.h>
#include <qtls/quic_tls35.h> /* OpenSSL 3.5's SSL_set_quic_tls_cbs and friends */
#endif
