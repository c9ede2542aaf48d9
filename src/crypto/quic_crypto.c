/*
 * QUIC packet protection (RFC 9001 §5, §6.1; RFC 9369 §3.3): the helpers of
 * include/qtls/quic_crypto.h.
 *
 * The HKDF is the key schedule's (crypto_hkdf_extract, ks_expand_label: QUIC
 * labels are TLS 1.3 labels with the "tls13 " prefix). Ciphers are fetched
 * once per process; a key object keys its cipher contexts once, so a packet
 * costs one IV (or sample) set and the cipher calls, with no allocation and
 * no provider lookup. Packet bytes are touched only after the length checks
 * at the top of each function.
 *
 * Layer: keysched, beside the key schedule. It is the one file besides crypto.c
 * that calls libcrypto's EVP itself (its ciphers and contexts), by design: it is
 * a public module of its own, used by QUIC stacks for every packet, not part of
 * the TLS handshake, whose EVP calls all go through crypto.c (scripts/lint.sh).
 */

#include "crypto/crypto.h"
#include "qtls/quic_crypto.h"

#include <limits.h>
#include <string.h>

#include <openssl/crypto.h>

/* ---- Versions (RFC 9001 §5.2, §5.8; RFC 9369 §3.3) ---- */

struct qversion {
    uint32_t version;
    uint8_t salt[20];
    const char *key_label, *iv_label, *hp_label, *ku_label;
    uint8_t retry_key[16];
    uint8_t retry_nonce[QTLS_QUIC_IV_LEN];
};

static const struct qversion versions[] = {
    {
        .version = QTLS_QUIC_VERSION_1,
        /* RFC 9001 §5.2 */
        .salt = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
                 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a},
        .key_label = "quic key",
        .iv_label = "quic iv",
        .hp_label = "quic hp",
        .ku_label = "quic ku",
        /* RFC 9001 §5.8 */
        .retry_key = {0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3,
                      0x68, 0xc8, 0x4e},
        .retry_nonce = {0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb},
    },
    {
        .version = QTLS_QUIC_VERSION_2,
        /* RFC 9369 §3.3.1 */
        .salt = {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
                 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9},
        /* RFC 9369 §3.3.2 */
        .key_label = "quicv2 key",
        .iv_label = "quicv2 iv",
        .hp_label = "quicv2 hp",
        .ku_label = "quicv2 ku",
        /* RFC 9369 §3.3.3 */
        .retry_key = {0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad,
                      0x7c, 0xcc, 0x92},
        .retry_nonce = {0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a},
    },
};

static const struct qversion *version_get(uint32_t version)
{
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        if (versions[i].version == version)
            return &versions[i];
    return NULL;
}

/* ---- Suites and the ciphers they use (RFC 9001 §5.3, §5.4.3, §5.4.4) ---- */

enum { AEAD_AES_128_GCM, AEAD_AES_256_GCM, AEAD_CHACHA20_POLY1305, AEAD_AES_128_CCM, AEAD_COUNT };
enum { HP_AES_128_ECB, HP_AES_256_ECB, HP_CHACHA20, HP_COUNT };

static const char *const aead_names[AEAD_COUNT] = {"AES-128-GCM", "AES-256-GCM",
                                                   "ChaCha20-Poly1305", "AES-128-CCM"};
static const char *const hp_names[HP_COUNT] = {"AES-128-ECB", "AES-256-ECB", "ChaCha20"};

struct qsuite {
    uint32_t id;
    enum qtls_hash hash;
    size_t key_len; /* AEAD key = header-protection key length */
    int aead, hp;
};

/* TLS_AES_128_CCM_8_SHA256 is absent on purpose: RFC 9001 §5.3 defines no header protection
 * for it (its 8-byte tag) and says it MUST NOT be negotiated. */
static const struct qsuite suites[] = {
    {QTLS_QUIC_SUITE_AES_128_GCM_SHA256, QTLS_SHA256, 16, AEAD_AES_128_GCM, HP_AES_128_ECB},
    {QTLS_QUIC_SUITE_AES_256_GCM_SHA384, QTLS_SHA384, 32, AEAD_AES_256_GCM, HP_AES_256_ECB},
    {QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256, QTLS_SHA256, 32, AEAD_CHACHA20_POLY1305,
     HP_CHACHA20},
    {QTLS_QUIC_SUITE_AES_128_CCM_SHA256, QTLS_SHA256, 16, AEAD_AES_128_CCM, HP_AES_128_ECB},
};

static const struct qsuite *suite_get(uint32_t id)
{
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
        if (suites[i].id == id)
            return &suites[i];
    return NULL;
}

static struct {
    CRYPTO_ONCE once;
    int ok;
    EVP_CIPHER *aead[AEAD_COUNT];
    EVP_CIPHER *hp[HP_COUNT];
} g = {.once = CRYPTO_ONCE_STATIC_INIT};

static void fetch_all(void)
{
    for (int i = 0; i < AEAD_COUNT; i++)
        if ((g.aead[i] = EVP_CIPHER_fetch(NULL, aead_names[i], NULL)) == NULL)
            return;
    for (int i = 0; i < HP_COUNT; i++)
        if ((g.hp[i] = EVP_CIPHER_fetch(NULL, hp_names[i], NULL)) == NULL)
            return;
    g.ok = 1;
}

static int qc_init(void)
{
    if (!CRYPTO_THREAD_run_once(&g.once, fetch_all) || !g.ok) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return 0;
    }
    return crypto_init();
}

/* The version and suite of a derivation from a secret, checked together. */
static int lookup(uint32_t version, uint32_t suite, size_t secret_len, const struct qversion **v,
                  const struct qsuite **s)
{
    if ((*v = version_get(version)) == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_PROTOCOL);
        return 0;
    }
    if ((*s = suite_get(suite)) == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_CIPHER);
        return 0;
    }
    /* ngtcp2 and RFC 9001 §6.1 rely on the secret being exactly the hash length. */
    if (secret_len != crypto_hash_len((*s)->hash)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return 0;
    }
    return qc_init();
}

int qtls_quic_version_supported(uint32_t version) { return version_get(version) != NULL; }

size_t qtls_quic_suite_secret_len(uint32_t suite)
{
    const struct qsuite *s = suite_get(suite);
    return s != NULL ? crypto_hash_len(s->hash) : 0;
}

size_t qtls_quic_suite_key_len(uint32_t suite)
{
    const struct qsuite *s = suite_get(suite);
    return s != NULL ? s->key_len : 0;
}

/* ---- Secrets and keys ---- */

/* RFC 9000 §17.2: connection IDs of versions 1 and 2 are at most 20 bytes. */
#define MAX_CID_LEN 20

int qtls_quic_initial_secrets(uint32_t version, const uint8_t *dcid, size_t dcid_len,
                              uint8_t *client_secret, uint8_t *server_secret)
{
    const struct qversion *v = version_get(version);
    struct secret initial;
    uint8_t prk[EVP_MAX_MD_SIZE];
    if (v == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_PROTOCOL);
        return 0;
    }
    if (dcid_len > MAX_CID_LEN || (dcid == NULL && dcid_len != 0)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return 0;
    }
    if (!qc_init())
        return 0;
    /* §5.2: initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id), SHA-256. */
    int ok = crypto_hkdf_extract(QTLS_SHA256, v->salt, sizeof(v->salt), dcid, dcid_len, prk);
    if (ok) {
        secret_set(&initial, prk, QTLS_QUIC_INITIAL_SECRET_LEN);
        ok =
            (client_secret == NULL ||
             ks_expand_label(QTLS_SHA256, &initial, "client in", NULL, 0, client_secret,
                             QTLS_QUIC_INITIAL_SECRET_LEN)) &&
            (server_secret == NULL || ks_expand_label(QTLS_SHA256, &initial, "server in", NULL, 0,
                                                      server_secret, QTLS_QUIC_INITIAL_SECRET_LEN));
        secret_wipe(&initial);
    }
    OPENSSL_cleanse(prk, sizeof(prk));
    return ok;
}

int qtls_quic_derive_packet_keys(uint32_t version, uint32_t suite, const uint8_t *secret,
                                 size_t secret_len, uint8_t *key, uint8_t *iv, uint8_t *hp)
{
    const struct qversion *v;
    const struct qsuite *s;
    struct secret sec;
    if (secret == NULL || !lookup(version, suite, secret_len, &v, &s))
        return 0;
    secret_set(&sec, secret, secret_len);
    /* RFC 9001 §5.1: the labels with an empty context; the IV is the AEAD nonce length. */
    int ok =
        (key == NULL || ks_expand_label(s->hash, &sec, v->key_label, NULL, 0, key, s->key_len)) &&
        (iv == NULL ||
         ks_expand_label(s->hash, &sec, v->iv_label, NULL, 0, iv, QTLS_QUIC_IV_LEN)) &&
        (hp == NULL || ks_expand_label(s->hash, &sec, v->hp_label, NULL, 0, hp, s->key_len));
    secret_wipe(&sec);
    return ok;
}

int qtls_quic_key_update_secret(uint32_t version, uint32_t suite, const uint8_t *secret,
                                size_t secret_len, uint8_t *out)
{
    const struct qversion *v;
    const struct qsuite *s;
    struct secret sec;
    if (secret == NULL || out == NULL || !lookup(version, suite, secret_len, &v, &s))
        return 0;
    /* RFC 9001 §6.1: secret_<n+1> = HKDF-Expand-Label(secret_<n>, "quic ku", "", Hash.length). */
    secret_set(&sec, secret, secret_len);
    int ok = ks_expand_label(s->hash, &sec, v->ku_label, NULL, 0, out, secret_len);
    secret_wipe(&sec);
    return ok;
}

/* ---- Packet protection (RFC 9001 §5.3) ---- */

/*
 * A packet that fails to open is routine in QUIC (reordering across key
 * phases, a stateless reset, an attacker's garbage), so its error is raised
 * without ERR_raise's debug record: libcrypto copies the file and function
 * names onto the heap, and the per-packet path allocates nothing, even when
 * it rejects (except with AES-128-CCM, whose tag mismatch libcrypto itself
 * reports through ERR_raise).
 */
static void raise_per_packet(int reason)
{
    ERR_new();
    ERR_set_error(ERR_LIB_SSL, reason, NULL);
}

struct qtls_quic_aead {
    const struct qsuite *suite;
    EVP_CIPHER_CTX *seal, *open; /* keyed once; each packet only sets the nonce */
    uint8_t iv[QTLS_QUIC_IV_LEN];
};

static EVP_CIPHER_CTX *aead_ctx(const struct qsuite *s, const uint8_t *key, int enc)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ok = c != NULL && EVP_CipherInit_ex(c, g.aead[s->aead], NULL, NULL, NULL, enc);
    if (ok && s->aead == AEAD_AES_128_CCM) {
        /* CCM's nonce length defaults to 7 and its tag length to 12; QUIC uses 12 and 16. */
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, QTLS_QUIC_IV_LEN, NULL) > 0 &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, QTLS_QUIC_TAG_LEN, NULL) > 0;
    }
    if (!ok || !EVP_CipherInit_ex(c, NULL, NULL, key, NULL, enc)) {
        EVP_CIPHER_CTX_free(c);
        return NULL;
    }
    return c;
}

struct qtls_quic_aead *qtls_quic_aead_new(uint32_t suite, const uint8_t *key, size_t key_len,
                                          const uint8_t *iv, size_t iv_len)
{
    const struct qsuite *s = suite_get(suite);
    struct qtls_quic_aead *a;
    if (s == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_CIPHER);
        return NULL;
    }
    if (key == NULL || iv == NULL || key_len != s->key_len || iv_len != QTLS_QUIC_IV_LEN) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return NULL;
    }
    if (!qc_init())
        return NULL;
    if ((a = OPENSSL_zalloc(sizeof(*a))) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    a->suite = s;
    memcpy(a->iv, iv, QTLS_QUIC_IV_LEN);
    a->seal = aead_ctx(s, key, 1);
    a->open = aead_ctx(s, key, 0);
    if (a->seal == NULL || a->open == NULL) {
        qtls_quic_aead_free(a);
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return NULL;
    }
    return a;
}

struct qtls_quic_aead *qtls_quic_aead_new_from_secret(uint32_t version, uint32_t suite,
                                                      const uint8_t *secret, size_t secret_len)
{
    uint8_t key[QTLS_QUIC_MAX_KEY_LEN], iv[QTLS_QUIC_IV_LEN];
    struct qtls_quic_aead *a = NULL;
    if (qtls_quic_derive_packet_keys(version, suite, secret, secret_len, key, iv, NULL))
        a = qtls_quic_aead_new(suite, key, qtls_quic_suite_key_len(suite), iv, sizeof(iv));
    OPENSSL_cleanse(key, sizeof(key));
    OPENSSL_cleanse(iv, sizeof(iv));
    return a;
}

void qtls_quic_aead_free(struct qtls_quic_aead *a)
{
    if (a == NULL)
        return;
    EVP_CIPHER_CTX_free(a->seal); /* wipes the key schedule */
    EVP_CIPHER_CTX_free(a->open);
    OPENSSL_clear_free(a, sizeof(*a));
}

/* §5.3: the 62-bit packet number, big-endian, left-padded to the IV length, XORed with the IV. */
static void make_nonce(const struct qtls_quic_aead *a, uint64_t pn, uint8_t *nonce)
{
    memcpy(nonce, a->iv, QTLS_QUIC_IV_LEN);
    for (int i = 0; i < 8; i++)
        nonce[QTLS_QUIC_IV_LEN - 1 - i] ^= (uint8_t)(pn >> (8 * i));
}

int qtls_quic_aead_seal_nonce(struct qtls_quic_aead *a, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out)
{
    EVP_CIPHER_CTX *c = a != NULL ? a->seal : NULL;
    int len, ccm = a != NULL && a->suite->aead == AEAD_AES_128_CCM;
    if (c == NULL || nonce == NULL || out == NULL || (in == NULL && in_len != 0) ||
        (aad == NULL && aad_len != 0) || in_len > INT_MAX - QTLS_QUIC_TAG_LEN ||
        aad_len > INT_MAX) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    /* CCM needs the plaintext length before the AAD. */
    int ok = EVP_CipherInit_ex(c, NULL, NULL, NULL, nonce, 1) &&
             (!ccm || EVP_CipherUpdate(c, NULL, &len, NULL, (int)in_len)) &&
             (aad_len == 0 || EVP_CipherUpdate(c, NULL, &len, aad, (int)aad_len)) &&
             EVP_CipherUpdate(c, out, &len, in, (int)in_len) &&
             EVP_CipherFinal_ex(c, out + len, &len) &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, QTLS_QUIC_TAG_LEN, out + in_len) > 0;
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

int qtls_quic_aead_open_nonce(struct qtls_quic_aead *a, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_len, const uint8_t *in, size_t in_len, uint8_t *out)
{
    EVP_CIPHER_CTX *c = a != NULL ? a->open : NULL;
    int len, ccm = a != NULL && a->suite->aead == AEAD_AES_128_CCM;
    if (c == NULL || nonce == NULL || in == NULL || out == NULL || (aad == NULL && aad_len != 0) ||
        in_len > INT_MAX || aad_len > INT_MAX) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    if (in_len < QTLS_QUIC_TAG_LEN) {
        raise_per_packet(SSL_R_DECRYPTION_FAILED);
        return 0;
    }
    size_t ct_len = in_len - QTLS_QUIC_TAG_LEN;
    /* The tag is read before any plaintext is written, so in == out is safe. CCM checks the
     * tag in its one Update call (and libcrypto queues an error of its own when it fails, which
     * the mark drops); GCM and ChaCha20-Poly1305 check it in Final. */
    ERR_set_mark();
    int ok = EVP_CipherInit_ex(c, NULL, NULL, NULL, nonce, 0) &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, QTLS_QUIC_TAG_LEN,
                                 (void *)(in + ct_len)) > 0 &&
             (!ccm || EVP_CipherUpdate(c, NULL, &len, NULL, (int)ct_len)) &&
             (aad_len == 0 || EVP_CipherUpdate(c, NULL, &len, aad, (int)aad_len)) &&
             EVP_CipherUpdate(c, out, &len, in, (int)ct_len) &&
             (ccm || EVP_CipherFinal_ex(c, out + len, &len));
    ERR_pop_to_mark();
    if (!ok) {
        OPENSSL_cleanse(out, ct_len); /* no unauthenticated plaintext leaves */
        raise_per_packet(SSL_R_DECRYPTION_FAILED);
    }
    return ok;
}

int qtls_quic_aead_seal(struct qtls_quic_aead *a, uint64_t pn, const uint8_t *aad, size_t aad_len,
                        const uint8_t *in, size_t in_len, uint8_t *out)
{
    uint8_t nonce[QTLS_QUIC_IV_LEN];
    if (a == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    make_nonce(a, pn, nonce);
    return qtls_quic_aead_seal_nonce(a, nonce, aad, aad_len, in, in_len, out);
}

int qtls_quic_aead_open(struct qtls_quic_aead *a, uint64_t pn, const uint8_t *aad, size_t aad_len,
                        const uint8_t *in, size_t in_len, uint8_t *out)
{
    uint8_t nonce[QTLS_QUIC_IV_LEN];
    if (a == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    make_nonce(a, pn, nonce);
    return qtls_quic_aead_open_nonce(a, nonce, aad, aad_len, in, in_len, out);
}

/* ---- Header protection (RFC 9001 §5.4) ---- */

struct qtls_quic_hp {
    EVP_CIPHER_CTX *c; /* keyed once; ChaCha20 takes each sample as its IV */
    int chacha;
};

struct qtls_quic_hp *qtls_quic_hp_new(uint32_t suite, const uint8_t *hp_key, size_t key_len)
{
    const struct qsuite *s = suite_get(suite);
    struct qtls_quic_hp *hp;
    if (s == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_CIPHER);
        return NULL;
    }
    if (hp_key == NULL || key_len != s->key_len) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return NULL;
    }
    if (!qc_init())
        return NULL;
    if ((hp = OPENSSL_zalloc(sizeof(*hp))) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    hp->chacha = s->hp == HP_CHACHA20;
    hp->c = EVP_CIPHER_CTX_new();
    if (hp->c == NULL || !EVP_EncryptInit_ex(hp->c, g.hp[s->hp], NULL, hp_key, NULL) ||
        (!hp->chacha && !EVP_CIPHER_CTX_set_padding(hp->c, 0))) {
        qtls_quic_hp_free(hp);
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return NULL;
    }
    return hp;
}

struct qtls_quic_hp *qtls_quic_hp_new_from_secret(uint32_t version, uint32_t suite,
                                                  const uint8_t *secret, size_t secret_len)
{
    uint8_t key[QTLS_QUIC_MAX_KEY_LEN];
    struct qtls_quic_hp *hp = NULL;
    if (qtls_quic_derive_packet_keys(version, suite, secret, secret_len, NULL, NULL, key))
        hp = qtls_quic_hp_new(suite, key, qtls_quic_suite_key_len(suite));
    OPENSSL_cleanse(key, sizeof(key));
    return hp;
}

void qtls_quic_hp_free(struct qtls_quic_hp *hp)
{
    if (hp == NULL)
        return;
    EVP_CIPHER_CTX_free(hp->c);
    OPENSSL_clear_free(hp, sizeof(*hp));
}

int qtls_quic_hp_mask(struct qtls_quic_hp *hp, const uint8_t *sample, uint8_t *mask)
{
    static const uint8_t zeros[QTLS_QUIC_HP_MASK_LEN];
    uint8_t block[QTLS_QUIC_HP_SAMPLE_LEN];
    int len, ok;
    if (hp == NULL || sample == NULL || mask == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (hp->chacha)
        /* §5.4.4: counter = sample[0..3] little-endian, nonce = sample[4..15]: exactly the
         * 16-byte IV of OpenSSL's ChaCha20; the mask is the keystream over five zero bytes. */
        ok = EVP_EncryptInit_ex(hp->c, NULL, NULL, NULL, sample) &&
             EVP_EncryptUpdate(hp->c, block, &len, zeros, sizeof(zeros));
    else
        /* §5.4.3: mask = AES-ECB(hp_key, sample). */
        ok = EVP_EncryptUpdate(hp->c, block, &len, sample, QTLS_QUIC_HP_SAMPLE_LEN) &&
             len == QTLS_QUIC_HP_SAMPLE_LEN;
    if (ok)
        memcpy(mask, block, QTLS_QUIC_HP_MASK_LEN);
    else
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    OPENSSL_cleanse(block, sizeof(block));
    return ok;
}

/*
 * §5.4.1: the first byte keeps its form bit; a long header (0x80) masks the
 * low 4 bits (type-specific bits), a short header the low 5 (reserved, key
 * phase, packet-number length). The packet-number bytes are masked with
 * mask[1..pn_len]. §5.4.2: the sample starts 4 bytes after the packet number
 * starts, whatever its length.
 */
static int hp_check(const struct qtls_quic_hp *hp, const uint8_t *pkt, size_t pkt_len,
                    size_t pn_offset)
{
    if (hp == NULL || pkt == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (pn_offset < 1 || pn_offset > pkt_len || pkt_len - pn_offset < 4 + QTLS_QUIC_HP_SAMPLE_LEN) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_PACKET);
        return 0;
    }
    return 1;
}

static uint8_t first_byte_mask(uint8_t first) { return (first & 0x80) ? 0x0f : 0x1f; }

int qtls_quic_hp_apply(struct qtls_quic_hp *hp, uint8_t *pkt, size_t pkt_len, size_t pn_offset)
{
    uint8_t mask[QTLS_QUIC_HP_MASK_LEN];
    if (!hp_check(hp, pkt, pkt_len, pn_offset) || !qtls_quic_hp_mask(hp, pkt + pn_offset + 4, mask))
        return 0;
    size_t pn_len = (size_t)(pkt[0] & 0x03) + 1; /* read before masking */
    pkt[0] ^= mask[0] & first_byte_mask(pkt[0]);
    for (size_t i = 0; i < pn_len; i++)
        pkt[pn_offset + i] ^= mask[1 + i];
    return 1;
}

int qtls_quic_hp_remove(struct qtls_quic_hp *hp, uint8_t *pkt, size_t pkt_len, size_t pn_offset,
                        size_t *pn_len)
{
    uint8_t mask[QTLS_QUIC_HP_MASK_LEN];
    if (pn_len == NULL || !hp_check(hp, pkt, pkt_len, pn_offset) ||
        !qtls_quic_hp_mask(hp, pkt + pn_offset + 4, mask))
        return 0;
    pkt[0] ^= mask[0] & first_byte_mask(pkt[0]);
    *pn_len = (size_t)(pkt[0] & 0x03) + 1; /* read after unmasking */
    for (size_t i = 0; i < *pn_len; i++)
        pkt[pn_offset + i] ^= mask[1 + i];
    return 1;
}

/* ---- Whole packets ---- */

uint64_t qtls_quic_decode_pn(int64_t largest_pn, uint64_t truncated, size_t pn_len)
{
    /* RFC 9000 §A.3, with "candidate <= expected - hwin" written without underflow. */
    const uint64_t max_pn = (uint64_t)1 << 62;
    if (pn_len < 1 || pn_len > 4)
        pn_len = 4;
    uint64_t expected = largest_pn < 0 ? 0 : (uint64_t)largest_pn + 1;
    uint64_t win = (uint64_t)1 << (8 * pn_len), hwin = win / 2, mask = win - 1;
    uint64_t candidate = (expected & ~mask) | (truncated & mask);
    if (candidate + hwin <= expected && candidate < max_pn - win)
        return candidate + win;
    if (candidate > expected + hwin && candidate >= win)
        return candidate - win;
    return candidate;
}

int qtls_quic_packet_protect(struct qtls_quic_aead *aead, struct qtls_quic_hp *hp, uint64_t pn,
                             uint8_t *pkt, size_t hdr_len, size_t payload_len)
{
    if (aead == NULL || hp == NULL || pkt == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    size_t pn_len = hdr_len >= 1 ? (size_t)(pkt[0] & 0x03) + 1 : 0;
    if (hdr_len < pn_len + 1 || payload_len > SIZE_MAX - hdr_len - QTLS_QUIC_TAG_LEN) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_PACKET);
        return 0;
    }
    size_t pn_offset = hdr_len - pn_len, total = hdr_len + payload_len + QTLS_QUIC_TAG_LEN;
    /* The header must carry the low bytes of the pn that makes the nonce, or the peer cannot
     * recover the nonce (RFC 9000 §17.1). */
    uint64_t truncated = 0;
    for (size_t i = 0; i < pn_len; i++)
        truncated = truncated << 8 | pkt[pn_offset + i];
    if (truncated != (pn & (((uint64_t)1 << (8 * pn_len)) - 1))) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_VALUE);
        return 0;
    }
    /* Checked before sealing so a failure leaves no half-protected packet. */
    if (!hp_check(hp, pkt, total, pn_offset))
        return 0;
    return qtls_quic_aead_seal(aead, pn, pkt, hdr_len, pkt + hdr_len, payload_len, pkt + hdr_len) &&
           qtls_quic_hp_apply(hp, pkt, total, pn_offset);
}

int qtls_quic_packet_unprotect(struct qtls_quic_aead *aead, struct qtls_quic_hp *hp,
                               int64_t largest_pn, uint8_t *pkt, size_t pkt_len, size_t pn_offset,
                               uint64_t *pn, size_t *hdr_len, size_t *payload_len)
{
    size_t pn_len;
    if (aead == NULL || pn == NULL || hdr_len == NULL || payload_len == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (!qtls_quic_hp_remove(hp, pkt, pkt_len, pn_offset, &pn_len))
        return 0;
    /* hp_check guaranteed pkt_len >= pn_offset + 20, so a tag fits after a 4-byte pn. */
    uint64_t truncated = 0;
    for (size_t i = 0; i < pn_len; i++)
        truncated = truncated << 8 | pkt[pn_offset + i];
    uint64_t full = qtls_quic_decode_pn(largest_pn, truncated, pn_len);
    size_t hlen = pn_offset + pn_len;
    if (!qtls_quic_aead_open(aead, full, pkt, hlen, pkt + hlen, pkt_len - hlen, pkt + hlen))
        return 0;
    *pn = full;
    *hdr_len = hlen;
    *payload_len = pkt_len - hlen - QTLS_QUIC_TAG_LEN;
    return 1;
}

/* ---- Retry (RFC 9001 §5.8, RFC 9369 §3.3.3) ---- */

int qtls_quic_retry_tag(uint32_t version, const uint8_t *odcid, size_t odcid_len,
                        const uint8_t *retry, size_t retry_len, uint8_t *tag)
{
    const struct qversion *v = version_get(version);
    if (v == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_PROTOCOL);
        return 0;
    }
    if ((odcid == NULL && odcid_len != 0) || odcid_len > MAX_CID_LEN || retry == NULL ||
        retry_len > INT_MAX || tag == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return 0;
    }
    if (!qc_init())
        return 0;
    /*
     * Retry Pseudo-Packet { ODCID Length (8), Original Destination Connection ID (0..160),
     * Header Form (1) = 1, ... Retry Token (..) }: the packet without its tag, after the
     * ODCID. It is all AAD of an AES-128-GCM seal of nothing; the tag is the output. Retry is
     * not on the per-packet path, so a context per call is fine.
     */
    uint8_t odcid_len8 = (uint8_t)odcid_len, unused[16];
    int len;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ok = c != NULL &&
             EVP_EncryptInit_ex(c, g.aead[AEAD_AES_128_GCM], NULL, v->retry_key, v->retry_nonce) &&
             EVP_EncryptUpdate(c, NULL, &len, &odcid_len8, 1) &&
             (odcid_len == 0 || EVP_EncryptUpdate(c, NULL, &len, odcid, (int)odcid_len)) &&
             (retry_len == 0 || EVP_EncryptUpdate(c, NULL, &len, retry, (int)retry_len)) &&
             EVP_EncryptFinal_ex(c, unused, &len) &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, QTLS_QUIC_RETRY_TAG_LEN, tag) > 0;
    EVP_CIPHER_CTX_free(c);
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

int qtls_quic_retry_verify(uint32_t version, const uint8_t *odcid, size_t odcid_len,
                           const uint8_t *packet, size_t packet_len)
{
    uint8_t tag[QTLS_QUIC_RETRY_TAG_LEN];
    if (packet == NULL || packet_len < QTLS_QUIC_RETRY_TAG_LEN) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_PACKET);
        return 0;
    }
    size_t body = packet_len - QTLS_QUIC_RETRY_TAG_LEN;
    if (!qtls_quic_retry_tag(version, odcid, odcid_len, packet, body, tag))
        return 0;
    if (CRYPTO_memcmp(tag, packet + body, QTLS_QUIC_RETRY_TAG_LEN) != 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_DECRYPTION_FAILED);
        return 0;
    }
    return 1;
}
