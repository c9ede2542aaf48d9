/*
 * OpenSSL 3.5's third-party QUIC API (SSL_set_quic_tls_cbs) as qtls's second front door: the
 * dispatch table and its errors, the rule that one SSL uses one API, and the handshake matrix
 * driven through the 3.5 callbacks (tests/helpers/stack35.c): suites and framing down to one
 * byte a record and a send, groups, HelloRetryRequest, resumption, 0-RTT accepted and
 * rejected, client certificates, alerts, transport parameters. Secrets are compared crosswise
 * (client write == server read per level) between two 3.5 connections and between a 3.5
 * connection and a quictls-API one, in both roles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "internal.h"
#include "base/base.h"
#include "mock_quic.h"
#include "stack35.h"

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct stack35 c, s;
};

static int setup(void **state)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    f.cctx = stack35_client_ctx();
    f.sctx = stack35_server_ctx("ecdsa256");
    if (f.cctx == NULL || f.sctx == NULL)
        return -1;
    ERR_clear_error();
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    stack35_free(&f->c);
    stack35_free(&f->s);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    ERR_clear_error();
    return 0;
}

static void init_pair(struct fixture *f)
{
    stack35_free(&f->c);
    stack35_free(&f->s);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    assert_int_equal(stack35_init(&f->s, f->sctx, 1, "server-tp"), 1);
}

/* Both directions of both levels agree, the parameters crossed, records were released right. */
static void assert_agreed(struct stack35 *c, struct stack35 *s, size_t secret_len)
{
    for (int l = OSSL_RECORD_PROTECTION_LEVEL_HANDSHAKE; l <= 3; l++) {
        assert_int_equal(c->write_len[l], secret_len);
        assert_int_equal(s->read_len[l], secret_len);
        assert_memory_equal(c->write_secret[l], s->read_secret[l], secret_len);
        assert_int_equal(s->write_len[l], secret_len);
        assert_int_equal(c->read_len[l], secret_len);
        assert_memory_equal(s->write_secret[l], c->read_secret[l], secret_len);
    }
    assert_int_equal(c->got_tp_calls, 1);
    assert_int_equal(s->got_tp_calls, 1);
    assert_int_equal(c->peer_tp_len, 9);
    assert_memory_equal(c->peer_tp, "server-tp", 9);
    assert_int_equal(s->peer_tp_len, 9);
    assert_memory_equal(s->peer_tp, "client-tp", 9);
    assert_int_equal(c->release_errors, 0);
    assert_int_equal(s->release_errors, 0);
    assert_int_equal(c->alerts + s->alerts, 0);
}

/* ---- the dispatch table and the front-door rule ---- */

static void a_table_without_any_one_callback_is_refused(void **state)
{
    struct fixture *f = *state;
    for (int skip = 0; skip < 6; skip++) {
        OSSL_DISPATCH table[7];
        int n = 0;
        for (int i = 0; i < 6; i++)
            if (i != skip)
                table[n++] = stack35_dispatch[i];
        table[n] = stack35_dispatch[6];
        SSL *ssl = SSL_new(f->cctx);
        ERR_clear_error();
        assert_int_equal(SSL_set_quic_tls_cbs(ssl, table, NULL), 0);
        assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_MISSING_QUIC_TLS_FUNCTIONS);
        /* A refused table leaves the SSL free for either API. */
        assert_int_equal(SSL_set_quic_method(ssl, &mock_quic_method), 1);
        SSL_free(ssl);
    }
    ERR_clear_error();
}

static void the_first_entry_of_an_id_wins_and_unknown_ids_are_skipped(void **state)
{
    struct fixture *f = *state;
    OSSL_DISPATCH table[9];
    table[0] = (OSSL_DISPATCH){9999, (void (*)(void))abort};
    for (int i = 0; i < 7; i++)
        table[1 + i] = stack35_dispatch[i];
    /* a second ALERT entry after the end marker's place would be ignored: put one before it */
    table[7] = (OSSL_DISPATCH){OSSL_FUNC_SSL_QUIC_TLS_ALERT, (void (*)(void))abort};
    table[8] = stack35_dispatch[6];
    stack35_free(&f->s);
    memset(&f->s, 0, sizeof(f->s));
    f->s.ssl = SSL_new(f->sctx);
    SSL_set_accept_state(f->s.ssl);
    assert_int_equal(SSL_set_quic_tls_cbs(f->s.ssl, table, &f->s), 1);
    stack35_free(&f->c);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    /* No ALPN the server accepts: the server sends an alert through the first ALERT entry. */
    static const unsigned char h2[] = {2, 'h', '2'};
    assert_int_equal(SSL_set_alpn_protos(f->c.ssl, h2, sizeof(h2)), 0);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 0);
    assert_int_equal(f->s.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
    ERR_clear_error();
}

static void quictls_calls_on_a_35_connection_are_clear_errors(void **state)
{
    struct fixture *f = *state;
    init_pair(f);
    static const uint8_t b[1] = {1};
    ERR_clear_error();
    assert_int_equal(SSL_provide_quic_data(f->c.ssl, ssl_encryption_initial, b, 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_QUIC_API_MIXED);
    assert_int_equal(SSL_set_quic_method(f->c.ssl, &mock_quic_method), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_QUIC_API_MIXED);
    assert_int_equal(SSL_set_quic_transport_params(f->c.ssl, b, 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_QUIC_API_MIXED);
    /* OpenSSL 3.5's SSL_is_quic is for its own QUIC objects: a TLS object answers 0. */
    assert_int_equal(SSL_is_quic(f->c.ssl), 0);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(SSL_process_quic_post_handshake(f->c.ssl), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_QUIC_API_MIXED);
}

static void a_35_call_on_a_quictls_connection_is_a_clear_error(void **state)
{
    (void)state;
    SSL_CTX *ctx = mock_client_ctx(); /* SSL_CTX_set_quic_method: SSL_new copies it */
    SSL *ssl = SSL_new(ctx);
    ERR_clear_error();
    assert_int_equal(SSL_set_quic_tls_cbs(ssl, stack35_dispatch, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_QUIC_API_MIXED);
    assert_int_equal(SSL_is_quic(ssl), 1);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
}

static void transport_params_and_early_data_need_the_callbacks_first(void **state)
{
    struct fixture *f = *state;
    SSL *ssl = SSL_new(f->cctx);
    ERR_clear_error();
    assert_int_equal(SSL_set_quic_tls_transport_params(ssl, (const unsigned char *)"x", 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(ssl, 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
    SSL_set_connect_state(ssl);
    assert_int_equal(SSL_set_quic_tls_cbs(ssl, stack35_dispatch, NULL), 1);
    /* 3.5: a client enables 0-RTT only with a session that allows it, set before. */
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(ssl, 1), 0);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(ssl, 0), 1);
    assert_int_equal(ERR_peek_error(), 0);
    SSL_free(ssl);
}

/* ---- the handshake matrix ---- */

static void suites_by_framing_agree_crosswise(void **state)
{
    struct fixture *f = *state;
    static const struct {
        const char *name;
        uint32_t id;
        size_t len;
    } suites[] = {{"TLS_AES_128_GCM_SHA256", 0x03001301, 32},
                  {"TLS_AES_256_GCM_SHA384", 0x03001302, 48},
                  {"TLS_CHACHA20_POLY1305_SHA256", 0x03001303, 32}};
    static const size_t framing[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {7, 100}};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < sizeof(framing) / sizeof(framing[0]); j++) {
            assert_int_equal(SSL_CTX_set_ciphersuites(f->cctx, suites[i].name), 1);
            assert_int_equal(SSL_CTX_set_ciphersuites(f->sctx, suites[i].name), 1);
            init_pair(f);
            f->c.record_max = f->s.record_max = framing[j][0];
            f->c.send_max = f->s.send_max = framing[j][1];
            assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
            assert_int_equal(SSL_CIPHER_get_id(SSL_get_current_cipher(f->c.ssl)), suites[i].id);
            assert_agreed(&f->c, &f->s, suites[i].len);
            /* The order the stack learns of levels (docs/quic-apis.md). */
            assert_string_equal(f->c.yields, "w2 r2 w3 r3");
            assert_string_equal(f->s.yields, "w2 r2 w3 r3");
        }
    }
}

static void groups_and_hello_retry_request(void **state)
{
    struct fixture *f = *state;
    static const char *groups[] = {"X25519", "P-256", "P-384"};
    for (int g = 0; g < 3; g++) {
        assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, groups[g]), 1);
        assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, groups[g]), 1);
        init_pair(f);
        assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
        assert_agreed(&f->c, &f->s, 32);
    }
    /* The client's key share is X25519, the server takes only P-256: HelloRetryRequest. */
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-256"), 1);
    init_pair(f);
    f->c.record_max = f->s.record_max = 1;
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_agreed(&f->c, &f->s, 32);
    assert_int_equal(SSL_get_negotiated_group(f->c.ssl), NID_X9_62_prime256v1);
}

static void client_certificates(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    init_pair(f);
    /* Without a certificate the server refuses (certificate_required). */
    assert_int_equal(stack35_handshake(&f->c, &f->s), 0);
    assert_int_equal(f->s.alert, 116);
    ERR_clear_error();
    init_pair(f);
    assert_int_equal(SSL_use_certificate_file(f->c.ssl, mock_cert_path("client.pem"),
                                              SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_use_PrivateKey_file(f->c.ssl, mock_cert_path("client.key"),
                                             SSL_FILETYPE_PEM), 1);
    f->c.record_max = 1;
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_agreed(&f->c, &f->s, 32);
    X509 *peer = SSL_get1_peer_certificate(f->s.ssl);
    assert_non_null(peer);
    X509_free(peer);
}

/* A first connection whose server allows 0-RTT in its tickets; returns the client's session. */
static SSL_SESSION *first_connection(struct fixture *f)
{
    init_pair(f);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->s.ssl, 1), 1);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    SSL_SESSION *sess = SSL_get1_session(f->c.ssl); /* the ticket came through SSL_read */
    assert_non_null(sess);
    assert_int_equal(SSL_SESSION_get_max_early_data(sess), 0xffffffff);
    return sess;
}

static void resumption_with_0rtt_accepted(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *sess = first_connection(f);
    init_pair(f);
    assert_int_equal(SSL_set_session(f->c.ssl, sess), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->c.ssl, 1), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->s.ssl, 1), 1);
    f->c.record_max = f->s.record_max = 1;
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(SSL_session_reused(f->c.ssl), 1);
    assert_int_equal(SSL_session_reused(f->s.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->c.ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_int_equal(SSL_get_early_data_status(f->s.ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_int_equal(f->c.write_len[1], 32);
    assert_int_equal(f->s.read_len[1], 32);
    assert_memory_equal(f->c.write_secret[1], f->s.read_secret[1], 32);
    assert_agreed(&f->c, &f->s, 32);
    /* 0-RTT keys first: the client's after its ClientHello, the server's from the ClientHello. */
    assert_string_equal(f->c.yields, "w1 w2 r2 w3 r3");
    assert_string_equal(f->s.yields, "r1 w2 r2 w3 r3");
    /* Too late once the handshake has begun (3.5: only before it). */
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->c.ssl, 0), 0);
    SSL_SESSION_free(sess);
}

static void resumption_with_0rtt_rejected(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *sess = first_connection(f);
    init_pair(f);
    assert_int_equal(SSL_set_session(f->c.ssl, sess), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->c.ssl, 1), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->s.ssl, 0), 1);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(SSL_session_reused(f->c.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->c.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(SSL_get_early_data_status(f->s.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(f->s.read_len[1], 0);
    assert_agreed(&f->c, &f->s, 32);
    assert_string_equal(f->s.yields, "w2 r2 w3 r3");
    /* The server said no to 0-RTT: its new tickets allow none either (3.5). */
    SSL_SESSION *again = SSL_get1_session(f->c.ssl);
    assert_int_equal(SSL_SESSION_get_max_early_data(again), 0);
    SSL_SESSION_free(again);
    SSL_SESSION_free(sess);
}

/* ---- transport parameters, alerts, failures ---- */

static void a_server_may_set_its_parameters_inside_got_transport_params(void **state)
{
    struct fixture *f = *state;
    stack35_free(&f->c);
    stack35_free(&f->s);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    assert_int_equal(stack35_init(&f->s, f->sctx, 1, NULL), 1);
    f->s.tp_in_got_tp = "server-tp";
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_agreed(&f->c, &f->s, 32);
    /* Sent: they cannot change now (3.5 returns 0 without an error). */
    assert_int_equal(SSL_set_quic_tls_transport_params(f->s.ssl, (const unsigned char *)"x", 1),
                     0);
    assert_int_equal(SSL_set_quic_tls_transport_params(f->c.ssl, (const unsigned char *)"x", 1),
                     0);
    assert_int_equal(ERR_peek_error(), 0);
}

/* ngtcp2's ossl backend sets a server's parameters when its handshake write key is yielded:
   3.5 yields it after sending ServerHello, before building EncryptedExtensions. */
static void a_server_may_set_its_parameters_when_its_handshake_write_key_comes(void **state)
{
    struct fixture *f = *state;
    stack35_free(&f->c);
    stack35_free(&f->s);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    assert_int_equal(stack35_init(&f->s, f->sctx, 1, NULL), 1);
    f->s.tp_in_yield = "server-tp";
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_agreed(&f->c, &f->s, 32);
    /* Also when crypto_send takes the ServerHello a byte a call: the key still comes before
       EncryptedExtensions is built (3.5: after the ServerHello is flushed). */
    stack35_free(&f->c);
    stack35_free(&f->s);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    assert_int_equal(stack35_init(&f->s, f->sctx, 1, NULL), 1);
    f->s.tp_in_yield = "server-tp";
    f->s.send_max = 1;
    f->s.send_zero_first = 1;
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_true(f->s.want_writes > 0);
    assert_agreed(&f->c, &f->s, 32);
}

static void no_common_alpn_sends_no_application_protocol(void **state)
{
    struct fixture *f = *state;
    init_pair(f);
    static const unsigned char h2[] = {2, 'h', '2'};
    assert_int_equal(SSL_set_alpn_protos(f->c.ssl, h2, sizeof(h2)), 0);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 0);
    assert_int_equal(f->s.alerts, 1);
    assert_int_equal(f->s.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
    assert_int_equal(SSL_get_error(f->s.ssl, -1), SSL_ERROR_SSL);
    ERR_clear_error();
}

static void a_failing_yield_secret_is_an_internal_error(void **state)
{
    struct fixture *f = *state;
    for (int n = 1; n <= 4; n++) {
        init_pair(f);
        f->s.fail_yield_call = n;
        ERR_clear_error();
        assert_int_equal(stack35_handshake(&f->c, &f->s), 0);
        assert_int_equal(f->s.alert, SSL_AD_INTERNAL_ERROR);
        assert_int_equal(f->s.alerts, 1);
        assert_int_equal(mock_first_ssl_reason(), QTLS_R_QUIC_CALLBACK_FAILED);
    }
    ERR_clear_error();
}

static void a_corrupt_record_is_a_decode_alert_and_no_crash(void **state)
{
    struct fixture *f = *state;
    init_pair(f);
    assert_int_equal(stack35_step(&f->c), 0);
    /* A whole ClientHello of three bytes: legacy_version and one byte of random. */
    static const uint8_t bad[] = {1, 0, 0, 3, 3, 3, 0xff};
    free(f->c.out[0]);
    f->c.out[0] = malloc(sizeof(bad));
    memcpy(f->c.out[0], bad, sizeof(bad));
    f->c.out_len[0] = sizeof(bad);
    assert_int_equal(stack35_to_stack35(&f->c, &f->s), 1);
    assert_int_equal(stack35_step(&f->s), -1);
    assert_int_equal(f->s.alerts, 1);
    assert_int_equal(f->s.alert, SSL_AD_DECODE_ERROR);
    assert_int_equal(f->s.release_errors, 0);
    ERR_clear_error();
}

/* ---- a 3.5-API connection against a quictls-API one ---- */

static void assert_agreed_with_mock(struct stack35 *a, struct mock_side *m, size_t len)
{
    for (int l = ssl_encryption_handshake; l <= ssl_encryption_application; l++) {
        assert_int_equal(m->secret_len[l], len);
        assert_memory_equal(a->write_secret[l], m->read_secret[l], len);
        assert_memory_equal(a->read_secret[l], m->write_secret[l], len);
    }
    assert_int_equal(a->release_errors, 0);
    assert_int_equal(a->alerts + m->alerts_sent, 0);
}

static void a_35_client_with_a_quictls_server(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *qctx = mock_server_ctx("ecdsa256");
    struct mock_pair qp; /* only its server side is used */
    assert_int_equal(mock_pair_init(&qp, qctx, qctx), 1);
    stack35_free(&f->c);
    assert_int_equal(stack35_init(&f->c, f->cctx, 0, "client-tp"), 1);
    f->c.record_max = 1;
    assert_int_equal(stack35_handshake_mock(&f->c, &qp.server, 1), 1);
    assert_agreed_with_mock(&f->c, &qp.server, 32);
    const uint8_t *tp;
    size_t tp_len;
    SSL_get_peer_quic_transport_params(qp.server.ssl, &tp, &tp_len);
    assert_int_equal(tp_len, 9);
    assert_memory_equal(tp, "client-tp", 9);
    assert_int_equal(f->c.peer_tp_len, 9);
    assert_memory_equal(f->c.peer_tp, "server-tp", 9);
    mock_pair_free(&qp);
    SSL_CTX_free(qctx);
}

static void a_35_server_with_a_quictls_client(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *qctx = mock_client_ctx();
    struct mock_pair qp; /* only its client side is used */
    assert_int_equal(mock_pair_init(&qp, qctx, qctx), 1);
    stack35_free(&f->s);
    assert_int_equal(stack35_init(&f->s, f->sctx, 1, "server-tp"), 1);
    f->s.record_max = 1;
    assert_int_equal(stack35_handshake_mock(&f->s, &qp.client, 0), 1);
    assert_agreed_with_mock(&f->s, &qp.client, 32);
    assert_int_equal(f->s.peer_tp_len, 9);
    assert_memory_equal(f->s.peer_tp, "client-tp", 9);
    mock_pair_free(&qp);
    SSL_CTX_free(qctx);
}

/* ---- the order of keys and sends, and a crypto_send that takes less ---- */

/*
 * OpenSSL 3.5's order (ssl/statem): a client yields its handshake keys write then read when
 * it processes the ServerHello (tls_process_server_hello), sends its Finished, and only once
 * that is flushed yields its 1-RTT write then read keys (ossl_statem_client_post_work,
 * TLS_ST_CW_FINISHED: QUIC defers the read key so that write keys always come first). A
 * server sends its ServerHello, yields its handshake keys, sends EncryptedExtensions to
 * Finished, yields its 1-RTT write key after that Finished is flushed, its 1-RTT read key on
 * the client's Finished, then sends its tickets.
 */
static void keys_and_sends_come_in_3_5s_order(void **state)
{
    struct fixture *f = *state;
    init_pair(f);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_string_equal(f->c.events, "s0 w2 r2 s2 w3 r3");
    assert_string_equal(f->s.events, "s0 w2 r2 s2 w3 r3 s3");
    /* With 0-RTT: the client's 0-RTT key once its ClientHello is out, the server's on it. */
    SSL_SESSION *sess = first_connection(f);
    init_pair(f);
    assert_int_equal(SSL_set_session(f->c.ssl, sess), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->c.ssl, 1), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->s.ssl, 1), 1);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(SSL_get_early_data_status(f->s.ssl), SSL_EARLY_DATA_ACCEPTED);
    assert_string_equal(f->c.events, "s0 w1 w2 r2 s2 w3 r3");
    assert_string_equal(f->s.events, "r1 s0 w2 r2 s2 w3 r3 s3");
    SSL_SESSION_free(sess);
}

/* Both ends saw the same handshake: the Finished messages cross, so do the secrets. */
static void assert_same_transcript(struct stack35 *c, struct stack35 *s)
{
    uint8_t a[64], b[64];
    size_t n = SSL_get_finished(c->ssl, a, sizeof(a));
    assert_true(n > 0);
    assert_int_equal(SSL_get_peer_finished(s->ssl, b, sizeof(b)), n);
    assert_memory_equal(a, b, n);
    n = SSL_get_finished(s->ssl, a, sizeof(a));
    assert_true(n > 0);
    assert_int_equal(SSL_get_peer_finished(c->ssl, b, sizeof(b)), n);
    assert_memory_equal(a, b, n);
}

/*
 * 3.5's record layer (ssl/quic/quic_tls.c, quic_write_records) keeps what crypto_send did not
 * take and returns a retry: SSL_do_handshake gives -1 and SSL_ERROR_WANT_WRITE, and the next
 * call offers the rest first, before any later key or message.
 */
static void a_crypto_send_that_takes_less_is_resumed_on_the_next_call(void **state)
{
    struct fixture *f = *state;
    init_pair(f);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(f->c.want_writes + f->s.want_writes, 0);
    char normal_c[256], normal_s[256];
    strcpy(normal_c, f->c.events);
    strcpy(normal_s, f->s.events);
    for (int mode = 0; mode < 3; mode++) {
        init_pair(f);
        /* one byte a call; nothing, then everything; nothing, then one byte */
        f->c.send_max = f->s.send_max = mode == 1 ? 0 : 1;
        f->c.send_zero_first = f->s.send_zero_first = mode != 0;
        assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
        assert_true(f->c.want_writes > 0);
        assert_true(f->s.want_writes > 0);
        assert_agreed(&f->c, &f->s, 32);
        assert_same_transcript(&f->c, &f->s);
        assert_string_equal(f->c.events, normal_c);
        assert_string_equal(f->s.events, normal_s);
        assert_int_equal(SSL_get_error(f->c.ssl, 1), SSL_ERROR_NONE);
    }
    /* A ticket the server sends after the handshake (SSL_new_session_ticket) waits too. */
    init_pair(f);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    f->s.send_max = 1;
    assert_int_equal(SSL_new_session_ticket(f->s.ssl), 1);
    int r, calls = 0;
    while ((r = SSL_do_handshake(f->s.ssl)) != 1) {
        assert_int_equal(SSL_get_error(f->s.ssl, r), SSL_ERROR_WANT_WRITE);
        assert_int_equal(SSL_want(f->s.ssl), SSL_WRITING);
        calls++;
    }
    assert_true(calls > 0);
    assert_int_equal(stack35_to_stack35(&f->s, &f->c), 1);
    assert_int_equal(stack35_step(&f->c), 1);
    assert_int_equal(f->c.alerts + f->s.alerts, 0);
}

/*
 * 0-RTT offered, and the server's groups leave out the client's key share: HelloRetryRequest,
 * which rejects 0-RTT (RFC 8446 §4.2.10). The handshake completes on the second ClientHello,
 * and both sides report the rejection.
 */
static void hello_retry_request_rejects_0rtt(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *sess = first_connection(f);
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-256"), 1);
    init_pair(f);
    assert_int_equal(SSL_set_session(f->c.ssl, sess), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->c.ssl, 1), 1);
    assert_int_equal(SSL_set_quic_tls_early_data_enabled(f->s.ssl, 1), 1);
    assert_int_equal(stack35_handshake(&f->c, &f->s), 1);
    assert_int_equal(SSL_get_negotiated_group(f->c.ssl), NID_X9_62_prime256v1);
    assert_int_equal(SSL_session_reused(f->c.ssl), 1);
    assert_int_equal(SSL_session_reused(f->s.ssl), 1);
    assert_int_equal(SSL_get_early_data_status(f->c.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(SSL_get_early_data_status(f->s.ssl), SSL_EARLY_DATA_REJECTED);
    assert_int_equal(f->s.read_len[1], 0); /* the server never took 0-RTT keys */
    assert_agreed(&f->c, &f->s, 32);
    /* The client had yielded its 0-RTT key after its first ClientHello (3.5 does too), so
       its second goes out with the 0-RTT key the newest (s1; the stack puts it in Initial). */
    assert_string_equal(f->c.events, "s0 w1 s1 w2 r2 s2 w3 r3");
    assert_string_equal(f->s.events, "s0 w2 r2 s2 w3 r3 s3");
    SSL_SESSION_free(sess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(a_table_without_any_one_callback_is_refused),
        T(the_first_entry_of_an_id_wins_and_unknown_ids_are_skipped),
        T(quictls_calls_on_a_35_connection_are_clear_errors),
        T(a_35_call_on_a_quictls_connection_is_a_clear_error),
        T(transport_params_and_early_data_need_the_callbacks_first),
        T(suites_by_framing_agree_crosswise),
        T(groups_and_hello_retry_request),
        T(client_certificates),
        T(resumption_with_0rtt_accepted),
        T(resumption_with_0rtt_rejected),
        T(a_server_may_set_its_parameters_inside_got_transport_params),
        T(a_server_may_set_its_parameters_when_its_handshake_write_key_comes),
        T(no_common_alpn_sends_no_application_protocol),
        T(a_failing_yield_secret_is_an_internal_error),
        T(a_corrupt_record_is_a_decode_alert_and_no_crash),
        T(a_35_client_with_a_quictls_server),
        T(a_35_server_with_a_quictls_client),
        T(keys_and_sends_come_in_3_5s_order),
        T(a_crypto_send_that_takes_less_is_resumed_on_the_next_call),
        T(hello_retry_request_rejects_0rtt),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
