/*
 * qtls's second front door: OpenSSL 3.5's API for third-party QUIC stacks
 * (SSL_set_quic_tls_cbs(3)), over the same handshake engine as the quictls API of qtls/quic.h.
 * An SSL uses one API or the other: a call of the other API's on it fails with
 * QTLS_R_QUIC_API_MIXED (950). Reached through the compat <openssl/ssl.h>, so that sources
 * written for OpenSSL 3.5 compile unchanged.
 */
#ifndef QTLS_QUIC_TLS35_H
#define QTLS_QUIC_TLS35_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <qtls/quic_tls35_dispatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The prot_level of yield_secret (3.5's <openssl/ssl.h>); direction 0 read, 1 write. */
#ifndef OSSL_RECORD_PROTECTION_LEVEL_NONE
#define OSSL_RECORD_PROTECTION_LEVEL_NONE 0
#define OSSL_RECORD_PROTECTION_LEVEL_EARLY 1
#define OSSL_RECORD_PROTECTION_LEVEL_HANDSHAKE 2
#define OSSL_RECORD_PROTECTION_LEVEL_APPLICATION 3
#endif

/* 3.5's reason when the dispatch table lacks one of the six callbacks (3.5's sslerr.h). */
#ifndef SSL_R_MISSING_QUIC_TLS_FUNCTIONS
#define SSL_R_MISSING_QUIC_TLS_FUNCTIONS 423
#endif

int SSL_set_quic_tls_cbs(SSL *s, const OSSL_DISPATCH *qtdis, void *arg);
int SSL_set_quic_tls_transport_params(SSL *s, const unsigned char *params, size_t params_len);
int SSL_set_quic_tls_early_data_enabled(SSL *s, int enabled);

/*
 * libssl functions newer than 3.0 that programs written for OpenSSL 3.5 call (ngtcp2's ossl
 * examples, among them), each real in qtls.
 */
#if OPENSSL_VERSION_NUMBER < 0x30200000L
/* OpenSSL 3.2: the TLS name of the group the handshake used ("x25519", "secp256r1", ...), NULL
   before it. */
const char *SSL_get0_group_name(SSL *s);
#endif

#ifdef __cplusplus
}
#endif
#endif /* QTLS_QUIC_TLS35_H */
