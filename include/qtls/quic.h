/*
 * qtls: the QUIC API of BoringSSL / quictls on a from-scratch TLS 1.3 engine.
 *
 * This header declares exactly the QUIC-TLS contract (see README.md). It is
 * meant to be reached through include/compat/openssl/ssl.h so that sources
 * written for quictls compile unchanged; it relies on <openssl/ssl.h> for
 * SSL, SSL_CTX and SSL_CIPHER.
 */
#ifndef QTLS_QUIC_H
#define QTLS_QUIC_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QTLS_VERSION_STRING "0.1.0"

/* quictls defines these in <openssl/ssl.h> ("used by Chromium/QUIC"). */
#define X25519_PRIVATE_KEY_LEN 32
#define X25519_PUBLIC_VALUE_LEN 32

/* OPENSSL_info(OPENSSL_INFO_QUIC) for quictls's 2000; other types go to libcrypto's OPENSSL_info.
   Declared once per translation unit (the compat <openssl/quic.h> declares it too), so that
   -Werror=redundant-decls builds (ngtcp2's --enable-werror) see one declaration. */
#ifndef QTLS_DECLARED_QUIC_OPENSSL_INFO
#define QTLS_DECLARED_QUIC_OPENSSL_INFO
const char *qtls_quic_openssl_info(int type);
#endif

/* The transport-parameter extension codepoints (RFC 9001 §8.2, and draft-27). */
#define TLSEXT_TYPE_quic_transport_parameters_draft 0xffa5
#define TLSEXT_TYPE_quic_transport_parameters 0x0039

/* quictls reason codes; nginx detects the quictls API by the second one. */
#define SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED 800
#define SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION 801

typedef enum ssl_encryption_level_t {
    ssl_encryption_initial = 0,
    ssl_encryption_early_data,
    ssl_encryption_handshake,
    ssl_encryption_application
} OSSL_ENCRYPTION_LEVEL;

/*
 * Exactly quictls's four members, in its order. No BoringSSL-style split
 * secret callbacks are appended: quictls code initialises this struct
 * positionally with four values, and any extra member makes that a
 * -Wmissing-field-initializers error in builds with -Wextra -Werror
 * (nginx's default flags, ngtcp2's --enable-werror).
 */
struct ssl_quic_method_st {
    int (*set_encryption_secrets)(SSL *ssl, OSSL_ENCRYPTION_LEVEL level,
                                  const uint8_t *read_secret, const uint8_t *write_secret,
                                  size_t secret_len);
    int (*add_handshake_data)(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                              size_t len);
    int (*flush_flight)(SSL *ssl);
    int (*send_alert)(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert);
};
typedef struct ssl_quic_method_st SSL_QUIC_METHOD;

int SSL_CTX_set_quic_method(SSL_CTX *ctx, const SSL_QUIC_METHOD *quic_method);
int SSL_set_quic_method(SSL *ssl, const SSL_QUIC_METHOD *quic_method);
int SSL_is_quic(const SSL *ssl);

int SSL_set_quic_transport_params(SSL *ssl, const uint8_t *params, size_t params_len);
void SSL_get_peer_quic_transport_params(const SSL *ssl, const uint8_t **out_params,
                                        size_t *out_params_len);
void SSL_set_quic_transport_version(SSL *ssl, int version);
int SSL_get_quic_transport_version(const SSL *ssl);
int SSL_get_peer_quic_transport_version(const SSL *ssl);
void SSL_set_quic_use_legacy_codepoint(SSL *ssl, int use_legacy);

OSSL_ENCRYPTION_LEVEL SSL_quic_read_level(const SSL *ssl);
OSSL_ENCRYPTION_LEVEL SSL_quic_write_level(const SSL *ssl);
size_t SSL_quic_max_handshake_flight_len(const SSL *ssl, OSSL_ENCRYPTION_LEVEL level);

int SSL_provide_quic_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                          size_t len);
int SSL_process_quic_post_handshake(SSL *ssl);

void SSL_set_quic_early_data_enabled(SSL *ssl, int enabled);
int SSL_set_quic_early_data_context(SSL *ssl, const uint8_t *context, size_t context_len);

/*
 * BoringSSL's account of why 0-RTT was accepted or not, with BoringSSL's values, on both
 * roles. Meaningful once the handshake has progressed far enough to decide (the client: after
 * EncryptedExtensions; the server: after the ClientHello). qtls-specific refusals map to the
 * nearest value: the server's allow_early_data callback saying no is "disabled", a replayed
 * ticket "unsupported_for_session", an SNI change "quic_parameter_mismatch".
 */
enum ssl_early_data_reason_t {
    ssl_early_data_unknown = 0,                 /* not decided (yet) */
    ssl_early_data_disabled = 1,                /* 0-RTT not enabled on this side */
    ssl_early_data_accepted = 2,
    ssl_early_data_protocol_version = 3,        /* not TLS 1.3 (never in QUIC) */
    ssl_early_data_peer_declined = 4,           /* the peer did not offer / accept it */
    ssl_early_data_no_session_offered = 5,
    ssl_early_data_session_not_resumed = 6,
    ssl_early_data_unsupported_for_session = 7, /* the ticket does not allow 0-RTT */
    ssl_early_data_hello_retry_request = 8,
    ssl_early_data_alpn_mismatch = 9,
    ssl_early_data_channel_id = 10,             /* never in qtls */
    /* 11 is reserved (BoringSSL's former token binding) */
    ssl_early_data_ticket_age_skew = 12,
    ssl_early_data_quic_parameter_mismatch = 13,
    ssl_early_data_alps_mismatch = 14,          /* never in qtls */
    ssl_early_data_reason_max_value = ssl_early_data_alps_mismatch,
};
enum ssl_early_data_reason_t SSL_get_early_data_reason(const SSL *ssl);
/* BoringSSL's names ("accepted", "peer_declined", ...); NULL for a value out of range. */
const char *SSL_early_data_reason_string(enum ssl_early_data_reason_t reason);

/*
 * BoringSSL's SSL_CTX_set_reverify_on_resume: a client resuming a session runs certificate
 * verification (SSL_CTX_set_cert_verify_callback, or X509_verify_cert and the verify callback)
 * again on the session's peer certificate: before its 0-RTT keys are installed when it offers
 * early data, and after EncryptedExtensions when 0-RTT was not accepted. Off by default.
 */
void SSL_CTX_set_reverify_on_resume(SSL_CTX *ctx, int enabled);

/*
 * BoringSSL's SSL_CTX_set_grease_enabled (RFC 8701): a client puts GREASE values in its
 * ClientHello's cipher suites, groups and key share, signature algorithms, versions, PSK modes
 * and two extensions, the same values again after HelloRetryRequest; a server puts one empty
 * GREASE extension in each NewSessionTicket. Off by default (quictls).
 * SSL_new copies the context's setting; SSL_set_grease_enabled changes one connection's.
 */
void SSL_CTX_set_grease_enabled(SSL_CTX *ctx, int enabled);
void SSL_set_grease_enabled(SSL *ssl, int enabled);

/*
 * BoringSSL's signed certificate timestamp lists (RFC 6962 §3.3; in TLS 1.3 they travel in the
 * leaf's CertificateEntry, RFC 8446 §4.4.2.1). A client asks for them with
 * SSL_CTX_enable_signed_cert_timestamps / SSL_enable_signed_cert_timestamps and reads the server's
 * list, unchecked against any log, with SSL_get0_signed_cert_timestamp_list (a resumption answers
 * the session's). A server sends the list given to SSL_CTX_set_signed_cert_timestamp_list /
 * SSL_set_signed_cert_timestamp_list (the connection's first) to clients that ask; a list that is
 * not well formed (empty, or an empty SCT) is refused with "invalid sct list".
 */
void SSL_CTX_enable_signed_cert_timestamps(SSL_CTX *ctx);
void SSL_enable_signed_cert_timestamps(SSL *ssl);
void SSL_get0_signed_cert_timestamp_list(const SSL *ssl, const uint8_t **out, size_t *out_len);
int SSL_CTX_set_signed_cert_timestamp_list(SSL_CTX *ctx, const uint8_t *list, size_t list_len);
int SSL_set_signed_cert_timestamp_list(SSL *ssl, const uint8_t *list, size_t list_len);

int SSL_CIPHER_get_prf_nid(const SSL_CIPHER *cipher);

/*
 * Certificate compression (RFC 8879), with OpenSSL 3.2's API; OpenSSL 3.0's headers lack it.
 * Off until a preference list is set (SSL_CTX_set1_cert_comp_preference or BoringSSL's
 * SSL_CTX_add_cert_compression_alg): then a client offers those algorithms in its ClientHello
 * and a server in its CertificateRequest, and either compresses its Certificate with the first
 * of its list the peer offered. SSL_OP_NO_TX/RX_CERTIFICATE_COMPRESSION turn off sending
 * compressed / accepting compressed certificates. Algorithms qtls was built without are left
 * out of the lists (make says which).
 */
#ifndef TLSEXT_TYPE_compress_certificate
#define TLSEXT_TYPE_compress_certificate 27
#endif
#ifndef TLSEXT_comp_cert_none
#define TLSEXT_comp_cert_none 0
#define TLSEXT_comp_cert_zlib 1
#define TLSEXT_comp_cert_brotli 2
#define TLSEXT_comp_cert_zstd 3
#define TLSEXT_comp_cert_limit 4
#endif
#ifndef SSL_OP_NO_TX_CERTIFICATE_COMPRESSION
#define SSL_OP_NO_TX_CERTIFICATE_COMPRESSION ((uint64_t)1 << 32)
#define SSL_OP_NO_RX_CERTIFICATE_COMPRESSION ((uint64_t)1 << 33)
#endif
int SSL_CTX_set1_cert_comp_preference(SSL_CTX *ctx, int *algs, size_t len);
int SSL_set1_cert_comp_preference(SSL *ssl, int *algs, size_t len);
/* Compresses the current certificate chain now with alg (0: each algorithm of the list). */
int SSL_CTX_compress_certs(SSL_CTX *ctx, int alg);
int SSL_compress_certs(SSL *ssl, int alg);
/* The compressed Certificate of the current chain (OPENSSL_free *data); 0 if none. */
size_t SSL_CTX_get1_compressed_cert(SSL_CTX *ctx, int alg, unsigned char **data,
                                    size_t *orig_len);
/* Installs a chain compressed elsewhere; used when it decompresses to this context's chain. */
int SSL_CTX_set1_compressed_cert(SSL_CTX *ctx, int algorithm, unsigned char *comp_data,
                                 size_t comp_length, size_t orig_length);
/* The algorithm the client's / server's Certificate came in (TLSEXT_comp_cert_none if none). */
int SSL_get_negotiated_client_cert_comp(SSL *s);
int SSL_get_negotiated_server_cert_comp(SSL *s);

/*
 * BoringSSL's SSL_CTX_add_cert_compression_alg, which QUIC stacks' BoringSSL code calls with
 * their own brotli or zlib functions: qtls adds alg_id to the context's list and uses its own
 * implementation of that RFC 8879 algorithm (the callbacks are not called; CBB and
 * CRYPTO_BUFFER are BoringSSL's types). Fails for an algorithm qtls was not built with.
 */
typedef struct cbb_st CBB;
typedef struct crypto_buffer_st CRYPTO_BUFFER;
typedef int (*ssl_cert_compression_func_t)(SSL *ssl, CBB *out, const uint8_t *in, size_t in_len);
typedef int (*ssl_cert_decompression_func_t)(SSL *ssl, CRYPTO_BUFFER **out,
                                             size_t uncompressed_len, const uint8_t *in,
                                             size_t in_len);
int SSL_CTX_add_cert_compression_alg(SSL_CTX *ctx, uint16_t alg_id,
                                     ssl_cert_compression_func_t compress,
                                     ssl_cert_decompression_func_t decompress);

#ifdef __cplusplus
}
#endif
#endif /* QTLS_QUIC_H */
