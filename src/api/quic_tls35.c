/*
 * OpenSSL 3.5's API for third-party QUIC stacks (SSL_set_quic_tls_cbs(3)) as a second front
 * door on the one handshake engine. An internal SSL_QUIC_METHOD receives what the engine hands
 * any QUIC stack (secrets, flights, alerts) and forwards it to the 3.5 callbacks; the glue's
 * hooks (struct quic_hooks) pull received CRYPTO data through crypto_recv_rcd at the engine's
 * read level and pass the peer's transport parameters to got_transport_params.
 *
 * The 3.5 API has no level on crypto_send or crypto_recv_rcd: the stack sends at the newest
 * write level yielded and hands over data of the newest read level yielded. So a secret is
 * yielded only once the engine has nothing left to send below its level (write) and reads at
 * its level (read), not when the engine derives it. The orders that result are in docs/quic-apis.md.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "transport/transport.h"
#include "handshake/handshake.h"
#include "api/api.h"

#include <string.h>

struct pending_secret {
    int waiting;
    struct secret s;
};

struct tls35 {
    OSSL_FUNC_SSL_QUIC_TLS_crypto_send_fn *crypto_send;
    OSSL_FUNC_SSL_QUIC_TLS_crypto_recv_rcd_fn *crypto_recv_rcd;
    OSSL_FUNC_SSL_QUIC_TLS_crypto_release_rcd_fn *crypto_release_rcd;
    OSSL_FUNC_SSL_QUIC_TLS_yield_secret_fn *yield_secret;
    OSSL_FUNC_SSL_QUIC_TLS_got_transport_params_fn *got_transport_params;
    OSSL_FUNC_SSL_QUIC_TLS_alert_fn *alert;
    void *arg;
    /* Secrets derived but not yet yielded, per level (0-RTT, handshake, application). */
    struct pending_secret read[4], write[4];
    /* Output crypto_send did not take yet, in order: bytes [off, wr_len(&out)) of out; seg_end[l]
       is where level l's bytes end (levels only rise, so each level is one run). */
    struct wr out;
    size_t off;
    size_t seg_end[4];
};

enum { DIRECTION_READ = 0, DIRECTION_WRITE = 1 }; /* yield_secret's direction */

static int callback_failed(SSL *c, const char *callback)
{
    qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED);
    ERR_add_error_data(1, callback);
    return 0;
}

/* ---- secrets ---- */

/* qtls's levels are OSSL_RECORD_PROTECTION_LEVEL_* value for value (NONE is never yielded). */
static int yield(SSL *c, int level, int direction)
{
    struct pending_secret *p = direction == DIRECTION_READ ? &c->tls35->read[level]
                                                           : &c->tls35->write[level];
    int ok = c->tls35->yield_secret(c, (uint32_t)level, direction, p->s.b, p->s.len,
                                    c->tls35->arg);
    secret_wipe(&p->s);
    p->waiting = 0;
    return ok ? 1 : callback_failed(c, "yield_secret");
}

/*
 * May the write secret of `level` be yielded now? Not while the engine holds output below it
 * (that output would go out under the new key), and a client's 1-RTT one not before the
 * handshake ends: the engine derives it before it writes its Finished at the handshake level
 * (3.5 yields it after that Finished).
 */
/* The level of the first byte waiting for crypto_send, or -1 when none waits. */
static int waiting_level(const struct tls35 *t)
{
    if (t->off == wr_len(&t->out))
        return -1;
    for (int l = 0; l < 4; l++)
        if (t->off < t->seg_end[l])
            return l;
    return -1;
}

static int write_due(const SSL *c, int level)
{
    if (c->hs != NULL && c->hs->out.len > 0 && (int)c->hs->out_level < level)
        return 0;
    int w = waiting_level(c->tls35);
    if (w >= 0 && w < level)
        return 0;
    if (!c->server && level == ssl_encryption_application && c->phase != PHASE_DONE)
        return 0;
    return 1;
}

/*
 * Yields what is due, in level order: write secrets (write_due), then read secrets up to the
 * engine's read level whose write secret of the same level is not still waiting (3.5 yields
 * write before read).
 */
static int yield_due(SSL *c)
{
    struct tls35 *t = c->tls35;
    for (int l = ssl_encryption_early_data; l <= ssl_encryption_application; l++)
        if (t->write[l].waiting && write_due(c, l) && !yield(c, l, DIRECTION_WRITE))
            return 0;
    for (int l = ssl_encryption_early_data; l <= ssl_encryption_application; l++)
        if (t->read[l].waiting && l <= (int)c->read_level && !t->write[l].waiting &&
            !yield(c, l, DIRECTION_READ))
            return 0;
    return 1;
}

static void keep(struct pending_secret *p, const uint8_t *secret, size_t len)
{
    secret_set(&p->s, secret, len);
    p->waiting = 1;
}

static int sink_set_secrets(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *read,
                            const uint8_t *write, size_t len)
{
    if (read != NULL)
        keep(&c->tls35->read[level], read, len);
    if (write != NULL)
        keep(&c->tls35->write[level], write, len);
    /* A server reads 0-RTT from the ClientHello on, before it answers (as 3.5 does). */
    if (level == ssl_encryption_early_data && read != NULL)
        return yield(c, level, DIRECTION_READ);
    /* A server has sent its ServerHello: its handshake keys are due now, before it builds
       EncryptedExtensions, as in 3.5 (ngtcp2 sets its transport parameters then). */
    return yield_due(c);
}

/* ---- output ---- */

/*
 * crypto_send may take less than offered. 3.5 (quic_tls.c, quic_write_records) then keeps the
 * rest and signals a retry: SSL_do_handshake returns -1 with SSL_ERROR_WANT_WRITE and the next
 * call offers the rest before anything else. So here: whatever is not taken waits in t->out,
 * and output that comes while something waits queues behind it.
 */
static int queue(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data, size_t len)
{
    struct tls35 *t = c->tls35;
    if (t->off == wr_len(&t->out)) { /* nothing waits: start afresh */
        t->off = 0;
        wr_reset(&t->out);
        memset(t->seg_end, 0, sizeof(t->seg_end));
    }
    wr_bytes(&t->out, data, len);
    if (!wr_ok(&t->out)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    for (int l = level; l < 4; l++) /* the levels above start where this one ends */
        t->seg_end[l] = wr_len(&t->out);
    return 1;
}

/* One crypto_send of up to len bytes: the count taken, or (size_t)-1 failed. */
static size_t send_once(SSL *c, const uint8_t *data, size_t len)
{
    size_t consumed = 0;
    if (!c->tls35->crypto_send(c, data, len, &consumed, c->tls35->arg)) {
        callback_failed(c, "crypto_send");
        return (size_t)-1;
    }
    if (consumed > len) {
        callback_failed(c, "crypto_send took more than offered");
        return (size_t)-1;
    }
    return consumed;
}

static int sink_add_handshake_data(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                                   size_t len)
{
    struct tls35 *t = c->tls35;
    if (t->off < wr_len(&t->out)) /* behind what waits */
        return queue(c, level, data, len);
    if (!yield_due(c))
        return 0;
    size_t n = send_once(c, data, len);
    if (n == (size_t)-1)
        return 0;
    return n == len || queue(c, level, data + n, len - n);
}

/* Offers what waits, run by run, each run's write key yielded first: 1 all taken, 0 not. */
static int hook_flush(SSL *c)
{
    struct tls35 *t = c->tls35;
    while (t->off < wr_len(&t->out)) {
        int l = waiting_level(t);
        if (!yield_due(c))
            return -1;
        size_t want = t->seg_end[l] - t->off;
        size_t n = send_once(c, t->out.buf + t->off, want);
        if (n == (size_t)-1)
            return -1;
        t->off += n;
        if (n < want)
            return 0;
    }
    return yield_due(c) ? 1 : -1;
}

static int hook_out_waiting(const SSL *c) { return c->tls35->off < wr_len(&c->tls35->out); }

/* The end of a flight: the output is handed over, what waited on it is due. */
static int sink_flush_flight(SSL *c) { return yield_due(c); }

static int sink_send_alert(SSL *c, enum ssl_encryption_level_t level, uint8_t alert)
{
    return c->tls35->alert(c, alert, c->tls35->arg);
}

static const SSL_QUIC_METHOD tls35_sink = {
    sink_set_secrets,
    sink_add_handshake_data,
    sink_flush_flight,
    sink_send_alert,
};

/* ---- input and transport parameters (the glue's hooks) ---- */

/*
 * One record from crypto_recv_rcd, at the read level the stack was last told of. It is copied
 * into the engine's input and released at once: 3.5 releases a record once it is processed,
 * and a copied record is (release_rcd's bytes_read is the record's whole size, as in 3.5).
 */
static int hook_pull(SSL *c)
{
    struct tls35 *t = c->tls35;
    if (!yield_due(c))
        return -1;
    const unsigned char *buf = NULL;
    size_t n = 0;
    if (!t->crypto_recv_rcd(c, &buf, &n, t->arg)) {
        callback_failed(c, "crypto_recv_rcd");
        return -1;
    }
    if (n == 0)
        return 0;
    if (buf == NULL) {
        callback_failed(c, "crypto_recv_rcd gave no buffer");
        return -1;
    }
    int ok = quic_buffer_input(c, c->read_level, buf, n);
    if (!t->crypto_release_rcd(c, n, t->arg)) {
        callback_failed(c, "crypto_release_rcd");
        return -1;
    }
    if (!ok) { /* the buffering raised why (e.g. excessive message size) */
        qtls_set_alert(c, SSL_AD_INTERNAL_ERROR);
        return -1;
    }
    return 1;
}

static int hook_peer_tp(SSL *c, const uint8_t *params, size_t len)
{
    return c->tls35->got_transport_params(c, params, len, c->tls35->arg);
}

static int hook_settle(SSL *c) { return yield_due(c); }

static const struct quic_hooks tls35_hooks = {hook_pull, hook_peer_tp, hook_settle, hook_flush,
                                              hook_out_waiting};

/* ---- the three functions ---- */

/* 3.5 reads the table in order and keeps the first entry of each id; all six are required. */
static int callbacks_from_dispatch(struct tls35 *t, const OSSL_DISPATCH *d)
{
    memset(t, 0, sizeof(*t));
    for (; d->function_id != 0; d++) {
        switch (d->function_id) {
        case OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND:
            if (t->crypto_send == NULL)
                t->crypto_send = OSSL_FUNC_SSL_QUIC_TLS_crypto_send(d);
            break;
        case OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD:
            if (t->crypto_recv_rcd == NULL)
                t->crypto_recv_rcd = OSSL_FUNC_SSL_QUIC_TLS_crypto_recv_rcd(d);
            break;
        case OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD:
            if (t->crypto_release_rcd == NULL)
                t->crypto_release_rcd = OSSL_FUNC_SSL_QUIC_TLS_crypto_release_rcd(d);
            break;
        case OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET:
            if (t->yield_secret == NULL)
                t->yield_secret = OSSL_FUNC_SSL_QUIC_TLS_yield_secret(d);
            break;
        case OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS:
            if (t->got_transport_params == NULL)
                t->got_transport_params = OSSL_FUNC_SSL_QUIC_TLS_got_transport_params(d);
            break;
        case OSSL_FUNC_SSL_QUIC_TLS_ALERT:
            if (t->alert == NULL)
                t->alert = OSSL_FUNC_SSL_QUIC_TLS_alert(d);
            break;
        default: /* unknown ids are skipped, as in 3.5 */
            break;
        }
    }
    if (t->crypto_send == NULL || t->crypto_recv_rcd == NULL || t->crypto_release_rcd == NULL ||
        t->yield_secret == NULL || t->got_transport_params == NULL || t->alert == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_MISSING_QUIC_TLS_FUNCTIONS);
        return 0;
    }
    return 1;
}

int SSL_set_quic_tls_cbs(SSL *s, const OSSL_DISPATCH *qtdis, void *arg)
{
    if (s == NULL || qtdis == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (s->quic_method != NULL && s->tls35 == NULL)
        return quic_api_mixed("SSL_set_quic_tls_cbs");
    if (s->phase != PHASE_BEFORE) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    struct tls35 parsed;
    if (!callbacks_from_dispatch(&parsed, qtdis))
        return 0;
    if (s->tls35 == NULL && (s->tls35 = OPENSSL_zalloc(sizeof(*s->tls35))) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    /* A second call replaces the callbacks (3.5 would keep the first call's, a slip there);
       before the handshake nothing waits to be sent. */
    wr_free(&s->tls35->out);
    *s->tls35 = parsed;
    s->tls35->arg = arg;
    s->quic_method = &tls35_sink;
    s->quic_hooks = &tls35_hooks;
    /* As 3.5: no middlebox compatibility mode, TLS 1.3 at least, and the one codepoint 0x39. */
    s->options &= ~SSL_OP_ENABLE_MIDDLEBOX_COMPAT;
    if (s->min_version < TLS1_3_VERSION)
        s->min_version = TLS1_3_VERSION;
    s->quic_tp_version = TLSEXT_TYPE_quic_transport_parameters;
    return 1;
}

/* Have our parameters gone out (3.5: its extension callback ran)? Then they cannot change. */
static int local_tp_sent(const SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        return 0;
    if (!s->server || s->phase != PHASE_HANDSHAKE)
        return 1;
    /* The server's output reaches the handshake level with EncryptedExtensions. */
    return s->hs != NULL && s->hs->out_level >= ssl_encryption_handshake;
}

int SSL_set_quic_tls_transport_params(SSL *s, const unsigned char *params, size_t params_len)
{
    if (s == NULL)
        return 0;
    if (s->tls35 == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    if (local_tp_sent(s))
        return 0; /* 3.5 refuses without an error on the queue */
    /* qtls copies: 3.5 keeps the pointer, so a caller's buffer may die early here too. */
    return quic_set_local_tp(s, params, params_len);
}

int SSL_set_quic_tls_early_data_enabled(SSL *s, int enabled)
{
    if (s == NULL)
        return 0;
    if (s->tls35 == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    if (s->phase != PHASE_BEFORE)
        return 0;
    if (!enabled) {
        s->early_data_enabled = 0;
        s->max_early_data = 0; /* 3.5: a server's tickets then allow no 0-RTT either */
        return 1;
    }
    if (s->server) {
        /* RFC 9001 §4.6.1: a QUIC ticket that allows 0-RTT says 0xffffffff. */
        s->max_early_data = 0xffffffff;
        s->early_data_enabled = 1;
        return 1;
    }
    /* A client needs a session that allows QUIC 0-RTT, set before (as in 3.5). */
    if (s->session == NULL || s->session->max_early_data != 0xffffffff)
        return 0;
    s->early_data_enabled = 1;
    return 1;
}

/* ---- SSL_read, SSL_free ---- */

int tls35_read(SSL *s)
{
    if (s->phase != PHASE_DONE) {
        int r = SSL_do_handshake(s); /* SSL_read drives the handshake, as in 3.5 */
        if (r <= 0)
            return r;
    }
    s->want_read = 0;
    if (!hs_process_post_handshake(s))
        return -1;
    /* No application data comes through TLS in QUIC: all processed, wait for more. */
    s->want_read = 1;
    return -1;
}

void tls35_free(SSL *s)
{
    if (s->tls35 == NULL)
        return;
    wr_free(&s->tls35->out);
    OPENSSL_clear_free(s->tls35, sizeof(*s->tls35)); /* wipes the waiting secrets */
    s->tls35 = NULL;
}
