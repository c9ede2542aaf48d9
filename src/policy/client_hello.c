/*
 * The client hello callback (SSL_CTX_set_client_hello_cb) and the
 * SSL_client_hello_get* accessors it uses. A server runs it on every
 * ClientHello before anything else is decided, as OpenSSL does; HAProxy and
 * nginx pick the virtual host there (SSL_client_hello_get0_ext for
 * server_name, then SSL_set_SSL_CTX). The accessors answer only while the
 * callback runs; elsewhere they return 0, as OpenSSL's do outside it.
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

#include <string.h>

void SSL_CTX_set_client_hello_cb(SSL_CTX *ctx, SSL_client_hello_cb_fn cb, void *arg)
{
    ctx->client_hello_cb = cb;
    ctx->client_hello_arg = arg;
}

enum hs_wait client_hello_run_cb(SSL *c, const struct client_hello *ch)
{
    SSL_CTX *ctx = c->ctx;
    int al = SSL_AD_INTERNAL_ERROR;
    if (ctx->client_hello_cb == NULL)
        return HS_CONTINUE;
    c->hs->client_hello = ch;
    int r = ctx->client_hello_cb(c, &al, ctx->client_hello_arg);
    c->hs->client_hello = NULL;
    if (r == SSL_CLIENT_HELLO_SUCCESS)
        return HS_CONTINUE;
    if (r == SSL_CLIENT_HELLO_RETRY)
        return HS_WANT_CLIENT_HELLO_CB;
    if (al < 0 || al > 255)
        al = SSL_AD_INTERNAL_ERROR;
    return hs_fail(c, al, SSL_R_CALLBACK_FAILED);
}

/* The ClientHello under the callback, or NULL outside it. */
static const struct client_hello *current(SSL *s)
{
    return s != NULL && s->hs != NULL ? s->hs->client_hello : NULL;
}

/* A field's bytes through *out (when out is not NULL); its length. */
static size_t field(const struct rd *r, const unsigned char **out)
{
    if (out != NULL)
        *out = r->p;
    return r->n;
}

/* QUIC carries no SSLv2-format ClientHello. */
int SSL_client_hello_isv2(SSL *s) { return 0; }

unsigned int SSL_client_hello_get0_legacy_version(SSL *s)
{
    const struct client_hello *ch = current(s);
    return ch != NULL ? ch->legacy_version : 0;
}

size_t SSL_client_hello_get0_random(SSL *s, const unsigned char **out)
{
    const struct client_hello *ch = current(s);
    return ch != NULL ? field(&ch->random, out) : 0;
}

size_t SSL_client_hello_get0_session_id(SSL *s, const unsigned char **out)
{
    const struct client_hello *ch = current(s);
    return ch != NULL ? field(&ch->session_id, out) : 0;
}

size_t SSL_client_hello_get0_ciphers(SSL *s, const unsigned char **out)
{
    const struct client_hello *ch = current(s);
    return ch != NULL ? field(&ch->suites, out) : 0;
}

size_t SSL_client_hello_get0_compression_methods(SSL *s, const unsigned char **out)
{
    const struct client_hello *ch = current(s);
    return ch != NULL ? field(&ch->compression, out) : 0;
}

/* Walks the extension block, which parse_client_hello has already checked is well formed. */
static int next_extension(struct rd *list, uint16_t *type, struct rd *body)
{
    return rd_u16(list, type) && rd_vec16(list, body);
}

int SSL_client_hello_get1_extensions_present(SSL *s, int **out, size_t *outlen)
{
    const struct client_hello *ch = current(s);
    struct rd list, body;
    uint16_t type;
    size_t n = 0;
    if (ch == NULL || out == NULL || outlen == NULL)
        return 0;
    for (list = ch->exts; next_extension(&list, &type, &body);)
        n++;
    *out = NULL;
    *outlen = 0;
    if (n == 0)
        return 1;
    int *types = OPENSSL_malloc(n * sizeof(*types));
    if (types == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    n = 0;
    for (list = ch->exts; next_extension(&list, &type, &body);)
        types[n++] = type; /* in the order the client sent them */
    *out = types;
    *outlen = n;
    return 1;
}

int SSL_client_hello_get0_ext(SSL *s, unsigned int type, const unsigned char **out,
                              size_t *outlen)
{
    const struct client_hello *ch = current(s);
    struct rd list, body;
    uint16_t t;
    if (ch == NULL)
        return 0;
    for (list = ch->exts; next_extension(&list, &t, &body);) {
        if (t != type)
            continue;
        if (out != NULL)
            *out = body.p;
        if (outlen != NULL)
            *outlen = body.n;
        return 1;
    }
    return 0;
}
