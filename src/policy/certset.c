/*
 * Certificate sets: several certificate/key pairs on one context or
 * connection, one per key type as OpenSSL keeps them (SSL_CTX_use_certificate
 * fills the slot of the certificate's key type and makes it current), the
 * chain ctrls acting on the current slot (SSL_CTX_set0_chain, _add1_chain_cert,
 * _build_cert_chain, _select_current_cert ...), the SSL_ forms on a
 * connection's own copy, the certificate callback (SSL_CTX_set_cert_cb), and
 * the server's choice of the pair the client's signature_algorithms allow
 * (RFC 8446 §4.4.2.2: the certificate must suit the client's schemes).
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

/* ------------------------------------------------------------------ */
/* Slots                                                               */
/* ------------------------------------------------------------------ */

/* A pair (or the one chosen for a handshake): the references it holds are dropped. */
void cert_cfg_free(struct cert_cfg *cc)
{
    X509_free(cc->cert);
    EVP_PKEY_free(cc->pkey);
    sk_X509_pop_free(cc->chain, X509_free);
    cc->cert = NULL;
    cc->pkey = NULL;
    cc->chain = NULL;
}

/* libcrypto's key type names, in slot order (OpenSSL's SSL_PKEY_* order for these types). */
static const char *const slot_types[CERT_SLOTS] = {
    [CERT_SLOT_RSA] = "RSA",         [CERT_SLOT_RSA_PSS] = "RSA-PSS", [CERT_SLOT_EC] = "EC",
    [CERT_SLOT_ED25519] = "ED25519", [CERT_SLOT_ED448] = "ED448",
};

static int key_slot(const EVP_PKEY *k)
{
    if (k == NULL)
        return -1;
    for (int i = 0; i < CERT_SLOTS; i++)
        if (EVP_PKEY_is_a(k, slot_types[i]))
            return i;
    return -1;
}

void certset_free(struct cert_set *s)
{
    for (int i = 0; i < CERT_SLOTS; i++)
        cert_cfg_free(&s->slot[i]);
    sk_X509_pop_free(s->extra, X509_free);
    s->extra = NULL;
}

static int cfg_copy(struct cert_cfg *to, const struct cert_cfg *from)
{
    if ((from->cert != NULL && !X509_up_ref(from->cert)) ||
        (from->pkey != NULL && !EVP_PKEY_up_ref(from->pkey)))
        return 0;
    to->cert = from->cert;
    to->pkey = from->pkey;
    to->chain = NULL;
    return from->chain == NULL || (to->chain = X509_chain_up_ref(from->chain)) != NULL;
}

struct cert_set *certset_of(const SSL *c)
{
    return c->certs != NULL ? c->certs : &c->ctx->certs;
}

/* As OpenSSL's SSL_new copies the context's CERT: pairs, chains, current slot and callback. */
struct cert_set *certset_own(SSL *c)
{
    if (c->certs != NULL)
        return c->certs;
    const struct cert_set *from = &c->ctx->certs;
    struct cert_set *s = OPENSSL_zalloc(sizeof(*s));
    int ok = s != NULL;
    for (int i = 0; ok && i < CERT_SLOTS; i++)
        ok = cfg_copy(&s->slot[i], &from->slot[i]);
    if (ok && from->extra != NULL)
        ok = (s->extra = X509_chain_up_ref(from->extra)) != NULL;
    if (!ok) {
        if (s != NULL)
            certset_free(s);
        OPENSSL_free(s);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    s->current = from->current;
    s->cert_cb = from->cert_cb;
    s->cert_cb_arg = from->cert_cb_arg;
    c->certs = s;
    return s;
}

/* X509_check_private_key without leaving its mismatch errors on the queue. */
static int key_fits_quietly(X509 *x, EVP_PKEY *k)
{
    ERR_set_mark();
    int ok = X509_check_private_key(x, k);
    ERR_pop_to_mark();
    return ok;
}

int certset_use_cert(struct cert_set *s, X509 *x)
{
    EVP_PKEY *pub = x != NULL ? X509_get0_pubkey(x) : NULL;
    if (x == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (pub == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_X509_LIB);
        return 0;
    }
    int slot = key_slot(pub);
    if (slot < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CERTIFICATE_TYPE);
        return 0;
    }
    struct cert_cfg *cc = &s->slot[slot];
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
    s->current = slot;
    return 1;
}

int certset_use_key(struct cert_set *s, EVP_PKEY *k)
{
    if (k == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    int slot = key_slot(k);
    if (slot < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CERTIFICATE_TYPE);
        return 0;
    }
    struct cert_cfg *cc = &s->slot[slot];
    /* A key that does not match the certificate fails with libcrypto's reason, as in OpenSSL. */
    if (cc->cert != NULL && !X509_check_private_key(cc->cert, k))
        return 0;
    EVP_PKEY_up_ref(k);
    EVP_PKEY_free(cc->pkey);
    cc->pkey = k;
    s->current = slot;
    return 1;
}

void certset_set_chain(struct cert_set *s, STACK_OF(X509) *chain)
{
    struct cert_cfg *cc = &s->slot[s->current];
    sk_X509_pop_free(cc->chain, X509_free);
    cc->chain = chain;
}

static int check_pair(const struct cert_set *s)
{
    const struct cert_cfg *cc = &s->slot[s->current];
    if (cc->cert == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_ASSIGNED);
        return 0;
    }
    if (cc->pkey == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_PRIVATE_KEY_ASSIGNED);
        return 0;
    }
    return X509_check_private_key(cc->cert, cc->pkey);
}

/* ------------------------------------------------------------------ */
/* The public setters and getters                                      */
/* ------------------------------------------------------------------ */

int SSL_CTX_use_certificate(SSL_CTX *ctx, X509 *x)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return seclevel_check_cert(NULL, ctx, x, 1) && certset_use_cert(&ctx->certs, x);
}

int SSL_CTX_use_PrivateKey(SSL_CTX *ctx, EVP_PKEY *pkey)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return certset_use_key(&ctx->certs, pkey);
}

int SSL_use_certificate(SSL *s, X509 *x)
{
    struct cert_set *set;
    if (s == NULL || x == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return seclevel_check_cert(s, NULL, x, 1) && (set = certset_own(s)) != NULL &&
           certset_use_cert(set, x);
}

int SSL_use_PrivateKey(SSL *s, EVP_PKEY *pkey)
{
    struct cert_set *set;
    if (s == NULL || pkey == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return (set = certset_own(s)) != NULL && certset_use_key(set, pkey);
}

/* Drops every pair and chain of the connection (its context keeps its own). */
void SSL_certs_clear(SSL *s)
{
    struct cert_set *set = certset_own(s);
    if (set == NULL)
        return;
    for (int i = 0; i < CERT_SLOTS; i++)
        cert_cfg_free(&set->slot[i]);
    set->current = CERT_SLOT_RSA;
}

/*
 * SSL_CTX_use_cert_and_key (1.1.1): the pair and its chain at once, into the
 * key type's slot; without `override`, an occupied slot is refused.
 */
static int use_cert_and_key(struct cert_set *s, X509 *x, EVP_PKEY *k, STACK_OF(X509) *chain,
                            int override)
{
    if (x == NULL || k == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    int slot = key_slot(k);
    if (slot < 0 || key_slot(X509_get0_pubkey(x)) != slot) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CERTIFICATE_TYPE);
        return 0;
    }
    if (!X509_check_private_key(x, k)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_PRIVATE_KEY_MISMATCH);
        return 0;
    }
    struct cert_cfg *cc = &s->slot[slot];
    if (!override && (cc->cert != NULL || cc->pkey != NULL || cc->chain != NULL)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NOT_REPLACING_CERTIFICATE);
        return 0;
    }
    STACK_OF(X509) *dup = NULL;
    if (chain != NULL && (dup = X509_chain_up_ref(chain)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    cert_cfg_free(cc);
    X509_up_ref(x);
    EVP_PKEY_up_ref(k);
    cc->cert = x;
    cc->pkey = k;
    cc->chain = dup;
    s->current = slot;
    return 1;
}

int SSL_CTX_use_cert_and_key(SSL_CTX *ctx, X509 *x509, EVP_PKEY *privatekey,
                             STACK_OF(X509) *chain, int override)
{
    return seclevel_check_cert(NULL, ctx, x509, 1) && seclevel_check_chain(NULL, ctx, chain) &&
           use_cert_and_key(&ctx->certs, x509, privatekey, chain, override);
}

int SSL_use_cert_and_key(SSL *ssl, X509 *x509, EVP_PKEY *privatekey, STACK_OF(X509) *chain,
                         int override)
{
    if (!seclevel_check_cert(ssl, NULL, x509, 1) || !seclevel_check_chain(ssl, NULL, chain))
        return 0;
    struct cert_set *set = certset_own(ssl);
    return set != NULL && use_cert_and_key(set, x509, privatekey, chain, override);
}

int SSL_CTX_check_private_key(const SSL_CTX *ctx)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return check_pair(&ctx->certs);
}

int SSL_check_private_key(const SSL *s)
{
    if (s == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return check_pair(certset_of(s));
}

X509 *SSL_CTX_get0_certificate(const SSL_CTX *ctx)
{
    return ctx == NULL ? NULL : ctx->certs.slot[ctx->certs.current].cert;
}

EVP_PKEY *SSL_CTX_get0_privatekey(const SSL_CTX *ctx)
{
    return ctx == NULL ? NULL : ctx->certs.slot[ctx->certs.current].pkey;
}

X509 *SSL_get_certificate(const SSL *s)
{
    const struct cert_set *set = s == NULL ? NULL : certset_of(s);
    return set == NULL ? NULL : set->slot[set->current].cert;
}

EVP_PKEY *SSL_get_privatekey(const SSL *s)
{
    const struct cert_set *set = s == NULL ? NULL : certset_of(s);
    return set == NULL ? NULL : set->slot[set->current].pkey;
}

/* ------------------------------------------------------------------ */
/* The certificate callback                                            */
/* ------------------------------------------------------------------ */

void SSL_CTX_set_cert_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *), void *arg)
{
    ctx->certs.cert_cb = cb;
    ctx->certs.cert_cb_arg = arg;
}

void SSL_set_cert_cb(SSL *s, int (*cb)(SSL *, void *), void *arg)
{
    struct cert_set *set = certset_own(s);
    if (set == NULL)
        return; /* void in OpenSSL too: the allocation failure stays on the queue */
    set->cert_cb = cb;
    set->cert_cb_arg = arg;
}

/*
 * SSL_CTX_set_cert_cb(3): the callback runs on the server once the
 * ClientHello is processed (not when resuming), on the client when a
 * CertificateRequest arrives; it may set the certificate with SSL_use_*.
 * HS_CONTINUE: go on; HS_ERROR: internal_error; HS_WANT_X509_LOOKUP: suspended.
 */
enum hs_wait certset_run_cb(SSL *c)
{
    const struct cert_set *set = certset_of(c);
    if (set->cert_cb == NULL)
        return HS_CONTINUE;
    int rv = set->cert_cb(c, set->cert_cb_arg);
    if (rv < 0)
        return HS_WANT_X509_LOOKUP;
    if (rv == 0)
        return hs_fail(c, SSL_AD_INTERNAL_ERROR,
                       c->server ? SSL_R_CERT_CB_ERROR : SSL_R_CALLBACK_FAILED);
    return HS_CONTINUE;
}

/* ------------------------------------------------------------------ */
/* Choosing the pair for a handshake                                   */
/* ------------------------------------------------------------------ */

/* ECDSA, then EdDSA, then RSA-PSS (RSASSA-PSS keys before rsaEncryption keys). */
static const int preference[CERT_SLOTS] = {
    CERT_SLOT_EC, CERT_SLOT_ED25519, CERT_SLOT_ED448, CERT_SLOT_RSA_PSS, CERT_SLOT_RSA,
};

int certset_choose(SSL *c, const struct cert_set *s, const uint16_t *peer, size_t n,
                   struct cert_cfg *out, uint16_t *scheme)
{
    for (int i = 0; i < CERT_SLOTS; i++) {
        const struct cert_cfg *cc = &s->slot[preference[i]];
        if (cc->cert == NULL || cc->pkey == NULL || !sigalgs_choose_scheme(cc->pkey, peer, n, scheme))
            continue;
        cert_cfg_free(out);
        struct cert_cfg pick = *cc;
        if (pick.chain == NULL || sk_X509_num(pick.chain) == 0)
            pick.chain = c->ctx->certs.extra; /* OpenSSL: the context's extra certificates */
        if (!cfg_copy(out, &pick)) {
            cert_cfg_free(out);
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
        }
        c->cert_slot = preference[i];
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Chains (the ctrls behind the SSL_CTX_/SSL_ chain macros)            */
/* ------------------------------------------------------------------ */

static int push_cert(STACK_OF(X509) **sk, X509 *x)
{
    if (x == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (*sk == NULL && (*sk = sk_X509_new_null()) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    if (!sk_X509_push(*sk, x)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    return 1;
}

/* set0_chain (copy 0: takes the stack) / set1_chain (copy 1: its own references); NULL clears. */
static long chain_replace(struct cert_set *s, long copy, STACK_OF(X509) *sk)
{
    STACK_OF(X509) *next = sk;
    if (sk != NULL && copy && (next = X509_chain_up_ref(sk)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    certset_set_chain(s, next);
    return 1;
}

/* add0_chain_cert (copy 0: takes the certificate) / add1 (copy 1: up-refs it). */
static long chain_add(STACK_OF(X509) **sk, long copy, X509 *x)
{
    if (copy && x != NULL && !X509_up_ref(x))
        return 0;
    if (!push_cert(sk, x)) {
        if (copy)
            X509_free(x);
        return 0;
    }
    return 1;
}

/*
 * SSL_CTX_build_cert_chain(3): completes the current certificate's chain
 * from the verify store (or, with SSL_BUILD_CHAIN_FLAG_CHECK, only from the
 * chain already there, to check and reorder it). The leaf is not kept; with
 * _NO_ROOT a self-signed root at the end is dropped. 1 built, 2 built despite
 * an error (_IGNORE_ERROR), 0 failed.
 */
static long build_chain(struct cert_set *s, X509_STORE *verify_store, long flags)
{
    struct cert_cfg *cc = &s->slot[s->current];
    X509_STORE *store = verify_store;
    STACK_OF(X509) *untrusted = NULL, *chain = NULL;
    long rv = 0;
    if (cc->cert == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_SET);
        return 0;
    }
    if (flags & SSL_BUILD_CHAIN_FLAG_CHECK) {
        if ((store = X509_STORE_new()) == NULL || !X509_STORE_add_cert(store, cc->cert))
            goto done;
        for (int i = 0; i < sk_X509_num(cc->chain); i++)
            if (!X509_STORE_add_cert(store, sk_X509_value(cc->chain, i)))
                goto done;
    } else if (flags & SSL_BUILD_CHAIN_FLAG_UNTRUSTED) {
        untrusted = cc->chain;
    }
    X509_STORE_CTX *sctx = X509_STORE_CTX_new();
    if (sctx == NULL || !X509_STORE_CTX_init(sctx, store, cc->cert, untrusted)) {
        X509_STORE_CTX_free(sctx);
        ERR_raise(ERR_LIB_SSL, ERR_R_X509_LIB);
        goto done;
    }
    int ok = X509_verify_cert(sctx) > 0;
    rv = 1;
    if (!ok && (flags & SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR)) {
        if (flags & SSL_BUILD_CHAIN_FLAG_CLEAR_ERROR)
            ERR_clear_error();
        rv = 2;
    } else if (!ok) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED, "verify error: %s",
                       X509_verify_cert_error_string(X509_STORE_CTX_get_error(sctx)));
        rv = 0;
    }
    if (rv != 0 && (chain = X509_STORE_CTX_get1_chain(sctx)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        rv = 0;
    }
    X509_STORE_CTX_free(sctx);
    if (rv == 0)
        goto done;
    X509_free(sk_X509_shift(chain)); /* the leaf */
    int last = sk_X509_num(chain) - 1;
    if ((flags & SSL_BUILD_CHAIN_FLAG_NO_ROOT) && last >= 0 &&
        (X509_get_extension_flags(sk_X509_value(chain, last)) & EXFLAG_SS))
        X509_free(sk_X509_pop(chain));
    certset_set_chain(s, chain);
done:
    if (store != verify_store)
        X509_STORE_free(store);
    return rv;
}

/* SSL_CTX_select_current_cert: the slot holding exactly this certificate (pointer). */
static long select_cert(struct cert_set *s, X509 *x)
{
    for (int i = 0; x != NULL && i < CERT_SLOTS; i++) {
        if (s->slot[i].cert == x) {
            s->current = i;
            return 1;
        }
    }
    return 0;
}

/* SSL_CTX_set_current_cert: FIRST / NEXT walk the slots holding a complete pair. */
static long set_current(SSL *c, struct cert_set *s, long op)
{
    int from;
    if (op == SSL_CERT_SET_SERVER) {
        /* OpenSSL: the certificate the server sent (connections only). */
        if (c == NULL || c->cert_slot < 0)
            return 0;
        s->current = c->cert_slot;
        return 1;
    }
    if (op == SSL_CERT_SET_FIRST)
        from = 0;
    else if (op == SSL_CERT_SET_NEXT)
        from = s->current + 1;
    else
        return 0;
    for (int i = from; i < CERT_SLOTS; i++) {
        if (s->slot[i].cert != NULL && s->slot[i].pkey != NULL) {
            s->current = i;
            return 1;
        }
    }
    return 0;
}

/* The commands that read; a connection reads its context's set until it has its own. */
static long read_ctrl(const struct cert_set *s, SSL_CTX *ctx, int cmd, long larg, void *parg,
                      int *handled)
{
    switch (cmd) {
    case SSL_CTRL_GET_CHAIN_CERTS:
        *(STACK_OF(X509) **)parg = s->slot[s->current].chain;
        return 1;
    case SSL_CTRL_GET_EXTRA_CHAIN_CERTS:
        if (ctx == NULL)
            break;
        /* OpenSSL: without extra certificates, larg 0 reports the current chain instead. */
        *(STACK_OF(X509) **)parg =
            (ctx->certs.extra == NULL && larg == 0) ? s->slot[s->current].chain : ctx->certs.extra;
        return 1;
    }
    *handled = 0;
    return 0;
}

long certset_ctrl(SSL_CTX *ctx, SSL *c, int cmd, long larg, void *parg, int *handled)
{
    *handled = 1;
    if (cmd == SSL_CTRL_GET_CHAIN_CERTS || cmd == SSL_CTRL_GET_EXTRA_CHAIN_CERTS)
        return read_ctrl(c != NULL ? certset_of(c) : &ctx->certs, ctx, cmd, larg, parg, handled);
    switch (cmd) {
    case SSL_CTRL_CHAIN:
    case SSL_CTRL_CHAIN_CERT:
    case SSL_CTRL_BUILD_CERT_CHAIN:
    case SSL_CTRL_SELECT_CURRENT_CERT:
    case SSL_CTRL_SET_CURRENT_CERT:
        break;
    case SSL_CTRL_EXTRA_CHAIN_CERT:
        if (ctx != NULL)
            return push_cert(&ctx->certs.extra, parg);
        *handled = 0;
        return 0;
    case SSL_CTRL_CLEAR_EXTRA_CHAIN_CERTS:
        if (ctx == NULL) {
            *handled = 0;
            return 0;
        }
        sk_X509_pop_free(ctx->certs.extra, X509_free);
        ctx->certs.extra = NULL;
        return 1;
    default:
        *handled = 0;
        return 0;
    }
    struct cert_set *s = c != NULL ? certset_own(c) : &ctx->certs;
    if (s == NULL)
        return 0;
    switch (cmd) {
    case SSL_CTRL_CHAIN: /* OpenSSL's ssl_cert_set0_chain checks every certificate */
        return seclevel_check_chain(c, ctx, parg) && chain_replace(s, larg, parg);
    case SSL_CTRL_CHAIN_CERT:
        return seclevel_check_cert(c, ctx, parg, 0) &&
               chain_add(&s->slot[s->current].chain, larg, parg);
    case SSL_CTRL_BUILD_CERT_CHAIN:
        return build_chain(s, c != NULL ? c->ctx->store : ctx->store, larg);
    case SSL_CTRL_SELECT_CURRENT_CERT:
        return select_cert(s, parg);
    default: /* SSL_CTRL_SET_CURRENT_CERT */
        return set_current(c, s, larg);
    }
}
