/*
 * quictls's <openssl/quic.h>: the feature-test macro consumers use to detect the quictls QUIC
 * API (nginx, HAProxy, Node.js test `#ifdef OPENSSL_INFO_QUIC`; some call
 * OPENSSL_info(OPENSSL_INFO_QUIC)). In quictls OPENSSL_info is libcrypto's and answers "QUIC";
 * the system libcrypto answers NULL for 2000, so sources built against this header call
 * qtls_quic_openssl_info instead, which answers "QUIC" and defers every other type to libcrypto.
 */
#ifndef QTLS_COMPAT_OPENSSL_QUIC_H
#define QTLS_COMPAT_OPENSSL_QUIC_H

#include <openssl/crypto.h>

#define OPENSSL_INFO_QUIC 2000

#ifdef __cplusplus
extern "C" {
#endif
#ifndef QTLS_DECLARED_QUIC_OPENSSL_INFO /* qtls/quic.h declares it too */
#define QTLS_DECLARED_QUIC_OPENSSL_INFO
const char *qtls_quic_openssl_info(int type);
#endif
#ifdef __cplusplus
}
#endif
#define OPENSSL_info(type) qtls_quic_openssl_info(type)

#endif
