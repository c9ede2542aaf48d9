/*
 * OpenSSL 3.5's dispatch ids and callback types for SSL_set_quic_tls_cbs, which 3.5 declares in
 * <openssl/core_dispatch.h>. The system's OpenSSL 3.0 header lacks them: qtls's compat
 * <openssl/core_dispatch.h> includes the system's, then this. Same ids and types as 3.5's
 * (SSL_set_quic_tls_cbs(3)); a 3.5 header seen first wins (the guard is its first id).
 */
#ifndef QTLS_QUIC_TLS35_DISPATCH_H
#define QTLS_QUIC_TLS35_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>
#include <openssl/core.h>
#include <openssl/core_dispatch.h>

/* OpenSSL 3.2's end marker of a dispatch table (<openssl/core.h>), which 3.5 programs use
   (ngtcp2's ossl backend ends its table with it); the system's 3.0 lacks it. */
#ifndef OSSL_DISPATCH_END
#define OSSL_DISPATCH_END {0, NULL}
#endif

#ifndef OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND
#define OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND 2001
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_crypto_send,
                    (SSL *s, const unsigned char *buf, size_t buf_len, size_t *consumed,
                     void *arg))
#define OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD 2002
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_crypto_recv_rcd,
                    (SSL *s, const unsigned char **buf, size_t *bytes_read, void *arg))
#define OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD 2003
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_crypto_release_rcd, (SSL *s, size_t bytes_read, void *arg))
#define OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET 2004
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_yield_secret,
                    (SSL *s, uint32_t prot_level, int direction, const unsigned char *secret,
                     size_t secret_len, void *arg))
#define OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS 2005
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_got_transport_params,
                    (SSL *s, const unsigned char *params, size_t params_len, void *arg))
#define OSSL_FUNC_SSL_QUIC_TLS_ALERT 2006
OSSL_CORE_MAKE_FUNC(int, SSL_QUIC_TLS_alert, (SSL *s, unsigned char alert_code, void *arg))
#endif

#endif
