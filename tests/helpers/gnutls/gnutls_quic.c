/* The GnuTLS QUIC-mode peer's hooks (gnutls_quic.h). */
#include "gnutls_quic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TLSEXT_QUIC_TRANSPORT_PARAMETERS 0x39 /* RFC 9001 §8.2 */

static int gq_secret(gnutls_session_t session, gnutls_record_encryption_level_t level,
                     const void *read_secret, const void *write_secret, size_t len)
{
    struct gq_peer *g = gnutls_session_get_ptr(session);
    if ((unsigned)level >= GQ_LEVELS || len > sizeof(g->read_secret[0])) {
        g->hook_failed = 1;
        return -1;
    }
    /* Read and write may come in separate calls for one level. */
    if (read_secret != NULL) {
        memcpy(g->read_secret[level], read_secret, len);
        g->read_len[level] = len;
        g->have_read[level] = 1;
    }
    if (write_secret != NULL) {
        memcpy(g->write_secret[level], write_secret, len);
        g->write_len[level] = len;
        g->have_write[level] = 1;
    }
    return 0;
}

/* Appends len bytes to level's queue, growing it (doubling) when full. A user may take the
   buffer (out[level] = NULL, out_len[level] = 0): a new one is made then. */
static int queue(struct gq_peer *g, unsigned level, const void *data, size_t len)
{
    if (g->out[level] == NULL)
        g->out_cap[level] = 0;
    if (len > g->out_cap[level] - g->out_len[level]) {
        size_t cap = g->out_cap[level] ? g->out_cap[level] : 1024;
        while (cap - g->out_len[level] < len)
            cap *= 2;
        uint8_t *nb = realloc(g->out[level], cap);
        if (nb == NULL)
            return 0;
        g->out[level] = nb;
        g->out_cap[level] = cap;
    }
    memcpy(g->out[level] + g->out_len[level], data, len);
    g->out_len[level] += len;
    return 1;
}

static int gq_out(gnutls_session_t session, gnutls_record_encryption_level_t level,
                  gnutls_handshake_description_t htype, const void *data, size_t len)
{
    struct gq_peer *g = gnutls_session_get_ptr(session);
    if (htype == GNUTLS_HANDSHAKE_CHANGE_CIPHER_SPEC) /* never on the wire in QUIC */
        return 0;
    if ((unsigned)level >= GQ_LEVELS) {
        g->hook_failed = 1;
        return -1;
    }
    if (g->on_message != NULL)
        g->on_message(g, htype, data, len);
    if (!queue(g, (unsigned)level, data, len)) {
        g->hook_failed = 1;
        return -1;
    }
    return 0;
}

/* Called with the alert GnuTLS would send (in QUIC: a CONNECTION_CLOSE). */
static int gq_alert(gnutls_session_t session, gnutls_record_encryption_level_t level,
                    gnutls_alert_level_t alert_level, gnutls_alert_description_t desc)
{
    struct gq_peer *g = gnutls_session_get_ptr(session);
    g->alerts++;
    g->alert_desc = (int)desc;
    g->alert_level = (int)level;
    return 0;
}

static int gq_tp_recv(gnutls_session_t session, const unsigned char *data, size_t len)
{
    struct gq_peer *g = gnutls_session_get_ptr(session);
    if (len > sizeof(g->peer_tp))
        return GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
    memcpy(g->peer_tp, data, len);
    g->peer_tp_len = len;
    g->tp_received = 1;
    return 0;
}

static int gq_tp_send(gnutls_session_t session, gnutls_buffer_t extdata)
{
    struct gq_peer *g = gnutls_session_get_ptr(session);
    int r = gnutls_buffer_append_data(extdata, g->own_tp, g->own_tp_len);
    return r < 0 ? r : (int)g->own_tp_len;
}

/* No TLS record is ever read or written: QUIC carries the handshake. */
static ssize_t gq_pull(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
    struct gq_peer *g = ptr;
    gnutls_transport_set_errno(g->session, EAGAIN);
    return -1;
}

static ssize_t gq_push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
    struct gq_peer *g = ptr;
    g->pushed++;
    gnutls_transport_set_errno(g->session, EIO);
    return -1;
}

int gq_peer_attach(struct gq_peer *g, gnutls_session_t session, int is_server, const uint8_t *tp,
                   size_t tp_len)
{
    g->session = session;
    g->is_server = is_server;
    g->own_tp = tp;
    g->own_tp_len = tp_len;
    gnutls_session_set_ptr(session, g);
    gnutls_transport_set_ptr(session, g);
    gnutls_transport_set_pull_function(session, gq_pull);
    gnutls_transport_set_push_function(session, gq_push);
    gnutls_handshake_set_secret_function(session, gq_secret);
    gnutls_handshake_set_read_function(session, gq_out);
    gnutls_alert_set_read_function(session, gq_alert);
    return gnutls_session_ext_register(session, "QUIC Transport Parameters",
                                       TLSEXT_QUIC_TRANSPORT_PARAMETERS, GNUTLS_EXT_TLS,
                                       gq_tp_recv, gq_tp_send, NULL, NULL, NULL,
                                       GNUTLS_EXT_FLAG_TLS | GNUTLS_EXT_FLAG_CLIENT_HELLO |
                                           GNUTLS_EXT_FLAG_EE);
}

void gq_peer_reset(struct gq_peer *g)
{
    uint8_t *out[GQ_LEVELS];
    size_t cap[GQ_LEVELS];
    void (*on_message)(struct gq_peer *, gnutls_handshake_description_t, const uint8_t *,
                       size_t) = g->on_message;
    memcpy(out, g->out, sizeof(out));
    memcpy(cap, g->out_cap, sizeof(cap));
    memset(g, 0, sizeof(*g));
    memcpy(g->out, out, sizeof(out));
    memcpy(g->out_cap, cap, sizeof(cap));
    g->on_message = on_message;
}

void gq_peer_free(struct gq_peer *g)
{
    for (int i = 0; i < GQ_LEVELS; i++) {
        free(g->out[i]);
        g->out[i] = NULL;
        g->out_len[i] = g->out_cap[i] = 0;
    }
}
