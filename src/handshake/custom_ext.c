/*
 * Custom extensions (SSL_extension_supported(3)): SSL_CTX_add_custom_ext and the 1.1.0 forms
 * SSL_CTX_add_client_custom_ext / SSL_CTX_add_server_custom_ext, with OpenSSL 3.0's rules:
 *
 *   - an extension qtls (or OpenSSL) handles itself is refused, and so are both
 *     quic_transport_parameters codepoints; a type already added for the same role too;
 *   - a client adds its extensions to the ClientHello (add_cb: 1 add, 0 skip, -1 fail with *al;
 *     without add_cb an empty one), frees what add_cb gave with free_cb, and parses a server's
 *     answer in EncryptedExtensions only if it sent that type (else unsupported_extension);
 *   - a server parses them in the ClientHello and answers in EncryptedExtensions only those the
 *     client sent; parse_cb <= 0 fails the handshake with *al and SSL_R_BAD_EXTENSION;
 *   - the 1.1.0 forms are TLS 1.2-and-below extensions in OpenSSL: a client still sends its
 *     extension in the ClientHello (the version is not known yet), but in TLS 1.3 nothing is
 *     parsed or answered for them, which is all QUIC ever negotiates.
 *
 * qtls implements the ClientHello and EncryptedExtensions contexts. An extension that asks for
 * another TLS 1.3 message (ServerHello, HelloRetryRequest, Certificate, CertificateRequest,
 * NewSessionTicket) is refused with "not implemented" naming the context.
 */
#include "internal.h"
#include "base/base.h"
#include "handshake/handshake.h"

#include <string.h>

#define MAX_CUSTOM_EXTS 32 /* one bit each in SSL.custom_ext_sent / custom_ext_received */

enum role { ROLE_BOTH, ROLE_CLIENT_ONLY, ROLE_SERVER_ONLY };

struct custom_ext {
    uint16_t type;
    unsigned context;
    enum role role;
    /* The 3.0 (_ex) callbacks, or the 1.1.0 ones (old != 0). */
    int old;
    SSL_custom_ext_add_cb_ex add_ex;
    SSL_custom_ext_free_cb_ex free_ex;
    SSL_custom_ext_parse_cb_ex parse_ex;
    custom_ext_add_cb add_old;
    custom_ext_free_cb free_old;
    custom_ext_parse_cb parse_old;
    void *add_arg, *parse_arg;
};

struct custom_exts {
    size_t n;
    struct custom_ext e[MAX_CUSTOM_EXTS];
};

void custom_exts_free(struct custom_exts *e) { OPENSSL_free(e); }

/* OpenSSL 3.0's list of the extensions it handles itself. */
int SSL_extension_supported(unsigned int ext_type)
{
    switch (ext_type) {
    case TLSEXT_TYPE_application_layer_protocol_negotiation:
    case TLSEXT_TYPE_ec_point_formats:
    case TLSEXT_TYPE_supported_groups:
    case TLSEXT_TYPE_key_share:
    case TLSEXT_TYPE_next_proto_neg:
    case TLSEXT_TYPE_padding:
    case TLSEXT_TYPE_renegotiate:
    case TLSEXT_TYPE_max_fragment_length:
    case TLSEXT_TYPE_server_name:
    case TLSEXT_TYPE_session_ticket:
    case TLSEXT_TYPE_signature_algorithms:
    case TLSEXT_TYPE_srp:
    case TLSEXT_TYPE_status_request:
    case TLSEXT_TYPE_signed_certificate_timestamp:
    case TLSEXT_TYPE_use_srtp:
    case TLSEXT_TYPE_encrypt_then_mac:
    case TLSEXT_TYPE_supported_versions:
    case TLSEXT_TYPE_psk_kex_modes:
    case TLSEXT_TYPE_cookie:
    case TLSEXT_TYPE_early_data:
    case TLSEXT_TYPE_certificate_authorities:
    case TLSEXT_TYPE_psk:
    case TLSEXT_TYPE_post_handshake_auth:
        return 1;
    default:
        return 0;
    }
}

/* Handled internally by qtls: OpenSSL's list (bar SCT, which it lets applications take over,
   and qtls does not implement), qtls's own table, and the transport parameters. */
static int handled_internally(unsigned type)
{
    if (type == TLSEXT_TYPE_signed_certificate_timestamp)
        return 0;
    return SSL_extension_supported(type) || ext_index((uint16_t)type) >= 0;
}

/* OpenSSL's custom_ext_find: a role-specific entry matches its role and "both". */
static int role_matches(enum role have, enum role want)
{
    return want == ROLE_BOTH || have == ROLE_BOTH || have == want;
}

static struct custom_ext *find(const struct custom_exts *t, enum role want, unsigned type,
                               size_t *idx)
{
    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (t->e[i].type == type && role_matches(t->e[i].role, want)) {
            if (idx != NULL)
                *idx = i;
            return (struct custom_ext *)&t->e[i];
        }
    return NULL;
}

/* The TLS 1.3 contexts qtls runs custom extensions in; the TLS 1.2 ones never apply. */
#define IMPLEMENTED_CONTEXTS (SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS)
#define OTHER_TLS13_CONTEXTS                                                                       \
    (SSL_EXT_TLS1_3_SERVER_HELLO | SSL_EXT_TLS1_3_HELLO_RETRY_REQUEST |                            \
     SSL_EXT_TLS1_3_CERTIFICATE | SSL_EXT_TLS1_3_NEW_SESSION_TICKET |                              \
     SSL_EXT_TLS1_3_CERTIFICATE_REQUEST)

static int add_intern(SSL_CTX *ctx, enum role role, const struct custom_ext *m)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    /* OpenSSL's application error check: without add_cb, free_cb would never run. */
    if ((m->old ? m->add_old == NULL && m->free_old != NULL
                : m->add_ex == NULL && m->free_ex != NULL)) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "free_cb without add_cb");
        return 0;
    }
    if (handled_internally(m->type)) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY, "extension type %u",
                       (unsigned)m->type);
        return 0;
    }
    if (!m->old && (m->context & OTHER_TLS13_CONTEXTS) != 0)
        return qtls_not_implemented("custom extensions outside ClientHello and "
                                    "EncryptedExtensions");
    if (find(ctx->custom_exts, role, m->type, NULL) != NULL) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_CUSTOM_EXT_DUPLICATE, "extension type %u",
                       (unsigned)m->type);
        return 0;
    }
    if (ctx->custom_exts == NULL && (ctx->custom_exts = OPENSSL_zalloc(sizeof(*ctx->custom_exts))) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    if (ctx->custom_exts->n == MAX_CUSTOM_EXTS) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "more than %d custom extensions",
                       MAX_CUSTOM_EXTS);
        return 0;
    }
    struct custom_ext *e = &ctx->custom_exts->e[ctx->custom_exts->n++];
    *e = *m;
    e->role = role;
    return 1;
}

int SSL_CTX_add_custom_ext(SSL_CTX *ctx, unsigned int ext_type, unsigned int context,
                           SSL_custom_ext_add_cb_ex add_cb, SSL_custom_ext_free_cb_ex free_cb,
                           void *add_arg, SSL_custom_ext_parse_cb_ex parse_cb, void *parse_arg)
{
    if (ext_type > 0xffff) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "extension type %u", ext_type);
        return 0;
    }
    struct custom_ext m = {.type = (uint16_t)ext_type, .context = context, .add_ex = add_cb,
                           .free_ex = free_cb, .parse_ex = parse_cb, .add_arg = add_arg,
                           .parse_arg = parse_arg};
    return add_intern(ctx, ROLE_BOTH, &m);
}

/* The 1.1.0 forms: TLS 1.2-and-below extensions of one role (see the top of the file). */
static int add_old(SSL_CTX *ctx, enum role role, unsigned ext_type, custom_ext_add_cb add_cb,
                   custom_ext_free_cb free_cb, void *add_arg, custom_ext_parse_cb parse_cb,
                   void *parse_arg)
{
    if (ext_type > 0xffff) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "extension type %u", ext_type);
        return 0;
    }
    struct custom_ext m = {.type = (uint16_t)ext_type,
                           .context = SSL_EXT_TLS1_2_AND_BELOW_ONLY | SSL_EXT_CLIENT_HELLO |
                                      SSL_EXT_TLS1_2_SERVER_HELLO | SSL_EXT_IGNORE_ON_RESUMPTION,
                           .old = 1, .add_old = add_cb, .free_old = free_cb,
                           .parse_old = parse_cb, .add_arg = add_arg, .parse_arg = parse_arg};
    return add_intern(ctx, role, &m);
}

int SSL_CTX_add_client_custom_ext(SSL_CTX *ctx, unsigned int ext_type, custom_ext_add_cb add_cb,
                                  custom_ext_free_cb free_cb, void *add_arg,
                                  custom_ext_parse_cb parse_cb, void *parse_arg)
{
    return add_old(ctx, ROLE_CLIENT_ONLY, ext_type, add_cb, free_cb, add_arg, parse_cb, parse_arg);
}

int SSL_CTX_add_server_custom_ext(SSL_CTX *ctx, unsigned int ext_type, custom_ext_add_cb add_cb,
                                  custom_ext_free_cb free_cb, void *add_arg,
                                  custom_ext_parse_cb parse_cb, void *parse_arg)
{
    return add_old(ctx, ROLE_SERVER_ONLY, ext_type, add_cb, free_cb, add_arg, parse_cb, parse_arg);
}

int SSL_CTX_has_client_custom_ext(const SSL_CTX *ctx, unsigned int ext_type)
{
    return ctx != NULL && find(ctx->custom_exts, ROLE_CLIENT_ONLY, ext_type, NULL) != NULL;
}

/* ------------------------------------------------------------------ */
/* The handshake                                                       */
/* ------------------------------------------------------------------ */

/*
 * OpenSSL's extension_is_relevant for a TLS 1.3 connection: TLS 1.2-only extensions apply only
 * to the client's ClientHello (written before the version is known); IGNORE_ON_RESUMPTION ones
 * not on a resumed handshake.
 */
static int relevant(const SSL *c, const struct custom_ext *m, unsigned context, int writing_ch)
{
    if ((m->context & context) == 0)
        return 0;
    if ((m->context & SSL_EXT_TLS1_2_AND_BELOW_ONLY) && !writing_ch)
        return 0;
    if ((m->context & SSL_EXT_IGNORE_ON_RESUMPTION) && c->hs != NULL && c->hs->resumed &&
        context != SSL_EXT_CLIENT_HELLO)
        return 0;
    return 1;
}

static enum role own_role(const SSL *c) { return c->server ? ROLE_SERVER_ONLY : ROLE_CLIENT_ONLY; }

static int call_add(SSL *c, const struct custom_ext *m, unsigned context, const unsigned char **out,
                    size_t *outlen, int *al)
{
    if (m->old)
        return m->add_old(c, m->type, out, outlen, al, m->add_arg);
    return m->add_ex(c, m->type, context, out, outlen, NULL, 0, al, m->add_arg);
}

static void call_free(SSL *c, const struct custom_ext *m, unsigned context, const unsigned char *out)
{
    if (m->old && m->free_old != NULL)
        m->free_old(c, m->type, out, m->add_arg);
    else if (!m->old && m->free_ex != NULL)
        m->free_ex(c, m->type, context, out, m->add_arg);
}

/* Alerts a callback may set: any byte; anything else becomes `dflt`. */
static int alert_or(int al, int dflt) { return al >= 0 && al <= 255 ? al : dflt; }

int custom_ext_write(SSL *c, unsigned context, struct wr *w)
{
    const struct custom_exts *t = c->ctx->custom_exts;
    int client_hello = context == SSL_EXT_CLIENT_HELLO;
    if (client_hello)
        c->custom_ext_sent = 0; /* each ClientHello (again after HelloRetryRequest) */
    for (size_t i = 0; t != NULL && i < t->n; i++) {
        const struct custom_ext *m = &t->e[i];
        if (!role_matches(m->role, own_role(c)) || !relevant(c, m, context, client_hello))
            continue;
        /* A server answers only what the client sent. */
        if (!client_hello && !((c->custom_ext_received >> i) & 1))
            continue;
        int has_add = m->old ? m->add_old != NULL : m->add_ex != NULL;
        if (!client_hello && !has_add)
            continue;
        const unsigned char *out = NULL;
        size_t outlen = 0;
        if (has_add) {
            int al = SSL_AD_INTERNAL_ERROR;
            int r = call_add(c, m, context, &out, &outlen, &al);
            if (r < 0)
                return qtls_fail(c, alert_or(al, SSL_AD_INTERNAL_ERROR), SSL_R_CALLBACK_FAILED);
            if (r == 0)
                continue;
        }
        int too_long = outlen > 0xffff || (outlen > 0 && out == NULL);
        if (!too_long) {
            wr_u16(w, m->type);
            size_t at = wr_open_vec(w, 2);
            wr_bytes(w, out, outlen);
            wr_close_vec(w, at, 2);
        }
        call_free(c, m, context, out);
        if (too_long)
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_BAD_EXTENSION);
        if (client_hello)
            c->custom_ext_sent |= 1u << i;
    }
    return 1;
}

int custom_ext_claims(const SSL *c, uint16_t type, unsigned context)
{
    const struct custom_ext *m = find(c->ctx->custom_exts, own_role(c), type, NULL);
    if (m == NULL)
        return 0;
    return (m->context & context) != 0 ? 1 : -1;
}

static int call_parse(SSL *c, const struct custom_ext *m, unsigned context, const struct rd *body,
                      int *al)
{
    if (m->old)
        return m->parse_old(c, m->type, body->p, body->n, al, m->parse_arg);
    return m->parse_ex(c, m->type, context, body->p, body->n, NULL, 0, al, m->parse_arg);
}

/* One received extension (OpenSSL's custom_ext_parse). */
static int parse_one(SSL *c, unsigned context, uint16_t type, const struct rd *body)
{
    const struct custom_exts *t = c->ctx->custom_exts;
    size_t i;
    struct custom_ext *m = find(t, own_role(c), type, &i);
    if (m == NULL)
        return 1; /* an extension nobody added: ignored in a ClientHello (§4.2) */
    /* §4.2: an answer to an extension the client did not send. */
    if (context == SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS && !((c->custom_ext_sent >> i) & 1))
        return qtls_fail(c, SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_BAD_EXTENSION);
    if (!relevant(c, m, context, 0))
        return 1; /* e.g. a TLS 1.2-only extension: ignored in TLS 1.3, as OpenSSL */
    if (context == SSL_EXT_CLIENT_HELLO)
        c->custom_ext_received |= 1u << i;
    if (m->old ? m->parse_old == NULL : m->parse_ex == NULL)
        return 1;
    int al = SSL_AD_DECODE_ERROR;
    if (call_parse(c, m, context, body, &al) <= 0)
        return qtls_fail(c, alert_or(al, SSL_AD_DECODE_ERROR), SSL_R_BAD_EXTENSION);
    return 1;
}

int custom_ext_parse(SSL *c, unsigned context, struct rd list)
{
    uint16_t type;
    struct rd body;
    if (context == SSL_EXT_CLIENT_HELLO)
        c->custom_ext_received = 0;
    if (c->ctx->custom_exts == NULL)
        return 1;
    /* ext_split already checked the block's framing and duplicates. */
    while (rd_u16(&list, &type) && rd_vec16(&list, &body))
        if (!parse_one(c, context, type, &body))
            return 0;
    return 1;
}
