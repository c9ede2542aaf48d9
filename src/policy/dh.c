/*
 * The TLS 1.2 DHE settings: SSL_CTX_set_tmp_dh, SSL_CTX_set0_tmp_dh_pkey, SSL_set0_tmp_dh_pkey and
 * SSL_CTX_set_dh_auto. TLS 1.3 has no DHE cipher suites (finite-field groups would be named
 * groups, which qtls does not offer), so these only matter to servers that share configuration
 * with TCP TLS: they are accepted, stored and never used (docs/limits.md), with OpenSSL
 * 3.0's checks and ownership: set0 takes the key on success only, set_tmp_dh copies the DH, the
 * key must meet the security level (SSL_R_DH_KEY_TOO_SMALL), and the callback form is refused.
 */
#include "internal.h"
#include "policy/policy.h"

#include <openssl/dh.h>

void dh_params_free(struct dh_params *d)
{
    EVP_PKEY_free(d->tmp);
    d->tmp = NULL;
}

static int set0_tmp(SSL *s, SSL_CTX *ctx, struct dh_params *d, EVP_PKEY *pkey)
{
    if (pkey == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (!seclevel_allow(s, ctx, SSL_SECOP_TMP_DH, EVP_PKEY_get_security_bits(pkey), 0, pkey)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_DH_KEY_TOO_SMALL);
        return 0;
    }
    EVP_PKEY_free(d->tmp);
    d->tmp = pkey;
    return 1;
}

int SSL_CTX_set0_tmp_dh_pkey(SSL_CTX *ctx, EVP_PKEY *dhpkey)
{
    return set0_tmp(NULL, ctx, &ctx->dh, dhpkey);
}

/* The connection's settings live in its cold part (internal.h); NULL if memory ran out. */
static struct dh_params *own_params(SSL *s)
{
    struct ssl_cold *k = cold_get(s);
    return k != NULL ? &k->dh : NULL;
}

int SSL_set0_tmp_dh_pkey(SSL *s, EVP_PKEY *dhpkey)
{
    struct dh_params *d = own_params(s);
    return d != NULL && set0_tmp(s, NULL, d, dhpkey);
}

/* SSL_CTX_set_tmp_dh(ctx, dh): the DH is copied into a key of our own (ssl_dh_to_pkey). */
static long set_tmp_dh(SSL_CTX *ctx, SSL *s, struct dh_params *d, DH *dh)
{
    if (dh == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    EVP_PKEY *pkey = EVP_PKEY_new();
    if (pkey == NULL || EVP_PKEY_set1_DH(pkey, dh) <= 0) {
        EVP_PKEY_free(pkey);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    if (!set0_tmp(s, ctx, d, pkey)) {
        EVP_PKEY_free(pkey);
        return 0;
    }
    return 1;
}

long dh_ctrl(SSL_CTX *ctx, SSL *s, int cmd, long larg, void *parg, int *handled)
{
    struct dh_params *d;
    *handled = 1;
    switch (cmd) {
    case SSL_CTRL_SET_TMP_DH:
        d = s != NULL ? own_params(s) : &ctx->dh;
        return d != NULL && set_tmp_dh(s != NULL ? NULL : ctx, s, d, parg);
    case SSL_CTRL_SET_TMP_DH_CB:
        /* As OpenSSL: the callback goes through SSL_CTX_set_tmp_dh_callback, not ctrl. */
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    case SSL_CTRL_SET_DH_AUTO:
        d = s != NULL ? own_params(s) : &ctx->dh;
        if (d == NULL)
            return 0;
        d->tmp_auto = (int)larg;
        return 1;
    default:
        *handled = 0;
        return 0;
    }
}
