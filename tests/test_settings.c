/*
 * No silent no-ops (issue 9, item 8): each setting that used to be accepted without effect now
 * either works (the signature-algorithm lists: tests/test_sigalgs.c; the message-callback
 * argument) or fails with QTLS_R_NOT_IMPLEMENTED naming it; and behaviour consumers observe
 * matches quictls (ALPN selected on the first ClientHello, before a HelloRetryRequest).
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

/* One QTLS_R_NOT_IMPLEMENTED error whose data names `setting`; the queue is emptied. */
static void assert_not_implemented(const char *setting)
{
    const char *data = NULL;
    int flags = 0;
    unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), QTLS_R_NOT_IMPLEMENTED);
    assert_true(flags & ERR_TXT_STRING);
    assert_non_null(strstr(data, setting));
    assert_int_equal(ERR_get_error(), 0);
}

static void tmp_key_is_not_kept(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *s = SSL_new(ctx);
    EVP_PKEY *k = NULL;
    ERR_clear_error();
    assert_int_equal(SSL_get_tmp_key(s, &k), 0);
    assert_null(k);
    assert_not_implemented("SSL_get_tmp_key");
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* The message-callback argument is kept and inherited (it used to be dropped). */
static void msg_callback_arg_is_kept(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    int x, y;
    assert_int_equal(SSL_CTX_set_msg_callback_arg(ctx, &x), 1);
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(cold_peek(s)->msg_callback_arg, &x);
    assert_int_equal(SSL_set_msg_callback_arg(s, &y), 1);
    assert_ptr_equal(cold_peek(s)->msg_callback_arg, &y);
    assert_ptr_equal(ctx->msg_callback_arg, &x);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* Read-ahead (the TCP record layer's bulk reads): stored as OpenSSL does, copied by SSL_new. */
static void read_ahead_is_stored_and_inherited(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *before = SSL_new(ctx);
    assert_int_equal(SSL_CTX_get_read_ahead(ctx), 0);
    assert_int_equal(SSL_CTX_set_read_ahead(ctx, 1), 0); /* the old value */
    assert_int_equal(SSL_CTX_get_read_ahead(ctx), 1);
    SSL *after = SSL_new(ctx);
    assert_int_equal(SSL_get_read_ahead(before), 0);
    assert_int_equal(SSL_get_read_ahead(after), 1);
    SSL_set_read_ahead(after, 0);
    assert_int_equal(SSL_get_read_ahead(after), 0);
    assert_int_equal(SSL_CTX_get_read_ahead(ctx), 1);
    SSL_free(before);
    SSL_free(after);
    SSL_CTX_free(ctx);
}

/* Unknown ctrls are refused with the command in the error data, never accepted. */
static void unknown_ctrls_are_refused(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *s = SSL_new(ctx);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_ctrl(ctx, 9999, 0, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_INVALID_ARGUMENT);
    assert_int_equal(SSL_ctrl(s, 9999, 0, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_INVALID_ARGUMENT);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

struct hrr_seen {
    int adds;
    int alpn_at_hrr;
    int tp_at_hrr;
    int sni_at_hrr;
};
static struct hrr_seen seen;

static int spy_add(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data, size_t len)
{
    if (seen.adds++ == 0) { /* the HelloRetryRequest */
        const unsigned char *alpn;
        unsigned int alpn_len;
        const uint8_t *tp;
        size_t tp_len;
        SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
        SSL_get_peer_quic_transport_params(ssl, &tp, &tp_len);
        seen.alpn_at_hrr = alpn_len == 2 && memcmp(alpn, "h3", 2) == 0;
        seen.tp_at_hrr = tp_len > 0;
        const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        seen.sni_at_hrr = sni != NULL && strcmp(sni, "example.com") == 0;
    }
    return mock_quic_method.add_handshake_data(ssl, level, data, len);
}

/* quictls selects ALPN (and takes SNI and transport parameters) on the first ClientHello. */
static void alpn_is_selected_before_the_hello_retry_request(void **state)
{
    static SSL_QUIC_METHOD spy;
    struct mock_pair p;
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    spy = mock_quic_method;
    spy.add_handshake_data = spy_add;
    assert_int_equal(SSL_CTX_set1_groups_list(cctx, "X25519:P-384"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(sctx, "P-384"), 1);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(SSL_set_tlsext_host_name(p.client.ssl, "example.com"), 1);
    assert_int_equal(SSL_set_quic_method(p.server.ssl, &spy), 1);
    memset(&seen, 0, sizeof(seen));
    assert_true(mock_handshake(&p, 0));
    assert_int_equal(p.client.flushes, 3); /* there was a HelloRetryRequest */
    assert_true(seen.alpn_at_hrr);
    assert_true(seen.tp_at_hrr);
    assert_true(seen.sni_at_hrr);
    const unsigned char *alpn;
    unsigned int alpn_len;
    SSL_get0_alpn_selected(p.client.ssl, &alpn, &alpn_len);
    assert_memory_equal(alpn, "h3", 2);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tmp_key_is_not_kept),
        cmocka_unit_test(msg_callback_arg_is_kept),
        cmocka_unit_test(read_ahead_is_stored_and_inherited),
        cmocka_unit_test(unknown_ctrls_are_refused),
        cmocka_unit_test(alpn_is_selected_before_the_hello_retry_request),
    };
    return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
