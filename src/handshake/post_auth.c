/*
 * Post-handshake client authentication (RFC 8446 §4.6.2), OpenSSL 3.0's behaviour
 * (SSL_verify_client_post_handshake(3), SSL_CTX_set_post_handshake_auth(3)). TLS over TCP only:
 * QUIC forbids it (RFC 9001 §4.4), so a QUIC client never offers post_handshake_auth (§4.2.6,
 * its row in extensions.c) and a QUIC server never asks.
 *
 * When the client offered the extension, both sides keep the handshake's transcript through
 * the client's Finished, where every exchange's transcript starts (§4.4.1); the base key of the
 * client's Finished, client_application_traffic_secret_N (§4.4), is the record layer's, which
 * follows every KeyUpdate both ways (record_app_secret). Each
 * exchange runs on a struct hs of its own (pha->exchange) holding a copy of that transcript, so
 * that msg.c's Certificate, CertificateVerify and Finished serve it as they serve the handshake:
 *   server: SSL_verify_client_post_handshake asks; the next SSL_do_handshake sends the
 *           CertificateRequest (32 random bytes of context, as OpenSSL); SSL_read then reads the
 *           client's Certificate, CertificateVerify (with a certificate) and Finished, and
 *           answers with num_tickets new tickets, which carry the client's certificate.
 *   client: SSL_read reads the CertificateRequest and answers at once: Certificate (chosen as
 *           in the handshake), CertificateVerify if it has one, Finished.
 * A flight of ours the wbio does not take at once (SSL_ERROR_WANT_WRITE) keeps the message it
 * answers in the input, so that the next SSL_read comes back here to write the rest before
 * letting it go; SSL_in_init says 1 until then, as OpenSSL's state machine does.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"

#define PHA_CONTEXT_LEN 32 /* OpenSSL's certificate_request_context: 32 random bytes */

enum pha_state {
    PHA_IDLE,       /* no exchange */
    PHA_PENDING,    /* server: asked for; the CertificateRequest goes at SSL_do_handshake */
    PHA_AWAIT_CERT, /* server: the CertificateRequest is sent; the client's Certificate next */
    PHA_AWAIT_CV,   /* server: its CertificateVerify next */
    PHA_AWAIT_FIN,  /* server: its Finished next */
};

struct pha {
    enum pha_state state;
    struct transcript handshake;  /* through the client's Finished (§4.4.1), never fed again */
    uint8_t corrupt;              /* test hook: the client's next Finished does not verify */
    struct hs *exchange;          /* the exchange in progress (the server's spans SSL_reads) */
    unsigned requests;            /* server: CertificateRequests sent, the handshake's counted */
    uint8_t out_waits;            /* a flight of ours the wbio has not taken all of */
    uint8_t holding;              /* ... and the message it answers stays in the input */
};

/* A TCP connection's exchange state, in its cold part (its BIOs are there); NULL if none. */
static struct pha *pha_of(const SSL *c) { return cold_peek(c)->pha; }

/* ------------------------------------------------------------------ */
/* What the handshake leaves                                           */
/* ------------------------------------------------------------------ */

/* Did the client offer post_handshake_auth? The client's own ClientHello rows, or on a server
   the offer its row recorded (extensions.c); never in QUIC. */
static int offered(const SSL *c)
{
    return c->tcp && ((c->hs->offered >> EXT_POST_HANDSHAKE_AUTH) & 1);
}

/* The transcript through the client's Finished: msg_end leaves the server's tickets out. */
int pha_handshake_done(SSL *c)
{
    if (pha_of(c) != NULL || !offered(c))
        return 1;
    struct ssl_cold *k = cold_get(c);
    struct pha *p = k != NULL ? OPENSSL_zalloc(sizeof(*p)) : NULL;
    if (p == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    transcript_init(&p->handshake);
    k->pha = p;
    if (!transcript_copy(&p->handshake, &c->hs->transcript))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    p->requests = c->server && c->hs->cert_requested; /* SSL_VERIFY_CLIENT_ONCE counts it */
    return 1;
}

/* The exchange's hs as c->hs, made with a copy of the handshake's transcript if there is none. */
static int exchange_enter(SSL *c)
{
    struct pha *p = pha_of(c);
    if (c->hs != NULL) /* after the handshake c->hs is only ever an exchange's, for one call */
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    if (p->exchange == NULL) {
        struct hs *hs = OPENSSL_zalloc(sizeof(*hs));
        if (hs == NULL)
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
        p->exchange = hs;
        if (!transcript_copy(&hs->transcript, &p->handshake))
            return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    }
    c->hs = p->exchange;
    return 1;
}

/* Between messages the exchange waits in pha, not in c->hs. */
static void exchange_leave(SSL *c) { c->hs = NULL; }

/* The exchange is over (done or failed): its hs goes, secrets wiped (msg.c's hs_free). */
static void exchange_end(SSL *c)
{
    struct pha *p = pha_of(c);
    if (p->exchange == NULL)
        return;
    struct hs *other = c->hs != p->exchange ? c->hs : NULL;
    c->hs = p->exchange;
    hs_free(c);
    c->hs = other;
    p->exchange = NULL;
}

void pha_free(SSL *c)
{
    struct pha *p = pha_of(c);
    if (p == NULL)
        return;
    exchange_end(c);
    transcript_free(&p->handshake);
    OPENSSL_clear_free(p, sizeof(*p));
    c->cold->pha = NULL;
}

/* Test hook (tests/test_post_auth.c): a client whose next Finished does not verify. */
void pha_test_corrupt_secret(SSL *c)
{
    if (pha_of(c) != NULL)
        pha_of(c)->corrupt = 1;
}

int pha_in_init(const SSL *c)
{
    const struct pha *p = pha_of(c);
    if (p == NULL)
        return 0;
    return p->state == PHA_PENDING ||
           (p->out_waits && c->quic_hooks != NULL && c->quic_hooks->out_waiting(c));
}

/* ------------------------------------------------------------------ */
/* Flights that wait for the wbio                                      */
/* ------------------------------------------------------------------ */

/* Our flight is handed over: the message it answers (len bytes) goes once the wbio took it all;
   until then it stays, and SSL_read is told to wait for writability. */
static int flight_sent(SSL *c, size_t len)
{
    struct pha *p = pha_of(c);
    if (c->quic_hooks->out_waiting(c)) {
        p->out_waits = p->holding = 1;
        c->want_write = 1;
        return STEP_WAIT;
    }
    p->out_waits = 0;
    quic_consume_message(c, len);
    return STEP_DONE;
}

/* All our output is out: the message a waiting flight answered goes. */
static void settle(SSL *c)
{
    struct pha *p = pha_of(c);
    struct rd held;
    p->out_waits = 0;
    if (p->holding && quic_peek_message(c, &held) == 1)
        quic_consume_message(c, held.n);
    p->holding = 0;
}

/* SSL_read on the message a waiting flight answered: the rest of the flight first. */
static int finish_flight(SSL *c)
{
    int f = c->quic_hooks->flush(c);
    if (f <= 0)
        return f < 0 ? STEP_FAILED : STEP_WAIT; /* want_write set by the record layer */
    settle(c);
    return STEP_DONE;
}

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

static int refuse(int reason)
{
    ERR_raise(ERR_LIB_SSL, reason);
    return 0;
}

/* OpenSSL's send_certificate_request for a TLS 1.3 connection: SSL_VERIFY_PEER, and not a
   second time under SSL_VERIFY_CLIENT_ONCE. */
static int may_request(const SSL *s)
{
    return (s->verify_mode & SSL_VERIFY_PEER) &&
           (pha_of(s)->requests == 0 || !(s->verify_mode & SSL_VERIFY_CLIENT_ONCE));
}

/* OpenSSL 3.0's checks, in its order; the request goes out at the next SSL_do_handshake. */
int SSL_verify_client_post_handshake(SSL *s)
{
    if (s->tls35 != NULL || (s->quic_method != NULL && !s->tcp))
        return refuse(QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC); /* RFC 9001 §4.4 */
    if (s->version != TLS1_3_VERSION) /* no version negotiated yet */
        return refuse(SSL_R_WRONG_SSL_VERSION);
    if (!s->server)
        return refuse(SSL_R_NOT_SERVER);
    if (s->phase != PHASE_DONE || pha_in_init(s)) /* SSL_is_init_finished */
        return refuse(SSL_R_STILL_IN_INIT);
    if (pha_of(s) == NULL)
        return refuse(SSL_R_EXTENSION_NOT_RECEIVED);
    /* A request not sent yet keeps the connection in init (above), as in OpenSSL, whose
       SSL_R_REQUEST_PENDING is thus never seen; one sent and not yet answered: */
    if (pha_of(s)->state != PHA_IDLE)
        return refuse(SSL_R_REQUEST_SENT);
    if (!may_request(s))
        return refuse(SSL_R_INVALID_CONFIG);
    pha_of(s)->state = PHA_PENDING;
    return 1;
}

/*
 * §4.3.2: struct { opaque certificate_request_context<0..2^8-1>;
 *                  Extension extensions<2..2^16-1>; } CertificateRequest;
 * with an unpredictable context (§4.6.2), signature_algorithms, certificate_authorities if
 * configured, compress_certificate if enabled (the rows), as one flight.
 */
static int write_request(SSL *c)
{
    struct hs *hs = c->hs;
    struct wr *w = &hs->out;
    uint8_t context[PHA_CONTEXT_LEN];
    if (!crypto_random(context, sizeof(context)))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    wr_bytes(&hs->cert_request_context, context, sizeof(context)); /* the client's echo */
    size_t at = msg_begin(c, ssl_encryption_application, HT_CERTIFICATE_REQUEST);
    size_t cv = wr_open_vec(w, 1);
    wr_bytes(w, context, sizeof(context));
    wr_close_vec(w, cv, 1);
    size_t exts = wr_open_vec(w, 2);
    if (!ext_write(c, MSG_CR, w))
        return 0;
    wr_close_vec(w, exts, 2);
    if (!wr_ok(&hs->cert_request_context))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    return msg_end(c, at) && msg_end_flight(c);
}

/* A message that failed: the exchange is over; the driver sends the alert recorded. */
static int read_failed(SSL *c)
{
    exchange_end(c);
    return STEP_FAILED;
}

int pha_do_handshake(SSL *c)
{
    struct pha *p = pha_of(c);
    if (p == NULL)
        return 1;
    settle(c);
    if (p->state != PHA_PENDING)
        return 1;
    if (!exchange_enter(c) || !write_request(c)) { /* the connection is over */
        exchange_end(c);
        if (c->alert == 0)
            qtls_set_alert(c, SSL_AD_INTERNAL_ERROR);
        quic_send_pending_alert(c);
        c->phase = PHASE_FAILED;
        return 0;
    }
    exchange_leave(c);
    p->state = PHA_AWAIT_CERT;
    p->requests++;
    p->out_waits = 1; /* SSL_in_init until the wbio took it */
    return 1;
}

/*
 * A resumed connection's peer is decoded (session_conn_peer) so that the new one replaces it;
 * the previous peer goes, as OpenSSL's new session has none: an empty Certificate leaves none.
 */
static int forget_peer(SSL *c)
{
    if (!session_conn_peer(c))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    cert_verified_free(c);
    X509_free(c->peer_cert);
    sk_X509_pop_free(c->peer_chain, X509_free);
    c->peer_cert = NULL;
    c->peer_chain = NULL;
    return 1;
}

/* §4.4.2: the client's chain, echoing our context (msg.c), verified as in the handshake;
   empty only without SSL_VERIFY_FAIL_IF_NO_PEER_CERT (§4.4.2.4). */
static int server_read_certificate(SSL *c)
{
    struct rd whole;
    if (!forget_peer(c) || msg_read_certificate(c, 1, &whole) != HS_CONTINUE)
        return 0;
    if (c->peer_cert == NULL && (c->verify_mode & SSL_VERIFY_FAIL_IF_NO_PEER_CERT))
        return qtls_fail(c, SSL_AD_CERTIFICATE_REQUIRED, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE);
    if (c->peer_cert != NULL && !cert_verify_peer_chain(c, c->peer_chain))
        return 0;
    if (!msg_consume(c, &whole))
        return 0;
    pha_of(c)->state = c->peer_cert != NULL ? PHA_AWAIT_CV : PHA_AWAIT_FIN;
    return 1;
}

/* §4.4.3: the client proves its certificate's key over the exchange's transcript. */
static int server_read_certificate_verify(SSL *c)
{
    if (msg_read_certificate_verify(c) != HS_CONTINUE)
        return 0;
    pha_of(c)->state = PHA_AWAIT_FIN;
    return 1;
}

/* §4.4.4: the Finished keyed by client_application_traffic_secret_N; then the tickets. */
static int server_read_finished(SSL *c, struct rd body, const struct rd *whole)
{
    uint8_t thash[EVP_MAX_MD_SIZE];
    struct secret base;
    int ok = record_app_secret(c, 0, &base) && transcript_hash(&c->hs->transcript, thash) &&
             msg_check_finished(c, body, &base, thash);
    secret_wipe(&base);
    if (!ok)
        return 0;
    cb_handshake_message(c, 0, whole->p, whole->n); /* accepted: reported, as msg_consume */
    /* OpenSSL sends num_tickets more: a session that carries the client's certificate. */
    return nst_server_write_n_tickets(c, c->num_tickets) && msg_end_flight(c);
}

/*
 * The next message of the client's flight (§4.6.2): Certificate (msg_read_certificate checks
 * its type: a CompressedCertificate too if we offered compression, RFC 8879 §4), then
 * CertificateVerify if it had a certificate, then Finished; nothing else between them.
 */
static int server_read(SSL *c, uint8_t type, struct rd body, const struct rd *whole)
{
    struct pha *p = pha_of(c);
    enum pha_state at = p->state;
    p->out_waits = 0; /* the client answers: our request is out */
    int ok = (at == PHA_AWAIT_CERT ||
              msg_expect(c, type, at == PHA_AWAIT_CV ? HT_CERTIFICATE_VERIFY : HT_FINISHED)) &&
             exchange_enter(c);
    if (ok && at == PHA_AWAIT_CERT)
        ok = server_read_certificate(c);
    else if (ok && at == PHA_AWAIT_CV)
        ok = server_read_certificate_verify(c);
    else if (ok)
        ok = server_read_finished(c, body, whole);
    if (!ok)
        return read_failed(c);
    if (at != PHA_AWAIT_FIN) {
        exchange_leave(c);
        return STEP_DONE;
    }
    exchange_end(c);
    p->state = PHA_IDLE;
    return flight_sent(c, whole->n);
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

/*
 * §4.3.2, §4.6.2: the request's context (non-empty after the handshake: it tells the exchanges
 * apart), kept for our Certificate; its rows: signature_algorithms (required), the server's CA
 * names, compress_certificate.
 */
static int take_request(SSL *c, struct rd body)
{
    struct hs *hs = c->hs;
    struct rd context, exts;
    if (!rd_vec8(&body, &context) || !rd_vec16(&body, &exts) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (rd_empty(&context))
        return qtls_fail(c, SSL_AD_ILLEGAL_PARAMETER, SSL_R_INVALID_CONTEXT);
    if (!ext_parse(c, MSG_CR, exts))
        return 0;
    wr_bytes(&hs->cert_request_context, context.p, context.n);
    return wr_ok(&hs->cert_request_context) ||
           qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
}

/* The request is accepted: into the transcript and reported, before our answer (as OpenSSL). */
static int accept_request(SSL *c, const struct rd *whole)
{
    if (!transcript_add(&c->hs->transcript, whole->p, whole->n))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    cb_handshake_message(c, 0, whole->p, whole->n);
    return 1;
}

/* §4.6.2: Certificate, CertificateVerify if we have a certificate, Finished, as one flight. */
static int answer(SSL *c)
{
    struct hs *hs = c->hs;
    uint16_t scheme = 0;
    int have;
    enum hs_wait r = msg_client_certificate(c, &hs->cert, &scheme, &have);
    if (r == HS_WANT_X509_LOOKUP) { /* SSL_read cannot come back to the callback: refused */
        qtls_not_implemented("a certificate callback retry (-1) after the handshake");
        qtls_set_alert(c, SSL_AD_INTERNAL_ERROR);
        return 0;
    }
    if (r != HS_CONTINUE)
        return 0;
    struct secret base;
    if (!record_app_secret(c, 1, &base))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
    base.b[0] ^= pha_of(c)->corrupt;
    int ok = msg_write_certificate(c, hs->cert_request_context.buf, hs->cert_request_context.len,
                                   have ? &hs->cert : NULL) &&
             (!have || msg_write_certificate_verify(c, hs->cert.pkey, scheme)) &&
             msg_write_finished(c, &base) && msg_end_flight(c);
    secret_wipe(&base);
    return ok;
}

static int client_read(SSL *c, struct rd body, const struct rd *whole)
{
    /* §4.6.2: only a client that offered post_handshake_auth may be asked (and never in QUIC) */
    if (pha_of(c) == NULL)
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE), STEP_FAILED;
    /* After our close_notify there is no answering: OpenSSL ignores the request. */
    if (c->shutdown & SSL_SENT_SHUTDOWN) {
        cb_handshake_message(c, 0, whole->p, whole->n);
        quic_consume_message(c, whole->n);
        return STEP_DONE;
    }
    int ok = exchange_enter(c) && take_request(c, body) && accept_request(c, whole) && answer(c);
    if (!ok)
        return read_failed(c);
    exchange_end(c);
    return flight_sent(c, whole->n);
}

/* ------------------------------------------------------------------ */
/* The driver's entry                                                  */
/* ------------------------------------------------------------------ */

int pha_takes(const SSL *c, uint8_t type)
{
    const struct pha *p = pha_of(c);
    if (p != NULL && p->holding)
        return 1;
    if (!c->server)
        return type == HT_CERTIFICATE_REQUEST;
    if (p == NULL || p->state == PHA_IDLE || p->state == PHA_PENDING)
        return 0;
    /* Before the client's flight starts other messages may come (a KeyUpdate); inside it only
       its next message may, as in OpenSSL's state machine (server_read refuses the rest). */
    return p->state != PHA_AWAIT_CERT || type == HT_CERTIFICATE ||
           type == HT_COMPRESSED_CERTIFICATE;
}

int pha_read(SSL *c, uint8_t type, struct rd body, const struct rd *whole)
{
    if (pha_of(c) != NULL && pha_of(c)->holding)
        return finish_flight(c);
    return c->server ? server_read(c, type, body, whole) : client_read(c, body, whole);
}
