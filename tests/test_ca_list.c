/*
 * CA name lists: the client CA list a server sends in CertificateRequest
 * (RFC 8446 §4.2.4, certificate_authorities), the 1.1.1 general CA list a
 * client sends in ClientHello, what each side sees of the peer's list, and
 * the list helpers (SSL_load_client_CA_file, SSL_dup_CA_list, SSL_add_client_CA).
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

/* Whether a name is the subject of NAME.pem. */
static int is_subject_of(const X509_NAME *n, const char *name)
{
    X509 *x = load_cert(name);
    int same = n != NULL && X509_NAME_cmp(n, X509_get_subject_name(x)) == 0;
    X509_free(x);
    return same;
}

static STACK_OF(X509_NAME) *names_of(const char *a, const char *b)
{
    STACK_OF(X509_NAME) *sk = sk_X509_NAME_new_null();
    const char *files[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (files[i] == NULL)
            continue;
        X509 *x = load_cert(files[i]);
        assert_true(sk_X509_NAME_push(sk, X509_NAME_dup(X509_get_subject_name(x))));
        X509_free(x);
    }
    return sk;
}

/* ------------------------------------------------------------------ */
/* The API                                                             */
/* ------------------------------------------------------------------ */

static void context_and_connection_lists(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_null(SSL_CTX_get_client_CA_list(ctx));
    STACK_OF(X509_NAME) *sk = names_of("ca.pem", NULL);
    SSL_CTX_set_client_CA_list(ctx, sk); /* takes sk */
    assert_ptr_equal(SSL_CTX_get_client_CA_list(ctx), sk);
    X509 *other = load_cert("other-ca.pem");
    assert_int_equal(SSL_CTX_add_client_CA(ctx, other), 1);
    assert_int_equal(sk_X509_NAME_num(SSL_CTX_get_client_CA_list(ctx)), 2);
    assert_int_equal(SSL_CTX_add_client_CA(ctx, NULL), 0);
    ERR_clear_error();

    /* A server connection reads its context's list until it has its own. */
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(SSL_get_client_CA_list(s), sk);
    assert_int_equal(SSL_add_client_CA(s, other), 1);
    assert_int_equal(sk_X509_NAME_num(SSL_get_client_CA_list(s)), 1);
    assert_true(is_subject_of(sk_X509_NAME_value(SSL_get_client_CA_list(s), 0), "other-ca.pem"));
    SSL_set_client_CA_list(s, NULL);
    assert_ptr_equal(SSL_get_client_CA_list(s), sk);

    /* The 1.1.1 general list, the same way. */
    assert_null(SSL_CTX_get0_CA_list(ctx));
    assert_int_equal(SSL_CTX_add1_to_CA_list(ctx, other), 1);
    assert_int_equal(sk_X509_NAME_num(SSL_get0_CA_list(s)), 1);
    SSL_set0_CA_list(s, names_of("ca.pem", "inter.pem"));
    assert_int_equal(sk_X509_NAME_num(SSL_get0_CA_list(s)), 2);
    assert_int_equal(SSL_add1_to_CA_list(s, other), 1);
    assert_int_equal(sk_X509_NAME_num(SSL_get0_CA_list(s)), 3);
    assert_int_equal(sk_X509_NAME_num(SSL_CTX_get0_CA_list(ctx)), 1);
    SSL_CTX_set0_CA_list(ctx, NULL);
    assert_null(SSL_CTX_get0_CA_list(ctx));
    assert_null(SSL_get0_peer_CA_list(s));
    X509_free(other);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static void dup_ca_list_copies_every_name(void **state)
{
    STACK_OF(X509_NAME) *sk = names_of("ca.pem", "other-ca.pem");
    STACK_OF(X509_NAME) *copy = SSL_dup_CA_list(sk);
    assert_non_null(copy);
    assert_int_equal(sk_X509_NAME_num(copy), 2);
    for (int i = 0; i < 2; i++) {
        assert_ptr_not_equal(sk_X509_NAME_value(copy, i), sk_X509_NAME_value(sk, i));
        assert_int_equal(X509_NAME_cmp(sk_X509_NAME_value(copy, i), sk_X509_NAME_value(sk, i)), 0);
    }
    sk_X509_NAME_pop_free(sk, X509_NAME_free);
    sk_X509_NAME_pop_free(copy, X509_NAME_free);
    STACK_OF(X509_NAME) *empty = SSL_dup_CA_list(NULL);
    assert_non_null(empty);
    assert_int_equal(sk_X509_NAME_num(empty), 0);
    sk_X509_NAME_free(empty);
}

/* Concatenates PEM files into a temporary file. */
static void concat(char *path, const char *a, const char *b, const char *c)
{
    strcpy(path, "/tmp/qtls-ca-list-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    FILE *out = fopen(path, "w");
    const char *files[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        FILE *in = fopen(mock_cert_path(files[i]), "r");
        char buf[4096];
        size_t n;
        assert_non_null(in);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
            assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
    }
    fclose(out);
}

static void load_client_ca_file_reads_each_subject_once(void **state)
{
    char path[64];
    concat(path, "ca.pem", "other-ca.pem", "ca.pem");
    STACK_OF(X509_NAME) *sk = SSL_load_client_CA_file(path);
    assert_non_null(sk);
    assert_int_equal(ERR_peek_error(), 0); /* the end-of-file PEM error is not left behind */
    assert_int_equal(sk_X509_NAME_num(sk), 2);
    assert_true(is_subject_of(sk_X509_NAME_value(sk, 0), "ca.pem"));
    assert_true(is_subject_of(sk_X509_NAME_value(sk, 1), "other-ca.pem"));
    sk_X509_NAME_pop_free(sk, X509_NAME_free);
    unlink(path);

    /* Adding to a list skips the names it already has. */
    sk = names_of("other-ca.pem", NULL);
    assert_int_equal(SSL_add_file_cert_subjects_to_stack(sk, mock_cert_path("ca.pem")), 1);
    assert_int_equal(SSL_add_file_cert_subjects_to_stack(sk, mock_cert_path("other-ca.pem")), 1);
    assert_int_equal(sk_X509_NAME_num(sk), 2);
    assert_true(is_subject_of(sk_X509_NAME_value(sk, 1), "ca.pem"));
    assert_int_equal(SSL_add_file_cert_subjects_to_stack(sk, "/nonexistent/ca.pem"), 0);
    ERR_clear_error();
    sk_X509_NAME_pop_free(sk, X509_NAME_free);
    sk = SSL_load_client_CA_file_ex(mock_cert_path("ca.pem"), NULL, NULL);
    assert_int_equal(sk_X509_NAME_num(sk), 1);
    sk_X509_NAME_pop_free(sk, X509_NAME_free);
    assert_null(SSL_load_client_CA_file_ex(mock_cert_path("ca.pem"), NULL, "provider=x"));
    ERR_clear_error();

    assert_null(SSL_load_client_CA_file("/nonexistent/ca.pem"));
    assert_int_not_equal(ERR_peek_error(), 0);
    ERR_clear_error();
    /* A key file holds no certificate. */
    assert_null(SSL_load_client_CA_file(mock_cert_path("ca.key")));
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), ERR_R_PEM_LIB);
    ERR_clear_error();
}

/* ------------------------------------------------------------------ */
/* On the wire                                                         */
/* ------------------------------------------------------------------ */

struct seen {
    int calls;
    int client_list; /* names in SSL_get_client_CA_list inside the client's cert_cb */
    int peer_list;   /* names in SSL_get0_peer_CA_list there */
    int first_is_ca;
};

static int client_cert_cb(SSL *s, void *arg)
{
    struct seen *seen = arg;
    const STACK_OF(X509_NAME) *l = SSL_get_client_CA_list(s);
    seen->calls++;
    seen->client_list = l == NULL ? -1 : sk_X509_NAME_num(l);
    seen->peer_list = SSL_get0_peer_CA_list(s) == NULL ? -1
                                                       : sk_X509_NAME_num(SSL_get0_peer_CA_list(s));
    seen->first_is_ca = l != NULL && is_subject_of(sk_X509_NAME_value(l, 0), "ca.pem");
    return 1;
}

struct wire {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
    struct seen seen;
};

static void wire_setup(struct wire *w)
{
    memset(w, 0, sizeof(*w));
    w->cctx = mock_client_ctx();
    w->sctx = mock_server_ctx("ecdsa256");
    assert_non_null(w->cctx);
    assert_non_null(w->sctx);
    SSL_CTX_set_verify(w->sctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_cb(w->cctx, client_cert_cb, &w->seen);
}

static void wire_run(struct wire *w)
{
    assert_int_equal(mock_pair_init(&w->p, w->cctx, w->sctx), 1);
    assert_int_equal(mock_handshake(&w->p, 0), 1);
}

static void wire_free(struct wire *w)
{
    mock_pair_free(&w->p);
    SSL_CTX_free(w->cctx);
    SSL_CTX_free(w->sctx);
}

static void server_sends_its_client_ca_list(void **state)
{
    struct wire w;
    wire_setup(&w);
    SSL_CTX_set_client_CA_list(w.sctx, names_of("ca.pem", "other-ca.pem"));
    wire_run(&w);
    assert_int_equal(w.seen.calls, 1);
    assert_int_equal(w.seen.client_list, 2);
    assert_int_equal(w.seen.peer_list, 2);
    assert_true(w.seen.first_is_ca);
    /* Still there after the handshake, on the client only. */
    assert_int_equal(sk_X509_NAME_num(SSL_get_client_CA_list(w.p.client.ssl)), 2);
    assert_null(SSL_get0_peer_CA_list(w.p.server.ssl));
    wire_free(&w);
}

static void server_without_list_sends_none(void **state)
{
    struct wire w;
    wire_setup(&w);
    wire_run(&w);
    assert_int_equal(w.seen.calls, 1);
    assert_int_equal(w.seen.client_list, -1);
    assert_null(SSL_get_client_CA_list(w.p.client.ssl));
    wire_free(&w);
}

/* An empty client CA list gives way to the general list, as in OpenSSL. */
static void server_falls_back_to_the_general_list(void **state)
{
    struct wire w;
    wire_setup(&w);
    SSL_CTX_set_client_CA_list(w.sctx, sk_X509_NAME_new_null());
    SSL_CTX_set0_CA_list(w.sctx, names_of("ca.pem", NULL));
    wire_run(&w);
    assert_int_equal(w.seen.client_list, 1);
    assert_true(w.seen.first_is_ca);
    wire_free(&w);
}

/* The client's general list travels in ClientHello; the server reads it as the peer's list. */
static void client_sends_its_ca_list_in_client_hello(void **state)
{
    struct wire w;
    wire_setup(&w);
    SSL_CTX_set0_CA_list(w.cctx, names_of("other-ca.pem", "ca.pem"));
    wire_run(&w);
    const STACK_OF(X509_NAME) *got = SSL_get0_peer_CA_list(w.p.server.ssl);
    assert_int_equal(sk_X509_NAME_num(got), 2);
    assert_true(is_subject_of(sk_X509_NAME_value(got, 0), "other-ca.pem"));
    assert_true(is_subject_of(sk_X509_NAME_value(got, 1), "ca.pem"));
    /* The server's own client CA list is not the peer's. */
    assert_null(SSL_get_client_CA_list(w.p.server.ssl));
    wire_free(&w);
}

/* A list set on the server connection replaces its context's for that connection. */
static void connection_list_replaces_the_context_list(void **state)
{
    struct wire w;
    wire_setup(&w);
    SSL_CTX_set_client_CA_list(w.sctx, names_of("ca.pem", "other-ca.pem"));
    assert_int_equal(mock_pair_init(&w.p, w.cctx, w.sctx), 1);
    SSL_set_client_CA_list(w.p.server.ssl, names_of("inter.pem", NULL));
    assert_int_equal(mock_handshake(&w.p, 0), 1);
    assert_int_equal(w.seen.client_list, 1);
    assert_true(
        is_subject_of(sk_X509_NAME_value(SSL_get_client_CA_list(w.p.client.ssl), 0), "inter.pem"));
    wire_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(context_and_connection_lists, clear_errors),
        cmocka_unit_test_setup(dup_ca_list_copies_every_name, clear_errors),
        cmocka_unit_test_setup(load_client_ca_file_reads_each_subject_once, clear_errors),
        cmocka_unit_test_setup(server_sends_its_client_ca_list, clear_errors),
        cmocka_unit_test_setup(server_without_list_sends_none, clear_errors),
        cmocka_unit_test_setup(server_falls_back_to_the_general_list, clear_errors),
        cmocka_unit_test_setup(client_sends_its_ca_list_in_client_hello, clear_errors),
        cmocka_unit_test_setup(connection_list_replaces_the_context_list, clear_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
