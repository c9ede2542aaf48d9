/*
 * libqtls_ngtcp2 internals: the per-backend layer that ngtcp2 0.12's
 * crypto/shared.h expects of a backend, and the generic key-installation
 * helpers built on it. These keep ngtcp2's internal names (so that a reader
 * of ngtcp2 finds each contract where it expects it) but are not exported
 * from libqtls_ngtcp2.so (src/ngtcp2/libqtls_ngtcp2.map); the static library
 * keeps them for the tests.
 */
#ifndef QTLS_NGTCP2_BACKEND_H
#define QTLS_NGTCP2_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "qtls/ngtcp2_crypto_qtls.h"
#include "qtls/quic_crypto.h"

/* RFC 9001 §6.6 and Appendix B: confidentiality (packets sealed with one key)
 * and integrity (failed openings over the connection) limits per AEAD. */
#define QN_MAX_ENCRYPTION_AES_GCM (1ULL << 23)
#define QN_MAX_ENCRYPTION_CHACHA20_POLY1305 (1ULL << 62) /* bounded by the packet number */
#define QN_MAX_ENCRYPTION_AES_CCM 2965820ULL           /* 2^21.5 */
#define QN_MAX_DECRYPTION_FAILURE_AES_GCM (1ULL << 52)
#define QN_MAX_DECRYPTION_FAILURE_CHACHA20_POLY1305 (1ULL << 36)
#define QN_MAX_DECRYPTION_FAILURE_AES_CCM 2965820ULL /* 2^21.5 */

/* Longest secret, packet key and IV any suite uses (SHA-384, AES-256 / ChaCha20, 12). */
#define QN_MAX_SECRET_LEN 64
#define QN_MAX_KEY_LEN 32

/* The qtls suite (QTLS_QUIC_SUITE_*) whose AEAD is `aead`, or 0 if none. */
uint32_t qn_aead_suite(const ngtcp2_crypto_aead *aead);
/* A qtls suite whose header protection is `hp` (AES-128, AES-256 or ChaCha20), or 0. */
uint32_t qn_hp_suite(const ngtcp2_crypto_cipher *hp);
/* The crypto context of a negotiated qtls suite; all handles NULL if the suite is unknown. */
ngtcp2_crypto_ctx *qn_ctx_for_suite(ngtcp2_crypto_ctx *ctx, uint32_t suite);

/* HKDF-Expand-Label with the "tls13 " prefix and an empty context (RFC 8446 §7.1). */
int qn_expand_label(uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                    const uint8_t *secret, size_t secretlen, const char *label);

/* The Retry Integrity Tag's AEAD and a context keyed with the version's fixed key. 0 or -1. */
int qn_retry_aead_ctx(ngtcp2_crypto_aead_ctx *aead_ctx, ngtcp2_crypto_aead *aead,
                      uint32_t version);

/* Frees an ngtcp2_crypto_aead_ctx / ngtcp2_crypto_cipher_ctx and clears its handle. */
void qn_aead_ctx_clear(ngtcp2_crypto_aead_ctx *aead_ctx);
void qn_cipher_ctx_clear(ngtcp2_crypto_cipher_ctx *cipher_ctx);

/* ---- ngtcp2 0.12 crypto/shared.h: what a backend provides to the generic layer ---- */

/* Initial packets: AES-128-GCM, SHA-256, AES-128 header protection (RFC 9001 §5.2). */
ngtcp2_crypto_ctx *ngtcp2_crypto_ctx_initial(ngtcp2_crypto_ctx *ctx);
/* Sets native_handle (an EVP_CIPHER) and max_overhead (the tag length). */
ngtcp2_crypto_aead *ngtcp2_crypto_aead_init(ngtcp2_crypto_aead *aead, void *aead_native_handle);
/* The Retry Integrity Tag's AEAD, AES-128-GCM (RFC 9001 §5.8). */
ngtcp2_crypto_aead *ngtcp2_crypto_aead_retry(ngtcp2_crypto_aead *aead);
ngtcp2_crypto_aead *ngtcp2_crypto_aead_aes_128_gcm(ngtcp2_crypto_aead *aead);
ngtcp2_crypto_md *ngtcp2_crypto_md_sha256(ngtcp2_crypto_md *md);

int ngtcp2_crypto_cipher_ctx_encrypt_init(ngtcp2_crypto_cipher_ctx *cipher_ctx,
                                          const ngtcp2_crypto_cipher *cipher, const uint8_t *key);
void ngtcp2_crypto_cipher_ctx_free(ngtcp2_crypto_cipher_ctx *cipher_ctx);

/* Fills data with datalen bytes from a CSPRNG; 0 or -1. */
int ngtcp2_crypto_random(uint8_t *data, size_t datalen);

/* Transport parameters through qtls (SSL_set_quic_transport_params and its peer getter). */
int ngtcp2_crypto_set_local_transport_params(void *tls, const uint8_t *buf, size_t len);
int ngtcp2_crypto_set_remote_transport_params(ngtcp2_conn *conn, void *tls);

/* Encodes the connection's transport parameters into its SSL (ClientHello or
 * EncryptedExtensions). 0 or -1. */
int qn_set_local_transport_params(ngtcp2_conn *conn);

/* ---- ngtcp2 0.12 crypto/shared.h: generic helpers on that layer ---- */

/*
 * RFC 9001 §5.2: the client's and server's Initial secrets for `version`
 * (its salt: v1, the v2 draft ngtcp2 0.12 speaks, or QUIC draft-29), as rx/tx
 * for `side`. `initial_secret` may be NULL. 0 or -1.
 */
int ngtcp2_crypto_derive_initial_secrets(uint32_t version, uint8_t *rx_secret, uint8_t *tx_secret,
                                         uint8_t *initial_secret, const ngtcp2_cid *client_dcid,
                                         ngtcp2_crypto_side side);

/*
 * RFC 9001 §5.1: packet key ("quic key"), IV ("quic iv") and, if hp is not
 * NULL, header-protection key ("quic hp") from a traffic secret; the v2 draft
 * uses "quicv2 ..." labels. 0 or -1.
 */
int ngtcp2_crypto_derive_packet_protection_key(uint8_t *key, uint8_t *iv, uint8_t *hp,
                                               uint32_t version, const ngtcp2_crypto_aead *aead,
                                               const ngtcp2_crypto_md *md, const uint8_t *secret,
                                               size_t secretlen);

/* RFC 9001 §6.1: the next 1-RTT secret, HKDF-Expand-Label(secret, "quic ku", "", len). */
int ngtcp2_crypto_update_traffic_secret(uint8_t *dest, const ngtcp2_crypto_md *md,
                                        const uint8_t *secret, size_t secretlen);

/*
 * Derives the Initial keys for `client_dcid` and installs them in `conn`
 * (and, for a client that has not seen a Retry, the Retry AEAD). Any of the
 * output buffers may be NULL; otherwise they receive the secrets (32 bytes),
 * keys and header-protection keys (16) and IVs (12). 0 or -1.
 */
int ngtcp2_crypto_derive_and_install_initial_key(ngtcp2_conn *conn, uint8_t *rx_secret,
                                                 uint8_t *tx_secret, uint8_t *initial_secret,
                                                 uint8_t *rx_key, uint8_t *rx_iv,
                                                 uint8_t *rx_hp_key, uint8_t *tx_key,
                                                 uint8_t *tx_iv, uint8_t *tx_hp_key,
                                                 uint32_t version, const ngtcp2_cid *client_dcid);

/* The same for the Initial keys of the version chosen by compatible version negotiation. */
int ngtcp2_crypto_derive_and_install_vneg_initial_key(
    ngtcp2_conn *conn, uint8_t *rx_secret, uint8_t *tx_secret, uint8_t *initial_secret,
    uint8_t *rx_key, uint8_t *rx_iv, uint8_t *rx_hp_key, uint8_t *tx_key, uint8_t *tx_iv,
    uint8_t *tx_hp_key, uint32_t version, const ngtcp2_cid *client_dcid);

#endif /* QTLS_NGTCP2_BACKEND_H */
