/*
 * NewSessionTicket (RFC 8446 §4.6.1), both sides: the server seals the connection's session into
 * tickets after the client's Finished (and on SSL_new_session_ticket), the client turns each one
 * it receives into a session for the application. Its one extension, early_data, is a row of
 * the extension table (resumption.c).
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "handshake/handshake.h"

#include <string.h>

#define QTLS_MAX_TICKET_LIFETIME 604800u /* seven days, RFC 8446 §4.6.1 */
#define QTLS_MAX_SEALED_SESSION 49152    /* a sealed ticket must fit opaque ticket<1..2^16-1> */

/* The ticket's PSK: HKDF-Expand-Label(resumption_master_secret, "resumption", nonce, len). */
static int ticket_psk(SSL *c, enum qtls_hash h, const uint8_t *nonce, size_t nonce_len,
                      uint8_t *out, size_t len)
{
    struct secret res;
    secret_unkeep(&res, &c->resumption_secret);
    int ok = ks_expand_label(h, &res, "resumption", nonce, nonce_len, out, len);
    secret_wipe(&res);
    return ok;
}

/* ---- client ---- */

/* Post-handshake: a NewSessionTicket becomes a session for the application. */
int nst_client_process(SSL *c, struct rd body)
{
    uint32_t lifetime, age_add;
    struct rd nonce, ticket, exts;
    if (!rd_u32(&body, &lifetime) || !rd_u32(&body, &age_add) || !rd_vec8(&body, &nonce) ||
        !rd_vec16(&body, &ticket) || !rd_vec16(&body, &exts) || !rd_empty(&body) ||
        rd_empty(&ticket))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!ext_parse(c, MSG_NST, exts)) /* the early_data row: c->ticket_max_early_data */
        return 0;
    if (lifetime == 0)
        return 1; /* §4.6.1: a zero lifetime means do not use */
    if (lifetime > QTLS_MAX_TICKET_LIFETIME)
        lifetime = QTLS_MAX_TICKET_LIFETIME;
    SSL_SESSION *s = session_new_from_conn(c);
    if (s == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    enum qtls_hash h = c->cipher->hash;
    size_t hl = crypto_hash_len(h);
    s->ticket = OPENSSL_memdup(ticket.p, ticket.n);
    s->ticket_len = ticket.n;
    s->age_add = age_add;
    s->arrival_us = clock_now_us();
    s->time = s->arrival_us / 1000000;
    s->timeout = lifetime;
    s->max_early_data = c->ticket_max_early_data;
    s->psk.len = hl;
    if (s->ticket == NULL ||
        !ticket_psk(c, h, nonce.p, nonce.n, s->psk.b, hl)) {
        SSL_SESSION_free(s);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    }
    SSL_SESSION_free(c->session);
    c->session = s;
    SSL_CTX *ctx = c->ctx;
    if ((ctx->session_cache_mode & SSL_SESS_CACHE_CLIENT) && ctx->new_session_cb != NULL) {
        SSL_SESSION_up_ref(s);
        if (!ctx->new_session_cb(c, s)) /* 1: the callee took our reference */
            SSL_SESSION_free(s);
    }
    return 1;
}

/* ---- server ---- */

/*
 * struct { uint32 ticket_lifetime; uint32 ticket_age_add; opaque ticket_nonce<0..255>;
 *          opaque ticket<1..2^16-1>; Extension extensions<0..2^16-2>; } NewSessionTicket;
 */
static int write_ticket(SSL *c, uint64_t counter)
{
    SSL_CTX *ctx = c->ctx;
    struct wr *w = &c->hs->out, plain;
    enum qtls_hash h = c->cipher->hash;
    uint8_t nonce[8];
    SSL_SESSION *s = session_new_from_conn(c);
    if (s == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    for (int i = 0; i < 8; i++)
        nonce[i] = (uint8_t)(counter >> (56 - 8 * i));
    s->psk.len = crypto_hash_len(h);
    /* QUIC's tickets say 0xffffffff (RFC 9001 §4.6.1); over TCP the configured limit. */
    s->max_early_data = c->tcp || c->max_early_data == 0 ? c->max_early_data
                                                         : QTLS_QUIC_MAX_EARLY_DATA;
    if (c->early_data_context_len > 0) {
        s->early_context = OPENSSL_memdup(c->early_data_context, c->early_data_context_len);
        s->early_context_len = s->early_context != NULL ? c->early_data_context_len : 0;
    }
    /* The connection's session is the one being ticketed: the generate callback sees it. */
    SSL_SESSION_free(c->session);
    c->session = s;
    if (!ticket_psk(c, h, nonce, sizeof(nonce), s->psk.b, s->psk.len) ||
        !crypto_random((uint8_t *)&s->age_add, sizeof(s->age_add)))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    if (ctx->ticket_gen_cb != NULL && !ctx->ticket_gen_cb(c, ctx->ticket_cb_arg))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_CALLBACK_FAILED);
    if (s->timeout > QTLS_MAX_TICKET_LIFETIME) /* also after a generate callback changed it */
        s->timeout = QTLS_MAX_TICKET_LIFETIME;
    wr_init(&plain);
    session_encode(s, 0, &plain);
    if (wr_ok(&plain) && plain.len > QTLS_MAX_SEALED_SESSION) {
        wr_free(&plain); /* huge appdata: no ticket rather than a failed handshake */
        return 1;
    }
    size_t at = msg_begin(c, ssl_encryption_application, HT_NEW_SESSION_TICKET);
    wr_u32(w, (uint32_t)s->timeout);
    wr_u32(w, s->age_add);
    size_t nv = wr_open_vec(w, 1);
    wr_bytes(w, nonce, sizeof(nonce));
    wr_close_vec(w, nv, 1);
    size_t tv = wr_open_vec(w, 2);
    unsigned long last_error = ERR_peek_last_error();
    int sealed = wr_ok(&plain) && ticket_seal(c, plain.buf, plain.len, w);
    wr_free(&plain);
    if (!sealed && ERR_peek_last_error() == last_error) {
        /* The key callback declined to issue a ticket: send none, as OpenSSL does. */
        wr_truncate(w, at);
        return 1;
    }
    if (!sealed)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    wr_close_vec(w, tv, 2);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write(c, MSG_NST, w)) /* the early_data row, then GREASE if enabled */
        return 0;
    wr_close_vec(w, exts, 2);
    return msg_end(c, at);
}

int nst_server_write_n_tickets(SSL *c, size_t n)
{
    /* Tickets only for clients that can use them (§4.2.9), and only if not switched off. */
    if (!c->tickets_allowed || (c->options & SSL_OP_NO_TICKET))
        return 1;
    /* Never a PSK from an absent secret (SSL_OP_NO_TICKET cleared after the handshake). */
    if (c->resumption_secret.len == 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (!write_ticket(c, c->tickets_sent++)) /* the counter keeps nonces unique */
            return 0;
    return 1;
}

int nst_server_write_tickets(SSL *c)
{
    /* SSL_CTX_set_num_tickets(3): after a resumption never more than one, as OpenSSL; each
       SSL_new_session_ticket adds one. */
    size_t n = (c->hs->resumed && c->num_tickets > 1 ? 1 : c->num_tickets) + c->extra_tickets;
    c->extra_tickets = 0;
    c->tickets_allowed = c->hs->psk_dhe_ke;
    return nst_server_write_n_tickets(c, n);
}
