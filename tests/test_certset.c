/*
 * Several certificates on one context (one slot per key type, as OpenSSL),
 * the server's choice among them, the chain ctrls, SSL_use_* on a
 * connection, SSL_set_SSL_CTX with and without the connection's own
 * certificates, the certificate callback (including its retry through
 * SSL_ERROR_WANT_X509_LOOKUP) and encrypted keys through the password callback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

static X509 *load_cert(const char *name)
{
    BIO *in = BIO_new_file(mock_cert_path(name), "r");
    assert_non_null(in);
    X509 *x = PEM_read_bio_X509(in, NULL, NULL, NULL);
    BIO_free(in);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *load_key(const char *name)
{
    BIO *in = BIO_new_file(mock_cert_path(name), "r");
    assert_non_null(in);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
    BIO_free(in);
    assert_non_null(k);
    return k;
}

/* Adds the pair NAME.pem / NAME.key to a context. */
static void add_pair(SSL_CTX *ctx, const char *name)
{
    char pem[64], key[64];
    snprintf(pem, sizeof(pem), "%s.pem", name);
    snprintf(key, sizeof(key), "%s.key", name);
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, mock_cert_path(pem), SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path(key), SSL_FILETYPE_PEM), 1);
}

/* Whether a certificate is the one in the file NAME.pem. */
static int is_cert(X509 *x, const char *name)
{
    char pem[64];
    snprintf(pem, sizeof(pem), "%s.pem", name);
    X509 *want = load_cert(pem);
    int same = x != NULL && X509_cmp(x, want) == 0;
    X509_free(want);
    return same;
}

/* Runs a handshake; returns the certificate the client received (a new reference). */
static X509 *handshake_peer_cert(SSL_CTX *sctx, void (*tweak)(SSL *server))
{
    SSL_CTX *cctx = mock_client_ctx();
    struct mock_pair p;
    assert_non_null(cctx);
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    if (tweak != NULL)
        tweak(p.server.ssl);
    assert_int_equal(mock_handshake(&p, 0), 1);
    X509 *x = SSL_get1_peer_certificate(p.client.ssl);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    return x;
}

/* ------------------------------------------------------------------ */
/* Slots                                                               */
/* ------------------------------------------------------------------ */

static void each_key_type_keeps_its_own_slot(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    add_pair(ctx, "rsa");
    add_pair(ctx, "ed25519");
    add_pair(ctx, "ecdsa256");
    /* The last one set is current. */
    assert_true(is_cert(SSL_CTX_get0_certificate(ctx), "ecdsa256"));
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    /* FIRST / NEXT walk the complete pairs in OpenSSL's slot order: RSA, EC, Ed25519. */
    assert_int_equal(SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_FIRST), 1);
    assert_true(is_cert(SSL_CTX_get0_certificate(ctx), "rsa"));
    assert_int_equal(SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT), 1);
    assert_true(is_cert(SSL_CTX_get0_certificate(ctx), "ecdsa256"));
    assert_int_equal(SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT), 1);
    assert_true(is_cert(SSL_CTX_get0_certificate(ctx), "ed25519"));
    assert_int_equal(SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_NEXT), 0);
    assert_int_equal(SSL_CTX_set_current_cert(ctx, 42), 0);
    /* SERVER names the certificate a connection sent: not on a context. */
    assert_int_equal(SSL_CTX_set_current_cert(ctx, SSL_CERT_SET_SERVER), 0);
    SSL_CTX_free(ctx);
}

static void select_current_cert_matches_the_object(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    X509 *rsa = load_cert("rsa.pem"), *ec = load_cert("ecdsa256.pem");
    assert_int_equal(SSL_CTX_use_certificate(ctx, rsa), 1);
    assert_int_equal(SSL_CTX_use_certificate(ctx, ec), 1);
    assert_ptr_equal(SSL_CTX_get0_certificate(ctx), ec);
    assert_int_equal(SSL_CTX_select_current_cert(ctx, rsa), 1);
    assert_ptr_equal(SSL_CTX_get0_certificate(ctx), rsa);
    /* An equal certificate that is not the one set does not match (OpenSSL compares pointers). */
    X509 *copy = load_cert("ecdsa256.pem");
    assert_int_equal(SSL_CTX_select_current_cert(ctx, copy), 0);
    assert_ptr_equal(SSL_CTX_get0_certificate(ctx), rsa);
    X509_free(copy);
    X509_free(rsa);
    X509_free(ec);
    SSL_CTX_free(ctx);
}

static void cert_and_key_fill_a_slot_once_without_override(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    X509 *x = load_cert("ecdsa256.pem");
    EVP_PKEY *k = load_key("ecdsa256.key"), *other = load_key("ecdsa384.key");
    assert_int_equal(SSL_CTX_use_cert_and_key(ctx, x, k, NULL, 0), 1);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    assert_int_equal(SSL_CTX_use_cert_and_key(ctx, x, k, NULL, 0), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_NOT_REPLACING_CERTIFICATE);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_use_cert_and_key(ctx, x, k, NULL, 1), 1);
    assert_int_equal(SSL_CTX_use_cert_and_key(ctx, x, other, NULL, 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_PRIVATE_KEY_MISMATCH);
    ERR_clear_error();
    X509_free(x);
    EVP_PKEY_free(k);
    EVP_PKEY_free(other);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* The server's choice                                                 */
/* ------------------------------------------------------------------ */

/* A qtls client offers ECDSA, RSA-PSS and EdDSA: ECDSA wins, then EdDSA, then RSA-PSS. */
static void server_prefers_ecdsa_then_eddsa_then_rsa(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("rsa");
    X509 *x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "rsa"));
    X509_free(x);
    add_pair(sctx, "ed25519");
    x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "ed25519"));
    X509_free(x);
    add_pair(sctx, "ecdsa384");
    /* The current slot (RSA, say) does not matter: the key types do. */
    assert_int_equal(SSL_CTX_set_current_cert(sctx, SSL_CERT_SET_FIRST), 1);
    x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "ecdsa384"));
    X509_free(x);
    SSL_CTX_free(sctx);
}

/* After the handshake SSL_CERT_SET_SERVER makes the certificate sent current. */
static void connection_reports_the_certificate_sent(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("rsa"), *cctx = mock_client_ctx();
    add_pair(sctx, "ecdsa256");
    assert_int_equal(SSL_CTX_set_current_cert(sctx, SSL_CERT_SET_FIRST), 1); /* RSA current */
    struct mock_pair p;
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(SSL_set_current_cert(p.server.ssl, SSL_CERT_SET_SERVER), 0); /* not yet */
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_true(is_cert(SSL_get_certificate(p.server.ssl), "rsa"));
    assert_int_equal(SSL_set_current_cert(p.server.ssl, SSL_CERT_SET_SERVER), 1);
    assert_true(is_cert(SSL_get_certificate(p.server.ssl), "ecdsa256"));
    assert_non_null(SSL_get_privatekey(p.server.ssl));
    /* The connection's copy moved, not the context. */
    assert_true(is_cert(SSL_CTX_get0_certificate(sctx), "rsa"));
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* Each slot has its own chain; the context's extra certificates fill in for an empty one. */
static void each_slot_sends_its_own_chain(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("rsa"), *cctx = mock_client_ctx();
    assert_int_equal(
        SSL_CTX_use_certificate_chain_file(sctx, mock_cert_path("ecdsa256-inter-chain.pem")), 1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(sctx, mock_cert_path("ecdsa256-inter.key"), SSL_FILETYPE_PEM),
        1);
    assert_int_equal(SSL_CTX_set_current_cert(sctx, SSL_CERT_SET_FIRST), 1);
    STACK_OF(X509) *chain = NULL;
    assert_int_equal(SSL_CTX_get0_chain_certs(sctx, &chain), 1);
    assert_null(chain); /* RSA is current and has none */
    assert_int_equal(SSL_CTX_set_current_cert(sctx, SSL_CERT_SET_NEXT), 1);
    assert_int_equal(SSL_CTX_get0_chain_certs(sctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);

    struct mock_pair p;
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(p.client.ssl)), 2);
    mock_pair_free(&p);

    /* Only RSA, no chain of its own: the extra certificate is sent after it. */
    SSL_CTX *rctx = mock_server_ctx("rsa");
    assert_int_equal(SSL_CTX_add_extra_chain_cert(rctx, load_cert("inter.pem")), 1);
    assert_int_equal(mock_pair_init(&p, cctx, rctx), 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(p.client.ssl)), 2);
    mock_pair_free(&p);
    SSL_CTX_free(rctx);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* ------------------------------------------------------------------ */
/* Building chains                                                     */
/* ------------------------------------------------------------------ */

static void build_cert_chain_from_the_store(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    STACK_OF(X509) *chain = NULL;
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, 0), 0); /* no certificate */
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_NO_CERTIFICATE_SET);
    ERR_clear_error();
    add_pair(ctx, "ecdsa256-inter");
    /* Nothing trusted yet: the chain cannot be built ... */
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, 0), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_CERTIFICATE_VERIFY_FAILED);
    ERR_clear_error();
    /* ... unless errors are ignored (2), which keeps what was found. */
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR |
                                                       SSL_BUILD_CHAIN_FLAG_CLEAR_ERROR),
                     2);
    assert_int_equal(ERR_peek_error(), 0);
    /* With the root trusted and the intermediate as an untrusted helper: inter, root. */
    assert_int_equal(SSL_CTX_load_verify_locations(ctx, mock_cert_path("ca.pem"), NULL), 1);
    assert_int_equal(SSL_CTX_add0_chain_cert(ctx, load_cert("inter.pem")), 1);
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_UNTRUSTED), 1);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 2);
    assert_true(is_cert(sk_X509_value(chain, 0), "inter"));
    assert_true(is_cert(sk_X509_value(chain, 1), "ca"));
    /* _NO_ROOT drops the self-signed root. */
    assert_int_equal(SSL_CTX_build_cert_chain(
                         ctx, SSL_BUILD_CHAIN_FLAG_UNTRUSTED | SSL_BUILD_CHAIN_FLAG_NO_ROOT),
                     1);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);
    assert_true(is_cert(sk_X509_value(chain, 0), "inter"));
    SSL_CTX_free(ctx);
}

/* _CHECK uses only the chain present: out of order it is put in order, incomplete it fails. */
static void build_cert_chain_check_reorders_the_chain(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    STACK_OF(X509) *chain = NULL;
    add_pair(ctx, "ecdsa256-inter");
    assert_int_equal(SSL_CTX_add0_chain_cert(ctx, load_cert("inter.pem")), 1);
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_CHECK), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_CERTIFICATE_VERIFY_FAILED);
    ERR_clear_error();
    STACK_OF(X509) *sk = sk_X509_new_null();
    assert_true(sk_X509_push(sk, load_cert("ca.pem")));
    assert_true(sk_X509_push(sk, load_cert("inter.pem")));
    assert_int_equal(SSL_CTX_set0_chain(ctx, sk), 1);
    assert_int_equal(SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_CHECK), 1);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 2);
    assert_true(is_cert(sk_X509_value(chain, 0), "inter"));
    assert_true(is_cert(sk_X509_value(chain, 1), "ca"));
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* A connection's own certificates                                     */
/* ------------------------------------------------------------------ */

/* A cert_cb's usual move: drop what the context gave, set one pair. */
static void use_rsa_on_the_connection(SSL *s)
{
    SSL_certs_clear(s);
    assert_null(SSL_get_certificate(s));
    X509 *x = load_cert("rsa.pem");
    EVP_PKEY *k = load_key("rsa.key");
    assert_int_equal(SSL_use_certificate(s, x), 1);
    assert_int_equal(SSL_use_PrivateKey(s, k), 1);
    assert_int_equal(SSL_check_private_key(s), 1);
    assert_ptr_equal(SSL_get_certificate(s), x);
    assert_ptr_equal(SSL_get_privatekey(s), k);
    X509_free(x);
    EVP_PKEY_free(k);
}

static void ssl_use_overrides_the_context_for_one_connection(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ed25519");
    X509 *x = handshake_peer_cert(sctx, use_rsa_on_the_connection);
    assert_true(is_cert(x, "rsa")); /* the connection's RSA slot ... */
    X509_free(x);
    x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "ed25519")); /* ... did not change the context */
    X509_free(x);
    SSL_CTX_free(sctx);
}

static unsigned char *file_der(const char *name, int is_key, int *len)
{
    unsigned char *der = NULL;
    if (is_key) {
        EVP_PKEY *k = load_key(name);
        *len = i2d_PrivateKey(k, &der);
        EVP_PKEY_free(k);
    } else {
        X509 *x = load_cert(name);
        *len = i2d_X509(x, &der);
        X509_free(x);
    }
    assert_true(*len > 0);
    return der;
}

static void use_der_on_the_connection(SSL *s)
{
    int clen, klen;
    unsigned char *c = file_der("ecdsa384.pem", 0, &clen), *k = file_der("ecdsa384.key", 1, &klen);
    assert_int_equal(SSL_use_certificate_ASN1(s, c, clen - 1), 0); /* truncated */
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), ERR_R_ASN1_LIB);
    ERR_clear_error();
    assert_int_equal(SSL_use_certificate_ASN1(s, c, clen), 1);
    assert_int_equal(SSL_use_PrivateKey_ASN1(EVP_PKEY_EC, s, k, klen), 1);
    assert_int_equal(SSL_check_private_key(s), 1);
    OPENSSL_free(c);
    OPENSSL_free(k);
}

static void use_files_on_the_connection(SSL *s)
{
    assert_int_equal(
        SSL_use_certificate_chain_file(s, mock_cert_path("ecdsa256-inter-chain.pem")), 1);
    assert_int_equal(SSL_use_PrivateKey_file(s, mock_cert_path("ecdsa256-inter.key"), 42), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_SSL_FILETYPE);
    ERR_clear_error();
    assert_int_equal(
        SSL_use_PrivateKey_file(s, mock_cert_path("ecdsa256-inter.key"), SSL_FILETYPE_PEM), 1);
    STACK_OF(X509) *chain = NULL;
    assert_int_equal(SSL_get0_chain_certs(s, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);
}

static void ssl_use_der_and_file_forms(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("rsa");
    X509 *x = handshake_peer_cert(sctx, use_der_on_the_connection);
    assert_true(is_cert(x, "ecdsa384"));
    X509_free(x);
    x = handshake_peer_cert(sctx, use_files_on_the_connection);
    assert_true(is_cert(x, "ecdsa256-inter"));
    X509_free(x);
    SSL_CTX_free(sctx);
}

/* The chain ctrls on a connection act on its own copy. */
static void ssl_chain_ctrls_leave_the_context_alone(void **state)
{
    SSL_CTX *ctx = mock_server_ctx("ecdsa256");
    SSL *s = SSL_new(ctx);
    STACK_OF(X509) *chain = NULL;
    X509 *inter = load_cert("inter.pem");
    assert_int_equal(SSL_add1_chain_cert(s, inter), 1);
    X509_free(inter); /* add1 took its own reference */
    assert_int_equal(SSL_get0_chain_certs(s, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_null(chain);
    STACK_OF(X509) *sk = sk_X509_new_null();
    assert_int_equal(SSL_set0_chain(s, sk), 1);
    assert_int_equal(SSL_get0_chain_certs(s, &chain), 1);
    assert_ptr_equal(chain, sk);
    assert_int_equal(SSL_clear_chain_certs(s), 1);
    assert_int_equal(SSL_get0_chain_certs(s, &chain), 1);
    assert_null(chain);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* SSL_set_SSL_CTX                                                     */
/* ------------------------------------------------------------------ */

static SSL_CTX *vhost_ctx;

static int switch_ctx(SSL *s, int *al, void *arg)
{
    SSL_set_SSL_CTX(s, vhost_ctx);
    return SSL_TLSEXT_ERR_OK;
}

static void virtual_host_certificates_follow_unless_set_on_the_connection(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256");
    vhost_ctx = mock_server_ctx("ed25519");
    SSL_CTX_set_tlsext_servername_callback(sctx, switch_ctx);
    X509 *x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "ed25519"));
    X509_free(x);
    x = handshake_peer_cert(sctx, use_rsa_on_the_connection);
    assert_true(is_cert(x, "rsa"));
    X509_free(x);
    SSL_CTX_free(vhost_ctx);
    SSL_CTX_free(sctx);
}

/* ------------------------------------------------------------------ */
/* The certificate callback                                            */
/* ------------------------------------------------------------------ */

struct cert_cb_state {
    int calls;
    int retries; /* return -1 this many times first */
    int install; /* then install rsa on the connection */
    int saw_hostname;
};

static int cert_cb(SSL *s, void *arg)
{
    struct cert_cb_state *st = arg;
    st->calls++;
    st->saw_hostname = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) != NULL;
    if (st->retries > 0) {
        st->retries--;
        return -1;
    }
    if (st->install)
        use_rsa_on_the_connection(s);
    return 1;
}

static void cert_cb_chooses_the_certificate(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256");
    struct cert_cb_state st = {.install = 1};
    SSL_CTX_set_cert_cb(sctx, cert_cb, &st);
    X509 *x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "rsa"));
    assert_int_equal(st.calls, 1);
    X509_free(x);
    SSL_CTX_free(sctx);
}

static void cert_cb_retry_is_want_x509_lookup(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256"), *cctx = mock_client_ctx();
    struct cert_cb_state st = {.retries = 2, .install = 1};
    struct mock_pair p;
    SSL_CTX_set_cert_cb(sctx, cert_cb, &st);
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(SSL_set_tlsext_host_name(p.client.ssl, "localhost"), 1);
    assert_int_equal(SSL_do_handshake(p.client.ssl), -1);
    assert_int_equal(mock_deliver(&p.client, &p.server, 0), 1);
    for (int i = 0; i < 2; i++) {
        int r = SSL_do_handshake(p.server.ssl);
        assert_int_equal(r, -1);
        assert_int_equal(SSL_get_error(p.server.ssl, r), SSL_ERROR_WANT_X509_LOOKUP);
        assert_true(SSL_want_x509_lookup(p.server.ssl));
        assert_int_equal(p.server.add_calls, 0); /* nothing sent while suspended */
    }
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(st.calls, 3);
    assert_true(st.saw_hostname);
    X509 *x = SSL_get1_peer_certificate(p.client.ssl);
    assert_true(is_cert(x, "rsa"));
    X509_free(x);
    assert_false(SSL_want_x509_lookup(p.server.ssl));
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static SSL_SESSION *kept_session;

static int keep_session(SSL *s, SSL_SESSION *sess)
{
    SSL_SESSION_free(kept_session);
    kept_session = sess;
    return 1;
}

/* A resumed handshake sends no certificate (RFC 8446 §2.2): the callback does not run. */
static void cert_cb_does_not_run_on_resumption(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256"), *cctx = mock_client_ctx();
    struct cert_cb_state st = {0};
    struct mock_pair p;
    SSL_CTX_set_cert_cb(sctx, cert_cb, &st);
    SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(cctx, keep_session);
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    mock_pair_free(&p);
    assert_non_null(kept_session);
    assert_int_equal(st.calls, 1);
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(SSL_set_session(p.client.ssl, kept_session), 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(SSL_session_reused(p.server.ssl), 1);
    assert_int_equal(st.calls, 1);
    assert_int_equal(SSL_set_current_cert(p.server.ssl, SSL_CERT_SET_SERVER), 0); /* none sent */
    mock_pair_free(&p);
    SSL_SESSION_free(kept_session);
    kept_session = NULL;
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* The SSL_ form replaces the context's callback for one connection only. */
static void set_cert_cb_on_the_connection(SSL *s)
{
    static struct cert_cb_state st;
    memset(&st, 0, sizeof(st));
    st.install = 1;
    SSL_set_cert_cb(s, cert_cb, &st);
}

static void ssl_set_cert_cb_is_per_connection(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256");
    X509 *x = handshake_peer_cert(sctx, set_cert_cb_on_the_connection);
    assert_true(is_cert(x, "rsa"));
    X509_free(x);
    x = handshake_peer_cert(sctx, NULL);
    assert_true(is_cert(x, "ecdsa256"));
    X509_free(x);
    SSL_CTX_free(sctx);
}

/* On the client the callback runs for a CertificateRequest and may set the certificate. */
static int client_cert_cb_sets(SSL *s, void *arg)
{
    struct cert_cb_state *st = arg;
    st->calls++;
    if (st->retries > 0) {
        st->retries--;
        return -1;
    }
    assert_int_equal(SSL_use_certificate_file(s, mock_cert_path("client.pem"), SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_use_PrivateKey_file(s, mock_cert_path("client.key"), SSL_FILETYPE_PEM), 1);
    return 1;
}

static void client_cert_cb_answers_a_certificate_request(void **state)
{
    SSL_CTX *sctx = mock_server_ctx("ecdsa256"), *cctx = mock_client_ctx();
    struct cert_cb_state st = {.retries = 1};
    struct mock_pair p;
    assert_int_equal(SSL_CTX_load_verify_locations(sctx, mock_cert_path("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_cert_cb(cctx, client_cert_cb_sets, &st);
    assert_int_equal(mock_pair_init(&p, cctx, sctx), 1);
    assert_int_equal(SSL_do_handshake(p.client.ssl), -1);
    assert_int_equal(mock_deliver(&p.client, &p.server, 0), 1);
    assert_int_equal(SSL_do_handshake(p.server.ssl), -1);
    assert_int_equal(mock_deliver(&p.server, &p.client, 0), 1);
    int r = SSL_do_handshake(p.client.ssl);
    assert_int_equal(SSL_get_error(p.client.ssl, r), SSL_ERROR_WANT_X509_LOOKUP);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(st.calls, 2);
    X509 *x = SSL_get1_peer_certificate(p.server.ssl);
    assert_true(is_cert(x, "client"));
    X509_free(x);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* ------------------------------------------------------------------ */
/* Encrypted keys and the password callback                           */
/* ------------------------------------------------------------------ */

static const char passphrase[] = "correct horse";

static int password_cb(char *buf, int size, int rwflag, void *userdata)
{
    const char *pw = userdata;
    int n = (int)strlen(pw);
    if (n > size)
        return -1;
    memcpy(buf, pw, (size_t)n);
    return n;
}

/* Encrypts ecdsa256.key with AES-256 at test time; returns the temporary file's name. */
static void write_encrypted_key(char *path)
{
    strcpy(path, "/tmp/qtls-enc-key-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    EVP_PKEY *k = load_key("ecdsa256.key");
    BIO *out = BIO_new_file(path, "w");
    assert_non_null(out);
    assert_int_equal(PEM_write_bio_PKCS8PrivateKey(out, k, EVP_aes_256_cbc(), NULL, 0, NULL,
                                                   (void *)passphrase),
                     1);
    BIO_free(out);
    EVP_PKEY_free(k);
}

static void encrypted_key_loads_through_the_password_callback(void **state)
{
    char path[64];
    write_encrypted_key(path);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(
        SSL_CTX_use_certificate_file(ctx, mock_cert_path("ecdsa256.pem"), SSL_FILETYPE_PEM), 1);
    assert_null(SSL_CTX_get_default_passwd_cb(ctx));
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, "wrong");
    assert_ptr_equal(SSL_CTX_get_default_passwd_cb(ctx), password_cb);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), ERR_R_PEM_LIB);
    assert_null(SSL_CTX_get0_privatekey(ctx));
    ERR_clear_error();
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)passphrase);
    assert_ptr_equal(SSL_CTX_get_default_passwd_cb_userdata(ctx), passphrase);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);

    /* SSL_new copies the callback; the SSL_ setters change the connection's only. */
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(SSL_get_default_passwd_cb(s), password_cb);
    assert_ptr_equal(SSL_get_default_passwd_cb_userdata(s), passphrase);
    SSL_set_default_passwd_cb_userdata(s, "wrong");
    assert_int_equal(SSL_use_PrivateKey_file(s, path, SSL_FILETYPE_PEM), 0);
    ERR_clear_error();
    SSL_set_default_passwd_cb(s, NULL);
    SSL_set_default_passwd_cb_userdata(s, (void *)passphrase);
    /* With no callback, libcrypto takes the user data as the pass phrase itself. */
    assert_int_equal(SSL_use_PrivateKey_file(s, path, SSL_FILETYPE_PEM), 1);
    assert_ptr_equal(SSL_CTX_get_default_passwd_cb_userdata(ctx), passphrase);
    SSL_free(s);
    SSL_CTX_free(ctx);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(each_key_type_keeps_its_own_slot, clear_errors),
        cmocka_unit_test_setup(select_current_cert_matches_the_object, clear_errors),
        cmocka_unit_test_setup(cert_and_key_fill_a_slot_once_without_override, clear_errors),
        cmocka_unit_test_setup(server_prefers_ecdsa_then_eddsa_then_rsa, clear_errors),
        cmocka_unit_test_setup(connection_reports_the_certificate_sent, clear_errors),
        cmocka_unit_test_setup(each_slot_sends_its_own_chain, clear_errors),
        cmocka_unit_test_setup(build_cert_chain_from_the_store, clear_errors),
        cmocka_unit_test_setup(build_cert_chain_check_reorders_the_chain, clear_errors),
        cmocka_unit_test_setup(ssl_use_overrides_the_context_for_one_connection, clear_errors),
        cmocka_unit_test_setup(ssl_use_der_and_file_forms, clear_errors),
        cmocka_unit_test_setup(ssl_chain_ctrls_leave_the_context_alone, clear_errors),
        cmocka_unit_test_setup(virtual_host_certificates_follow_unless_set_on_the_connection,
                               clear_errors),
        cmocka_unit_test_setup(cert_cb_chooses_the_certificate, clear_errors),
        cmocka_unit_test_setup(cert_cb_retry_is_want_x509_lookup, clear_errors),
        cmocka_unit_test_setup(cert_cb_does_not_run_on_resumption, clear_errors),
        cmocka_unit_test_setup(ssl_set_cert_cb_is_per_connection, clear_errors),
        cmocka_unit_test_setup(client_cert_cb_answers_a_certificate_request, clear_errors),
        cmocka_unit_test_setup(encrypted_key_loads_through_the_password_callback, clear_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
