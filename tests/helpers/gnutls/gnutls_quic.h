/*
 * GnuTLS 3.7 in QUIC mode as an in-process peer, driven as ngtcp2's GnuTLS backend drives
 * it: the handshake bytes GnuTLS emits arrive through gnutls_handshake_set_read_function and
 * are queued per level; the secrets come through gnutls_handshake_set_secret_function; the
 * transport parameters travel in extension 0x39; no TLS record is ever read or written.
 * Used by tests/test_gnutls.c, tests/test_quic_tls35_gnutls.c and bench/bench_gnutls.c.
 */
#ifndef QTLS_TEST_GNUTLS_QUIC_H
#define QTLS_TEST_GNUTLS_QUIC_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>

#define GQ_LEVELS 4 /* gnutls_record_encryption_level_t: initial, early, handshake, application */

struct gq_peer {
    gnutls_session_t session;
    int is_server;
    /* Handshake bytes GnuTLS emitted per level, not yet delivered; the buffers keep their
       capacity across gq_peer_reset. */
    uint8_t *out[GQ_LEVELS]; /* a user may take one: set it NULL and its out_len 0 */
    size_t out_len[GQ_LEVELS], out_cap[GQ_LEVELS];
    uint8_t read_secret[GQ_LEVELS][64], write_secret[GQ_LEVELS][64];
    size_t read_len[GQ_LEVELS], write_len[GQ_LEVELS];
    int have_read[GQ_LEVELS], have_write[GQ_LEVELS];
    /* The transport parameters this side sends, and those it received. */
    const uint8_t *own_tp;
    size_t own_tp_len;
    uint8_t peer_tp[512];
    size_t peer_tp_len;
    int tp_received;
    int alerts, alert_desc, alert_level; /* the last alert GnuTLS would send, at this level */
    int pushed;      /* TLS records GnuTLS tried to write (QUIC mode never should) */
    int hook_failed; /* a hook refused what GnuTLS gave it */
    /* Optional: sees each outgoing handshake message before it is queued. */
    void (*on_message)(struct gq_peer *g, gnutls_handshake_description_t htype,
                       const uint8_t *msg, size_t len);
};

/*
 * Puts the QUIC hooks and the transport-parameter extension (sending tp, tp_len bytes, kept
 * by reference) on a session made with gnutls_init. 0, or a GnuTLS error code.
 */
int gq_peer_attach(struct gq_peer *g, gnutls_session_t session, int is_server, const uint8_t *tp,
                   size_t tp_len);
/* Forgets what the hooks saw (the output buffers stay allocated), for a new session. */
void gq_peer_reset(struct gq_peer *g);
/* Frees the output buffers (not the session). */
void gq_peer_free(struct gq_peer *g);

#endif
