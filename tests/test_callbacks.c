/*
 * Callbacks and handshake facts (callbacks.c): the info and message callbacks as OpenSSL runs
 * them, SSL_get_state, the Finished messages and randoms, SSL_new_session_ticket, and the
 * settings TLS 1.3 over QUIC does not have (NPN, post-handshake authentication).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "internal.h"
#include "base/base.h"
#include "mock_quic.h"

#define MAX_EVENTS 64

struct info_event {
    const SSL *ssl;
    int where, ret;
};

struct msg_event {
    int write_p, version, content_type;
    uint8_t first;
    size_t len;
    uint8_t bytes[2048];
};

struct log {
    struct info_event info[MAX_EVENTS];
    int n_info;
    struct msg_event msg[MAX_EVENTS];
    int n_msg;
};

static struct log c_log, s_log; /* client, server */
static int n_new_sessions;

static void info_cb(const SSL *s, int where, int ret)
{
    struct log *l = SSL_is_server((SSL *)s) ? &s_log : &c_log;
    if (l->n_info < MAX_EVENTS)
        l->info[l->n_info++] = (struct info_event){s, where, ret};
}

static void msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
                   SSL *ssl, void *arg)
{
    struct log *l = arg;
    if (l->n_msg >= MAX_EVENTS)
        return;
    struct msg_event *e = &l->msg[l->n_msg++];
    *e = (struct msg_event){write_p, version, content_type, ((const uint8_t *)buf)[0], len, {0}};
    memcpy(e->bytes, buf, len < sizeof(e->bytes) ? len : sizeof(e->bytes));
}

static int new_session_cb(SSL *ssl, SSL_SESSION *s)
{
    n_new_sessions++;
    return 0;
}

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx("ecdsa256");
    if (f->cctx == NULL || f->sctx == NULL)
        return -1;
    memset(&c_log, 0, sizeof(c_log));
    memset(&s_log, 0, sizeof(s_log));
    n_new_sessions = 0;
    SSL_CTX_sess_set_new_cb(f->cctx, new_session_cb);
    SSL_CTX_set_session_cache_mode(f->cctx, SSL_SESS_CACHE_CLIENT);
    ERR_clear_error();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    free(f);
    ERR_clear_error();
    return 0;
}

static int count_info(const struct log *l, int where, int ret)
{
    int n = 0;
    for (int i = 0; i < l->n_info; i++)
        n += l->info[i].where == where && (ret == 99 || l->info[i].ret == ret);
    return n;
}

/* The context's info callback runs when the connection has none; SSL_get_ reports its own. */
static void info_callback_runs_as_openssl(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_info_callback(f->cctx, info_cb);
    SSL_CTX_set_info_callback(f->sctx, info_cb);
    assert_ptr_equal(SSL_CTX_get_info_callback(f->cctx), info_cb);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_null(SSL_get_info_callback(f->p.client.ssl));
    assert_true(mock_handshake(&f->p, 0));
    for (int side = 0; side < 2; side++) {
        const struct log *l = side ? &s_log : &c_log;
        int loop = side ? SSL_CB_ACCEPT_LOOP : SSL_CB_CONNECT_LOOP;
        int exit_ = side ? SSL_CB_ACCEPT_EXIT : SSL_CB_CONNECT_EXIT;
        assert_true(l->n_info > 4);
        assert_int_equal(l->info[0].where, SSL_CB_HANDSHAKE_START);
        assert_int_equal(count_info(l, SSL_CB_HANDSHAKE_START, 99), 1);
        assert_true(count_info(l, loop, 1) >= 4);
        assert_int_equal(count_info(l, SSL_CB_HANDSHAKE_DONE, 1), 1);
        assert_true(count_info(l, exit_, -1) >= 1); /* it waited for the peer */
        /* the last two: done, then the exit with SSL_do_handshake's return value */
        assert_int_equal(l->info[l->n_info - 2].where, SSL_CB_HANDSHAKE_DONE);
        assert_int_equal(l->info[l->n_info - 1].where, exit_);
        assert_int_equal(l->info[l->n_info - 1].ret, 1);
        assert_int_equal(count_info(l, SSL_CB_WRITE_ALERT, 99), 0);
    }
    /* the connection's own callback replaces the context's */
    mock_pair_free(&f->p);
    memset(&c_log, 0, sizeof(c_log));
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_CTX_set_info_callback(f->cctx, NULL);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(c_log.n_info, 0);
    SSL_set_info_callback(f->p.client.ssl, info_cb);
    assert_ptr_equal(SSL_get_info_callback(f->p.client.ssl), info_cb);
}

static int find_msg(const struct log *l, int write_p, uint8_t type)
{
    for (int i = 0; i < l->n_msg; i++)
        if (l->msg[i].write_p == write_p && l->msg[i].content_type == SSL3_RT_HANDSHAKE &&
            l->msg[i].first == type)
            return i;
    return -1;
}

/* Every handshake message, sent and received, whole, as SSL3_RT_HANDSHAKE of TLS 1.3. */
static void msg_callback_sees_every_handshake_message(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_msg_callback(f->cctx, msg_cb);
    SSL_CTX_set_msg_callback_arg(f->cctx, &c_log);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_set_msg_callback(f->p.server.ssl, msg_cb);
    SSL_set_msg_callback_arg(f->p.server.ssl, &s_log);
    assert_true(mock_handshake(&f->p, 0));
    static const uint8_t client_order[][2] = {{1, 1}, {0, 2}, {0, 8}, {0, 11}, {0, 15},
                                              {0, 20}, {1, 20}, {0, 4}, {0, 4}};
    assert_int_equal(c_log.n_msg, 9);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(c_log.msg[i].write_p, client_order[i][0]);
        assert_int_equal(c_log.msg[i].first, client_order[i][1]);
        assert_int_equal(c_log.msg[i].version, TLS1_3_VERSION);
        assert_int_equal(c_log.msg[i].content_type, SSL3_RT_HANDSHAKE);
        /* the length in the header matches the whole message handed over */
        const uint8_t *b = c_log.msg[i].bytes;
        assert_int_equal(c_log.msg[i].len, 4 + ((size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3]));
    }
    /* what one side sent is what the other received, byte for byte */
    static const uint8_t types[] = {1, 2, 8, 11, 15, 20};
    for (size_t t = 0; t < sizeof(types); t++) {
        int sent_by_client = types[t] == 1;
        const struct log *from = sent_by_client ? &c_log : &s_log, *to = sent_by_client ? &s_log : &c_log;
        int a = find_msg(from, 1, types[t]), b = find_msg(to, 0, types[t]);
        assert_true(a >= 0 && b >= 0);
        assert_int_equal(from->msg[a].len, to->msg[b].len);
        assert_memory_equal(from->msg[a].bytes, to->msg[b].bytes, from->msg[a].len);
    }
    assert_true(find_msg(&s_log, 1, 4) >= 0); /* the server's tickets */
    assert_true(find_msg(&s_log, 0, 20) >= 0);
}

/* A fatal alert: SSL_CB_WRITE_ALERT with level << 8 | description, and an SSL3_RT_ALERT record. */
static void alert_is_reported_to_both_callbacks(void **state)
{
    struct fixture *f = *state;
    static const uint8_t other[] = {2, 'h', '2'};
    SSL_CTX_set_info_callback(f->sctx, info_cb);
    SSL_CTX_set_msg_callback(f->sctx, msg_cb);
    SSL_CTX_set_msg_callback_arg(f->sctx, &s_log);
    assert_int_equal(SSL_CTX_set_alpn_protos(f->cctx, other, sizeof(other)), 0);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
    assert_int_equal(count_info(&s_log, SSL_CB_WRITE_ALERT,
                                SSL3_AL_FATAL << 8 | SSL_AD_NO_APPLICATION_PROTOCOL),
                     1);
    assert_int_equal(count_info(&s_log, SSL_CB_ACCEPT_EXIT, -1), 1);
    assert_int_equal(count_info(&s_log, SSL_CB_HANDSHAKE_DONE, 99), 0);
    const struct msg_event *last = &s_log.msg[s_log.n_msg - 1];
    assert_int_equal(last->content_type, SSL3_RT_ALERT);
    assert_int_equal(last->write_p, 1);
    assert_int_equal(last->len, 2);
    assert_int_equal(last->bytes[0], SSL3_AL_FATAL);
    assert_int_equal(last->bytes[1], SSL_AD_NO_APPLICATION_PROTOCOL);
}

static void state_follows_the_handshake(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_get_state(f->p.client.ssl), TLS_ST_BEFORE);
    assert_int_equal(SSL_get_state(f->p.server.ssl), TLS_ST_BEFORE);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_int_equal(SSL_get_state(f->p.client.ssl), TLS_ST_CW_CLNT_HELLO);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    assert_int_equal(SSL_get_state(f->p.server.ssl), TLS_ST_SW_FINISHED);
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), 1);
    assert_int_equal(SSL_get_state(f->p.client.ssl), TLS_ST_OK);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), 1);
    assert_int_equal(SSL_get_state(f->p.server.ssl), TLS_ST_OK);
}

/* Our Finished is the peer's peer Finished; the randoms agree on both sides. */
static void finished_and_randoms_agree(void **state)
{
    struct fixture *f = *state;
    uint8_t a[64], b[64], small[4];
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_get_finished(f->p.client.ssl, a, sizeof(a)), 0);
    assert_true(mock_handshake(&f->p, 0));
    SSL *c = f->p.client.ssl, *s = f->p.server.ssl;
    assert_int_equal(SSL_get_finished(c, a, sizeof(a)), 32); /* SHA-256 suite */
    assert_int_equal(SSL_get_peer_finished(s, b, sizeof(b)), 32);
    assert_memory_equal(a, b, 32);
    assert_int_equal(SSL_get_finished(s, a, sizeof(a)), 32);
    assert_int_equal(SSL_get_peer_finished(c, b, sizeof(b)), 32);
    assert_memory_equal(a, b, 32);
    assert_int_equal(SSL_get_finished(c, small, sizeof(small)), 32); /* full length, 4 copied */
    assert_int_equal(SSL_get_finished(c, NULL, 0), 32);
    assert_int_equal(SSL_get_server_random(c, NULL, 0), 32);
    assert_int_equal(SSL_get_server_random(c, a, sizeof(a)), 32);
    assert_int_equal(SSL_get_server_random(s, b, sizeof(b)), 32);
    assert_memory_equal(a, b, 32);
    static const uint8_t zeros[32];
    assert_memory_not_equal(a, zeros, 32);
    assert_int_equal(SSL_get_client_random(c, a, sizeof(a)), 32);
    assert_int_equal(SSL_get_client_random(s, b, sizeof(b)), 32);
    assert_memory_equal(a, b, 32);
}

/* After a HelloRetryRequest the server random is the ServerHello's, not the HRR constant. */
static void server_random_skips_the_hello_retry_request(void **state)
{
    struct fixture *f = *state;
    uint8_t a[32], b[32];
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-384"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-384"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_server_random(f->p.client.ssl, a, sizeof(a)), 32);
    assert_int_equal(SSL_get_server_random(f->p.server.ssl, b, sizeof(b)), 32);
    assert_memory_equal(a, b, 32);
    /* RFC 8446 §4.1.3's HRR random starts CF 21 AD 74 E5 9A 61 11; a real random starts with
     * 0xcf once in 256 handshakes, so the whole prefix is compared, not the first byte. */
    static const uint8_t hrr[8] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11};
    assert_true(memcmp(a, hrr, sizeof(hrr)) != 0);
}

/* One more ticket after the handshake, sent at the next SSL_do_handshake. */
static void new_session_ticket_after_the_handshake(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(n_new_sessions, 2);
    int adds = f->p.server.add_calls, flushes = f->p.server.flushes;
    assert_int_equal(SSL_new_session_ticket(f->p.server.ssl), 1);
    assert_int_equal(f->p.server.add_calls, adds); /* queued only */
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), 1);
    assert_int_equal(f->p.server.add_calls, adds + 1);
    assert_int_equal(f->p.server.flushes, flushes + 1);
    assert_true(f->p.server.out_len[ssl_encryption_application] > 0);
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    assert_int_equal(SSL_process_quic_post_handshake(f->p.client.ssl), 1);
    assert_int_equal(n_new_sessions, 3);
    /* nothing queued: nothing sent */
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), 1);
    assert_int_equal(f->p.server.add_calls, adds + 1);
    /* a client cannot issue tickets */
    ERR_clear_error();
    assert_int_equal(SSL_new_session_ticket(f->p.client.ssl), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()),
                     ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED));
}

/* Before or during the handshake: one more ticket with the others. */
static void new_session_ticket_before_the_handshake(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_new_session_ticket(f->p.server.ssl), 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(n_new_sessions, 3);
}

static int npn_called;
static int npn_adv(SSL *s, const unsigned char **out, unsigned int *outlen, void *arg)
{
    npn_called++;
    return SSL_TLSEXT_ERR_OK;
}
static int npn_sel(SSL *s, unsigned char **out, unsigned char *outlen, const unsigned char *in,
                   unsigned int inlen, void *arg)
{
    npn_called++;
    return SSL_TLSEXT_ERR_OK;
}

/* NPN does not exist in TLS 1.3: accepted, never called, nothing negotiated. */
static void npn_is_accepted_and_never_called(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_next_protos_advertised_cb(f->sctx, npn_adv, NULL);
    SSL_CTX_set_next_proto_select_cb(f->cctx, npn_sel, NULL);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(npn_called, 0);
    const unsigned char *p = (const unsigned char *)"x";
    unsigned int len = 7;
    SSL_get0_next_proto_negotiated(f->p.client.ssl, &p, &len);
    assert_null(p);
    assert_int_equal(len, 0);
}

/* RFC 9001 §4.4: no post-handshake authentication in QUIC. */
static void post_handshake_auth_has_no_effect_and_cannot_be_used(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_post_handshake_auth(f->cctx, 1);
    SSL_CTX_set_msg_callback(f->cctx, msg_cb);
    SSL_CTX_set_msg_callback_arg(f->cctx, &c_log);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_set_post_handshake_auth(f->p.client.ssl, 1);
    assert_true(mock_handshake(&f->p, 0));
    /* the ClientHello offers no post_handshake_auth extension (49) */
    int ch = find_msg(&c_log, 1, HT_CLIENT_HELLO);
    assert_true(ch >= 0);
    const struct msg_event *m = &c_log.msg[ch];
    struct rd r, body, exts, e;
    uint16_t v, type;
    rd_init(&r, m->bytes + 4, m->len - 4);
    assert_true(rd_u16(&r, &v) && rd_bytes(&r, 32, &body) && rd_vec8(&r, &body) && rd_vec16(&r, &body) &&
                rd_vec8(&r, &body) && rd_vec16(&r, &exts));
    while (!rd_empty(&exts)) {
        assert_true(rd_u16(&exts, &type) && rd_vec16(&exts, &e));
        assert_int_not_equal(type, 49);
    }
    ERR_clear_error();
    assert_int_equal(SSL_verify_client_post_handshake(f->p.server.ssl), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(info_callback_runs_as_openssl),
        T(msg_callback_sees_every_handshake_message),
        T(alert_is_reported_to_both_callbacks),
        T(state_follows_the_handshake),
        T(finished_and_randoms_agree),
        T(server_random_skips_the_hello_retry_request),
        T(new_session_ticket_after_the_handshake),
        T(new_session_ticket_before_the_handshake),
        T(npn_is_accepted_and_never_called),
        T(post_handshake_auth_has_no_effect_and_cannot_be_used),
#undef T
    };
    return cmocka_run_group_tests_name("callbacks", tests, NULL, NULL);
}
