/*
 * Certificates: loading the local certificate, key and chain from files and
 * DER into an SSL_CTX or SSL (the slots themselves are certset.c's) with
 * OpenSSL's SSL_CTX_use_* semantics and its password callback, and verifying
 * the peer's chain with libcrypto's X509_verify_cert the way OpenSSL's
 * ssl_verify_cert_chain does, so that verify callbacks, SSL_set1_host and
 * SSL_get_verify_result behave as applications expect. It calls certset.c for
 * the slots, never the other way.
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

#include <openssl/pem.h>

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

static void raise_decode_error(int type)
{
    ERR_raise(ERR_LIB_SSL, type == SSL_FILETYPE_ASN1 ? ERR_R_ASN1_LIB : ERR_R_PEM_LIB);
}

/*
 * Where a loader puts what it read: a context's set, or a connection's own
 * copy (made only once something decoded), and whose password callback
 * decrypts PEM keys (SSL_CTX_set_default_passwd_cb(3); NULL leaves libcrypto's
 * default, the terminal prompt, as OpenSSL does).
 */
struct target {
    SSL_CTX *ctx;
    SSL *ssl;
};

static struct cert_set *target_set(struct target t)
{
    return t.ssl != NULL ? certset_own(t.ssl) : &t.ctx->certs;
}

static pem_password_cb *target_pw(struct target t)
{
    return t.ssl != NULL ? t.ssl->passwd_cb : t.ctx->passwd_cb;
}

static void *target_pw_arg(struct target t)
{
    return t.ssl != NULL ? t.ssl->passwd_arg : t.ctx->passwd_arg;
}

static int target_ok(struct target t)
{
    if (t.ctx != NULL || t.ssl != NULL)
        return 1;
    ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
    return 0;
}

/* The checks and the open both file loaders share: the file as a BIO, or NULL with an error. */
static BIO *open_typed_file(struct target t, const char *file, int type)
{
    return target_ok(t) && filetype_ok(type) ? open_file(file) : NULL;
}

static int use_cert(struct target t, X509 *x)
{
    if (!seclevel_check_cert(t.ssl, t.ctx, x, 1))
        return 0;
    struct cert_set *s = target_set(t);
    return s != NULL && certset_use_cert(s, x);
}

static int use_key(struct target t, EVP_PKEY *k)
{
    struct cert_set *s = target_set(t);
    return s != NULL && certset_use_key(s, k);
}

static int load_cert_file(struct target t, const char *file, int type)
{
    BIO *in = open_typed_file(t, file, type);
    if (in == NULL)
        return 0;
    X509 *x = type == SSL_FILETYPE_ASN1
                  ? d2i_X509_bio(in, NULL)
                  : PEM_read_bio_X509(in, NULL, target_pw(t), target_pw_arg(t));
    int ok = 0;
    if (x == NULL)
        raise_decode_error(type);
    else
        ok = use_cert(t, x);
    X509_free(x);
    BIO_free(in);
    return ok;
}

/* An encrypted PEM key is decrypted with the password callback's answer. */
static int load_key_file(struct target t, const char *file, int type)
{
    BIO *in = open_typed_file(t, file, type);
    if (in == NULL)
        return 0;
    EVP_PKEY *k = type == SSL_FILETYPE_ASN1
                      ? d2i_PrivateKey_bio(in, NULL)
                      : PEM_read_bio_PrivateKey(in, NULL, target_pw(t), target_pw_arg(t));
    int ok = 0;
    if (k == NULL)
        raise_decode_error(type);
    else
        ok = use_key(t, k);
    EVP_PKEY_free(k);
    BIO_free(in);
    return ok;
}

int SSL_CTX_use_certificate_file(SSL_CTX *ctx, const char *file, int type)
{
    return load_cert_file((struct target){ctx, NULL}, file, type);
}

int SSL_use_certificate_file(SSL *ssl, const char *file, int type)
{
    return load_cert_file((struct target){NULL, ssl}, file, type);
}

int SSL_CTX_use_PrivateKey_file(SSL_CTX *ctx, const char *file, int type)
{
    return load_key_file((struct target){ctx, NULL}, file, type);
}

int SSL_use_PrivateKey_file(SSL *ssl, const char *file, int type)
{
    return load_key_file((struct target){NULL, ssl}, file, type);
}

/* DER forms: exactly one certificate or key, all bytes used. */
static int use_cert_der(struct target t, const unsigned char *d, long len)
{
    const unsigned char *p = d;
    if (!target_ok(t))
        return 0;
    X509 *x = d == NULL || len <= 0 ? NULL : d2i_X509(NULL, &p, len);
    if (x == NULL || p != d + len) {
        X509_free(x);
        ERR_raise(ERR_LIB_SSL, ERR_R_ASN1_LIB);
        return 0;
    }
    int ok = use_cert(t, x);
    X509_free(x);
    return ok;
}

static int use_key_der(struct target t, int pk, const unsigned char *d, long len)
{
    const unsigned char *p = d;
    if (!target_ok(t))
        return 0;
    EVP_PKEY *k = d == NULL || len <= 0 ? NULL : d2i_PrivateKey(pk, NULL, &p, len);
    if (k == NULL || p != d + len) {
        EVP_PKEY_free(k);
        ERR_raise(ERR_LIB_SSL, ERR_R_ASN1_LIB);
        return 0;
    }
    int ok = use_key(t, k);
    EVP_PKEY_free(k);
    return ok;
}

int SSL_CTX_use_certificate_ASN1(SSL_CTX *ctx, int len, const unsigned char *d)
{
    return use_cert_der((struct target){ctx, NULL}, d, len);
}

int SSL_use_certificate_ASN1(SSL *ssl, const unsigned char *d, int len)
{
    return use_cert_der((struct target){NULL, ssl}, d, len);
}

int SSL_CTX_use_PrivateKey_ASN1(int pk, SSL_CTX *ctx, const unsigned char *d, long len)
{
    return use_key_der((struct target){ctx, NULL}, pk, d, len);
}

int SSL_use_PrivateKey_ASN1(int pk, SSL *ssl, const unsigned char *d, long len)
{
    return use_key_der((struct target){NULL, ssl}, pk, d, len);
}

/*
 * Reads the certificates after the leaf, each certifying the one before it
 * (RFC 8446 §4.4.2), until the end of the file. PEM reports the end as
 * PEM_R_NO_START_LINE; that expected error is removed, any other fails.
 */
static int read_chain(BIO *in, struct target t, STACK_OF(X509) **out)
{
    STACK_OF(X509) *sk = sk_X509_new_null();
    if (sk == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    for (;;) {
        ERR_set_mark();
        X509 *ca = PEM_read_bio_X509(in, NULL, target_pw(t), target_pw_arg(t));
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

/* The leaf, then its intermediates, which replace the leaf's slot's chain. */
static int load_chain_file(struct target t, const char *file)
{
    if (!target_ok(t))
        return 0;
    BIO *in = open_file(file);
    if (in == NULL)
        return 0;
    STACK_OF(X509) *chain = NULL;
    int ok = 0;
    /* _AUX, like OpenSSL: the leaf may be a "TRUSTED CERTIFICATE" with trust settings. */
    X509 *leaf = PEM_read_bio_X509_AUX(in, NULL, target_pw(t), target_pw_arg(t));
    if (leaf == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_PEM_LIB);
    else if (read_chain(in, t, &chain) && seclevel_check_chain(t.ssl, t.ctx, chain) &&
             use_cert(t, leaf)) {
        certset_set_chain(target_set(t), chain); /* use_cert made the leaf's slot current */
        chain = NULL;
        ok = 1;
    }
    sk_X509_pop_free(chain, X509_free);
    X509_free(leaf);
    BIO_free(in);
    return ok;
}

int SSL_CTX_use_certificate_chain_file(SSL_CTX *ctx, const char *file)
{
    return load_chain_file((struct target){ctx, NULL}, file);
}

int SSL_use_certificate_chain_file(SSL *ssl, const char *file)
{
    return load_chain_file((struct target){NULL, ssl}, file);
}

/* ------------------------------------------------------------------ */
/* Password callback (PEM pass phrases)                                */
/* ------------------------------------------------------------------ */

/* SSL_new copies the context's callback and data; the SSL_ setters change the connection's. */
void SSL_CTX_set_default_passwd_cb(SSL_CTX *ctx, pem_password_cb *cb) { ctx->passwd_cb = cb; }

void SSL_CTX_set_default_passwd_cb_userdata(SSL_CTX *ctx, void *u) { ctx->passwd_arg = u; }

pem_password_cb *SSL_CTX_get_default_passwd_cb(SSL_CTX *ctx) { return ctx->passwd_cb; }

void *SSL_CTX_get_default_passwd_cb_userdata(SSL_CTX *ctx) { return ctx->passwd_arg; }

void SSL_set_default_passwd_cb(SSL *s, pem_password_cb *cb) { s->passwd_cb = cb; }

void SSL_set_default_passwd_cb_userdata(SSL *s, void *u) { s->passwd_arg = u; }

pem_password_cb *SSL_get_default_passwd_cb(SSL *s) { return s->passwd_cb; }

void *SSL_get_default_passwd_cb_userdata(SSL *s) { return s->passwd_arg; }

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
    /* The security level bounds the peer's keys and digests (seclevel.c). */
    X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(sctx), SSL_get_security_level(c));
    /* The purpose names the peer's role: a client checks a server certificate. */
    if (!X509_STORE_CTX_set_default(sctx, c->server ? "ssl_client" : "ssl_server"))
        return 0;
    /* What the connection set (SSL_set1_host, depth, flags) overrides the defaults; a
     * connection without parameters of its own has its context's and maybe a host (ssl.c). */
    X509_VERIFY_PARAM *vp = X509_STORE_CTX_get0_param(sctx);
    if (!X509_VERIFY_PARAM_set1(vp, c->param != NULL ? c->param : c->ctx->param) ||
        (c->verify_host != NULL && !X509_VERIFY_PARAM_set1_host(vp, c->verify_host, 0)))
        return 0;
    /* Verify callbacks find the connection through SSL_get_ex_data_X509_STORE_CTX_idx(). */
    if (!X509_STORE_CTX_set_ex_data(sctx, idx, c))
        return 0;
    if (c->verify_cb != NULL)
        X509_STORE_CTX_set_verify_cb(sctx, c->verify_cb);
    return 1;
}

/*
 * SSL_CTX_set_cert_verify_callback(3): the application's function replaces X509_verify_cert,
 * with the store context set up as for X509_verify_cert; it returns 1 to accept and 0 to
 * reject, leaving its reason in X509_STORE_CTX_set_error (the alert follows from it). The
 * current context's callback is used (the one SSL_set_SSL_CTX switched to), as in OpenSSL.
 */
void SSL_CTX_set_cert_verify_callback(SSL_CTX *ctx, int (*cb)(X509_STORE_CTX *, void *),
                                      void *arg)
{
    ctx->app_verify_cb = cb;
    ctx->app_verify_arg = arg;
}

static int run_verification(SSL *c, X509_STORE_CTX *sctx)
{
    if (c->ctx->app_verify_cb != NULL)
        return c->ctx->app_verify_cb(sctx, c->ctx->app_verify_arg) > 0;
    return X509_verify_cert(sctx) > 0;
}

void cert_verified_free(SSL *c)
{
    sk_X509_pop_free(c->verified_chain, X509_free);
    X509_free(c->verified_anchor);
    c->verified_chain = NULL;
    c->verified_anchor = NULL;
    c->verified_prefix = 0;
}

/*
 * Keeps the chain the verification built, for SSL_get0_verified_chain. It is nearly always the
 * peer's chain, or its first certificates, and at most one trust anchor from the store: then the
 * count and the anchor are kept instead of a copy of the stack (two allocations of 40 bytes),
 * and SSL_get0_verified_chain makes the stack, of the same certificates, when asked for.
 */
static void keep_verified_chain(SSL *c, X509_STORE_CTX *sctx, STACK_OF(X509) *chain)
{
    cert_verified_free(c);
    STACK_OF(X509) *built = X509_STORE_CTX_get0_chain(sctx);
    if (built == NULL)
        return;
    int n = sk_X509_num(built), k = 0;
    while (k < n && k < sk_X509_num(chain) && k < UINT8_MAX &&
           sk_X509_value(built, k) == sk_X509_value(chain, k))
        k++;
    X509 *anchor = k < n ? sk_X509_value(built, k) : NULL;
    if (chain == c->peer_chain && n > 0 && n - k <= 1 && (anchor == NULL || X509_up_ref(anchor))) {
        c->verified_prefix = (uint8_t)k;
        c->verified_anchor = anchor;
        return;
    }
    c->verified_chain = X509_STORE_CTX_get1_chain(sctx); /* NULL on allocation failure */
}

/* The chain X509_verify_cert built (cert.c), trust anchor included; NULL before or without one. */
STACK_OF(X509) *SSL_get0_verified_chain(const SSL *s)
{
    if (s->verified_chain != NULL || (s->verified_prefix == 0 && s->verified_anchor == NULL))
        return s->verified_chain;
    int k = s->verified_prefix;
    STACK_OF(X509) *v = sk_X509_new_reserve(NULL, k + 1);
    for (int i = 0; v != NULL && i <= k; i++) {
        X509 *x = i < k ? sk_X509_value(s->peer_chain, i) : s->verified_anchor;
        /* reserved: the push cannot fail */
        if (x != NULL && (!X509_up_ref(x) || !sk_X509_push(v, x))) {
            sk_X509_pop_free(v, X509_free);
            v = NULL;
        }
    }
    if (v == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    SSL *w = (SSL *)s; /* a cache: the chain it describes does not change */
    X509_free(w->verified_anchor);
    w->verified_anchor = NULL;
    w->verified_prefix = 0;
    w->verified_chain = v;
    return v;
}

void cert_verified_detach(SSL *c)
{
    if (c->verified_chain == NULL && (c->verified_prefix != 0 || c->verified_anchor != NULL) &&
        SSL_get0_verified_chain(c) == NULL)
        cert_verified_free(c); /* out of memory: rather none than one naming freed certificates */
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
    int verified = run_verification(c, sctx);
    c->verify_result = X509_STORE_CTX_get_error(sctx);
    keep_verified_chain(c, sctx, chain);
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

static void cached_cert_free(void *x) { X509_free(x); }

/* slot_cache_find's take: a new reference to the cached certificate. */
static int cached_cert_take(void *x, void *out)
{
    if (!X509_up_ref(x))
        return 0;
    *(X509 **)out = x;
    return 1;
}

int cert_check_signing_usage(SSL *c, X509 *leaf)
{
    /* The extension's flags are computed on first use (X509_check_purpose's caching). */
    uint32_t flags = X509_get_extension_flags(leaf);
    if ((flags & EXFLAG_KUSAGE) && !(X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE))
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, QTLS_R_KEY_USAGE_BIT_INCORRECT);
    return 1;
}

void cert_write_der(struct wr *w, X509 *x)
{
    size_t at = wr_open_vec(w, 3);
    int len = i2d_X509(x, NULL);
    uint8_t *p = len > 0 ? wr_reserve(w, (size_t)len) : NULL;
    if (p == NULL || i2d_X509(x, &p) != len)
        wr_fail(w);
    wr_close_vec(w, at, 3);
}

/* libcrypto decodes a certificate's extensions (key ids, key usage, basic constraints)
   lazily, on first use, and threads verifying with one shared X509 race on that fill
   (ThreadSanitizer, issue 13). Call this while one thread still owns x. An invalid
   extension is verification's error to report, so nothing is left on the queue here. */
void cert_fill_extension_cache(X509 *x)
{
    ERR_set_mark();
    (void)X509_check_purpose(x, -1, 0);
    ERR_pop_to_mark();
}

X509 *cert_decode(SSL_CTX *ctx, const uint8_t *der, size_t len)
{
    struct slot_cache *cache = slot_cache_of(&ctx->cert_cache, cached_cert_free);
    X509 *x = NULL;
    if (slot_cache_find(cache, 0, der, len, cached_cert_take, &x))
        return x;
    const unsigned char *p = der;
    x = d2i_X509(NULL, &p, (long)len);
    if (x == NULL || p != der + len) { /* trailing bytes: not exactly one certificate */
        X509_free(x);
        return NULL;
    }
    cert_fill_extension_cache(x); /* before other threads can see x */
    if (cache != NULL && X509_up_ref(x))
        slot_cache_put(cache, 0, der, len, x); /* the cache's own reference */
    return x;
}

/* ------------------------------------------------------------------ */
/* Hashed directories, filled before they are shared                   */
/* ------------------------------------------------------------------ */

/*
 * libcrypto's hash_dir lookup (X509_LOOKUP_hash_dir) loads <hash>.N files during
 * verification and adds their certificates straight to the shared store, extension caches
 * empty: the first verifiers then fill one certificate's cache while others read it
 * (ThreadSanitizer, tests/test_threads.c, issue 13). This lookup puts the same hash_dir
 * lookup on a staging store of its own, used under one lock; what it loaded has its caches
 * filled there and only then is added to the shared store, whose lock publishes it. The
 * directory is searched as hash_dir searches it (same ctrl commands, same files); the answer
 * is a borrowed reference to the shared store's object, as hash_dir gives.
 */
struct hashed_dir {
    CRYPTO_RWLOCK *lock;
    X509_STORE *staging;
    X509_LOOKUP *dir; /* hash_dir, on staging */
};

static int hashed_dir_new(X509_LOOKUP *lu)
{
    struct hashed_dir *d = OPENSSL_zalloc(sizeof(*d));
    if (d == NULL || (d->lock = CRYPTO_THREAD_lock_new()) == NULL ||
        (d->staging = X509_STORE_new()) == NULL ||
        (d->dir = X509_STORE_add_lookup(d->staging, X509_LOOKUP_hash_dir())) == NULL ||
        !X509_LOOKUP_set_method_data(lu, d)) {
        if (d != NULL) {
            X509_STORE_free(d->staging);
            CRYPTO_THREAD_lock_free(d->lock);
        }
        OPENSSL_free(d);
        return 0;
    }
    return 1;
}

static void hashed_dir_free(X509_LOOKUP *lu)
{
    struct hashed_dir *d = X509_LOOKUP_get_method_data(lu);
    if (d == NULL)
        return;
    X509_STORE_free(d->staging); /* frees d->dir */
    CRYPTO_THREAD_lock_free(d->lock);
    OPENSSL_free(d);
}

/* X509_L_ADD_DIR (X509_LOOKUP_add_dir), and whatever else hash_dir answers. */
static int hashed_dir_ctrl(X509_LOOKUP *lu, int cmd, const char *argc, long argl, char **ret)
{
    struct hashed_dir *d = X509_LOOKUP_get_method_data(lu);
    if (d == NULL || !CRYPTO_THREAD_write_lock(d->lock))
        return 0;
    int r = X509_LOOKUP_ctrl(d->dir, cmd, argc, argl, ret);
    CRYPTO_THREAD_unlock(d->lock);
    return r;
}

/* Everything staged, caches filled, into the shared store (duplicates are ignored). */
static int hashed_dir_publish(struct hashed_dir *d, X509_STORE *store)
{
    if (!X509_STORE_lock(d->staging))
        return 0;
    STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(d->staging);
    int ok = 1;
    for (int i = 0; ok && i < sk_X509_OBJECT_num(objs); i++) {
        X509_OBJECT *o = sk_X509_OBJECT_value(objs, i);
        X509 *x = X509_OBJECT_get0_X509(o);
        X509_CRL *crl = X509_OBJECT_get0_X509_CRL(o);
        if (x != NULL) {
            cert_fill_extension_cache(x); /* x is ours alone until the store has it */
            ok = X509_STORE_add_cert(store, x);
        } else if (crl != NULL) {
            ok = X509_STORE_add_crl(store, crl);
        }
    }
    X509_STORE_unlock(d->staging);
    return ok;
}

static int hashed_dir_by_subject(X509_LOOKUP *lu, X509_LOOKUP_TYPE type, const X509_NAME *name,
                                 X509_OBJECT *ret)
{
    struct hashed_dir *d = X509_LOOKUP_get_method_data(lu);
    X509_STORE *store = X509_LOOKUP_get_store(lu);
    X509_OBJECT *staged = X509_OBJECT_new();
    if (d == NULL || store == NULL || staged == NULL || !CRYPTO_THREAD_write_lock(d->lock)) {
        X509_OBJECT_free(staged);
        return 0;
    }
    /* hash_dir's answer borrows the staging store's reference: take one of our own */
    int found = X509_LOOKUP_by_subject(d->dir, type, name, staged) &&
                X509_OBJECT_up_ref_count(staged) && hashed_dir_publish(d, store);
    CRYPTO_THREAD_unlock(d->lock);
    X509_OBJECT_free(staged);
    if (!found || !X509_STORE_lock(store))
        return 0;
    /* The shared store's object, borrowed as hash_dir's is: the caller takes a reference. */
    X509_OBJECT *o = X509_OBJECT_retrieve_by_subject(X509_STORE_get0_objects(store), type, name);
    X509 *x = o != NULL ? X509_OBJECT_get0_X509(o) : NULL;
    X509_CRL *crl = o != NULL ? X509_OBJECT_get0_X509_CRL(o) : NULL;
    if (x != NULL)
        found = X509_OBJECT_set1_X509(ret, x);
    else if (crl != NULL)
        found = X509_OBJECT_set1_X509_CRL(ret, crl);
    else
        found = 0;
    X509_STORE_unlock(store);
    if (found && x != NULL)
        X509_free(x); /* the store keeps it alive */
    else if (found)
        X509_CRL_free(crl);
    return found;
}

static CRYPTO_ONCE hashed_dir_once = CRYPTO_ONCE_STATIC_INIT;
static X509_LOOKUP_METHOD *hashed_dir_method;

static void make_hashed_dir_method(void)
{
    X509_LOOKUP_METHOD *m = X509_LOOKUP_meth_new("qtls hashed directory");
    if (m == NULL || !X509_LOOKUP_meth_set_new_item(m, hashed_dir_new) ||
        !X509_LOOKUP_meth_set_free(m, hashed_dir_free) ||
        !X509_LOOKUP_meth_set_ctrl(m, hashed_dir_ctrl) ||
        !X509_LOOKUP_meth_set_get_by_subject(m, hashed_dir_by_subject)) {
        X509_LOOKUP_meth_free(m);
        return;
    }
    hashed_dir_method = m;
}

X509_LOOKUP_METHOD *cert_hashed_dir_lookup(void)
{
    if (!CRYPTO_THREAD_run_once(&hashed_dir_once, make_hashed_dir_method))
        return NULL;
    return hashed_dir_method;
}
