/*
 * OCSP stapling, both roles (RFC 8446 §4.4.2.1), through OpenSSL's API:
 * status type, status callbacks, SSL_set/get_tlsext_status_ocsp_resp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

/* Any bytes: TLS carries the DER OCSPResponse opaquely. */
static const unsigned char response[] = {0x30, 0x03, 0x0a, 0x01, 0x00, 0x42};

struct server_cb {
    int calls;
    int answer;     /* what the callback returns */
    int staple;     /* whether it sets a response first */
    int seen_type;  /* SSL_get_tlsext_status_type inside the callback */
    X509 *seen_cert;
};

struct client_cb {
    int calls;
    int answer;
    long len;                 /* SSL_get_tlsext_status_ocsp_resp inside the callback */
    unsigned char got[64];
};

static int server_status_cb(SSL *s, void *arg)
{
    struct server_cb *cb = arg;
    cb->calls++;
    cb->seen_type = SSL_get_tlsext_status_type(s);
    if (cb->staple) {
        unsigned char *copy = OPENSSL_memdup(response, sizeof(response));
        if (copy == NULL || SSL_set_tlsext_status_ocsp_resp(s, copy, sizeof(response)) != 1)
            return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return cb->answer;
}

static int client_status_cb(SSL *s, void *arg)
{
    struct client_cb *cb = arg;
    const unsigned char *p = NULL;
    cb->calls++;
    cb->len = SSL_get_tlsext_status_ocsp_resp(s, &p);
    if (cb->len > 0 && (size_t)cb->len <= sizeof(cb->got))
        memcpy(cb->got, p, (size_t)cb->len);
    if (cb->len < 0 && p != NULL)
        return -1; /* no response must come with a NULL pointer */
    return cb->answer;
}

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
    struct server_cb scb;
    struct client_cb ccb;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx("ecdsa256");
    if (f->cctx == NULL || f->sctx == NULL)
        return -1;
    f->scb = (struct server_cb){.answer = SSL_TLSEXT_ERR_OK, .staple = 1};
    f->ccb = (struct client_cb){.answer = 1};
    SSL_CTX_set_tlsext_status_cb(f->sctx, server_status_cb);
    SSL_CTX_set_tlsext_status_arg(f->sctx, &f->scb);
    SSL_CTX_set_tlsext_status_cb(f->cctx, client_status_cb);
    SSL_CTX_set_tlsext_status_arg(f->cctx, &f->ccb);
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

/* A client that asks for the status: the pair, with the request set on the client. */
static void start(struct fixture *f, int request)
{
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    if (request)
        assert_int_equal(SSL_set_tlsext_status_type(f->p.client.ssl, TLSEXT_STATUSTYPE_ocsp), 1);
}

static void response_is_stapled_and_seen_by_the_client(void **state)
{
    struct fixture *f = *state;
    start(f, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->scb.calls, 1);
    assert_int_equal(f->scb.seen_type, TLSEXT_STATUSTYPE_ocsp);
    assert_int_equal(f->ccb.calls, 1);
    assert_int_equal(f->ccb.len, sizeof(response));
    assert_memory_equal(f->ccb.got, response, sizeof(response));
    /* Still there after the handshake, owned by the connection. */
    const unsigned char *p = NULL;
    assert_int_equal(SSL_get_tlsext_status_ocsp_resp(f->p.client.ssl, &p), sizeof(response));
    assert_memory_equal(p, response, sizeof(response));
}

/* The context's status type reaches every connection made from it. */
static void context_status_type_is_inherited(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_get_tlsext_status_type(f->cctx), -1);
    assert_int_equal(SSL_CTX_set_tlsext_status_type(f->cctx, TLSEXT_STATUSTYPE_ocsp), 1);
    assert_int_equal(SSL_CTX_get_tlsext_status_type(f->cctx), TLSEXT_STATUSTYPE_ocsp);
    start(f, 0);
    assert_int_equal(SSL_get_tlsext_status_type(f->p.client.ssl), TLSEXT_STATUSTYPE_ocsp);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->ccb.len, sizeof(response));
}

/* No request: the server's callback is not asked and the client's is not called. */
static void no_request_no_callbacks_no_response(void **state)
{
    struct fixture *f = *state;
    start(f, 0);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->scb.calls, 0);
    assert_int_equal(f->ccb.calls, 0);
    const unsigned char *p = response;
    assert_int_equal(SSL_get_tlsext_status_ocsp_resp(f->p.client.ssl, &p), -1);
    assert_null(p);
}

/* NOACK: nothing stapled even though a response was set; the client's callback sees none. */
static void noack_staples_nothing(void **state)
{
    struct fixture *f = *state;
    f->scb.answer = SSL_TLSEXT_ERR_NOACK;
    start(f, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->scb.calls, 1);
    assert_int_equal(f->ccb.calls, 1);
    assert_int_equal(f->ccb.len, -1);
}

/* OK without a response: nothing to staple, no failure. */
static void ok_without_response_staples_nothing(void **state)
{
    struct fixture *f = *state;
    f->scb.staple = 0;
    start(f, 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(f->ccb.len, -1);
}

/*
 * After OpenSSL's reason, both roles add one more naming the status callback and its answer
 * (one reason for BoringSSL's OCSP_CB_ERROR in BoGo's error map).
 */
static void assert_refusal_named(int answer)
{
    const char *data = NULL;
    int flags = 0;
    char want[64];
    unsigned long e = ERR_peek_last_error_all(NULL, NULL, NULL, &data, &flags);
    assert_int_equal(ERR_GET_REASON(e), 925 /* QTLS_R_OCSP_CB_ERROR */);
    snprintf(want, sizeof(want), "the status callback returned %d", answer);
    assert_string_equal(data, want);
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    assert_non_null(strstr(text, ":ocsp cb error"));
}

static void server_callback_failure_is_internal_error(void **state)
{
    struct fixture *f = *state;
    f->scb.answer = SSL_TLSEXT_ERR_ALERT_FATAL;
    start(f, 1);
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.server.alert, SSL_AD_INTERNAL_ERROR);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_CLIENTHELLO_TLSEXT);
    assert_refusal_named(SSL_TLSEXT_ERR_ALERT_FATAL);
}

/* The client's callback refusing the response ends the handshake (RFC 6066 §8 alert). */
static void client_callback_refusal_is_bad_certificate_status_response(void **state)
{
    struct fixture *f = *state;
    f->ccb.answer = 0;
    start(f, 1);
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.client.alert, SSL_AD_BAD_CERTIFICATE_STATUS_RESPONSE);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_INVALID_STATUS_RESPONSE);
    assert_refusal_named(0);
    assert_false(SSL_is_init_finished(f->p.client.ssl));
}

static void client_callback_error_is_internal_error(void **state)
{
    struct fixture *f = *state;
    f->ccb.answer = -1;
    start(f, 1);
    assert_false(mock_handshake(&f->p, 0));
    assert_int_equal(f->p.client.alert, SSL_AD_INTERNAL_ERROR);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_OCSP_CALLBACK_FAILURE);
    assert_refusal_named(-1);
}

/* A resumed handshake has no Certificate: no status is asked for or judged. */
static void resumption_sends_no_status(void **state)
{
    struct fixture *f = *state;
    start(f, 1);
    assert_true(mock_handshake(&f->p, 0));
    SSL_SESSION *sess = SSL_get1_session(f->p.client.ssl);
    assert_non_null(sess);
    mock_pair_free(&f->p);
    memset(&f->p, 0, sizeof(f->p));
    start(f, 1);
    assert_int_equal(SSL_set_session(f->p.client.ssl, sess), 1);
    SSL_SESSION_free(sess);
    assert_true(mock_handshake(&f->p, 0));
    assert_true(SSL_session_reused(f->p.client.ssl));
    assert_int_equal(f->scb.calls, 1);
    assert_int_equal(f->ccb.calls, 1);
    assert_int_equal(SSL_get_tlsext_status_ocsp_resp(f->p.client.ssl, &(const unsigned char *){0}),
                     -1);
}

/* Only "nothing" and OCSP exist; another type is refused by name, not silently unsent. */
static void unknown_status_type_is_refused(void **state)
{
    struct fixture *f = *state;
    start(f, 0);
    assert_int_equal(SSL_set_tlsext_status_type(f->p.client.ssl, 2), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_UNSUPPORTED_STATUS_TYPE);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_set_tlsext_status_type(f->cctx, 7), 0);
    assert_int_equal(SSL_get_tlsext_status_type(f->p.client.ssl), -1);
    assert_int_equal(SSL_set_tlsext_status_type(f->p.client.ssl, -1), 1);
}

/* The response setter takes ownership even when it refuses (as OpenSSL); lengths are checked. */
static void response_setter_checks_and_owns(void **state)
{
    struct fixture *f = *state;
    start(f, 0);
    SSL *s = f->p.server.ssl;
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, NULL, 5), 0);
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, OPENSSL_malloc(4), 0), 0);
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, OPENSSL_malloc(4), -1), 0);
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, OPENSSL_malloc(4), 0x1000000), 0);
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, OPENSSL_memdup(response, 3), 3), 1);
    /* Replacing frees the previous one (LeakSanitizer checks). */
    assert_int_equal(SSL_set_tlsext_status_ocsp_resp(s, OPENSSL_memdup(response, 2), 2), 1);
    const unsigned char *p;
    assert_int_equal(SSL_get_tlsext_status_ocsp_resp(s, &p), 2);
    assert_memory_equal(p, response, 2);
}

static void callbacks_and_args_read_back(void **state)
{
    struct fixture *f = *state;
    int (*cb)(SSL *, void *) = NULL;
    void *arg = NULL;
    assert_int_equal(SSL_CTX_get_tlsext_status_cb(f->sctx, &cb), 1);
    assert_ptr_equal(cb, server_status_cb);
    assert_int_equal(SSL_CTX_get_tlsext_status_arg(f->sctx, &arg), 1);
    assert_ptr_equal(arg, &f->scb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(response_is_stapled_and_seen_by_the_client),
        T(context_status_type_is_inherited),
        T(no_request_no_callbacks_no_response),
        T(noack_staples_nothing),
        T(ok_without_response_staples_nothing),
        T(server_callback_failure_is_internal_error),
        T(client_callback_refusal_is_bad_certificate_status_response),
        T(client_callback_error_is_internal_error),
        T(resumption_sends_no_status),
        T(unknown_status_type_is_refused),
        T(response_setter_checks_and_owns),
        T(callbacks_and_args_read_back),
#undef T
    };
    return cmocka_run_group_tests_name("ocsp", tests, NULL, NULL);
}
