/*
 * In-memory qtls client <-> qtls server handshakes through the public API:
 * every suite and group, every certificate type, any framing, HRR, the
 * transport-parameter codepoint matrix, ALPN/SNI, key log, exporters, and the
 * secret delivery rules of the contract.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "internal.h"
#include "mock_quic.h"

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
};

static int setup(void **state)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    ERR_clear_error();
    f.cctx = mock_client_ctx();
    f.sctx = mock_server_ctx("ecdsa256");
    if (f.cctx == NULL || f.sctx == NULL)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    ERR_clear_error();
    return 0;
}

/* Secrets are delivered from each side's point of view: client write == server read. */
static void assert_secrets_cross(struct mock_pair *p, OSSL_ENCRYPTION_LEVEL level)
{
    struct mock_side *c = &p->client, *s = &p->server;
    assert_true(c->have_read[level] && c->have_write[level]);
    assert_true(s->have_read[level] && s->have_write[level]);
    assert_int_equal(c->secret_len[level], s->secret_len[level]);
    assert_memory_equal(c->write_secret[level], s->read_secret[level], c->secret_len[level]);
    assert_memory_equal(c->read_secret[level], s->write_secret[level], c->secret_len[level]);
    assert_memory_not_equal(c->write_secret[level], c->read_secret[level], c->secret_len[level]);
}

static void assert_completed(struct mock_pair *p)
{
    assert_int_equal(SSL_is_init_finished(p->client.ssl), 1);
    assert_int_equal(SSL_is_init_finished(p->server.ssl), 1);
    assert_int_equal(p->client.alerts_sent, 0);
    assert_int_equal(p->server.alerts_sent, 0);
    assert_secrets_cross(p, ssl_encryption_handshake);
    assert_secrets_cross(p, ssl_encryption_application);
    assert_false(p->client.have_read[ssl_encryption_initial]);
    assert_false(p->client.have_write[ssl_encryption_early_data]);
    assert_int_equal(SSL_quic_read_level(p->client.ssl), ssl_encryption_application);
    assert_int_equal(SSL_quic_write_level(p->server.ssl), ssl_encryption_application);
}

static void full_handshake_delivers_equal_secrets_alpn_and_params(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_completed(&f->p);

    const SSL_CIPHER *cc = SSL_get_current_cipher(f->p.client.ssl);
    assert_non_null(cc);
    assert_int_equal(SSL_CIPHER_get_id(cc), 0x03001301);
    assert_ptr_equal(cc, SSL_get_current_cipher(f->p.server.ssl));
    /* The cipher is already known inside the secret callbacks. */
    assert_int_equal(f->p.client.cipher_id_at_secret[ssl_encryption_handshake], 0x03001301);
    assert_int_equal(f->p.server.cipher_id_at_secret[ssl_encryption_handshake], 0x03001301);

    const unsigned char *alpn;
    unsigned int alpn_len;
    SSL_get0_alpn_selected(f->p.client.ssl, &alpn, &alpn_len);
    assert_int_equal(alpn_len, 2);
    assert_memory_equal(alpn, "h3", 2);
    SSL_get0_alpn_selected(f->p.server.ssl, &alpn, &alpn_len);
    assert_int_equal(alpn_len, 2);
    assert_null(f->p.client.ssl->alpn); /* the offer is not kept past the handshake */

    const uint8_t *tp;
    size_t tp_len;
    SSL_get_peer_quic_transport_params(f->p.client.ssl, &tp, &tp_len);
    assert_int_equal(tp_len, 9);
    assert_memory_equal(tp, "server-tp", 9);
    SSL_get_peer_quic_transport_params(f->p.server.ssl, &tp, &tp_len);
    assert_int_equal(tp_len, 9);
    assert_memory_equal(tp, "client-tp", 9);

    /* nginx reads ALPN and the peer's parameters in the server's first add_handshake_data. */
    assert_true(f->p.server.saw_alpn_at_first_add);
    assert_true(f->p.server.saw_peer_tp_at_first_add);
    assert_int_equal(SSL_version(f->p.client.ssl), TLS1_3_VERSION);
    assert_string_equal(SSL_get_version(f->p.server.ssl), "TLSv1.3");
    /* Client: ClientHello, then Finished; server: its handshake flight, then the tickets. */
    assert_int_equal(f->p.client.flushes, 2);
    assert_int_equal(f->p.server.flushes, 2);
}

/* Every suite x group, negotiated both sides, with the right secret length. */
static void every_suite_and_group_completes(void **state)
{
    struct fixture *f = *state;
    static const char *suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                   "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256"};
    static const uint32_t ids[] = {0x03001301, 0x03001302, 0x03001303, 0x03001304};
    static const char *groups[] = {"X25519", "P-256", "P-384", "X448"};
    static const int nids[] = {NID_X25519, NID_X9_62_prime256v1, NID_secp384r1, NID_X448};
    for (size_t i = 0; i < 4; i++) {
        for (size_t g = 0; g < 4; g++) {
            assert_int_equal(SSL_CTX_set_ciphersuites(f->cctx, suites[i]), 1);
            assert_int_equal(SSL_CTX_set_ciphersuites(f->sctx, suites[i]), 1);
            assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, groups[g]), 1);
            assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
            assert_true(mock_handshake(&f->p, 0));
            assert_completed(&f->p);
            assert_int_equal(SSL_CIPHER_get_id(SSL_get_current_cipher(f->p.client.ssl)), ids[i]);
            assert_int_equal(f->p.client.secret_len[ssl_encryption_application],
                             ids[i] == 0x03001302 ? 48 : 32);
            assert_int_equal(SSL_get_negotiated_group(f->p.client.ssl), nids[g]);
            assert_int_equal(SSL_get_negotiated_group(f->p.server.ssl), nids[g]);
            mock_pair_free(&f->p);
        }
    }
}

static void every_certificate_type_verifies(void **state)
{
    struct fixture *f = *state;
    static const char *certs[] = {"ecdsa256", "ecdsa384", "rsa", "ed25519"};
    SSL_CTX_set_verify(f->cctx, SSL_VERIFY_PEER, NULL);
    for (size_t i = 0; i < 4; i++) {
        SSL_CTX *sctx = mock_server_ctx(certs[i]);
        assert_non_null(sctx);
        assert_true(mock_pair_init(&f->p, f->cctx, sctx));
        assert_int_equal(SSL_set1_host(f->p.client.ssl, "localhost"), 1);
        assert_true(mock_handshake(&f->p, 0));
        assert_completed(&f->p);
        assert_int_equal(SSL_get_verify_result(f->p.client.ssl), X509_V_OK);
        X509 *peer = SSL_get1_peer_certificate(f->p.client.ssl);
        assert_non_null(peer);
        X509_free(peer);
        mock_pair_free(&f->p);
        SSL_CTX_free(sctx);
    }
}

/*
 * Input buffers go back once every byte is read: an established connection
 * keeps none of the handshake's bytes, however they were cut into pieces
 * (bytes of a message not yet whole stay until the rest comes).
 */
static void established_connections_keep_no_handshake_input(void **state)
{
    struct fixture *f = *state;
    long chunks[] = {0, 1, 5, -1};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
        assert_true(mock_handshake(&f->p, chunks[i]));
        assert_completed(&f->p);
        assert_null(f->p.client.ssl->input); /* not even the per-level bookkeeping */
        assert_null(f->p.server.ssl->input);
        assert_null(f->p.client.ssl->local_tp); /* sent, never needed again */
        assert_null(f->p.server.ssl->local_tp);
        mock_pair_free(&f->p);
    }
}

/* Handshake bytes may arrive one byte at a time or in random pieces. */
static void any_framing_completes(void **state)
{
    struct fixture *f = *state;
    long chunks[] = {1, 2, 3, 7, -1, -1, -1};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
        assert_true(mock_handshake(&f->p, chunks[i]));
        assert_completed(&f->p);
        mock_pair_free(&f->p);
    }
}

/* RFC 8446 §4.1.4: the server wants P-384, the client's first share is X25519. */
static void hello_retry_request_completes_with_the_servers_group(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-384"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-384"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_completed(&f->p);
    assert_int_equal(SSL_get_negotiated_group(f->p.client.ssl), NID_secp384r1);
    /* The client sent ClientHello twice: three flights in all. */
    assert_int_equal(f->p.client.flushes, 3);
}

static void on_secret_set_params(struct mock_side *side, OSSL_ENCRYPTION_LEVEL level)
{
    if (level == ssl_encryption_handshake)
        assert_int_equal(SSL_set_quic_transport_params(side->ssl, (const uint8_t *)"late", 4), 1);
}

/* ngtcp2 sets the server's parameters from inside the handshake-secret callback. */
static void server_params_set_inside_secret_callback_are_sent(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_quic_transport_params(f->p.server.ssl, NULL, 0), 1);
    f->p.server.on_secret = on_secret_set_params;
    assert_true(mock_handshake(&f->p, 0));
    const uint8_t *tp;
    size_t tp_len;
    SSL_get_peer_quic_transport_params(f->p.client.ssl, &tp, &tp_len);
    assert_int_equal(tp_len, 4);
    assert_memory_equal(tp, "late", 4);
}

/* The contract's 9-case matrix: client version x server version -> negotiated codepoint. */
static void transport_parameter_codepoint_matrix(void **state)
{
    struct fixture *f = *state;
    static const struct {
        int client, server, result;
    } cases[] = {
        {0, 0, 0x39},           {0xffa5, 0, 0xffa5},      {0x39, 0, 0x39},
        {0, 0xffa5, 0xffa5},    {0xffa5, 0xffa5, 0xffa5}, {0x39, 0xffa5, -1},
        {0, 0x39, 0x39},        {0xffa5, 0x39, -1},       {0x39, 0x39, 0x39},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ERR_clear_error();
        assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
        SSL_set_quic_transport_version(f->p.client.ssl, cases[i].client);
        SSL_set_quic_transport_version(f->p.server.ssl, cases[i].server);
        int ok = mock_handshake(&f->p, 0);
        if (cases[i].result < 0) {
            assert_false(ok);
            /* A server set to one codepoint ignores the other: it has none, missing_extension. */
            assert_int_equal(f->p.server.alert, SSL_AD_MISSING_EXTENSION);
            assert_int_equal(ERR_GET_REASON(ERR_peek_error()),
                             SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION);
        } else {
            assert_true(ok);
            assert_int_equal(SSL_get_peer_quic_transport_version(f->p.client.ssl),
                             cases[i].result);
            assert_int_equal(SSL_get_peer_quic_transport_version(f->p.server.ssl),
                             cases[i].result);
        }
        mock_pair_free(&f->p);
    }
}

static void sni_reaches_the_server(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_tlsext_host_name(f->p.client.ssl, "server.example"), 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_string_equal(SSL_get_servername(f->p.server.ssl, TLSEXT_NAMETYPE_host_name),
                        "server.example");
}

static char keylog[8][300];
static int keylog_n;

static void keylog_cb(const SSL *ssl, const char *line)
{
    if (keylog_n < 8)
        snprintf(keylog[keylog_n], sizeof(keylog[0]), "%s", line);
    keylog_n++;
}

/* NSS key log lines: five labels, each with the 32-byte client random and the secret. */
static void key_log_has_every_label(void **state)
{
    struct fixture *f = *state;
    static const char *labels[] = {"CLIENT_HANDSHAKE_TRAFFIC_SECRET ",
                                   "SERVER_HANDSHAKE_TRAFFIC_SECRET ", "CLIENT_TRAFFIC_SECRET_0 ",
                                   "SERVER_TRAFFIC_SECRET_0 ", "EXPORTER_SECRET "};
    keylog_n = 0;
    SSL_CTX_set_keylog_callback(f->cctx, keylog_cb);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(keylog_n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(strncmp(keylog[i], labels[i], strlen(labels[i])), 0);
        assert_int_equal(strlen(keylog[i]), strlen(labels[i]) + 64 + 1 + 64);
    }
    /* The client handshake secret in the log is the one delivered to QUIC. */
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", f->p.client.write_secret[ssl_encryption_handshake][i]);
    assert_string_equal(keylog[0] + strlen(labels[0]) + 65, hex);
}

static void exporter_values_agree(void **state)
{
    struct fixture *f = *state;
    uint8_t a[40], b[40], c[40];
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_export_keying_material(f->p.client.ssl, a, sizeof(a), "x", 1, NULL, 0,
                                                0),
                     0);
    ERR_clear_error();
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_export_keying_material(f->p.client.ssl, a, sizeof(a), "EXPERIMENTAL x",
                                                14, (const uint8_t *)"ctx", 3, 1),
                     1);
    assert_int_equal(SSL_export_keying_material(f->p.server.ssl, b, sizeof(b), "EXPERIMENTAL x",
                                                14, (const uint8_t *)"ctx", 3, 1),
                     1);
    assert_memory_equal(a, b, sizeof(a));
    assert_int_equal(SSL_export_keying_material(f->p.server.ssl, c, sizeof(c), "EXPERIMENTAL y",
                                                14, (const uint8_t *)"ctx", 3, 1),
                     1);
    assert_memory_not_equal(a, c, sizeof(a));
}

/* SSL_do_handshake says 1 only at completion, and the client finishes before the server. */
static void do_handshake_returns_one_only_when_complete(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL *c = f->p.client.ssl, *s = f->p.server.ssl;
    assert_int_equal(SSL_do_handshake(c), -1);
    assert_int_equal(SSL_get_error(c, -1), SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_in_init(c), 1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(s), -1);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_READ);
    /* The server has its 1-RTT keys (0.5-RTT) but is not done before the client Finished. */
    assert_true(f->p.server.have_write[ssl_encryption_application]);
    assert_int_equal(SSL_is_init_finished(s), 0);
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    assert_int_equal(SSL_do_handshake(c), 1);
    assert_int_equal(SSL_do_handshake(s), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(s), 1);
    assert_int_equal(SSL_do_handshake(s), 1);
}

/* After the handshake: nothing queued is fine; read/write are refused in QUIC. */
static void post_handshake_and_stream_io(void **state)
{
    struct fixture *f = *state;
    char buf[8];
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_process_quic_post_handshake(f->p.client.ssl), 0);
    ERR_clear_error();
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_process_quic_post_handshake(f->p.client.ssl), 1);
    assert_int_equal(SSL_read(f->p.client.ssl, buf, sizeof(buf)), -1);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
    assert_true(SSL_write(f->p.client.ssl, "x", 1) <= 0);
    ERR_clear_error();
}

/*
 * Servers run handshakes on many threads against one SSL_CTX. Each thread
 * here completes its own handshakes; the failures are counted and checked
 * on the main thread (cmocka is not thread-safe). Under ThreadSanitizer this
 * also proves that a handshake writes no shared global (crypto.c's key-share
 * test hook was stored to by every handshake).
 */
struct shared_ctx_run {
    SSL_CTX *cctx, *sctx;
    int failures;
};

static void *handshakes_on_a_thread(void *arg)
{
    struct shared_ctx_run *run = arg;
    for (int i = 0; i < 8; i++) {
        struct mock_pair p;
        if (!mock_pair_init(&p, run->cctx, run->sctx) || !mock_handshake(&p, 0))
            run->failures++;
        mock_pair_free(&p);
    }
    return NULL;
}

static void concurrent_handshakes_share_contexts(void **state)
{
    struct fixture *f = *state;
    struct shared_ctx_run runs[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        runs[i] = (struct shared_ctx_run){f->cctx, f->sctx, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, handshakes_on_a_thread, &runs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(runs[i].failures, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(full_handshake_delivers_equal_secrets_alpn_and_params,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(every_suite_and_group_completes, setup, teardown),
        cmocka_unit_test_setup_teardown(every_certificate_type_verifies, setup, teardown),
        cmocka_unit_test_setup_teardown(any_framing_completes, setup, teardown),
        cmocka_unit_test_setup_teardown(established_connections_keep_no_handshake_input, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(hello_retry_request_completes_with_the_servers_group,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(server_params_set_inside_secret_callback_are_sent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(transport_parameter_codepoint_matrix, setup, teardown),
        cmocka_unit_test_setup_teardown(sni_reaches_the_server, setup, teardown),
        cmocka_unit_test_setup_teardown(key_log_has_every_label, setup, teardown),
        cmocka_unit_test_setup_teardown(exporter_values_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(do_handshake_returns_one_only_when_complete, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(post_handshake_and_stream_io, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_handshakes_share_contexts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
