/*
 * Feature-test macros count as API: consumers decide what to call by what quictls defines.
 * This file is built as a consumer is, with include/compat first on the include path
 * (TEST_CPPFLAGS_test_macros in the Makefile), so <openssl/ssl.h> is qtls's compat header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/crypto.h>
#include <openssl/ssl.h>

/* What quictls's headers define for the QUIC API, with its values. */
#if !defined(OPENSSL_INFO_QUIC) || OPENSSL_INFO_QUIC != 2000
#error "quictls defines OPENSSL_INFO_QUIC 2000 (nginx and HAProxy test it)"
#endif
#if !defined(SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION) ||                             \
    SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION != 801
#error "nginx detects the quictls API by SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION"
#endif
#if SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED != 800
#error "SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED"
#endif
#if TLSEXT_TYPE_quic_transport_parameters != 0x39 ||                                            \
    TLSEXT_TYPE_quic_transport_parameters_draft != 0xffa5
#error "transport parameter codepoints"
#endif
#if X25519_PRIVATE_KEY_LEN != 32 || X25519_PUBLIC_VALUE_LEN != 32
#error "quictls's X25519 lengths"
#endif
/* Nothing that claims an API qtls does not implement. */
#if defined(OPENSSL_NO_QUIC) || defined(OPENSSL_IS_BORINGSSL) || defined(OPENSSL_IS_AWSLC)
#error "qtls must not claim to be BoringSSL / AWS-LC or to lack QUIC"
#endif

/* quictls's OPENSSL_info answers "QUIC" for OPENSSL_INFO_QUIC; others are libcrypto's. */
static void openssl_info_answers_quic(void **state)
{
    const char *q = OPENSSL_info(OPENSSL_INFO_QUIC);
    assert_non_null(q);
    assert_string_equal(q, "QUIC");
    const char *dir = OPENSSL_info(OPENSSL_INFO_CONFIG_DIR);
    assert_non_null(dir);
    assert_null(OPENSSL_info(1999));
}

/* The QUIC method initialises positionally with quictls's four members, as consumers do. */
static int f_secrets(SSL *s, OSSL_ENCRYPTION_LEVEL l, const uint8_t *r, const uint8_t *w,
                     size_t n)
{
    return 1;
}
static int f_add(SSL *s, OSSL_ENCRYPTION_LEVEL l, const uint8_t *d, size_t n) { return 1; }
static int f_flush(SSL *s) { return 1; }
static int f_alert(SSL *s, enum ssl_encryption_level_t l, uint8_t a) { return 1; }

static void quic_method_and_levels_as_quictls(void **state)
{
    static const SSL_QUIC_METHOD m = {f_secrets, f_add, f_flush, f_alert};
    assert_int_equal(sizeof(m), 4 * sizeof(void (*)(void)));
    assert_int_equal(ssl_encryption_initial, 0);
    assert_int_equal(ssl_encryption_early_data, 1);
    assert_int_equal(ssl_encryption_handshake, 2);
    assert_int_equal(ssl_encryption_application, 3);
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_set_quic_method(ctx, &m), 1);
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_is_quic(s), 1);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openssl_info_answers_quic),
        cmocka_unit_test(quic_method_and_levels_as_quictls),
    };
    return cmocka_run_group_tests_name("macros", tests, NULL, NULL);
}
