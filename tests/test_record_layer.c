/*
 * The record-layer API (compat_tcp.c): BIOs held with OpenSSL's ownership rules and never used
 * on a QUIC connection; stream I/O, early data, renegotiation, KeyUpdate and async answer as
 * documented, with one clear error in the queue and no crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "internal.h"
#include "base/base.h"
#include "mock_quic.h"

/* Live and peak heap through OPENSSL_malloc & co. (main installs these before anything
   allocates; one thread). */
static size_t live_heap, peak_heap;
#define HEAP_HDR 16
static void *count_malloc(size_t n, const char *file, int line)
{
    uint8_t *p = malloc(n + HEAP_HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &n, sizeof(n));
    live_heap += n;
    if (live_heap > peak_heap)
        peak_heap = live_heap;
    return p + HEAP_HDR;
}
static void count_free(void *q, const char *file, int line)
{
    size_t n;
    if (q == NULL)
        return;
    memcpy(&n, (uint8_t *)q - HEAP_HDR, sizeof(n));
    live_heap -= n;
    free((uint8_t *)q - HEAP_HDR);
}
static void *count_realloc(void *q, size_t n, const char *file, int line)
{
    size_t old = 0;
    if (q == NULL)
        return count_malloc(n, file, line);
    memcpy(&old, (uint8_t *)q - HEAP_HDR, sizeof(old));
    uint8_t *p = count_malloc(n, file, line);
    if (p != NULL) {
        memcpy(p, q, old < n ? old : n);
        count_free(q, file, line);
    }
    return p;
}

/* Exactly one error on the queue, from ERR_LIB_SSL, with this reason; the queue is emptied. */
static void assert_one_error(int reason)
{
    unsigned long e = ERR_get_error();
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), reason);
    assert_int_equal(ERR_get_error(), 0);
}

static SSL *plain_ssl(SSL_CTX **ctx)
{
    *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(*ctx);
    SSL *s = SSL_new(*ctx);
    assert_non_null(s);
    return s;
}

static int fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

/* SSL_set_fd: one socket BIO for both directions, BIO_NOCLOSE: SSL_free leaves the fd open. */
static void set_fd_makes_one_noclose_socket_bio(void **state)
{
    int sv[2];
    SSL_CTX *ctx;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    SSL *s = plain_ssl(&ctx);
    assert_null(SSL_get_rbio(s));
    assert_int_equal(SSL_get_fd(s), -1);
    assert_int_equal(SSL_set_fd(s, sv[0]), 1);
    assert_non_null(SSL_get_rbio(s));
    assert_ptr_equal(SSL_get_rbio(s), SSL_get_wbio(s));
    assert_int_equal(BIO_method_type(SSL_get_rbio(s)), BIO_TYPE_SOCKET);
    assert_int_equal(SSL_get_fd(s), sv[0]);
    assert_int_equal(SSL_get_rfd(s), sv[0]);
    assert_int_equal(SSL_get_wfd(s), sv[0]);
    /* a second SSL_set_fd replaces both (the old BIO is freed: LeakSanitizer checks) */
    assert_int_equal(SSL_set_fd(s, sv[1]), 1);
    assert_int_equal(SSL_get_fd(s), sv[1]);
    SSL_free(s);
    assert_true(fd_open(sv[0]));
    assert_true(fd_open(sv[1]));
    close(sv[0]);
    close(sv[1]);
    SSL_CTX_free(ctx);
}

/* SSL_set_rfd / SSL_set_wfd share the other direction's BIO when it is on the same fd. */
static void set_rfd_wfd_share_a_bio_on_the_same_fd(void **state)
{
    int sv[2];
    SSL_CTX *ctx;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    SSL *s = plain_ssl(&ctx);
    assert_int_equal(SSL_set_rfd(s, sv[0]), 1);
    assert_null(SSL_get_wbio(s));
    assert_int_equal(SSL_set_wfd(s, sv[0]), 1);
    assert_ptr_equal(SSL_get_rbio(s), SSL_get_wbio(s));
    assert_int_equal(SSL_set_wfd(s, sv[1]), 1);
    assert_ptr_not_equal(SSL_get_rbio(s), SSL_get_wbio(s));
    assert_int_equal(SSL_get_rfd(s), sv[0]);
    assert_int_equal(SSL_get_wfd(s), sv[1]);
    assert_int_equal(SSL_set_rfd(s, sv[1]), 1);
    assert_ptr_equal(SSL_get_rbio(s), SSL_get_wbio(s));
    SSL_free(s);
    assert_true(fd_open(sv[0]));
    close(sv[0]);
    close(sv[1]);
    SSL_CTX_free(ctx);
}

/*
 * SSL_set_bio(3)'s reference rules. The test keeps a reference of its own on each BIO and drops
 * it after SSL_free: a reference too many leaks (LeakSanitizer), one too few is a use after free
 * (AddressSanitizer).
 */
static void set_bio_follows_openssl_ownership(void **state)
{
    SSL_CTX *ctx;
    SSL *s = plain_ssl(&ctx);
    BIO *a = BIO_new(BIO_s_mem()), *b = BIO_new(BIO_s_mem()), *c = BIO_new(BIO_s_mem());
    assert_true(a && b && c);
    BIO_up_ref(a);
    BIO_up_ref(b);
    BIO_up_ref(c);
    SSL_set_bio(s, a, a); /* one BIO both ways: two references taken, one of them extra */
    assert_ptr_equal(SSL_get_rbio(s), a);
    assert_ptr_equal(SSL_get_wbio(s), a);
    SSL_set_bio(s, a, b); /* only the wbio changes: one reference adopted (b's) */
    assert_ptr_equal(SSL_get_wbio(s), b);
    SSL_set_bio(s, c, b); /* only the rbio changes, the two differed: c's reference adopted */
    assert_ptr_equal(SSL_get_rbio(s), c);
    assert_ptr_equal(SSL_get_wbio(s), b);
    BIO_up_ref(b); /* set0 takes a reference of the caller's */
    SSL_set0_rbio(s, b);
    assert_ptr_equal(SSL_get_rbio(s), b);
    SSL_set_bio(s, NULL, NULL);
    assert_null(SSL_get_rbio(s));
    assert_null(SSL_get_wbio(s));
    SSL_free(s);
    BIO_free(a);
    BIO_free(b);
    BIO_free(c);
    SSL_CTX_free(ctx);
}

static void ssl_free_releases_the_bios(void **state)
{
    SSL_CTX *ctx;
    SSL *s = plain_ssl(&ctx);
    SSL_set0_rbio(s, BIO_new(BIO_s_mem()));
    SSL_set0_wbio(s, BIO_new(BIO_s_mem()));
    SSL_free(s); /* LeakSanitizer checks both are gone */
    SSL_CTX_free(ctx);
}

/* Without a QUIC method, every record-layer call is TLS over TCP: one clear error each. */
static void stream_calls_without_a_transport_fail_with_one_clear_error(void **state)
{
    SSL_CTX *ctx;
    SSL *s = plain_ssl(&ctx);
    char buf[4];
    size_t n = 99;
    /* neither a QUIC method nor a BIO: nothing can carry the handshake */
    ERR_clear_error();
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), -1);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_SSL);
    assert_one_error(QTLS_R_NO_QUIC_METHOD);
    assert_int_equal(SSL_peek(s, buf, sizeof(buf)), -1);
    assert_one_error(QTLS_R_NO_QUIC_METHOD);
    assert_int_equal(SSL_write(s, "x", 1), -1);
    assert_one_error(QTLS_R_NO_QUIC_METHOD);
    assert_int_equal(SSL_read_ex(s, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 0);
    assert_one_error(QTLS_R_NO_QUIC_METHOD);
    n = 99;
    assert_int_equal(SSL_write_ex(s, "x", 1, &n), 0);
    assert_int_equal(n, 0);
    assert_one_error(QTLS_R_NO_QUIC_METHOD);
    /* no kernel TLS: OpenSSL 3.0's answer to SSL_sendfile without it */
    assert_int_equal(SSL_sendfile(s, 0, 0, 1, 0), -1);
    assert_one_error(SSL_R_UNINITIALIZED);
    /* a client reads no early data; without a session allowing it none can be written */
    n = 99;
    assert_int_equal(SSL_read_early_data(s, buf, sizeof(buf), &n), SSL_READ_EARLY_DATA_ERROR);
    assert_int_equal(n, 0);
    assert_one_error(ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED));
    assert_int_equal(SSL_write_early_data(s, "x", 1, &n), 0);
    assert_one_error(ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED));
    SSL_free(s);
    SSL_CTX_free(ctx);
}

/* A handshake over a socket without a QUIC method is TLS over TCP: the ClientHello goes out in
   a plaintext handshake record that says TLS 1.0 (RFC 8446 §5.1, as OpenSSL sends it). */
static void handshake_over_a_socket_sends_a_client_hello_record(void **state)
{
    int sv[2];
    SSL_CTX *ctx;
    uint8_t h[5];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    SSL *s = plain_ssl(&ctx);
    assert_int_equal(SSL_set_fd(s, sv[0]), 1);
    assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
    ERR_clear_error();
    assert_int_equal(SSL_connect(s), -1);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_is_quic(s), 0);
    assert_int_equal(recv(sv[1], h, sizeof(h), 0), (ssize_t)sizeof(h));
    assert_int_equal(h[0], 22); /* handshake */
    assert_int_equal(h[1] << 8 | h[2], TLS1_VERSION);
    assert_true((h[3] << 8 | h[4]) > 4);
    /* the QUIC calls refuse a TCP connection */
    assert_int_equal(SSL_provide_quic_data(s, ssl_encryption_initial, h, 1), 0);
    assert_one_error(ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED));
    SSL_free(s);
    close(sv[0]);
    close(sv[1]);
    SSL_CTX_free(ctx);
}

/* A handshake over a non-blocking socketpair, both ends driven in turn. */
static void tcp_pair(SSL *c, SSL *s, int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
    assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    assert_int_equal(SSL_set_fd(c, sv[0]), 1);
    assert_int_equal(SSL_set_fd(s, sv[1]), 1);
    SSL_set_connect_state(c);
    SSL_set_accept_state(s);
    int cdone = 0, sdone = 0;
    for (int i = 0; i < 50 && !(cdone && sdone); i++) {
        cdone = cdone || SSL_do_handshake(c) == 1;
        sdone = sdone || SSL_do_handshake(s) == 1;
    }
    assert_true(cdone && sdone);
}

/*
 * nginx's idle connection: read-ahead and SSL_MODE_RELEASE_BUFFERS, an SSL_read with nothing to
 * read. The read buffer it needed is freed again (as libssl's is), and a record's buffer is
 * one record (16.6 KB), not the 32 KB doubling gave: an idle nginx connection on qtls held 35 KB.
 */
static void idle_read_with_release_buffers_keeps_no_read_buffer(void **state)
{
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method()), *sctx = SSL_CTX_new(TLS_server_method());
    int sv[2];
    char buf[64];
    assert_int_equal(SSL_CTX_use_certificate_chain_file(sctx, mock_cert_path("ecdsa256.pem")), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(sctx, mock_cert_path("ecdsa256.key"),
                                                 SSL_FILETYPE_PEM),
                     1);
    SSL_CTX_set_mode(sctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_mode(cctx, SSL_MODE_RELEASE_BUFFERS); /* the client's records go once sent */
    SSL_CTX_set_read_ahead(sctx, 1);
    SSL *c = SSL_new(cctx), *s = SSL_new(sctx);
    tcp_pair(c, s, sv);
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), -1); /* what is left of the handshake */
    assert_int_equal(SSL_write(c, "x", 1), 1);
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), 1); /* a record read: its buffer released */
    size_t idle = live_heap;
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), -1);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_READ);
    assert_int_equal(live_heap, idle);
    /* one record arrives: read through a buffer of one record (not 32 KB), then freed again */
    static char big[16384];
    assert_int_equal(SSL_write(c, big, sizeof(big)), (int)sizeof(big));
    size_t before = live_heap, got = 0;
    peak_heap = live_heap;
    while (got < sizeof(big)) {
        int n = SSL_read(s, big, sizeof(big));
        assert_true(n > 0);
        got += (size_t)n;
    }
    if (peak_heap - before > 17 * 1024)
        fail_msg("reading one record took %zu bytes of heap", peak_heap - before);
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), -1);
    assert_int_equal(SSL_get_error(s, -1), SSL_ERROR_WANT_READ);
    assert_true(live_heap <= before);
    SSL_free(c);
    SSL_free(s);
    close(sv[0]);
    close(sv[1]);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    ERR_clear_error();
}

/* nginx calls SSL_set_fd on QUIC connections: the handshake runs and the socket stays untouched. */
static void quic_connection_never_uses_its_fd(void **state)
{
    int sv[2], sv2[2];
    struct mock_pair p;
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(SSL_set_fd(p.client.ssl, sv[0]), 1);
    assert_int_equal(SSL_set_fd(p.server.ssl, sv2[0]), 1);
    assert_true(mock_handshake(&p, 0));
    char c;
    assert_int_equal(recv(sv[1], &c, 1, MSG_DONTWAIT), -1);
    assert_int_equal(recv(sv2[1], &c, 1, MSG_DONTWAIT), -1);
    /* stream I/O on a QUIC connection is a misuse, reported as such */
    ERR_clear_error();
    assert_int_equal(SSL_read(p.client.ssl, &c, 1), -1);
    assert_one_error(ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED));
    assert_int_equal(SSL_pending(p.client.ssl), 0);
    assert_int_equal(SSL_has_pending(p.client.ssl), 0);
    mock_pair_free(&p);
    for (int i = 0; i < 2; i++) {
        assert_true(fd_open(sv[i]) && fd_open(sv2[i]));
        close(sv[i]);
        close(sv2[i]);
    }
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* TLS 1.3 has no renegotiation; KeyUpdate waits for the handshake; QUIC forbids KeyUpdate
   messages (RFC 9001 §6). */
static void renegotiation_and_key_update_are_refused(void **state)
{
    SSL_CTX *ctx;
    SSL *s = plain_ssl(&ctx);
    ERR_clear_error();
    assert_int_equal(SSL_renegotiate(s), 0);
    assert_one_error(SSL_R_WRONG_SSL_VERSION);
    assert_int_equal(SSL_renegotiate_abbreviated(s), 0);
    assert_one_error(SSL_R_WRONG_SSL_VERSION);
    assert_int_equal(SSL_renegotiate_pending(s), 0);
    assert_int_equal(SSL_key_update(s, SSL_KEY_UPDATE_REQUESTED), 0);
    assert_one_error(SSL_R_STILL_IN_INIT);
    assert_int_equal(SSL_key_update(s, 7), 0);
    assert_one_error(SSL_R_INVALID_KEY_UPDATE_TYPE);
    assert_int_equal(SSL_get_key_update_type(s), SSL_KEY_UPDATE_NONE);
    SSL_free(s);
    SSL_CTX_free(ctx);

    struct mock_pair p;
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_true(mock_handshake(&p, 0));
    assert_int_equal(SSL_key_update(p.client.ssl, SSL_KEY_UPDATE_NOT_REQUESTED), 0);
    assert_one_error(QTLS_R_KEY_UPDATE_NOT_ALLOWED);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static int async_cb(SSL *s, void *arg) { return 1; }

/* The answers OpenSSL gives a connection that never started an async job. */
static void async_answers_no_job(void **state)
{
    SSL_CTX *ctx;
    assert_non_null(ctx = SSL_CTX_new(TLS_server_method()));
    assert_int_equal(SSL_CTX_set_async_callback(ctx, async_cb), 1);
    assert_int_equal(SSL_CTX_set_async_callback_arg(ctx, ctx), 1);
    SSL *s = SSL_new(ctx);
    assert_ptr_equal(cold_peek(s)->async_cb, async_cb); /* inherited, as OpenSSL */
    assert_ptr_equal(cold_peek(s)->async_cb_arg, ctx);
    assert_int_equal(SSL_set_async_callback(s, NULL), 1);
    assert_int_equal(SSL_set_async_callback_arg(s, NULL), 1);
    assert_int_equal(SSL_waiting_for_async(s), 0);
    size_t n = 5, m = 5;
    assert_int_equal(SSL_get_all_async_fds(s, NULL, &n), 1);
    assert_int_equal(n, 0);
    n = 5;
    assert_int_equal(SSL_get_changed_async_fds(s, NULL, &n, NULL, &m), 1);
    assert_int_equal(n + m, 0);
    int status = -7;
    assert_int_equal(SSL_get_async_status(s, &status), 0);
    assert_int_equal(status, -7);
    assert_int_equal(ERR_peek_error(), 0);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_fd_makes_one_noclose_socket_bio),
        cmocka_unit_test(set_rfd_wfd_share_a_bio_on_the_same_fd),
        cmocka_unit_test(set_bio_follows_openssl_ownership),
        cmocka_unit_test(ssl_free_releases_the_bios),
        cmocka_unit_test(stream_calls_without_a_transport_fail_with_one_clear_error),
        cmocka_unit_test(handshake_over_a_socket_sends_a_client_hello_record),
        cmocka_unit_test(quic_connection_never_uses_its_fd),
        cmocka_unit_test(renegotiation_and_key_update_are_refused),
        cmocka_unit_test(async_answers_no_job),
        cmocka_unit_test(idle_read_with_release_buffers_keeps_no_read_buffer),
    };
    /* before anything allocates: the idle-buffer test counts the heap */
    if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free))
        return 1;
    return cmocka_run_group_tests_name("record_layer", tests, NULL, NULL);
}
