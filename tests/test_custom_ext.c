/*
 * Custom extensions (issue 9 item 5.6): registration with OpenSSL's refusals, the
 * ClientHello / EncryptedExtensions round trip in both roles with add/free/parse semantics,
 * callback failures as alerts, an answer the client did not ask for, an extension in a
 * message it was not added for, and the 1.1.0 forms, which OpenSSL limits to TLS 1.2 and below.
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

#define XT 0x1234 /* an extension type nobody uses */
#define CH_EE (SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS)

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

/* What one side's callbacks saw and do. */
struct side {
    const char *send; /* what add_cb gives (NULL: add_cb skips with 0) */
    int add_ret;      /* when not 1: returned, with *al = add_al */
    int add_al;
    int parse_ret, parse_al;
    int adds, frees, parses;
    unsigned add_context, parse_context;
    char got[64];
    const unsigned char *given; /* the pointer add_cb returned, to check free_cb gets it */
    int free_matched;
};

static int add_cb(SSL *s, unsigned int type, unsigned int context, const unsigned char **out,
                  size_t *outlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    struct side *sd = arg;
    sd->adds++;
    sd->add_context = context;
    assert_int_equal(type, XT);
    assert_null(x);
    if (sd->add_ret != 1) {
        *al = sd->add_al;
        return sd->add_ret;
    }
    if (sd->send == NULL)
        return 0;
    unsigned char *copy = OPENSSL_malloc(strlen(sd->send) + 1);
    memcpy(copy, sd->send, strlen(sd->send) + 1);
    *out = copy;
    *outlen = strlen(sd->send);
    sd->given = copy;
    return 1;
}

static void free_cb(SSL *s, unsigned int type, unsigned int context, const unsigned char *out,
                    void *arg)
{
    struct side *sd = arg;
    sd->frees++;
    sd->free_matched = out == sd->given;
    OPENSSL_free((void *)out);
}

static int parse_cb(SSL *s, unsigned int type, unsigned int context, const unsigned char *in,
                    size_t inlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    struct side *sd = arg;
    sd->parses++;
    sd->parse_context = context;
    if (inlen < sizeof(sd->got)) {
        memcpy(sd->got, in, inlen);
        sd->got[inlen] = 0;
    }
    if (sd->parse_ret != 1) {
        *al = sd->parse_al;
        return sd->parse_ret;
    }
    return 1;
}

static void registration_rules(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    struct side sd = {0};
    assert_int_equal(SSL_CTX_add_custom_ext(ctx, XT, CH_EE, add_cb, free_cb, &sd, parse_cb, &sd), 1);
    /* The same type twice; one qtls or OpenSSL handles; QUIC's transport parameters. */
    static const struct {
        unsigned type;
        int reason;
    } refused[] = {
        {XT, QTLS_R_CUSTOM_EXT_DUPLICATE},
        {TLSEXT_TYPE_application_layer_protocol_negotiation, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {TLSEXT_TYPE_server_name, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {TLSEXT_TYPE_quic_transport_parameters, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {TLSEXT_TYPE_quic_transport_parameters_draft, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {TLSEXT_TYPE_signature_algorithms_cert, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {TLSEXT_TYPE_renegotiate, QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY},
        {0x10000, ERR_R_PASSED_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        assert_int_equal(SSL_CTX_add_custom_ext(ctx, refused[i].type, CH_EE, add_cb, free_cb, &sd,
                                                parse_cb, &sd),
                         0);
        assert_int_equal(ERR_GET_REASON(ERR_get_error()), refused[i].reason);
    }
    assert_int_equal(SSL_CTX_add_client_custom_ext(ctx, TLSEXT_TYPE_key_share, NULL, NULL, NULL,
                                                   NULL, NULL),
                     0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY);
    /* free_cb without add_cb could never run. */
    assert_int_equal(SSL_CTX_add_custom_ext(ctx, 0x1235, CH_EE, NULL, free_cb, &sd, NULL, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_INVALID_ARGUMENT);
    /* Messages qtls does not run custom extensions in. */
    assert_int_equal(SSL_CTX_add_custom_ext(ctx, 0x1236,
                                            SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_CERTIFICATE,
                                            add_cb, NULL, &sd, NULL, NULL),
                     0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_NOT_IMPLEMENTED);
    /* SCT: OpenSSL lets applications handle it; so does qtls, which does not. */
    assert_int_equal(SSL_extension_supported(TLSEXT_TYPE_signed_certificate_timestamp), 1);
    assert_int_equal(SSL_CTX_add_custom_ext(ctx, TLSEXT_TYPE_signed_certificate_timestamp, CH_EE,
                                            NULL, NULL, NULL, NULL, NULL),
                     1);
    assert_int_equal(SSL_extension_supported(XT), 0);
    assert_int_equal(SSL_extension_supported(TLSEXT_TYPE_psk), 1);
    /* The 1.1.0 forms: one per role, the same type allowed once for each. */
    assert_int_equal(SSL_CTX_has_client_custom_ext(ctx, 0x2000), 0);
    assert_int_equal(SSL_CTX_add_client_custom_ext(ctx, 0x2000, NULL, NULL, NULL, NULL, NULL), 1);
    assert_int_equal(SSL_CTX_has_client_custom_ext(ctx, 0x2000), 1);
    assert_int_equal(SSL_CTX_add_server_custom_ext(ctx, 0x2000, NULL, NULL, NULL, NULL, NULL), 1);
    assert_int_equal(SSL_CTX_add_client_custom_ext(ctx, 0x2000, NULL, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), QTLS_R_CUSTOM_EXT_DUPLICATE);
    assert_int_equal(SSL_CTX_add_custom_ext(NULL, 0x2001, CH_EE, NULL, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), ERR_R_PASSED_NULL_PARAMETER);
    SSL_CTX_free(ctx);
}

/* A pair whose client and server added XT for the messages c_ctx and s_ctx (0: not at all). */
static void pair_in(struct mock_pair *p, struct side *c, unsigned c_ctx, struct side *s,
                    unsigned s_ctx)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    if (c_ctx != 0)
        assert_int_equal(
            SSL_CTX_add_custom_ext(cctx, XT, c_ctx, add_cb, free_cb, c, parse_cb, c), 1);
    if (s_ctx != 0)
        assert_int_equal(
            SSL_CTX_add_custom_ext(sctx, XT, s_ctx, add_cb, free_cb, s, parse_cb, s), 1);
    assert_true(mock_pair_init(p, cctx, sctx));
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static int pair(struct mock_pair *p, struct side *c, struct side *s, int c_has, int s_has)
{
    pair_in(p, c, c_has ? CH_EE : 0, s, s_has ? CH_EE : 0);
    return 1;
}

static void round_trip_in_both_roles(void **state)
{
    struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    struct mock_pair p;
    pair(&p, &c, &s, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(c.adds, 1);
    assert_int_equal(c.add_context, SSL_EXT_CLIENT_HELLO);
    assert_int_equal(c.frees, 1);
    assert_true(c.free_matched);
    assert_int_equal(s.parses, 1);
    assert_int_equal(s.parse_context, SSL_EXT_CLIENT_HELLO);
    assert_string_equal(s.got, "ping");
    assert_int_equal(s.adds, 1);
    assert_int_equal(s.add_context, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS);
    assert_int_equal(s.frees, 1);
    assert_int_equal(c.parses, 1);
    assert_int_equal(c.parse_context, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS);
    assert_string_equal(c.got, "pong");
    mock_pair_free(&p);
}

/* A server without the extension ignores it; a client that skipped it gets no answer. */
static void unknown_or_skipped_extensions_get_no_answer(void **state)
{
    struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    struct mock_pair p;
    pair(&p, &c, &s, 1, 0);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(c.adds, 1);
    assert_int_equal(c.parses, 0);
    mock_pair_free(&p);

    struct side c2 = {.send = NULL, .add_ret = 1, .parse_ret = 1}; /* add_cb returns 0 */
    struct side s2 = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    pair(&p, &c2, &s2, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(c2.adds, 1);
    assert_int_equal(c2.frees, 0);
    assert_int_equal(s2.parses, 0);
    assert_int_equal(s2.adds, 0);
    assert_int_equal(c2.parses, 0);
    mock_pair_free(&p);
}

/* parse_cb <= 0: the handshake fails with its alert and SSL_R_BAD_EXTENSION. */
static void parse_failure_is_the_callbacks_alert(void **state)
{
    struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 0,
                     .parse_al = SSL_AD_ILLEGAL_PARAMETER};
    struct mock_pair p;
    pair(&p, &c, &s, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(p.server.alert, SSL_AD_ILLEGAL_PARAMETER);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_BAD_EXTENSION);
    mock_pair_free(&p);
    ERR_clear_error();

    /* The client refusing the server's answer. */
    struct side c2 = {.send = "ping", .add_ret = 1, .parse_ret = -1,
                      .parse_al = SSL_AD_HANDSHAKE_FAILURE};
    struct side s2 = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    pair(&p, &c2, &s2, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(p.client.alert, SSL_AD_HANDSHAKE_FAILURE);
    mock_pair_free(&p);
}

/* add_cb < 0: fatal with its alert (SSL_R_CALLBACK_FAILED), on either side. */
static void add_failure_is_fatal(void **state)
{
    struct side c = {.add_ret = -1, .add_al = SSL_AD_INTERNAL_ERROR, .parse_ret = 1};
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    struct mock_pair p;
    pair(&p, &c, &s, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CALLBACK_FAILED);
    assert_int_equal(s.parses, 0); /* nothing was sent */
    mock_pair_free(&p);
    ERR_clear_error();

    struct side c2 = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    struct side s2 = {.add_ret = -1, .add_al = SSL_AD_ACCESS_DENIED, .parse_ret = 1};
    pair(&p, &c2, &s2, 1, 1);
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(p.server.alert, SSL_AD_ACCESS_DENIED);
    mock_pair_free(&p);
}

/* An answer in EncryptedExtensions to an extension the client did not send (§4.2). */
static void unsolicited_answer_is_unsupported_extension(void **state)
{
    struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    struct mock_pair p;
    pair(&p, &c, &s, 1, 1);
    assert_int_equal(SSL_do_handshake(p.client.ssl), -1); /* ClientHello written */
    p.client.ssl->custom_ext_sent = 0; /* as if it had not been offered */
    assert_true(mock_deliver(&p.client, &p.server, 0));
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(p.client.alert, SSL_AD_UNSUPPORTED_EXTENSION);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_BAD_EXTENSION);
    assert_int_equal(c.parses, 0);
    mock_pair_free(&p);
}

/*
 * §4.2: an extension the receiver added, in a message it did not add it for, is
 * illegal_parameter with SSL_R_BAD_EXTENSION, before any callback runs. OpenSSL 3.0.19's
 * libssl, run on these two cases and the 1.1.0 one below, sends alert 47 in each (its
 * verify_extension).
 */
static void an_extension_in_a_message_not_added_for_is_illegal_parameter(void **state)
{
    static const struct {
        unsigned c_ctx, s_ctx;
        int client_refuses; /* 1: the server answers in EE; 0: the server refuses the ClientHello */
    } cases[] = {
        {SSL_EXT_CLIENT_HELLO, CH_EE, 1},                /* the client added it for CH only */
        {CH_EE, SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS, 0}, /* the server added it for EE only */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
        struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
        struct mock_pair p;
        pair_in(&p, &c, cases[i].c_ctx, &s, cases[i].s_ctx);
        assert_int_equal(mock_handshake(&p, 0), 0);
        assert_int_equal(cases[i].client_refuses ? p.client.alert : p.server.alert,
                         SSL_AD_ILLEGAL_PARAMETER);
        assert_int_equal(mock_first_ssl_reason(), SSL_R_BAD_EXTENSION);
        assert_int_equal(c.adds, 1);
        /* No callback runs for the refused extension; the server's ran only for a CH it took. */
        assert_int_equal(c.parses, 0);
        assert_int_equal(s.parses, cases[i].client_refuses);
        assert_int_equal(s.adds, cases[i].client_refuses);
        mock_pair_free(&p);
        ERR_clear_error();
    }
}

/*
 * 1.1.0 forms: a client's goes into the ClientHello and nowhere else (OpenSSL gives them the
 * TLS 1.2 ServerHello, never EncryptedExtensions); a server's is not parsed or sent in TLS 1.3.
 */
static int old_add(SSL *s, unsigned int type, const unsigned char **out, size_t *outlen, int *al,
                   void *arg)
{
    (*(int *)arg)++;
    *out = (const unsigned char *)"old";
    *outlen = 3;
    return 1;
}

static int old_parse(SSL *s, unsigned int type, const unsigned char *in, size_t inlen, int *al,
                     void *arg)
{
    (*(int *)arg)++;
    return 1;
}

static void old_forms_are_tls12_only(void **state)
{
    int c_adds = 0, c_parses = 0, s_adds = 0, s_parses = 0;
    struct side s = {.send = "pong", .add_ret = 1, .parse_ret = 1};
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    assert_int_equal(
        SSL_CTX_add_client_custom_ext(cctx, XT, old_add, NULL, &c_adds, old_parse, &c_parses), 1);
    /* A server that answers in EE: the client refuses the answer (OpenSSL 3.0 too, alert 47). */
    assert_int_equal(SSL_CTX_add_custom_ext(sctx, XT, CH_EE, add_cb, free_cb, &s, parse_cb, &s), 1);
    struct mock_pair p;
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(mock_handshake(&p, 0), 0);
    assert_int_equal(p.client.alert, SSL_AD_ILLEGAL_PARAMETER);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_BAD_EXTENSION);
    assert_int_equal(c_adds, 1);
    assert_string_equal(s.got, "old");
    assert_int_equal(s.adds, 1);
    assert_int_equal(c_parses, 0);
    mock_pair_free(&p);
    ERR_clear_error();
    /* A server that takes it in the ClientHello and does not answer: the handshake completes. */
    struct side s_quiet = {.send = NULL, .add_ret = 1, .parse_ret = 1};
    SSL_CTX_free(sctx);
    sctx = mock_server_ctx("ecdsa256");
    assert_int_equal(SSL_CTX_add_custom_ext(sctx, XT, SSL_EXT_CLIENT_HELLO, add_cb, NULL,
                                            &s_quiet, parse_cb, &s_quiet),
                     1);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(c_adds, 2);
    assert_string_equal(s_quiet.got, "old");
    assert_int_equal(c_parses, 0);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);

    /* A server's 1.1.0 extension is neither parsed nor sent in TLS 1.3. */
    struct side c = {.send = "ping", .add_ret = 1, .parse_ret = 1};
    cctx = mock_client_ctx();
    sctx = mock_server_ctx("ecdsa256");
    assert_int_equal(SSL_CTX_add_custom_ext(cctx, XT, CH_EE, add_cb, free_cb, &c, parse_cb, &c), 1);
    assert_int_equal(
        SSL_CTX_add_server_custom_ext(sctx, XT, old_add, NULL, &s_adds, old_parse, &s_parses), 1);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(mock_handshake(&p, 0), 1);
    assert_int_equal(c.adds, 1);
    assert_int_equal(s_parses, 0);
    assert_int_equal(s_adds, 0);
    assert_int_equal(c.parses, 0);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(registration_rules, clear_errors),
        cmocka_unit_test_setup(round_trip_in_both_roles, clear_errors),
        cmocka_unit_test_setup(unknown_or_skipped_extensions_get_no_answer, clear_errors),
        cmocka_unit_test_setup(parse_failure_is_the_callbacks_alert, clear_errors),
        cmocka_unit_test_setup(add_failure_is_fatal, clear_errors),
        cmocka_unit_test_setup(unsolicited_answer_is_unsupported_extension, clear_errors),
        cmocka_unit_test_setup(an_extension_in_a_message_not_added_for_is_illegal_parameter,
                               clear_errors),
        cmocka_unit_test_setup(old_forms_are_tls12_only, clear_errors),
    };
    return cmocka_run_group_tests_name("custom_ext", tests, NULL, NULL);
}
