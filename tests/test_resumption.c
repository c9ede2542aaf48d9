/*
 * Sessions end to end through the public API: tickets delivered to the
 * application, resumption, 0-RTT with the QUIC rules and each reason to
 * refuse it, ticket callbacks, and client certificates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "internal.h"
#include "mock_quic.h"

#define MAX_SESSIONS 8

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
};

/* Sessions handed to the client's new-session callback, newest last. */
static SSL_SESSION *sessions[MAX_SESSIONS];
static int n_sessions;

static int new_session_cb(SSL *ssl, SSL_SESSION *s)
{
    if (n_sessions >= MAX_SESSIONS)
        return 0;
    sessions[n_sessions++] = s;
    return 1; /* we keep the reference */
}

static void drop_sessions(void)
{
    for (int i = 0; i < n_sessions; i++)
        SSL_SESSION_free(sessions[i]);
    n_sessions = 0;
}

static int setup(void **state)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    ERR_clear_error();
    f.cctx = mock_client_ctx();
    f.sctx = mock_server_ctx("ecdsa256");
    if (f.cctx == NULL || f.sctx == NULL)
        return -1;
    SSL_CTX_set_session_cache_mode(f.cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(f.cctx, new_session_cb);
    SSL_CTX_set_max_early_data(f.sctx, UINT32_MAX);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    drop_sessions();
    ERR_clear_error();
    return 0;
}

/* A first handshake that leaves a ticket in sessions[]. */
static SSL_SESSION *first_handshake(struct fixture *f)
{
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 0);
    mock_pair_free(&f->p);
    assert_true(n_sessions > 0);
    return sessions[n_sessions - 1];
}

/* A second connection offering `s`, with 0-RTT enabled on both sides when `early`. */
static int resume(struct fixture *f, SSL_SESSION *s, int early)
{
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    if (early) {
        SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
        SSL_set_quic_early_data_enabled(f->p.server.ssl, 1);
    }
    return mock_handshake(&f->p, 0);
}

static void server_sends_two_tickets_and_client_delivers_each(void **state)
{
    struct fixture *f = *state;
    first_handshake(f);
    assert_int_equal(n_sessions, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(SSL_SESSION_is_resumable(sessions[i]), 1);
        assert_int_equal(SSL_SESSION_get_max_early_data(sessions[i]), UINT32_MAX);
        assert_int_equal(SSL_CIPHER_get_id(SSL_SESSION_get0_cipher(sessions[i])), 0x03001301);
    }
    /* Tickets are distinct. */
    const unsigned char *t0, *t1;
    size_t l0, l1;
    SSL_SESSION_get0_ticket(sessions[0], &t0, &l0);
    SSL_SESSION_get0_ticket(sessions[1], &t1, &l1);
    assert_true(l0 != l1 || memcmp(t0, t1, l0) != 0);
}

static void num_tickets_is_honoured(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set_num_tickets(f->sctx, 3), 1);
    first_handshake(f);
    assert_int_equal(n_sessions, 3);
    drop_sessions();
    assert_int_equal(SSL_CTX_set_num_tickets(f->sctx, 0), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(n_sessions, 0);
}

/*
 * The server derives every ticket's PSK from resumption_master_secret. SSL_new_session_ticket
 * may ask for another ticket at any time after the handshake, so, as OpenSSL, the server keeps
 * the secret until SSL_free wipes it; but not when no ticket can ever be sent (SSL_OP_NO_TICKET):
 * then a later memory disclosure finds nothing. The client keeps it: tickets may reach it at any
 * time.
 */
static void server_keeps_the_resumption_secret_only_while_tickets_may_follow(void **state)
{
    struct fixture *f = *state;
    static const uint8_t zeros[sizeof(((SSL *)0)->resumption_secret.b)];
    first_handshake(f);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.ssl->resumption_secret.len, 32);
    assert_int_equal(f->p.client.ssl->resumption_secret.len, 32);
    mock_pair_free(&f->p);
    SSL_CTX_set_options(f->sctx, SSL_OP_NO_TICKET);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.ssl->resumption_secret.len, 0);
    assert_memory_equal(f->p.server.ssl->resumption_secret.b, zeros, sizeof(zeros));
}

/* RFC 8446 §2.2: a resumed handshake has no certificate messages and both sides know it. */
static void resumed_handshake_skips_certificates(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(resume(f, s, 0));
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_NOT_SENT);
    assert_false(f->p.client.have_write[ssl_encryption_early_data]);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl), ssl_early_data_disabled);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl), ssl_early_data_disabled);
    /* The resumed connection got a fresh ticket too: one, as OpenSSL sends after a resumption
       whatever SSL_CTX_set_num_tickets says (2 after the first handshake). */
    assert_int_equal(n_sessions, 3);
}

/* RFC 9001 §4.6.1: 0-RTT keys, write-only on the client, read-only on the server, equal. */
static void zero_rtt_is_accepted_with_equal_early_secrets(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(resume(f, s, 1));
    struct mock_side *c = &f->p.client, *sv = &f->p.server;
    assert_true(c->have_write[ssl_encryption_early_data]);
    assert_false(c->have_read[ssl_encryption_early_data]);
    assert_true(sv->have_read[ssl_encryption_early_data]);
    assert_false(sv->have_write[ssl_encryption_early_data]);
    assert_memory_equal(c->write_secret[ssl_encryption_early_data],
                        sv->read_secret[ssl_encryption_early_data], 32);
    assert_int_equal(c->cipher_id_at_secret[ssl_encryption_early_data], 0x03001301);
    assert_int_equal(SSL_get_early_data_status(c->ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_int_equal(SSL_get_early_data_status(sv->ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_int_equal(SSL_session_reused(c->ssl), 1);
    assert_int_equal(SSL_get_early_data_reason(c->ssl), ssl_early_data_accepted);
    assert_int_equal(SSL_get_early_data_reason(sv->ssl), ssl_early_data_accepted);
}

/* RFC 8701: a qtls server ignores the GREASE PSK mode (and the rest) and resumes with 0-RTT. */
static void grease_client_resumes_with_zero_rtt(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_grease_enabled(f->cctx, 1);
    SSL_SESSION *s = first_handshake(f);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
}

/* The extension types of each NewSessionTicket the client received (msg callback). */
static uint16_t nst_ext_types[MAX_SESSIONS][4];
static size_t nst_ext_bodies[MAX_SESSIONS][4], nst_n_exts[MAX_SESSIONS], nst_seen;

static void watch_tickets(int write_p, int version, int type, const void *buf, size_t len,
                          SSL *ssl, void *arg)
{
    struct rd r, nonce, ticket, exts, body;
    uint8_t mt;
    uint32_t len24, lifetime, age_add;
    uint16_t ext;
    if (write_p || type != SSL3_RT_HANDSHAKE || nst_seen >= MAX_SESSIONS)
        return;
    rd_init(&r, buf, len);
    if (!rd_u8(&r, &mt) || mt != SSL3_MT_NEWSESSION_TICKET || !rd_u24(&r, &len24) ||
        !rd_u32(&r, &lifetime) || !rd_u32(&r, &age_add) || !rd_vec8(&r, &nonce) ||
        !rd_vec16(&r, &ticket) || !rd_vec16(&r, &exts))
        return;
    size_t i = nst_seen++;
    while (nst_n_exts[i] < 4 && rd_u16(&exts, &ext) && rd_vec16(&exts, &body)) {
        nst_ext_types[i][nst_n_exts[i]] = ext;
        nst_ext_bodies[i][nst_n_exts[i]++] = body.n;
    }
}

static int is_grease(uint16_t v) { return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff); }

/*
 * RFC 8701 §3.2: a GREASEing server puts one empty GREASE extension in each NewSessionTicket,
 * after early_data; a qtls client ignores it, keeps the ticket and resumes with 0-RTT. Without
 * GREASE (the default) only early_data is there.
 */
static void grease_server_tickets_carry_one_ignored_grease_extension(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_msg_callback(f->cctx, watch_tickets);
    for (int grease = 0; grease <= 1; grease++) {
        nst_seen = 0;
        memset(nst_n_exts, 0, sizeof(nst_n_exts));
        drop_sessions();
        SSL_CTX_set_grease_enabled(f->sctx, grease);
        SSL_SESSION *s = first_handshake(f);
        assert_int_equal(nst_seen, 2);
        assert_int_equal(n_sessions, 2);
        for (size_t i = 0; i < nst_seen; i++) {
            assert_int_equal(nst_n_exts[i], 1 + grease);
            assert_int_equal(nst_ext_types[i][0], TLSEXT_TYPE_early_data);
            if (grease) {
                assert_true(is_grease(nst_ext_types[i][1]));
                assert_int_equal(nst_ext_bodies[i][1], 0);
            }
        }
        assert_true(resume(f, s, 1));
        assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
        assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_ACCEPTED);
        mock_pair_free(&f->p);
    }
}

static void zero_rtt_ticket_is_single_use(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
    mock_pair_free(&f->p);
    /* The same ticket again: resumption is fine, 0-RTT is a replay (RFC 8446 §8.1). */
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_REJECTED);
    /* qtls's replay refusal has no BoringSSL value of its own: the ticket's 0-RTT is spent. */
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl),
                     ssl_early_data_unsupported_for_session);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl), ssl_early_data_peer_declined);
}

static int select_other(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                        const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char other[] = "other";
    *out = other;
    *outlen = 5;
    return SSL_TLSEXT_ERR_OK;
}

static void assert_rejected_but_complete(struct fixture *f)
{
    assert_true(SSL_is_init_finished(f->p.client.ssl));
    assert_true(SSL_is_init_finished(f->p.server.ssl));
    assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_REJECTED);
    assert_false(f->p.server.have_read[ssl_encryption_early_data]);
}

/* Each QUIC reason to refuse 0-RTT ends in a completed 1-RTT handshake (RFC 9001 §4.6.2). */
static void zero_rtt_rejected_when_alpn_changes(void **state)
{
    struct fixture *f = *state;
    static const unsigned char both[] = {2, 'h', '3', 5, 'o', 't', 'h', 'e', 'r'};
    SSL_SESSION *s = first_handshake(f);
    SSL_CTX_set_alpn_select_cb(f->sctx, select_other, NULL);
    assert_int_equal(SSL_CTX_set_alpn_protos(f->cctx, both, sizeof(both)), 0);
    assert_true(resume(f, s, 1));
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl), ssl_early_data_alpn_mismatch);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl), ssl_early_data_peer_declined);
}

/* Replaces the first `len` bytes equal to `from` in the side's output at `level` with `to`. */
static void patch_output(struct mock_side *side, int level, const void *from, const void *to,
                         size_t len)
{
    for (size_t i = 0; i + len <= side->out_len[level]; i++) {
        if (memcmp(side->out[level] + i, from, len) == 0) {
            memcpy(side->out[level] + i, to, len);
            return;
        }
    }
    fail_msg("pattern not found at level %d", level);
}

/*
 * RFC 8446 §4.2.10: a server that accepts 0-RTT must keep the session's
 * ALPN, since the early data was sent for that protocol. The client checks
 * it (illegal_parameter) before anything else can go wrong.
 */
static void zero_rtt_accepted_with_another_alpn_is_illegal_parameter(void **state)
{
    struct fixture *f = *state;
    static const unsigned char both[] = {2, 'h', '3', 2, 'h', 'q'};
    /* ALPN extension of EncryptedExtensions: type 16, length 5, list of one name. */
    static const unsigned char h3[] = {0, 16, 0, 5, 0, 3, 2, 'h', '3'};
    static const unsigned char hq[] = {0, 16, 0, 5, 0, 3, 2, 'h', 'q'};
    SSL_SESSION *s = first_handshake(f);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_alpn_protos(f->p.client.ssl, both, sizeof(both)), 0);
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(f->p.server.ssl, 1);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
    patch_output(&f->p.server, ssl_encryption_handshake, h3, hq, sizeof(h3));
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    ERR_clear_error();
    int r = SSL_do_handshake(f->p.client.ssl);
    assert_int_equal(SSL_get_error(f->p.client.ssl, r), SSL_ERROR_SSL);
    assert_int_equal(f->p.client.alerts_sent, 1);
    assert_int_equal(f->p.client.alert, SSL_AD_ILLEGAL_PARAMETER);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_INCONSISTENT_EARLY_DATA_ALPN);
    ERR_clear_error();
}

static void zero_rtt_rejected_when_sni_changes(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    assert_int_equal(SSL_set_tlsext_host_name(f->p.client.ssl, "server.example"), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(f->p.server.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_rejected_but_complete(f);
}

static void zero_rtt_rejected_when_context_changes(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_quic_early_data_context(f->p.server.ssl, (const uint8_t *)"v1", 2), 1);
    assert_true(mock_handshake(&f->p, 0));
    mock_pair_free(&f->p);
    SSL_SESSION *s = sessions[n_sessions - 1];
    /* The same context: accepted. */
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    assert_int_equal(SSL_set_quic_early_data_context(f->p.server.ssl, (const uint8_t *)"v1", 2), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(f->p.server.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
    mock_pair_free(&f->p);
    /* Another context (new transport parameters, say): rejected. */
    s = sessions[n_sessions - 1];
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    assert_int_equal(SSL_set_quic_early_data_context(f->p.server.ssl, (const uint8_t *)"v2", 2), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(f->p.server.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl),
                     ssl_early_data_quic_parameter_mismatch);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl), ssl_early_data_peer_declined);
}

/* RFC 8446 §4.2.10: no 0-RTT after HelloRetryRequest; resumption still works. */
static void zero_rtt_rejected_after_hello_retry_request(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-256"), 1);
    assert_true(resume(f, s, 1));
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(SSL_get_negotiated_group(f->p.client.ssl), NID_X9_62_prime256v1);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl),
                     ssl_early_data_hello_retry_request);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl),
                     ssl_early_data_hello_retry_request);
}

/* RFC 8446 §8.3: a ticket age far from the server's view refuses 0-RTT, not resumption. */
static void ticket_age_mismatch_rejects_zero_rtt(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(SSL_SESSION_set_time(s, SSL_SESSION_get_time(s) - 8000) != 0);
    assert_true(SSL_SESSION_set_timeout(s, 100000) != 0);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl), ssl_early_data_ticket_age_skew);
}

/* The server's ticket lifetime (SSL_CTX_set_timeout) is enforced by the server. */
static void expired_ticket_means_full_handshake(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_timeout(f->sctx, 1);
    SSL_SESSION *s = first_handshake(f);
    assert_true(SSL_SESSION_set_timeout(s, 100000) != 0); /* the client still offers it */
    sleep(2);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 0);
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 0);
    assert_rejected_but_complete(f);
}

static void ticket_from_another_server_means_full_handshake(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    SSL_CTX_free(f->sctx);
    f->sctx = mock_server_ctx("ecdsa256"); /* new ticket keys */
    SSL_CTX_set_max_early_data(f->sctx, UINT32_MAX);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 0);
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl),
                     ssl_early_data_session_not_resumed);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl),
                     ssl_early_data_session_not_resumed);
}

static void early_data_disabled_on_server_is_rejected(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl), ssl_early_data_disabled);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl), ssl_early_data_peer_declined);
}

/* A server without max_early_data issues tickets that do not allow 0-RTT. */
static void tickets_without_max_early_data_do_not_offer_0rtt(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_max_early_data(f->sctx, 0);
    SSL_SESSION *s = first_handshake(f);
    assert_int_equal(SSL_SESSION_get_max_early_data(s), 0);
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_NOT_SENT);
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(SSL_get_early_data_reason(f->p.client.ssl),
                     ssl_early_data_unsupported_for_session);
    /* A server without max_early_data has 0-RTT disabled, which overrides the rest. */
    assert_int_equal(SSL_get_early_data_reason(f->p.server.ssl), ssl_early_data_disabled);
}

/* BoringSSL's strings, which its test runner compares. */
static void early_data_reason_strings_are_boringssls(void **state)
{
    (void)state;
    assert_string_equal(SSL_early_data_reason_string(ssl_early_data_accepted), "accept");
    assert_string_equal(SSL_early_data_reason_string(ssl_early_data_disabled), "disabled");
    assert_string_equal(SSL_early_data_reason_string(ssl_early_data_quic_parameter_mismatch),
                        "quic_parameter_mismatch");
    assert_null(SSL_early_data_reason_string((enum ssl_early_data_reason_t)11));
    assert_null(SSL_early_data_reason_string((enum ssl_early_data_reason_t)15));
}

/* SSL_CTX_set_reverify_on_resume: the application's verification runs again on resumption. */
static int verify_calls, verify_refuses;
static int counting_verify(X509_STORE_CTX *store, void *arg)
{
    (void)arg;
    verify_calls++;
    if (verify_refuses) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
        return 0;
    }
    return 1;
}

static void reverify_on_resume_runs_the_verification_once(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_cert_verify_callback(f->cctx, counting_verify, NULL);
    SSL_CTX_set_verify(f->cctx, SSL_VERIFY_PEER, NULL);
    verify_calls = verify_refuses = 0;
    SSL_SESSION *s = first_handshake(f);
    assert_int_equal(verify_calls, 1);
    /* Off by default: a resumption trusts the session. */
    assert_true(resume(f, s, 0));
    assert_int_equal(verify_calls, 1);
    mock_pair_free(&f->p);
    SSL_CTX_set_reverify_on_resume(f->cctx, 1);
    /* 1-RTT resumption: once, after EncryptedExtensions. */
    assert_true(resume(f, s, 0));
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(verify_calls, 2);
    mock_pair_free(&f->p);
    /* Accepted 0-RTT: once, before the early keys; not again. */
    s = sessions[n_sessions - 1];
    assert_true(resume(f, s, 1));
    assert_int_equal(SSL_get_early_data_status(f->p.client.ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_int_equal(verify_calls, 3);
    mock_pair_free(&f->p);
    /* Refused: the handshake fails before any 0-RTT key is handed out. */
    s = sessions[n_sessions - 1];
    verify_refuses = 1;
    assert_false(resume(f, s, 1));
    assert_int_equal(verify_calls, 4);
    assert_false(f->p.client.have_write[ssl_encryption_early_data]);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_CERTIFICATE_VERIFY_FAILED);
    ERR_clear_error();
}

/* 0-RTT refused by the server, session resumed: verified before the 0-RTT keys and again. */
static void reverify_on_resume_again_when_zero_rtt_is_rejected(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_cert_verify_callback(f->cctx, counting_verify, NULL);
    SSL_CTX_set_verify(f->cctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_reverify_on_resume(f->cctx, 1);
    verify_calls = verify_refuses = 0;
    SSL_SESSION *s = first_handshake(f);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, s), 1);
    SSL_set_quic_early_data_enabled(f->p.client.ssl, 1); /* the server does not */
    assert_true(mock_handshake(&f->p, 0));
    assert_rejected_but_complete(f);
    assert_int_equal(SSL_session_reused(f->p.client.ssl), 1);
    assert_int_equal(verify_calls, 3);
}

/* ngtcp2 stores its QUIC version in the ticket appdata and refuses tickets that differ. */
static int gen_cb(SSL *ssl, void *arg)
{
    return SSL_SESSION_set1_ticket_appdata(SSL_get_session(ssl), arg, strlen(arg));
}

static int dec_calls;

static SSL_TICKET_RETURN dec_cb(SSL *ssl, SSL_SESSION *s, const unsigned char *keyname,
                                size_t keyname_len, SSL_TICKET_STATUS status, void *arg)
{
    void *data;
    size_t len;
    dec_calls++;
    if (status != SSL_TICKET_SUCCESS && status != SSL_TICKET_SUCCESS_RENEW)
        return SSL_TICKET_RETURN_IGNORE_RENEW;
    if (!SSL_SESSION_get0_ticket_appdata(s, &data, &len) || len != strlen(arg) ||
        memcmp(data, arg, len) != 0)
        return SSL_TICKET_RETURN_IGNORE_RENEW;
    return SSL_TICKET_RETURN_USE;
}

static void ticket_callbacks_carry_appdata(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set_session_ticket_cb(f->sctx, gen_cb, dec_cb, "quic-v1"), 1);
    SSL_SESSION *s = first_handshake(f);
    dec_calls = 0;
    assert_true(resume(f, s, 1));
    assert_int_equal(dec_calls, 1);
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
    mock_pair_free(&f->p);
    /* The server now runs another version: the callback refuses, a full handshake follows. */
    assert_int_equal(SSL_CTX_set_session_ticket_cb(f->sctx, gen_cb, dec_cb, "quic-v2"), 1);
    assert_true(resume(f, sessions[n_sessions - 1], 1));
    assert_int_equal(SSL_session_reused(f->p.server.ssl), 0);
    assert_rejected_but_complete(f);
}

static int gen_huge_appdata(SSL *ssl, void *arg)
{
    static uint8_t big[60000];
    return SSL_SESSION_set1_ticket_appdata(SSL_get_session(ssl), big, sizeof(big));
}

/* A session too large to seal into a ticket means no ticket, not a failed handshake. */
static void oversized_ticket_is_not_sent(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set_session_ticket_cb(f->sctx, gen_huge_appdata, NULL, NULL), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(n_sessions, 0);
    assert_int_equal(f->p.server.alerts_sent, 0);
}

/* A session survives i2d/d2i and resumes with 0-RTT. */
static void serialised_session_resumes(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = first_handshake(f);
    unsigned char *der = NULL;
    int len = i2d_SSL_SESSION(s, &der);
    assert_true(len > 0);
    const unsigned char *p = der;
    SSL_SESSION *back = d2i_SSL_SESSION(NULL, &p, len);
    OPENSSL_free(der);
    assert_non_null(back);
    int before = n_sessions;
    assert_true(resume(f, back, 1));
    assert_int_equal(SSL_get_early_data_status(f->p.server.ssl), SSL_EARLY_DATA_ACCEPTED);
    /* The stored leaf is decoded only when asked for: the handshake did not need it. */
    assert_null(back->peer);
    assert_true(back->peer_der_len > 0);
    /* The tickets of the resumed connection carry the same leaf, still as bytes. */
    assert_true(n_sessions > before);
    SSL_SESSION *next = sessions[n_sessions - 1];
    assert_null(next->peer);
    assert_int_equal(next->peer_der_len, back->peer_der_len);
    assert_memory_equal(next->peer_der, back->peer_der, back->peer_der_len);
    /* Asked for, it is the leaf of the first handshake, as the chain too (leaf only). */
    SSL *c = f->p.client.ssl;
    X509 *leaf = SSL_get0_peer_certificate(c);
    assert_non_null(leaf);
    assert_ptr_equal(leaf, back->peer);
    assert_int_equal(X509_cmp(leaf, SSL_SESSION_get0_peer(s)), 0);
    assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(c)), 1);
    assert_ptr_equal(sk_X509_value(SSL_get_peer_cert_chain(c), 0), leaf);
    X509 *again = SSL_get1_peer_certificate(c);
    assert_ptr_equal(again, leaf);
    X509_free(again);
    assert_ptr_equal(SSL_SESSION_get0_peer(next), SSL_SESSION_get0_peer(next)); /* decoded once */
    SSL_SESSION_free(back);
}

/*
 * A fleet's shared ticket key through SSL_CTX_set_tlsext_ticket_key_evp_cb:
 * fixed here so that another process can open the tickets.
 */
static int fleet_key_cb(SSL *s, unsigned char key_name[16], unsigned char *iv,
                        EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx, int enc)
{
    static const unsigned char name[16] = "qtls-test-fleet";
    static unsigned char aes[32] = {1, 2, 3}, mac[32] = {4, 5, 6};
    OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, mac, 32),
                           OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                           OSSL_PARAM_construct_end()};
    if (enc) {
        memcpy(key_name, name, 16);
        if (RAND_bytes(iv, 16) != 1 ||
            !EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv))
            return -1;
    } else {
        if (memcmp(key_name, name, 16) != 0)
            return 0;
        if (!EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv))
            return -1;
    }
    return EVP_MAC_CTX_set_params(hctx, params) ? 1 : -1;
}

/* The second half of the cross-process test: a new process resumes a stored session. */
static int resume_from_pem(const char *path)
{
    struct fixture f;
    SSL_SESSION *s = NULL;
    FILE *fp = fopen(path, "r");
    int ok = fp != NULL && (s = PEM_read_SSL_SESSION(fp, NULL, NULL, NULL)) != NULL;
    if (fp != NULL)
        fclose(fp);
    memset(&f, 0, sizeof(f));
    f.cctx = mock_client_ctx();
    f.sctx = mock_server_ctx("ecdsa256");
    ok = ok && f.cctx != NULL && f.sctx != NULL &&
         SSL_CTX_set_tlsext_ticket_key_evp_cb(f.sctx, fleet_key_cb);
    SSL_CTX_set_max_early_data(f.sctx, UINT32_MAX);
    ok = ok && mock_pair_init(&f.p, f.cctx, f.sctx) && SSL_set_session(f.p.client.ssl, s);
    if (ok) {
        SSL_set_quic_early_data_enabled(f.p.client.ssl, 1);
        SSL_set_quic_early_data_enabled(f.p.server.ssl, 1);
        ok = mock_handshake(&f.p, 0) && SSL_session_reused(f.p.server.ssl) &&
             SSL_get_early_data_status(f.p.server.ssl) == SSL_EARLY_DATA_ACCEPTED;
    }
    if (!ok)
        ERR_print_errors_fp(stderr);
    SSL_SESSION_free(s);
    mock_pair_free(&f.p);
    SSL_CTX_free(f.cctx);
    SSL_CTX_free(f.sctx);
    return ok ? 0 : 1;
}

static const char *self_path;

/* Sessions stored as PEM resume with 0-RTT in another process sharing the ticket key. */
static void pem_session_resumes_in_a_new_process(void **state)
{
    struct fixture *f = *state;
    char path[] = "/tmp/qtls-session-XXXXXX", cmd[600];
    assert_int_equal(SSL_CTX_set_tlsext_ticket_key_evp_cb(f->sctx, fleet_key_cb), 1);
    SSL_SESSION *s = first_handshake(f);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    assert_int_equal(PEM_write_SSL_SESSION(fp, s), 1);
    fclose(fp);
    snprintf(cmd, sizeof(cmd), "'%s' --resume-from '%s'", self_path, path);
    int rc = system(cmd);
    unlink(path);
    assert_int_equal(rc, 0);
}

static char early_line[300];

static void keylog_early(const SSL *ssl, const char *line)
{
    if (strncmp(line, "CLIENT_EARLY_TRAFFIC_SECRET ", 28) == 0)
        snprintf(early_line, sizeof(early_line), "%s", line);
}

/* The key log carries the 0-RTT secret, equal to the one QUIC received. */
static void key_log_has_the_early_secret(void **state)
{
    struct fixture *f = *state;
    char hex[65];
    SSL_SESSION *s = first_handshake(f);
    early_line[0] = 0;
    SSL_CTX_set_keylog_callback(f->cctx, keylog_early);
    assert_true(resume(f, s, 1));
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", f->p.client.write_secret[ssl_encryption_early_data][i]);
    assert_int_equal(strlen(early_line), 28 + 64 + 1 + 64);
    assert_string_equal(early_line + 28 + 65, hex);
}

/* SSL_quic_max_handshake_flight_len follows SSL_CTX_set_max_cert_list (the contract's table). */
static void flight_limit_follows_max_cert_list(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_max_cert_list(f->cctx, 200000);
    SSL_CTX_set_max_cert_list(f->sctx, 200000);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL *c = f->p.client.ssl, *s = f->p.server.ssl;
    assert_int_equal(SSL_quic_max_handshake_flight_len(c, ssl_encryption_handshake), 400000);
    assert_int_equal(SSL_quic_max_handshake_flight_len(s, ssl_encryption_handshake), 16384);
    SSL_set_verify(s, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_quic_max_handshake_flight_len(s, ssl_encryption_handshake), 200000);
    assert_int_equal(SSL_quic_max_handshake_flight_len(c, ssl_encryption_initial), 16384);
    assert_int_equal(SSL_quic_max_handshake_flight_len(c, ssl_encryption_early_data), 0);
    assert_int_equal(SSL_quic_max_handshake_flight_len(c, ssl_encryption_application), 16384);
}

/* ---- client certificates (RFC 8446 §4.3.2, §4.4.2) ---- */

static void client_certificate_is_verified_by_the_server(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->cctx, mock_cert_path("client.pem")), 1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    X509 *peer = SSL_get1_peer_certificate(f->p.server.ssl);
    assert_non_null(peer);
    X509_free(peer);
    assert_int_equal(SSL_get_verify_result(f->p.server.ssl), X509_V_OK);
}

/* A resumed server's client certificate is the ticket's, decoded when asked for (session.c). */
static void resumed_server_gets_the_client_certificate_of_the_ticket(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->cctx, mock_cert_path("client.pem")), 1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM), 1);
    SSL_SESSION *s = first_handshake(f);
    X509 *want = X509_dup(SSL_CTX_get0_certificate(f->cctx));
    assert_non_null(want);
    assert_true(resume(f, s, 0));
    SSL *server = f->p.server.ssl;
    assert_int_equal(SSL_session_reused(server), 1);
    assert_non_null(server->peer_session); /* not decoded by the handshake */
    assert_null(server->peer_cert);
    X509 *got = SSL_get1_peer_certificate(server);
    assert_non_null(got);
    assert_int_equal(X509_cmp(got, want), 0);
    assert_null(server->peer_session);
    assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(server)), 0); /* server view: no leaf */
    assert_int_equal(SSL_get_verify_result(server), X509_V_OK);
    X509_free(got);
    X509_free(want);
}

static void missing_client_certificate_is_certificate_required(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, 116);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE);
}

static void optional_client_certificate_may_be_absent(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER, NULL);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_null(SSL_get1_peer_certificate(f->p.server.ssl));
}

static void untrusted_client_certificate_is_unknown_ca(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("other-ca.pem"), NULL),
                     1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->cctx, mock_cert_path("client.pem")), 1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_UNKNOWN_CA);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_CERTIFICATE_VERIFY_FAILED);
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc == 3 && strcmp(argv[1], "--resume-from") == 0)
        return resume_from_pem(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pem_session_resumes_in_a_new_process, setup, teardown),
        cmocka_unit_test_setup_teardown(key_log_has_the_early_secret, setup, teardown),
        cmocka_unit_test_setup_teardown(flight_limit_follows_max_cert_list, setup, teardown),
        cmocka_unit_test_setup_teardown(server_sends_two_tickets_and_client_delivers_each, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(num_tickets_is_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(grease_client_resumes_with_zero_rtt, setup, teardown),
        cmocka_unit_test_setup_teardown(grease_server_tickets_carry_one_ignored_grease_extension,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(server_keeps_the_resumption_secret_only_while_tickets_may_follow,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(resumed_handshake_skips_certificates, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_is_accepted_with_equal_early_secrets, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_ticket_is_single_use, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_rejected_when_alpn_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_accepted_with_another_alpn_is_illegal_parameter,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_rejected_when_sni_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_rejected_when_context_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_rtt_rejected_after_hello_retry_request, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(ticket_age_mismatch_rejects_zero_rtt, setup, teardown),
        cmocka_unit_test_setup_teardown(expired_ticket_means_full_handshake, setup, teardown),
        cmocka_unit_test_setup_teardown(ticket_from_another_server_means_full_handshake, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(early_data_disabled_on_server_is_rejected, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(tickets_without_max_early_data_do_not_offer_0rtt, setup,
                                        teardown),
        cmocka_unit_test(early_data_reason_strings_are_boringssls),
        cmocka_unit_test_setup_teardown(reverify_on_resume_runs_the_verification_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reverify_on_resume_again_when_zero_rtt_is_rejected, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(ticket_callbacks_carry_appdata, setup, teardown),
        cmocka_unit_test_setup_teardown(serialised_session_resumes, setup, teardown),
        cmocka_unit_test_setup_teardown(oversized_ticket_is_not_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(client_certificate_is_verified_by_the_server, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(resumed_server_gets_the_client_certificate_of_the_ticket,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(missing_client_certificate_is_certificate_required, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(optional_client_certificate_may_be_absent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(untrusted_client_certificate_is_unknown_ca, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
