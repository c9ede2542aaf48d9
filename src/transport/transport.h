/*
 * transport/: where the engine's output leaves and its input arrives. The QUIC glue (quic.c:
 * SSL_QUIC_METHOD, SSL_provide_quic_data buffered into whole messages per encryption level,
 * secrets, flights and alerts handed to the stack) and the info and message callbacks that
 * report every message (callbacks.c). The front doors above (api/) drive the engine through it.
 */
#ifndef QTLS_TRANSPORT_H
#define QTLS_TRANSPORT_H

#include "internal.h"

/*
 * How the glue reaches a front door other than SSL_QUIC_METHOD (quic_tls35.c: OpenSSL 3.5's
 * third-party QUIC API). Function pointers, so that the glue calls no layer above it.
 */
struct quic_hooks {
    /* More CRYPTO data at c->read_level into the input buffer: 1 some, 0 none yet, -1 failed
       (alert recorded). */
    int (*pull)(SSL *c);
    /* The peer's transport parameters were kept (quic_take_peer_tp): 1 go on, 0 failed. */
    int (*peer_tp)(SSL *c, const uint8_t *params, size_t len);
    /* The end of each SSL_do_handshake: hands over what is due (secrets): 1, or 0 failed. */
    int (*settle)(SSL *c);
    /* Output the stack did not take yet, offered again: 1 all taken, 0 some still waits,
       -1 failed (alert recorded). */
    int (*flush)(SSL *c);
    /* Does output wait for the stack (SSL_ERROR_WANT_WRITE until it is taken)? */
    int (*out_waiting)(const SSL *c);
};

/* ------------------------------------------------------------------ */
/* The TLS record layer (record.c): TLS over TCP                       */
/* ------------------------------------------------------------------ */

/* What reading one record gave. */
enum record_event {
    REC_ERROR,     /* failed: alert recorded, or the rbio failed (c->syscall_error) */
    REC_WANT,      /* the rbio has no more now (c->want_read or want_write set) */
    REC_AGAIN,     /* a record with nothing for the caller (a dummy change_cipher_spec) */
    REC_HANDSHAKE, /* handshake bytes, buffered for the engine at the record's level */
    REC_APP,       /* application data, waiting for record_take_app */
    REC_CLOSED,    /* the peer's close_notify (or an end allowed as one) */
    REC_EOF,       /* the rbio ended without close_notify: SSL_read returns 0 (error queued, or
                      SSL_ERROR_SYSCALL when the BIO does not say it ended) */
};

/* Makes c a TLS-over-TCP connection on its BIOs (the engine's transport becomes the record
   layer); 0 with an error if it has no BIO. */
QTLS_MUST_CHECK int record_attach(SSL *c);
void record_free(SSL *c);
/* Reads and processes one record. */
enum record_event record_next(SSL *c);
/* Copies up to num bytes of the application data waiting (peek: leaves them); the count. */
size_t record_take_app(SSL *c, uint8_t *buf, size_t num, int peek);
size_t record_pending(const SSL *c);
/* The application traffic secret now in use one way (KeyUpdates counted, §7.2), into *out,
   which the caller wipes; 0 if there is none yet. */
QTLS_MUST_CHECK int record_app_secret(const SSL *c, int write, struct secret *out);
/* Client: may early data be written now (0-RTT keys in place, no EndOfEarlyData yet), and how
   much was. */
int record_early_writable(const SSL *c);
/* Are the application write keys in place (a server's, once its Finished is out)? */
int record_app_writable(const SSL *c);
size_t record_early_written(const SSL *c);
int record_has_pending(const SSL *c);
int record_close_notify_received(const SSL *c);
/* Seals num bytes of application data at a level (application, or the client's early data) and
   writes them out: 1 with *written, 0 the wbio took not all yet (want set; call again with the
   same arguments), -1 failed. */
int record_write_app(SSL *c, OSSL_ENCRYPTION_LEVEL level, const uint8_t *buf, size_t num,
                     size_t *written);
/* Is output waiting for the wbio? */
int record_output_waits(const SSL *c);
/* Writes out what waits: 1 all, 0 not yet (want set), -1 failed. */
int record_flush(SSL *c);
/* Sends what is due after the handshake (a KeyUpdate), then record_flush. */
int record_send_due(SSL *c);
/* close_notify (§6.1), then record_flush. */
int record_send_close_notify(SSL *c);
/* SSL_key_update: the type to send next; the one still to send (SSL_get_key_update_type). */
QTLS_MUST_CHECK int record_request_key_update(SSL *c, int type);
int record_pending_key_update(const SSL *c);
/* The peer's KeyUpdate body (§4.6.3): its next read key, and our answer if it asked. */
QTLS_MUST_CHECK int record_peer_key_update(SSL *c, struct rd body);

/* ------------------------------------------------------------------ */
/* QUIC glue (quic.c)                                                 */
/* ------------------------------------------------------------------ */

/* Delivers a level's secrets to the QUIC stack (read or write may be NULL for 0-RTT). */
QTLS_MUST_CHECK int quic_set_secrets(SSL *c, OSSL_ENCRYPTION_LEVEL level,
                                     const struct secret *read, const struct secret *write);
/* Hands a level's packed output to add_handshake_data. */
QTLS_MUST_CHECK int quic_add_handshake_data(SSL *c, OSSL_ENCRYPTION_LEVEL level,
                                            const uint8_t *p, size_t n);
QTLS_MUST_CHECK int quic_flush_flight(SSL *c);
/* Sends the pending alert once, at the current write level. */
void quic_send_pending_alert(SSL *c);
/*
 * Returns 1 and the next whole message (header included) at the current
 * read level if one is buffered; 0 if more data is needed; -1 on a level
 * violation (error already raised).
 */
QTLS_MUST_CHECK int quic_peek_message(SSL *c, struct rd *msg);
/* Drops the message returned by quic_peek_message. */
void quic_consume_message(SSL *c, size_t len);
/*
 * The levels a handshake state reads and writes at (client.c, server.c derive them from the
 * state): fails, levels unchanged, if bytes are left at the old read level (RFC 8446 §5.1).
 * The write level is the one SSL_quic_write_level reports and alerts go out at.
 */
QTLS_MUST_CHECK int quic_set_levels(SSL *c, OSSL_ENCRYPTION_LEVEL read,
                                    OSSL_ENCRYPTION_LEVEL write);
/* Are bytes at this level received and not consumed? */
int quic_input_pending(const SSL *c, OSSL_ENCRYPTION_LEVEL level);
/* Frees the input buffers. */
void quic_free_buffers(SSL *c);
/* Drops what the glue needs only until the handshake is done (our transport parameters). */
void quic_handshake_done(SSL *c);
/* Test hook: the bytes buffered at a level, and the buffer's size (0 and 0 when none). */
void quic_test_input(const SSL *c, OSSL_ENCRYPTION_LEVEL level, size_t *len, size_t *cap);
/* Frees the input buffers of levels with nothing left unread (between API calls only). */
void quic_release_consumed(SSL *c);
/* SSL_provide_quic_data without the front-door checks (the 3.5 API's pull uses it). */
QTLS_MUST_CHECK int quic_buffer_input(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                                      size_t len);
/* SSL_set_quic_transport_params without the front-door checks: copies; NULL/0 clears. */
QTLS_MUST_CHECK int quic_set_local_tp(SSL *ssl, const uint8_t *params, size_t len);
/* Raises QTLS_R_QUIC_API_MIXED naming the function called; returns 0. */
int quic_api_mixed(const char *function);

/* Records the peer's transport parameters from either codepoint, NULL if absent (quic.c). */
QTLS_MUST_CHECK int quic_take_peer_tp(SSL *c, const struct rd *v1, const struct rd *draft);

/*
 * callbacks.c: the info and message callbacks and the handshake facts. cb_handshake_message is
 * called for every whole handshake message sent (at msg_end) or received (when consumed); it
 * records the state, the server random and the Finished bytes, then runs the callbacks.
 */
void cb_info(const SSL *c, int where, int ret);
void cb_handshake_message(SSL *c, int sent, const uint8_t *msg, size_t len);
/* The message callback alone for one whole handshake message. */
void cb_message(SSL *c, int sent, const uint8_t *msg, size_t len);
void cb_alert_sent(SSL *c, uint8_t alert);
/* The message callback for what a record carries besides handshake messages, with the version
   OpenSSL 3.0 reports: SSL3_RT_HEADER (the 5-byte header, its own version),
   SSL3_RT_INNER_CONTENT_TYPE (1 byte), alerts and the change_cipher_spec. */
void cb_record(SSL *c, int sent, int version, int content_type, const uint8_t *p, size_t len);

#endif
