/*
 * The OpenSSL-compatible surface of ctx.c, ssl.c, suites.c and err.c:
 * defaults a fresh OpenSSL 3.0 context reports, the ctrl codes behind the
 * <openssl/ssl.h> macros, suite and group lists, SSL_CIPHER getters,
 * SSL_select_next_proto, ex_data, ALPN/SNI setters, alert and error texts.
 * Expected values were taken from the system libssl 3.0 where it applies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"

/* Drains the error queue; 1 if (lib, reason) was on it. */
static int queue_has(int lib, int reason)
{
    unsigned long e;
    int found = 0;
    while ((e = ERR_get_error()) != 0)
        if (ERR_GET_LIB(e) == lib && ERR_GET_REASON(e) == reason)
            found = 1;
    return found;
}

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

static SSL_CTX *new_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_non_null(ctx);
    return ctx;
}

/* ------------------------------------------------------------------ */
/* Context defaults and ctrl codes                                     */
/* ------------------------------------------------------------------ */

static void fresh_ctx_reports_openssl_defaults(void **state)
{
    SSL_CTX *ctx = new_ctx();
    /* The values stock OpenSSL 3.0 reports for SSL_CTX_new(TLS_method()). */
    assert_int_equal(SSL_CTX_get_options(ctx),
                     SSL_OP_ENABLE_MIDDLEBOX_COMPAT | SSL_OP_NO_COMPRESSION);
    assert_int_equal(SSL_CTX_get_mode(ctx), SSL_MODE_AUTO_RETRY);
    assert_int_equal(SSL_CTX_get_session_cache_mode(ctx), SSL_SESS_CACHE_SERVER);
    assert_int_equal(SSL_CTX_get_max_cert_list(ctx), 100 * 1024);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), 0);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), 0);
    assert_int_equal(SSL_CTX_get_verify_mode(ctx), SSL_VERIFY_NONE);
    assert_int_equal(SSL_CTX_get_verify_depth(ctx), -1);
    assert_non_null(SSL_CTX_get_cert_store(ctx));
    assert_non_null(SSL_CTX_get0_param(ctx));
    assert_ptr_equal(SSL_CTX_get_ssl_method(ctx), TLS_method());
    /* Default suites: GCM and ChaCha20, no CCM; groups as OpenSSL 3.5's, X25519MLKEM768 first. */
    assert_int_equal(ctx->suites.n, 3);
    assert_int_equal(SSL_CIPHER_get_id(suite_at(&ctx->suites, 0)), TLS1_3_CK_AES_128_GCM_SHA256);
    assert_int_equal(SSL_CIPHER_get_id(suite_at(&ctx->suites, 1)), TLS1_3_CK_AES_256_GCM_SHA384);
    assert_int_equal(SSL_CIPHER_get_id(suite_at(&ctx->suites, 2)),
                     TLS1_3_CK_CHACHA20_POLY1305_SHA256);
    assert_int_equal(ctx->n_groups, 5);
    assert_int_equal(ctx->groups[0], 0x11ec);
    assert_int_equal(ctx->groups[1], 0x001d);
    assert_int_equal(ctx->groups[2], 0x0017);
    assert_int_equal(ctx->groups[3], 0x0018);
    assert_int_equal(ctx->groups[4], 0x001e);
    SSL_CTX_free(ctx);
}

static void null_method_and_null_ctx_fail(void **state)
{
    assert_null(SSL_CTX_new(NULL));
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NULL_SSL_METHOD_PASSED));
    assert_null(SSL_new(NULL));
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NULL_SSL_CTX));
    /* Only the default library context: a property query cannot be honoured. */
    assert_null(SSL_CTX_new_ex(NULL, "provider=fips", TLS_method()));
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    SSL_CTX *ctx = SSL_CTX_new_ex(NULL, NULL, TLS_client_method());
    assert_non_null(ctx);
    SSL_CTX_free(ctx);
}

static void proto_version_bounds(void **state)
{
    SSL_CTX *ctx = new_ctx();
    assert_int_equal(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_3_VERSION);
    /* A bound below TLS 1.3 is stored (the handshake refuses it later), as OpenSSL stores it. */
    assert_int_equal(SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION), 1);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_2_VERSION);
    assert_int_equal(SSL_CTX_set_max_proto_version(ctx, 0), 1);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), 0);
    /* A version that does not exist is refused and leaves the bound alone. */
    assert_int_equal(SSL_CTX_set_max_proto_version(ctx, 0x0305), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);

    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_min_proto_version(s), TLS1_3_VERSION);
    assert_int_equal(SSL_set_max_proto_version(s, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_get_max_proto_version(s), TLS1_3_VERSION);
    assert_int_equal(SSL_set_min_proto_version(s, 0x0400), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void groups_lists(void **state)
{
    SSL_CTX *ctx = new_ctx();
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "P-256:X25519"), 1);
    assert_int_equal(ctx->n_groups, 2);
    assert_int_equal(ctx->groups[0], 0x0017);
    assert_int_equal(ctx->groups[1], 0x001d);
    /* OpenSSL's other spellings, any case. */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "x448:prime256v1:secp384r1:x25519"), 1);
    assert_int_equal(ctx->n_groups, 4);
    assert_int_equal(ctx->groups[0], 0x001e);
    assert_int_equal(ctx->groups[3], 0x001d);
    /* ngtcp2's and curl's default lists name P-521, which qtls skips. */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384:P-521"), 1);
    assert_int_equal(ctx->n_groups, 3);
    /* An unknown name, an empty entry or a duplicate fails and keeps the list. */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519:foo"), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519::P-256"), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519:x25519"), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, ""), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    /* Nothing usable left. */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "P-521"), 0);
    assert_true(queue_has(ERR_LIB_SSL, QTLS_R_UNSUPPORTED_GROUP));
    assert_int_equal(ctx->n_groups, 3);
    assert_int_equal(ctx->groups[2], 0x0018);

    int nids[] = {NID_X9_62_prime256v1, NID_secp521r1, NID_X448};
    assert_int_equal(SSL_CTX_set1_groups(ctx, nids, 3), 1);
    assert_int_equal(ctx->n_groups, 2);
    assert_int_equal(ctx->groups[0], 0x0017);
    assert_int_equal(ctx->groups[1], 0x001e);
    int bad[] = {NID_X25519, NID_sha256};
    assert_int_equal(SSL_CTX_set1_groups(ctx, bad, 2), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(ctx->n_groups, 2);

    /* SSL_new copies; the connection then has its own list. */
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_set1_groups_list(s, "X25519"), 1);
    assert_int_equal(s->n_groups, 1);
    assert_int_equal(ctx->n_groups, 2);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void unknown_ctrl_fails_with_error(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_CTX_ctrl(ctx, 9999, 0, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_ctrl(s, 9999, 0, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_CTX_callback_ctrl(ctx, 9999, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(SSL_callback_ctrl(s, 9999, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void mode_cache_mode_and_cert_list_return_openssl_values(void **state)
{
    SSL_CTX *ctx = new_ctx();
    /* set_mode returns the new mode, clear_mode what is left. */
    assert_int_equal(SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS),
                     SSL_MODE_AUTO_RETRY | SSL_MODE_RELEASE_BUFFERS);
    assert_int_equal(SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY), SSL_MODE_RELEASE_BUFFERS);
    assert_int_equal(SSL_CTX_get_mode(ctx), SSL_MODE_RELEASE_BUFFERS);
    /* set_session_cache_mode returns the previous mode. */
    long m = SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL;
    assert_int_equal(SSL_CTX_set_session_cache_mode(ctx, m), SSL_SESS_CACHE_SERVER);
    assert_int_equal(SSL_CTX_get_session_cache_mode(ctx), m);
    assert_int_equal(SSL_CTX_set_session_cache_mode(ctx, 0), m);
    /* set_max_cert_list returns the previous limit. */
    assert_int_equal(SSL_CTX_set_max_cert_list(ctx, 4096), 100 * 1024);
    assert_int_equal(SSL_CTX_get_max_cert_list(ctx), 4096);
    /* set_read_ahead returns the previous setting. */
    assert_int_equal(SSL_CTX_set_read_ahead(ctx, 1), 0);
    assert_int_equal(SSL_CTX_set_read_ahead(ctx, 0), 1);

    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_mode(s), SSL_MODE_RELEASE_BUFFERS);
    assert_int_equal(SSL_set_mode(s, SSL_MODE_AUTO_RETRY),
                     SSL_MODE_RELEASE_BUFFERS | SSL_MODE_AUTO_RETRY);
    assert_int_equal(SSL_CTX_get_mode(ctx), SSL_MODE_RELEASE_BUFFERS);
    assert_int_equal(SSL_get_max_cert_list(s), 4096);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void options_set_and_clear(void **state)
{
    SSL_CTX *ctx = new_ctx();
    uint64_t base = SSL_CTX_get_options(ctx);
    assert_int_equal(SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET), base | SSL_OP_NO_TICKET);
    assert_int_equal(SSL_CTX_clear_options(ctx, SSL_OP_ENABLE_MIDDLEBOX_COMPAT),
                     SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_options(s), SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
    assert_int_equal(SSL_set_options(s, SSL_OP_CIPHER_SERVER_PREFERENCE),
                     SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE);
    assert_int_equal(SSL_clear_options(s, SSL_OP_NO_TICKET),
                     SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    assert_int_equal(SSL_CTX_get_options(ctx), SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static X509 *empty_cert(void)
{
    X509 *x = X509_new();
    assert_non_null(x);
    return x;
}

static void chain_ctrls(void **state)
{
    SSL_CTX *ctx = new_ctx();
    STACK_OF(X509) *got = NULL;
    X509 *a = empty_cert(), *b = empty_cert();
    /* Keyless certificates have no security bits: as in OpenSSL, only level 0 takes them. */
    SSL_CTX_set_security_level(ctx, 0);
    /* As OpenSSL: extra certificates are the context's, the chain the current slot's. */
    assert_int_equal(SSL_CTX_add1_chain_cert(ctx, b), 1); /* up-refs b */
    assert_int_equal(SSL_CTX_get_extra_chain_certs(ctx, &got), 1);
    assert_int_equal(sk_X509_num(got), 1); /* no extra certificates: the chain is reported */
    assert_int_equal(SSL_CTX_get_extra_chain_certs_only(ctx, &got), 1);
    assert_null(got);
    assert_int_equal(SSL_CTX_add_extra_chain_cert(ctx, a), 1); /* takes a */
    assert_int_equal(SSL_CTX_get_extra_chain_certs(ctx, &got), 1);
    assert_int_equal(sk_X509_num(got), 1);
    assert_ptr_equal(sk_X509_value(got, 0), a);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &got), 1);
    assert_int_equal(sk_X509_num(got), 1);
    assert_ptr_equal(sk_X509_value(got, 0), b);
    assert_int_equal(SSL_CTX_clear_chain_certs(ctx), 1);
    assert_null(ctx->certs.slot[ctx->certs.current].chain);
    assert_int_equal(SSL_CTX_clear_extra_chain_certs(ctx), 1);
    assert_null(ctx->certs.extra);
    X509_free(b); /* still ours: add1 took its own reference */

    STACK_OF(X509) *sk = sk_X509_new_null();
    assert_non_null(sk);
    assert_true(sk_X509_push(sk, empty_cert()));
    assert_int_equal(SSL_CTX_set1_chain(ctx, sk), 1);
    assert_ptr_not_equal(ctx->certs.slot[ctx->certs.current].chain, sk);
    assert_int_equal(SSL_CTX_set0_chain(ctx, sk), 1); /* takes sk */
    assert_ptr_equal(ctx->certs.slot[ctx->certs.current].chain, sk);
    assert_int_equal(SSL_CTX_set0_chain(ctx, NULL), 1);
    assert_null(ctx->certs.slot[ctx->certs.current].chain);
    SSL_CTX_free(ctx);
}

static int sni_cb(SSL *s, int *al, void *arg) { return SSL_TLSEXT_ERR_OK; }

static void servername_callback_and_arg_are_stored(void **state)
{
    SSL_CTX *ctx = new_ctx();
    int marker;
    assert_int_equal(SSL_CTX_set_tlsext_servername_callback(ctx, sni_cb), 1);
    assert_int_equal(SSL_CTX_set_tlsext_servername_arg(ctx, &marker), 1);
    assert_ptr_equal(ctx->servername_cb, sni_cb);
    assert_ptr_equal(ctx->servername_arg, &marker);
    SSL_CTX_free(ctx);
}

static int verify_a(int ok, X509_STORE_CTX *x) { return ok; }
static int verify_b(int ok, X509_STORE_CTX *x) { return 1; }

static void verify_settings_are_inherited(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_a);
    SSL_CTX_set_verify_depth(ctx, 3);
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_verify_mode(s), SSL_VERIFY_PEER);
    assert_ptr_equal(SSL_get_verify_callback(s), verify_a);
    assert_int_equal(SSL_get_verify_depth(s), 3);
    /* As OpenSSL: a NULL callback keeps the inherited one. */
    SSL_set_verify(s, SSL_VERIFY_NONE, NULL);
    assert_int_equal(SSL_get_verify_mode(s), SSL_VERIFY_NONE);
    assert_ptr_equal(SSL_get_verify_callback(s), verify_a);
    SSL_set_verify(s, SSL_VERIFY_PEER, verify_b);
    assert_ptr_equal(SSL_get_verify_callback(s), verify_b);
    assert_ptr_equal(SSL_CTX_get_verify_callback(ctx), verify_a);
    SSL_set_verify_depth(s, 7);
    assert_int_equal(SSL_get_verify_depth(s), 7);
    assert_int_equal(SSL_CTX_get_verify_depth(ctx), 3);
    assert_int_equal(SSL_get_verify_result(s), X509_V_OK);
    SSL_set_verify_result(s, X509_V_ERR_CERT_HAS_EXPIRED);
    assert_int_equal(SSL_get_verify_result(s), X509_V_ERR_CERT_HAS_EXPIRED);

    /* A name that parses as an IP address is checked as one, as in OpenSSL 3.0. */
    assert_int_equal(SSL_set1_host(s, "example.com"), 1);
    assert_string_equal(X509_VERIFY_PARAM_get0_host(SSL_get0_param(s), 0), "example.com");
    assert_int_equal(SSL_set1_host(s, "192.0.2.7"), 1);
    char *ip = X509_VERIFY_PARAM_get1_ip_asc(SSL_get0_param(s));
    assert_non_null(ip);
    assert_string_equal(ip, "192.0.2.7");
    OPENSSL_free(ip);
    assert_int_equal(SSL_add1_host(s, "192.0.2.8"), 0); /* only one IP address */
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/*
 * A connection has no verification parameters of its own until it needs them: a DNS name from
 * SSL_set1_host is kept alone, and SSL_get0_param then hands out a writable copy of the
 * context's with that name in it. A context switch keeps the old context's parameters.
 */
static void verify_params_are_made_on_first_use(void **state)
{
    SSL_CTX *ctx = new_ctx(), *other = new_ctx();
    SSL_CTX_set_verify_depth(ctx, 3);
    X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx), X509_V_FLAG_PARTIAL_CHAIN);
    SSL *s = SSL_new(ctx);
    assert_null(s->param);
    assert_int_equal(SSL_get_verify_depth(s), 3);
    assert_int_equal(SSL_set1_host(s, "first.example"), 1);
    assert_int_equal(SSL_set1_host(s, "server.example"), 1);
    assert_null(s->param);
    X509_VERIFY_PARAM *p = SSL_get0_param(s);
    assert_non_null(p);
    assert_ptr_equal(SSL_get0_param(s), p);
    assert_null(s->verify_host);
    assert_string_equal(X509_VERIFY_PARAM_get0_host(p, 0), "server.example");
    assert_null(X509_VERIFY_PARAM_get0_host(p, 1));
    assert_int_equal(X509_VERIFY_PARAM_get_depth(p), 3);
    assert_true(X509_VERIFY_PARAM_get_flags(p) & X509_V_FLAG_PARTIAL_CHAIN);
    X509_VERIFY_PARAM_set_depth(p, 5); /* writable, and the context's stay as they were */
    assert_int_equal(SSL_get_verify_depth(s), 5);
    assert_int_equal(SSL_CTX_get_verify_depth(ctx), 3);
    SSL_free(s);

    /* An IP address literal, or clearing the names, needs the parameters at once. */
    s = SSL_new(ctx);
    assert_int_equal(SSL_set1_host(s, "192.0.2.7"), 1);
    assert_non_null(s->param);
    SSL_free(s);
    s = SSL_new(ctx);
    assert_int_equal(SSL_set1_host(s, NULL), 1);
    assert_non_null(s->param);
    SSL_free(s);

    /* Switching contexts: the depth follows, the rest stays the old context's. */
    s = SSL_new(ctx);
    SSL_CTX_set_verify_depth(other, 9);
    assert_ptr_equal(SSL_set_SSL_CTX(s, other), other);
    assert_int_equal(SSL_get_verify_depth(s), 9);
    assert_true(X509_VERIFY_PARAM_get_flags(SSL_get0_param(s)) & X509_V_FLAG_PARTIAL_CHAIN);
    SSL_free(s);
    SSL_CTX_free(other);
    SSL_CTX_free(ctx);
}

/*
 * The name a client sends (SNI) and the one it verifies are usually the same string: held once,
 * and each still changes alone, in either order, without the other noticing.
 */
static void sni_and_verify_host_share_one_string(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_set_tlsext_host_name(s, "server.example"), 1);
    assert_int_equal(SSL_set1_host(s, "server.example"), 1);
    assert_ptr_equal(s->verify_host, s->hostname); /* one copy */
    assert_int_equal(SSL_set_tlsext_host_name(s, "other.example"), 1);
    assert_string_equal(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "other.example");
    assert_string_equal(s->verify_host, "server.example");
    assert_int_equal(SSL_set_tlsext_host_name(s, "server.example"), 1); /* shared again */
    assert_ptr_equal(s->verify_host, s->hostname);
    assert_int_equal(SSL_set1_host(s, "third.example"), 1);
    assert_string_equal(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "server.example");
    assert_string_equal(s->verify_host, "third.example");
    SSL_free(s);

    /* The other order; then the parameters take the name and the SNI stays. */
    s = SSL_new(ctx);
    assert_int_equal(SSL_set1_host(s, "server.example"), 1);
    assert_int_equal(SSL_set_tlsext_host_name(s, "server.example"), 1);
    assert_ptr_equal(s->verify_host, s->hostname);
    X509_VERIFY_PARAM *p = SSL_get0_param(s);
    assert_non_null(p);
    assert_null(s->verify_host);
    assert_string_equal(X509_VERIFY_PARAM_get0_host(p, 0), "server.example");
    assert_string_equal(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "server.example");
    SSL_free(s);

    /* Clearing the SNI leaves the verified name. */
    s = SSL_new(ctx);
    assert_int_equal(SSL_set_tlsext_host_name(s, "server.example"), 1);
    assert_int_equal(SSL_set1_host(s, "server.example"), 1);
    assert_int_equal(SSL_set_tlsext_host_name(s, NULL), 1);
    assert_null(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name));
    assert_string_equal(s->verify_host, "server.example");
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void cert_store_ownership_and_loading(void **state)
{
    SSL_CTX *ctx = new_ctx();
    X509_STORE *st = X509_STORE_new();
    assert_non_null(st);
    SSL_CTX_set1_cert_store(ctx, st); /* ctx takes its own reference */
    assert_ptr_equal(SSL_CTX_get_cert_store(ctx), st);
    X509_STORE_free(st);
    X509_STORE *st2 = X509_STORE_new();
    assert_non_null(st2);
    SSL_CTX_set_cert_store(ctx, st2); /* takes st2, frees st */
    assert_ptr_equal(SSL_CTX_get_cert_store(ctx), st2);
    assert_int_equal(SSL_CTX_load_verify_locations(ctx, NULL, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER));
    assert_int_equal(SSL_CTX_load_verify_locations(ctx, "/nonexistent/ca.pem", NULL), 0);
    ERR_clear_error();
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* Suites and SSL_CIPHER                                               */
/* ------------------------------------------------------------------ */

static void cipher_getters_match_openssl(void **state)
{
    static const struct {
        uint32_t id;
        uint16_t wire;
        const char *name;
        int prf, cipher, bits;
        const char *md;
    } want[] = {
        {0x03001301, 0x1301, "TLS_AES_128_GCM_SHA256", NID_sha256, NID_aes_128_gcm, 128, "SHA256"},
        {0x03001302, 0x1302, "TLS_AES_256_GCM_SHA384", NID_sha384, NID_aes_256_gcm, 256, "SHA384"},
        {0x03001303, 0x1303, "TLS_CHACHA20_POLY1305_SHA256", NID_sha256, NID_chacha20_poly1305,
         256, "SHA256"},
        {0x03001304, 0x1304, "TLS_AES_128_CCM_SHA256", NID_sha256, NID_aes_128_ccm, 128, "SHA256"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        unsigned char wire[2] = {(unsigned char)(want[i].wire >> 8), (unsigned char)want[i].wire};
        const SSL_CIPHER *c = SSL_CIPHER_find(NULL, wire);
        assert_non_null(c);
        assert_ptr_equal(c, suite_by_tls_id(want[i].wire));
        assert_int_equal(SSL_CIPHER_get_id(c), want[i].id);
        assert_int_equal(SSL_CIPHER_get_protocol_id(c), want[i].wire);
        assert_string_equal(SSL_CIPHER_get_name(c), want[i].name);
        assert_string_equal(SSL_CIPHER_standard_name(c), want[i].name);
        assert_string_equal(SSL_CIPHER_get_version(c), "TLSv1.3");
        assert_int_equal(SSL_CIPHER_get_prf_nid(c), want[i].prf);
        assert_int_equal(SSL_CIPHER_get_cipher_nid(c), want[i].cipher);
        assert_int_equal(SSL_CIPHER_get_digest_nid(c), NID_undef);
        assert_int_equal(SSL_CIPHER_get_kx_nid(c), NID_kx_any);
        assert_int_equal(SSL_CIPHER_get_auth_nid(c), NID_auth_any);
        assert_true(SSL_CIPHER_is_aead(c));
        int alg = 0;
        assert_int_equal(SSL_CIPHER_get_bits(c, &alg), want[i].bits);
        assert_int_equal(alg, want[i].bits);
        assert_string_equal(EVP_MD_get0_name(SSL_CIPHER_get_handshake_digest(c)), want[i].md);
        assert_ptr_equal(suite_by_name(want[i].name, strlen(want[i].name)), c);
    }
    /* CCM_8 is forbidden in QUIC (RFC 9001 §5.3) and TLS 1.2 suites do not exist here. */
    assert_null(SSL_CIPHER_find(NULL, (const unsigned char *)"\x13\x05"));
    assert_null(SSL_CIPHER_find(NULL, (const unsigned char *)"\xc0\x2f"));
    assert_string_equal(SSL_CIPHER_get_name(NULL), "(NONE)");
    assert_string_equal(SSL_CIPHER_get_version(NULL), "(NONE)");
    assert_int_equal(SSL_CIPHER_get_bits(NULL, NULL), 0);
}

static void suite_lists(void **state)
{
    SSL_CTX *ctx = new_ctx();
    /* Order kept, CCM_8 silently dropped, unknown names skipped, duplicates dropped. */
    const char *list = "TLS_AES_256_GCM_SHA384:TLS_AES_128_CCM_8_SHA256:junk:"
                       "TLS_AES_128_CCM_SHA256:TLS_AES_256_GCM_SHA384::";
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, list), 1);
    assert_int_equal(ctx->suites.n, 2);
    assert_int_equal(suite_at(&ctx->suites, 0)->tls_id, 0x1302);
    assert_int_equal(suite_at(&ctx->suites, 1)->tls_id, 0x1304);
    /* Nothing valid: fails with no_cipher_match and leaves the list alone. */
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, "garbage:more-garbage"), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH));
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_CCM_8_SHA256"), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH));
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, "tls_aes_128_gcm_sha256"), 0); /* case matters */
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH));
    assert_int_equal(SSL_CTX_set_ciphersuites(ctx, ""), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH));
    assert_int_equal(ctx->suites.n, 2);
    /* The TLS 1.2 list is irrelevant to QUIC and accepted as is. */
    assert_int_equal(SSL_CTX_set_cipher_list(ctx, "ECDHE-RSA-AES128-GCM-SHA256"), 1);

    SSL *s = SSL_new(ctx);
    assert_int_equal(s->suites.n, 2);
    assert_int_equal(SSL_set_ciphersuites(s, "TLS_CHACHA20_POLY1305_SHA256"), 1);
    assert_int_equal(s->suites.n, 1);
    assert_int_equal(suite_at(&s->suites, 0)->tls_id, 0x1303);
    assert_int_equal(ctx->suites.n, 2);
    assert_int_equal(SSL_set_ciphersuites(s, "nope"), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH));
    assert_int_equal(s->suites.n, 1);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void group_and_scheme_tables(void **state)
{
    const struct group *g = group_by_name("p-384", 5);
    assert_non_null(g);
    assert_int_equal(g->id, 0x0018);
    assert_int_equal(g->share_len, 97);
    assert_int_equal(g->kind, KEX_EC);
    assert_ptr_equal(group_by_nid(NID_secp384r1), g);
    assert_int_equal(group_by_id(0x001d)->share_len, 32);
    assert_int_equal(group_by_id(0x0017)->share_len, 65);
    assert_int_equal(group_by_id(0x001e)->share_len, 56);
    assert_null(group_by_id(0x0019)); /* P-521 is not implemented */
    assert_null(group_by_name("X25519x", 7));
    assert_non_null(group_by_name("X25519:P-256", 6)); /* the length bounds the name */

    /* Every offered scheme exists; PKCS#1 ones are offered, never usable in CertificateVerify. */
    int pkcs1 = 0;
    for (size_t i = 0; i < qtls_num_offered_sigschemes; i++) {
        const struct sigscheme *s = sigscheme_by_id(qtls_offered_sigschemes[i]);
        assert_non_null(s);
        if (!s->tls13_ok) {
            assert_int_equal(s->pkey_type, EVP_PKEY_RSA);
            pkcs1++;
        } else {
            assert_int_equal(pkcs1, 0); /* PKCS#1 schemes come last */
        }
    }
    assert_int_equal(pkcs1, 3);
    assert_int_equal(sigscheme_by_id(0x0403)->curve_nid, NID_X9_62_prime256v1);
    assert_int_equal(sigscheme_by_id(0x080a)->pkey_type, EVP_PKEY_RSA_PSS);
    assert_int_equal(sigscheme_by_id(0x0805)->md_nid, NID_sha384);
    assert_null(sigscheme_by_id(0x0201)); /* rsa_pkcs1_sha1 */
}

static void alpn_wire_format_check(void **state)
{
    assert_true(alpn_list_valid((const uint8_t *)"\x02h3\x05h3-29", 9));
    assert_false(alpn_list_valid((const uint8_t *)"\x02h3\x00", 4)); /* empty name */
    assert_false(alpn_list_valid((const uint8_t *)"\x03h3", 3));     /* runs past the end */
    assert_false(alpn_list_valid((const uint8_t *)"", 0));
    assert_false(alpn_list_valid(NULL, 3));
}

/* ------------------------------------------------------------------ */
/* SSL_select_next_proto                                               */
/* ------------------------------------------------------------------ */

#define L(s) (const unsigned char *)(s), (unsigned)(sizeof(s) - 1)

static void select_next_proto_prefers_server_order(void **state)
{
    unsigned char *out = NULL, len = 0;
    const unsigned char server[] = "\x02h3\x05h3-29";
    assert_int_equal(SSL_select_next_proto(&out, &len, server, 9, L("\x05h3-29\x02h3")),
                     OPENSSL_NPN_NEGOTIATED);
    assert_int_equal(len, 2);
    assert_memory_equal(out, "h3", 2);
    assert_ptr_equal(out, server + 1); /* points into the server list */
}

static void select_next_proto_no_overlap_returns_client_first(void **state)
{
    unsigned char *out = NULL, len = 0;
    const unsigned char client[] = "\x03" "foo\x03" "bar";
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x02h3"), client, 8),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_int_equal(len, 3);
    assert_ptr_equal(out, client + 1);
    /* An empty or malformed client list gives nothing at all. */
    out = (unsigned char *)"x";
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x02h3"), (const unsigned char *)"", 0),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_null(out);
    assert_int_equal(len, 0);
    out = (unsigned char *)"x";
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x02h3"), L("\x07h3")),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_null(out);
    assert_int_equal(len, 0);
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x02h3"), L("\x00\x02h3")),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_null(out);
}

static void select_next_proto_tolerates_malformed_server_list(void **state)
{
    unsigned char *out = NULL, len = 0;
    /* The server list runs past its end: nothing from it is read, the client's first is used. */
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x05h3"), L("\x02h3")),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_int_equal(len, 2);
    assert_memory_equal(out, "h3", 2);
    /* Empty server entries are skipped; trailing garbage after a match does not matter. */
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x00\x02h3\x09x"), L("\x02h3")),
                     OPENSSL_NPN_NEGOTIATED);
    assert_int_equal(len, 2);
    assert_memory_equal(out, "h3", 2);
    /* A client name that is a prefix of the server's does not match. */
    assert_int_equal(SSL_select_next_proto(&out, &len, L("\x03h3x"), L("\x02h3")),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_int_equal(SSL_select_next_proto(&out, &len, NULL, 0, L("\x02h3")),
                     OPENSSL_NPN_NO_OVERLAP);
    assert_int_equal(len, 2);
}

/* ------------------------------------------------------------------ */
/* ex_data, ALPN, SNI                                                  */
/* ------------------------------------------------------------------ */

static int freed_with;

static void count_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                       void *argp)
{
    if (ptr != NULL)
        freed_with = *(int *)ptr;
}

static void ex_data_and_app_data(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    int idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, count_free);
    assert_true(idx > 0); /* 0 is the app-data slot libcrypto reserves */
    int app = 1, mine = 42;
    assert_int_equal(SSL_set_app_data(s, &app), 1);
    assert_null(s->ex_data.sk); /* the app-data slot lives in the connection (ssl.c) */
    assert_ptr_equal(SSL_get_ex_data(s, 0), &app);
    assert_int_equal(SSL_set_ex_data(s, idx, &mine), 1);
    assert_ptr_equal(SSL_get_app_data(s), &app);
    assert_ptr_equal(SSL_get_ex_data(s, idx), &mine);
    assert_null(SSL_get_ex_data(s, idx + 1000));

    int cidx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    assert_true(cidx > 0);
    assert_int_equal(SSL_CTX_set_ex_data(ctx, cidx, &app), 1);
    assert_ptr_equal(SSL_CTX_get_ex_data(ctx, cidx), &app);
    assert_null(SSL_CTX_get_app_data(ctx));

    freed_with = 0;
    SSL_free(s); /* the index's free callback sees the value */
    assert_int_equal(freed_with, 42);
    SSL_CTX_free(ctx);
}

static void alpn_setters_use_openssl_return_convention(void **state)
{
    SSL_CTX *ctx = new_ctx();
    assert_int_equal(SSL_CTX_set_alpn_protos(ctx, L("\x02h3")), 0); /* 0 = success */
    assert_int_equal(ctx->alpn_len, 3);
    assert_int_equal(SSL_CTX_set_alpn_protos(ctx, L("\x03h3")), 1); /* 1 = failure */
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(ctx->alpn_len, 3);
    assert_memory_equal(ctx->alpn, "\x02h3", 3);

    SSL *s = SSL_new(ctx); /* copies the context's list */
    assert_int_equal(s->alpn_len, 3);
    assert_ptr_not_equal(s->alpn, ctx->alpn);
    assert_int_equal(SSL_set_alpn_protos(s, L("\x05h3-29\x02h3")), 0);
    assert_int_equal(s->alpn_len, 9);
    assert_int_equal(SSL_set_alpn_protos(s, L("\x02h3\x00")), 1);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT));
    assert_int_equal(s->alpn_len, 9);
    assert_int_equal(SSL_set_alpn_protos(s, NULL, 0), 0); /* clears */
    assert_int_equal(s->alpn_len, 0);
    assert_null(s->alpn);

    const unsigned char *sel = (const unsigned char *)"x";
    unsigned int sel_len = 99;
    SSL_get0_alpn_selected(s, &sel, &sel_len);
    assert_null(sel);
    assert_int_equal(sel_len, 0);
    assert_true(sbuf_set(&s->alpn_selected, (const uint8_t *)"h3", 2)); /* as the handshake does */
    SSL_get0_alpn_selected(s, &sel, &sel_len);
    assert_int_equal(sel_len, 2);
    assert_memory_equal(sel, "h3", 2);

    assert_int_equal(SSL_CTX_set_alpn_protos(ctx, NULL, 0), 0);
    assert_null(ctx->alpn);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void host_name_for_sni(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    SSL *s = SSL_new(ctx);
    assert_null(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name));
    assert_int_equal(SSL_get_servername_type(s), -1);
    assert_int_equal(SSL_set_tlsext_host_name(s, "example.com"), 1);
    assert_string_equal(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "example.com");
    assert_int_equal(SSL_get_servername_type(s), TLSEXT_NAMETYPE_host_name);
    assert_null(SSL_get_servername(s, 1));

    assert_int_equal(SSL_set_tlsext_host_name(s, ""), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME));
    char name[257];
    memset(name, 'a', 256);
    name[256] = '\0';
    assert_int_equal(SSL_set_tlsext_host_name(s, name), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME));
    assert_string_equal(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "example.com");
    name[255] = '\0';
    assert_int_equal(SSL_set_tlsext_host_name(s, name), 1);
    assert_int_equal(strlen(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name)), 255);
    assert_int_equal(SSL_ctrl(s, SSL_CTRL_SET_TLSEXT_HOSTNAME, 1, "x"), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME_TYPE));
    assert_int_equal(SSL_set_tlsext_host_name(s, NULL), 1); /* clears */
    assert_null(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* Connection state                                                    */
/* ------------------------------------------------------------------ */

static void new_connection_state(void **state)
{
    SSL_CTX *any = new_ctx(), *cli = SSL_CTX_new(TLS_client_method());
    assert_non_null(cli);
    SSL *s = SSL_new(any), *c = SSL_new(cli);
    /* As OpenSSL: a TLS_method connection is a server until told otherwise. */
    assert_int_equal(SSL_is_server(s), 1);
    assert_int_equal(SSL_is_server(c), 0);
    SSL_set_connect_state(s);
    assert_int_equal(SSL_is_server(s), 0);
    SSL_set_accept_state(c);
    assert_int_equal(SSL_is_server(c), 1);
    assert_true(SSL_in_init(s));
    assert_true(SSL_in_before(s));
    assert_false(SSL_is_init_finished(s));
    assert_int_equal(SSL_version(s), TLS1_3_VERSION);
    assert_string_equal(SSL_get_version(s), "TLSv1.3");
    assert_int_equal(SSL_client_version(s), TLS_ANY_VERSION);
    assert_string_equal(SSL_state_string(s), "PINIT");
    assert_string_equal(SSL_state_string_long(s), "before SSL initialization");
    assert_null(SSL_get_current_cipher(s));
    assert_null(SSL_get_pending_cipher(s));
    assert_null(SSL_get1_peer_certificate(s));
    assert_null(SSL_get_peer_cert_chain(s));
    assert_int_equal(SSL_get_peer_quic_transport_version(s), -1);
    assert_int_equal(SSL_get_negotiated_group(s), 0);
    assert_ptr_equal(SSL_get_SSL_CTX(s), any);
    assert_int_equal(SSL_quic_read_level(s), ssl_encryption_initial);
    assert_int_equal(SSL_want(s), SSL_NOTHING);
    unsigned char r[40];
    assert_int_equal(SSL_get_client_random(s, NULL, 0), 32);
    assert_int_equal(SSL_get_client_random(s, r, sizeof(r)), 32);
    assert_int_equal(SSL_get_client_random(s, r, 8), 8);
    SSL_free(s);
    SSL_free(c);
    SSL_CTX_free(any);
    SSL_CTX_free(cli);
}

static void get_error_classifies(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_get_error(s, 1), SSL_ERROR_NONE);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_SYSCALL); /* nothing explains it */
    s->want_read = 1;
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_want(s), SSL_READING);
    ERR_raise(ERR_LIB_SSL, SSL_R_BAD_KEY_SHARE);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_SSL); /* the queue wins */
    ERR_clear_error();
    ERR_raise(ERR_LIB_SYS, 5);
    assert_int_equal(SSL_get_error(s, 0), SSL_ERROR_SYSCALL);
    ERR_clear_error();
    s->want_read = 0;
    s->phase = PHASE_FAILED;
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_SSL);
    assert_string_equal(SSL_state_string(s), "SSLERR");
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void shutdown_in_quic(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_shutdown(s), -1);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SHUTDOWN_WHILE_IN_INIT));
    assert_int_equal(SSL_get_shutdown(s), 0);
    s->phase = PHASE_DONE; /* as after a completed handshake */
    assert_int_equal(SSL_shutdown(s), 1);
    assert_int_equal(SSL_get_shutdown(s), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_set_shutdown(s, SSL_RECEIVED_SHUTDOWN);
    assert_int_equal(SSL_get_shutdown(s), SSL_RECEIVED_SHUTDOWN);
    SSL_set_quiet_shutdown(s, 1);
    assert_int_equal(SSL_get_quiet_shutdown(s), 1);
    assert_string_equal(SSL_state_string_long(s), "SSL negotiation finished successfully");
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void references_keep_objects_alive(void **state)
{
    SSL_CTX *ctx = new_ctx(), *other = new_ctx();
    SSL *s = SSL_new(ctx);
    assert_int_equal(SSL_CTX_up_ref(ctx), 1);
    SSL_CTX_free(ctx);
    SSL_CTX_free(ctx); /* the connection still holds one */
    assert_int_equal(ctx->references, 1);
    assert_int_equal(SSL_CTX_get_mode(SSL_get_SSL_CTX(s)), SSL_MODE_AUTO_RETRY);
    /* The servername callback's context switch moves the reference. */
    assert_ptr_equal(SSL_set_SSL_CTX(s, other), other);
    assert_int_equal(other->references, 2);
    assert_ptr_equal(SSL_get_SSL_CTX(s), other);
    assert_ptr_equal(SSL_set_SSL_CTX(s, NULL), other);
    assert_int_equal(SSL_up_ref(s), 1);
    SSL_free(s);
    assert_int_equal(s->references, 1);
    SSL_free(s); /* frees ctx's last reference too (ASan would flag a leak) */
    assert_int_equal(other->references, 1);
    SSL_CTX_free(other);
    SSL_CTX_free(NULL);
    SSL_free(NULL);
}

static void negotiated_group_reports_nid(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    static const struct {
        uint16_t id;
        int nid;
        const char *name;
    } g[] = {{0x001d, NID_X25519, "x25519"},
             {0x0017, NID_X9_62_prime256v1, "secp256r1"},
             {0x0018, NID_secp384r1, "secp384r1"},
             {0x001e, NID_X448, "x448"}};
    assert_null(SSL_get0_group_name(s)); /* OpenSSL 3.2's: nothing before the handshake */
    for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
        s->group_id = g[i].id; /* as the handshake records it */
        assert_int_equal(SSL_get_negotiated_group(s), g[i].nid);
        assert_string_equal(SSL_group_to_name(s, (int)SSL_get_negotiated_group(s)), g[i].name);
        assert_string_equal(SSL_get0_group_name(s), g[i].name);
    }
    assert_null(SSL_group_to_name(s, NID_secp521r1));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void peer_chain_view_depends_on_role(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    X509 *leaf = empty_cert(), *ca = empty_cert();
    /* What msg_parse_certificate leaves: the chain as received and a reference to the leaf. */
    s->peer_chain = sk_X509_new_null();
    assert_true(sk_X509_push(s->peer_chain, leaf));
    assert_true(sk_X509_push(s->peer_chain, ca));
    assert_true(X509_up_ref(leaf));
    s->peer_cert = leaf;

    SSL_set_connect_state(s);
    assert_ptr_equal(SSL_get_peer_cert_chain(s), s->peer_chain); /* client: with the leaf */
    SSL_set_accept_state(s);
    STACK_OF(X509) *v = SSL_get_peer_cert_chain(s); /* server: without */
    assert_non_null(v);
    assert_int_equal(sk_X509_num(v), 1);
    assert_ptr_equal(sk_X509_value(v, 0), ca);
    assert_ptr_equal(SSL_get_peer_cert_chain(s), v); /* stable across calls */

    X509 *got = SSL_get1_peer_certificate(s);
    assert_ptr_equal(got, leaf);
    X509_free(got);
    assert_ptr_equal(SSL_get0_peer_certificate(s), leaf); /* no reference taken */
    assert_null(SSL_get0_verified_chain(s));
    SSL_free(s); /* frees the chain, the view and the leaf reference */
    SSL_CTX_free(ctx);
}

static void alerts_and_fail_helper(void **state)
{
    SSL_CTX *ctx = new_ctx();
    SSL *s = SSL_new(ctx);
    qtls_set_alert(s, SSL_AD_DECODE_ERROR);
    qtls_set_alert(s, SSL_AD_INTERNAL_ERROR); /* the first alert wins */
    assert_int_equal(s->alert, SSL_AD_DECODE_ERROR);
    qtls_set_alert(NULL, SSL_AD_DECODE_ERROR); /* harmless */
    s->alert = 0;
    assert_int_equal(qtls_fail(s, SSL_AD_MISSING_EXTENSION,
                               SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION),
                     0);
    assert_int_equal(s->alert, SSL_AD_MISSING_EXTENSION);
    unsigned long e = ERR_peek_error();
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION);
    const char *file = NULL;
    assert_int_not_equal(ERR_peek_error_line(&file, NULL), 0);
    assert_non_null(strstr(file, "test_api.c")); /* the caller is recorded, not err.c */
    ERR_clear_error();
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* Texts                                                               */
/* ------------------------------------------------------------------ */

static void alert_texts(void **state)
{
    static const struct {
        int alert;
        const char *code, *text;
    } want[] = {
        {SSL_AD_CLOSE_NOTIFY, "CN", "close notify"},
        {SSL_AD_UNEXPECTED_MESSAGE, "UM", "unexpected_message"},
        {SSL_AD_HANDSHAKE_FAILURE, "HF", "handshake failure"},
        {SSL_AD_BAD_CERTIFICATE, "BC", "bad certificate"},
        {SSL_AD_CERTIFICATE_EXPIRED, "CE", "certificate expired"},
        {SSL_AD_ILLEGAL_PARAMETER, "IP", "illegal parameter"},
        {SSL_AD_UNKNOWN_CA, "CA", "unknown CA"},
        {SSL_AD_DECODE_ERROR, "DE", "decode error"},
        {SSL_AD_DECRYPT_ERROR, "CY", "decrypt error"},
        {SSL_AD_PROTOCOL_VERSION, "PV", "protocol version"},
        {SSL_AD_INTERNAL_ERROR, "IE", "internal error"},
        {SSL_AD_USER_CANCELLED, "US", "user canceled"},
        {SSL_AD_MISSING_EXTENSION, "ME", "missing extension"},
        {SSL_AD_UNSUPPORTED_EXTENSION, "UE", "unsupported extension"},
        {SSL_AD_UNRECOGNIZED_NAME, "UN", "unrecognized name"},
        {SSL_AD_UNKNOWN_PSK_IDENTITY, "UP", "unknown PSK identity"},
        {SSL_AD_CERTIFICATE_REQUIRED, "CQ", "certificate required"},
        {SSL_AD_NO_APPLICATION_PROTOCOL, "UK", "no application protocol"},
        {200, "UK", "unknown"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_string_equal(SSL_alert_desc_string(want[i].alert), want[i].code);
        assert_string_equal(SSL_alert_desc_string_long(want[i].alert), want[i].text);
        /* Alert callbacks pass (level << 8) | description. */
        int v = SSL3_AL_FATAL << 8 | want[i].alert;
        assert_string_equal(SSL_alert_desc_string_long(v), want[i].text);
    }
    assert_string_equal(SSL_alert_type_string(SSL3_AL_FATAL << 8 | 40), "F");
    assert_string_equal(SSL_alert_type_string_long(SSL3_AL_FATAL << 8 | 40), "fatal");
    assert_string_equal(SSL_alert_type_string(SSL3_AL_WARNING << 8), "W");
    assert_string_equal(SSL_alert_type_string_long(SSL3_AL_WARNING << 8), "warning");
    assert_string_equal(SSL_alert_type_string(0), "U");
    assert_string_equal(SSL_alert_type_string_long(3 << 8), "unknown");
}

static void reason_of(int reason, const char *text)
{
    char buf[256];
    ERR_error_string_n(ERR_PACK(ERR_LIB_SSL, 0, reason), buf, sizeof(buf));
    assert_non_null(strstr(buf, "SSL routines"));
    assert_non_null(strstr(buf, text));
}

static void error_strings_are_words(void **state)
{
    assert_int_equal(OPENSSL_init_ssl(0, NULL), 1);
    assert_int_equal(ERR_load_SSL_strings(), 1);
    reason_of(SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION,
              ":missing quic transport parameters extension");
    reason_of(SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED, ":wrong encryption level received");
    reason_of(SSL_R_NO_APPLICATION_PROTOCOL, ":no application protocol");
    reason_of(SSL_R_NO_CIPHER_MATCH, ":no cipher match");
    reason_of(SSL_R_BAD_KEY_SHARE, ":bad key share");
    reason_of(SSL_R_INVALID_SESSION_ID, ":invalid session id");
    reason_of(SSL_R_TLSV13_ALERT_MISSING_EXTENSION, ":tlsv13 alert missing extension");
    reason_of(SSL_R_UNKNOWN_CIPHER_TYPE, ":unknown cipher type"); /* SSL_SESSION_set_cipher */
    reason_of(QTLS_R_DECODE_ERROR, ":decode error");
    /* Every qtls reason has a text (none falls back to "reason(N)"). */
    for (int r = QTLS_R_DUPLICATE_EXTENSION; r <= QTLS_R_HANDSHAKE_FAILED_BEFORE; r++)
        assert_non_null(ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, r)));
    /* libcrypto's common reasons still read as before. */
    reason_of(ERR_R_PASSED_INVALID_ARGUMENT, ":passed invalid argument");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fresh_ctx_reports_openssl_defaults, clear_errors),
        cmocka_unit_test_setup(null_method_and_null_ctx_fail, clear_errors),
        cmocka_unit_test_setup(proto_version_bounds, clear_errors),
        cmocka_unit_test_setup(groups_lists, clear_errors),
        cmocka_unit_test_setup(unknown_ctrl_fails_with_error, clear_errors),
        cmocka_unit_test_setup(mode_cache_mode_and_cert_list_return_openssl_values, clear_errors),
        cmocka_unit_test_setup(options_set_and_clear, clear_errors),
        cmocka_unit_test_setup(chain_ctrls, clear_errors),
        cmocka_unit_test_setup(servername_callback_and_arg_are_stored, clear_errors),
        cmocka_unit_test_setup(verify_settings_are_inherited, clear_errors),
        cmocka_unit_test_setup(verify_params_are_made_on_first_use, clear_errors),
        cmocka_unit_test_setup(sni_and_verify_host_share_one_string, clear_errors),
        cmocka_unit_test_setup(cert_store_ownership_and_loading, clear_errors),
        cmocka_unit_test_setup(cipher_getters_match_openssl, clear_errors),
        cmocka_unit_test_setup(suite_lists, clear_errors),
        cmocka_unit_test_setup(group_and_scheme_tables, clear_errors),
        cmocka_unit_test_setup(alpn_wire_format_check, clear_errors),
        cmocka_unit_test_setup(select_next_proto_prefers_server_order, clear_errors),
        cmocka_unit_test_setup(select_next_proto_no_overlap_returns_client_first, clear_errors),
        cmocka_unit_test_setup(select_next_proto_tolerates_malformed_server_list, clear_errors),
        cmocka_unit_test_setup(ex_data_and_app_data, clear_errors),
        cmocka_unit_test_setup(alpn_setters_use_openssl_return_convention, clear_errors),
        cmocka_unit_test_setup(host_name_for_sni, clear_errors),
        cmocka_unit_test_setup(new_connection_state, clear_errors),
        cmocka_unit_test_setup(get_error_classifies, clear_errors),
        cmocka_unit_test_setup(shutdown_in_quic, clear_errors),
        cmocka_unit_test_setup(references_keep_objects_alive, clear_errors),
        cmocka_unit_test_setup(negotiated_group_reports_nid, clear_errors),
        cmocka_unit_test_setup(peer_chain_view_depends_on_role, clear_errors),
        cmocka_unit_test_setup(alerts_and_fail_helper, clear_errors),
        cmocka_unit_test_setup(alert_texts, clear_errors),
        cmocka_unit_test_setup(error_strings_are_words, clear_errors),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
