/*
 * Resumption with tickets and 0-RTT, both sides: the PSK offer and its
 * binder (RFC 8446 §4.2.11), the server's choice and the QUIC rules for
 * accepting early data (RFC 9001 §4.6.1, RFC 8446 §4.2.10), and
 * NewSessionTicket (§4.6.1) sent by the server and taken by the client.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "policy/policy.h"
#include "handshake/handshake.h"

#include <string.h>

#define QTLS_TICKET_AGE_SKEW_MS 10000 /* tolerated ticket-age disagreement */
#define QTLS_MAX_OFFERED_TICKET 32768 /* leaves the ClientHello well under 2^16 */

/*
 * RFC 8446 §4.2.11.1: the time since the ticket arrived, in ms. Never
 * overstate it: servers (GnuTLS) refuse 0-RTT when the client's age exceeds
 * their own. With the arrival in µs (tickets received in this process) the
 * elapsed time is truncated once; from the whole-second session time it is
 * rounded down by a second.
 */
static uint64_t ticket_age_ms(const SSL_SESSION *s)
{
    uint64_t now = clock_now_us();
    if (s->arrival_us != 0 && s->arrival_us / 1000000 == s->time && now >= s->arrival_us)
        return (now - s->arrival_us) / 1000;
    uint64_t secs = clock_now_seconds() - s->time;
    return secs > 0 ? (secs - 1) * 1000 : 0;
}

static int session_live(const SSL_SESSION *s, uint64_t now)
{
    return now >= s->time && now - s->time < s->timeout;
}

static int alpn_offered(const SSL *c, const uint8_t *name, size_t len)
{
    struct rd offer, cand;
    rd_init(&offer, c->alpn, c->alpn_len);
    while (rd_vec8(&offer, &cand))
        if (cand.n == len && memcmp(cand.p, name, len) == 0)
            return 1;
    return 0;
}

/*
 * A resumed connection's peer is the one authenticated in the original
 * handshake: the session's leaf, decoded only if asked for (session.c).
 */
static int adopt_session_peer(SSL *c, SSL_SESSION *s)
{
    c->verify_result = s->verify_result;
    cert_verified_detach(c); /* peer_chain goes: a verified chain made of it stands alone */
    return sct_adopt_session(c, s) && session_conn_defer_peer(c, s);
}

/* ---- client ---- */

int psk_client_prepare(SSL *c)
{
    struct hs *hs = c->hs;
    SSL_SESSION *s = c->session;
    hs->psk_offered = 0;
    hs->early_data_offered = 0;
    secret_wipe(&hs->early_secret);
    /* The first ClientHello decides the reason; after a HelloRetryRequest it stays. */
    int first = !hs->hrr_done;
    if (first)
        c->early_data_reason =
            c->early_data_enabled ? ssl_early_data_no_session_offered : ssl_early_data_disabled;
    if (s == NULL || !SSL_SESSION_is_resumable(s) || !session_live(s, clock_now_seconds()))
        return 1;
    /* A ticket too large for a ClientHello is not offered rather than failing every try. */
    if (s->ticket_len > QTLS_MAX_OFFERED_TICKET)
        return 1;
    /* The PSK binds its hash: offer it only with a suite of that hash (§4.2.11). */
    int hash_ok = 0, suite_ok = 0;
    for (size_t i = 0; i < c->suites.n; i++) {
        hash_ok |= suite_at(&c->suites, i)->hash == s->cipher->hash;
        suite_ok |= suite_at(&c->suites, i) == s->cipher;
    }
    if (!hash_ok || (hs->hrr_cipher != NULL && hs->hrr_cipher->hash != s->cipher->hash))
        return 1;
    if (!sec_set_psk(c, s->cipher->hash, &s->psk))
        return 0;
    hs->psk_offered = 1;
    /* 0-RTT only in the first ClientHello, for a ticket that allows it (QUIC's say 0xffffffff,
       RFC 9001 §4.6.1), with its suite and ALPN (QUIC requires one; over TCP none is none). */
    int ticket_ok = c->tcp ? s->max_early_data > 0 : s->max_early_data == QTLS_QUIC_MAX_EARLY_DATA;
    int alpn_ok = s->alpn_len > 0 ? alpn_offered(c, s->alpn, s->alpn_len) : c->tcp;
    hs->early_data_offered =
        !hs->hrr_done && c->early_data_enabled && ticket_ok && suite_ok && alpn_ok;
    /* BoringSSL's should_offer_early_data order; offered: the server's answer decides. */
    if (first && c->early_data_enabled)
        c->early_data_reason = hs->early_data_offered            ? ssl_early_data_unknown
                               : !ticket_ok || !suite_ok || (!alpn_ok && s->alpn_len == 0)
                                   ? ssl_early_data_unsupported_for_session
                                   : ssl_early_data_alpn_mismatch;
    return 1;
}

/*
 * SSL_CTX_set_reverify_on_resume: the session's peer certificate goes through verification
 * again, as a chain of the leaf the session kept. Returns 1 to go on, 0 with the alert and
 * SSL_R_CERTIFICATE_VERIFY_FAILED set (only under SSL_VERIFY_PEER, as a first verification).
 */
static int reverify_session_peer(SSL *c)
{
    if (!c->ctx->reverify_on_resume || c->session == NULL || !session_has_peer(c->session))
        return 1;
    X509 *leaf = session_peer(c->session);
    if (leaf == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, QTLS_R_BAD_SESSION);
    STACK_OF(X509) *chain = sk_X509_new_null();
    if (chain == NULL || !X509_up_ref(leaf)) {
        sk_X509_free(chain);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    }
    if (!sk_X509_push(chain, leaf)) {
        X509_free(leaf);
        sk_X509_free(chain);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    }
    int ok = cert_verify_peer_chain(c, chain);
    sk_X509_pop_free(chain, X509_free);
    return ok;
}

/* A resumed handshake whose 0-RTT was not accepted: verify again now (BoringSSL's place). */
int psk_client_reverify_after_encrypted_extensions(SSL *c)
{
    if (!c->hs->resumed || c->early_data_status == SSL_EARLY_DATA_ACCEPTED)
        return 1;
    return reverify_session_peer(c);
}

void SSL_CTX_set_reverify_on_resume(SSL_CTX *ctx, int enabled)
{
    ctx->reverify_on_resume = enabled != 0;
}

enum ssl_early_data_reason_t SSL_get_early_data_reason(const SSL *ssl)
{
    return (enum ssl_early_data_reason_t)ssl->early_data_reason;
}

const char *SSL_early_data_reason_string(enum ssl_early_data_reason_t reason)
{
    static const char *const names[] = {
        "unknown", "disabled", "accept", "protocol_version", "peer_declined",
        "no_session_offered", "session_not_resumed", "unsupported_for_session",
        "hello_retry_request", "alpn_mismatch", "channel_id", NULL /* 11: reserved */,
        "ticket_age_skew", "quic_parameter_mismatch", "alps_mismatch",
    };
    if ((int)reason < 0 || (size_t)reason >= sizeof(names) / sizeof(names[0]))
        return NULL;
    return names[reason];
}

/* The early_data row, ClientHello: empty, when 0-RTT is offered (psk_client_prepare). */
int psk_write_early_data_offer(SSL *c, struct wr *w)
{
    return c->hs->psk_offered && c->hs->early_data_offered ? 1 : EXT_NOT_SENT;
}

/*
 * The pre_shared_key row, ClientHello, the last extension (§4.2.11):
 * struct { opaque identity<1..2^16-1>; uint32 obfuscated_ticket_age; } PskIdentity;
 * struct { PskIdentity identities<7..2^16-1>; PskBinderEntry binders<33..2^16-1>; }
 */
int psk_write_offer(SSL *c, struct wr *w)
{
    struct hs *hs = c->hs;
    SSL_SESSION *s = c->session;
    if (!hs->psk_offered)
        return EXT_NOT_SENT;
    uint64_t age_ms = ticket_age_ms(s);
    size_t ids = wr_open_vec(w, 2);
    size_t id = wr_open_vec(w, 2);
    wr_bytes(w, s->ticket, s->ticket_len);
    wr_close_vec(w, id, 2);
    wr_u32(w, (uint32_t)(age_ms + s->age_add));
    wr_close_vec(w, ids, 2);
    /* The binder covers everything before the binders list (§4.2.11.2): remember both. */
    size_t binders = wr_open_vec(w, 2);
    size_t binder = wr_open_vec(w, 1);
    hs->psk_binders_at = binders;
    hs->psk_binder_at = wr_len(w);
    uint8_t *zeros = wr_reserve(w, crypto_hash_len(s->cipher->hash));
    if (zeros != NULL)
        memset(zeros, 0, crypto_hash_len(s->cipher->hash));
    wr_close_vec(w, binder, 1);
    wr_close_vec(w, binders, 2);
    return 1;
}

/*
 * The binder covers the ClientHello up to the binders list, header included (§4.2.11.2): the
 * partial message runs from `at` (msg_begin's) to where psk_write_offer opened the list, and
 * the binder goes where it reserved the zeros.
 */
int psk_fill_binder(SSL *c, size_t at)
{
    struct hs *hs = c->hs;
    if (!hs->psk_offered)
        return 1;
    enum qtls_hash h = c->session->cipher->hash;
    size_t partial_len = hs->psk_binders_at - at;
    const uint8_t *partial = wr_at(&hs->out, at, partial_len);
    uint8_t *binder = wr_at(&hs->out, hs->psk_binder_at, crypto_hash_len(h));
    if (partial == NULL || binder == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    return sec_psk_binder(c, h, partial, partial_len, binder);
}

int psk_client_after_hello(SSL *c)
{
    if (!c->hs->early_data_offered)
        return 1;
    /* Re-verification before any 0-RTT key exists (BoringSSL: early_reverify_server_certificate). */
    if (!reverify_session_peer(c))
        return 0;
    /* The resumed suite is the current cipher while the 0-RTT key is installed. */
    c->cipher = c->session->cipher;
    c->early_data_status = SSL_EARLY_DATA_REJECTED; /* until EncryptedExtensions says so */
    /* The ClientHello is in the transcript already; its 0-RTT key becomes the write level. */
    return sec_derive_early(c, NULL, 0);
}

/* The pre_shared_key row read selected_identity into hs->hello. */
int psk_client_server_hello(SSL *c)
{
    struct hs *hs = c->hs;
    if (!hello_has(c, EXT_PRE_SHARED_KEY)) {
        secret_wipe(&hs->early_secret); /* a full handshake: the early secret is from zeros */
        return 1;
    }
    if (hs->hello.psk_identity != 0)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_PSK_IDENTITY);
    if (c->cipher->hash != c->session->cipher->hash)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_PSK);
    hs->resumed = 1;
    c->session_reused = 1;
    return adopt_session_peer(c, c->session);
}

/* The early_data row, EncryptedExtensions: the server's answer to our 0-RTT. */
int psk_take_early_data_answer(SSL *c, const struct rd *body)
{
    if (body == NULL) {
        /* Not after a HelloRetryRequest, whose reason is already there. */
        if (c->hs->early_data_offered)
            c->early_data_reason = c->hs->resumed ? ssl_early_data_peer_declined
                                                  : ssl_early_data_session_not_resumed;
        c->hs->early_data_answered = 1;
        return 1;
    }
    if (!rd_empty(body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* §4.2.10: accepting 0-RTT means the first PSK and its suite. */
    if (!c->hs->resumed || c->cipher != c->session->cipher)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_EARLY_DATA);
    /* ... and its ALPN: the early data was written for that protocol (as BoringSSL checks). */
    const SSL_SESSION *s = c->session;
    if (sbuf_len(&c->alpn_selected) != s->alpn_len ||
        memcmp(sbuf_data(&c->alpn_selected), s->alpn, s->alpn_len) != 0)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_INCONSISTENT_EARLY_DATA_ALPN);
    c->early_data_status = SSL_EARLY_DATA_ACCEPTED;
    c->early_data_reason = ssl_early_data_accepted;
    c->hs->early_data_answered = 1;
    return 1;
}

/* ---- server ---- */

/*
 * Opens a ticket into a session, asking the application's decrypt callback
 * when there is one. Errors of a ticket that does not open are not the
 * handshake's: they are dropped from the queue. *abort is set when the
 * callback asks to fail the handshake.
 */
static SSL_SESSION *open_ticket(SSL *c, struct rd identity, int *abort)
{
    SSL_CTX *ctx = c->ctx;
    struct wr plain;
    SSL_SESSION *s = NULL;
    wr_init(&plain);
    ERR_set_mark();
    int status = ticket_open(c, identity, &plain);
    if (status == SSL_TICKET_SUCCESS || status == SSL_TICKET_SUCCESS_RENEW) {
        struct rd r;
        rd_init(&r, plain.buf, plain.len);
        s = session_decode(r);
        if (s == NULL)
            status = SSL_TICKET_NO_DECRYPT;
    }
    ERR_pop_to_mark();
    wr_free(&plain);
    if (ctx->ticket_dec_cb == NULL)
        return s;
    struct rd name = identity;
    if (name.n > 16)
        name.n = 16;
    switch (ctx->ticket_dec_cb(c, s, name.p, name.n, status, ctx->ticket_cb_arg)) {
    case SSL_TICKET_RETURN_USE:
    case SSL_TICKET_RETURN_USE_RENEW:
        return s;
    case SSL_TICKET_RETURN_IGNORE:
    case SSL_TICKET_RETURN_IGNORE_RENEW:
        SSL_SESSION_free(s);
        return NULL;
    default:
        SSL_SESSION_free(s);
        *abort = 1;
        return NULL;
    }
}

/* RFC 8446 §4.2.10 and RFC 9001 §4.6.1: every condition under which 0-RTT is safe here. */
/* Whether the server takes 0-RTT: ssl_early_data_accepted, or the reason it does not. */
static int early_data_acceptable(SSL *c, const SSL_SESSION *s, size_t index, uint32_t obf_age,
                                 struct rd identity)
{
    SSL_CTX *ctx = c->ctx;
    uint64_t now = clock_now_seconds();
    if (c->hs->hrr_done)
        return ssl_early_data_hello_retry_request;
    if (index != 0 || s->max_early_data == 0 || s->cipher != c->cipher)
        return ssl_early_data_unsupported_for_session;
    if (s->alpn_len != sbuf_len(&c->alpn_selected) ||
        memcmp(s->alpn, sbuf_data(&c->alpn_selected), s->alpn_len) != 0)
        return ssl_early_data_alpn_mismatch;
    if ((s->hostname == NULL) != (c->hostname == NULL) ||
        (s->hostname != NULL && strcmp(s->hostname, c->hostname) != 0))
        return ssl_early_data_quic_parameter_mismatch;
    if (s->early_context_len != c->early_data_context_len ||
        (s->early_context_len > 0 &&
         memcmp(s->early_context, c->early_data_context, s->early_context_len) != 0))
        return ssl_early_data_quic_parameter_mismatch;
    /* §8.3: the client's view of the ticket age must match ours (second-granular issue time). */
    int64_t client_ms = (int64_t)(uint32_t)(obf_age - s->age_add);
    int64_t server_ms = (int64_t)(now - s->time) * 1000;
    if (client_ms - server_ms > QTLS_TICKET_AGE_SKEW_MS + 1000 ||
        server_ms - client_ms > QTLS_TICKET_AGE_SKEW_MS + 1000)
        return ssl_early_data_ticket_age_skew;
    if (c->allow_early_data_cb != NULL && !c->allow_early_data_cb(c, c->allow_early_data_arg))
        return ssl_early_data_disabled;
    /* §8.1: a ticket carries 0-RTT once, unless the application handles replay itself. */
    if (!(c->options & SSL_OP_NO_ANTI_REPLAY) &&
        !replay_check_and_add(ctx, identity.p, identity.n, now, s->timeout))
        return ssl_early_data_unsupported_for_session;
    return ssl_early_data_accepted;
}

/* The server's reason, unless the first ClientHello (HelloRetryRequest) already gave one. */
static void server_reason(SSL *c, int reason)
{
    if (c->early_data_reason == ssl_early_data_unknown)
        c->early_data_reason = reason;
}

/* The binder at `index`, checked in constant time against the partial ClientHello. */
static int check_binder(SSL *c, struct rd binders, size_t index, const struct rd *whole,
                        size_t binders_len)
{
    enum qtls_hash h = c->cipher->hash;
    size_t hl = crypto_hash_len(h);
    struct rd binder;
    uint8_t want[EVP_MAX_MD_SIZE];
    for (size_t i = 0; i <= index; i++)
        if (!rd_vec8(&binders, &binder))
            return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_PSK);
    if (binder.n != hl)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_PSK);
    if (!sec_psk_binder(c, h, whole->p, whole->n - (2 + binders_len), want))
        return 0;
    int same = crypto_mac_equal(want, binder.p, hl);
    OPENSSL_cleanse(want, sizeof(want));
    return same || qtls_fail(c, SSL_AD_DECRYPT_ERROR, SSL_R_BINDER_DOES_NOT_VERIFY);
}

/* psk_key_exchange_modes: we resume only with (EC)DHE, psk_dhe_ke (§4.2.9). */
static int take_psk_modes(SSL *c)
{
    struct rd body = c->hs->hello.psk_modes, modes;
    uint8_t m;
    c->hs->psk_dhe_ke = 0;
    if (!hello_has(c, EXT_PSK_KEY_EXCHANGE_MODES))
        return 1;
    if (!rd_vec8(&body, &modes) || !rd_empty(&body) || rd_empty(&modes))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    while (rd_u8(&modes, &m))
        c->hs->psk_dhe_ke |= m == 1 /* psk_dhe_ke */;
    return 1;
}

/* Counts the entries and checks the lists are well formed. */
static int count_psk_entries(SSL *c, struct rd ids, struct rd binders, size_t *n)
{
    struct rd id, b;
    uint32_t age;
    size_t n_ids = 0, n_binders = 0;
    /* §4.2.11: identities<7..2^16-1>, binders<33..2^16-1>: an empty list does not decode */
    if (rd_empty(&ids) || rd_empty(&binders))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    while (!rd_empty(&ids)) {
        if (!rd_vec16(&ids, &id) || rd_empty(&id) || !rd_u32(&ids, &age))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
        n_ids++;
    }
    while (!rd_empty(&binders)) {
        if (!rd_vec8(&binders, &b) || b.n < 32)
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
        n_binders++;
    }
    if (n_ids == 0 || n_ids != n_binders) /* §4.2.11 */
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_PSK);
    *n = n_ids;
    return 1;
}

/* Accepts a session: its PSK becomes the early secret, its peer the connection's. */
static int resume_with(SSL *c, SSL_SESSION *s, size_t index)
{
    struct hs *hs = c->hs;
    /* The connection owns s from here on, whether the rest succeeds or not. */
    SSL_SESSION_free(c->session);
    c->session = s;
    if (!sec_set_psk(c, c->cipher->hash, &s->psk))
        return 0;
    hs->resumed = 1;
    hs->psk_identity = (uint16_t)index;
    c->session_reused = 1;
    return adopt_session_peer(c, s);
}

static int accept_early_data(SSL *c, const struct rd *whole)
{
    /* The ClientHello is not consumed yet: the secret's transcript ends with `whole`. */
    if (!sec_derive_early(c, whole->p, whole->n))
        return 0;
    c->early_data_status = SSL_EARLY_DATA_ACCEPTED;
    return 1;
}

/* The ClientHello's pre_shared_key, psk_key_exchange_modes and early_data, from hs->hello. */
int psk_server_select(SSL *c, const struct rd *whole)
{
    struct rd body = c->hs->hello.psk, ids, binders, id;
    uint32_t obf_age = 0;
    size_t n = 0, index;
    SSL_SESSION *s = NULL;
    int abort = 0;
    if (!take_psk_modes(c))
        return 0;
    if (hello_has(c, EXT_EARLY_DATA))
        c->early_data_status = SSL_EARLY_DATA_REJECTED; /* until accepted below */
    /* 0-RTT being disabled overrides every other reason (as BoringSSL). */
    if (!c->early_data_enabled || c->max_early_data == 0)
        server_reason(c, ssl_early_data_disabled);
    if (!hello_has(c, EXT_PRE_SHARED_KEY)) {
        server_reason(c, ssl_early_data_no_session_offered);
        return 1;
    }
    if (!hello_has(c, EXT_PSK_KEY_EXCHANGE_MODES)) /* §4.2.9 */
        return qtls_fail(c, SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_PSK_KEX_MODES_EXTENSION);
    if (!rd_vec16(&body, &ids) || !rd_vec16(&body, &binders) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!count_psk_entries(c, ids, binders, &n))
        return 0;
    if (!c->hs->psk_dhe_ke || (c->options & SSL_OP_NO_TICKET)) {
        server_reason(c, ssl_early_data_session_not_resumed);
        return 1;
    }
    uint64_t now = clock_now_seconds();
    for (index = 0; index < n && s == NULL && !abort; index++) {
        if (!rd_vec16(&ids, &id) || !rd_u32(&ids, &obf_age))
            return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
        s = open_ticket(c, id, &abort);
        /* Usable only with a suite of its hash, in the same context, not expired. */
        if (s != NULL && (s->cipher->hash != c->cipher->hash || !session_live(s, now) ||
                          s->sid_ctx_len != c->sid_ctx_len ||
                          memcmp(s->sid_ctx, c->sid_ctx, s->sid_ctx_len) != 0)) {
            SSL_SESSION_free(s);
            s = NULL;
        }
    }
    if (abort)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_CALLBACK_FAILED);
    if (s == NULL) {
        server_reason(c, ssl_early_data_session_not_resumed);
        return 1; /* no usable ticket: a full handshake */
    }
    index--;
    if (!resume_with(c, s, index))
        return 0;
    if (!check_binder(c, binders, index, whole, binders.n))
        return 0;
    if (s->max_early_data == 0)
        server_reason(c, ssl_early_data_unsupported_for_session);
    if (!hello_has(c, EXT_EARLY_DATA))
        server_reason(c, ssl_early_data_peer_declined);
    server_reason(c, early_data_acceptable(c, s, index, obf_age, id));
    if (c->early_data_reason == ssl_early_data_accepted)
        return accept_early_data(c, whole);
    return 1;
}

/* The pre_shared_key row, ServerHello: uint16 selected_identity, when resuming. */
int psk_write_selected(SSL *c, struct wr *w)
{
    if (!c->hs->resumed)
        return EXT_NOT_SENT;
    wr_u16(w, c->hs->psk_identity);
    return 1;
}

/* The early_data row, EncryptedExtensions: empty, when 0-RTT is accepted (§4.2.10). */
int psk_write_early_data_accepted(SSL *c, struct wr *w)
{
    return c->early_data_status == SSL_EARLY_DATA_ACCEPTED ? 1 : EXT_NOT_SENT;
}

/* The early_data row, NewSessionTicket: uint32 max_early_data_size of the session ticketed. */
int psk_write_ticket_early_data(SSL *c, struct wr *w)
{
    if (c->session->max_early_data == 0)
        return EXT_NOT_SENT;
    wr_u32(w, c->session->max_early_data);
    return 1;
}

/* The early_data row, NewSessionTicket received: RFC 9001 §4.6.1 allows only 0xffffffff. */
int psk_take_ticket_early_data(SSL *c, const struct rd *body)
{
    struct rd b;
    c->ticket_max_early_data = 0;
    if (body == NULL)
        return 1;
    b = *body;
    if (!rd_u32(&b, &c->ticket_max_early_data) || !rd_empty(&b))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    /* RFC 9001 §4.6.1: anything else is a protocol violation in QUIC; over TCP it is the
       ticket's limit (§4.2.10). */
    if (c->ticket_max_early_data != QTLS_QUIC_MAX_EARLY_DATA && !c->tcp)
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_INVALID_MAX_EARLY_DATA);
    return 1;
}

