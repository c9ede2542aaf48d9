/*
 * libqtls_ngtcp2: the cryptographic primitives of ngtcp2_crypto.h.
 *
 * AEAD and header protection run on qtls's packet-protection objects
 * (<qtls/quic_crypto.h>): ngtcp2 keys a context once per traffic key
 * (ngtcp2_crypto_aead_ctx_*_init, ngtcp2_crypto_cipher_ctx_encrypt_init) and
 * then calls ngtcp2_crypto_encrypt / _decrypt / _hp_mask per packet with the
 * nonce and AAD it built itself, which are qtls_quic_aead_seal_nonce /
 * _open_nonce and qtls_quic_hp_mask: no allocation per packet.
 *
 * HKDF is libcrypto's (EVP_KDF "HKDF", fetched once), because ngtcp2's HKDF
 * API is generic over the hash and ngtcp2 0.12 also derives keys for QUIC
 * versions qtls's helpers do not know (the v2 draft, draft-29).
 *
 * The native handles inside ngtcp2_crypto_aead / _md / _cipher are libcrypto's
 * static EVP_CIPHER / EVP_MD objects, as in ngtcp2's quictls backend, so code
 * that inspects them keeps working.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "backend.h"

/* ---- Suites (RFC 9001 §5.3, §5.4) ---- */

struct qn_suite {
    uint32_t suite; /* QTLS_QUIC_SUITE_*, i.e. SSL_CIPHER_get_id() */
    const EVP_CIPHER *(*aead)(void);
    const EVP_MD *(*md)(void);
    const EVP_CIPHER *(*hp)(void);
    uint64_t max_encryption, max_decryption_failure;
};

static const struct qn_suite suites[] = {
    {QTLS_QUIC_SUITE_AES_128_GCM_SHA256, EVP_aes_128_gcm, EVP_sha256, EVP_aes_128_ecb,
     QN_MAX_ENCRYPTION_AES_GCM, QN_MAX_DECRYPTION_FAILURE_AES_GCM},
    {QTLS_QUIC_SUITE_AES_256_GCM_SHA384, EVP_aes_256_gcm, EVP_sha384, EVP_aes_256_ecb,
     QN_MAX_ENCRYPTION_AES_GCM, QN_MAX_DECRYPTION_FAILURE_AES_GCM},
    {QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256, EVP_chacha20_poly1305, EVP_sha256, EVP_chacha20,
     QN_MAX_ENCRYPTION_CHACHA20_POLY1305, QN_MAX_DECRYPTION_FAILURE_CHACHA20_POLY1305},
    {QTLS_QUIC_SUITE_AES_128_CCM_SHA256, EVP_aes_128_ccm, EVP_sha256, EVP_aes_128_ecb,
     QN_MAX_ENCRYPTION_AES_CCM, QN_MAX_DECRYPTION_FAILURE_AES_CCM},
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

static const struct qn_suite *suite_get(uint32_t id)
{
    for (size_t i = 0; i < NSUITES; i++)
        if (suites[i].suite == id)
            return &suites[i];
    return NULL;
}

uint32_t qn_aead_suite(const ngtcp2_crypto_aead *aead)
{
    if (aead == NULL || aead->native_handle == NULL)
        return 0;
    switch (EVP_CIPHER_get_nid(aead->native_handle)) {
    case NID_aes_128_gcm:
        return QTLS_QUIC_SUITE_AES_128_GCM_SHA256;
    case NID_aes_256_gcm:
        return QTLS_QUIC_SUITE_AES_256_GCM_SHA384;
    case NID_chacha20_poly1305:
        return QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256;
    case NID_aes_128_ccm:
        return QTLS_QUIC_SUITE_AES_128_CCM_SHA256;
    default:
        return 0;
    }
}

/* Header protection depends only on the AEAD's cipher family and key size (§5.4.3, §5.4.4);
 * the CTR handles of ngtcp2 0.12's quictls backend give the same mask as ECB. */
uint32_t qn_hp_suite(const ngtcp2_crypto_cipher *hp)
{
    if (hp == NULL || hp->native_handle == NULL)
        return 0;
    switch (EVP_CIPHER_get_nid(hp->native_handle)) {
    case NID_aes_128_ecb:
    case NID_aes_128_ctr:
        return QTLS_QUIC_SUITE_AES_128_GCM_SHA256;
    case NID_aes_256_ecb:
    case NID_aes_256_ctr:
        return QTLS_QUIC_SUITE_AES_256_GCM_SHA384;
    case NID_chacha20:
        return QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256;
    default:
        return 0;
    }
}

ngtcp2_crypto_ctx *qn_ctx_for_suite(ngtcp2_crypto_ctx *ctx, uint32_t suite)
{
    const struct qn_suite *s = suite_get(suite);
    memset(ctx, 0, sizeof(*ctx));
    if (s == NULL)
        return ctx;
    ngtcp2_crypto_aead_init(&ctx->aead, (void *)s->aead());
    ctx->md.native_handle = (void *)s->md();
    ctx->hp.native_handle = (void *)s->hp();
    ctx->max_encryption = s->max_encryption;
    ctx->max_decryption_failure = s->max_decryption_failure;
    return ctx;
}

ngtcp2_crypto_ctx *ngtcp2_crypto_ctx_initial(ngtcp2_crypto_ctx *ctx)
{
    qn_ctx_for_suite(ctx, QTLS_QUIC_SUITE_AES_128_GCM_SHA256);
    /* Like ngtcp2's own backends: no usage limits on Initial keys (they are public). */
    ctx->max_encryption = 0;
    ctx->max_decryption_failure = 0;
    return ctx;
}

/*
 * The negotiated suite of the SSL (SSL_get_current_cipher: during the 0-RTT
 * callback it is the resumed session's suite). An SSL without a QUIC suite
 * gives a context with NULL handles, which the key installation refuses
 * instead of crashing.
 */
ngtcp2_crypto_ctx *ngtcp2_crypto_ctx_tls(ngtcp2_crypto_ctx *ctx, void *tls_native_handle)
{
    const SSL_CIPHER *c = tls_native_handle != NULL ? SSL_get_current_cipher(tls_native_handle)
                                                    : NULL;
    return qn_ctx_for_suite(ctx, c != NULL ? (uint32_t)SSL_CIPHER_get_id(c) : 0);
}

ngtcp2_crypto_ctx *ngtcp2_crypto_ctx_tls_early(ngtcp2_crypto_ctx *ctx, void *tls_native_handle)
{
    return ngtcp2_crypto_ctx_tls(ctx, tls_native_handle);
}

ngtcp2_crypto_aead *ngtcp2_crypto_aead_init(ngtcp2_crypto_aead *aead, void *aead_native_handle)
{
    aead->native_handle = aead_native_handle;
    /* Every QUIC AEAD has a 16-byte tag (RFC 9001 §5.3). */
    aead->max_overhead = qn_aead_suite(aead) != 0 ? QTLS_QUIC_TAG_LEN : 0;
    return aead;
}

ngtcp2_crypto_aead *ngtcp2_crypto_aead_aes_128_gcm(ngtcp2_crypto_aead *aead)
{
    return ngtcp2_crypto_aead_init(aead, (void *)EVP_aes_128_gcm());
}

ngtcp2_crypto_aead *ngtcp2_crypto_aead_retry(ngtcp2_crypto_aead *aead)
{
    return ngtcp2_crypto_aead_aes_128_gcm(aead);
}

ngtcp2_crypto_md *ngtcp2_crypto_md_init(ngtcp2_crypto_md *md, void *md_native_handle)
{
    md->native_handle = md_native_handle;
    return md;
}

ngtcp2_crypto_md *ngtcp2_crypto_md_sha256(ngtcp2_crypto_md *md)
{
    return ngtcp2_crypto_md_init(md, (void *)EVP_sha256());
}

size_t ngtcp2_crypto_md_hashlen(const ngtcp2_crypto_md *md)
{
    int n = md->native_handle != NULL ? EVP_MD_get_size(md->native_handle) : 0;
    return n > 0 ? (size_t)n : 0;
}

size_t ngtcp2_crypto_aead_keylen(const ngtcp2_crypto_aead *aead)
{
    return qtls_quic_suite_key_len(qn_aead_suite(aead));
}

size_t ngtcp2_crypto_aead_noncelen(const ngtcp2_crypto_aead *aead)
{
    return qn_aead_suite(aead) != 0 ? QTLS_QUIC_IV_LEN : 0;
}

/* ---- HKDF (RFC 5869) on libcrypto ---- */

static struct {
    CRYPTO_ONCE once;
    EVP_KDF *kdf;
} hkdf_g = {.once = CRYPTO_ONCE_STATIC_INIT};

static void hkdf_fetch(void) { hkdf_g.kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL); }

/* libcrypto refuses a NULL octet string even when it is empty. */
static void *octets(const uint8_t *p)
{
    static const uint8_t empty[1];
    return (void *)(p != NULL ? p : empty);
}

static int hkdf(int mode, uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                const uint8_t *secret, size_t secretlen, const uint8_t *salt, size_t saltlen,
                const uint8_t *info, size_t infolen)
{
    OSSL_PARAM params[6], *p = params;
    EVP_KDF_CTX *kctx;
    int rv;

    if (md == NULL || md->native_handle == NULL || dest == NULL ||
        !CRYPTO_THREAD_run_once(&hkdf_g.once, hkdf_fetch) || hkdf_g.kdf == NULL)
        return -1;
    *p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
                                            (char *)EVP_MD_get0_name(md->native_handle), 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, octets(secret), secretlen);
    if (mode != EVP_KDF_HKDF_MODE_EXPAND_ONLY)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, octets(salt), saltlen);
    if (mode != EVP_KDF_HKDF_MODE_EXTRACT_ONLY)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, octets(info), infolen);
    *p = OSSL_PARAM_construct_end();

    if ((kctx = EVP_KDF_CTX_new(hkdf_g.kdf)) == NULL)
        return -1;
    rv = EVP_KDF_derive(kctx, dest, destlen, params) > 0 ? 0 : -1;
    EVP_KDF_CTX_free(kctx);
    return rv;
}

int ngtcp2_crypto_hkdf_extract(uint8_t *dest, const ngtcp2_crypto_md *md, const uint8_t *secret,
                               size_t secretlen, const uint8_t *salt, size_t saltlen)
{
    size_t len = ngtcp2_crypto_md_hashlen(md);
    if (len == 0)
        return -1;
    return hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, dest, len, md, secret, secretlen, salt, saltlen,
                NULL, 0);
}

int ngtcp2_crypto_hkdf_expand(uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                              const uint8_t *secret, size_t secretlen, const uint8_t *info,
                              size_t infolen)
{
    return hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, dest, destlen, md, secret, secretlen, NULL, 0, info,
                infolen);
}

int ngtcp2_crypto_hkdf(uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                       const uint8_t *secret, size_t secretlen, const uint8_t *salt,
                       size_t saltlen, const uint8_t *info, size_t infolen)
{
    return hkdf(EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, dest, destlen, md, secret, secretlen, salt,
                saltlen, info, infolen);
}

/*
 * RFC 8446 §7.1: HkdfLabel = uint16 length || opaque label<7..255> = "tls13 " + label
 * || opaque context<0..255> (empty here, as everywhere in QUIC: RFC 9001 §5.1).
 */
int ngtcp2_crypto_hkdf_expand_label(uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                                    const uint8_t *secret, size_t secretlen, const uint8_t *label,
                                    size_t labellen)
{
    static const char prefix[] = "tls13 ";
    uint8_t info[2 + 1 + 255 + 1];
    size_t n = 0;

    if (destlen > 0xffff || labellen > 255 - (sizeof(prefix) - 1) || (label == NULL && labellen))
        return -1;
    info[n++] = (uint8_t)(destlen >> 8);
    info[n++] = (uint8_t)destlen;
    info[n++] = (uint8_t)(sizeof(prefix) - 1 + labellen);
    memcpy(info + n, prefix, sizeof(prefix) - 1);
    n += sizeof(prefix) - 1;
    if (labellen > 0)
        memcpy(info + n, label, labellen);
    n += labellen;
    info[n++] = 0; /* empty context */
    return ngtcp2_crypto_hkdf_expand(dest, destlen, md, secret, secretlen, info, n);
}

int qn_expand_label(uint8_t *dest, size_t destlen, const ngtcp2_crypto_md *md,
                    const uint8_t *secret, size_t secretlen, const char *label)
{
    return ngtcp2_crypto_hkdf_expand_label(dest, destlen, md, secret, secretlen,
                                           (const uint8_t *)label, strlen(label));
}

/* ---- AEAD (RFC 9001 §5.3) ---- */

/*
 * One qtls AEAD object serves both directions, so the encrypt and decrypt
 * initialisers are the same. ngtcp2 builds every nonce itself (IV XOR packet
 * number), so the object's own IV is unused and left zero.
 */
static int aead_ctx_init(ngtcp2_crypto_aead_ctx *aead_ctx, const ngtcp2_crypto_aead *aead,
                         const uint8_t *key, size_t noncelen)
{
    static const uint8_t zero_iv[QTLS_QUIC_IV_LEN];
    uint32_t suite = qn_aead_suite(aead);
    struct qtls_quic_aead *a;

    aead_ctx->native_handle = NULL;
    if (suite == 0 || key == NULL || noncelen != QTLS_QUIC_IV_LEN)
        return -1;
    a = qtls_quic_aead_new(suite, key, qtls_quic_suite_key_len(suite), zero_iv, sizeof(zero_iv));
    if (a == NULL)
        return -1;
    aead_ctx->native_handle = a;
    return 0;
}

int ngtcp2_crypto_aead_ctx_encrypt_init(ngtcp2_crypto_aead_ctx *aead_ctx,
                                        const ngtcp2_crypto_aead *aead, const uint8_t *key,
                                        size_t noncelen)
{
    return aead_ctx_init(aead_ctx, aead, key, noncelen);
}

int ngtcp2_crypto_aead_ctx_decrypt_init(ngtcp2_crypto_aead_ctx *aead_ctx,
                                        const ngtcp2_crypto_aead *aead, const uint8_t *key,
                                        size_t noncelen)
{
    return aead_ctx_init(aead_ctx, aead, key, noncelen);
}

void ngtcp2_crypto_aead_ctx_free(ngtcp2_crypto_aead_ctx *aead_ctx)
{
    if (aead_ctx != NULL)
        qtls_quic_aead_free(aead_ctx->native_handle); /* wipes the key */
}

void qn_aead_ctx_clear(ngtcp2_crypto_aead_ctx *aead_ctx)
{
    ngtcp2_crypto_aead_ctx_free(aead_ctx);
    aead_ctx->native_handle = NULL;
}

int ngtcp2_crypto_encrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                          const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                          size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                          const uint8_t *aad, size_t aadlen)
{
    (void)aead;
    if (aead_ctx == NULL || noncelen != QTLS_QUIC_IV_LEN)
        return -1;
    return qtls_quic_aead_seal_nonce(aead_ctx->native_handle, nonce, aad, aadlen, plaintext,
                                     plaintextlen, dest)
               ? 0
               : -1;
}

/*
 * A packet that does not open is routine (reordering across keys, garbage,
 * stateless resets), so its error is dropped from the OpenSSL error queue:
 * a stale entry there would make the next SSL_get_error() report
 * SSL_ERROR_SSL. Marking the queue allocates nothing.
 */
int ngtcp2_crypto_decrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                          const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *ciphertext,
                          size_t ciphertextlen, const uint8_t *nonce, size_t noncelen,
                          const uint8_t *aad, size_t aadlen)
{
    int ok;
    (void)aead;
    if (aead_ctx == NULL || noncelen != QTLS_QUIC_IV_LEN)
        return -1;
    ERR_set_mark();
    ok = qtls_quic_aead_open_nonce(aead_ctx->native_handle, nonce, aad, aadlen, ciphertext,
                                   ciphertextlen, dest);
    ERR_pop_to_mark();
    return ok ? 0 : -1;
}

/* ---- Header protection (RFC 9001 §5.4) ---- */

int ngtcp2_crypto_cipher_ctx_encrypt_init(ngtcp2_crypto_cipher_ctx *cipher_ctx,
                                          const ngtcp2_crypto_cipher *cipher, const uint8_t *key)
{
    uint32_t suite = qn_hp_suite(cipher);
    struct qtls_quic_hp *hp;

    cipher_ctx->native_handle = NULL;
    if (suite == 0 || key == NULL)
        return -1;
    if ((hp = qtls_quic_hp_new(suite, key, qtls_quic_suite_key_len(suite))) == NULL)
        return -1;
    cipher_ctx->native_handle = hp;
    return 0;
}

void ngtcp2_crypto_cipher_ctx_free(ngtcp2_crypto_cipher_ctx *cipher_ctx)
{
    if (cipher_ctx != NULL)
        qtls_quic_hp_free(cipher_ctx->native_handle);
}

void qn_cipher_ctx_clear(ngtcp2_crypto_cipher_ctx *cipher_ctx)
{
    ngtcp2_crypto_cipher_ctx_free(cipher_ctx);
    cipher_ctx->native_handle = NULL;
}

/* Writes the NGTCP2_HP_MASKLEN (5) mask bytes ngtcp2 uses. */
int ngtcp2_crypto_hp_mask(uint8_t *dest, const ngtcp2_crypto_cipher *hp,
                          const ngtcp2_crypto_cipher_ctx *hp_ctx, const uint8_t *sample)
{
    (void)hp;
    if (hp_ctx == NULL)
        return -1;
    return qtls_quic_hp_mask(hp_ctx->native_handle, sample, dest) ? 0 : -1;
}

/* ---- Randomness ---- */

int ngtcp2_crypto_random(uint8_t *data, size_t datalen)
{
    if (datalen > INT32_MAX)
        return -1;
    return RAND_bytes(data, (int)datalen) == 1 ? 0 : -1;
}

/* RFC 9000 §8.2.1: PATH_CHALLENGE data must be unpredictable. */
int ngtcp2_crypto_get_path_challenge_data_cb(ngtcp2_conn *conn, uint8_t *data, void *user_data)
{
    (void)conn;
    (void)user_data;
    return ngtcp2_crypto_random(data, NGTCP2_PATH_CHALLENGE_DATALEN) == 0
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
}
