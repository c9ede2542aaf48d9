/*
 * libqtls_ngtcp2: an ngtcp2 0.12 crypto backend on qtls.
 *
 * It implements the whole of <ngtcp2/ngtcp2_crypto.h> (what
 * libngtcp2_crypto_gnutls and libngtcp2_crypto_openssl provide) with qtls as
 * the TLS stack, plus the four functions below, which mirror ngtcp2's quictls
 * backend (<ngtcp2/ngtcp2_crypto_openssl.h>) name for name: code written for
 * that backend moves over by renaming ngtcp2_crypto_openssl_* to
 * ngtcp2_crypto_qtls_* (and NGTCP2_CRYPTO_OPENSSL_ERR_* to
 * NGTCP2_CRYPTO_QTLS_ERR_*).
 *
 * How an application uses it (as with the quictls backend):
 *   - configure the SSL_CTX once with ngtcp2_crypto_qtls_configure_client_context()
 *     or ..._server_context() (TLS 1.3 only, and the backend's SSL_QUIC_METHOD);
 *   - give each SSL an ngtcp2_crypto_conn_ref as its app data
 *     (SSL_set_app_data(ssl, &conn_ref)), whose get_conn returns the connection,
 *     and pass the SSL to ngtcp2_conn_set_tls_native_handle();
 *   - use ngtcp2_crypto_client_initial_cb, ngtcp2_crypto_recv_crypto_data_cb,
 *     ngtcp2_crypto_encrypt_cb and the other ngtcp2_crypto_*_cb functions as
 *     the connection's callbacks.
 *
 * Native handles, for code that looks inside ngtcp2_crypto_ctx: the AEAD and
 * header-protection ciphers are libcrypto EVP_CIPHER pointers and the hash an
 * EVP_MD pointer, as in the quictls backend (header protection uses the
 * AES-ECB / ChaCha20 form of RFC 9001 §5.4; AES-CTR handles are accepted too).
 * The per-key contexts (ngtcp2_crypto_aead_ctx, ngtcp2_crypto_cipher_ctx) are
 * qtls's struct qtls_quic_aead and struct qtls_quic_hp (<qtls/quic_crypto.h>),
 * keyed once so that protecting a packet allocates nothing.
 *
 * Link with: pkg-config --cflags --libs qtls_ngtcp2 (-lqtls_ngtcp2 -lngtcp2 -lqtls -lcrypto).
 */
#ifndef NGTCP2_CRYPTO_QTLS_H
#define NGTCP2_CRYPTO_QTLS_H

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <openssl/ssl.h>
#include <qtls/quic.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Error codes of ngtcp2_crypto_read_write_crypto_data() beyond the generic -1
 * (ngtcp2 reserves codes below -10000 for the TLS backend; the values are the
 * quictls backend's): the handshake is paused in a certificate (X509 lookup)
 * or ClientHello callback and must be resumed by the application.
 */
#define NGTCP2_CRYPTO_QTLS_ERR_TLS_WANT_X509_LOOKUP -10001
#define NGTCP2_CRYPTO_QTLS_ERR_TLS_WANT_CLIENT_HELLO_CB -10002

/* The ngtcp2 level of a TLS encryption level; (ngtcp2_crypto_level)-1 if unknown. */
NGTCP2_EXTERN ngtcp2_crypto_level
ngtcp2_crypto_qtls_from_ossl_encryption_level(OSSL_ENCRYPTION_LEVEL ossl_level);

/* The TLS encryption level of an ngtcp2 level; (OSSL_ENCRYPTION_LEVEL)-1 if unknown. */
NGTCP2_EXTERN OSSL_ENCRYPTION_LEVEL
ngtcp2_crypto_qtls_from_ngtcp2_crypto_level(ngtcp2_crypto_level crypto_level);

/*
 * Prepares a server (or client) SSL_CTX for ngtcp2: TLS 1.3 only (RFC 9001
 * §4.2) and this backend's SSL_QUIC_METHOD, which installs each traffic
 * secret's keys in the connection, passes handshake bytes to it as CRYPTO
 * data and records TLS alerts. Returns 0, or -1 if the context refused.
 */
NGTCP2_EXTERN int ngtcp2_crypto_qtls_configure_server_context(SSL_CTX *ssl_ctx);
NGTCP2_EXTERN int ngtcp2_crypto_qtls_configure_client_context(SSL_CTX *ssl_ctx);

#ifdef __cplusplus
}
#endif

#endif /* NGTCP2_CRYPTO_QTLS_H */
