/*
 * Security levels (issue 9 item 5.2) and the TLS 1.2 DHE settings (5.3): the default level 1,
 * key sizes and digests of the certificates we load and of the peer's chain checked against the
 * level with OpenSSL's reasons, the security callback replacing the rules, and the DH setters
 * accepted with OpenSSL's ownership. Also the protocol bounds and SSL_OP_NO_TLSv1_3: QUIC without
 * TLS 1.3 fails the handshake clearly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/dh.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "mock_quic.h"

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

/* A certificate for `key` signed by `signer` (itself if NULL) with `md`, CN = cn. */
static X509 *make_cert(EVP_PKEY *key, EVP_PKEY *signer, const char *cn, const EVP_MD *md)
{
    X509 *x = X509_new();
    assert_non_null(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_NAME *issuer = X509_get_issuer_name(x);
    X509_NAME_add_entry_by_txt(issuer, "CN", MBSTRING_ASC,
                               (const unsigned char *)(signer != NULL ? "signer" : cn), -1, -1, 0);
    X509_set_pubkey(x, key);
    assert_true(X509_sign(x, signer != NULL ? signer : key, md) > 0);
    return x;
}

static EVP_PKEY *rsa_1024(void)
{
    EVP_PKEY *k = EVP_RSA_gen(1024);
    assert_non_null(k);
    return k;
}

static void default_level_is_one_and_inherited(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_get_security_level(ctx), 1);
    SSL_CTX_set_security_level(ctx, 3);
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_security_level(s), 3);
    SSL_set_security_level(s, 0);
    assert_int_equal(SSL_get_security_level(s), 0);
    assert_int_equal(SSL_CTX_get_security_level(ctx), 3);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* RSA-1024 (80 bits): fine at level 1, EE_KEY_TOO_SMALL at level 2, on every loader. */
static void small_rsa_leaf_follows_the_level(void **state)
{
    EVP_PKEY *k = rsa_1024();
    X509 *x = make_cert(k, NULL, "small", EVP_sha256());
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
    SSL_CTX_set_security_level(ctx, 2);
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_EE_KEY_TOO_SMALL);
    assert_int_equal(SSL_CTX_use_cert_and_key(ctx, x, k, NULL, 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_EE_KEY_TOO_SMALL);
    unsigned char *der = NULL;
    int len = i2d_X509(x, &der);
    assert_int_equal(SSL_CTX_use_certificate_ASN1(ctx, len, der), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_EE_KEY_TOO_SMALL);
    OPENSSL_free(der);
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_use_certificate(s, x), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_EE_KEY_TOO_SMALL);
    SSL_set_security_level(s, 1);
    assert_int_equal(SSL_use_certificate(s, x), 1);
    /* A 1024-bit CA in a chain is CA_KEY_TOO_SMALL at level 2. */
    SSL_set_security_level(s, 2);
    assert_int_equal(SSL_add1_chain_cert(s, x), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_CA_KEY_TOO_SMALL);
    /* Level 0 allows anything. */
    SSL_CTX_set_security_level(ctx, 0);
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
    assert_int_equal(ERR_get_error(), 0);
    SSL_free(s);
    SSL_CTX_free(ctx);
    X509_free(x);
    EVP_PKEY_free(k);
}

/* A SHA-1 signature (63 bits in OpenSSL 3.0) is CA_MD_TOO_WEAK from level 1; not if self-signed. */
static void sha1_signed_leaf_is_too_weak(void **state)
{
    EVP_PKEY *ca = EVP_EC_gen("P-256"), *leaf = EVP_EC_gen("P-256");
    X509 *x = make_cert(leaf, ca, "leaf", EVP_sha1());
    X509 *self = make_cert(ca, NULL, "self", EVP_sha1());
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_CA_MD_TOO_WEAK);
    assert_int_equal(SSL_CTX_use_certificate(ctx, self), 1);
    SSL_CTX_set_security_level(ctx, 0);
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
    SSL_CTX_free(ctx);
    X509_free(x);
    X509_free(self);
    EVP_PKEY_free(ca);
    EVP_PKEY_free(leaf);
}

/* The security callback replaces the default rules (and sees the operation and bits). */
static int last_op, last_bits;
static int refuse_all(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid, void *other,
                      void *ex)
{
    last_op = op;
    last_bits = bits;
    return *(int *)ex;
}

static void security_callback_decides(void **state)
{
    int answer = 0;
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = make_cert(k, NULL, "ec", EVP_sha256());
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_security_callback(ctx, refuse_all);
    SSL_CTX_set0_security_ex_data(ctx, &answer);
    assert_ptr_equal(SSL_CTX_get_security_callback(ctx), refuse_all);
    assert_ptr_equal(SSL_CTX_get0_security_ex_data(ctx), &answer);
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_EE_KEY_TOO_SMALL);
    assert_int_equal(last_op, SSL_SECOP_EE_KEY);
    assert_int_equal(last_bits, 128);
    answer = 1;
    assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(SSL_get_security_callback(s), refuse_all);
    assert_ptr_equal(SSL_get0_security_ex_data(s), &answer);
    SSL_free(s);
    SSL_CTX_free(ctx);
    X509_free(x);
    EVP_PKEY_free(k);
}

/* The peer's chain: a client at level 2 refuses a server's RSA-1024 leaf, at level 1 accepts. */
static int select_h3(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    return SSL_select_next_proto((unsigned char **)out, outlen, h3, sizeof(h3), in, inlen) ==
                   OPENSSL_NPN_NEGOTIATED
               ? SSL_TLSEXT_ERR_OK
               : SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int small_key_handshake(int client_level, struct mock_pair *p)
{
    EVP_PKEY *k = rsa_1024();
    X509 *x = make_cert(k, NULL, "localhost", EVP_sha256());
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method()), *cctx = mock_client_ctx();
    assert_int_equal(SSL_CTX_set_quic_method(sctx, &mock_quic_method), 1);
    assert_int_equal(SSL_CTX_use_certificate(sctx, x), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(sctx, k), 1);
    SSL_CTX_set_alpn_select_cb(sctx, select_h3, NULL);
    assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), x), 1);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_security_level(cctx, client_level);
    assert_true(mock_pair_init(p, cctx, sctx));
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    X509_free(x);
    EVP_PKEY_free(k);
    return mock_handshake(p, 0);
}

static void peer_key_size_follows_the_level(void **state)
{
    struct mock_pair p;
    assert_int_equal(small_key_handshake(1, &p), 1);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_OK);
    mock_pair_free(&p);
    assert_int_equal(small_key_handshake(2, &p), 0);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), X509_V_ERR_EE_KEY_TOO_SMALL);
    assert_int_equal(p.client.alert, SSL_AD_BAD_CERTIFICATE);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CERTIFICATE_VERIFY_FAILED);
    mock_pair_free(&p);
}

/* Groups below the level are neither offered nor accepted (X25519, P-256: 128 bits). */
static void groups_follow_the_level(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    assert_true(mock_pair_init(&p, cctx, sctx));
    SSL_set_security_level(p.client.ssl, 4); /* 192 bits: X25519MLKEM768, P-384, X448 left */
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(SSL_get_negotiated_group(p.client.ssl), TLSEXT_nid_unknown | 0x11ec);
    int nids[8];
    assert_int_equal(SSL_get1_groups(p.server.ssl, nids), 3); /* what the client offered */
    assert_int_equal(nids[0], TLSEXT_nid_unknown | 0x11ec);
    assert_int_equal(nids[1], NID_secp384r1);
    assert_int_equal(nids[2], NID_X448);
    mock_pair_free(&p);

    /* Without the hybrid, P-384 is the first group left (X25519, P-256 are below the level). */
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(SSL_set1_groups_list(p.client.ssl, "X25519:P-256:P-384:X448"), 1);
    SSL_set_security_level(p.client.ssl, 4);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(SSL_get_negotiated_group(p.client.ssl), NID_secp384r1);
    mock_pair_free(&p);

    /* A server at level 4 does not accept the client's 128-bit groups. */
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(SSL_set1_groups_list(p.client.ssl, "X25519:P-256"), 1);
    SSL_set_security_level(p.server.ssl, 4);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_not_equal(p.server.alert, 0);
    mock_pair_free(&p);
    ERR_clear_error();

    /* Level 5 (256 bits) leaves the client nothing to offer. */
    assert_true(mock_pair_init(&p, cctx, sctx));
    SSL_set_security_level(p.client.ssl, 5);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_NO_SUITABLE_GROUPS);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* ---- DH: accepted, stored, OpenSSL's ownership ---- */

static EVP_PKEY *dh_params(const char *name)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_utf8_string("group", (char *)name, 0), OSSL_PARAM_END};
    assert_non_null(pctx);
    assert_int_equal(EVP_PKEY_paramgen_init(pctx), 1);
    assert_int_equal(EVP_PKEY_CTX_set_params(pctx, params), 1);
    assert_int_equal(EVP_PKEY_paramgen(pctx, &pkey), 1);
    EVP_PKEY_CTX_free(pctx);
    return pkey;
}

static void dh_settings_are_accepted(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL *s = SSL_new(ctx);
    /* set0 takes the key (ASan would see a leak or a double free otherwise). */
    assert_int_equal(SSL_CTX_set0_tmp_dh_pkey(ctx, dh_params("ffdhe2048")), 1);
    assert_int_equal(SSL_CTX_set0_tmp_dh_pkey(ctx, dh_params("ffdhe3072")), 1);
    assert_int_equal(SSL_set0_tmp_dh_pkey(s, dh_params("ffdhe2048")), 1);
    assert_int_equal(SSL_CTX_set_dh_auto(ctx, 1), 1);
    assert_int_equal(SSL_set_dh_auto(s, 1), 1);
    /* set_tmp_dh copies: the caller keeps and frees its DH. */
    EVP_PKEY *p = dh_params("ffdhe2048");
    DH *dh = EVP_PKEY_get1_DH(p);
    assert_int_equal(SSL_CTX_set_tmp_dh(ctx, dh), 1);
    assert_int_equal(SSL_set_tmp_dh(s, dh), 1);
    DH_free(dh);
    EVP_PKEY_free(p);
    /* Negative: NULL, a key under the level (on failure the caller keeps it), the ctrl callback. */
    assert_int_equal(SSL_CTX_set0_tmp_dh_pkey(ctx, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_NULL_PARAMETER);
    assert_int_equal(SSL_CTX_set_tmp_dh(ctx, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_NULL_PARAMETER);
    SSL_CTX_set_security_level(ctx, 4); /* 192 bits: ffdhe2048 (112) is too small */
    EVP_PKEY *small = dh_params("ffdhe2048");
    assert_int_equal(SSL_CTX_set0_tmp_dh_pkey(ctx, small), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_DH_KEY_TOO_SMALL);
    EVP_PKEY_free(small);
    assert_int_equal(SSL_CTX_ctrl(ctx, SSL_CTRL_SET_TMP_DH_CB, 0, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* ---- QUIC needs TLS 1.3: bounds and SSL_OP_NO_TLSv1_3 without it fail the handshake ---- */

static void no_tls13_fails_the_handshake(void **state)
{
    for (int how = 0; how < 3; how++) {
        struct mock_pair p;
        SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
        assert_true(mock_pair_init(&p, cctx, sctx));
        if (how == 0)
            assert_int_equal(SSL_set_max_proto_version(p.client.ssl, TLS1_2_VERSION), 1);
        else if (how == 1)
            SSL_set_options(p.client.ssl, SSL_OP_NO_TLSv1_3);
        else
            SSL_set_options(p.server.ssl, SSL_OP_NO_TLSv1_3);
        ERR_clear_error();
        assert_int_equal(mock_handshake(&p, 0), 0);
        unsigned long e = ERR_peek_error();
        assert_int_equal(ERR_GET_REASON(e), SSL_R_NO_PROTOCOLS_AVAILABLE);
        assert_int_equal(how == 2 ? p.server.alert : p.client.alert, SSL_AD_PROTOCOL_VERSION);
        mock_pair_free(&p);
        SSL_CTX_free(cctx);
        SSL_CTX_free(sctx);
        ERR_clear_error();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(default_level_is_one_and_inherited, clear_errors),
        cmocka_unit_test_setup(small_rsa_leaf_follows_the_level, clear_errors),
        cmocka_unit_test_setup(sha1_signed_leaf_is_too_weak, clear_errors),
        cmocka_unit_test_setup(security_callback_decides, clear_errors),
        cmocka_unit_test_setup(peer_key_size_follows_the_level, clear_errors),
        cmocka_unit_test_setup(groups_follow_the_level, clear_errors),
        cmocka_unit_test_setup(dh_settings_are_accepted, clear_errors),
        cmocka_unit_test_setup(no_tls13_fails_the_handshake, clear_errors),
    };
    return cmocka_run_group_tests_name("seclevel", tests, NULL, NULL);
}
