/*
 * Signed certificate timestamp lists (RFC 6962 §3.3 in the leaf's CertificateEntry, RFC 8446
 * §4.4.2.1), both roles, qtls <-> qtls, through BoringSSL's API: asked for, sent, kept in the
 * session for resumptions, never sent unasked, checked for shape on both sides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/ct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

/* Two SCTs, opaque to TLS: { 0,2, 0xa1,0xa2 } and { 0,2, 0xb1,0xb2 }. */
static const uint8_t list[] = {0, 8, 0, 2, 0xa1, 0xa2, 0, 2, 0xb1, 0xb2};
static const uint8_t list2[] = {0, 5, 0, 3, 0xc1, 0xc2, 0xc3};

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
    int certificates_seen; /* Certificate messages the client received */
    int list_in_certificate;
};

/* The client's message callback: does the server's Certificate carry the list's bytes? */
static void watch_certificate(int write_p, int version, int content_type, const void *buf,
                              size_t len, SSL *ssl, void *arg)
{
    struct fixture *f = arg;
    const uint8_t *m = buf;
    if (write_p || content_type != SSL3_RT_HANDSHAKE || len < 4 || m[0] != SSL3_MT_CERTIFICATE)
        return;
    f->certificates_seen++;
    for (size_t i = 0; i + sizeof(list) <= len; i++)
        if (memcmp(m + i, list, sizeof(list)) == 0)
            f->list_in_certificate = 1;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx("ecdsa256");
    if (f->cctx == NULL || f->sctx == NULL)
        return -1;
    SSL_CTX_set_msg_callback(f->cctx, watch_certificate);
    SSL_CTX_set_msg_callback_arg(f->cctx, f);
    ERR_clear_error();
    *state = f;
    return 0;
}

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

static void assert_client_has(struct fixture *f, const uint8_t *want, size_t want_len)
{
    const uint8_t *got = (const uint8_t *)"x";
    size_t got_len = 99;
    SSL_get0_signed_cert_timestamp_list(f->p.client.ssl, &got, &got_len);
    assert_int_equal(got_len, want_len);
    if (want_len > 0)
        assert_memory_equal(got, want, want_len);
    else
        assert_null(got);
}

static void asked_for_list_arrives_in_the_leaf_entry(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_enable_signed_cert_timestamps(f->cctx);
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list, sizeof(list)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->certificates_seen, 1);
    assert_true(f->list_in_certificate);
    assert_client_has(f, list, sizeof(list));
}

/* RFC 6962 §3.3.1 / RFC 8446 §4.2: an extension the client did not send is never answered. */
static void never_sent_unasked(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list, sizeof(list)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->certificates_seen, 1);
    assert_false(f->list_in_certificate);
    assert_client_has(f, NULL, 0);
}

/* Asked, but the server has none: nothing arrives and nothing fails. */
static void asked_without_a_list_gets_none(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_enable_signed_cert_timestamps(f->p.client.ssl);
    assert_true(mock_handshake(&f->p, 0));
    assert_client_has(f, NULL, 0);
}

/* The connection's list wins over the context's. */
static void connection_list_overrides_context(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_enable_signed_cert_timestamps(f->cctx);
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list, sizeof(list)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_signed_cert_timestamp_list(f->p.server.ssl, list2, sizeof(list2)), 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_client_has(f, list2, sizeof(list2));
}

/* A resumption has no Certificate: the list is the session's, also through i2d/d2i. */
static void resumption_answers_the_sessions_list(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_enable_signed_cert_timestamps(f->cctx);
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list, sizeof(list)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    SSL_SESSION *sess = SSL_get1_session(f->p.client.ssl);
    assert_non_null(sess);
    unsigned char *der = NULL;
    int der_len = i2d_SSL_SESSION(sess, &der);
    SSL_SESSION_free(sess);
    assert_true(der_len > 0);
    const unsigned char *p = der;
    sess = d2i_SSL_SESSION(NULL, &p, der_len);
    OPENSSL_free(der);
    assert_non_null(sess);

    mock_pair_free(&f->p);
    memset(&f->p, 0, sizeof(f->p));
    f->certificates_seen = 0;
    /* The server now has another list: a resumption must not show it. */
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list2, sizeof(list2)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(f->p.client.ssl, sess), 1);
    SSL_SESSION_free(sess);
    assert_true(mock_handshake(&f->p, 0));
    assert_true(SSL_session_reused(f->p.client.ssl));
    assert_int_equal(f->certificates_seen, 0);
    assert_client_has(f, list, sizeof(list));
}

/* RFC 6962 §3.3: neither the list nor an SCT may be empty; the setters refuse such lists. */
static void malformed_lists_are_refused_by_the_setters(void **state)
{
    struct fixture *f = *state;
    static const uint8_t empty_list[] = {0, 0};
    static const uint8_t empty_sct[] = {0, 6, 0, 2, 1, 2, 0, 0};
    static const uint8_t short_list[] = {0, 9, 0, 2, 1, 2};
    static const uint8_t trailing[] = {0, 4, 0, 2, 1, 2, 7};
    const struct {
        const uint8_t *p;
        size_t n;
    } bad[] = {{empty_list, sizeof(empty_list)},
               {empty_sct, sizeof(empty_sct)},
               {short_list, sizeof(short_list)},
               {trailing, sizeof(trailing)}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ERR_clear_error();
        assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, bad[i].p, bad[i].n), 0);
        assert_int_equal(ERR_GET_REASON(ERR_peek_error()), 924 /* QTLS_R_INVALID_SCT_LIST */);
        char text[256];
        ERR_error_string_n(ERR_peek_error(), text, sizeof(text));
        assert_non_null(strstr(text, "invalid sct list"));
    }
    /* A refused list leaves the previous one; an empty call clears it. */
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, list, sizeof(list)), 1);
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, empty_sct, 8), 0);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_enable_signed_cert_timestamps(f->p.client.ssl);
    assert_int_equal(SSL_set_signed_cert_timestamp_list(f->p.server.ssl, empty_list, 2), 0);
    assert_true(mock_handshake(&f->p, 0));
    assert_client_has(f, list, sizeof(list));
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, NULL, 0), 1);
}

/* Replaces the first occurrence of `from` in the server's handshake-level output by `to`. */
static void tamper(struct mock_side *s, const uint8_t *from, const uint8_t *to, size_t n)
{
    uint8_t *out = s->out[ssl_encryption_handshake];
    size_t len = s->out_len[ssl_encryption_handshake];
    for (size_t i = 0; i + n <= len; i++) {
        if (memcmp(out + i, from, n) == 0) {
            memcpy(out + i, to, n);
            return;
        }
    }
    fail_msg("bytes to tamper with not found");
}

/* A client refuses a list with an empty SCT in it: decode_error (BoGo's EmptySCT test). */
static void client_refuses_an_empty_sct(void **state)
{
    struct fixture *f = *state;
    static const uint8_t sent[] = {0, 6, 0, 4, 1, 2, 3, 4};
    static const uint8_t bad[] = {0, 6, 0, 2, 1, 2, 0, 0};
    SSL_CTX_enable_signed_cert_timestamps(f->cctx);
    assert_int_equal(SSL_CTX_set_signed_cert_timestamp_list(f->sctx, sent, sizeof(sent)), 1);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    tamper(&f->p.server, sent, bad, sizeof(sent));
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_int_equal(SSL_get_error(f->p.client.ssl, -1), SSL_ERROR_SSL);
    assert_int_equal(f->p.client.alert, SSL_AD_DECODE_ERROR);
    assert_client_has(f, NULL, 0);
}

/* The server's request parser: a ClientHello whose signed_certificate_timestamp has a body. */
static void server_refuses_a_request_with_a_body(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_enable_signed_cert_timestamps(f->p.client.ssl);
    assert_int_equal(SSL_set_tlsext_host_name(f->p.client.ssl, "ab"), 1);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    /* server_name "ab" then the empty request, rewritten in the same 15 bytes as server_name "a"
     * then a request holding one byte: everything else in the ClientHello still parses. */
    static const uint8_t sent[] = {0, 0, 0, 7, 0, 5, 0, 0, 2, 'a', 'b', 0, 18, 0, 0};
    static const uint8_t bad[] = {0, 0, 0, 6, 0, 4, 0, 0, 1, 'a', 0, 18, 0, 1, 'b'};
    uint8_t *out = f->p.client.out[ssl_encryption_initial];
    size_t len = f->p.client.out_len[ssl_encryption_initial], at = 0;
    for (size_t i = 0; i + sizeof(sent) <= len && at == 0; i++)
        if (memcmp(out + i, sent, sizeof(sent)) == 0)
            at = i;
    assert_true(at > 0);
    memcpy(out + at, bad, sizeof(bad));
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    assert_int_equal(f->p.server.alert, SSL_AD_DECODE_ERROR);
    const char *func = NULL;
    assert_int_not_equal(ERR_peek_error_func(&func), 0);
    assert_string_equal(func, "sct_server_take_request");
}

static void expect_not_implemented(int r, const char *name)
{
    const char *data = NULL;
    int flags = 0;
    assert_int_equal(r, 0);
    unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
    assert_int_equal(ERR_GET_REASON(e), 922 /* QTLS_R_NOT_IMPLEMENTED */);
    assert_non_null(strstr(data, name));
    assert_int_equal(ERR_peek_error(), 0);
}

/* A version 2 serverinfo block: uint32 context, uint16 type, opaque data<0..2^16-1>. */
static size_t block(uint8_t *out, uint32_t context, uint16_t type, const uint8_t *data, size_t n)
{
    uint8_t *p = out;
    *p++ = (uint8_t)(context >> 24), *p++ = (uint8_t)(context >> 16);
    *p++ = (uint8_t)(context >> 8), *p++ = (uint8_t)context;
    *p++ = (uint8_t)(type >> 8), *p++ = (uint8_t)type;
    *p++ = (uint8_t)(n >> 8), *p++ = (uint8_t)n;
    memcpy(p, data, n);
    return 8 + n;
}

/*
 * OpenSSL's serverinfo: a version 2 SCT block for the TLS 1.3 Certificate is the server's list;
 * TLS 1.2-only blocks (all of version 1) are accepted and never sent; other TLS 1.3 extensions
 * and malformed data are refused.
 */
static void serverinfo_sets_the_sct_list(void **state)
{
    struct fixture *f = *state;
    uint8_t info[128];
    static const uint8_t other[] = {1, 2, 3};
    size_t n = block(info, SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_2_SERVER_HELLO, 18, list2,
                     sizeof(list2)); /* TLS 1.2's SCT: skipped */
    n += block(info + n, SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_CERTIFICATE, 18, list, sizeof(list));
    assert_int_equal(SSL_CTX_use_serverinfo_ex(f->sctx, SSL_SERVERINFOV2, info, n), 1);
    /* Version 1 blocks are TLS 1.2 only in OpenSSL: nothing changes. */
    uint8_t v1[] = {0, 18, 0, sizeof(list2)};
    uint8_t v1_info[sizeof(v1) + sizeof(list2)];
    memcpy(v1_info, v1, sizeof(v1));
    memcpy(v1_info + sizeof(v1), list2, sizeof(list2));
    assert_int_equal(SSL_CTX_use_serverinfo(f->sctx, v1_info, sizeof(v1_info)), 1);
    SSL_CTX_enable_signed_cert_timestamps(f->cctx);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    assert_true(mock_handshake(&f->p, 0));
    assert_client_has(f, list, sizeof(list));

    ERR_clear_error();
    n = block(info, SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS, 0x1234, other, 3);
    assert_int_equal(SSL_CTX_use_serverinfo_ex(f->sctx, SSL_SERVERINFOV2, info, n), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), 922 /* QTLS_R_NOT_IMPLEMENTED */);
    ERR_clear_error();
    n = block(info, SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_CERTIFICATE, 18, other, 3); /* bad list */
    assert_int_equal(SSL_CTX_use_serverinfo_ex(f->sctx, SSL_SERVERINFOV2, info, n), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), 924 /* QTLS_R_INVALID_SCT_LIST */);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_use_serverinfo_ex(f->sctx, SSL_SERVERINFOV2, info, n - 1), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_INVALID_SERVERINFO_DATA);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_use_serverinfo_ex(f->sctx, 3, info, n), 0);
    ERR_clear_error();
    expect_not_implemented(SSL_CTX_use_serverinfo_file(f->sctx, "/dev/null"),
                           "SSL_CTX_use_serverinfo_file");
}

static int any_scts(const CT_POLICY_EVAL_CTX *ctx, const STACK_OF(SCT) *scts, void *arg)
{
    return 1;
}

/* OpenSSL's CT validation is not implemented: asking for it fails naming it; "off" works. */
static void openssl_ct_validation_is_refused_by_name(void **state)
{
    struct fixture *f = *state;
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL *s = f->p.client.ssl;
    assert_int_equal(SSL_CTX_set_ct_validation_callback(f->cctx, NULL, NULL), 1);
    assert_int_equal(SSL_set_ct_validation_callback(s, NULL, NULL), 1);
    assert_int_equal(SSL_CTX_ct_is_enabled(f->cctx), 0);
    assert_int_equal(SSL_ct_is_enabled(s), 0);
    expect_not_implemented(SSL_CTX_enable_ct(f->cctx, SSL_CT_VALIDATION_STRICT),
                           "SSL_CTX_enable_ct");
    expect_not_implemented(SSL_enable_ct(s, SSL_CT_VALIDATION_PERMISSIVE), "SSL_enable_ct");
    expect_not_implemented(SSL_CTX_set_ct_validation_callback(f->cctx, any_scts, NULL),
                           "SSL_CTX_set_ct_validation_callback");
    expect_not_implemented(SSL_set_ct_validation_callback(s, any_scts, NULL),
                           "SSL_set_ct_validation_callback");
    expect_not_implemented(SSL_CTX_set_default_ctlog_list_file(f->cctx),
                           "SSL_CTX_set_default_ctlog_list_file");
    expect_not_implemented(SSL_CTX_set_ctlog_list_file(f->cctx, "/dev/null"),
                           "SSL_CTX_set_ctlog_list_file");
    assert_int_equal(SSL_ct_is_enabled(s), 0);
    assert_null(SSL_get0_peer_scts(s));
    SSL_CTX_set0_ctlog_store(f->cctx, CTLOG_STORE_new()); /* owned and freed (LeakSanitizer) */
    assert_null(SSL_CTX_get0_ctlog_store(f->cctx));
    assert_true(mock_handshake(&f->p, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(asked_for_list_arrives_in_the_leaf_entry),
        T(never_sent_unasked),
        T(asked_without_a_list_gets_none),
        T(connection_list_overrides_context),
        T(resumption_answers_the_sessions_list),
        T(malformed_lists_are_refused_by_the_setters),
        T(client_refuses_an_empty_sct),
        T(server_refuses_a_request_with_a_body),
        T(openssl_ct_validation_is_refused_by_name),
        T(serverinfo_sets_the_sct_list),
#undef T
    };
    return cmocka_run_group_tests_name("sct", tests, NULL, NULL);
}
