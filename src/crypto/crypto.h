/*
 * crypto/: the primitives and their tables. TLS 1.3's suites, groups and signature schemes
 * (suites.c), the libcrypto adapter (crypto.c: the only EVP caller besides quic_crypto.c), the
 * certificate compression algorithms (compress.c), and the key schedule and transcript
 * (keysched.c, RFC 8446 §7.1). Knows nothing of connections: no SSL is read here.
 */
#ifndef QTLS_CRYPTO_H
#define QTLS_CRYPTO_H

#include <openssl/evp.h>

#include "base/base.h"

/* ------------------------------------------------------------------ */
/* Suites, groups and signature schemes (suites.c)                     */
/* ------------------------------------------------------------------ */

enum qtls_hash { QTLS_SHA256 = 0, QTLS_SHA384, QTLS_HASH_COUNT };
#define QTLS_MAX_HASH_LEN 48 /* SHA-384's, the longest of TLS 1.3's suites */

struct ssl_cipher_st {
    uint32_t id;      /* OpenSSL id: 0x03001301 ... */
    uint16_t tls_id;  /* wire value: 0x1301 ... */
    const char *name; /* IANA name, which OpenSSL also uses for TLS 1.3 */
    enum qtls_hash hash;
    int prf_nid;    /* NID_sha256 / NID_sha384 */
    int cipher_nid; /* the AEAD */
    int bits;
};

#define QTLS_NUM_SUITES 4
extern const SSL_CIPHER qtls_suites[QTLS_NUM_SUITES];
/* The suites enabled when nothing is configured (CCM only on request, CCM_8 never). */
#define QTLS_DEFAULT_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* A configured preference list, most preferred first: indexes into qtls_suites, 5 bytes. */
struct suite_list {
    uint8_t idx[QTLS_NUM_SUITES];
    uint8_t n;
};
static inline const SSL_CIPHER *suite_at(const struct suite_list *l, size_t i)
{
    return &qtls_suites[l->idx[i]];
}
const SSL_CIPHER *suite_by_tls_id(uint16_t tls_id);
const SSL_CIPHER *suite_by_name(const char *name, size_t len);

/* KEX_MLKEM: ML-KEM alone; KEX_HYBRID: ML-KEM with a classical group (draft-ietf-tls-ecdhe-mlkem) */
enum kex_kind { KEX_X25519, KEX_X448, KEX_EC, KEX_MLKEM, KEX_HYBRID };

struct group {
    uint16_t id;      /* NamedGroup */
    const char *name; /* OpenSSL's name for the group list (3.5's for the ML-KEM groups) */
    enum kex_kind kind;
    int nid;          /* curve NID (EC) or key type (X25519/X448); TLSEXT_nid_unknown | id else */
    size_t share_len; /* length of a valid key_exchange from the client ... */
    size_t server_share_len; /* ... and from the server (longer or shorter for a KEM) */
    uint16_t classical;      /* KEX_HYBRID: the classical half's group */
    uint8_t mlkem;           /* KEX_MLKEM, KEX_HYBRID: enum mlkem_param */
    uint8_t ec_first;        /* KEX_HYBRID: the classical half comes first in shares and secret */
    uint16_t secbits;        /* the security bits OpenSSL gives the group */
};
static inline int group_is_pq(const struct group *g)
{
    return g->kind == KEX_MLKEM || g->kind == KEX_HYBRID;
}
const struct group *group_by_id(uint16_t id);
const struct group *group_by_name(const char *name, size_t len);
#define QTLS_MAX_GROUPS 12

struct sigscheme {
    uint16_t id;
    const char *name;
    int pkey_type;  /* EVP_PKEY_EC, EVP_PKEY_RSA, EVP_PKEY_ED25519, EVP_PKEY_ED448 */
    int curve_nid;  /* ECDSA: the curve the scheme binds (RFC 8446 §4.2.3); else 0 */
    int md_nid;     /* digest NID, NID_undef for EdDSA */
    int tls13_ok;   /* usable in a TLS 1.3 CertificateVerify (not PKCS#1 v1.5, not SHA-1) */
};
const struct sigscheme *sigscheme_by_id(uint16_t id);
/* The schemes a client offers, in preference order. */
extern const uint16_t qtls_offered_sigschemes[];
extern const size_t qtls_num_offered_sigschemes;

/* Parses "A:B:C" into a suite list; 0 if nothing valid. */
QTLS_MUST_CHECK int suites_parse_list(const char *str, struct suite_list *out);
/*
 * Parses "X25519:P-256" (or OpenSSL 3.5's "?*X25519MLKEM768/X25519:P-256") into a group list
 * and its tuples (bit i of *tuples: group i begins a tuple; 0 for one tuple); 0 if any name is
 * unknown and not marked '?'.
 */
QTLS_MUST_CHECK int groups_parse_list(const char *str, uint16_t *out, uint8_t *n,
                                      uint16_t *tuples);
/* Checks ALPN wire format (non-empty, no empty names). */
QTLS_MUST_CHECK int alpn_list_valid(const uint8_t *p, size_t n);
/* The group with this NID (NID_X25519, NID_X9_62_prime256v1, ...), NULL if qtls lacks it. */
const struct group *group_by_nid(int nid);
/* The same as groups_parse_list for NIDs (SSL_CTX_set1_groups). */
QTLS_MUST_CHECK int groups_from_nids(const int *nids, size_t count, uint16_t *out, uint8_t *n,
                                     uint16_t *tuples);

/* ------------------------------------------------------------------ */
/* Crypto adapter (crypto.c): the only code that calls EVP for TLS.    */
/* ------------------------------------------------------------------ */

/* Fetches algorithms once per process. Returns 1 on success. */
QTLS_MUST_CHECK int crypto_init(void);
const EVP_MD *crypto_md(enum qtls_hash h);
/* A running hash (the transcript): new, feed, restart, read without ending, free. */
struct crypto_hash;
struct crypto_hash *crypto_hash_new(enum qtls_hash h);
/* A second running hash in the state of src, which is left as it is. */
struct crypto_hash *crypto_hash_dup(const struct crypto_hash *src);
QTLS_MUST_CHECK int crypto_hash_update(struct crypto_hash *c, const uint8_t *p, size_t n);
QTLS_MUST_CHECK int crypto_hash_restart(struct crypto_hash *c);
/* Hash of what c has seen, then `extra`; c keeps running as it was. */
QTLS_MUST_CHECK int crypto_hash_peek(struct crypto_hash *c, const uint8_t *extra,
                                     size_t extra_len, uint8_t *out);
void crypto_hash_free(struct crypto_hash *c);
/* Test hook: 1 hashes through EVP even where the direct SHA-2 path is allowed (crypto.c). */
void crypto_set_test_evp_hashes(int on);
/* qtls's ticket AEAD (AES-256-GCM, aad = key name): 1, 0 bad tag on opening, -1 error. */
int crypto_ticket_gcm(int enc, const uint8_t key[32], const uint8_t *aad, size_t aad_len,
                      const uint8_t nonce[12], const uint8_t *in, size_t len, uint8_t *out,
                      uint8_t tag[16]);
/* The cipher and MAC contexts of the application's ticket key callback (OpenSSL 3.0 format). */
struct crypto_ticket_cb {
    EVP_CIPHER_CTX *cc;
    EVP_MAC_CTX *hc;
};
QTLS_MUST_CHECK int crypto_ticket_cb_new(struct crypto_ticket_cb *t);
void crypto_ticket_cb_free(struct crypto_ticket_cb *t);
/* The IV and MAC lengths the callback configured; 0 if it left a context unusable. */
QTLS_MUST_CHECK int crypto_ticket_cb_lengths(const struct crypto_ticket_cb *t, int enc,
                                             size_t *iv_len, size_t *mac_len);
/* Runs the callback's cipher over in: 1, 0 if the final block fails (padding), -1 error. */
int crypto_ticket_cb_cipher(struct crypto_ticket_cb *t, const uint8_t *in, size_t len,
                            uint8_t *out, size_t *out_len);
/* The callback's MAC over in, exactly mac_len bytes: 1, or 0 (raised). */
QTLS_MUST_CHECK int crypto_ticket_cb_mac(struct crypto_ticket_cb *t, const uint8_t *in,
                                         size_t len, uint8_t *out, size_t mac_len);
/* Hash(""), computed once by crypto_init: Derive-Secret's context for an empty transcript. */
const uint8_t *crypto_empty_hash(enum qtls_hash h);
size_t crypto_hash_len(enum qtls_hash h);
QTLS_MUST_CHECK int crypto_random(uint8_t *out, size_t len);
/* Test hook: replaces the randomness source (NULL restores RAND_bytes). */
void crypto_set_test_random(int (*fn)(uint8_t *out, size_t len, void *arg), void *arg);

QTLS_MUST_CHECK int crypto_hmac(enum qtls_hash h, const uint8_t *key, size_t key_len,
                                const uint8_t *data, size_t data_len, uint8_t *out);
QTLS_MUST_CHECK int crypto_hkdf_extract(enum qtls_hash h, const uint8_t *salt, size_t salt_len,
                                        const uint8_t *ikm, size_t ikm_len, uint8_t *out);
QTLS_MUST_CHECK int crypto_hkdf_expand(enum qtls_hash h, const uint8_t *prk, size_t prk_len,
                                       const uint8_t *info, size_t info_len, uint8_t *out,
                                       size_t out_len);
QTLS_MUST_CHECK int crypto_digest(enum qtls_hash h, const uint8_t *data, size_t len,
                                  uint8_t *out);

/*
 * Classical (EC)DH (crypto.c), for X25519, X448 and the NIST curves. ecdh_generate makes a key
 * pair and appends its public share; ecdh_derive computes the shared secret with the peer's
 * share, rejecting malformed points. Returns the secret length, 0 on failure.
 */
EVP_PKEY *crypto_ecdh_generate(const struct group *g, struct wr *share_out);
QTLS_MUST_CHECK size_t crypto_ecdh_derive(const struct group *g, EVP_PKEY *priv,
                                          const uint8_t *peer, size_t peer_len, uint8_t *out,
                                          size_t out_cap);
/* Test hook: the private key ecdh_generate should use next (consumed once). */
void crypto_set_test_kex_key(EVP_PKEY *key);

/*
 * Key exchange for any group (kex.c), classical, ML-KEM or hybrid (RFC 8446 §4.2.8,
 * draft-ietf-tls-ecdhe-mlkem). The client generates (its private halves stay in a kex_key)
 * and derives from the server's share; the server responds to the client's share at once:
 * its own share (an ML-KEM ciphertext for a KEM) and the secret. Secrets are at most
 * CRYPTO_KEX_MAX_SECRET bytes; 0 on failure, with an error queued (SSL_R_BAD_KEY_SHARE for a
 * share that is not valid: the caller sends illegal_parameter).
 */
#define CRYPTO_KEX_MAX_SECRET 128
#define CRYPTO_KEX_MAX_SHARE (1568 + 97) /* SecP384r1MLKEM1024's, the longest */
struct kex_key {
    EVP_PKEY *ec;  /* the classical half */
    EVP_PKEY *kem; /* the ML-KEM half, libcrypto's (OpenSSL 3.5 and later) ... */
    uint8_t *dk;   /* ... or qtls's own (mlkem.c): the decapsulation key */
};
QTLS_MUST_CHECK int crypto_kex_generate(const struct group *g, struct kex_key *key,
                                        struct wr *share_out);
QTLS_MUST_CHECK size_t crypto_kex_derive(const struct group *g, struct kex_key *key,
                                         const uint8_t *peer, size_t peer_len, uint8_t *out,
                                         size_t out_cap);
QTLS_MUST_CHECK size_t crypto_kex_respond(const struct group *g, const uint8_t *peer,
                                          size_t peer_len, struct wr *share_out, uint8_t *out,
                                          size_t out_cap);
/*
 * Client: a share of the hybrid's classical group made from the hybrid key's classical half,
 * which `to` shares (the ClientHello's X25519 share beside X25519MLKEM768: one key pair, not
 * two; draft-ietf-tls-hybrid-design §3.2 allows the reuse). hybrid_share is the hybrid's share
 * as crypto_kex_generate wrote it (not inside share_out).
 */
QTLS_MUST_CHECK int crypto_kex_reuse_classical(const struct group *hybrid,
                                               const struct kex_key *from,
                                               const uint8_t *hybrid_share, struct kex_key *to,
                                               struct wr *share_out);
/* After a failed derive or respond: 1 if the peer's share was wrong (illegal_parameter), 0 if
   the failure was ours (internal_error). */
int crypto_kex_bad_share(void);
/* Frees the private halves (wiped) and empties key. */
void crypto_kex_key_clear(struct kex_key *key);
/* 1 when ML-KEM comes from libcrypto (3.5 and later), 0 when from mlkem.c. */
int crypto_kex_mlkem_from_libcrypto(void);
/* Test hook: 1 makes qtls use its own ML-KEM even where libcrypto has one; 0 restores. */
void crypto_set_test_own_mlkem(int on);

/* Signatures for CertificateVerify. */
QTLS_MUST_CHECK int crypto_key_matches_scheme(EVP_PKEY *key, const struct sigscheme *s);
QTLS_MUST_CHECK int crypto_sign(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs,
                                size_t tbs_len, struct wr *sig_out);
/* Finished and PSK binder checks, in constant time (the fuzzing build accepts any value). */
QTLS_MUST_CHECK int crypto_mac_equal(const uint8_t *want, const uint8_t *got, size_t len);
QTLS_MUST_CHECK int crypto_verify(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs,
                                  size_t tbs_len, const uint8_t *sig, size_t sig_len);

/*
 * Record protection (RFC 8446 §5.2): one direction of one epoch, keyed with the traffic key and
 * IV derived from its secret. Sealing writes len + CRYPTO_AEAD_TAG_LEN bytes; opening takes the
 * ciphertext with its tag (len includes it) and writes len - CRYPTO_AEAD_TAG_LEN bytes, 1 if the
 * tag is right, else 0 with nothing raised and the output wiped. in == out is allowed.
 */
#define CRYPTO_AEAD_IV_LEN 12
#define CRYPTO_AEAD_TAG_LEN 16
struct crypto_aead;
size_t crypto_aead_key_len(const SSL_CIPHER *suite);
struct crypto_aead *crypto_aead_new(const SSL_CIPHER *suite, int enc, const uint8_t *key,
                                    const uint8_t iv[CRYPTO_AEAD_IV_LEN]);
QTLS_MUST_CHECK int crypto_aead_seal(struct crypto_aead *a, uint64_t seq, const uint8_t *aad,
                                     size_t aad_len, const uint8_t *in, size_t len, uint8_t *out);
QTLS_MUST_CHECK int crypto_aead_open(struct crypto_aead *a, uint64_t seq, const uint8_t *aad,
                                     size_t aad_len, const uint8_t *in, size_t len, uint8_t *out);
void crypto_aead_free(struct crypto_aead *a);

/*
 * compress.c: the certificate compression algorithms (RFC 8879 §3), each present when it was
 * found at build time. compress_run appends alg's compression of in to out; decompress_exact
 * succeeds only if in decodes to exactly len bytes (no more, no less, nothing left over).
 */
enum { CC_NONE = 0, CC_ZLIB = 1, CC_BROTLI = 2, CC_ZSTD = 3, CC_LIMIT = 4 };
int compress_available(int alg);
const char *compress_name(int alg); /* "zlib", "brotli", "zstd"; NULL out of range */
QTLS_MUST_CHECK int compress_run(int alg, const uint8_t *in, size_t n, struct wr *out);
QTLS_MUST_CHECK int decompress_exact(int alg, const uint8_t *in, size_t n, uint8_t *out,
                                     size_t len);

/* ------------------------------------------------------------------ */
/* Key schedule and transcript (keysched.c), RFC 8446 §7.1             */
/* ------------------------------------------------------------------ */

/* A secret in a fixed array, set and wiped through the helpers. */
struct secret {
    uint8_t b[EVP_MAX_MD_SIZE];
    size_t len;
};
void secret_set(struct secret *s, const uint8_t *p, size_t n);
void secret_wipe(struct secret *s);
/* A secret a connection keeps after the handshake (exporter, resumption): Hash.length bytes. */
struct kept_secret {
    uint8_t b[QTLS_MAX_HASH_LEN];
    uint8_t len;
};
void secret_keep(struct kept_secret *k, const struct secret *s);
/* Back into a struct secret for the key schedule (the caller wipes it after use). */
void secret_unkeep(struct secret *s, const struct kept_secret *k);
void kept_secret_wipe(struct kept_secret *k);

/* HKDF-Expand-Label(secret, "tls13 " + label, context, out_len). */
QTLS_MUST_CHECK int ks_expand_label(enum qtls_hash h, const struct secret *secret,
                                    const char *label, const uint8_t *context, size_t context_len,
                                    uint8_t *out, size_t out_len);
/* The same with a label of explicit length (exporters take arbitrary labels). */
QTLS_MUST_CHECK int ks_expand_label_n(enum qtls_hash h, const struct secret *secret,
                                      const uint8_t *label, size_t label_len,
                                      const uint8_t *context, size_t context_len, uint8_t *out,
                                      size_t out_len);
/* Derive-Secret(secret, label, transcript_hash): the hash is passed in. */
QTLS_MUST_CHECK int ks_derive_secret(enum qtls_hash h, const struct secret *secret,
                                     const char *label, const uint8_t *thash, struct secret *out);
/* Early Secret = HKDF-Extract(0, psk or zeros). */
QTLS_MUST_CHECK int ks_early_secret(enum qtls_hash h, const uint8_t *psk, size_t psk_len,
                                    struct secret *out);
/* Next stage: HKDF-Extract(Derive-Secret(prev, "derived", ""), ikm or zeros). */
QTLS_MUST_CHECK int ks_next_stage(enum qtls_hash h, const struct secret *prev,
                                  const uint8_t *ikm, size_t ikm_len, struct secret *out);
/* A full handshake's Handshake Secret: ks_next_stage from the zero-PSK Early Secret. */
QTLS_MUST_CHECK int ks_handshake_secret_without_psk(enum qtls_hash h, const uint8_t *ecdhe,
                                                    size_t ecdhe_len, struct secret *out);
/* Finished verify_data = HMAC(finished_key(base), transcript_hash) (RFC 8446 §4.4.4). */
QTLS_MUST_CHECK int ks_finished(enum qtls_hash h, const struct secret *base, const uint8_t *thash,
                                uint8_t *out);

/* A PSK binder over the hash of the partial ClientHello (RFC 8446 §4.2.11.2). */
QTLS_MUST_CHECK int ks_psk_binder(enum qtls_hash h, const struct secret *early,
                                  const uint8_t *thash, uint8_t *out);

/*
 * The running transcript. Until the hash is known (client before
 * ServerHello) the messages are buffered; transcript_set_hash hashes them.
 */
struct transcript {
    enum qtls_hash hash;
    struct crypto_hash *md; /* NULL until the hash is set */
    struct wr pending;
};
void transcript_init(struct transcript *t);
QTLS_MUST_CHECK int transcript_add(struct transcript *t, const uint8_t *p, size_t n);
QTLS_MUST_CHECK int transcript_set_hash(struct transcript *t, enum qtls_hash h);
/* The hash of everything so far (the transcript keeps running). */
QTLS_MUST_CHECK int transcript_hash(struct transcript *t, uint8_t *out);
/* The hash of the transcript followed by `extra` (a partial message), with hash h. */
QTLS_MUST_CHECK int transcript_hash_with(struct transcript *t, enum qtls_hash h,
                                         const uint8_t *extra, size_t extra_len, uint8_t *out);
/* dst (not initialised) becomes a copy of src, whose hash is set, running on from where src is:
   post-handshake authentication's transcript starts from the handshake's (RFC 8446 §4.4.1). */
QTLS_MUST_CHECK int transcript_copy(struct transcript *dst, const struct transcript *src);
/* After HelloRetryRequest: replaces ClientHello1 with message_hash (RFC 8446 §4.4.1). */
QTLS_MUST_CHECK int transcript_hrr_restart(struct transcript *t);
void transcript_free(struct transcript *t);

#endif
