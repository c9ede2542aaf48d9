/*
 * CA name lists (RFC 8446 §4.2.4, certificate_authorities) with OpenSSL's
 * API. A server names the CAs it accepts client certificates from in its
 * CertificateRequest: the client CA list (SSL_CTX_set_client_CA_list,
 * SSL_CTX_add_client_CA), or when that is empty the general CA list
 * (SSL_CTX_set0_CA_list, 1.1.1), which a client sends in its ClientHello.
 * What the peer sent is SSL_get0_peer_CA_list, and on a client also
 * SSL_get_client_CA_list, as OpenSSL does.
 *
 *   opaque DistinguishedName<1..2^16-1>;
 *   struct { DistinguishedName authorities<3..2^16-1>; } CertificateAuthoritiesExtension;
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

#include <openssl/pem.h>

/* ------------------------------------------------------------------ */
/* Lists                                                               */
/* ------------------------------------------------------------------ */

STACK_OF(X509_NAME) *SSL_dup_CA_list(const STACK_OF(X509_NAME) *sk)
{
    STACK_OF(X509_NAME) *out = sk_X509_NAME_new_reserve(NULL, sk_X509_NAME_num(sk));
    if (out == NULL)
        goto fail;
    for (int i = 0; i < sk_X509_NAME_num(sk); i++) {
        X509_NAME *n = X509_NAME_dup(sk_X509_NAME_value(sk, i));
        if (n == NULL || !sk_X509_NAME_push(out, n)) {
            X509_NAME_free(n);
            goto fail;
        }
    }
    return out;
fail:
    sk_X509_NAME_pop_free(out, X509_NAME_free);
    ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    return NULL;
}

/* Replaces *dst with `list`, which the caller gave up (OpenSSL's set-functions take ownership). */
static void replace(STACK_OF(X509_NAME) **dst, STACK_OF(X509_NAME) *list)
{
    sk_X509_NAME_pop_free(*dst, X509_NAME_free);
    *dst = list;
}

/* Appends a copy of the certificate's subject. */
static int add_subject(STACK_OF(X509_NAME) **dst, const X509 *x)
{
    if (x == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    X509_NAME *n = X509_NAME_dup(X509_get_subject_name(x));
    if (n == NULL || (*dst == NULL && (*dst = sk_X509_NAME_new_null()) == NULL) ||
        !sk_X509_NAME_push(*dst, n)) {
        X509_NAME_free(n);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    return 1;
}

void SSL_CTX_set_client_CA_list(SSL_CTX *ctx, STACK_OF(X509_NAME) *name_list)
{
    replace(&ctx->client_ca, name_list);
}

/* The connection's lists live in its cold part (internal.h); a list that cannot be kept is freed. */
static void set_own(SSL *s, int ca_names, STACK_OF(X509_NAME) *list)
{
    struct ssl_cold *k = cold_for(s, list != NULL);
    if (k == NULL)
        sk_X509_NAME_pop_free(list, X509_NAME_free);
    else
        replace(ca_names ? &k->ca_names : &k->client_ca, list);
}

static int add_own(SSL *s, int ca_names, const X509 *x)
{
    struct ssl_cold *k = cold_get(s);
    return k != NULL && add_subject(ca_names ? &k->ca_names : &k->client_ca, x);
}

void SSL_set_client_CA_list(SSL *s, STACK_OF(X509_NAME) *name_list) { set_own(s, 0, name_list); }

STACK_OF(X509_NAME) *SSL_CTX_get_client_CA_list(const SSL_CTX *ctx) { return ctx->client_ca; }

/* A client reports the list the server sent; a server its own, else its context's. */
STACK_OF(X509_NAME) *SSL_get_client_CA_list(const SSL *s)
{
    const struct ssl_cold *k = cold_peek(s);
    if (!s->server)
        return k->peer_ca_names;
    return k->client_ca != NULL ? k->client_ca : s->ctx->client_ca;
}

int SSL_CTX_add_client_CA(SSL_CTX *ctx, X509 *x) { return add_subject(&ctx->client_ca, x); }

int SSL_add_client_CA(SSL *s, X509 *x) { return add_own(s, 0, x); }

void SSL_CTX_set0_CA_list(SSL_CTX *ctx, STACK_OF(X509_NAME) *name_list)
{
    replace(&ctx->ca_names, name_list);
}

void SSL_set0_CA_list(SSL *s, STACK_OF(X509_NAME) *name_list) { set_own(s, 1, name_list); }

const STACK_OF(X509_NAME) *SSL_CTX_get0_CA_list(const SSL_CTX *ctx) { return ctx->ca_names; }

const STACK_OF(X509_NAME) *SSL_get0_CA_list(const SSL *s)
{
    const struct ssl_cold *k = cold_peek(s);
    return k->ca_names != NULL ? k->ca_names : s->ctx->ca_names;
}

int SSL_CTX_add1_to_CA_list(SSL_CTX *ctx, const X509 *x) { return add_subject(&ctx->ca_names, x); }

int SSL_add1_to_CA_list(SSL *s, const X509 *x) { return add_own(s, 1, x); }

const STACK_OF(X509_NAME) *SSL_get0_peer_CA_list(const SSL *s)
{
    return cold_peek(s)->peer_ca_names;
}

/*
 * Appends to `out` the subjects of the certificates in a PEM file that it
 * does not hold yet, in file order. 0 if the file cannot be read or holds
 * something else than certificates; `empty_ok` says whether a file without
 * any certificate is fine.
 */
static int add_file_subjects(STACK_OF(X509_NAME) *out, const char *file, int empty_ok)
{
    BIO *in = file != NULL ? BIO_new_file(file, "r") : NULL;
    X509 *x = NULL;
    int certs = 0; /* read, whether new or not */
    if (in == NULL) {
        ERR_raise(ERR_LIB_SSL, file == NULL ? ERR_R_PASSED_NULL_PARAMETER : ERR_R_SYS_LIB);
        return 0;
    }
    ERR_set_mark();
    while ((x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL) {
        X509_NAME *n = X509_get_subject_name(x);
        int known = 0;
        for (int i = 0; i < sk_X509_NAME_num(out) && !known; i++)
            known = X509_NAME_cmp(sk_X509_NAME_value(out, i), n) == 0;
        X509_NAME *copy = known ? NULL : X509_NAME_dup(n);
        X509_free(x);
        if (!known && (copy == NULL || !sk_X509_NAME_push(out, copy))) {
            X509_NAME_free(copy);
            ERR_clear_last_mark();
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            BIO_free(in);
            return 0;
        }
        certs++;
    }
    BIO_free(in);
    /* The end of the file shows as PEM_R_NO_START_LINE: expected, unless nothing was read. */
    unsigned long e = ERR_peek_last_error();
    if ((certs == 0 && !empty_ok) || ERR_GET_LIB(e) != ERR_LIB_PEM ||
        ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
        ERR_clear_last_mark();
        ERR_raise(ERR_LIB_SSL, ERR_R_PEM_LIB);
        return 0;
    }
    ERR_pop_to_mark();
    return 1;
}

/*
 * The subjects of the certificates in a PEM file, each once, in file order.
 * NULL if the file cannot be read, holds something else than certificates,
 * or holds none (SSL_load_client_CA_file(3)).
 */
STACK_OF(X509_NAME) *SSL_load_client_CA_file(const char *file)
{
    STACK_OF(X509_NAME) *out = sk_X509_NAME_new_null();
    if (out == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    if (!add_file_subjects(out, file, 0)) {
        sk_X509_NAME_pop_free(out, X509_NAME_free);
        return NULL;
    }
    return out;
}

/* Certificates are decoded in the default library context only (as SSL_CTX_new_ex). */
STACK_OF(X509_NAME) *SSL_load_client_CA_file_ex(const char *file, OSSL_LIB_CTX *libctx,
                                                const char *propq)
{
    if ((libctx != NULL && libctx != OSSL_LIB_CTX_get0_global_default()) ||
        (propq != NULL && *propq != '\0')) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT,
                       "qtls uses the default library context only");
        return NULL;
    }
    return SSL_load_client_CA_file(file);
}

/* SSL_add_file_cert_subjects_to_stack(3): 1 on success (a file without certificates too). */
int SSL_add_file_cert_subjects_to_stack(STACK_OF(X509_NAME) *stack, const char *file)
{
    if (stack == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    return add_file_subjects(stack, file, 1);
}

void ca_list_free(SSL_CTX *ctx, SSL *s)
{
    if (ctx != NULL) {
        replace(&ctx->client_ca, NULL);
        replace(&ctx->ca_names, NULL);
    }
    if (s != NULL && s->cold != NULL) {
        replace(&s->cold->client_ca, NULL);
        replace(&s->cold->ca_names, NULL);
        replace(&s->cold->peer_ca_names, NULL);
    }
}

/* ------------------------------------------------------------------ */
/* The extension                                                       */
/* ------------------------------------------------------------------ */

/* The body for `names`; not sent when the list is empty (its minimum is one name). */
static int write_names(struct wr *w, const STACK_OF(X509_NAME) *names)
{
    if (sk_X509_NAME_num(names) <= 0)
        return EXT_NOT_SENT;
    size_t list = wr_open_vec(w, 2);
    for (int i = 0; i < sk_X509_NAME_num(names); i++) {
        X509_NAME *n = sk_X509_NAME_value(names, i);
        int len = i2d_X509_NAME(n, NULL);
        size_t dn = wr_open_vec(w, 2);
        uint8_t *p = len > 0 ? wr_reserve(w, (size_t)len) : NULL;
        if (p == NULL || i2d_X509_NAME(n, &p) != len)
            wr_fail(w);
        wr_close_vec(w, dn, 2);
    }
    wr_close_vec(w, list, 2);
    return 1;
}

/* The row, CertificateRequest: the client CA list, else the general one (OpenSSL's order). */
int ca_list_server_write(SSL *c, struct wr *w)
{
    const STACK_OF(X509_NAME) *names = SSL_get_client_CA_list(c);
    if (sk_X509_NAME_num(names) <= 0)
        names = SSL_get0_CA_list(c);
    return write_names(w, names);
}

/* The row, ClientHello: the general CA list, if one is set. */
int ca_list_client_write(SSL *c, struct wr *w) { return write_names(w, SSL_get0_CA_list(c)); }

/*
 * The row, ClientHello or CertificateRequest: parses the extension strictly into
 * the connection's peer_ca_names: an empty list, an empty name, bad DER or bytes after a name are decode_error.
 */
int ca_list_take(SSL *c, const struct rd *b)
{
    struct rd body, list, dn;
    if (b == NULL)
        return 1;
    body = *b;
    if (!rd_vec16(&body, &list) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_LENGTH_MISMATCH);
    if (rd_empty(&list))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_BAD_LENGTH);
    STACK_OF(X509_NAME) *names = sk_X509_NAME_new_null();
    if (names == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    while (!rd_empty(&list)) {
        int reason = 0;
        X509_NAME *n = NULL;
        if (!rd_vec16(&list, &dn)) {
            reason = SSL_R_LENGTH_MISMATCH;
        } else if (rd_empty(&dn)) {
            reason = SSL_R_BAD_LENGTH;
        } else {
            const unsigned char *p = dn.p;
            n = d2i_X509_NAME(NULL, &p, (long)dn.n);
            if (n == NULL)
                reason = ERR_R_ASN1_LIB;
            else if (p != dn.p + dn.n)
                reason = SSL_R_CA_DN_LENGTH_MISMATCH;
        }
        if (reason == 0 && !sk_X509_NAME_push(names, n)) {
            X509_NAME_free(n);
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
        }
        if (reason != 0) {
            X509_NAME_free(n);
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            return qtls_fail(c, SSL_AD_DECODE_ERROR, reason);
        }
    }
    struct ssl_cold *k = cold_get(c);
    if (k == NULL) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    }
    replace(&k->peer_ca_names, names);
    return 1;
}
