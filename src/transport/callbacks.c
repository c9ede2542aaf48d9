/*
 * Callbacks and handshake facts (issue 9, item 6): the info callback, the message callback,
 * SSL_get_state, the Finished messages and the randoms, SSL_new_session_ticket; and the
 * TLS 1.2-era or TCP-only settings TLS 1.3 over QUIC makes meaningless (NPN; the post-handshake
 * authentication switch, which over TCP handshake/post_auth.c acts on).
 *
 * Every whole handshake message passes through cb_handshake_message, sent (msg_end) or received
 * (when consumed, i.e. accepted): the message callback sees it as OpenSSL shows it, content type
 * SSL3_RT_HANDSHAKE with the header, version TLS1_3_VERSION. There are no record headers (QUIC
 * has no records) and no alerts are ever read: a QUIC peer's alert arrives in CONNECTION_CLOSE,
 * which the QUIC stack handles.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "transport/transport.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Setting the callbacks                                               */
/* ------------------------------------------------------------------ */

void SSL_CTX_set_info_callback(SSL_CTX *ctx, void (*cb)(const SSL *ssl, int type, int val))
{
    ctx->info_callback = cb;
}

void (*SSL_CTX_get_info_callback(SSL_CTX *ctx))(const SSL *ssl, int type, int val)
{
    return ctx->info_callback;
}

void SSL_set_info_callback(SSL *ssl, void (*cb)(const SSL *ssl, int type, int val))
{
    struct ssl_cold *k = cold_for(ssl, cb != NULL); /* lost only if memory ran out */
    if (k != NULL)
        k->info_callback = cb;
}

/* As OpenSSL: the connection's own callback only (the context's is used, not reported). */
void (*SSL_get_info_callback(const SSL *ssl))(const SSL *ssl, int type, int val)
{
    return cold_peek(ssl)->info_callback;
}

void SSL_CTX_set_msg_callback(SSL_CTX *ctx, void (*cb)(int write_p, int version, int content_type,
                                                       const void *buf, size_t len, SSL *ssl,
                                                       void *arg))
{
    ctx->msg_callback = cb;
}

void SSL_set_msg_callback(SSL *ssl, void (*cb)(int write_p, int version, int content_type,
                                               const void *buf, size_t len, SSL *ssl, void *arg))
{
    struct ssl_cold *k = cold_for(ssl, cb != NULL);
    if (k != NULL)
        k->msg_callback = cb;
}

/* ------------------------------------------------------------------ */
/* Running them                                                        */
/* ------------------------------------------------------------------ */

void cb_info(const SSL *c, int where, int ret)
{
    void (*own)(const SSL *, int, int) = cold_peek(c)->info_callback;
    void (*cb)(const SSL *, int, int) = own != NULL ? own : c->ctx->info_callback;
    if (cb != NULL)
        cb(c, where, ret);
}

/* The OSSL_HANDSHAKE_STATE OpenSSL enters when it sends or receives a message of `type`. */
static int state_for(int server, int sent, uint8_t type)
{
    int written = server == sent; /* the server's own messages, or the client's own */
    switch (type) {
    case HT_CLIENT_HELLO:
        return server ? TLS_ST_SR_CLNT_HELLO : TLS_ST_CW_CLNT_HELLO;
    case HT_SERVER_HELLO:
        return server ? TLS_ST_SW_SRVR_HELLO : TLS_ST_CR_SRVR_HELLO;
    case HT_ENCRYPTED_EXTENSIONS:
        return server ? TLS_ST_SW_ENCRYPTED_EXTENSIONS : TLS_ST_CR_ENCRYPTED_EXTENSIONS;
    case HT_CERTIFICATE_REQUEST:
        return server ? TLS_ST_SW_CERT_REQ : TLS_ST_CR_CERT_REQ;
    case HT_CERTIFICATE:
    case HT_COMPRESSED_CERTIFICATE: /* RFC 8879: OpenSSL 3.2 reports it as Certificate */
        return written ? (server ? TLS_ST_SW_CERT : TLS_ST_CW_CERT)
                       : (server ? TLS_ST_SR_CERT : TLS_ST_CR_CERT);
    case HT_CERTIFICATE_VERIFY:
        return written ? (server ? TLS_ST_SW_CERT_VRFY : TLS_ST_CW_CERT_VRFY)
                       : (server ? TLS_ST_SR_CERT_VRFY : TLS_ST_CR_CERT_VRFY);
    case HT_FINISHED:
        return written ? (server ? TLS_ST_SW_FINISHED : TLS_ST_CW_FINISHED)
                       : (server ? TLS_ST_SR_FINISHED : TLS_ST_CR_FINISHED);
    case HT_NEW_SESSION_TICKET:
        return server ? TLS_ST_SW_SESSION_TICKET : TLS_ST_CR_SESSION_TICKET;
    default:
        return -1;
    }
}

/* §4.1.3: the random of a HelloRetryRequest is this constant, not the server's random. */
static int is_hrr_random(const uint8_t *r)
{
    static const uint8_t hrr[8] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11};
    return memcmp(r, hrr, sizeof(hrr)) == 0;
}

/* Records what the getters report: ServerHello.random (after the 4-byte header and 2-byte
 * legacy_version) and the Finished verify_data (the whole body). */
static void record_facts(SSL *c, int sent, const uint8_t *msg, size_t len)
{
    if (msg[0] == HT_SERVER_HELLO && len >= 4 + 2 + 32 && !is_hrr_random(msg + 6)) {
        memcpy(c->server_random, msg + 6, 32);
        c->have_server_random = 1;
    } else if (msg[0] == HT_FINISHED && len - 4 <= QTLS_MAX_HASH_LEN) {
        memcpy(sent ? c->finished : c->peer_finished, msg + 4, len - 4);
        *(sent ? &c->finished_len : &c->peer_finished_len) = (uint8_t)(len - 4);
    }
}

void cb_message(SSL *c, int sent, const uint8_t *msg, size_t len)
{
    const struct ssl_cold *k = cold_peek(c);
    if (k->msg_callback != NULL)
        k->msg_callback(sent, TLS1_3_VERSION, SSL3_RT_HANDSHAKE, msg, len, c, k->msg_callback_arg);
}

void cb_handshake_message(SSL *c, int sent, const uint8_t *msg, size_t len)
{
    if (len < 4)
        return;
    record_facts(c, sent, msg, len);
    /* Over TCP the record layer reports a sent message after its record's header, as OpenSSL. */
    if (!(sent && c->tcp))
        cb_message(c, sent, msg, len);
    int st = state_for(c->server, sent, msg[0]);
    if (st >= 0 && st != c->hand_state) {
        c->hand_state = st;
        if (c->phase == PHASE_HANDSHAKE) /* OpenSSL's LOOP: a state change in the handshake */
            cb_info(c, c->server ? SSL_CB_ACCEPT_LOOP : SSL_CB_CONNECT_LOOP, 1);
    }
}

void cb_record(SSL *c, int sent, int version, int content_type, const uint8_t *p, size_t len)
{
    const struct ssl_cold *k = cold_peek(c);
    if (k->msg_callback != NULL)
        k->msg_callback(sent, version, content_type, p, len, c, k->msg_callback_arg);
}

/* qtls sends only fatal alerts (RFC 8446 §6.2); the info value is level << 8 | description. */
void cb_alert_sent(SSL *c, uint8_t alert)
{
    const uint8_t rec[2] = {SSL3_AL_FATAL, alert};
    const struct ssl_cold *k = cold_peek(c);
    if (k->msg_callback != NULL)
        k->msg_callback(1, TLS1_3_VERSION, SSL3_RT_ALERT, rec, sizeof(rec), c, k->msg_callback_arg);
    cb_info(c, SSL_CB_WRITE_ALERT, (SSL3_AL_FATAL << 8) | alert);
}

/* ------------------------------------------------------------------ */
/* Handshake facts                                                     */
/* ------------------------------------------------------------------ */

/* TLS_ST_BEFORE until the first message, TLS_ST_OK once the handshake is done. */
OSSL_HANDSHAKE_STATE SSL_get_state(const SSL *ssl)
{
    if (ssl->phase == PHASE_DONE)
        return TLS_ST_OK;
    if (ssl->phase == PHASE_BEFORE)
        return TLS_ST_BEFORE;
    return (OSSL_HANDSHAKE_STATE)ssl->hand_state;
}

/* SSL_get_finished(3): copies up to count bytes, returns the full length. */
static size_t copy_out(void *buf, size_t count, const uint8_t *p, size_t n)
{
    if (buf != NULL)
        memcpy(buf, p, count < n ? count : n);
    return n;
}

size_t SSL_get_finished(const SSL *s, void *buf, size_t count)
{
    return copy_out(buf, count, s->finished, s->finished_len);
}

size_t SSL_get_peer_finished(const SSL *s, void *buf, size_t count)
{
    return copy_out(buf, count, s->peer_finished, s->peer_finished_len);
}

/* SSL_get_client_random(3)'s rules: outlen 0 asks for the size; zeros before the handshake. */
static size_t random_out(const uint8_t *random, size_t len, unsigned char *out, size_t outlen)
{
    if (outlen == 0)
        return len;
    if (outlen > len)
        outlen = len;
    memcpy(out, random, outlen);
    return outlen;
}

size_t SSL_get_server_random(const SSL *ssl, unsigned char *out, size_t outlen)
{
    return random_out(ssl->server_random, sizeof(ssl->server_random), out, outlen);
}

size_t SSL_get_client_random(const SSL *ssl, unsigned char *out, size_t outlen)
{
    return random_out(ssl->client_random, sizeof(ssl->client_random), out, outlen);
}

/* ------------------------------------------------------------------ */
/* SSL_new_session_ticket                                              */
/* ------------------------------------------------------------------ */

/*
 * SSL_CTX_set_num_tickets(3): one more ticket, sent with the others at the end of the handshake,
 * or, once it is done, at the next SSL_do_handshake. A server keeps its resumption secret until
 * SSL_free for this (wiped there), as OpenSSL does.
 */
int SSL_new_session_ticket(SSL *s)
{
    if (!s->server || s->phase == PHASE_FAILED || s->quic_method == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    s->extra_tickets++;
    return 1;
}

/* ------------------------------------------------------------------ */
/* What TLS 1.3 over QUIC does not have                                */
/* ------------------------------------------------------------------ */

/*
 * NPN is a TLS 1.2 extension that TLS 1.3 does not define (ALPN replaced it; QUIC requires ALPN,
 * RFC 9001 §8.1): the callbacks are accepted and never called; nothing is ever negotiated.
 */
void SSL_CTX_set_next_protos_advertised_cb(SSL_CTX *s, SSL_CTX_npn_advertised_cb_func cb,
                                           void *arg)
{
}

void SSL_CTX_set_next_proto_select_cb(SSL_CTX *s, SSL_CTX_npn_select_cb_func cb, void *arg) {}

void SSL_get0_next_proto_negotiated(const SSL *s, const unsigned char **data, unsigned *len)
{
    *data = NULL;
    *len = 0;
}

/*
 * Stored for the ClientHello: over TCP a client so set offers post_handshake_auth (§4.2.6) and
 * answers a server's request after the handshake (handshake/post_auth.c, which also has
 * SSL_verify_client_post_handshake); in QUIC it has no effect (RFC 9001 §4.4).
 */
void SSL_CTX_set_post_handshake_auth(SSL_CTX *ctx, int val) { ctx->post_handshake_auth = val; }

void SSL_set_post_handshake_auth(SSL *s, int val)
{
    struct ssl_cold *k = cold_for(s, val != 0);
    if (k != NULL)
        k->post_handshake_auth = val;
}

