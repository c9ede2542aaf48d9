/*
 * The cipher-list getters (issue 9 item 5.4) and the curve forms of the group macros (5.5):
 * SSL_CTX_get_ciphers / SSL_get_ciphers / SSL_get_cipher_list follow the configured suites,
 * SSL_get1_supported_ciphers is empty when TLS 1.3 is excluded, a server sees the client's
 * cipher_suites bytes (SSL_get0_raw_cipherlist) and known suites (SSL_get_client_ciphers),
 * SSL_bytes_to_cipher_list parses both formats and refuses malformed lists, and every
 * SSL_*curves* macro of <openssl/ssl.h> reaches the group code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

static void lists_follow_the_configuration(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    STACK_OF(SSL_CIPHER) *sk = SSL_CTX_get_ciphers(ctx);
    assert_int_equal(sk_SSL_CIPHER_num(sk), 3); /* the default: no CCM */
    assert_string_equal(SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, 0)), "TLS_AES_128_GCM_SHA256");
    assert_ptr_equal(SSL_CTX_get_ciphers(ctx), sk); /* the same view while nothing changes */
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256"),
                     1);
    sk = SSL_CTX_get_ciphers(ctx);
    assert_int_equal(sk_SSL_CIPHER_num(sk), 2);
    assert_int_equal(SSL_CIPHER_get_id(sk_SSL_CIPHER_value(sk, 1)), TLS1_3_CK_AES_128_CCM_SHA256);

    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_set_ciphersuites(s, "TLS_AES_256_GCM_SHA384"), 1);
    assert_int_equal(sk_SSL_CIPHER_num(SSL_get_ciphers(s)), 1);
    assert_string_equal(SSL_get_cipher_list(s, 0), "TLS_AES_256_GCM_SHA384");
    assert_null(SSL_get_cipher_list(s, 1));
    assert_null(SSL_get_cipher_list(s, -1));
    assert_int_equal(sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(ctx)), 2); /* the context's stays */

    STACK_OF(SSL_CIPHER) *sup = SSL_get1_supported_ciphers(s);
    assert_int_equal(sk_SSL_CIPHER_num(sup), 1);
    sk_SSL_CIPHER_free(sup);
    /* Without TLS 1.3 nothing is supported: NULL, as OpenSSL when no version is left. */
    assert_int_equal(SSL_set_max_proto_version(s, TLS1_2_VERSION), 1);
    assert_null(SSL_get1_supported_ciphers(s));
    assert_int_equal(SSL_set_max_proto_version(s, 0), 1);
    SSL_set_options(s, SSL_OP_NO_TLSv1_3);
    assert_null(SSL_get1_supported_ciphers(s));

    assert_null(SSL_get_ciphers(NULL));
    assert_null(SSL_CTX_get_ciphers(NULL));
    /* Before a ClientHello there is no raw list; without a pointer, the entry size. */
    const unsigned char *raw = NULL;
    assert_int_equal(SSL_get0_raw_cipherlist(s, &raw), 0);
    assert_int_equal(SSL_get0_raw_cipherlist(s, NULL), 2);
    assert_null(SSL_get_client_ciphers(s));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void bytes_to_cipher_list(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *s = SSL_new(ctx);
    /* AES-128-GCM, an unknown TLS 1.2 suite, CHACHA20, both SCSVs. */
    static const unsigned char two[] = {0x13, 0x01, 0xc0, 0x2f, 0x13, 0x03, 0x00, 0xff, 0x56, 0x00};
    STACK_OF(SSL_CIPHER) *sk = NULL, *scsvs = NULL;
    assert_int_equal(SSL_bytes_to_cipher_list(s, two, sizeof(two), 0, &sk, &scsvs), 1);
    assert_int_equal(sk_SSL_CIPHER_num(sk), 2);
    assert_int_equal(SSL_CIPHER_get_protocol_id(sk_SSL_CIPHER_value(sk, 1)), 0x1303);
    assert_int_equal(sk_SSL_CIPHER_num(scsvs), 2);
    assert_int_equal(SSL_CIPHER_get_id(sk_SSL_CIPHER_value(scsvs, 0)), SSL3_CK_SCSV);
    assert_string_equal(SSL_CIPHER_get_name(sk_SSL_CIPHER_value(scsvs, 1)), "TLS_FALLBACK_SCSV");
    sk_SSL_CIPHER_free(sk);
    sk_SSL_CIPHER_free(scsvs);
    /* SSLv2 format: 3 bytes each; entries with a non-zero first byte are SSLv2's, skipped. */
    static const unsigned char v2[] = {0x00, 0x13, 0x02, 0x01, 0x00, 0x80};
    sk = NULL;
    assert_int_equal(SSL_bytes_to_cipher_list(s, v2, sizeof(v2), 1, &sk, NULL), 1);
    assert_int_equal(sk_SSL_CIPHER_num(sk), 1);
    assert_int_equal(SSL_CIPHER_get_protocol_id(sk_SSL_CIPHER_value(sk, 0)), 0x1302);
    sk_SSL_CIPHER_free(sk);
    /* Nothing known: empty stacks, not NULL. */
    static const unsigned char unknown[] = {0xc0, 0x2f};
    sk = NULL;
    assert_int_equal(SSL_bytes_to_cipher_list(s, unknown, 2, 0, &sk, NULL), 1);
    assert_non_null(sk);
    assert_int_equal(sk_SSL_CIPHER_num(sk), 0);
    sk_SSL_CIPHER_free(sk);
    /* Negative: empty, odd length, v2 length not a multiple of 3; outputs untouched. */
    sk = (STACK_OF(SSL_CIPHER) *)&sk;
    assert_int_equal(SSL_bytes_to_cipher_list(s, two, 0, 0, &sk, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_NO_CIPHERS_SPECIFIED);
    assert_int_equal(SSL_bytes_to_cipher_list(s, two, 3, 0, &sk, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_ERROR_IN_RECEIVED_CIPHER_LIST);
    assert_int_equal(SSL_bytes_to_cipher_list(s, two, 4, 1, &sk, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_ERROR_IN_RECEIVED_CIPHER_LIST);
    assert_ptr_equal(sk, (STACK_OF(SSL_CIPHER) *)&sk);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* The server sees what the client sent: the raw bytes and the suites among them it knows. */
static void server_sees_the_client_list(void **state)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    struct mock_pair p;
    assert_int_equal(
        SSL_CTX_set_ciphersuites(cctx, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(cctx, "P-256:X25519:P-384"), 1);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(mock_handshake(&p, 0), 1);
    const unsigned char *raw = NULL;
    static const unsigned char expect[] = {0x13, 0x03, 0x13, 0x02};
    assert_int_equal(SSL_get0_raw_cipherlist(p.server.ssl, &raw), sizeof(expect));
    assert_memory_equal(raw, expect, sizeof(expect));
    STACK_OF(SSL_CIPHER) *cl = SSL_get_client_ciphers(p.server.ssl);
    assert_int_equal(sk_SSL_CIPHER_num(cl), 2);
    assert_int_equal(SSL_CIPHER_get_protocol_id(sk_SSL_CIPHER_value(cl, 0)), 0x1303);
    assert_null(SSL_get_client_ciphers(p.client.ssl));
    assert_int_equal(SSL_get0_raw_cipherlist(p.client.ssl, &raw), 0);

    /* Item 5: the curve spellings of the group macros, each form. */
    int n = (int)SSL_get1_curves(p.server.ssl, NULL);
    assert_int_equal(n, 3);
    int nids[3] = {0};
    assert_int_equal(SSL_get1_curves(p.server.ssl, nids), 3);
    assert_int_equal(nids[0], NID_X9_62_prime256v1);
    assert_int_equal(nids[1], NID_X25519);
    assert_int_equal(nids[2], NID_secp384r1);
    assert_int_equal(SSL_ctrl(p.server.ssl, SSL_CTRL_GET_CURVES, 0, NULL), 3);
    assert_int_equal(SSL_get_shared_curve(p.server.ssl, -1), 3); /* all in the server's default */
    assert_int_equal(SSL_get_shared_curve(p.server.ssl, 0), NID_X9_62_prime256v1);
    assert_int_equal(SSL_get_shared_curve(p.client.ssl, -1), 0); /* a client has none */
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static void curve_setters_are_the_group_setters(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_CTX_set1_curves_list(ctx, "P-384:X25519"), 1);
    int nids[] = {NID_X448, NID_X9_62_prime256v1};
    assert_int_equal(SSL_CTX_set1_curves(ctx, nids, 2), 1);
    assert_int_equal(SSL_set1_curves_list(s, "X25519"), 1);
    assert_int_equal(SSL_set1_curves(s, nids, 1), 1);
    /* Negative: an unknown name and an unknown NID. */
    assert_int_equal(SSL_CTX_set1_curves_list(ctx, "brainpoolP256r1"), 0);
    assert_int_not_equal(ERR_get_error(), 0);
    int bad[] = {NID_sect571k1};
    assert_int_equal(SSL_set1_curves(s, bad, 1), 0);
    assert_int_not_equal(ERR_get_error(), 0);
    /* Before a handshake a server has seen no groups. */
    assert_int_equal(SSL_get1_curves(s, NULL), 0);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(lists_follow_the_configuration, clear_errors),
        cmocka_unit_test_setup(bytes_to_cipher_list, clear_errors),
        cmocka_unit_test_setup(server_sees_the_client_list, clear_errors),
        cmocka_unit_test_setup(curve_setters_are_the_group_setters, clear_errors),
    };
    return cmocka_run_group_tests_name("cipher_lists", tests, NULL, NULL);
}
