/*
 * The crypto adapter: the only place that calls libcrypto's EVP layer for
 * TLS work (hashes, the transcript's running hash, HMAC/HKDF, key exchange,
 * signatures, session ticket protection, randomness); `make lint` checks it.
 * Algorithms are fetched once per process (crypto_init) so that a handshake
 * never pays for provider lookups.
 */

#include "crypto/crypto.h"

#include <limits.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

static struct {
    CRYPTO_ONCE once;
    int ok;
    EVP_MD *md[QTLS_HASH_COUNT];
    EVP_CIPHER *gcm; /* AES-256-GCM: qtls's own session tickets */
    EVP_CIPHER *aead[4]; /* record protection, by aead_index (NULL: the provider lacks it) */
    EVP_MAC *hmac;   /* the EVP_MAC_CTX handed to the application's ticket key callback */
    uint8_t empty_hash[QTLS_HASH_COUNT][EVP_MAX_MD_SIZE]; /* Hash(""), a constant (§7.1) */
    int direct[QTLS_HASH_COUNT]; /* hash with SHA256_Init & co., not EVP: see hash_begin */
    CRYPTO_RWLOCK *pool_lock;                             /* guards kex_pools (below) */
} g = {.once = CRYPTO_ONCE_STATIC_INIT};

static const char *const md_names[QTLS_HASH_COUNT] = {"SHA2-256", "SHA2-384"};

/* Test hooks (internal.h): deterministic randomness and key shares for known-answer tests. */
static int (*test_random)(uint8_t *, size_t, void *);
static void *test_random_arg;
static EVP_PKEY *test_kex_key;

#ifdef QTLS_FUZZING
/*
 * The fuzzing build (-DQTLS_FUZZING, set only for make fuzz's build-fuzz/
 * objects), as BoringSSL's fuzzer mode: randomness is a fixed pattern (the
 * built-in ticket key is the same in every process, so seeds' tickets open),
 * ephemeral keys are fixed, and signatures, Finished and PSK binders are
 * accepted whatever their value (crypto_verify, crypto_mac_equal), so that a
 * fuzzer reaches every handshake state in both roles; TCP record protection
 * is transparent (crypto_aead_seal copies the plaintext and appends a fixed
 * tag, crypto_aead_open takes any tag), so that fuzz_record's records past
 * the ServerHello are read as they come; clock.c's clock stands still, so
 * that seeds' tickets never expire. It must never reach a library:
 * tests/fuzzmode/run.sh looks for this marker in libqtls.a/.so.
 */
const char qtls_fuzzing_build_marker[] = "QTLS_FUZZING_BUILD: insecure, never ship";

static EVP_PKEY *generate_key(const struct group *g_);

/* X25519/X448 from fixed bytes; an EC key made once per group and process. */
static EVP_PKEY *fuzzing_kex_key(const struct group *grp)
{
    static const uint8_t fixed[56] = {0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42};
    static struct { const struct group *grp; EVP_PKEY *key; } ec[8];
    if (grp->kind != KEX_EC)
        return EVP_PKEY_new_raw_private_key(grp->kind == KEX_X25519 ? EVP_PKEY_X25519
                                                                    : EVP_PKEY_X448,
                                            NULL, fixed, grp->kind == KEX_X25519 ? 32 : 56);
    for (size_t i = 0; i < sizeof(ec) / sizeof(ec[0]); i++) {
        if (ec[i].grp == NULL && (ec[i].key = generate_key(grp)) != NULL)
            ec[i].grp = grp;
        if (ec[i].grp == grp)
            return EVP_PKEY_up_ref(ec[i].key) ? ec[i].key : NULL;
    }
    return NULL;
}
#endif

/*
 * Hashing straight through SHA256_Init/SHA384_Init & co. instead of an
 * EVP_MD_CTX: in OpenSSL 3.0 every EVP_DigestInit_ex and EVP_MD_CTX_copy_ex
 * allocates a new provider context, which cost the handshake about 85 of its
 * allocations (25 HMACs, the transcript's reads; bench/README.md). Only when
 * the fetched digest is the default provider's, whose SHA-2 is these very
 * functions; a FIPS or any other provider keeps the EVP path, and so does a
 * libcrypto built without the 3.0 deprecated API.
 */
static int direct_hash_allowed(const EVP_MD *md)
{
#ifdef OPENSSL_NO_DEPRECATED_3_0
    (void)md;
    return 0;
#else
    const OSSL_PROVIDER *prov = EVP_MD_get0_provider(md);
    return prov != NULL && strcmp(OSSL_PROVIDER_get0_name(prov), "default") == 0;
#endif
}

/* The record AEADs of TLS 1.3's suites, in the order of aead_index. */
static const char *const aead_names[4] = {"AES-128-GCM", "AES-256-GCM", "ChaCha20-Poly1305",
                                          "AES-128-CCM"};

static int aead_index(int cipher_nid)
{
    switch (cipher_nid) {
    case NID_aes_128_gcm:
        return 0;
    case NID_aes_256_gcm:
        return 1;
    case NID_chacha20_poly1305:
        return 2;
    case NID_aes_128_ccm:
        return 3;
    }
    return -1;
}

static void fetch_all(void)
{
    for (int h = 0; h < QTLS_HASH_COUNT; h++) {
        g.md[h] = EVP_MD_fetch(NULL, md_names[h], NULL);
        if (g.md[h] == NULL || !EVP_Digest(NULL, 0, g.empty_hash[h], NULL, g.md[h], NULL))
            return;
        g.direct[h] = direct_hash_allowed(g.md[h]);
    }
    g.gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    for (int i = 0; i < 4; i++)
        g.aead[i] = EVP_CIPHER_fetch(NULL, aead_names[i], NULL);
    g.hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    g.pool_lock = CRYPTO_THREAD_lock_new();
    g.ok = g.gcm != NULL && g.hmac != NULL && g.pool_lock != NULL;
}

int crypto_init(void)
{
    if (!CRYPTO_THREAD_run_once(&g.once, fetch_all) || !g.ok) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return 0;
    }
    return 1;
}

const EVP_MD *crypto_md(enum qtls_hash h) { return g.md[h]; }

size_t crypto_hash_len(enum qtls_hash h) { return h == QTLS_SHA384 ? 48 : 32; }

const uint8_t *crypto_empty_hash(enum qtls_hash h) { return g.empty_hash[h]; }

int crypto_random(uint8_t *out, size_t len)
{
    if (test_random != NULL)
        return test_random(out, len, test_random_arg);
#ifdef QTLS_FUZZING
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(0xa5 ^ i);
    return 1;
#endif
    if (RAND_bytes(out, (int)len) != 1) {
        ERR_raise(ERR_LIB_SSL, ERR_R_RAND_LIB);
        return 0;
    }
    return 1;
}

void crypto_set_test_random(int (*fn)(uint8_t *, size_t, void *), void *arg)
{
    test_random = fn;
    test_random_arg = arg;
}

void crypto_set_test_kex_key(EVP_PKEY *key)
{
    EVP_PKEY_free(__atomic_exchange_n(&test_kex_key, key, __ATOMIC_ACQ_REL));
}

/* ---- running hashes: HMAC's and the transcript's (keysched.c) ---- */

struct crypto_hash {
    enum qtls_hash h;
    EVP_MD_CTX *md;      /* the EVP path; NULL when direct */
    EVP_MD_CTX *scratch; /* the EVP path's copy for reads, kept for the next one */
#ifndef OPENSSL_NO_DEPRECATED_3_0
    union {
        SHA256_CTX s256;
        SHA512_CTX s512; /* SHA-384 runs on SHA-512's state */
    } st;
#endif
};

/* Starts (or restarts) c as hash h; c->md, if set, is reused. */
static int hash_begin(struct crypto_hash *c, enum qtls_hash h)
{
    c->h = h;
#ifndef OPENSSL_NO_DEPRECATED_3_0
    if (g.direct[h] && c->md == NULL)
        return h == QTLS_SHA384 ? SHA384_Init(&c->st.s512) : SHA256_Init(&c->st.s256);
#endif
    if (c->md == NULL && (c->md = EVP_MD_CTX_new()) == NULL)
        return 0;
    return EVP_DigestInit_ex(c->md, g.md[h], NULL);
}

static int hash_add(struct crypto_hash *c, const void *p, size_t n)
{
    if (n == 0)
        return 1;
    if (c->md != NULL)
        return EVP_DigestUpdate(c->md, p, n);
#ifndef OPENSSL_NO_DEPRECATED_3_0
    return c->h == QTLS_SHA384 ? SHA384_Update(&c->st.s512, p, n)
                               : SHA256_Update(&c->st.s256, p, n);
#else
    return 0;
#endif
}

/* Writes the digest; c is ended (hash_begin starts it again). */
static int hash_end(struct crypto_hash *c, uint8_t *out)
{
    if (c->md != NULL)
        return EVP_DigestFinal_ex(c->md, out, NULL);
#ifndef OPENSSL_NO_DEPRECATED_3_0
    int ok = c->h == QTLS_SHA384 ? SHA384_Final(out, &c->st.s512)
                                 : SHA256_Final(out, &c->st.s256);
    OPENSSL_cleanse(&c->st, sizeof(c->st));
    return ok;
#else
    return 0;
#endif
}

static void hash_release(struct crypto_hash *c)
{
    EVP_MD_CTX_free(c->md);
    EVP_MD_CTX_free(c->scratch);
#ifndef OPENSSL_NO_DEPRECATED_3_0
    OPENSSL_cleanse(&c->st, sizeof(c->st));
#endif
}

int crypto_digest(enum qtls_hash h, const uint8_t *data, size_t len, uint8_t *out)
{
    struct crypto_hash c = {0};
    int ok = hash_begin(&c, h) && hash_add(&c, data, len) && hash_end(&c, out);
    hash_release(&c);
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

#define HMAC_MAX_BLOCK 128 /* SHA-384's block size */

/*
 * HMAC over up to three pieces (so HKDF-Expand needs no concatenation
 * buffer), as RFC 2104 defines it, on one running hash: an EVP_MAC context
 * per call cost a dozen allocations, thirty times a handshake (bench/README.md).
 *   HMAC(K, m) = H((K0 ^ opad) || H((K0 ^ ipad) || m))
 */
static int hmac3(enum qtls_hash h, const uint8_t *key, size_t key_len, const uint8_t *a,
                 size_t a_len, const uint8_t *b, size_t b_len, const uint8_t *c, size_t c_len,
                 uint8_t *out)
{
    size_t block = h == QTLS_SHA384 ? 128 : 64, hl = crypto_hash_len(h);
    uint8_t k0[HMAC_MAX_BLOCK] = {0}, pad[HMAC_MAX_BLOCK], inner[EVP_MAX_MD_SIZE];
    struct crypto_hash m = {0};
    int ok = 1;
    /* K0: the key, hashed first if longer than a block, zero-padded to a block. */
    if (key_len > block)
        ok = hash_begin(&m, h) && hash_add(&m, key, key_len) && hash_end(&m, k0);
    else if (key_len > 0)
        memcpy(k0, key, key_len);
    for (size_t i = 0; ok && i < block; i++)
        pad[i] = k0[i] ^ 0x36;
    ok = ok && hash_begin(&m, h) && hash_add(&m, pad, block) && hash_add(&m, a, a_len) &&
         hash_add(&m, b, b_len) && hash_add(&m, c, c_len) && hash_end(&m, inner);
    for (size_t i = 0; ok && i < block; i++)
        pad[i] = k0[i] ^ 0x5c;
    ok = ok && hash_begin(&m, h) && hash_add(&m, pad, block) && hash_add(&m, inner, hl) &&
         hash_end(&m, out);
    hash_release(&m);
    OPENSSL_cleanse(k0, sizeof(k0));
    OPENSSL_cleanse(pad, sizeof(pad));
    OPENSSL_cleanse(inner, sizeof(inner));
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

int crypto_hmac(enum qtls_hash h, const uint8_t *key, size_t key_len, const uint8_t *data,
                size_t data_len, uint8_t *out)
{
    return hmac3(h, key, key_len, data, data_len, NULL, 0, NULL, 0, out);
}

/* RFC 5869 §2.2: PRK = HMAC-Hash(salt, IKM); an absent salt is HashLen zeros. */
int crypto_hkdf_extract(enum qtls_hash h, const uint8_t *salt, size_t salt_len,
                        const uint8_t *ikm, size_t ikm_len, uint8_t *out)
{
    static const uint8_t zeros[EVP_MAX_MD_SIZE];
    if (salt == NULL) {
        salt = zeros;
        salt_len = crypto_hash_len(h);
    }
    return crypto_hmac(h, salt, salt_len, ikm, ikm_len, out);
}

/* RFC 5869 §2.3: T(i) = HMAC-Hash(PRK, T(i-1) | info | i). */
int crypto_hkdf_expand(enum qtls_hash h, const uint8_t *prk, size_t prk_len,
                       const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len)
{
    size_t hl = crypto_hash_len(h), done = 0;
    uint8_t t[EVP_MAX_MD_SIZE];
    if (out_len > 255 * hl) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    for (uint8_t i = 1; done < out_len; i++) {
        if (!hmac3(h, prk, prk_len, t, done == 0 ? 0 : hl, info, info_len, &i, 1, t)) {
            OPENSSL_cleanse(t, sizeof(t));
            return 0;
        }
        size_t n = out_len - done < hl ? out_len - done : hl;
        memcpy(out + done, t, n);
        done += n;
    }
    OPENSSL_cleanse(t, sizeof(t));
    return 1;
}

struct crypto_hash *crypto_hash_new(enum qtls_hash h)
{
    struct crypto_hash *c = OPENSSL_zalloc(sizeof(*c));
    if (c == NULL || !hash_begin(c, h)) {
        crypto_hash_free(c);
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return NULL;
    }
    return c;
}

struct crypto_hash *crypto_hash_dup(const struct crypto_hash *src)
{
    struct crypto_hash *c = OPENSSL_zalloc(sizeof(*c));
    int ok = c != NULL;
    if (ok && src->md != NULL)
        ok = (c->md = EVP_MD_CTX_new()) != NULL && EVP_MD_CTX_copy_ex(c->md, src->md);
#ifndef OPENSSL_NO_DEPRECATED_3_0
    else if (ok)
        c->st = src->st; /* the direct state is plain data */
#endif
    if (!ok) {
        crypto_hash_free(c);
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return NULL;
    }
    c->h = src->h;
    return c;
}

int crypto_hash_update(struct crypto_hash *c, const uint8_t *p, size_t n)
{
    if (!hash_add(c, p, n)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return 0;
    }
    return 1;
}

int crypto_hash_restart(struct crypto_hash *c)
{
    if (!hash_begin(c, c->h)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return 0;
    }
    return 1;
}

int crypto_hash_peek(struct crypto_hash *c, const uint8_t *extra, size_t extra_len,
                     uint8_t *out)
{
    int ok;
    if (c->md == NULL) {
        struct crypto_hash copy = *c; /* the direct state is plain data */
        ok = hash_add(&copy, extra, extra_len) && hash_end(&copy, out);
        OPENSSL_cleanse(&copy, sizeof(copy));
    } else {
        /* The copy is kept for the next read: Final leaves no transcript state in it. */
        ok = (c->scratch != NULL || (c->scratch = EVP_MD_CTX_new()) != NULL) &&
             EVP_MD_CTX_copy_ex(c->scratch, c->md) &&
             (extra_len == 0 || EVP_DigestUpdate(c->scratch, extra, extra_len)) &&
             EVP_DigestFinal_ex(c->scratch, out, NULL);
    }
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

void crypto_hash_free(struct crypto_hash *c)
{
    if (c == NULL)
        return;
    hash_release(c);
    OPENSSL_free(c);
}

void crypto_set_test_evp_hashes(int on)
{
    for (int h = 0; h < QTLS_HASH_COUNT; h++)
        g.direct[h] = on ? 0 : direct_hash_allowed(g.md[h]);
}

/* ---- session tickets (ticket.c) ---- */

/*
 * qtls's own ticket format: AES-256-GCM with the key name as additional data.
 * Returns 1, 0 when opening fails authentication, -1 on an internal error (raised).
 */
int crypto_ticket_gcm(int enc, const uint8_t key[32], const uint8_t *aad, size_t aad_len,
                      const uint8_t nonce[12], const uint8_t *in, size_t len, uint8_t *out,
                      uint8_t tag[16])
{
    EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
    int n = 0, fin = 0, ret = -1;
    if (cc == NULL || len > INT_MAX || aad_len > INT_MAX ||
        !EVP_CipherInit_ex2(cc, g.gcm, key, nonce, enc, NULL) ||
        !EVP_CipherUpdate(cc, NULL, &n, aad, (int)aad_len) ||
        (len > 0 && !EVP_CipherUpdate(cc, out, &n, in, (int)len)) ||
        (!enc && !EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_SET_TAG, 16, tag)))
        goto end;
    if (!EVP_CipherFinal_ex(cc, out + n, &fin)) {
        ret = enc ? -1 : 0;
        goto end;
    }
    if (enc && !EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_GET_TAG, 16, tag))
        goto end;
    ret = 1;
end:
    if (ret < 0)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    EVP_CIPHER_CTX_free(cc);
    return ret;
}

/* The two contexts SSL_CTX_set_tlsext_ticket_key_evp_cb's callback sets up. */
int crypto_ticket_cb_new(struct crypto_ticket_cb *t)
{
    t->cc = EVP_CIPHER_CTX_new();
    t->hc = EVP_MAC_CTX_new(g.hmac);
    if (t->cc == NULL || t->hc == NULL) {
        crypto_ticket_cb_free(t);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    return 1;
}

void crypto_ticket_cb_free(struct crypto_ticket_cb *t)
{
    EVP_CIPHER_CTX_free(t->cc);
    EVP_MAC_CTX_free(t->hc);
    t->cc = NULL;
    t->hc = NULL;
}

int crypto_ticket_cb_lengths(const struct crypto_ticket_cb *t, int enc, size_t *iv_len,
                             size_t *mac_len)
{
    if (EVP_CIPHER_CTX_get0_cipher(t->cc) == NULL || EVP_CIPHER_CTX_is_encrypting(t->cc) != enc)
        return 0;
    int ivl = EVP_CIPHER_CTX_get_iv_length(t->cc);
    size_t ml = EVP_MAC_CTX_get_mac_size(t->hc);
    if (ivl < 0 || ivl > EVP_MAX_IV_LENGTH || ml == 0 || ml > EVP_MAX_MD_SIZE)
        return 0;
    *iv_len = (size_t)ivl;
    *mac_len = ml;
    return 1;
}

int crypto_ticket_cb_cipher(struct crypto_ticket_cb *t, const uint8_t *in, size_t len,
                            uint8_t *out, size_t *out_len)
{
    int n = 0, fin = 0;
    if (len > INT_MAX - EVP_MAX_BLOCK_LENGTH || !EVP_CipherUpdate(t->cc, out, &n, in, (int)len)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return -1;
    }
    if (!EVP_CipherFinal_ex(t->cc, out + n, &fin))
        return 0;
    *out_len = (size_t)n + (size_t)fin;
    return 1;
}

int crypto_ticket_cb_mac(struct crypto_ticket_cb *t, const uint8_t *in, size_t len, uint8_t *out,
                         size_t mac_len)
{
    size_t got = 0;
    if (!EVP_MAC_update(t->hc, in, len) || !EVP_MAC_final(t->hc, out, &got, mac_len) ||
        got != mac_len) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        return 0;
    }
    return 1;
}

/* ---- record protection (RFC 8446 §5.2, §5.3): transport/record.c ---- */

/* One direction of one epoch: keyed once, each record sets only its nonce. */
struct crypto_aead {
    EVP_CIPHER_CTX *ctx;
    uint8_t iv[CRYPTO_AEAD_IV_LEN];
    uint8_t ccm; /* CCM takes the plaintext length before the additional data */
};


size_t crypto_aead_key_len(const SSL_CIPHER *suite)
{
    return suite->cipher_nid == NID_aes_128_gcm || suite->cipher_nid == NID_aes_128_ccm ? 16 : 32;
}

struct crypto_aead *crypto_aead_new(const SSL_CIPHER *suite, int enc, const uint8_t *key,
                                    const uint8_t iv[CRYPTO_AEAD_IV_LEN])
{
    int i = aead_index(suite->cipher_nid);
    EVP_CIPHER *cipher = i >= 0 ? g.aead[i] : NULL;
    struct crypto_aead *a = OPENSSL_zalloc(sizeof(*a));
    int ok = cipher != NULL && a != NULL && (a->ctx = EVP_CIPHER_CTX_new()) != NULL &&
             EVP_CipherInit_ex(a->ctx, cipher, NULL, NULL, NULL, enc);
    if (ok && suite->cipher_nid == NID_aes_128_ccm) {
        /* CCM's nonce length defaults to 7 and its tag length to 12; TLS 1.3 uses 12 and 16. */
        a->ccm = 1;
        ok = EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_IVLEN, CRYPTO_AEAD_IV_LEN, NULL) > 0 &&
             EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, CRYPTO_AEAD_TAG_LEN, NULL) > 0;
    }
    ok = ok && EVP_CipherInit_ex(a->ctx, NULL, NULL, key, NULL, enc);
    if (!ok) {
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
        crypto_aead_free(a);
        return NULL;
    }
    memcpy(a->iv, iv, CRYPTO_AEAD_IV_LEN);
    return a;
}

void crypto_aead_free(struct crypto_aead *a)
{
    if (a == NULL)
        return;
    EVP_CIPHER_CTX_free(a->ctx);
    OPENSSL_clear_free(a, sizeof(*a));
}

/* §5.3: the 64-bit record sequence number, left-padded to the IV's length, XORed with the IV. */
static void record_nonce(const struct crypto_aead *a, uint64_t seq, uint8_t *nonce)
{
    memcpy(nonce, a->iv, CRYPTO_AEAD_IV_LEN);
    for (int i = 0; i < 8; i++)
        nonce[CRYPTO_AEAD_IV_LEN - 1 - i] ^= (uint8_t)(seq >> (8 * i));
}

int crypto_aead_seal(struct crypto_aead *a, uint64_t seq, const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t *out)
{
#ifdef QTLS_FUZZING
    /* transparent: the plaintext (in may be out) and a fixed tag */
    memmove(out, in, len);
    memset(out + len, 0xf2, CRYPTO_AEAD_TAG_LEN);
    return 1;
#endif
    uint8_t nonce[CRYPTO_AEAD_IV_LEN];
    int n;
    record_nonce(a, seq, nonce);
    int ok = len <= INT_MAX - CRYPTO_AEAD_TAG_LEN && aad_len <= INT_MAX &&
             EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 1) &&
             (!a->ccm || EVP_CipherUpdate(a->ctx, NULL, &n, NULL, (int)len)) &&
             EVP_CipherUpdate(a->ctx, NULL, &n, aad, (int)aad_len) &&
             EVP_CipherUpdate(a->ctx, out, &n, in, (int)len) &&
             EVP_CipherFinal_ex(a->ctx, out + n, &n) &&
             EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_GET_TAG, CRYPTO_AEAD_TAG_LEN, out + len) > 0;
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

int crypto_aead_open(struct crypto_aead *a, uint64_t seq, const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t nonce[CRYPTO_AEAD_IV_LEN];
    int n;
    if (len < CRYPTO_AEAD_TAG_LEN || len > INT_MAX || aad_len > INT_MAX)
        return 0;
    size_t ct_len = len - CRYPTO_AEAD_TAG_LEN;
#ifdef QTLS_FUZZING
    /* transparent: any tag, the ciphertext is the plaintext (in may be out) */
    memmove(out, in, ct_len);
    return 1;
#endif
    record_nonce(a, seq, nonce);
    /* The tag is set before any plaintext is written, so in == out is safe. CCM checks it in
     * its one Update (queueing an error of its own, which the mark drops); GCM and
     * ChaCha20-Poly1305 in Final. */
    ERR_set_mark();
    int ok = EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 0) &&
             EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, CRYPTO_AEAD_TAG_LEN,
                                 (void *)(in + ct_len)) > 0 &&
             (!a->ccm || EVP_CipherUpdate(a->ctx, NULL, &n, NULL, (int)ct_len)) &&
             EVP_CipherUpdate(a->ctx, NULL, &n, aad, (int)aad_len) &&
             EVP_CipherUpdate(a->ctx, out, &n, in, (int)ct_len) &&
             (a->ccm || EVP_CipherFinal_ex(a->ctx, out + n, &n));
    ERR_pop_to_mark();
    if (!ok)
        OPENSSL_cleanse(out, ct_len); /* no unauthenticated plaintext leaves */
    return ok;
}

/* ---- key exchange (RFC 8446 §4.2.8, §7.4) ---- */

/*
 * OpenSSL 3.0 looks a key type up by name, walking its whole name map, each
 * time it makes a key context or a key (EVP_PKEY_CTX_new_from_name, the key
 * EVP_PKEY_new_raw_public_key makes): about 16 k instructions a time, several
 * times a handshake (bench/README.md). So the objects that carry no secret
 * and can be used again are kept in a small pool per group and reused: the
 * keygen contexts (set up with the group, holding no key) and the peer-key
 * objects of X25519/X448 (a public key, overwritten with each peer's share).
 * One lock guards the pools; an object is used by one handshake at a time.
 */
#define KEX_POOL_MAX 8 /* per group and kind: about the handshakes running at once */

struct kex_pool {
    uint16_t group; /* 0: slot unused */
    size_t n_gen, n_peer;
    EVP_PKEY_CTX *gen[KEX_POOL_MAX];
    EVP_PKEY *peer[KEX_POOL_MAX];
};
static struct kex_pool kex_pools[QTLS_MAX_GROUPS];

/* The group's pool, made on first use; called with the lock held. NULL if all are taken. */
static struct kex_pool *pool_of(const struct group *grp)
{
    for (size_t i = 0; i < QTLS_MAX_GROUPS; i++) {
        if (kex_pools[i].group == grp->id)
            return &kex_pools[i];
        if (kex_pools[i].group == 0) {
            kex_pools[i].group = grp->id;
            return &kex_pools[i];
        }
    }
    return NULL;
}

/* Takes a pooled object (gen: a keygen context, else a peer key); NULL if none is left. */
static void *pool_take(const struct group *grp, int gen)
{
    void *obj = NULL;
    if (!CRYPTO_THREAD_write_lock(g.pool_lock))
        return NULL;
    struct kex_pool *p = pool_of(grp);
    if (p != NULL && gen && p->n_gen > 0)
        obj = p->gen[--p->n_gen];
    else if (p != NULL && !gen && p->n_peer > 0)
        obj = p->peer[--p->n_peer];
    CRYPTO_THREAD_unlock(g.pool_lock);
    return obj;
}

/* Gives an object back to its pool, or frees it when the pool is full. */
static void pool_give(const struct group *grp, int gen, void *obj)
{
    if (obj == NULL)
        return;
    if (CRYPTO_THREAD_write_lock(g.pool_lock)) {
        struct kex_pool *p = pool_of(grp);
        if (p != NULL && gen && p->n_gen < KEX_POOL_MAX) {
            p->gen[p->n_gen++] = obj;
            obj = NULL;
        } else if (p != NULL && !gen && p->n_peer < KEX_POOL_MAX) {
            p->peer[p->n_peer++] = obj;
            obj = NULL;
        }
        CRYPTO_THREAD_unlock(g.pool_lock);
    }
    if (obj != NULL && gen)
        EVP_PKEY_CTX_free(obj);
    else if (obj != NULL)
        EVP_PKEY_free(obj);
}

/* A keygen context for the group, set up once; each EVP_PKEY_keygen on it makes a new key. */
static EVP_PKEY_CTX *new_keygen_ctx(const struct group *g_)
{
    EVP_PKEY_CTX *pctx;
    if (g_->kind == KEX_EC) {
        pctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        if (pctx == NULL || EVP_PKEY_keygen_init(pctx) <= 0 ||
            EVP_PKEY_CTX_set_group_name(pctx, OBJ_nid2sn(g_->nid)) <= 0)
            goto fail;
    } else {
        pctx = EVP_PKEY_CTX_new_from_name(NULL, g_->kind == KEX_X25519 ? "X25519" : "X448", NULL);
        if (pctx == NULL || EVP_PKEY_keygen_init(pctx) <= 0)
            goto fail;
    }
    return pctx;
fail:
    EVP_PKEY_CTX_free(pctx);
    return NULL;
}

static EVP_PKEY *generate_key(const struct group *g_)
{
    EVP_PKEY_CTX *pctx = pool_take(g_, 1);
    EVP_PKEY *key = NULL;
    if (pctx == NULL)
        pctx = new_keygen_ctx(g_);
    if (pctx == NULL || EVP_PKEY_keygen(pctx, &key) <= 0) {
        EVP_PKEY_CTX_free(pctx); /* not reused after a failure */
        return NULL;
    }
    pool_give(g_, 1, pctx);
    return key;
}

EVP_PKEY *crypto_ecdh_generate(const struct group *grp, struct wr *share_out)
{
    /*
     * Handshakes on many threads pass here: the hook is only read while unset
     * (no store into a shared global per handshake, a data race) and taken
     * atomically when set.
     */
    EVP_PKEY *key = NULL;
    if (__atomic_load_n(&test_kex_key, __ATOMIC_ACQUIRE) != NULL)
        key = __atomic_exchange_n(&test_kex_key, NULL, __ATOMIC_ACQ_REL);
#ifdef QTLS_FUZZING
    if (key == NULL)
        key = fuzzing_kex_key(grp);
#endif
    if (key == NULL)
        key = generate_key(grp);
    if (key == NULL)
        goto fail;
    /*
     * X25519/X448: the raw u-coordinate; EC: the uncompressed point (§4.2.8.2).
     * The encoded-key parameter is both, read in place (EVP_PKEY_get_raw_public_key
     * exports the key through five allocations).
     */
    size_t len = grp->share_len, got = 0;
    uint8_t *p = wr_reserve(share_out, len);
    if (p == NULL)
        goto fail;
    if (!EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, p, len, &got) ||
        got != len)
        goto fail;
    return key;
fail:
    EVP_PKEY_free(key);
    ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return NULL;
}

/* Builds the peer's public key, refusing anything but a well-formed share. */
static EVP_PKEY *peer_key(const struct group *grp, EVP_PKEY *priv, const uint8_t *peer,
                          size_t peer_len)
{
    if (peer_len != grp->share_len)
        return NULL;
    if (grp->kind != KEX_EC) {
        /* A pooled X25519/X448 public key takes the share's bytes, exactly as a new one would. */
        EVP_PKEY *pk = pool_take(grp, 0);
        if (pk != NULL && EVP_PKEY_set1_encoded_public_key(pk, peer, peer_len))
            return pk;
        EVP_PKEY_free(pk);
        return EVP_PKEY_new_raw_public_key(grp->kind == KEX_X25519 ? EVP_PKEY_X25519
                                                                   : EVP_PKEY_X448,
                                           NULL, peer, peer_len);
    }
    EVP_PKEY *pk = EVP_PKEY_new();
    if (pk == NULL || !EVP_PKEY_copy_parameters(pk, priv) ||
        !EVP_PKEY_set1_encoded_public_key(pk, peer, peer_len)) {
        EVP_PKEY_free(pk);
        return NULL;
    }
    return pk;
}

size_t crypto_ecdh_derive(const struct group *grp, EVP_PKEY *priv, const uint8_t *peer,
                          size_t peer_len, uint8_t *out, size_t out_cap)
{
    /* §4.2.8.2: only the uncompressed point form (0x04) is valid for the NIST curves. */
    struct rd r;
    uint8_t form = 4;
    rd_init(&r, peer, peer_len);
    if (grp->kind == KEX_EC && (!rd_u8(&r, &form) || form != 4)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_ECPOINT);
        return 0;
    }
    EVP_PKEY *pk = peer_key(grp, priv, peer, peer_len);
    EVP_PKEY_CTX *dctx = pk == NULL ? NULL : EVP_PKEY_CTX_new_from_pkey(NULL, priv, NULL);
    size_t len = out_cap;
    /*
     * The peer-key check of EVP_PKEY_derive_set_peer: for X25519/X448 all it
     * asks (OpenSSL 3.0's ecx_validate) is whether the key has a public part,
     * which peer_key just gave it, at the cost of one more key context; the
     * all-zero test below is the check that matters (§7.4.2). EC keys keep
     * OpenSSL's full public-key validation.
     */
    int ok = dctx != NULL && EVP_PKEY_derive_init(dctx) > 0 &&
             EVP_PKEY_derive_set_peer_ex(dctx, pk, grp->kind == KEX_EC) > 0 &&
             EVP_PKEY_derive(dctx, out, &len) > 0;
    EVP_PKEY_CTX_free(dctx);
    if (grp->kind != KEX_EC && ok)
        pool_give(grp, 0, pk);
    else
        EVP_PKEY_free(pk);
    if (ok && grp->kind != KEX_EC) {
        /* §7.4.2: an all-zero X25519/X448 result means a small-order point. */
        uint8_t acc = 0;
        for (size_t i = 0; i < len; i++)
            acc |= out[i];
        ok = acc != 0;
    }
    if (!ok) {
        OPENSSL_cleanse(out, out_cap);
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_KEY_SHARE);
        return 0;
    }
    return len;
}

/* ---- signatures (RFC 8446 §4.4.3) ---- */

int crypto_key_matches_scheme(EVP_PKEY *key, const struct sigscheme *s)
{
    if (key == NULL || s == NULL)
        return 0;
    if (s->pkey_type == EVP_PKEY_RSA)
        return EVP_PKEY_is_a(key, "RSA");
    if (s->pkey_type == EVP_PKEY_RSA_PSS)
        return EVP_PKEY_is_a(key, "RSA-PSS");
    if (s->pkey_type == EVP_PKEY_ED25519)
        return EVP_PKEY_is_a(key, "ED25519");
    if (s->pkey_type == EVP_PKEY_ED448)
        return EVP_PKEY_is_a(key, "ED448");
    if (s->pkey_type != EVP_PKEY_EC || !EVP_PKEY_is_a(key, "EC"))
        return 0;
    /* In TLS 1.3 an ECDSA scheme binds the curve too. */
    char name[64];
    size_t len;
    if (!EVP_PKEY_get_group_name(key, name, sizeof(name), &len))
        return 0;
    return OBJ_sn2nid(name) == s->curve_nid;
}

/* Sets up a DigestSign/DigestVerify context; RSA schemes here are all PSS with salt = hash. */
static EVP_MD_CTX *sig_ctx(EVP_PKEY *key, const struct sigscheme *s, int sign)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    const char *md = s->md_nid == NID_undef ? NULL : OBJ_nid2sn(s->md_nid);
    if (m == NULL)
        return NULL;
    int ok = sign ? EVP_DigestSignInit_ex(m, &pctx, md, NULL, NULL, key, NULL)
                  : EVP_DigestVerifyInit_ex(m, &pctx, md, NULL, NULL, key, NULL);
    if (ok > 0 && (s->pkey_type == EVP_PKEY_RSA || s->pkey_type == EVP_PKEY_RSA_PSS) &&
        s->tls13_ok)
        ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
             EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) > 0;
    if (ok <= 0) {
        EVP_MD_CTX_free(m);
        return NULL;
    }
    /*
     * One signature per context: without this flag libcrypto's DigestSignFinal
     * and DigestVerifyFinal work on a duplicate of the key context, so that the
     * context could be finished again (four allocations per signature).
     */
    EVP_MD_CTX_set_flags(m, EVP_MD_CTX_FLAG_FINALISE);
    return m;
}

/*
 * ECDSA with SHA-256/384 signs the digest qtls computes itself (what
 * DigestSign would hash, through the same running hash as the transcript):
 * libcrypto's DigestSign sets up a digest of its own inside the signature
 * context, about ten allocations and a digest fetch per signature. Other
 * schemes (RSA-PSS, EdDSA, SHA-512) keep DigestSign/DigestVerify.
 */
static int is_prehashed(const struct sigscheme *s)
{
    return s->pkey_type == EVP_PKEY_EC && (s->md_nid == NID_sha256 || s->md_nid == NID_sha384);
}

/* For is_prehashed schemes: the key context, and the digest of tbs in `digest`. */
static EVP_PKEY_CTX *ecdsa_prehash_ctx(EVP_PKEY *key, const struct sigscheme *s, int sign,
                                       const uint8_t *tbs, size_t tbs_len, uint8_t *digest,
                                       size_t *digest_len)
{
    enum qtls_hash h = s->md_nid == NID_sha384 ? QTLS_SHA384 : QTLS_SHA256;
    *digest_len = crypto_hash_len(h);
    EVP_PKEY_CTX *p = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (p == NULL || (sign ? EVP_PKEY_sign_init(p) : EVP_PKEY_verify_init(p)) <= 0 ||
        !crypto_digest(h, tbs, tbs_len, digest)) {
        EVP_PKEY_CTX_free(p);
        return NULL;
    }
    return p;
}

int crypto_sign(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs, size_t tbs_len,
                struct wr *sig_out)
{
    uint8_t digest[EVP_MAX_MD_SIZE];
    size_t dlen = 0, len = 0, at = wr_len(sig_out);
    int ok;
    if (is_prehashed(s)) {
        EVP_PKEY_CTX *p = ecdsa_prehash_ctx(key, s, 1, tbs, tbs_len, digest, &dlen);
        ok = p != NULL && EVP_PKEY_sign(p, NULL, &len, digest, dlen) > 0;
        uint8_t *out = ok ? wr_reserve(sig_out, len) : NULL;
        ok = out != NULL && EVP_PKEY_sign(p, out, &len, digest, dlen) > 0;
        EVP_PKEY_CTX_free(p);
    } else {
        EVP_MD_CTX *m = sig_ctx(key, s, 1);
        ok = m != NULL && EVP_DigestSign(m, NULL, &len, tbs, tbs_len) > 0;
        uint8_t *out = ok ? wr_reserve(sig_out, len) : NULL;
        ok = out != NULL && EVP_DigestSign(m, out, &len, tbs, tbs_len) > 0;
        EVP_MD_CTX_free(m);
    }
    if (ok)
        wr_truncate(sig_out, at + len); /* ECDSA signatures may be shorter than the bound */
    else
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

int crypto_verify(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs, size_t tbs_len,
                  const uint8_t *sig, size_t sig_len)
{
    uint8_t digest[EVP_MAX_MD_SIZE];
    size_t dlen = 0;
    int ok, set_up;
    if (is_prehashed(s)) {
        EVP_PKEY_CTX *p = ecdsa_prehash_ctx(key, s, 0, tbs, tbs_len, digest, &dlen);
        set_up = p != NULL;
        ok = set_up && EVP_PKEY_verify(p, sig, sig_len, digest, dlen) == 1;
        EVP_PKEY_CTX_free(p);
    } else {
        EVP_MD_CTX *m = sig_ctx(key, s, 0);
        set_up = m != NULL;
        ok = set_up && EVP_DigestVerify(m, sig, sig_len, tbs, tbs_len) == 1;
        EVP_MD_CTX_free(m);
    }
#ifdef QTLS_FUZZING
    ok = set_up; /* any signature, for a key that fits the scheme */
    ERR_clear_error();
#endif
    if (!ok) {
        ERR_clear_error(); /* libcrypto's detail is noise; the caller raises SSL_R_BAD_SIGNATURE */
    }
    return ok;
}

int crypto_mac_equal(const uint8_t *want, const uint8_t *got, size_t len)
{
#ifdef QTLS_FUZZING
    return 1;
#endif
    return CRYPTO_memcmp(want, got, len) == 0;
}
