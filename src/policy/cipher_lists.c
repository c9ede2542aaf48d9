/*
 * The cipher-list getters (SSL_get_ciphers(3), SSL_get0_raw_cipherlist, SSL_bytes_to_cipher_list):
 * views of the configured TLS 1.3 suites (suites.c) as OpenSSL's STACK_OF(SSL_CIPHER), and of
 * the client's cipher_suites as received. A returned stack is owned by the context or connection
 * and stays valid until the list changes or the object is freed, as in OpenSSL; qtls knows only
 * TLS 1.3 suites, so that is all the lists ever hold.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"

#include <string.h>

/* The signalling values OpenSSL reports as SCSVs (RFC 5746 §3.3, RFC 7507 §2). */
static const SSL_CIPHER scsvs[] = {
    {.id = SSL3_CK_SCSV, .tls_id = 0x00ff, .name = "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"},
    {.id = SSL3_CK_FALLBACK_SCSV, .tls_id = 0x5600, .name = "TLS_FALLBACK_SCSV"},
};

/*
 * *cache as a stack of suites[0..n): kept if it already holds exactly those, else replaced
 * (the old one is freed, as OpenSSL frees its list when the configuration changes).
 */
static STACK_OF(SSL_CIPHER) *sync_stack(STACK_OF(SSL_CIPHER) **cache,
                                        const struct suite_list *suites)
{
    size_t n = suites->n;
    STACK_OF(SSL_CIPHER) *sk = *cache;
    if (sk != NULL && (size_t)sk_SSL_CIPHER_num(sk) == n) {
        size_t i = 0;
        while (i < n && sk_SSL_CIPHER_value(sk, (int)i) == suite_at(suites, i))
            i++;
        if (i == n)
            return sk;
    }
    if ((sk = sk_SSL_CIPHER_new_reserve(NULL, (int)n)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        sk_SSL_CIPHER_push(sk, suite_at(suites, i)); /* reserved: cannot fail */
    sk_SSL_CIPHER_free(*cache);
    *cache = sk;
    return sk;
}

STACK_OF(SSL_CIPHER) *SSL_CTX_get_ciphers(const SSL_CTX *ctx)
{
    if (ctx == NULL)
        return NULL;
    SSL_CTX *w = (SSL_CTX *)ctx; /* a cache: the configuration does not change */
    return sync_stack(&w->cipher_stack, &ctx->suites);
}

STACK_OF(SSL_CIPHER) *SSL_get_ciphers(const SSL *s)
{
    if (s == NULL)
        return NULL;
    struct ssl_cold *k = cold_get((SSL *)s); /* a cache: the configuration does not change */
    return k != NULL ? sync_stack(&k->cipher_stack, &s->suites) : NULL;
}

/* The n-th configured suite's name; NULL past the end, as OpenSSL. */
const char *SSL_get_cipher_list(const SSL *s, int n)
{
    STACK_OF(SSL_CIPHER) *sk = SSL_get_ciphers(s);
    if (sk == NULL || n < 0 || n >= sk_SSL_CIPHER_num(sk))
        return NULL;
    return SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, n));
}

/*
 * A new stack of the suites this connection could negotiate: all of them, unless its protocol
 * bounds or options exclude TLS 1.3, when OpenSSL's ssl_set_client_disabled fails and NULL is
 * returned. The caller frees it with sk_SSL_CIPHER_free.
 */
STACK_OF(SSL_CIPHER) *SSL_get1_supported_ciphers(SSL *s)
{
    STACK_OF(SSL_CIPHER) *all = SSL_get_ciphers(s);
    if (all == NULL)
        return NULL;
    if ((s->max_version != 0 && s->max_version < TLS1_3_VERSION) ||
        (s->options & SSL_OP_NO_TLSv1_3) != 0)
        return NULL;
    STACK_OF(SSL_CIPHER) *sk = NULL;
    for (int i = 0; i < sk_SSL_CIPHER_num(all); i++) {
        if (sk == NULL && (sk = sk_SSL_CIPHER_new_null()) == NULL)
            return NULL;
        if (!sk_SSL_CIPHER_push(sk, sk_SSL_CIPHER_value(all, i))) {
            sk_SSL_CIPHER_free(sk);
            return NULL;
        }
    }
    return sk;
}

/* ------------------------------------------------------------------ */
/* The client's list                                                   */
/* ------------------------------------------------------------------ */

int cipher_lists_keep_raw(SSL *c, struct rd suites)
{
    uint8_t *copy = OPENSSL_memdup(suites.p, suites.n); /* parse_client_hello: n > 0, even */
    if (copy == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    OPENSSL_free(c->raw_ciphers);
    c->raw_ciphers = copy;
    c->raw_ciphers_len = (uint16_t)suites.n; /* rd_vec16 */
    if (c->cold != NULL) { /* rebuilt from the new list on demand */
        sk_SSL_CIPHER_free(c->cold->client_cipher_stack);
        c->cold->client_cipher_stack = NULL;
    }
    return 1;
}

/* SSL_CTRL_GET_RAW_CIPHERLIST: the bytes and their length; with no pointer, one entry's size. */
long cipher_lists_get_raw(const SSL *s, const unsigned char **out)
{
    if (out == NULL)
        return 2; /* TLS_CIPHER_LEN */
    if (s->raw_ciphers == NULL)
        return 0;
    *out = s->raw_ciphers;
    return (long)s->raw_ciphers_len;
}

static const SSL_CIPHER *find_scsv(uint16_t id)
{
    for (size_t i = 0; i < sizeof(scsvs) / sizeof(scsvs[0]); i++)
        if (scsvs[i].tls_id == id)
            return &scsvs[i];
    return NULL;
}

/* Appends c to *sk (made on first use) when the caller asked for that list. */
static int push_to(STACK_OF(SSL_CIPHER) **sk, int wanted, const SSL_CIPHER *c)
{
    if (!wanted)
        return 1;
    if (*sk == NULL && (*sk = sk_SSL_CIPHER_new_null()) == NULL)
        return 0;
    return sk_SSL_CIPHER_push(*sk, c) > 0;
}

/*
 * SSL_bytes_to_cipher_list(3): the suites qtls knows in a wire list (2 bytes each, or the
 * SSLv2 format's 3, whose entries with a non-zero first byte are SSLv2-only and skipped), and
 * the SCSVs apart. Unknown values are skipped. Either output may be NULL.
 */
int SSL_bytes_to_cipher_list(SSL *s, const unsigned char *bytes, size_t len, int isv2format,
                             STACK_OF(SSL_CIPHER) **skp, STACK_OF(SSL_CIPHER) **scsvp)
{
    size_t n = isv2format ? 3 : 2;
    STACK_OF(SSL_CIPHER) *sk = NULL, *scsv = NULL;
    struct rd r;
    if (len == 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CIPHERS_SPECIFIED);
        return 0;
    }
    if (bytes == NULL || len % n != 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_ERROR_IN_RECEIVED_CIPHER_LIST);
        return 0;
    }
    rd_init(&r, bytes, len);
    uint8_t v2;
    uint16_t id;
    while (!rd_empty(&r)) {
        if ((isv2format && !rd_u8(&r, &v2)) || !rd_u16(&r, &id))
            goto err; /* cannot happen: len is a multiple of n */
        if (isv2format && v2 != 0)
            continue;
        const SSL_CIPHER *c = suite_by_tls_id(id);
        int ok = c != NULL                         ? push_to(&sk, skp != NULL, c)
                 : (c = find_scsv(id)) != NULL ? push_to(&scsv, scsvp != NULL, c)
                                               : 1;
        if (!ok) {
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            goto err;
        }
    }
    /* As OpenSSL: the outputs asked for are always stacks, possibly empty. */
    if ((skp != NULL && sk == NULL && (sk = sk_SSL_CIPHER_new_null()) == NULL) ||
        (scsvp != NULL && scsv == NULL && (scsv = sk_SSL_CIPHER_new_null()) == NULL)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        goto err;
    }
    if (skp != NULL)
        *skp = sk;
    if (scsvp != NULL)
        *scsvp = scsv;
    return 1;
err:
    sk_SSL_CIPHER_free(sk);
    sk_SSL_CIPHER_free(scsv);
    return 0;
}

/* Server: the client's suites that qtls knows, in its order; NULL elsewhere or before. */
STACK_OF(SSL_CIPHER) *SSL_get_client_ciphers(const SSL *s)
{
    if (s == NULL || !s->server || s->raw_ciphers == NULL)
        return NULL;
    struct ssl_cold *k = cold_get((SSL *)s); /* a cache of the ClientHello's list */
    if (k == NULL)
        return NULL;
    if (k->client_cipher_stack == NULL &&
        !SSL_bytes_to_cipher_list((SSL *)s, s->raw_ciphers, s->raw_ciphers_len, 0,
                                  &k->client_cipher_stack, NULL))
        return NULL;
    return k->client_cipher_stack;
}
