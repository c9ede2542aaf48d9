/*
 * qtls QUIC packet protection helpers (RFC 9001 §5, RFC 9369 §3.3), on
 * libcrypto.
 *
 * A QUIC stack gets traffic secrets from the TLS handshake (the
 * SSL_QUIC_METHOD callbacks in <qtls/quic.h>) and protects its packets
 * itself. These helpers do that work:
 *
 *   - Initial secrets from the client's Destination Connection ID (§5.2);
 *   - packet key, IV and header-protection key from a traffic secret (§5.1);
 *   - AEAD seal/open of a payload with the packet-number nonce (§5.3);
 *   - the header-protection mask and its application (§5.4);
 *   - the next-generation secret for a key update (§6.1);
 *   - the Retry Integrity Tag (§5.8).
 *
 * Versions: QUIC v1 (0x00000001, RFC 9001) and QUIC v2 (0x6b3343cf,
 * RFC 9369), which differ only in the Initial salt, the HKDF labels
 * ("quicv2 key" etc.) and the Retry key and nonce.
 *
 * Suites are named by their OpenSSL cipher id, as SSL_CIPHER_get_id()
 * returns it for the cipher the TLS callbacks report: 0x03001301
 * (TLS_AES_128_GCM_SHA256), 0x03001302 (TLS_AES_256_GCM_SHA384),
 * 0x03001303 (TLS_CHACHA20_POLY1305_SHA256), 0x03001304
 * (TLS_AES_128_CCM_SHA256). TLS_AES_128_CCM_8_SHA256 is refused (RFC 9001
 * §5.3: its 8-byte tag cannot be used with QUIC header protection).
 *
 * Key objects (struct qtls_quic_aead, struct qtls_quic_hp) hold cipher
 * contexts initialised once with the key; protecting or unprotecting a packet
 * only sets the nonce or sample, and allocates nothing. One object must not
 * be used from two threads at once.
 *
 * Unless stated otherwise, functions return 1 on success and 0 on failure,
 * with an ERR_LIB_SSL error on the OpenSSL error queue. Objects wipe their
 * key material when freed.
 */
#ifndef QTLS_QUIC_CRYPTO_H
#define QTLS_QUIC_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QTLS_QUIC_VERSION_1 0x00000001u /* RFC 9000 */
#define QTLS_QUIC_VERSION_2 0x6b3343cfu /* RFC 9369 §3.1 */

/* The suites, as SSL_CIPHER_get_id() (0x03000000 | IANA value). */
#define QTLS_QUIC_SUITE_AES_128_GCM_SHA256 0x03001301u
#define QTLS_QUIC_SUITE_AES_256_GCM_SHA384 0x03001302u
#define QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256 0x03001303u
#define QTLS_QUIC_SUITE_AES_128_CCM_SHA256 0x03001304u

#define QTLS_QUIC_INITIAL_SECRET_LEN 32 /* SHA-256 (RFC 9001 §5.2) */
#define QTLS_QUIC_MAX_SECRET_LEN 48     /* SHA-384 */
#define QTLS_QUIC_MAX_KEY_LEN 32        /* packet and header-protection keys */
#define QTLS_QUIC_IV_LEN 12             /* every supported AEAD's nonce length */
#define QTLS_QUIC_TAG_LEN 16            /* every supported AEAD's tag length */
#define QTLS_QUIC_HP_SAMPLE_LEN 16      /* RFC 9001 §5.4.2 */
#define QTLS_QUIC_HP_MASK_LEN 5         /* first byte + up to 4 packet-number bytes */
#define QTLS_QUIC_RETRY_TAG_LEN 16      /* RFC 9001 §5.8 */

/* 1 if `version` is QUIC v1 or v2, else 0 (no error queued). */
int qtls_quic_version_supported(uint32_t version);

/* The suite's hash length, i.e. the length of its traffic secrets; 0 if unknown. */
size_t qtls_quic_suite_secret_len(uint32_t suite);

/* The suite's AEAD key length, which is also its header-protection key length; 0 if unknown. */
size_t qtls_quic_suite_key_len(uint32_t suite);

/*
 * RFC 9001 §5.2: the client and server Initial secrets (32 bytes each) for the
 * Destination Connection ID of the client's first Initial packet:
 *   initial_secret = HKDF-Extract(initial_salt, dcid)
 *   client_initial_secret = HKDF-Expand-Label(initial_secret, "client in", "", 32)
 *   server_initial_secret = HKDF-Expand-Label(initial_secret, "server in", "", 32)
 * Initial packets then use QTLS_QUIC_SUITE_AES_128_GCM_SHA256 with these secrets.
 */
int qtls_quic_initial_secrets(uint32_t version, const uint8_t *dcid, size_t dcid_len,
                              uint8_t *client_secret, uint8_t *server_secret);

/*
 * RFC 9001 §5.1, RFC 9369 §3.3.2: key, IV and header-protection key from a
 * traffic secret (secret_len must be the suite's hash length). `key` and `hp`
 * receive qtls_quic_suite_key_len(suite) bytes, `iv` QTLS_QUIC_IV_LEN bytes;
 * any of them may be NULL if not wanted.
 */
int qtls_quic_derive_packet_keys(uint32_t version, uint32_t suite, const uint8_t *secret,
                                 size_t secret_len, uint8_t *key, uint8_t *iv, uint8_t *hp);

/*
 * RFC 9001 §6.1: the next generation's secret after a key update,
 * HKDF-Expand-Label(secret, "quic ku" / "quicv2 ku", "", secret_len), written
 * to `out` (secret_len bytes; may be `secret` itself). The header-protection
 * key does not change on a key update.
 */
int qtls_quic_key_update_secret(uint32_t version, uint32_t suite, const uint8_t *secret,
                                size_t secret_len, uint8_t *out);

/* ---- Packet protection (RFC 9001 §5.3) ---- */

struct qtls_quic_aead;

/* A packet-protection key: the suite's AEAD keyed for sealing and for opening, and the IV. */
struct qtls_quic_aead *qtls_quic_aead_new(uint32_t suite, const uint8_t *key, size_t key_len,
                                          const uint8_t *iv, size_t iv_len);
/* The same, with key and IV derived from a traffic secret (qtls_quic_derive_packet_keys). */
struct qtls_quic_aead *qtls_quic_aead_new_from_secret(uint32_t version, uint32_t suite,
                                                      const uint8_t *secret, size_t secret_len);
/* Frees the object and wipes its keys. NULL is ignored. */
void qtls_quic_aead_free(struct qtls_quic_aead *aead);

/*
 * Seals `in_len` bytes of payload for packet number `pn` with the header as
 * AAD: nonce = IV XOR pn (left-padded to the IV length, RFC 9001 §5.3).
 * Writes in_len + QTLS_QUIC_TAG_LEN bytes to `out` (ciphertext then tag);
 * `out` may equal `in` (in place) but must not otherwise overlap it.
 */
int qtls_quic_aead_seal(struct qtls_quic_aead *aead, uint64_t pn, const uint8_t *aad,
                        size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out);

/*
 * Opens `in_len` bytes (ciphertext then tag, in_len >= QTLS_QUIC_TAG_LEN) of
 * packet `pn`, writing in_len - QTLS_QUIC_TAG_LEN bytes of plaintext to `out`
 * (which may equal `in`). Fails with SSL_R_DECRYPTION_FAILED if the tag does
 * not verify; `out` is then wiped.
 */
int qtls_quic_aead_open(struct qtls_quic_aead *aead, uint64_t pn, const uint8_t *aad,
                        size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out);

/*
 * The same two operations with a caller-built QTLS_QUIC_IV_LEN-byte nonce
 * instead of a packet number (the object's IV is not used), for stacks such
 * as ngtcp2 that compute the nonce themselves.
 */
int qtls_quic_aead_seal_nonce(struct qtls_quic_aead *aead, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out);
int qtls_quic_aead_open_nonce(struct qtls_quic_aead *aead, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out);

/* ---- Header protection (RFC 9001 §5.4) ---- */

struct qtls_quic_hp;

/* A header-protection key: AES-128/256-ECB or ChaCha20, per the suite (§5.4.3, §5.4.4). */
struct qtls_quic_hp *qtls_quic_hp_new(uint32_t suite, const uint8_t *hp_key, size_t key_len);
/* The same, with the key derived from a traffic secret ("quic hp" / "quicv2 hp"). */
struct qtls_quic_hp *qtls_quic_hp_new_from_secret(uint32_t version, uint32_t suite,
                                                  const uint8_t *secret, size_t secret_len);
/* Frees the object and wipes its key. NULL is ignored. */
void qtls_quic_hp_free(struct qtls_quic_hp *hp);

/*
 * The 5-byte mask from a 16-byte sample: AES-ECB(hp_key, sample)[0..5], or for
 * ChaCha20 the keystream with counter = sample[0..4] (little-endian) and
 * nonce = sample[4..16], i.e. ChaCha20(hp_key, counter, nonce, {0,0,0,0,0}).
 */
int qtls_quic_hp_mask(struct qtls_quic_hp *hp, const uint8_t *sample, uint8_t *mask);

/*
 * Applies header protection in place to a packet whose header and payload
 * are already written and sealed. `pn_offset` is the offset of the packet
 * number (after the Length field of a long header, after the Destination
 * Connection ID of a short header); the packet-number length is read from the
 * unprotected first byte. The sample starts at pn_offset + 4 (§5.4.2), so
 * pkt_len must be at least pn_offset + 4 + 16. The first byte is masked in
 * its low 4 bits for a long header (0x80 set) and in its low 5 bits for a
 * short header.
 */
int qtls_quic_hp_apply(struct qtls_quic_hp *hp, uint8_t *pkt, size_t pkt_len, size_t pn_offset);

/*
 * Removes header protection in place and sets *pn_len to the packet-number
 * length (1..4) now readable in the first byte. The caller checks the
 * reserved bits only after the payload authenticates (RFC 9000 §17.2).
 */
int qtls_quic_hp_remove(struct qtls_quic_hp *hp, uint8_t *pkt, size_t pkt_len, size_t pn_offset,
                        size_t *pn_len);

/* ---- Whole packets ---- */

/*
 * Protects a packet in place. pkt[0, hdr_len) is the unprotected header,
 * ending with the packet number in (pkt[0] & 3) + 1 bytes; pkt[hdr_len,
 * hdr_len + payload_len) is the payload, sealed in place with `pn` and the
 * header as AAD; the tag is written after it (the buffer needs
 * hdr_len + payload_len + QTLS_QUIC_TAG_LEN bytes, which is the packet's
 * protected length); then header protection is applied.
 */
int qtls_quic_packet_protect(struct qtls_quic_aead *aead, struct qtls_quic_hp *hp, uint64_t pn,
                             uint8_t *pkt, size_t hdr_len, size_t payload_len);

/*
 * Unprotects the packet pkt[0, pkt_len) in place (for a coalesced long-header
 * packet, pkt_len ends where its Length field says). Removes header
 * protection, decodes the packet number against `largest_pn`, the largest
 * packet number received so far in this packet-number space (-1 if none;
 * RFC 9000 §A.3), and opens the payload. On success *pn is the full packet
 * number, *hdr_len the header length (pn_offset + pn length) and
 * *payload_len the plaintext length, which starts at pkt + *hdr_len. On
 * failure the buffer's contents are unspecified.
 */
int qtls_quic_packet_unprotect(struct qtls_quic_aead *aead, struct qtls_quic_hp *hp,
                               int64_t largest_pn, uint8_t *pkt, size_t pkt_len, size_t pn_offset,
                               uint64_t *pn, size_t *hdr_len, size_t *payload_len);

/*
 * RFC 9000 §A.3: the full packet number closest to largest_pn + 1 whose low
 * pn_len bytes are `truncated` (largest_pn = -1 if no packet was received yet).
 */
uint64_t qtls_quic_decode_pn(int64_t largest_pn, uint64_t truncated, size_t pn_len);

/* ---- Retry (RFC 9001 §5.8, RFC 9369 §3.3.3) ---- */

/*
 * The Retry Integrity Tag: AES-128-GCM with the version's fixed key and nonce,
 * empty plaintext, over the Retry Pseudo-Packet (the client's original
 * Destination Connection ID with its length byte, then the Retry packet
 * without its tag, `retry`).
 */
int qtls_quic_retry_tag(uint32_t version, const uint8_t *odcid, size_t odcid_len,
                        const uint8_t *retry, size_t retry_len, uint8_t *tag);

/*
 * Checks the tag at the end of a whole Retry packet (constant-time compare).
 * Returns 1 if it verifies, 0 if not (SSL_R_DECRYPTION_FAILED) or on error.
 */
int qtls_quic_retry_verify(uint32_t version, const uint8_t *odcid, size_t odcid_len,
                           const uint8_t *packet, size_t packet_len);

#ifdef __cplusplus
}
#endif

#endif /* QTLS_QUIC_CRYPTO_H */
