/*
 * SSL_CTX_set_cert_verify_callback (issue 9 item 6) and the verify callback semantics of
 * SSL_CTX_set_verify with SSL_CTX_set_verify_depth, over in-memory QUIC handshakes: the
 * application's function replaces X509_verify_cert in both roles, sees the store context set up
 * as OpenSSL sets it up (store, untrusted chain, peer leaf, the SSL at
 * SSL_get_ex_data_X509_STORE_CTX_idx()), and its verdict and error decide the handshake and the
 * alert under SSL_VERIFY_PEER.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "mock_quic.h"

struct seen {
    int calls;
    int verdict;        /* what the callback returns */
    int error;          /* the X509_V_ error it sets when rejecting (0: none) */
    SSL *ssl_in_ctx;    /* SSL_get_ex_data(store ctx, SSL_get_ex_data_X509_STORE_CTX_idx()) */
    X509_STORE *store;  /* X509_STORE_CTX_get0_store */
    int untrusted_num;  /* sk_X509_num(X509_STORE_CTX_get0_untrusted) */
    int leaf_matches;   /* X509_STORE_CTX_get0_cert is the untrusted chain's first */
    int run_x509_verify; /* call X509_verify_cert and return its answer */
};

static int app_verify(X509_STORE_CTX *sctx, void *arg)
{
    struct seen *s = arg;
    s->calls++;
    s->ssl_in_ctx = X509_STORE_CTX_get_ex_data(sctx, SSL_get_ex_data_X509_STORE_CTX_idx());
    s->store = X509_STORE_CTX_get0_store(sctx);
    STACK_OF(X509) *untrusted = X509_STORE_CTX_get0_untrusted(sctx);
    s->untrusted_num = sk_X509_num(untrusted);
    s->leaf_matches = untrusted != NULL && X509_STORE_CTX_get0_cert(sctx) == sk_X509_value(untrusted, 0);
    if (s->run_x509_verify)
        return X509_verify_cert(sctx);
    if (s->error != 0)
        X509_STORE_CTX_set_error(sctx, s->error);
    return s->verdict;
}

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

/* The client verifies the server with the callback; the server uses `cert`. */
static int client_handshake(struct mock_pair *p, struct seen *seen, int mode, const char *cert)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx(cert);
    assert_non_null(cctx);
    assert_non_null(sctx);
    SSL_CTX_set_verify(cctx, mode, NULL);
    if (seen != NULL)
        SSL_CTX_set_cert_verify_callback(cctx, app_verify, seen);
    assert_true(mock_pair_init(p, cctx, sctx));
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    return mock_handshake(p, 0);
}

static void callback_accepts_an_untrusted_chain(void **state)
{
    struct mock_pair p;
    struct seen seen = {.verdict = 1};
    /* other-leaf is signed by a CA the client does not trust: only the callback can accept. */
    assert_int_equal(client_handshake(&p, &seen, SSL_VERIFY_PEER, "other-leaf"), 1);
    assert_int_equal(seen.calls, 1);
    assert_ptr_equal(seen.ssl_in_ctx, p.client.ssl);
    assert_ptr_equal(seen.store, SSL_CTX_get_cert_store(SSL_get_SSL_CTX(p.client.ssl)));
    assert_int_equal(seen.untrusted_num, 1);
    assert_true(seen.leaf_matches);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_OK);
    mock_pair_free(&p);
}

/* Rejecting with an error: the handshake fails with the alert OpenSSL maps that error to. */
static void callback_rejects_with_its_error_alert(void **state)
{
    struct mock_pair p;
    struct seen seen = {.verdict = 0, .error = X509_V_ERR_CERT_REVOKED};
    assert_int_equal(client_handshake(&p, &seen, SSL_VERIFY_PEER, "ecdsa256"), 0);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(p.client.alert, SSL_AD_CERTIFICATE_REVOKED);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_ERR_CERT_REVOKED);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CERTIFICATE_VERIFY_FAILED);
    mock_pair_free(&p);
}

/* Rejecting without an error: certificate_unknown (ssl_x509err2alert's default). */
static void callback_rejects_without_error(void **state)
{
    struct mock_pair p;
    struct seen seen = {.verdict = 0};
    assert_int_equal(client_handshake(&p, &seen, SSL_VERIFY_PEER, "ecdsa256"), 0);
    assert_int_equal(p.client.alert, SSL_AD_CERTIFICATE_UNKNOWN);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CERTIFICATE_VERIFY_FAILED);
    mock_pair_free(&p);
}

/* Under SSL_VERIFY_NONE a rejection is only recorded, as with X509_verify_cert. */
static void rejection_is_recorded_under_verify_none(void **state)
{
    struct mock_pair p;
    struct seen seen = {.verdict = 0, .error = X509_V_ERR_CERT_REJECTED};
    assert_int_equal(client_handshake(&p, &seen, SSL_VERIFY_NONE, "ecdsa256"), 1);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_ERR_CERT_REJECTED);
    mock_pair_free(&p);
}

/* A callback that calls X509_verify_cert itself gets the normal verification. */
static void callback_can_delegate_to_x509_verify_cert(void **state)
{
    struct mock_pair p;
    struct seen seen = {.run_x509_verify = 1};
    assert_int_equal(client_handshake(&p, &seen, SSL_VERIFY_PEER, "ecdsa256"), 1);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_OK);
    /* The verified chain is kept: the leaf and the root from the store. */
    STACK_OF(X509) *vc = SSL_get0_verified_chain(p.client.ssl);
    assert_non_null(vc);
    assert_int_equal(sk_X509_num(vc), 2);
    mock_pair_free(&p);

    struct seen bad = {.run_x509_verify = 1};
    assert_int_equal(client_handshake(&p, &bad, SSL_VERIFY_PEER, "other-leaf"), 0);
    assert_int_equal(p.client.alert, SSL_AD_UNKNOWN_CA);
    mock_pair_free(&p);
}

/* Server side: the callback decides about the client's certificate. */
static void server_callback_judges_the_client(void **state)
{
    for (int verdict = 0; verdict <= 1; verdict++) {
        struct mock_pair p;
        struct seen seen = {.verdict = verdict, .error = verdict ? 0 : X509_V_ERR_CERT_HAS_EXPIRED};
        SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
        assert_int_equal(SSL_CTX_use_certificate_chain_file(cctx, mock_cert_path("client.pem")), 1);
        assert_int_equal(
            SSL_CTX_use_PrivateKey_file(cctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM), 1);
        SSL_CTX_set_verify(sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        SSL_CTX_set_cert_verify_callback(sctx, app_verify, &seen);
        assert_true(mock_pair_init(&p, cctx, sctx));
        assert_int_equal(mock_handshake(&p, 0), verdict);
        assert_int_equal(seen.calls, 1);
        assert_ptr_equal(seen.ssl_in_ctx, p.server.ssl);
        if (!verdict)
            assert_int_equal(p.server.alert, SSL_AD_CERTIFICATE_EXPIRED);
        mock_pair_free(&p);
        SSL_CTX_free(cctx);
        SSL_CTX_free(sctx);
        ERR_clear_error();
    }
}

/* ---- SSL_CTX_set_verify's callback with SSL_CTX_set_verify_depth ---- */

struct depth_seen {
    int calls, max_depth, saw_chain_too_long;
    int accept_too_long;
};
static struct depth_seen depth_seen;

static int depth_cb(int ok, X509_STORE_CTX *sctx)
{
    depth_seen.calls++;
    int d = X509_STORE_CTX_get_error_depth(sctx);
    if (d > depth_seen.max_depth)
        depth_seen.max_depth = d;
    if (!ok && X509_STORE_CTX_get_error(sctx) == X509_V_ERR_CERT_CHAIN_TOO_LONG)
        depth_seen.saw_chain_too_long = 1;
    /* Once the chain is cut short, the issuer is missing too: the override accepts both. */
    return ok || (depth_seen.saw_chain_too_long && depth_seen.accept_too_long);
}

static int depth_handshake(struct mock_pair *p, int depth)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256-inter");
    assert_int_equal(
        SSL_CTX_use_certificate_chain_file(sctx, mock_cert_path("ecdsa256-inter-chain.pem")), 1);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, depth_cb);
    SSL_CTX_set_verify_depth(cctx, depth);
    assert_int_equal(SSL_CTX_get_verify_depth(cctx), depth);
    assert_true(mock_pair_init(p, cctx, sctx));
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    SSL_set1_host(p->client.ssl, "server.example");
    return mock_handshake(p, 0);
}

/* leaf <- inter <- root: one intermediate, so depth 1 passes and depth 0 is too short. */
static void verify_depth_limits_the_chain(void **state)
{
    struct mock_pair p;
    memset(&depth_seen, 0, sizeof(depth_seen));
    assert_int_equal(depth_handshake(&p, 1), 1);
    assert_false(depth_seen.saw_chain_too_long);
    assert_int_equal(depth_seen.max_depth, 2); /* called for the root, the inter and the leaf */
    mock_pair_free(&p);

    memset(&depth_seen, 0, sizeof(depth_seen));
    assert_int_equal(depth_handshake(&p, 0), 0);
    assert_true(depth_seen.saw_chain_too_long);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_ERR_CERT_CHAIN_TOO_LONG);
    assert_int_equal(p.client.alert, SSL_AD_UNKNOWN_CA);
    mock_pair_free(&p);
    ERR_clear_error();

    /* The verify callback may overrule: an error stays recorded, the handshake completes. */
    memset(&depth_seen, 0, sizeof(depth_seen));
    depth_seen.accept_too_long = 1;
    assert_int_equal(depth_handshake(&p, 0), 1);
    assert_true(depth_seen.saw_chain_too_long);
    assert_int_not_equal(SSL_get_verify_result(p.client.ssl), X509_V_OK);
    mock_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(callback_accepts_an_untrusted_chain, clear_errors),
        cmocka_unit_test_setup(callback_rejects_with_its_error_alert, clear_errors),
        cmocka_unit_test_setup(callback_rejects_without_error, clear_errors),
        cmocka_unit_test_setup(rejection_is_recorded_under_verify_none, clear_errors),
        cmocka_unit_test_setup(callback_can_delegate_to_x509_verify_cert, clear_errors),
        cmocka_unit_test_setup(server_callback_judges_the_client, clear_errors),
        cmocka_unit_test_setup(verify_depth_limits_the_chain, clear_errors),
    };
    return cmocka_run_group_tests_name("verify_cb", tests, NULL, NULL);
}
