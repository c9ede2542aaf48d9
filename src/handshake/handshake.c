/*
 * The handshake driver: runs the client or server state functions, hands
 * flights to the QUIC stack, sends the one fatal alert on failure, and reads
 * post-handshake messages. The key schedule the states call is secrets.c;
 * post-handshake authentication (TCP) is post_auth.c's, which the driver
 * tells of the handshake's progress and hands the messages it reads.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#include <string.h>

int hs_start(SSL *c)
{
    if (!crypto_init())
        return 0;
    /* QUIC negotiates TLS 1.3 only (RFC 9001 §4.2): bounds or options without it cannot work. */
    if ((c->max_version != 0 && c->max_version < TLS1_3_VERSION) ||
        c->min_version > TLS1_3_VERSION || (c->options & SSL_OP_NO_TLSv1_3) != 0) {
        qtls_fail(c, SSL_AD_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE);
        ERR_add_error_data(1, "QUIC needs TLS 1.3, which the protocol bounds or "
                              "SSL_OP_NO_TLSv1_3 exclude");
        return 0;
    }
    c->hs = OPENSSL_zalloc(sizeof(*c->hs));
    if (c->hs == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    transcript_init(&c->hs->transcript);
    c->phase = PHASE_HANDSHAKE;
    return 1;
}

static int fail_handshake(SSL *c)
{
    if (c->syscall_error) { /* the transport failed (SSL_ERROR_SYSCALL): no alert can go out */
        c->phase = PHASE_FAILED;
        hs_free(c);
        return -1;
    }
    if (c->alert == 0)
        qtls_set_alert(c, SSL_AD_INTERNAL_ERROR);
    if (ERR_peek_error() == 0)
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
    quic_send_pending_alert(c);
    c->phase = PHASE_FAILED;
    hs_free(c);
    return -1;
}

static int drive_handshake(SSL *s);

/* Server: the tickets SSL_new_session_ticket queued after the handshake, as one flight. */
static int send_queued_tickets(SSL *c)
{
    if (!c->server || c->extra_tickets == 0)
        return 1;
    size_t n = c->extra_tickets;
    c->extra_tickets = 0;
    c->hs = OPENSSL_zalloc(sizeof(*c->hs)); /* the writer of msg_begin / msg_end */
    if (c->hs == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    transcript_init(&c->hs->transcript);
    int ok = nst_server_write_n_tickets(c, n) && msg_end_flight(c);
    hs_free(c);
    if (!ok)
        quic_send_pending_alert(c);
    return ok;
}

/* Is output still waiting for the stack (quic_hooks)? Then the caller hears want-write. */
static int out_waiting(SSL *s)
{
    if (s->quic_hooks == NULL || !s->quic_hooks->out_waiting(s))
        return 0;
    s->want_write = 1;
    return 1;
}

static int handshake_done(SSL *s)
{
    if (!pha_handshake_done(s)) /* the transcript post-handshake authentication starts from */
        return fail_handshake(s);
    s->done_waits = 0;
    s->phase = PHASE_DONE;
    hs_free(s);
    quic_handshake_done(s);
    /* The ALPN offer was for ClientHello and the checks of the answer and of 0-RTT; no
     * OpenSSL 3.0 getter returns it and a connection has one handshake. */
    OPENSSL_free(s->alpn);
    s->alpn = NULL;
    s->alpn_len = 0;
    cb_info(s, SSL_CB_HANDSHAKE_DONE, 1);
    return 1;
}

/* Offers the stack what it did not take last time: 1 go on, 0 still waits, -1 failed. */
static int flush_waiting(SSL *s)
{
    if (s->quic_hooks == NULL)
        return 1;
    int r = s->quic_hooks->flush(s);
    if (r == 0)
        s->want_write = 1;
    return r;
}

int SSL_do_handshake(SSL *s)
{
    s->want_read = 0;
    s->want_write = 0;
    s->want_client_hello_cb = 0;
    s->want_x509_lookup = 0;
    s->syscall_error = 0;
    /* With BIOs set and no QUIC method the caller wants TLS over TCP (transport/record.c). */
    if (s->quic_method == NULL && !record_attach(s))
        return -1;
    if (s->phase == PHASE_DONE) { /* after the handshake: tickets SSL_new_session_ticket queued */
        int f = flush_waiting(s);
        if (f <= 0)
            return -1;
        if (!send_queued_tickets(s))
            return -1;
        if (!pha_do_handshake(s)) /* a CertificateRequest SSL_verify_client_post_handshake asked */
            return -1;
        if (s->tcp && record_send_due(s) < 0) /* a KeyUpdate SSL_key_update asked for */
            return -1;
        return out_waiting(s) ? -1 : 1;
    }
    /* A stale error from the caller would turn want-read into SSL_ERROR_SSL (as in libssl). */
    ERR_clear_error();
    if (s->phase == PHASE_FAILED) {
        ERR_raise(ERR_LIB_SSL, QTLS_R_HANDSHAKE_FAILED_BEFORE);
        return -1;
    }
    int ret;
    int f = s->phase == PHASE_HANDSHAKE ? flush_waiting(s) : 1;
    if (f < 0)
        ret = fail_handshake(s);
    else if (f == 0)
        ret = -1;
    else if (s->done_waits)
        ret = handshake_done(s);
    else
        ret = drive_handshake(s);
    /* The 3.5 API's secrets that became due in this call (quic_tls35.c). */
    if (s->phase != PHASE_FAILED && s->quic_hooks != NULL && !s->quic_hooks->settle(s))
        ret = fail_handshake(s);
    quic_release_consumed(s);
    /* OpenSSL's state machine reports every exit, want-read included. */
    cb_info(s, s->server ? SSL_CB_ACCEPT_EXIT : SSL_CB_CONNECT_EXIT, ret);
    return ret;
}

static int drive_handshake(SSL *s)
{
    if (s->phase == PHASE_BEFORE) {
        cb_info(s, SSL_CB_HANDSHAKE_START, 1);
        if (!hs_start(s))
            return fail_handshake(s);
    }
    for (;;) {
        enum hs_wait w = s->server ? server_step(s) : client_step(s);
        /* A stack that took less than offered: stop here until it takes the rest (3.5). */
        switch (w) {
        case HS_CONTINUE:
            if (out_waiting(s))
                return -1;
            continue;
        case HS_FLUSH:
            if (!msg_end_flight(s))
                return fail_handshake(s);
            if (out_waiting(s))
                return -1;
            if (s->stop_after_flight) { /* the client writes early data now (api/tcp.c) */
                s->stop_after_flight = 0;
                return -1;
            }
            continue;
        case HS_WANT_MESSAGE:
            if (!msg_end_flight(s))
                return fail_handshake(s);
            if (out_waiting(s))
                return -1;
            s->want_read = 1;
            return -1;
        case HS_WANT_CLIENT_HELLO_CB:
            s->want_client_hello_cb = 1;
            return -1;
        case HS_WANT_X509_LOOKUP: /* the certificate callback asked to be called again */
            s->want_x509_lookup = 1;
            return -1;
        case HS_DONE:
            if (!msg_end_flight(s))
                return fail_handshake(s);
            if (out_waiting(s)) {
                s->done_waits = 1;
                return -1;
            }
            return handshake_done(s);
        case HS_ERROR:
        default:
            return fail_handshake(s);
        }
    }
}

int SSL_connect(SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        s->server = 0;
    return SSL_do_handshake(s);
}

int SSL_accept(SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        s->server = 1;
    return SSL_do_handshake(s);
}

/* ---- after the handshake ---- */

/* One post-handshake message; the caller has read it. */
static int post_handshake_message(SSL *c, uint8_t type, struct rd body)
{
    if (type == HT_NEW_SESSION_TICKET && !c->server)
        return nst_client_process(c, body);
    /* RFC 9001 §6: QUIC updates its keys itself; over TCP the record layer does (§4.6.3). */
    if (type == HT_KEY_UPDATE && !c->tcp)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED);
    if (type == HT_KEY_UPDATE) /* post_auth.c follows the client's secret (§4.4: _N) */
        return record_peer_key_update(c, body);
    return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE);
}

int SSL_process_quic_post_handshake(SSL *ssl)
{
    if (ssl->quic_method == NULL || ssl->phase != PHASE_DONE) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    if (ssl->tls35 != NULL) /* its stack calls SSL_read instead */
        return quic_api_mixed("SSL_process_quic_post_handshake");
    return hs_process_post_handshake(ssl);
}

/* The next whole post-handshake message, if one is buffered (enum post_step). */
static int post_handshake_step(SSL *ssl)
{
    struct rd m, body;
    uint8_t type;
    if (quic_peek_message(ssl, &m) != 1)
        return STEP_NONE;
    struct rd w = m;
    if (!rd_u8(&w, &type) || !rd_vec24(&w, &body))
        return STEP_FAILED;
    /* Post-handshake authentication's messages (§4.6.2): it reports and lets go of each. */
    if (pha_takes(ssl, type))
        return pha_read(ssl, type, body, &m);
    if (!post_handshake_message(ssl, type, body))
        return STEP_FAILED;
    cb_handshake_message(ssl, 0, m.p, m.n);
    quic_consume_message(ssl, m.n);
    /* §5.1: what follows a KeyUpdate in its record was under the old key */
    if (type == HT_KEY_UPDATE && quic_input_pending(ssl, ssl->read_level))
        return qtls_fail(ssl, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_NOT_ON_RECORD_BOUNDARY) - 1;
    return STEP_DONE;
}

int hs_process_post_handshake(SSL *ssl) { return hs_process_post_handshake_n(ssl, SIZE_MAX) >= 0; }

int hs_process_post_handshake_n(SSL *ssl, size_t max)
{
    /* Every whole message queued, not just one (quictls/openssl#7), unless max says fewer. */
    int n = 0, r = STEP_NONE;
    while ((size_t)n < max && (r = post_handshake_step(ssl)) == STEP_DONE)
        n++;
    quic_release_consumed(ssl);
    if (ssl->alert != 0) {
        quic_send_pending_alert(ssl);
        ssl->phase = PHASE_FAILED;
        return -1;
    }
    /* A flight of ours waits for the wbio (want_write), or the wbio failed (syscall_error). */
    if (r == STEP_WAIT || r == STEP_FAILED)
        return -1;
    return n;
}
