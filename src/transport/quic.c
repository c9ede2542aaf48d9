/*
 * The QUIC glue: SSL_QUIC_METHOD installation, SSL_provide_quic_data
 * buffering per encryption level and its level rules, delivery of secrets,
 * flights and alerts, and the transport-parameter codepoints.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "transport/transport.h"

#include <string.h>

/* ---- installing the method ---- */

int SSL_CTX_set_quic_method(SSL_CTX *ctx, const SSL_QUIC_METHOD *quic_method)
{
    /* Only the version-flexible methods, as quictls: QUIC negotiates TLS 1.3 only. */
    if (ctx->method->version != TLS_ANY_VERSION) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    ctx->quic_method = quic_method;
    ctx->options &= ~SSL_OP_ENABLE_MIDDLEBOX_COMPAT; /* RFC 9001 §8.4 */
    return 1;
}

int SSL_set_quic_method(SSL *ssl, const SSL_QUIC_METHOD *quic_method)
{
    if (ssl->tls35 != NULL)
        return quic_api_mixed("SSL_set_quic_method");
    if (ssl->method->version != TLS_ANY_VERSION) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    ssl->quic_method = quic_method;
    ssl->options &= ~SSL_OP_ENABLE_MIDDLEBOX_COMPAT;
    return 1;
}

/* OpenSSL 3.5 answers 0 for a TLS object driven by SSL_set_quic_tls_cbs: so does qtls. */
int SSL_is_quic(const SSL *ssl)
{
    return ssl->quic_method != NULL && ssl->tls35 == NULL && !ssl->tcp;
}

/* One SSL speaks one front door: quictls's or OpenSSL 3.5's (quic_tls35.c). */
int quic_api_mixed(const char *function)
{
    ERR_raise(ERR_LIB_SSL, QTLS_R_QUIC_API_MIXED);
    ERR_add_error_data(2, function, ": this SSL already uses the other QUIC API");
    return 0;
}

/* ---- transport parameters (RFC 9001 §8.2) ---- */

int SSL_set_quic_transport_params(SSL *ssl, const uint8_t *params, size_t params_len)
{
    if (ssl->tls35 != NULL)
        return quic_api_mixed("SSL_set_quic_transport_params");
    return quic_set_local_tp(ssl, params, params_len);
}

int quic_set_local_tp(SSL *ssl, const uint8_t *params, size_t params_len)
{
    uint8_t *copy = NULL;
    if (params != NULL && params_len > 0) {
        copy = OPENSSL_memdup(params, params_len);
        if (copy == NULL) {
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return 0;
        }
    }
    OPENSSL_free(ssl->local_tp);
    ssl->local_tp = copy;
    ssl->local_tp_len = copy == NULL ? 0 : params_len;
    return 1;
}

void SSL_get_peer_quic_transport_params(const SSL *ssl, const uint8_t **out_params,
                                        size_t *out_params_len)
{
    *out_params = ssl->peer_tp;
    *out_params_len = ssl->peer_tp_len;
}

void SSL_set_quic_transport_version(SSL *ssl, int version) { ssl->quic_tp_version = version; }

int SSL_get_quic_transport_version(const SSL *ssl) { return ssl->quic_tp_version; }

int SSL_get_peer_quic_transport_version(const SSL *ssl) { return ssl->peer_tp_version; }

void SSL_set_quic_use_legacy_codepoint(SSL *ssl, int use_legacy)
{
    ssl->quic_tp_version = use_legacy ? TLSEXT_TYPE_quic_transport_parameters_draft
                                      : TLSEXT_TYPE_quic_transport_parameters;
}

/*
 * After the peer's extensions are split: neither codepoint is fatal
 * (missing_extension); with both, keep the draft one only if our own version
 * is the draft. A server also decides here which codepoint(s) it answers in.
 */
int quic_take_peer_tp(SSL *c, const struct rd *v1_body, const struct rd *draft_body)
{
    /* A version set explicitly admits only its own codepoint; 0 admits both. */
    int v1 = v1_body != NULL && c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters_draft;
    int draft =
        draft_body != NULL && c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters;
    if (!v1 && !draft)
        return qtls_fail(c, SSL_AD_MISSING_EXTENSION,
                         SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION);
    int use_draft = draft && (!v1 || c->quic_tp_version == TLSEXT_TYPE_quic_transport_parameters_draft);
    const struct rd *body = use_draft ? draft_body : v1_body;
    /* An empty body still gets a buffer, so that "received" and "none" stay apart. */
    uint8_t *copy = body->n > 0 ? OPENSSL_memdup(body->p, body->n) : OPENSSL_zalloc(1);
    if (copy == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    OPENSSL_free(c->peer_tp);
    c->peer_tp = copy;
    c->peer_tp_len = body->n;
    c->peer_tp_version = use_draft ? TLSEXT_TYPE_quic_transport_parameters_draft
                                   : TLSEXT_TYPE_quic_transport_parameters;
    if (c->quic_hooks != NULL && !c->quic_hooks->peer_tp(c, c->peer_tp, c->peer_tp_len))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED);
    if (c->server && c->hs != NULL) {
        c->hs->tp_codepoint_reply = 0;
        if (v1 && c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters_draft)
            c->hs->tp_codepoint_reply |= 1;
        if (draft && c->quic_tp_version != TLSEXT_TYPE_quic_transport_parameters)
            c->hs->tp_codepoint_reply |= 2;
    }
    return 1;
}

/* ---- levels and buffering ---- */

OSSL_ENCRYPTION_LEVEL SSL_quic_read_level(const SSL *ssl) { return ssl->read_level; }

OSSL_ENCRYPTION_LEVEL SSL_quic_write_level(const SSL *ssl) { return ssl->write_level; }

#define QTLS_DEFAULT_FLIGHT 16384

size_t SSL_quic_max_handshake_flight_len(const SSL *ssl, OSSL_ENCRYPTION_LEVEL level)
{
    size_t cert_list = ssl->ctx->max_cert_list;
    switch (level) {
    case ssl_encryption_initial:
        return QTLS_DEFAULT_FLIGHT;
    case ssl_encryption_application:
        /* over TCP a server may read a client Certificate here (post-handshake auth) */
        if (ssl->tcp && ssl->server && cert_list > QTLS_DEFAULT_FLIGHT)
            return cert_list;
        return QTLS_DEFAULT_FLIGHT;
    case ssl_encryption_early_data:
        /* QUIC sends no EndOfEarlyData (RFC 9001 §8.3); over TCP it is the one message, and
           one that is not empty is a decode error, not an excessive size */
        return ssl->tcp ? QTLS_DEFAULT_FLIGHT : 0;
    case ssl_encryption_handshake:
        if (ssl->server) {
            /* a client Certificate, only when we ask for one */
            if ((ssl->verify_mode & SSL_VERIFY_PEER) && cert_list > QTLS_DEFAULT_FLIGHT)
                return cert_list;
        } else if (cert_list > QTLS_DEFAULT_FLIGHT / 2) {
            /* the server Certificate plus a CertificateRequest */
            return 2 * cert_list > QTLS_DEFAULT_FLIGHT ? 2 * cert_list : QTLS_DEFAULT_FLIGHT;
        }
        return QTLS_DEFAULT_FLIGHT;
    }
    return 0;
}

/*
 * The input, made when bytes arrive and freed once they are all consumed: an established
 * connection holds none of it (160 bytes of bookkeeping, and the buffers themselves).
 */
struct quic_input {
    struct wr buf[4]; /* bytes received per level ... */
    size_t off[4];    /* ... of which this many are consumed (compacted on the next input) */
};

/* The unconsumed input at a level. */
static struct rd pending_input(const SSL *c, OSSL_ENCRYPTION_LEVEL level)
{
    struct rd r = {NULL, 0};
    if (c->input == NULL)
        return r;
    const struct wr *b = &c->input->buf[level];
    size_t off = c->input->off[level];
    /* A level that never received data has no buffer, and NULL + 0 is undefined. */
    if (wr_len(b) > off)
        rd_init(&r, b->buf + off, wr_len(b) - off);
    return r;
}

static struct quic_input *input_of(SSL *c)
{
    if (c->input == NULL && (c->input = OPENSSL_malloc(sizeof(*c->input))) != NULL) {
        for (int l = 0; l < 4; l++) {
            wr_init(&c->input->buf[l]);
            c->input->off[l] = 0;
        }
    }
    return c->input;
}

/* Is the unconsumed input a sequence of whole handshake messages (none cut off at the end)? */
static int whole_messages(const SSL *c, OSSL_ENCRYPTION_LEVEL level)
{
    struct rd r = pending_input(c, level), body;
    uint8_t type;
    while (!rd_empty(&r)) {
        if (!rd_u8(&r, &type) || !rd_vec24(&r, &body))
            return 0;
    }
    return 1;
}

static int level_valid(OSSL_ENCRYPTION_LEVEL level)
{
    return level >= ssl_encryption_initial && level <= ssl_encryption_application;
}

int SSL_provide_quic_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data, size_t len)
{
    if (ssl->quic_method == NULL || ssl->tcp) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    if (ssl->tls35 != NULL) /* its stack hands CRYPTO data over through crypto_recv_rcd */
        return quic_api_mixed("SSL_provide_quic_data");
    return quic_buffer_input(ssl, level, data, len);
}

int quic_buffer_input(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data, size_t len)
{
    if (!level_valid(level) || level < ssl->read_level || level < ssl->last_provided_level) {
        ERR_raise(ERR_LIB_SSL, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
        return 0;
    }
    /* No handshake message may cross a level boundary (RFC 9001 §4.1.3). */
    if (level != ssl->last_provided_level && !whole_messages(ssl, ssl->last_provided_level)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
        return 0;
    }
    if (len == 0) {
        ssl->last_provided_level = level;
        return 1;
    }
    struct quic_input *input = input_of(ssl);
    if (input == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    struct wr *in = &input->buf[level];
    /* Views of consumed messages are dead now: drop those bytes. */
    wr_consume(in, input->off[level]);
    input->off[level] = 0;
    if (len > SSL_quic_max_handshake_flight_len(ssl, level) ||
        wr_len(in) > SSL_quic_max_handshake_flight_len(ssl, level) - len) {
        ERR_raise(ERR_LIB_SSL, SSL_R_EXCESSIVE_MESSAGE_SIZE);
        return 0;
    }
    wr_bytes(in, data, len);
    if (!wr_ok(in)) {
        wr_free(in);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    ssl->last_provided_level = level; /* only accepted data moves the level on */
    return 1;
}

/* The next whole message at the read level: 1 if buffered, 0 if not yet, -1 if it never can be. */
static int whole_message(SSL *c, struct rd *msg)
{
    struct rd all = pending_input(c, c->read_level), r = all, body;
    uint8_t type;
    uint32_t claimed;
    if (rd_u8(&r, &type) && rd_vec24(&r, &body)) {
        rd_init(msg, all.p, all.n - r.n);
        return 1;
    }
    /* A message longer than the level's flight limit can never arrive whole: fail it now,
     * as libssl does (illegal_parameter), rather than wait for bytes that will be refused. */
    r = all;
    if (rd_u8(&r, &type) && rd_u24(&r, &claimed) &&
        (size_t)claimed + 4 > SSL_quic_max_handshake_flight_len(c, c->read_level)) {
        qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_EXCESSIVE_MESSAGE_SIZE);
        return -1;
    }
    return 0;
}

int quic_peek_message(SSL *c, struct rd *msg)
{
    /* A stack that is asked for data (the 3.5 API) is asked until a message is whole. */
    for (;;) {
        int whole = whole_message(c, msg);
        if (whole != 0)
            return whole;
        if (c->quic_hooks == NULL)
            break;
        int got = c->quic_hooks->pull(c);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
    }
    struct rd all = pending_input(c, c->read_level);
    /* Nothing whole at the read level: bytes at a later level came too early. */
    if (rd_empty(&all)) {
        for (int l = c->read_level + 1; l <= ssl_encryption_application; l++) {
            struct rd later = pending_input(c, (OSSL_ENCRYPTION_LEVEL)l);
            if (!rd_empty(&later)) {
                qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
                return -1;
            }
        }
    }
    return 0;
}

/* Only moves the offset, so views into the buffer stay valid until the next input. */
void quic_consume_message(SSL *c, size_t len) { c->input->off[c->read_level] += len; }

static int rd_empty_at(const SSL *c, OSSL_ENCRYPTION_LEVEL level)
{
    struct rd left = pending_input(c, level);
    return rd_empty(&left);
}

int quic_input_pending(const SSL *c, OSSL_ENCRYPTION_LEVEL level) { return !rd_empty_at(c, level); }

/* RFC 8446 §5.1: handshake messages must not span key changes. */
int quic_set_levels(SSL *c, OSSL_ENCRYPTION_LEVEL read, OSSL_ENCRYPTION_LEVEL write)
{
    if (read != c->read_level && !rd_empty_at(c, c->read_level))
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA);
    c->read_level = read;
    c->write_level = write;
    return 1;
}

/*
 * Between calls no view into the input is live, so a level whose bytes are all
 * consumed gives its buffer back: an established connection keeps none of the
 * handshake's input (about 1.3 KB on a client, 0.8 KB on a server otherwise).
 */
void quic_release_consumed(SSL *c)
{
    struct quic_input *in = c->input;
    if (in == NULL)
        return;
    int unread = 0;
    for (int l = 0; l < 4; l++) {
        if (in->off[l] >= wr_len(&in->buf[l])) {
            wr_free(&in->buf[l]);
            in->off[l] = 0;
        } else {
            unread = 1;
        }
    }
    if (!unread)
        quic_free_buffers(c);
}

void quic_test_input(const SSL *c, OSSL_ENCRYPTION_LEVEL level, size_t *len, size_t *cap)
{
    *len = c->input != NULL ? wr_len(&c->input->buf[level]) : 0;
    *cap = c->input != NULL ? c->input->buf[level].cap : 0;
}

void quic_free_buffers(SSL *c)
{
    if (c->input == NULL)
        return;
    for (int l = 0; l < 4; l++)
        wr_free(&c->input->buf[l]);
    OPENSSL_free(c->input);
    c->input = NULL;
}

/* Our transport parameters went out in the handshake and are never sent again. */
void quic_handshake_done(SSL *c)
{
    OPENSSL_clear_free(c->local_tp, c->local_tp_len);
    c->local_tp = NULL;
    c->local_tp_len = 0;
}

/* ---- calls into the QUIC stack ---- */

static int callback_failed(SSL *c)
{
    return qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED);
}

int quic_set_secrets(SSL *c, OSSL_ENCRYPTION_LEVEL level, const struct secret *read,
                     const struct secret *write)
{
    const SSL_QUIC_METHOD *m = c->quic_method;
    size_t len = read != NULL ? read->len : write->len;
    if (!m->set_encryption_secrets(c, level, read ? read->b : NULL, write ? write->b : NULL, len))
        return callback_failed(c);
    return 1;
}

int quic_add_handshake_data(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *p, size_t n)
{
    if (!c->quic_method->add_handshake_data(c, level, p, n))
        return callback_failed(c);
    return 1;
}

int quic_flush_flight(SSL *c)
{
    if (!c->quic_method->flush_flight(c))
        return callback_failed(c);
    return 1;
}

void quic_send_pending_alert(SSL *c)
{
    if (c->alert == 0 || c->alert_sent || c->quic_method == NULL)
        return;
    c->alert_sent = 1;
    c->quic_method->send_alert(c, c->write_level, c->alert);
    cb_alert_sent(c, c->alert);
}

/* ---- early data switches (used by the sessions milestone) ---- */

void SSL_set_quic_early_data_enabled(SSL *ssl, int enabled)
{
    /* quictls: only meaningful before the handshake starts; 3.5: its own function */
    if (ssl->quic_method == NULL || ssl->tls35 != NULL || ssl->phase != PHASE_BEFORE)
        return;
    ssl->early_data_enabled = enabled != 0;
}

int SSL_set_quic_early_data_context(SSL *ssl, const uint8_t *context, size_t context_len)
{
    uint8_t *copy = NULL;
    if (context_len > 0) {
        copy = OPENSSL_memdup(context, context_len);
        if (copy == NULL) {
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return 0;
        }
    }
    OPENSSL_free(ssl->early_data_context);
    ssl->early_data_context = copy;
    ssl->early_data_context_len = context_len;
    return 1;
}
