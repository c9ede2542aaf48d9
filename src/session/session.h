/*
 * session/: SSL_SESSION and its one encoding (session.c: i2d/d2i_SSL_SESSION, PEM and ticket
 * plaintext), stateless tickets sealed and opened, and the 0-RTT replay filter (ticket.c).
 */
#ifndef QTLS_SESSION_H
#define QTLS_SESSION_H

#include "internal.h"

/* session.c: the session encoding shared by i2d/d2i_SSL_SESSION and ticket plaintext. */
/* Appends a versioned encoding of `s` (with_ticket: include the client's ticket bytes). */
void session_encode(const SSL_SESSION *s, int with_ticket, struct wr *w);
/* Parses an encoding made by session_encode; NULL (with an error queued) on any defect. */
SSL_SESSION *session_decode(struct rd r);
/* The session a connection resumed or established (c->session), made on demand. */
SSL_SESSION *session_new_from_conn(SSL *c);
/* The session's peer leaf, decoding the kept DER on first use; NULL if none or undecodable. */
X509 *session_peer(const SSL_SESSION *s);
/* Does the session name a peer leaf (decoded or not)? */
int session_has_peer(const SSL_SESSION *s);
/* Resumption: the connection's peer becomes s's leaf, decoded when first asked for. 1 or 0. */
QTLS_MUST_CHECK int session_conn_defer_peer(SSL *c, SSL_SESSION *s);
/* Fills peer_cert and peer_chain from a deferred session peer (accessors); 0 on failure. */
int session_conn_peer(SSL *c);

/* ticket.c: sealing and opening tickets (RFC 8446 §4.6.1: opaque to the client). */
/*
 * Seals the plaintext into an opaque ticket. 0 on failure (error queued), or 0 with
 * nothing queued when the application's ticket key callback declined to issue one
 * (it returned 0): then no ticket is sent, as OpenSSL does (an empty one is illegal).
 */
QTLS_MUST_CHECK int ticket_seal(SSL *c, const uint8_t *plain, size_t plain_len, struct wr *out);
/*
 * Opens a ticket. Returns SSL_TICKET_SUCCESS (or _SUCCESS_RENEW when the key
 * is old and the ticket should be replaced), SSL_TICKET_NO_DECRYPT for an
 * unknown key or a failed check, SSL_TICKET_EMPTY / SSL_TICKET_FATAL_ERR_*.
 * On success `plain` holds the plaintext.
 */
int ticket_open(SSL *c, struct rd ticket, struct wr *plain);
/* SSL_CTX_new: the built-in ticket keys, made before a server forks its workers. */
QTLS_MUST_CHECK int ticket_keys_make(SSL_CTX *ctx);
void ticket_keys_free(struct ticket_keys *k);
/* Anti-replay for 0-RTT (RFC 8446 §8.1): 1 the first time a ticket is seen, 0 after. */
int replay_check_and_add(SSL_CTX *ctx, const uint8_t *ticket, size_t len, uint64_t now,
                         uint64_t window);
void replay_filter_free(struct replay_filter *r);
/* Test hooks: the clock ticket keys age by (NULL restores time()), and a forced key rotation. */
void ticket_set_test_clock(uint64_t (*now)(void));
void ticket_keys_test_rotate(SSL_CTX *ctx);

#endif
