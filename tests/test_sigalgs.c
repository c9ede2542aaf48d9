/*
 * Signature algorithms (sigalgs.c): SSL_CTX_set1_sigalgs_list and its siblings decide what is
 * offered (ClientHello, CertificateRequest), what we sign with and what the peer's
 * CertificateVerify may use; the signature and group getters.
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

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
};

static int setup_with(void **state, const char *cert)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx(cert);
    if (f->cctx == NULL || f->sctx == NULL)
        return -1;
    ERR_clear_error();
    *state = f;
    return 0;
}

static int setup(void **state) { return setup_with(state, "ecdsa256"); }
static int setup_rsa(void **state) { return setup_with(state, "rsa"); }

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

/* The first error's reason (the queue is emptied) and, if want_data, that its data has it. */
static void assert_error(int reason, const char *want_data)
{
    const char *data = NULL;
    int flags = 0;
    unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
    assert_int_equal(ERR_GET_REASON(e), reason);
    if (want_data != NULL) {
        assert_true(flags & ERR_TXT_STRING);
        assert_non_null(strstr(data, want_data));
    }
    ERR_clear_error();
}

static void lists_parse_as_openssl(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *ctx = f->cctx;
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256:rsa_pss_rsae_sha256:ed25519"), 1);
    assert_int_equal(ctx->sigalg_conf->sigalgs.n, 3);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[0], 0x0403);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[1], 0x0804);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[2], 0x0807);
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "RSA-PSS+SHA384:PSS+SHA512:RSA+SHA256"), 1);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[0], 0x0805);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[1], 0x0806);
    assert_int_equal(ctx->sigalg_conf->sigalgs.ids[2], 0x0401); /* kept: it may sign certificates */
    /* a failed call leaves the list as it was */
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256:bogus"), 0);
    assert_error(SSL_R_BAD_VALUE, "bogus");
    assert_int_equal(ctx->sigalg_conf->sigalgs.n, 3);
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "ed25519:ed25519"), 0);
    assert_error(SSL_R_BAD_VALUE, "duplicate");
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, ""), 0);
    assert_error(SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM, NULL);
    /* nothing TLS 1.3 can use in a CertificateVerify: an error naming the list */
    assert_int_equal(SSL_CTX_set1_client_sigalgs_list(ctx, "RSA+SHA256:RSA+SHA384"), 0);
    assert_error(SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM, "RSA+SHA256:RSA+SHA384");
    /* the NID-pair forms */
    static const int nids[] = {NID_sha384, EVP_PKEY_EC, NID_sha256, EVP_PKEY_RSA_PSS,
                               NID_undef, EVP_PKEY_ED25519};
    assert_int_equal(SSL_CTX_set1_client_sigalgs(ctx, nids, 6), 1);
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.n, 3);
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.ids[0], 0x0503);
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.ids[1], 0x0804);
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.ids[2], 0x0807);
    assert_int_equal(SSL_CTX_set1_sigalgs(ctx, nids, 5), 0);
    assert_error(ERR_GET_REASON(ERR_R_PASSED_INVALID_ARGUMENT), NULL);
    static const int md5[] = {NID_md5, EVP_PKEY_RSA};
    assert_int_equal(SSL_CTX_set1_sigalgs(ctx, md5, 2), 0);
    assert_error(SSL_R_BAD_VALUE, NULL);
    /* SSL_new copies; the SSL_ forms change the connection only */
    SSL *s = SSL_new(ctx);
    assert_int_equal(s->sigalg_conf->client_sigalgs.n, 3);
    assert_int_equal(SSL_set1_sigalgs_list(s, "ed25519"), 1);
    assert_int_equal(SSL_set1_client_sigalgs_list(s, "ecdsa_secp256r1_sha256"), 1);
    assert_int_equal(s->sigalg_conf->sigalgs.n, 1);
    assert_int_equal(ctx->sigalg_conf->sigalgs.n, 3);
    assert_int_equal(SSL_set1_sigalgs(s, nids, 2), 1);
    assert_int_equal(s->sigalg_conf->sigalgs.ids[0], 0x0503);
    SSL_free(s);
}

/* SSL_new shares its context's lists, yet a later change on either side stays on that side. */
static void lists_set_after_ssl_new_stay_apart(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *ctx = f->cctx;
    SSL *plain = SSL_new(ctx);
    assert_null(plain->sigalg_conf); /* none set: no copy held */
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "ed25519:ecdsa_secp256r1_sha256"), 1);
    assert_null(plain->sigalg_conf); /* the context's change does not reach it, as OpenSSL */
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(s->sigalg_conf, ctx->sigalg_conf);
    assert_int_equal(SSL_CTX_set1_client_sigalgs_list(ctx, "ecdsa_secp384r1_sha384"), 1);
    assert_int_equal(SSL_CTX_set1_sigalgs_list(ctx, "rsa_pss_rsae_sha256"), 1);
    assert_int_equal(s->sigalg_conf->sigalgs.n, 2);
    assert_int_equal(s->sigalg_conf->sigalgs.ids[0], 0x0807);
    assert_int_equal(s->sigalg_conf->client_sigalgs.n, 0);
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.ids[0], 0x0503);
    SSL *t = SSL_new(ctx);
    assert_int_equal(SSL_set1_client_sigalgs_list(t, "ed25519"), 1);
    assert_int_equal(t->sigalg_conf->sigalgs.ids[0], 0x0804); /* the other list kept */
    assert_int_equal(ctx->sigalg_conf->client_sigalgs.ids[0], 0x0503);
    SSL_CTX_free(ctx); /* the connections keep it and their lists */
    f->cctx = NULL;
    assert_int_equal(s->sigalg_conf->sigalgs.ids[1], 0x0403);
    SSL_free(plain);
    SSL_free(s);
    SSL_free(t);
}

/* The signature_algorithms extension of a handshake message (ClientHello or CertificateRequest). */
struct captured {
    uint8_t type;
    uint8_t list[64];
    size_t len;
};

static void capture_cb(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    struct captured *c = arg;
    const uint8_t *m = buf;
    struct rd r, skip, exts, body;
    uint16_t v, type;
    if (!write_p || content_type != SSL3_RT_HANDSHAKE || m[0] != c->type)
        return;
    rd_init(&r, m + 4, len - 4);
    if (c->type == HT_CLIENT_HELLO) {
        if (!rd_u16(&r, &v) || !rd_bytes(&r, 32, &skip) || !rd_vec8(&r, &skip) ||
            !rd_vec16(&r, &skip) || !rd_vec8(&r, &skip))
            return;
    } else if (!rd_vec8(&r, &skip)) {
        return;
    }
    if (!rd_vec16(&r, &exts))
        return;
    while (rd_u16(&exts, &type) && rd_vec16(&exts, &body)) {
        struct rd list;
        if (type == 13 && rd_vec16(&body, &list) && list.n <= sizeof(c->list)) {
            memcpy(c->list, list.p, list.n);
            c->len = list.n;
        }
    }
}

static void client_hello_offers_the_configured_list(void **state)
{
    struct fixture *f = *state;
    struct captured cap = {HT_CLIENT_HELLO, {0}, 0};
    assert_int_equal(SSL_CTX_set1_sigalgs_list(f->cctx, "ed25519:ecdsa_secp256r1_sha256"), 1);
    SSL_CTX_set_msg_callback(f->cctx, capture_cb);
    SSL_CTX_set_msg_callback_arg(f->cctx, &cap);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(cap.len, 4);
    assert_memory_equal(cap.list, "\x08\x07\x04\x03", 4);
    /* the server signed with what we offered, and both sides report it */
    int nid = 0;
    assert_int_equal(SSL_get_peer_signature_type_nid(f->p.client.ssl, &nid), 1);
    assert_int_equal(nid, EVP_PKEY_EC);
    assert_int_equal(SSL_get_peer_signature_nid(f->p.client.ssl, &nid), 1);
    assert_int_equal(nid, NID_sha256);
    assert_int_equal(SSL_get_signature_type_nid(f->p.server.ssl, &nid), 1);
    assert_int_equal(nid, EVP_PKEY_EC);
    assert_int_equal(SSL_get_signature_nid(f->p.server.ssl, &nid), 1);
    assert_int_equal(nid, NID_sha256);
    /* the client signed nothing */
    assert_int_equal(SSL_get_signature_type_nid(f->p.client.ssl, &nid), 0);
    assert_int_equal(SSL_get_peer_signature_type_nid(f->p.server.ssl, &nid), 0);
}

/* A client offering nothing the server's key can sign: handshake_failure from the server. */
static void nothing_shared_fails_the_handshake(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_sigalgs_list(f->cctx, "ecdsa_secp384r1_sha384:ed25519"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_HANDSHAKE_FAILURE);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM);
}

/* The server's own list limits what it signs with, whatever the client offers. */
static void server_list_limits_what_it_signs_with(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_sigalgs_list(f->sctx, "rsa_pss_rsae_sha256"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0)); /* an ECDSA key cannot sign rsa_pss_rsae_sha256 */
    assert_int_equal(f->p.server.alert, SSL_AD_HANDSHAKE_FAILURE);
}

static void rsa_server_signs_with_the_listed_pss_hash(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_sigalgs_list(f->sctx, "RSA-PSS+SHA384"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    int nid = 0;
    assert_int_equal(SSL_get_peer_signature_type_nid(f->p.client.ssl, &nid), 1);
    assert_int_equal(nid, EVP_PKEY_RSA_PSS);
    assert_int_equal(SSL_get_peer_signature_nid(f->p.client.ssl, &nid), 1);
    assert_int_equal(nid, NID_sha384);
}

/* The peer's CertificateVerify must use a scheme from the list we sent. */
static void certificate_verify_outside_our_list_is_refused(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_sigalgs_list(f->cctx, "ecdsa_secp256r1_sha256:ed25519"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1); /* ClientHello sent with both */
    /* then the client stops accepting ECDSA P-256 (its list as if it had sent only ed25519) */
    assert_int_equal(SSL_set1_sigalgs_list(f->p.client.ssl, "ed25519"), 1);
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.client.alert, SSL_AD_ILLEGAL_PARAMETER);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_WRONG_SIGNATURE_TYPE);
}

/* CertificateRequest carries client_sigalgs; the client signs with a scheme from it. */
static void certificate_request_offers_client_sigalgs(void **state)
{
    struct fixture *f = *state;
    struct captured cap = {HT_CERTIFICATE_REQUEST, {0}, 0};
    assert_int_equal(SSL_CTX_set1_client_sigalgs_list(f->sctx, "ecdsa_secp256r1_sha256"), 1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_load_verify_file(f->sctx, mock_cert_path("ca.pem")), 1);
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM), 1);
    SSL_CTX_set_msg_callback(f->sctx, capture_cb);
    SSL_CTX_set_msg_callback_arg(f->sctx, &cap);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(cap.len, 2);
    assert_memory_equal(cap.list, "\x04\x03", 2);
    int nid = 0;
    assert_int_equal(SSL_get_peer_signature_type_nid(f->p.server.ssl, &nid), 1);
    assert_int_equal(nid, EVP_PKEY_EC);
    assert_int_equal(SSL_get_signature_nid(f->p.client.ssl, &nid), 1);
    assert_int_equal(nid, NID_sha256);
}

/* A client whose key cannot sign any requested scheme sends no certificate. */
static void client_key_outside_client_sigalgs_sends_none(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_client_sigalgs_list(f->sctx, "ed25519"), 1);
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_CERTIFICATE_REQUIRED);
}

static void group_getters_report_the_clients_groups(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set1_groups_list(f->cctx, "X25519:P-256:P-384"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(f->sctx, "P-384:P-256"), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    SSL *s = f->p.server.ssl;
    int nids[8];
    assert_int_equal(SSL_get1_groups(s, NULL), 3);
    assert_int_equal(SSL_get1_curves(s, nids), 3);
    assert_int_equal(nids[0], NID_X25519);
    assert_int_equal(nids[1], NID_X9_62_prime256v1);
    assert_int_equal(nids[2], NID_secp384r1);
    /* shared, in the client's order unless the server prefers its own */
    assert_int_equal(SSL_get_shared_group(s, -1), 2);
    assert_int_equal(SSL_get_shared_group(s, 0), NID_X9_62_prime256v1);
    assert_int_equal(SSL_get_shared_group(s, 1), NID_secp384r1);
    assert_int_equal(SSL_get_shared_group(s, 2), 0);
    SSL_set_options(s, SSL_OP_CIPHER_SERVER_PREFERENCE);
    assert_int_equal(SSL_get_shared_group(s, 0), NID_secp384r1);
    assert_int_equal(SSL_get_shared_curve(s, 1), NID_X9_62_prime256v1);
    /* a client has no peer groups and no shared ones */
    assert_int_equal(SSL_get1_groups(f->p.client.ssl, NULL), 0);
    assert_int_equal(SSL_get_shared_group(f->p.client.ssl, -1), 0);
    assert_int_equal(SSL_get_negotiated_group(s), NID_secp384r1); /* the server's choice at HRR */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(lists_parse_as_openssl),
        T(lists_set_after_ssl_new_stay_apart),
        T(client_hello_offers_the_configured_list),
        T(nothing_shared_fails_the_handshake),
        T(server_list_limits_what_it_signs_with),
        cmocka_unit_test_setup_teardown(rsa_server_signs_with_the_listed_pss_hash, setup_rsa,
                                        teardown),
        T(certificate_verify_outside_our_list_is_refused),
        T(certificate_request_offers_client_sigalgs),
        T(client_key_outside_client_sigalgs_sends_none),
        T(group_getters_report_the_clients_groups),
#undef T
    };
    return cmocka_run_group_tests_name("sigalgs", tests, NULL, NULL);
}
