/*
 * A program written for OpenSSL 3.5's third-party QUIC API compiles unchanged against qtls's
 * compat include path (built with -Iinclude/compat first, as pkg-config --cflags qtls puts it):
 * it includes only OpenSSL's headers, and finds the dispatch ids and callback types where 3.5
 * has them (<openssl/core_dispatch.h>), the three functions and the protection levels in
 * <openssl/ssl.h>, the reason code in <openssl/sslerr.h>. The callbacks are declared with the
 * exact prototypes of SSL_set_quic_tls_cbs(3), assigned to 3.5's typedefs (a mismatch is a
 * -Werror build failure), and the man page's example table is installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <openssl/core_dispatch.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/sslerr.h>

_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND == 2001, "3.5's id");
_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD == 2002, "3.5's id");
_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD == 2003, "3.5's id");
_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET == 2004, "3.5's id");
_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS == 2005, "3.5's id");
_Static_assert(OSSL_FUNC_SSL_QUIC_TLS_ALERT == 2006, "3.5's id");
_Static_assert(OSSL_RECORD_PROTECTION_LEVEL_NONE == 0 && OSSL_RECORD_PROTECTION_LEVEL_EARLY == 1 &&
                   OSSL_RECORD_PROTECTION_LEVEL_HANDSHAKE == 2 &&
                   OSSL_RECORD_PROTECTION_LEVEL_APPLICATION == 3,
               "3.5's levels");
_Static_assert(SSL_R_MISSING_QUIC_TLS_FUNCTIONS == 423, "3.5's reason");

static int crypto_send_cb(SSL *s, const unsigned char *buf, size_t buf_len, size_t *consumed,
                          void *arg)
{
    *consumed = buf_len;
    ++*(int *)arg;
    return 1;
}

static int crypto_recv_rcd_cb(SSL *s, const unsigned char **buf, size_t *bytes_read, void *arg)
{
    *buf = NULL;
    *bytes_read = 0;
    return 1;
}

static int crypto_release_rcd_cb(SSL *s, size_t bytes_read, void *arg) { return 1; }

static int yield_secret_cb(SSL *s, uint32_t prot_level, int direction,
                           const unsigned char *secret, size_t secret_len, void *arg)
{
    return 1;
}

static int got_transport_params_cb(SSL *s, const unsigned char *params, size_t params_len,
                                   void *arg)
{
    return 1;
}

static int alert_cb(SSL *s, unsigned char alert_code, void *arg) { return 1; }

/* 3.5's typedefs take exactly these prototypes. */
static OSSL_FUNC_SSL_QUIC_TLS_crypto_send_fn *const send_fn = crypto_send_cb;
static OSSL_FUNC_SSL_QUIC_TLS_crypto_recv_rcd_fn *const recv_fn = crypto_recv_rcd_cb;
static OSSL_FUNC_SSL_QUIC_TLS_crypto_release_rcd_fn *const release_fn = crypto_release_rcd_cb;
static OSSL_FUNC_SSL_QUIC_TLS_yield_secret_fn *const yield_fn = yield_secret_cb;
static OSSL_FUNC_SSL_QUIC_TLS_got_transport_params_fn *const tp_fn = got_transport_params_cb;
static OSSL_FUNC_SSL_QUIC_TLS_alert_fn *const alert_fn = alert_cb;

/* SSL_set_quic_tls_cbs(3), EXAMPLES. */
static const OSSL_DISPATCH qtdis[] = {
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_SEND, (void (*)(void))crypto_send_cb},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RECV_RCD, (void (*)(void))crypto_recv_rcd_cb},
    {OSSL_FUNC_SSL_QUIC_TLS_CRYPTO_RELEASE_RCD, (void (*)(void))crypto_release_rcd_cb},
    {OSSL_FUNC_SSL_QUIC_TLS_YIELD_SECRET, (void (*)(void))yield_secret_cb},
    {OSSL_FUNC_SSL_QUIC_TLS_GOT_TRANSPORT_PARAMS, (void (*)(void))got_transport_params_cb},
    {OSSL_FUNC_SSL_QUIC_TLS_ALERT, (void (*)(void))alert_cb},
    OSSL_DISPATCH_END}; /* OpenSSL 3.2's marker, as ngtcp2's ossl backend ends its table */

static void the_man_page_example_installs_and_sends_a_client_hello(void **state)
{
    /* The accessors core_dispatch.h makes give back the functions of the table. */
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_crypto_send(&qtdis[0]), send_fn);
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_crypto_recv_rcd(&qtdis[1]), recv_fn);
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_crypto_release_rcd(&qtdis[2]), release_fn);
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_yield_secret(&qtdis[3]), yield_fn);
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_got_transport_params(&qtdis[4]), tp_fn);
    assert_ptr_equal(OSSL_FUNC_SSL_QUIC_TLS_alert(&qtdis[5]), alert_fn);

    static const unsigned char alpn[] = {2, 'h', '3'}, tp[] = {0x0f, 0x00};
    int sends = 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = SSL_new(ctx);
    assert_int_equal(SSL_set_quic_tls_cbs(ssl, qtdis, &sends), 1);
    assert_int_equal(SSL_set_quic_tls_transport_params(ssl, tp, sizeof(tp)), 1);
    assert_int_equal(SSL_set_alpn_protos(ssl, alpn, sizeof(alpn)), 0);
    int r = SSL_do_handshake(ssl);
    assert_int_equal(SSL_get_error(ssl, r), SSL_ERROR_WANT_READ);
    assert_int_equal(sends, 1); /* the ClientHello */
    SSL_free(ssl);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_man_page_example_installs_and_sends_a_client_hello),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
