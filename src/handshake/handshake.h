/*
 * handshake/: the engine. The driver (handshake.c), the client and server state machines
 * (client.c, server.c: one function per state), message framing (msg.c), the table of
 * extensions (extensions.c) and the application's (custom_ext.c), the connection's key schedule
 * (secrets.c), resumption and 0-RTT (resumption.c), NewSessionTicket (nst.c) and post-handshake
 * client authentication over TCP (post_auth.c).
 */
#ifndef QTLS_HANDSHAKE_H
#define QTLS_HANDSHAKE_H

#include "internal.h"
#include "transport/transport.h"


/* Did the hello being read (ClientHello, ServerHello or HelloRetryRequest) carry extension i?
   Its row filled hs->hello. */
static inline int hello_has(const SSL *c, enum ext_idx i) { return (c->hs->hello.present >> i) & 1; }

/* RFC 8446 §4.1.3: the Random of a HelloRetryRequest, SHA-256("HelloRetryRequest") (msg.c). */
extern const uint8_t msg_hrr_random[32];

/* The levels a state of either side reads and writes at (RFC 9001 §4.1.4); alerts go out at
   the write level, and over TCP the levels are the record protection epochs. */
struct hs_levels {
    OSSL_ENCRYPTION_LEVEL read, write;
};
#define HS_INITIAL ssl_encryption_initial
#define HS_EARLY ssl_encryption_early_data
#define HS_HANDSHAKE ssl_encryption_handshake
#define HS_APPLICATION ssl_encryption_application

/* Moves to `state` and its levels; fails if input is left at the old read level (RFC 8446
   §5.1). */
static inline QTLS_MUST_CHECK int hs_set_state(SSL *c, int state, struct hs_levels l)
{
    c->hs->state = state;
    return quic_set_levels(c, l.read, l.write);
}

/*
 * RFC 8446 §5.1: over TCP a message that precedes a key change (and the ClientHello a
 * HelloRetryRequest answers, and the HelloRetryRequest) ends its record: 1 if nothing follows
 * it at the read level, else unexpected_message.
 */
static inline QTLS_MUST_CHECK int hs_ends_record(SSL *c)
{
    if (c->tcp && quic_input_pending(c, (OSSL_ENCRYPTION_LEVEL)c->read_level))
        return qtls_fail(c, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA);
    return 1;
}

/* Starts the handshake state (client or server) on the first SSL_do_handshake. */
QTLS_MUST_CHECK int hs_start(SSL *c);
/* Frees c->hs, the handshake's or a post-handshake exchange's, wiping secrets (msg.c). */
void hs_free(SSL *c);
/* SSL_process_quic_post_handshake without the front-door checks: 1, or 0 failed (alert sent) or
   a flight of ours waits for the wbio (TCP: want_write set, no error). */
QTLS_MUST_CHECK int hs_process_post_handshake(SSL *ssl);
/* The same for at most max messages (SSL_read without SSL_MODE_AUTO_RETRY takes one): how many
   were processed, or -1: failed (alert sent), or a flight of ours (post-handshake
   authentication) waits for the wbio (want_write set, nothing queued: SSL_ERROR_WANT_WRITE). */
QTLS_MUST_CHECK int hs_process_post_handshake_n(SSL *ssl, size_t max);

/* What reading one post-handshake message gave (handshake.c, post_auth.c). */
enum post_step {
    STEP_FAILED = -1, /* alert recorded, or the wbio failed */
    STEP_NONE = 0,    /* no whole message buffered */
    STEP_DONE = 1,    /* read, and let go of */
    STEP_WAIT = 2,    /* answered; the answer waits for the wbio, the message stays (post_auth.c) */
};

/* msg.c: message framing on top of the QUIC glue. */
/* Opens a message of `type` at `level` in hs->out; returns the body start for msg_end. */
size_t msg_begin(SSL *c, OSSL_ENCRYPTION_LEVEL level, uint8_t type);
/* Closes it, adds it to the transcript. */
QTLS_MUST_CHECK int msg_end(SSL *c, size_t at);
/* Sets the length of the message opened at `at` to what is written so far (before msg_end). */
void msg_set_length(SSL *c, size_t at);
/*
 * Hands over packed output at its level (add_handshake_data): at a level change, and before
 * new keys are delivered so that the peer gets the message before what they protect.
 */
QTLS_MUST_CHECK int msg_flush_output(SSL *c);
/* Ends a flight: hands over the output, then flush_flight if anything was handed over. */
QTLS_MUST_CHECK int msg_end_flight(SSL *c);
/*
 * Reads the next message: HS_CONTINUE with type and body, HS_WANT_MESSAGE if more data is
 * needed, HS_ERROR. Rejects KeyUpdate and the types QUIC never carries.
 */
QTLS_MUST_CHECK enum hs_wait msg_read(SSL *c, uint8_t *type, struct rd *body, struct rd *whole);
/* Consumes a message read by msg_read, adding it to the transcript. */
QTLS_MUST_CHECK int msg_consume(SSL *c, const struct rd *whole);
/* Fails with unexpected_message unless type == want. */
QTLS_MUST_CHECK int msg_expect(SSL *c, uint8_t type, uint8_t want);
/* msg_read + msg_expect: HS_CONTINUE with the message, HS_WANT_MESSAGE or HS_ERROR. */
QTLS_MUST_CHECK enum hs_wait msg_read_expected(SSL *c, uint8_t want, struct rd *body,
                                               struct rd *whole);
/* Reads and checks the peer's CertificateVerify against c->peer_cert: HS_CONTINUE when done. */
QTLS_MUST_CHECK enum hs_wait msg_read_certificate_verify(SSL *c);
/* Reads and checks the peer's Finished (base: its handshake traffic secret): HS_CONTINUE. */
QTLS_MUST_CHECK enum hs_wait msg_read_finished(SSL *c, const struct secret *base);

/* Client: the certificate to answer a CertificateRequest with, in the handshake or after it. */
QTLS_MUST_CHECK enum hs_wait msg_client_certificate(SSL *c, struct cert_cfg *out, uint16_t *scheme,
                                                    int *have);
/* Shared by both sides (msg.c). */
QTLS_MUST_CHECK int msg_write_certificate(SSL *c, const uint8_t *context, size_t context_len,
                                          const struct cert_cfg *cc);
QTLS_MUST_CHECK int msg_write_certificate_verify(SSL *c, EVP_PKEY *key, uint16_t scheme);
QTLS_MUST_CHECK int msg_write_finished(SSL *c, const struct secret *base);
/*
 * Reads the peer's Certificate, or a CompressedCertificate if we offered compression (RFC 8879
 * §4), and parses it (msg_parse_certificate): HS_CONTINUE with the message in *whole, to be
 * consumed; else HS_WANT_MESSAGE or HS_ERROR.
 */
QTLS_MUST_CHECK enum hs_wait msg_read_certificate(SSL *c, int allow_empty, struct rd *whole);
/* Parses Certificate into c->peer_chain / c->peer_cert; an empty list is allowed only if allow_empty. */
QTLS_MUST_CHECK int msg_parse_certificate(SSL *c, struct rd body, int allow_empty);
QTLS_MUST_CHECK int msg_check_certificate_verify(SSL *c, struct rd body, EVP_PKEY *key,
                                                 const uint8_t *thash);
QTLS_MUST_CHECK int msg_check_finished(SSL *c, struct rd body, const struct secret *base,
                                       const uint8_t *thash);

/*
 * secrets.c: the connection's key schedule (RFC 8446 §7.1) below the state machines: each
 * stage derived from the transcript, key-logged, delivered to the QUIC stack, wiped.
 */
/* Early Secret from the PSK offered (client) or accepted (server). */
QTLS_MUST_CHECK int sec_set_psk(SSL *c, enum qtls_hash h, const struct secret *psk);
/* The binder (into out, hash-length bytes) over the transcript plus a partial ClientHello. */
QTLS_MUST_CHECK int sec_psk_binder(SSL *c, enum qtls_hash h, const uint8_t *partial, size_t len,
                                   uint8_t *out);
/* client_early_traffic_secret over the transcript plus `ch`; delivered for 0-RTT. */
QTLS_MUST_CHECK int sec_derive_early(SSL *c, const uint8_t *ch, size_t ch_len);
/* Handshake traffic secrets (after ServerHello), delivered at the handshake level. */
QTLS_MUST_CHECK int sec_derive_handshake(SSL *c, const uint8_t *ecdhe, size_t ecdhe_len);
/* Application traffic and exporter secrets (after server Finished), delivered. */
QTLS_MUST_CHECK int sec_derive_application(SSL *c);
/* resumption_master_secret (after client Finished). */
QTLS_MUST_CHECK int sec_derive_resumption(SSL *c);

/* resumption.c: PSK resumption with tickets and 0-RTT (RFC 8446 §4.2.10, §4.2.11, §4.6.1). */
#define QTLS_QUIC_MAX_EARLY_DATA 0xffffffffu /* RFC 9001 §4.6.1 */
/* Client: decides whether to offer c->session, and early data; computes the PSK early secret. */
QTLS_MUST_CHECK int psk_client_prepare(SSL *c);
/*
 * Client: computes the binder over the ClientHello at hs->out[at..] (its header already carrying
 * the full length) and writes it in place.
 */
QTLS_MUST_CHECK int psk_fill_binder(SSL *c, size_t at);
/* Client: after ClientHello, installs the 0-RTT write secret if early data was offered. */
QTLS_MUST_CHECK int psk_client_after_hello(SSL *c);
/* Client: the server's pre_shared_key answer (or its absence), from hs->hello. */
QTLS_MUST_CHECK int psk_client_server_hello(SSL *c);
/* SSL_CTX_set_reverify_on_resume, for a resumed handshake whose 0-RTT was not accepted. */
QTLS_MUST_CHECK int psk_client_reverify_after_encrypted_extensions(SSL *c);
/* Server: picks and checks a PSK from hs->hello (binder over `whole`), decides 0-RTT. */
QTLS_MUST_CHECK int psk_server_select(SSL *c, const struct rd *whole);
/* The early_data and pre_shared_key rows' functions (extensions.c). */
ext_write_fn psk_write_early_data_offer, psk_write_early_data_accepted,
    psk_write_ticket_early_data, psk_write_offer, psk_write_selected;
ext_parse_fn psk_take_early_data_answer, psk_take_ticket_early_data;

/*
 * nst.c: NewSessionTicket (RFC 8446 §4.6.1). Server: the tickets after the client Finished, at
 * the application level; n more (SSL_new_session_ticket after the handshake). Client: one
 * received after the handshake.
 */
QTLS_MUST_CHECK int nst_server_write_tickets(SSL *c);
QTLS_MUST_CHECK int nst_server_write_n_tickets(SSL *c, size_t n);
QTLS_MUST_CHECK int nst_client_process(SSL *c, struct rd body);

/*
 * post_auth.c: post-handshake client authentication (RFC 8446 §4.6.2), over TCP only (RFC 9001
 * §4.4), when the client offered post_handshake_auth (§4.2.6). The driver calls it after each
 * handshake state, at the handshake's end, from SSL_do_handshake after it and for the messages
 * it takes; SSL_verify_client_post_handshake is there too.
 */
/* At the handshake's end, before hs_free: keeps its transcript (§4.4.1). 1, or 0 (alert set). */
QTLS_MUST_CHECK int pha_handshake_done(SSL *c);
/* Does post-handshake authentication read this message, the next one buffered? */
int pha_takes(const SSL *c, uint8_t type);
/* Reads it (`whole`, of `type`): STEP_DONE, STEP_WAIT or STEP_FAILED. */
QTLS_MUST_CHECK int pha_read(SSL *c, uint8_t type, struct rd body, const struct rd *whole);
/* SSL_do_handshake after the handshake, all output written: lets go of what a waiting flight
   answered, then sends the CertificateRequest asked for. 1, or 0 failed (alert sent). */
QTLS_MUST_CHECK int pha_do_handshake(SSL *c);
/* SSL_in_init's part: a request not sent yet, or a flight of ours the wbio has not taken. */
int pha_in_init(const SSL *c);
void pha_free(SSL *c);
/* Test hook: garbles the kept client secret, so that this client's next Finished is wrong. */
void pha_test_corrupt_secret(SSL *c);

/* client.c / server.c: one step of the state machine. */
QTLS_MUST_CHECK enum hs_wait client_step(SSL *c);
QTLS_MUST_CHECK enum hs_wait server_step(SSL *c);

/*
 * custom_ext.c: the application's extensions in the ClientHello and EncryptedExtensions
 * (context: SSL_EXT_CLIENT_HELLO or SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS). Writing and parsing
 * fail with the callback's alert recorded.
 */
QTLS_MUST_CHECK int custom_ext_write(SSL *c, unsigned context, struct wr *w);
QTLS_MUST_CHECK int custom_ext_parse(SSL *c, unsigned context, struct rd list);
/*
 * Is `type` an extension the application added for this side? 1 if it was added for the
 * message `context` (an SSL_EXT_* value), -1 if for other messages only, 0 if not at all.
 */
int custom_ext_claims(const SSL *c, uint16_t type, unsigned context);

/*
 * extensions.c: the table of extensions, one row each (RFC 8446 §4.2). The ClientHello's
 * extension list (the rows, GREASE, the application's; pre_shared_key last).
 */
QTLS_MUST_CHECK int ext_write_client_hello(SSL *c, struct wr *w);
/* The extension list of msg (SH, HRR, EE, CT for the leaf, CR, NST); EE ends with custom_ext's. */
QTLS_MUST_CHECK int ext_write(SSL *c, enum ext_msg_idx msg, struct wr *w);
/* Splits and checks a received list, then every row's parser for msg (EE: custom_ext's too). */
QTLS_MUST_CHECK int ext_parse(SSL *c, enum ext_msg_idx msg, struct rd list);
/* Server, every ClientHello: splits it into *e and runs the rows' hello parsers (hs->hello). */
QTLS_MUST_CHECK int ext_read_client_hello(SSL *c, struct rd list, struct ext_set *e);
/* Server: the rows' ClientHello parsers, on the first one only; the application's on each. */
QTLS_MUST_CHECK int ext_parse_client_hello(SSL *c, const struct ext_set *e, struct rd list,
                                           int first);
/* RFC 8701: the client's GREASE values, one per field (indexes into hs->grease_seed). */
enum grease_idx {
    GREASE_CIPHER,
    GREASE_GROUP,
    GREASE_EXT1,
    GREASE_EXT2,
    GREASE_VERSION,
    GREASE_PSK_MODE,
    GREASE_SIGALG,
};
uint16_t grease_value(const SSL *c, enum grease_idx i);

void custom_exts_free(struct custom_exts *e);

#endif
