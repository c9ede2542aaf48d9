/*
 * Certificates: loading the local certificate, key and chain into an SSL_CTX
 * with OpenSSL's SSL_CTX_use_* semantics, choosing the CertificateVerify
 * scheme (RFC 8446 §4.4.3), and verifying the peer's chain with libcrypto's
 * X509_verify_cert the way OpenSSL's ssl_verify_cert_chain does, so that
 * verify callbacks, SSL_set1_host and SSL_get_verify_result behave as
 * applications expect.
 */
#include "internal.h"

#include <openssl/pem.h>

/* ------------------------------------------------------------------ */
/* The local certificate and key                                       */
/* ------------------------------------------------------------------ */

void cert_cfg_free(struct cert_cfg *cc)
{
    X509_free(cc->cert);
    EVP_PKEY_free(cc->pkey);
    sk_X509_pop_free(cc->chain, X509_free);
    cc->cert = NULL;
    cc->pkey = NULL;
    cc->chain = NULL;
}

/*
 * OpenSSL keeps one certificate/key pair per key type (a "slot") and the
 * slot last touched is the current one. qtls keeps a single pair: setting a
 * certificate or key of another type than the pair in place starts a new,
 * empty pair, which is what a caller observes from OpenSSL too (the other
 * slot stops being current). All EC curves share one slot, as in OpenSSL.
 */
static const char *const slot_types[] = {"RSA", "RSA-PSS", "EC", "ED25519", "ED448"};

static int key_slot(const EVP_PKEY *k)
{
    if (k == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(slot_types) / sizeof(slot_types[0]); i++)
        if (EVP_PKEY_is_a(k, slot_types[i]))
            return (int)i;
    return -1;
}

static int cfg_slot(const struct cert_cfg *cc)
{
    if (cc->cert != NULL)
        return key_slot(X509_get0_pubkey(cc->cert));
    return key_slot(cc->pkey);
}

static void cfg_enter_slot(struct cert_cfg *cc, int slot)
{
    int cur = cfg_slot(cc);
    if (cur != -1 && cur != slot)
        cert_cfg_free(cc);
}

/* X509_check_private_key without leaving its mismatch errors on the queue. */
static int key_fits_quietly(X509 *x, EVP_PKEY *k)
{
    ERR_set_mark();
    int ok = X509_check_private_key(x, k);
    ERR_pop_to_mark();
    return ok;
}

int SSL_CTX_use_certificate(SSL_CTX *ctx, X509 *x)
{
    if (ctx == NULL || x == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    EVP_PKEY *pub = X509_get0_pubkey(x);
    if (pub == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_X509_LIB);
        return 0;
    }
    int slot = key_slot(pub);
    if (slot < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CERTIFICATE_TYPE);
        return 0;
    }
    struct cert_cfg *cc = &ctx->cert;
    cfg_enter_slot(cc, slot);
    /*
     * Like OpenSSL, a key that does not match the new certificate is dropped
     * rather than failing: callers switching pairs set the certificate first.
     */
    if (cc->pkey != NULL && !key_fits_quietly(x, cc->pkey)) {
        EVP_PKEY_free(cc->pkey);
        cc->pkey = NULL;
    }
    X509_up_ref(x);
    X509_free(cc->cert);
    cc->cert = x;
    return 1;
}

int SSL_CTX_use_PrivateKey(SSL_CTX *ctx, EVP_PKEY *pkey)
{
    if (ctx == NULL || pkey == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    int slot = key_slot(pkey);
    if (slot < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CERTIFICATE_TYPE);
        return 0;
    }
    struct cert_cfg *cc = &ctx->cert;
    cfg_enter_slot(cc, slot);
    /* A key that does not match the certificate fails with libcrypto's reason, as in OpenSSL. */
    if (cc->cert != NULL && !X509_check_private_key(cc->cert, pkey))
        return 0;
    EVP_PKEY_up_ref(pkey);
    EVP_PKEY_free(cc->pkey);
    cc->pkey = pkey;
    return 1;
}

int SSL_CTX_check_private_key(const SSL_CTX *ctx)
{
    if (ctx == NULL || ctx->cert.cert == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_ASSIGNED);
        return 0;
    }
    if (ctx->cert.pkey == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_PRIVATE_KEY_ASSIGNED);
        return 0;
    }
    return X509_check_private_key(ctx->cert.cert, ctx->cert.pkey);
}

X509 *SSL_CTX_get0_certificate(const SSL_CTX *ctx)
{
    return ctx == NULL ? NULL : ctx->cert.cert;
}

EVP_PKEY *SSL_CTX_get0_privatekey(const SSL_CTX *ctx)
{
    return ctx == NULL ? NULL : ctx->cert.pkey;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Opens `file`; a missing file leaves the system error under ERR_R_SYS_LIB, as OpenSSL does. */
static BIO *open_file(const char *file)
{
    if (file == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return NULL;
    }
    BIO *in = BIO_new(BIO_s_file());
    if (in == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_BUF_LIB);
        return NULL;
    }
    if (BIO_read_filename(in, file) <= 0) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SYS_LIB);
        BIO_free(in);
        return NULL;
    }
    return in;
}

static int filetype_ok(int type)
{
    if (type == SSL_FILETYPE_PEM || type == SSL_FILETYPE_ASN1)
        return 1;
    ERR_raise(ERR_LIB_SSL, SSL_R_BAD_SSL_FILETYPE);
    return 0;
}

/* The checks and the open both file loaders share: the file as a BIO, or NULL with an error. */
static BIO *open_typed_file(SSL_CTX *ctx, const char *file, int type)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return NULL;
    }
    return filetype_ok(type) ? open_file(file) : NULL;
}

static void raise_decode_error(int type)
{
    ERR_raise(ERR_LIB_SSL, type == SSL_FILETYPE_ASN1 ? ERR_R_ASN1_LIB : ERR_R_PEM_LIB);
}

int SSL_CTX_use_certificate_file(SSL_CTX *ctx, const char *file, int type)
{
    BIO *in = open_typed_file(ctx, file, type);
    if (in == NULL)
        return 0;
    X509 *x = type == SSL_FILETYPE_ASN1 ? d2i_X509_bio(in, NULL)
                                        : PEM_read_bio_X509(in, NULL, NULL, NULL);
    int ok = 0;
    if (x == NULL)
        raise_decode_error(type);
    else
        ok = SSL_CTX_use_certificate(ctx, x);
    X509_free(x);
    BIO_free(in);
    return ok;
}

/*
 * No password callback is wired yet: PEM falls back to libcrypto's default
 * (the terminal prompt), which is also what OpenSSL does when none is set.
 */
int SSL_CTX_use_PrivateKey_file(SSL_CTX *ctx, const char *file, int type)
{
    BIO *in = open_typed_file(ctx, file, type);
    if (in == NULL)
        return 0;
    EVP_PKEY *k = type == SSL_FILETYPE_ASN1 ? d2i_PrivateKey_bio(in, NULL)
                                            : PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
    int ok = 0;
    if (k == NULL)
        raise_decode_error(type);
    else
        ok = SSL_CTX_use_PrivateKey(ctx, k);
    EVP_PKEY_free(k);
    BIO_free(in);
    return ok;
}

/*
 * Reads the certificates after the leaf, each certifying the one before it
 * (RFC 8446 §4.4.2), until the end of the file. PEM reports the end as
 * PEM_R_NO_START_LINE; that expected error is removed, any other fails.
 */
static int read_chain(BIO *in, STACK_OF(X509) **out)
{
    STACK_OF(X509) *sk = sk_X509_new_null();
    if (sk == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    for (;;) {
        ERR_set_mark();
        X509 *ca = PEM_read_bio_X509(in, NULL, NULL, NULL);
        if (ca == NULL)
            break;
        ERR_clear_last_mark();
        if (!sk_X509_push(sk, ca)) {
            X509_free(ca);
            sk_X509_pop_free(sk, X509_free);
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return 0;
        }
    }
    unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
        ERR_clear_last_mark();
        ERR_raise(ERR_LIB_SSL, ERR_R_PEM_LIB);
        sk_X509_pop_free(sk, X509_free);
        return 0;
    }
    ERR_pop_to_mark();
    if (sk_X509_num(sk) == 0) {
        /* No intermediates: no chain, as after SSL_CTX_clear_chain_certs. */
        sk_X509_free(sk);
        sk = NULL;
    }
    *out = sk;
    return 1;
}

/* The leaf, then its intermediates, which replace the chain in place. */
int SSL_CTX_use_certificate_chain_file(SSL_CTX *ctx, const char *file)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    BIO *in = open_file(file);
    if (in == NULL)
        return 0;
    STACK_OF(X509) *chain = NULL;
    int ok = 0;
    /* _AUX, like OpenSSL: the leaf may be a "TRUSTED CERTIFICATE" with trust settings. */
    X509 *leaf = PEM_read_bio_X509_AUX(in, NULL, NULL, NULL);
    if (leaf == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_PEM_LIB);
    else if (read_chain(in, &chain) && SSL_CTX_use_certificate(ctx, leaf)) {
        sk_X509_pop_free(ctx->cert.chain, X509_free);
        ctx->cert.chain = chain;
        chain = NULL;
        ok = 1;
    }
    sk_X509_pop_free(chain, X509_free);
    X509_free(leaf);
    BIO_free(in);
    return ok;
}

/* ------------------------------------------------------------------ */
/* CertificateVerify scheme                                            */
/* ------------------------------------------------------------------ */

static size_t md_len(int md_nid)
{
    switch (md_nid) {
    case NID_sha256:
        return 32;
    case NID_sha384:
        return 48;
    case NID_sha512:
        return 64;
    default:
        return 0;
    }
}

/*
 * RSASSA-PSS with salt = hash length needs a modulus of at least
 * 2 * hLen + 2 bytes (RFC 8017 §9.1.1), so a 1024-bit key cannot do
 * rsa_pss_*_sha512; offering it would fail at signing time.
 */
static int rsa_big_enough(EVP_PKEY *key, const struct sigscheme *s)
{
    if (s->pkey_type != EVP_PKEY_RSA && s->pkey_type != EVP_PKEY_RSA_PSS)
        return 1;
    int size = EVP_PKEY_get_size(key);
    return size > 0 && (size_t)size >= 2 * md_len(s->md_nid) + 2;
}

/*
 * RFC 8446 §4.4.3: the scheme must be one the peer offered in
 * signature_algorithms (§4.2.3) and fit our key; in TLS 1.3 an ECDSA scheme
 * also fixes the curve, and PKCS#1 v1.5 and SHA-1 are not allowed. The peer's
 * order decides among the candidates.
 */
int cert_choose_scheme(EVP_PKEY *key, const uint16_t *peer, size_t n, uint16_t *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct sigscheme *s = sigscheme_by_id(peer[i]);
        if (s == NULL || !s->tls13_ok || !crypto_key_matches_scheme(key, s) ||
            !rsa_big_enough(key, s))
            continue;
        *out = peer[i];
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Peer chain verification                                             */
/* ------------------------------------------------------------------ */

static CRYPTO_ONCE idx_once = CRYPTO_ONCE_STATIC_INIT;
static int store_ctx_idx = -1;

static void make_store_ctx_idx(void)
{
    store_ctx_idx =
        X509_STORE_CTX_get_ex_new_index(0, "SSL for verify callback", NULL, NULL, NULL);
}

int cert_store_ctx_ssl_idx(void)
{
    if (!CRYPTO_THREAD_run_once(&idx_once, make_store_ctx_idx))
        return -1;
    return store_ctx_idx;
}

int SSL_get_ex_data_X509_STORE_CTX_idx(void)
{
    return cert_store_ctx_ssl_idx();
}

/* The alert for a verification error: OpenSSL's table, so peers see the same alerts. */
static const struct {
    int x509_err;
    uint8_t alert;
} x509_alerts[] = {
    {X509_V_ERR_APPLICATION_VERIFICATION, SSL_AD_HANDSHAKE_FAILURE},
    {X509_V_ERR_CA_KEY_TOO_SMALL, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CA_MD_TOO_WEAK, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CERT_CHAIN_TOO_LONG, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_CERT_HAS_EXPIRED, SSL_AD_CERTIFICATE_EXPIRED},
    {X509_V_ERR_CERT_NOT_YET_VALID, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CERT_REJECTED, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CERT_REVOKED, SSL_AD_CERTIFICATE_REVOKED},
    {X509_V_ERR_CERT_SIGNATURE_FAILURE, SSL_AD_DECRYPT_ERROR},
    {X509_V_ERR_CERT_UNTRUSTED, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CRL_HAS_EXPIRED, SSL_AD_CERTIFICATE_EXPIRED},
    {X509_V_ERR_CRL_NOT_YET_VALID, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_CRL_SIGNATURE_FAILURE, SSL_AD_DECRYPT_ERROR},
    {X509_V_ERR_DANE_NO_MATCH, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_EC_KEY_EXPLICIT_PARAMS, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_EE_KEY_TOO_SMALL, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_EMAIL_MISMATCH, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_ERROR_IN_CRL_LAST_UPDATE_FIELD, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_ERROR_IN_CRL_NEXT_UPDATE_FIELD, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_HOSTNAME_MISMATCH, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_INVALID_CA, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_INVALID_CALL, SSL_AD_INTERNAL_ERROR},
    {X509_V_ERR_INVALID_PURPOSE, SSL_AD_UNSUPPORTED_CERTIFICATE},
    {X509_V_ERR_IP_ADDRESS_MISMATCH, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_OUT_OF_MEM, SSL_AD_INTERNAL_ERROR},
    {X509_V_ERR_PATH_LENGTH_EXCEEDED, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_STORE_LOOKUP, SSL_AD_INTERNAL_ERROR},
    {X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE, SSL_AD_BAD_CERTIFICATE},
    {X509_V_ERR_UNABLE_TO_GET_CRL, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, SSL_AD_UNKNOWN_CA},
    {X509_V_ERR_UNSPECIFIED, SSL_AD_INTERNAL_ERROR},
};

static uint8_t x509_err_alert(long err)
{
    for (size_t i = 0; i < sizeof(x509_alerts) / sizeof(x509_alerts[0]); i++)
        if (x509_alerts[i].x509_err == err)
            return x509_alerts[i].alert;
    return SSL_AD_CERTIFICATE_UNKNOWN;
}

/* Sets up the store context as OpenSSL's ssl_verify_cert_chain does. */
static int store_ctx_setup(SSL *c, X509_STORE_CTX *sctx, STACK_OF(X509) *chain)
{
    int idx = cert_store_ctx_ssl_idx();
    if (idx < 0 || !X509_STORE_CTX_init(sctx, c->ctx->store, sk_X509_value(chain, 0), chain))
        return 0;
    /* The purpose names the peer's role: a client checks a server certificate. */
    if (!X509_STORE_CTX_set_default(sctx, c->server ? "ssl_client" : "ssl_server"))
        return 0;
    /* What the connection set (SSL_set1_host, depth, flags) overrides the defaults. */
    if (c->param != NULL && !X509_VERIFY_PARAM_set1(X509_STORE_CTX_get0_param(sctx), c->param))
        return 0;
    /* Verify callbacks find the connection through SSL_get_ex_data_X509_STORE_CTX_idx(). */
    if (!X509_STORE_CTX_set_ex_data(sctx, idx, c))
        return 0;
    if (c->verify_cb != NULL)
        X509_STORE_CTX_set_verify_cb(sctx, c->verify_cb);
    return 1;
}

/*
 * The chain is as received, leaf first (RFC 8446 §4.4.2); the caller handles
 * an empty Certificate. The result is recorded even under SSL_VERIFY_NONE
 * (applications read it with SSL_get_verify_result); only SSL_VERIFY_PEER
 * turns a failure into a fatal alert. A verify callback that accepts makes
 * X509_verify_cert succeed while the error stays recorded, as in OpenSSL.
 */
int cert_verify_peer_chain(SSL *c, STACK_OF(X509) *chain)
{
    /* Until verification runs to the end nothing counts as verified. */
    c->verify_result = X509_V_ERR_UNSPECIFIED;
    if (chain == NULL || sk_X509_num(chain) <= 0)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    X509_STORE_CTX *sctx = X509_STORE_CTX_new();
    if (sctx == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    if (!store_ctx_setup(c, sctx, chain)) {
        X509_STORE_CTX_free(sctx);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_X509_LIB);
    }
    ERR_set_mark();
    int verified = X509_verify_cert(sctx) > 0;
    c->verify_result = X509_STORE_CTX_get_error(sctx);
    X509_STORE_CTX_free(sctx);
    if (verified || !(c->verify_mode & SSL_VERIFY_PEER)) {
        /* Whatever libcrypto queued on the way is not an error of this call. */
        ERR_pop_to_mark();
        return 1;
    }
    ERR_clear_last_mark();
    return qtls_fail(c, x509_err_alert(c->verify_result), SSL_R_CERTIFICATE_VERIFY_FAILED);
}

/* ------------------------------------------------------------------ */
/* Decoded-certificate cache                                           */
/* ------------------------------------------------------------------ */

#define CERT_CACHE_SLOTS 8

struct cert_cache {
    CRYPTO_RWLOCK *lock;
    size_t next; /* round-robin replacement */
    struct {
        uint8_t *der;
        size_t len;
        X509 *x;
    } slot[CERT_CACHE_SLOTS];
};

void cert_cache_free(struct cert_cache *cache)
{
    if (cache == NULL)
        return;
    for (size_t i = 0; i < CERT_CACHE_SLOTS; i++) {
        OPENSSL_free(cache->slot[i].der);
        X509_free(cache->slot[i].x);
    }
    CRYPTO_THREAD_lock_free(cache->lock);
    OPENSSL_free(cache);
}

/* The context's cache, made on first use; NULL (no caching) if that fails. */
static struct cert_cache *cache_of(SSL_CTX *ctx)
{
    struct cert_cache *cache = __atomic_load_n(&ctx->cert_cache, __ATOMIC_ACQUIRE), *none = NULL;
    if (cache != NULL)
        return cache;
    cache = OPENSSL_zalloc(sizeof(*cache));
    if (cache == NULL || (cache->lock = CRYPTO_THREAD_lock_new()) == NULL) {
        OPENSSL_free(cache);
        return NULL;
    }
    if (!__atomic_compare_exchange_n(&ctx->cert_cache, &none, cache, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        cert_cache_free(cache);
        return none;
    }
    return cache;
}

/* A cached certificate with exactly these bytes, as a new reference. */
static X509 *cache_lookup(struct cert_cache *cache, const uint8_t *der, size_t len)
{
    X509 *found = NULL;
    if (!CRYPTO_THREAD_read_lock(cache->lock))
        return NULL;
    for (size_t i = 0; i < CERT_CACHE_SLOTS && found == NULL; i++) {
        if (cache->slot[i].x != NULL && cache->slot[i].len == len &&
            memcmp(cache->slot[i].der, der, len) == 0 && X509_up_ref(cache->slot[i].x))
            found = cache->slot[i].x;
    }
    CRYPTO_THREAD_unlock(cache->lock);
    return found;
}

static void cache_insert(struct cert_cache *cache, const uint8_t *der, size_t len, X509 *x)
{
    uint8_t *copy = OPENSSL_memdup(der, len);
    if (copy == NULL || !X509_up_ref(x)) {
        OPENSSL_free(copy);
        return;
    }
    if (!CRYPTO_THREAD_write_lock(cache->lock)) {
        X509_free(x); /* the reference taken for the cache */
        OPENSSL_free(copy);
        return;
    }
    size_t i = cache->next++ % CERT_CACHE_SLOTS;
    OPENSSL_free(cache->slot[i].der);
    X509_free(cache->slot[i].x);
    cache->slot[i].der = copy;
    cache->slot[i].len = len;
    cache->slot[i].x = x;
    CRYPTO_THREAD_unlock(cache->lock);
}

X509 *cert_decode(SSL_CTX *ctx, const uint8_t *der, size_t len)
{
    struct cert_cache *cache = cache_of(ctx);
    X509 *x = cache != NULL ? cache_lookup(cache, der, len) : NULL;
    if (x != NULL)
        return x;
    const unsigned char *p = der;
    x = d2i_X509(NULL, &p, (long)len);
    if (x == NULL || p != der + len) { /* trailing bytes: not exactly one certificate */
        X509_free(x);
        return NULL;
    }
    if (cache != NULL)
        cache_insert(cache, der, len, x);
    return x;
}
