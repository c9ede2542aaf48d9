/*
 * A qtls connection driven through OpenSSL 3.5's QUIC API (tests/helpers/stack35.c) against
 * GnuTLS 3.7's QUIC mode, an independent TLS 1.3, in both roles and with each suite: both
 * complete, the secrets agree crosswise per level (qtls's yield_secret against GnuTLS's secret
 * function), and the transport parameters cross. The GnuTLS side is set up as in
 * tests/test_gnutls.c (tests/helpers/gnutls: ngtcp2's GnuTLS backend's way).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <openssl/err.h>

#include "gnutls_quic.h"
#include "mock_quic.h"
#include "stack35.h"

static const uint8_t gnutls_tp[] = "GnuTLS transport parameters";

struct gt {
    struct gq_peer p; /* tests/helpers/gnutls: the hooks' view */
    gnutls_certificate_credentials_t cred;
    int done;
};

/*
 * Resumption and 0-RTT on the GnuTLS side, set as tests/test_gnutls.c sets them (ngtcp2's
 * GnuTLS backend's way): a server's ticket key kept across connections, a client's stored
 * session; 0-RTT needs GNUTLS_ENABLE_EARLY_DATA | GNUTLS_NO_END_OF_EARLY_DATA (QUIC has no
 * EndOfEarlyData), and on a server anti-replay and max_early_data_size 0xffffffff (RFC 9001
 * §4.6.1).
 */
struct gt_resume {
    gnutls_datum_t *ticket_key;     /* server: issue and take tickets under this key */
    const gnutls_datum_t *session;  /* client: resume this (gnutls_session_get_data2) */
    int early;                      /* 0-RTT: a server allows and accepts it, a client offers it */
    gnutls_anti_replay_t anti_replay;
};

/* The anti-replay database: every ClientHello new (each test's tickets are used once). */
static int gt_replay_add(void *ptr, time_t expires, const gnutls_datum_t *key,
                         const gnutls_datum_t *data)
{
    return 0;
}

static int gt_init_resume(struct gt *g, int server, const char *cipher,
                          const struct gt_resume *rs);

static int gt_init(struct gt *g, int server, const char *cipher)
{
    return gt_init_resume(g, server, cipher, NULL);
}

static int gt_init_resume(struct gt *g, int server, const char *cipher,
                          const struct gt_resume *rs)
{
    memset(g, 0, sizeof(*g));
    unsigned flags = server ? GNUTLS_SERVER : GNUTLS_CLIENT;
    if (rs != NULL && rs->early)
        flags |= GNUTLS_ENABLE_EARLY_DATA | GNUTLS_NO_END_OF_EARLY_DATA;
    gnutls_session_t session;
    if (gnutls_init(&session, flags) < 0)
        return 0;
    if (gq_peer_attach(&g->p, session, server, gnutls_tp, sizeof(gnutls_tp)) < 0)
        return 0;
    char prio[200];
    snprintf(prio, sizeof(prio),
             "NORMAL:-VERS-ALL:+VERS-TLS1.3:%%DISABLE_TLS13_COMPAT_MODE:-CIPHER-ALL:+%s", cipher);
    if (gnutls_priority_set_direct(g->p.session, prio, NULL) < 0)
        return 0;
    gnutls_datum_t h3 = {(unsigned char *)"h3", 2};
    if (gnutls_alpn_set_protocols(g->p.session, &h3, 1, GNUTLS_ALPN_MANDATORY) < 0 ||
        gnutls_certificate_allocate_credentials(&g->cred) < 0)
        return 0;
    if (server) {
        if (gnutls_certificate_set_x509_key_file(g->cred, mock_cert_path("ecdsa256.pem"),
                                                 mock_cert_path("ecdsa256.key"),
                                                 GNUTLS_X509_FMT_PEM) < 0)
            return 0;
        if (rs != NULL && rs->ticket_key != NULL &&
            ((rs->ticket_key->data == NULL &&
              gnutls_session_ticket_key_generate(rs->ticket_key) < 0) ||
             gnutls_session_ticket_enable_server(g->p.session, rs->ticket_key) < 0))
            return 0;
        if (rs != NULL && rs->early) {
            gnutls_anti_replay_enable(g->p.session, rs->anti_replay);
            if (gnutls_record_set_max_early_data_size(g->p.session, 0xffffffffu) < 0)
                return 0;
        }
    } else {
        if (gnutls_certificate_set_x509_trust_file(g->cred, mock_cert_path("ca.pem"),
                                                   GNUTLS_X509_FMT_PEM) <= 0 ||
            gnutls_server_name_set(g->p.session, GNUTLS_NAME_DNS, "localhost", 9) < 0)
            return 0;
        gnutls_session_set_verify_cert(g->p.session, "localhost", 0);
        if (rs != NULL && rs->session != NULL &&
            gnutls_session_set_data(g->p.session, rs->session->data, rs->session->size) < 0)
            return 0;
    }
    return gnutls_credentials_set(g->p.session, GNUTLS_CRD_CERTIFICATE, g->cred) >= 0;
}

static void gt_free(struct gt *g)
{
    gnutls_deinit(g->p.session);
    gnutls_certificate_free_credentials(g->cred);
    gq_peer_free(&g->p);
}

/* GnuTLS's output to the 3.5 stack's input, as CRYPTO frames would carry it. */
static int gt_to_stack35(struct gt *g, struct stack35 *s)
{
    for (int l = 0; l < 4; l++) {
        if (g->p.out_len[l] == 0)
            continue;
        uint8_t *nb = realloc(s->in[l], s->in_len[l] + g->p.out_len[l]);
        if (nb == NULL)
            return 0;
        memcpy(nb + s->in_len[l], g->p.out[l], g->p.out_len[l]);
        s->in[l] = nb;
        s->in_len[l] += g->p.out_len[l];
        g->p.out_len[l] = 0;
    }
    return 1;
}

static int gt_step(struct gt *g);

/* The 3.5 stack's output to GnuTLS: gnutls_handshake_write, then gnutls_handshake, per level
   (ngtcp2's way: GnuTLS takes a level's data only once it has processed the level before). */
static int stack35_to_gt(struct stack35 *s, struct gt *g)
{
    for (int l = 0; l < 4; l++) {
        if (s->out_len[l] > 0 &&
            (gnutls_handshake_write(g->p.session, (gnutls_record_encryption_level_t)l, s->out[l],
                                    s->out_len[l]) < 0 ||
             !gt_step(g)))
            return 0;
        free(s->out[l]);
        s->out[l] = NULL;
        s->out_len[l] = 0;
    }
    return 1;
}

static int gt_step(struct gt *g)
{
    if (g->done)
        return 1;
    int r = gnutls_handshake(g->p.session);
    if (r == 0)
        g->done = 1;
    return r == 0 || r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED ? 1 : 0;
}

static int run(struct stack35 *s, struct gt *g, int qtls_is_client)
{
    for (int round = 0; round < 16; round++) {
        if (qtls_is_client) {
            if (stack35_step(s) < 0 || !stack35_to_gt(s, g) || !gt_to_stack35(g, s))
                return 0;
        } else {
            if ((round == 0 && !gt_step(g)) || !gt_to_stack35(g, s) || stack35_step(s) < 0 ||
                !stack35_to_gt(s, g))
                return 0;
        }
        if (g->done && SSL_is_init_finished(s->ssl) && stack35_step(s) == 1)
            return 1;
    }
    return 0;
}

static void crosses_with_gnutls(int qtls_is_client)
{
    static const struct {
        const char *openssl, *gnutls;
        size_t len;
    } suites[] = {{"TLS_AES_128_GCM_SHA256", "AES-128-GCM", 32},
                  {"TLS_AES_256_GCM_SHA384", "AES-256-GCM", 48},
                  {"TLS_CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305", 32}};
    for (size_t i = 0; i < 3; i++) {
        SSL_CTX *ctx = qtls_is_client ? stack35_client_ctx() : stack35_server_ctx("ecdsa256");
        assert_non_null(ctx);
        assert_int_equal(SSL_CTX_set_ciphersuites(ctx, suites[i].openssl), 1);
        struct stack35 s;
        struct gt g;
        assert_int_equal(stack35_init(&s, ctx, !qtls_is_client, "qtls-tp"), 1);
        if (qtls_is_client)
            assert_int_equal(SSL_set_tlsext_host_name(s.ssl, "localhost"), 1);
        s.record_max = 1; /* one byte a record */
        assert_int_equal(gt_init(&g, qtls_is_client, suites[i].gnutls), 1);
        assert_int_equal(run(&s, &g, qtls_is_client), 1);
        for (int l = 2; l <= 3; l++) {
            assert_int_equal(s.write_len[l], suites[i].len);
            assert_int_equal(g.p.read_len[l], suites[i].len);
            assert_memory_equal(s.write_secret[l], g.p.read_secret[l], suites[i].len);
            assert_int_equal(s.read_len[l], suites[i].len);
            assert_memory_equal(s.read_secret[l], g.p.write_secret[l], suites[i].len);
        }
        assert_int_equal(s.peer_tp_len, sizeof(gnutls_tp));
        assert_memory_equal(s.peer_tp, gnutls_tp, sizeof(gnutls_tp));
        assert_int_equal(g.p.peer_tp_len, 7);
        assert_memory_equal(g.p.peer_tp, "qtls-tp", 7);
        assert_int_equal(s.release_errors + s.alerts + g.p.alerts, 0);
        gt_free(&g);
        stack35_free(&s);
        SSL_CTX_free(ctx);
    }
}

static void a_35_client_with_a_gnutls_server(void **state) { crosses_with_gnutls(1); }

static void a_35_server_with_a_gnutls_client(void **state) { crosses_with_gnutls(0); }

/* ---- resumption and 0-RTT ---- */

/* One connection between a 3.5 stack and GnuTLS, the secrets compared crosswise per level. */
static void connect_pair(struct stack35 *s, struct gt *g, SSL_CTX *ctx, int qtls_is_client,
                         SSL_SESSION *sess, int qtls_early, const struct gt_resume *rs)
{
    assert_int_equal(stack35_init(s, ctx, !qtls_is_client, "qtls-tp"), 1);
    if (qtls_is_client) {
        assert_int_equal(SSL_set_tlsext_host_name(s->ssl, "localhost"), 1);
        if (sess != NULL)
            assert_int_equal(SSL_set_session(s->ssl, sess), 1);
    }
    if (qtls_early)
        assert_int_equal(SSL_set_quic_tls_early_data_enabled(s->ssl, 1), 1);
    s->record_max = 1;
    assert_int_equal(gt_init_resume(g, qtls_is_client, "AES-128-GCM", rs), 1);
    assert_int_equal(run(s, g, qtls_is_client), 1);
    for (int l = 2; l <= 3; l++) {
        assert_int_equal(s->write_len[l], 32);
        assert_memory_equal(s->write_secret[l], g->p.read_secret[l], 32);
        assert_int_equal(s->read_len[l], 32);
        assert_memory_equal(s->read_secret[l], g->p.write_secret[l], 32);
    }
    assert_int_equal(s->release_errors + s->alerts + g->p.alerts, 0);
}

/* early: 0 none offered, 1 offered and accepted, 2 offered and the server refuses it. */
static void resumes_with_gnutls(int qtls_is_client, int early)
{
    SSL_CTX *ctx = qtls_is_client ? stack35_client_ctx() : stack35_server_ctx("ecdsa256");
    assert_non_null(ctx);
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256"), 1);
    gnutls_datum_t key = {NULL, 0}, stored = {NULL, 0};
    gnutls_anti_replay_t ar;
    assert_int_equal(gnutls_anti_replay_init(&ar), 0);
    gnutls_anti_replay_set_add_function(ar, gt_replay_add);
    struct stack35 s;
    struct gt g;
    /* The first connection: the server's tickets allow 0-RTT when 0-RTT is to be tried. */
    struct gt_resume first = {&key, NULL, early != 0 && qtls_is_client, ar};
    connect_pair(&s, &g, ctx, qtls_is_client, NULL, early != 0 && !qtls_is_client, &first);
    assert_int_equal(SSL_session_reused(s.ssl), 0);
    SSL_SESSION *sess = NULL;
    if (qtls_is_client) {
        sess = SSL_get1_session(s.ssl); /* the GnuTLS ticket, through SSL_read */
        assert_non_null(sess);
        assert_int_equal(SSL_SESSION_is_resumable(sess), 1);
        assert_int_equal(SSL_SESSION_get_max_early_data(sess), early ? 0xffffffffu : 0);
    } else {
        assert_true(gnutls_session_get_flags(g.p.session) & GNUTLS_SFLAGS_SESSION_TICKET);
        assert_int_equal(gnutls_session_get_data2(g.p.session, &stored), 0);
    }
    gt_free(&g);
    stack35_free(&s);
    /* The second: resumed, 0-RTT offered by the client, taken or refused by the server. */
    struct gt_resume again = {&key, &stored, qtls_is_client ? early == 1 : early != 0, ar};
    connect_pair(&s, &g, ctx, qtls_is_client, sess, qtls_is_client ? early != 0 : early == 1,
                 &again);
    assert_int_equal(SSL_session_reused(s.ssl), 1);
    assert_true(gnutls_session_is_resumed(g.p.session));
    int accepted = (gnutls_session_get_flags(g.p.session) & GNUTLS_SFLAGS_EARLY_DATA) != 0;
    assert_int_equal(accepted, early == 1);
    assert_int_equal(SSL_get_early_data_status(s.ssl),
                     early == 0   ? SSL_EARLY_DATA_NOT_SENT
                     : early == 1 ? SSL_EARLY_DATA_ACCEPTED
                                  : SSL_EARLY_DATA_REJECTED);
    if (early == 1) { /* the client's 0-RTT write key is the server's 0-RTT read key */
        if (qtls_is_client) {
            assert_int_equal(s.write_len[1], 32);
            assert_memory_equal(s.write_secret[1], g.p.read_secret[1], 32);
        } else {
            assert_int_equal(s.read_len[1], 32);
            assert_memory_equal(s.read_secret[1], g.p.write_secret[1], 32);
        }
    } else {
        assert_int_equal(qtls_is_client ? g.p.read_len[1] : s.read_len[1], 0);
    }
    gt_free(&g);
    stack35_free(&s);
    SSL_SESSION_free(sess);
    gnutls_free(key.data);
    gnutls_free(stored.data);
    gnutls_anti_replay_deinit(ar);
    SSL_CTX_free(ctx);
}

static void a_35_client_resumes_with_a_gnutls_ticket(void **state) { resumes_with_gnutls(1, 0); }
static void a_35_client_gets_0rtt_accepted_by_gnutls(void **state) { resumes_with_gnutls(1, 1); }
static void a_35_client_gets_0rtt_rejected_by_gnutls(void **state) { resumes_with_gnutls(1, 2); }
static void a_gnutls_client_resumes_with_a_35_ticket(void **state) { resumes_with_gnutls(0, 0); }
static void a_35_server_accepts_0rtt_from_gnutls(void **state) { resumes_with_gnutls(0, 1); }
static void a_35_server_rejects_0rtt_from_gnutls(void **state) { resumes_with_gnutls(0, 2); }

int main(void)
{
    if (gnutls_global_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_35_client_with_a_gnutls_server),
        cmocka_unit_test(a_35_server_with_a_gnutls_client),
        cmocka_unit_test(a_35_client_resumes_with_a_gnutls_ticket),
        cmocka_unit_test(a_35_client_gets_0rtt_accepted_by_gnutls),
        cmocka_unit_test(a_35_client_gets_0rtt_rejected_by_gnutls),
        cmocka_unit_test(a_gnutls_client_resumes_with_a_35_ticket),
        cmocka_unit_test(a_35_server_accepts_0rtt_from_gnutls),
        cmocka_unit_test(a_35_server_rejects_0rtt_from_gnutls),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    gnutls_global_deinit();
    return failed;
}
