/*
 * TLS 1.3 over TCP, non-blocking, driven the way three real consumers drive libssl, through the
 * public OpenSSL 3.0 API only. The file builds and passes as it is against the system's libssl
 * (cc -std=c11 -D_GNU_SOURCE tests/test_tcp_nonblocking.c -lssl -lcrypto -lcmocka), so each
 * assertion is OpenSSL 3.0's observed behaviour: the spec qtls's record layer must meet.
 *
 * Both ends of each connection live in the test and are pumped in turn; a pump that moves no
 * byte for MAX_IDLE rounds fails the test. The three styles, each from the consumer's source:
 *
 *   nginx   (src/event/ngx_event_openssl.c) as server: a non-blocking socketpair, SSL_set_fd,
 *           read_ahead on, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN (nginx sets neither
 *           PARTIAL_WRITE nor ACCEPT_MOVING_WRITE_BUFFER: it retries SSL_write from its one 16 KB
 *           buffer, same address, maybe more bytes); SSL_read looped until WANT_READ;
 *           ngx_ssl_shutdown's quiet / no-wait / bidirectional dance; SSL_sendfile only when
 *           BIO_get_ktls_send says 1.
 *   HAProxy (src/ssl_sock.c ha_ssl_read/ha_ssl_write) both ways: its own BIO_METHOD (HAProxy's
 *           type 0x666) over application buffers, retry flags only when nothing moved, a ctrl
 *           answering only DUP and FLUSH; PARTIAL_WRITE | ACCEPT_MOVING_WRITE_BUFFER |
 *           RELEASE_BUFFERS; 1- and 7-byte steps so that every WANT_READ / WANT_WRITE path of the
 *           handshake, SSL_read and SSL_write is taken, and counted.
 *   curl    (lib/vtls/openssl.c ossl_bio_cf_*) as client: a BIO method of type BIO_TYPE_MEM that
 *           is no memory BIO, retry flags only on EAGAIN, EOF as 0 with BIO_CTRL_EOF then 1;
 *           read_ahead, ACCEPT_MOVING_WRITE_BUFFER, post-handshake auth, a client session cache
 *           with a new-session callback, and the msg callback whose records curl -v prints.
 *
 * Beside them: BIO pairs and BIO_s_mem pairs, the SSL_write retry rules, SSL_peek, 1-byte reads
 * with SSL_pending, unexpected EOF, SSL_ERROR_SYSCALL, tickets and KeyUpdate inside SSL_read.
 * Certificates come from $QTLS_CERTS (scripts/gen-certs.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define MAX_IDLE 64         /* rounds without a byte moved before a pump fails */
#define MAX_ROUNDS 2000000  /* and an absolute bound */
#define PATTERN_MAX (256 * 1024)
#define RING_MAX (32 * 1024)
#define MSG_LOG_MAX 1024
#define TLS_MAX_PLAIN 16384 /* the largest TLS 1.3 record plaintext */
#define CLOSE_NOTIFY_RECORD 24 /* header 5 + alert 2 + inner type 1 + AEAD tag 16 */

/* ------------------------------------------------------------------ */
/* Fixture                                                             */
/* ------------------------------------------------------------------ */

/* One direction of an application-level transport (HAProxy's and curl's BIOs). */
struct ring {
    unsigned char buf[RING_MAX];
    size_t len;  /* bytes held */
    size_t cap;  /* at most this many held */
    int shut;    /* the writer closed: empty then reads as EOF */
};

/* What a custom BIO reads from and writes to. */
struct end {
    struct ring *in, *out;
    size_t step;     /* at most this many bytes per BIO call */
    int peer_closed; /* curl: a read returned 0 */
};

struct msg_rec {
    int dir, version, type;
    size_t len;
    unsigned char head[5];
};

struct msg_log {
    struct msg_rec r[MSG_LOG_MAX];
    int n;
};

struct fx {
    SSL_CTX *cctx, *sctx;
    SSL *c, *s;
    int fd[2];                          /* socketpair: client, server */
    BIO_METHOD *meth;                   /* HAProxy's or curl's */
    struct ring c2s, s2c;
    struct end c_end, s_end;
    BIO *c_in, *c_out, *s_in, *s_out;   /* BIO_s_mem pairs, owned by the SSLs */
    size_t carry_step;                  /* BIO_s_mem pairs: bytes moved per round */
    struct msg_log log;
};

static unsigned char pattern_a[PATTERN_MAX], pattern_b[PATTERN_MAX];
static int new_sessions;

static void make_pattern(void)
{
    for (size_t i = 0; i < PATTERN_MAX; i++)
        pattern_a[i] = (unsigned char)(i * 131u + (i >> 9) * 7u + 1u);
    memcpy(pattern_b, pattern_a, PATTERN_MAX);
}

static const char *cert(const char *name)
{
    static char path[4][PATH_MAX];
    static int next;
    const char *dir = getenv("QTLS_CERTS");
    if (dir == NULL || *dir == '\0')
        fail_msg("QTLS_CERTS is not set (scripts/gen-certs.sh build/certs)");
    char *p = path[next++ % 4];
    snprintf(p, PATH_MAX, "%s/%s", dir, name);
    return p;
}

static int fx_setup(void **state)
{
    cert("ca.pem"); /* fails here, before anything is allocated, without QTLS_CERTS */
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->fd[0] = f->fd[1] = -1;
    new_sessions = 0;

    f->sctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(f->sctx);
    assert_int_equal(SSL_CTX_set_min_proto_version(f->sctx, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(f->sctx, cert("ecdsa256.pem")), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->sctx, cert("ecdsa256.key"),
                                                 SSL_FILETYPE_PEM), 1);

    f->cctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(f->cctx);
    assert_int_equal(SSL_CTX_set_min_proto_version(f->cctx, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_CTX_load_verify_locations(f->cctx, cert("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(f->cctx, SSL_VERIFY_PEER, NULL);
    ERR_clear_error();
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    SSL_free(f->c);
    SSL_free(f->s);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    BIO_meth_free(f->meth);
    for (int i = 0; i < 2; i++)
        if (f->fd[i] >= 0)
            close(f->fd[i]);
    free(f);
    ERR_clear_error();
    return 0;
}

/* Client and server SSLs from the contexts as the test left them; the client checks the name. */
static void new_ssls(struct fx *f)
{
    f->c = SSL_new(f->cctx);
    f->s = SSL_new(f->sctx);
    assert_non_null(f->c);
    assert_non_null(f->s);
    SSL_set_connect_state(f->c);
    SSL_set_accept_state(f->s);
    assert_int_equal(SSL_set1_host(f->c, "localhost"), 1);
    assert_int_equal(SSL_set_tlsext_host_name(f->c, "localhost"), 1);
}

/* ------------------------------------------------------------------ */
/* Outcomes and the loop guard                                         */
/* ------------------------------------------------------------------ */

struct wants {
    int rd, wr;
};

/* A call that did not complete: -1 and WANT_READ or WANT_WRITE, counted; anything else fails. */
static int want(SSL *ssl, int r, struct wants *w, const char *what)
{
    int e = SSL_get_error(ssl, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        ERR_print_errors_fp(stderr);
        fail_msg("%s returned %d, SSL_get_error %d", what, r, e);
    }
    assert_int_equal(r, -1);
    if (w != NULL)
        *(e == SSL_ERROR_WANT_READ ? &w->rd : &w->wr) += 1;
    return e;
}

/* Exactly one error in the queue, from libssl, with this reason; the queue is left empty. */
static void assert_one_ssl_error(int reason)
{
    unsigned long e = ERR_get_error();
    if (ERR_GET_REASON(e) != reason)
        fprintf(stderr, "expected reason %d, got %s\n", reason, ERR_error_string(e, NULL));
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), reason);
    assert_int_equal(ERR_get_error(), 0);
}

/* Bytes through every BIO of both ends, plus whatever the caller counts. */
static uint64_t traffic(const struct fx *f)
{
    BIO *b[4] = {SSL_get_rbio(f->c), SSL_get_wbio(f->c), SSL_get_rbio(f->s), SSL_get_wbio(f->s)};
    uint64_t n = 0;
    for (int i = 0; i < 4; i++)
        if (b[i] != NULL && (i % 2 == 0 || b[i] != b[i - 1]))
            n += BIO_number_read(b[i]) + BIO_number_written(b[i]);
    return n;
}

struct guard {
    uint64_t last;
    long rounds, idle;
};

static void guard_round(struct guard *g, uint64_t progress)
{
    if (++g->rounds > MAX_ROUNDS)
        fail_msg("pump: more than %d rounds", MAX_ROUNDS);
    if (progress != g->last) {
        g->last = progress;
        g->idle = 0;
    } else if (++g->idle > MAX_IDLE) {
        fail_msg("pump: no progress for %d rounds (round %ld)", MAX_IDLE, g->rounds);
    }
}

/* BIO_s_mem pairs need the test to carry bytes; every other transport delivers by itself. */
static void carry_one(BIO *from, BIO *to, size_t step)
{
    unsigned char buf[4096];
    int n = BIO_read(from, buf, (int)(step < sizeof(buf) ? step : sizeof(buf)));
    if (n > 0)
        assert_int_equal(BIO_write(to, buf, n), n);
}

static void carry(struct fx *f)
{
    if (f->c_out == NULL)
        return;
    carry_one(f->c_out, f->s_in, f->carry_step);
    carry_one(f->s_out, f->c_in, f->carry_step);
}

/* ------------------------------------------------------------------ */
/* Pumps                                                               */
/* ------------------------------------------------------------------ */

struct hs_wants {
    struct wants c, s;
};

/* One SSL_do_handshake; 1 when done. */
static int handshake_step(SSL *ssl, struct wants *w)
{
    ERR_clear_error();
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    want(ssl, r, w, "SSL_do_handshake");
    return 0;
}

/*
 * One SSL_read on a side that expects no application data but must take what its peer sends
 * (the server's tickets after the client's handshake, a post-handshake message); its WANT_*
 * outcome is counted in w unless NULL.
 */
static void read_nothing(SSL *ssl, struct wants *w)
{
    unsigned char buf[64];
    ERR_clear_error();
    int r = SSL_read(ssl, buf, sizeof(buf));
    if (r > 0)
        fail_msg("unexpected application data");
    want(ssl, r, w, "SSL_read");
}

static void handshake(struct fx *f, struct hs_wants *w)
{
    struct hs_wants local = {{0, 0}, {0, 0}};
    struct guard g = {0, 0, 0};
    int cdone = 0, sdone = 0;
    if (w == NULL)
        w = &local;
    while (!cdone || !sdone) {
        if (!cdone)
            cdone = handshake_step(f->c, &w->c);
        else
            read_nothing(f->c, NULL);
        if (!sdone)
            sdone = handshake_step(f->s, &w->s);
        else
            read_nothing(f->s, NULL);
        carry(f);
        guard_round(&g, traffic(f) + (uint64_t)cdone + (uint64_t)sdone);
    }
    assert_int_equal(SSL_version(f->c), TLS1_3_VERSION);
    assert_int_equal(SSL_version(f->s), TLS1_3_VERSION);
    assert_int_equal(SSL_get_verify_result(f->c), X509_V_OK);
}

/* A stream of pattern bytes from one end to the other, and what each side saw on the way. */
struct xfer {
    size_t len;        /* bytes to send */
    size_t chunk;      /* the reader's buffer */
    int moving;        /* after WANT_WRITE, retry from the other copy of the bytes */
    size_t sent, got;
    int use_b;         /* writing from pattern_b */
    struct wants wr, rd;
    int writes;        /* SSL_write calls that returned > 0 */
    int first_write;   /* the first of them */
    int max_write;     /* the largest of them */
    int moved_retries; /* retries made from the other address */
};

/* One SSL_write of what is left; from the other copy after a WANT_WRITE when x->moving. */
static void xfer_write(SSL *from, struct xfer *x)
{
    const unsigned char *src = x->use_b ? pattern_b : pattern_a;
    ERR_clear_error();
    int r = SSL_write(from, src + x->sent, (int)(x->len - x->sent));
    if (r > 0) {
        assert_true((size_t)r <= x->len - x->sent);
        x->sent += (size_t)r;
        if (x->writes++ == 0)
            x->first_write = r;
        if (r > x->max_write)
            x->max_write = r;
        return;
    }
    want(from, r, &x->wr, "SSL_write");
    if (x->moving) {
        x->use_b = !x->use_b;
        x->moved_retries++;
    }
}

/* Reads until WANT_READ, as nginx's ngx_ssl_recv does, checking every byte. */
static void xfer_read(SSL *to, struct xfer *x)
{
    unsigned char buf[4096];
    assert_true(x->chunk <= sizeof(buf));
    for (;;) {
        ERR_clear_error();
        int r = SSL_read(to, buf, (int)x->chunk);
        if (r <= 0) {
            want(to, r, &x->rd, "SSL_read");
            return;
        }
        assert_true(x->got + (size_t)r <= x->len);
        assert_memory_equal(buf, pattern_a + x->got, (size_t)r);
        x->got += (size_t)r;
    }
}

/*
 * Writes and reads in turn until every byte arrived (from where x left off); the writer also
 * reads, as an event loop does, for what the reader may send back (a post-handshake answer).
 */
static void transfer(struct fx *f, SSL *from, SSL *to, struct xfer *x)
{
    struct guard g = {0, 0, 0};
    assert_true(x->len <= PATTERN_MAX);
    while (x->got < x->len) {
        if (x->sent < x->len)
            xfer_write(from, x);
        read_nothing(from, NULL);
        carry(f);
        xfer_read(to, x);
        guard_round(&g, traffic(f) + x->sent + x->got);
    }
    assert_int_equal(x->sent, x->len);
}

/* ------------------------------------------------------------------ */
/* Style 1: nginx, non-blocking sockets and SSL_set_fd                  */
/* ------------------------------------------------------------------ */

static void nonblocking_socketpair(int fd[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
    for (int i = 0; i < 2; i++)
        assert_int_not_equal(fcntl(fd[i], F_SETFL, fcntl(fd[i], F_GETFL) | O_NONBLOCK), -1);
}

/* ngx_ssl_create's settings, on whichever side nginx plays. */
static void nginx_ctx(SSL_CTX *ctx)
{
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    SSL_CTX_set_read_ahead(ctx, 1);
}

/* A non-blocking socketpair under SSL_set_fd on both ends, as the contexts are. */
static void socket_attach(struct fx *f)
{
    new_ssls(f);
    nonblocking_socketpair(f->fd);
    assert_int_equal(SSL_set_fd(f->c, f->fd[0]), 1);
    assert_int_equal(SSL_set_fd(f->s, f->fd[1]), 1);
}

/* The same with nginx as the server. */
static void nginx_attach(struct fx *f)
{
    nginx_ctx(f->sctx);
    socket_attach(f);
}

/* ngx_ssl_shutdown: the flags nginx computes, then SSL_shutdown at most twice. */
struct nginx_close {
    int error;           /* c->timedout || c->error || c->buffered */
    int no_wait;         /* c->ssl->no_wait_shutdown */
    int no_send;         /* c->ssl->no_send_shutdown */
};

static int nginx_shutdown(SSL *ssl, struct nginx_close how, int *sslerr)
{
    int mode;
    *sslerr = SSL_ERROR_NONE;
    if (SSL_in_init(ssl))
        return 1; /* nginx never calls SSL_shutdown during a handshake */
    if (how.error) {
        mode = SSL_RECEIVED_SHUTDOWN | SSL_SENT_SHUTDOWN;
        SSL_set_quiet_shutdown(ssl, 1);
    } else {
        mode = SSL_get_shutdown(ssl);
        if (how.no_wait)
            mode |= SSL_RECEIVED_SHUTDOWN;
        if (how.no_send)
            mode |= SSL_SENT_SHUTDOWN;
        if (how.no_wait && how.no_send)
            SSL_set_quiet_shutdown(ssl, 1);
    }
    SSL_set_shutdown(ssl, mode);
    ERR_clear_error();
    for (int tries = 2;;) {
        int n = SSL_shutdown(ssl);
        if (n == 1)
            return 1;
        if (n == 0 && tries-- > 1)
            continue;
        *sslerr = SSL_get_error(ssl, n);
        return n;
    }
}

static uint64_t written(SSL *ssl) { return BIO_number_written(SSL_get_wbio(ssl)); }

/* Reads everything the peer sent so far (tickets included), to WANT_READ. */
static void drain(SSL *ssl)
{
    struct wants w = {0, 0};
    read_nothing(ssl, &w);
    assert_int_equal(w.rd, 1);
}

static void nginx_handshake_completes_through_want_read_on_a_nonblocking_socketpair(void **state)
{
    struct fx *f = *state;
    struct hs_wants w = {{0, 0}, {0, 0}};
    nginx_attach(f);
    assert_int_equal(SSL_get_fd(f->s), f->fd[1]);
    assert_int_equal(BIO_method_type(SSL_get_rbio(f->s)), BIO_TYPE_SOCKET);
    handshake(f, &w);
    assert_true(w.c.rd > 0);
    assert_true(w.s.rd > 0);
    assert_int_equal(SSL_is_init_finished(f->s), 1);
    assert_int_equal(SSL_in_init(f->s), 0);
}

/*
 * ngx_ssl_send_chain keeps one 16 KB buffer: after WANT_WRITE it calls SSL_write again from the
 * same address, with the same bytes and maybe more appended. OpenSSL 3.0 accepts the longer
 * retry and returns the whole length once both records are out.
 */
static void nginx_write_retry_from_same_buffer_with_bytes_appended_returns_all(void **state)
{
    struct fx *f = *state;
    unsigned char nbuf[16384];
    int sndbuf = 4096;
    size_t sent = 0;
    struct xfer rd = {.len = PATTERN_MAX, .chunk = 4096};
    struct wants ww = {0, 0};
    struct guard g = {0, 0, 0};

    nginx_attach(f);
    handshake(f, NULL);
    assert_int_equal(setsockopt(f->fd[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);

    /* 10000 bytes at a time from the one buffer until the socket is full. */
    for (;;) {
        memcpy(nbuf, pattern_a + sent, 10000);
        ERR_clear_error();
        int r = SSL_write(f->s, nbuf, 10000);
        if (r <= 0) {
            assert_int_equal(want(f->s, r, &ww, "SSL_write"), SSL_ERROR_WANT_WRITE);
            break;
        }
        assert_int_equal(r, 10000);
        sent += 10000;
        assert_true(sent + 16384 <= PATTERN_MAX);
    }
    /* More output arrives: appended behind the blocked 10000, retried from the same address. */
    memcpy(nbuf + 10000, pattern_a + sent + 10000, 6000);
    for (;;) {
        ERR_clear_error();
        int r = SSL_write(f->s, nbuf, 16000);
        if (r > 0) {
            assert_int_equal(r, 16000);
            sent += 16000;
            break;
        }
        assert_int_equal(want(f->s, r, &ww, "SSL_write"), SSL_ERROR_WANT_WRITE);
        xfer_read(f->c, &rd);
        guard_round(&g, traffic(f) + rd.got);
    }
    while (rd.got < sent) {
        xfer_read(f->c, &rd);
        guard_round(&g, traffic(f) + rd.got);
    }
    assert_int_equal(rd.got, sent);
    assert_true(ww.wr >= 2);
    assert_true(rd.rd.rd > 0);
}

/*
 * With read_ahead (nginx sets it), bytes of the next record already read from the socket are
 * reported by SSL_has_pending, not by SSL_pending, which counts decrypted bytes only; SSL_read
 * returns one record at a time.
 */
static void nginx_read_ahead_has_pending_counts_the_next_record_pending_does_not(void **state)
{
    struct fx *f = *state;
    unsigned char buf[20000];
    nginx_attach(f);
    handshake(f, NULL);
    assert_int_equal(SSL_write(f->c, pattern_a, TLS_MAX_PLAIN), TLS_MAX_PLAIN);
    assert_int_equal(SSL_write(f->c, pattern_a + TLS_MAX_PLAIN, 100), 100);
    assert_int_equal(SSL_has_pending(f->s), 0);
    assert_int_equal(SSL_read(f->s, buf, sizeof(buf)), TLS_MAX_PLAIN);
    assert_memory_equal(buf, pattern_a, TLS_MAX_PLAIN);
    assert_int_equal(SSL_pending(f->s), 0);
    assert_int_equal(SSL_has_pending(f->s), 1);
    assert_int_equal(SSL_read(f->s, buf, sizeof(buf)), 100);
    assert_memory_equal(buf, pattern_a + TLS_MAX_PLAIN, 100);
    assert_int_equal(SSL_pending(f->s), 0);
    assert_int_equal(SSL_has_pending(f->s), 0);
    ERR_clear_error();
    assert_int_equal(want(f->s, SSL_read(f->s, buf, sizeof(buf)), NULL, "SSL_read"),
                     SSL_ERROR_WANT_READ);
}

/*
 * The peer's close_notify: SSL_read returns 0 with SSL_ERROR_ZERO_RETURN and RECEIVED_SHUTDOWN.
 * nginx then sets no_wait and no_send, so its SSL_shutdown is quiet: 1 and not a byte written.
 */
static void nginx_close_notify_reads_zero_return_then_quiet_shutdown_writes_nothing(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    int err;
    nginx_attach(f);
    handshake(f, NULL);
    ERR_clear_error();
    assert_int_equal(SSL_shutdown(f->c), 0);
    assert_int_equal(SSL_get_shutdown(f->c), SSL_SENT_SHUTDOWN);

    ERR_clear_error();
    int r = SSL_read(f->s, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->s, r), SSL_ERROR_ZERO_RETURN);
    assert_int_equal(SSL_get_shutdown(f->s), SSL_RECEIVED_SHUTDOWN);
    assert_int_equal(ERR_peek_error(), 0);

    uint64_t before = written(f->s);
    struct nginx_close how = {0, 1, 1};
    assert_int_equal(nginx_shutdown(f->s, how, &err), 1);
    assert_int_equal(written(f->s), before);
    assert_int_equal(SSL_get_shutdown(f->s), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);

    /* The client waits for a close_notify that will not come: WANT_READ, then EOF is an error. */
    ERR_clear_error();
    r = SSL_shutdown(f->c);
    assert_int_equal(want(f->c, r, NULL, "SSL_shutdown"), SSL_ERROR_WANT_READ);
    close(f->fd[1]);
    f->fd[1] = -1;
    ERR_clear_error();
    r = SSL_shutdown(f->c);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_UNEXPECTED_EOF_WHILE_READING);
}

/* nginx's usual close (no_wait_shutdown): one close_notify record written, SSL_shutdown 1. */
static void nginx_no_wait_shutdown_sends_one_close_notify_and_returns_1(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    int err;
    nginx_attach(f);
    handshake(f, NULL);
    uint64_t before = written(f->s);
    struct nginx_close how = {0, 1, 0};
    assert_int_equal(nginx_shutdown(f->s, how, &err), 1);
    assert_int_equal(written(f->s) - before, CLOSE_NOTIFY_RECORD);

    ERR_clear_error();
    int r = SSL_read(f->c, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_ZERO_RETURN);
    assert_int_equal(SSL_get_shutdown(f->c), SSL_RECEIVED_SHUTDOWN);
}

/* Bidirectional: 0, then WANT_READ (nginx's NGX_AGAIN), then 1 once the peer answered. */
static void nginx_bidirectional_shutdown_returns_0_then_want_read_then_1(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    int err;
    nginx_attach(f);
    handshake(f, NULL);
    struct nginx_close how = {0, 0, 0};
    assert_int_equal(nginx_shutdown(f->s, how, &err), -1);
    assert_int_equal(err, SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_get_shutdown(f->s), SSL_SENT_SHUTDOWN);

    ERR_clear_error();
    int r = SSL_read(f->c, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_ZERO_RETURN);
    ERR_clear_error();
    assert_int_equal(SSL_shutdown(f->c), 1);

    ERR_clear_error();
    assert_int_equal(SSL_shutdown(f->s), 1);
    assert_int_equal(SSL_get_shutdown(f->s), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
}

/* On a timeout or an error nginx shuts down quietly: 1, nothing written, the peer sees nothing. */
static void nginx_error_shutdown_is_quiet_returns_1_and_sends_nothing(void **state)
{
    struct fx *f = *state;
    int err, n = 0;
    nginx_attach(f);
    handshake(f, NULL);
    drain(f->c);
    uint64_t before = written(f->s);
    struct nginx_close how = {1, 0, 0};
    assert_int_equal(nginx_shutdown(f->s, how, &err), 1);
    assert_int_equal(written(f->s), before);
    assert_int_equal(SSL_get_quiet_shutdown(f->s), 1);
    assert_int_equal(ioctl(f->fd[0], FIONREAD, &n), 0);
    assert_int_equal(n, 0);
    drain(f->c);
}

/* Why nginx checks SSL_in_init first: SSL_shutdown during a handshake is an error. */
static void shutdown_during_handshake_fails_with_shutdown_while_in_init(void **state)
{
    struct fx *f = *state;
    nginx_attach(f);
    assert_int_equal(handshake_step(f->c, NULL), 0);
    assert_int_equal(SSL_in_init(f->c), 1);
    ERR_clear_error();
    int r = SSL_shutdown(f->c);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_SHUTDOWN_WHILE_IN_INIT);
}

/*
 * nginx uses SSL_sendfile only when BIO_get_ktls_send says 1. Without kTLS it says 0, and
 * SSL_sendfile fails with one libssl error and leaves the connection usable.
 */
static void sendfile_without_ktls_fails_cleanly_and_ssl_write_still_works(void **state)
{
    struct fx *f = *state;
    unsigned char buf[16];
    nginx_attach(f);
    handshake(f, NULL);
    assert_int_equal(BIO_get_ktls_send(SSL_get_wbio(f->s)), 0);
    assert_int_equal(BIO_get_ktls_recv(SSL_get_rbio(f->s)), 0);

    FILE *file = tmpfile();
    assert_non_null(file);
    assert_int_equal(fwrite("file body", 1, 9, file), 9);
    assert_int_equal(fflush(file), 0);
    uint64_t before = written(f->s);
    ERR_clear_error();
    ossl_ssize_t n = SSL_sendfile(f->s, fileno(file), 0, 9, 0);
    fclose(file);
    assert_int_equal(n, -1);
    assert_int_equal(SSL_get_error(f->s, (int)n), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_UNINITIALIZED);
    assert_int_equal(written(f->s), before);

    assert_int_equal(SSL_write(f->s, "fallback", 8), 8);
    assert_int_equal(SSL_read(f->c, buf, sizeof(buf)), 8);
    assert_memory_equal(buf, "fallback", 8);
}

/* ------------------------------------------------------------------ */
/* Unexpected EOF and SSL_ERROR_SYSCALL on sockets                      */
/* ------------------------------------------------------------------ */

/* The peer closes its socket without close_notify: 3.0 calls it a fatal protocol error. */
static void socket_eof_without_close_notify_is_ssl_error_unexpected_eof(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    socket_attach(f);
    handshake(f, NULL);
    close(f->fd[1]);
    f->fd[1] = -1;
    ERR_clear_error();
    int r = SSL_read(f->c, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_UNEXPECTED_EOF_WHILE_READING);
    assert_int_equal(SSL_get_shutdown(f->c) & SSL_RECEIVED_SHUTDOWN, 0);
}

/* SSL_OP_IGNORE_UNEXPECTED_EOF: the same EOF reads as a close_notify, queue empty. */
static void socket_eof_with_ignore_unexpected_eof_is_zero_return(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    SSL_CTX_set_options(f->cctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    socket_attach(f);
    handshake(f, NULL);
    close(f->fd[1]);
    f->fd[1] = -1;
    ERR_clear_error();
    int r = SSL_read(f->c, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_ZERO_RETURN);
    assert_int_equal(ERR_peek_error(), 0);
    assert_int_equal(SSL_get_shutdown(f->c) & SSL_RECEIVED_SHUTDOWN, SSL_RECEIVED_SHUTDOWN);
}

/* A failed write(2) is SSL_ERROR_SYSCALL with errno set and nothing in the error queue. */
static void socket_write_to_closed_peer_is_ssl_error_syscall_with_epipe(void **state)
{
    struct fx *f = *state;
    socket_attach(f);
    handshake(f, NULL);
    close(f->fd[1]);
    f->fd[1] = -1;
    ERR_clear_error();
    errno = 0;
    int r = SSL_write(f->c, "lost", 4);
    int saved = errno;
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SYSCALL);
    assert_int_equal(saved, EPIPE);
    assert_int_equal(ERR_peek_error(), 0);
}

/* ------------------------------------------------------------------ */
/* Style 2: HAProxy, a custom BIO over application buffers             */
/* ------------------------------------------------------------------ */

static size_t ring_put(struct ring *r, const void *p, size_t n)
{
    size_t room = r->cap - r->len;
    if (n > room)
        n = room;
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    return n;
}

static size_t ring_get(struct ring *r, void *p, size_t n)
{
    if (n > r->len)
        n = r->len;
    memcpy(p, r->buf, n);
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
    return n;
}

static size_t step_of(const struct end *e, int n)
{
    return (size_t)n < e->step ? (size_t)n : e->step;
}

/* ha_ssl_write: what snd_buf took; 0 taken is a retry unless the connection is shut. */
static int ha_write(BIO *h, const char *buf, int num)
{
    struct end *e = BIO_get_data(h);
    int ret = (int)ring_put(e->out, buf, step_of(e, num));
    BIO_clear_retry_flags(h);
    if (ret == 0 && !e->out->shut) {
        BIO_set_retry_write(h);
        ret = -1;
    }
    return ret;
}

/* ha_ssl_read: what rcv_buf gave; nothing is a retry unless the read side is shut (then 0). */
static int ha_read(BIO *h, char *buf, int size)
{
    struct end *e = BIO_get_data(h);
    int ret = (int)ring_get(e->in, buf, step_of(e, size));
    BIO_clear_retry_flags(h);
    if (ret == 0 && !e->in->shut) {
        BIO_set_retry_read(h);
        ret = -1;
    }
    return ret;
}

static int ha_puts(BIO *h, const char *str) { return ha_write(h, str, (int)strlen(str)); }

static int ha_gets(BIO *h, char *buf, int size) { return 0; }

/* ha_ssl_ctrl: DUP and FLUSH are 1, everything else (PENDING, EOF, kTLS...) is 0. */
static long ha_ctrl(BIO *h, int cmd, long arg1, void *arg2)
{
    return cmd == BIO_CTRL_DUP || cmd == BIO_CTRL_FLUSH;
}

static int ha_new(BIO *h)
{
    BIO_set_init(h, 1);
    BIO_set_data(h, NULL);
    BIO_clear_flags(h, ~0);
    return 1;
}

static int ha_free(BIO *h) { return 1; }

static BIO_METHOD *ha_method(void)
{
    BIO_METHOD *m = BIO_meth_new(0x666, "ha methods"); /* HAProxy's own type number */
    assert_non_null(m);
    BIO_meth_set_write(m, ha_write);
    BIO_meth_set_read(m, ha_read);
    BIO_meth_set_ctrl(m, ha_ctrl);
    BIO_meth_set_create(m, ha_new);
    BIO_meth_set_destroy(m, ha_free);
    BIO_meth_set_puts(m, ha_puts);
    BIO_meth_set_gets(m, ha_gets);
    return m;
}

/* Rings of `cap` bytes each way, `step` bytes per BIO call, one BIO per SSL for both ways. */
static void rings_attach(struct fx *f, BIO_METHOD *m, size_t step, size_t cap)
{
    assert_true(cap <= RING_MAX);
    f->meth = m;
    f->c2s.cap = f->s2c.cap = cap;
    f->c_end = (struct end){&f->s2c, &f->c2s, step, 0};
    f->s_end = (struct end){&f->c2s, &f->s2c, step, 0};
    new_ssls(f);
    BIO *cb = BIO_new(m), *sb = BIO_new(m);
    assert_non_null(cb);
    assert_non_null(sb);
    BIO_set_data(cb, &f->c_end);
    BIO_set_data(sb, &f->s_end);
    SSL_set_bio(f->c, cb, cb);
    SSL_set_bio(f->s, sb, sb);
}

/* ssl_sock_prepare_ctx's modes, on both ends (HAProxy is client and server). */
static void haproxy_attach(struct fx *f, size_t step, size_t cap)
{
    long mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                SSL_MODE_RELEASE_BUFFERS;
    SSL_CTX_set_mode(f->cctx, mode);
    SSL_CTX_set_mode(f->sctx, mode);
    rings_attach(f, ha_method(), step, cap);
}

/* Handshake then 40000 bytes each way: every WANT path of both, counted per phase. */
static void haproxy_every_want_path(struct fx *f, size_t step, size_t cap)
{
    struct hs_wants w = {{0, 0}, {0, 0}};
    haproxy_attach(f, step, cap);
    handshake(f, &w);
    assert_true(w.c.rd > 0 && w.c.wr > 0);
    assert_true(w.s.rd > 0 && w.s.wr > 0);

    struct xfer up = {.len = 40000, .chunk = 7, .moving = 1};
    transfer(f, f->c, f->s, &up);
    struct xfer down = {.len = 40000, .chunk = 7, .moving = 1};
    transfer(f, f->s, f->c, &down);
    struct xfer *both[2] = {&up, &down};
    for (int i = 0; i < 2; i++) {
        assert_true(both[i]->wr.wr > 0); /* SSL_write: WANT_WRITE */
        assert_true(both[i]->rd.rd > 0); /* SSL_read: WANT_READ */
        assert_true(both[i]->moved_retries > 0);
    }
}

static void haproxy_1_byte_steps_reach_every_want_read_and_want_write(void **state)
{
    haproxy_every_want_path(*state, 1, 1);
}

static void haproxy_7_byte_steps_reach_every_want_read_and_want_write(void **state)
{
    haproxy_every_want_path(*state, 7, 64);
}

/*
 * SSL_MODE_ENABLE_PARTIAL_WRITE in 3.0: an SSL_write whose first record goes out whole returns
 * that record's 16384 bytes. Once a record is left behind WANT_WRITE, a retry that flushes it
 * carries on with the following records, and the call that finally succeeds returns every
 * byte written since the blocked call (here the remaining 33768 at once).
 * ACCEPT_MOVING_WRITE_BUFFER lets each retry come from another address, as HAProxy's ring does.
 */
static void haproxy_partial_write_returns_after_one_record_and_moved_retry_succeeds(void **state)
{
    struct fx *f = *state;
    struct xfer x = {.len = 3 * TLS_MAX_PLAIN + 1000, .chunk = 512, .moving = 1};
    haproxy_attach(f, 7, 20000); /* room for one whole record, not two */
    handshake(f, NULL);
    drain(f->c);
    xfer_write(f->s, &x);
    assert_int_equal(x.first_write, TLS_MAX_PLAIN);
    assert_int_equal(x.sent, TLS_MAX_PLAIN);
    xfer_write(f->s, &x); /* the second record does not fit */
    assert_int_equal(x.wr.wr, 1);
    assert_int_equal(x.sent, TLS_MAX_PLAIN);
    transfer(f, f->s, f->c, &x);
    assert_true(x.moved_retries > 1);
    assert_int_equal(x.writes, 2);
    assert_int_equal(x.max_write, x.len - TLS_MAX_PLAIN);
}

/*
 * HAProxy's ctrl answers 0 to BIO_CTRL_EOF, so an EOF from its BIO is not recognised as an
 * unexpected EOF: SSL_read returns 0, SSL_ERROR_SYSCALL, empty queue, errno 0, which HAProxy
 * treats as the peer's read0.
 */
static void haproxy_eof_without_bio_ctrl_eof_is_syscall_with_empty_queue(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    haproxy_attach(f, 7, 64);
    handshake(f, NULL);
    drain(f->c);
    f->s2c.shut = 1;
    ERR_clear_error();
    errno = EINVAL;
    int r = SSL_read(f->c, buf, sizeof(buf));
    int saved = errno;
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SYSCALL);
    assert_int_equal(ERR_peek_error(), 0);
    assert_int_equal(saved, 0);
}

/* ------------------------------------------------------------------ */
/* Style 3: curl, a BIO_TYPE_MEM method that is not a memory BIO        */
/* ------------------------------------------------------------------ */

/* ossl_bio_cf_out_write: -1 on any error, retry flag only on EAGAIN (a full ring). */
static int cf_write(BIO *bio, const char *buf, int blen)
{
    struct end *e = BIO_get_data(bio);
    size_t n = ring_put(e->out, buf, step_of(e, blen));
    BIO_clear_retry_flags(bio);
    if (n == 0) {
        BIO_set_retry_write(bio);
        return -1;
    }
    return (int)n;
}

/* ossl_bio_cf_in_read: retry on EAGAIN; 0 is EOF and marks the peer closed. */
static int cf_read(BIO *bio, char *buf, int blen)
{
    struct end *e = BIO_get_data(bio);
    if (buf == NULL)
        return 0;
    size_t n = ring_get(e->in, buf, step_of(e, blen));
    BIO_clear_retry_flags(bio);
    if (n == 0 && !e->in->shut) {
        BIO_set_retry_read(bio);
        return -1;
    }
    if (n == 0)
        e->peer_closed = 1;
    return (int)n;
}

static long cf_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
    struct end *e = BIO_get_data(bio);
    switch (cmd) {
    case BIO_CTRL_GET_CLOSE:
        return BIO_get_shutdown(bio);
    case BIO_CTRL_SET_CLOSE:
        BIO_set_shutdown(bio, (int)num);
        return 1;
    case BIO_CTRL_FLUSH:
    case BIO_CTRL_DUP:
        return 1;
    case BIO_CTRL_EOF:
        return e->peer_closed;
    default:
        return 0;
    }
}

static int cf_create(BIO *bio)
{
    BIO_set_shutdown(bio, 1);
    BIO_set_init(bio, 1);
    BIO_set_data(bio, NULL);
    return 1;
}

static int cf_destroy(BIO *bio) { return bio != NULL; }

static BIO_METHOD *cf_method(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_MEM, "OpenSSL CF BIO");
    assert_non_null(m);
    BIO_meth_set_write(m, cf_write);
    BIO_meth_set_read(m, cf_read);
    BIO_meth_set_ctrl(m, cf_ctrl);
    BIO_meth_set_create(m, cf_create);
    BIO_meth_set_destroy(m, cf_destroy);
    return m;
}

static int count_new_session(SSL *ssl, SSL_SESSION *sess)
{
    new_sessions++;
    return 0; /* not kept */
}

static void record_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    struct msg_log *log = arg;
    if (log->n >= MSG_LOG_MAX)
        return;
    struct msg_rec *r = &log->r[log->n++];
    r->dir = write_p;
    r->version = version;
    r->type = content_type;
    r->len = len;
    memcpy(r->head, buf, len < 5 ? len : 5);
}

/*
 * ossl_connect_step1's settings on the client; the server is plain. curl 8.15 and later also
 * call SSL_CTX_set_default_read_buffer_len(ctx, 0x401e * 4), left out here: libqtls.a has no
 * such function yet, and this file must link against it.
 */
static void curl_attach(struct fx *f, size_t step, size_t cap)
{
    SSL_CTX_set_read_ahead(f->cctx, 1);
    SSL_CTX_set_mode(f->cctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_post_handshake_auth(f->cctx, 1);
    SSL_CTX_set_session_cache_mode(f->cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(f->cctx, count_new_session);
    SSL_CTX_set_msg_callback(f->cctx, record_msg);
    SSL_CTX_set_msg_callback_arg(f->cctx, &f->log);
    rings_attach(f, cf_method(), step, cap);
}

/* The index of the first record at or after `from` matching, or -1. */
static int find_msg(const struct msg_log *log, int from, int dir, int type, int first_byte)
{
    for (int i = from; i < log->n; i++)
        if (log->r[i].dir == dir && log->r[i].type == type && log->r[i].len > 0 &&
            (first_byte < 0 || log->r[i].head[0] == first_byte))
            return i;
    return -1;
}

/* The last SSL3_RT_HEADER before record i in the same direction, or -1. */
static int header_before(const struct msg_log *log, int i)
{
    for (int h = i - 1; h >= 0; h--)
        if (log->r[h].type == SSL3_RT_HEADER && log->r[h].dir == log->r[i].dir)
            return h;
    return -1;
}

/*
 * What curl -v reads from the msg callback (OpenSSL 3.0):
 *  - every record header, both ways, as SSL3_RT_HEADER with the 5 header bytes and the record's
 *    legacy version as `version` (0x0301 for the first ClientHello record, then 0x0303);
 *  - for each encrypted record, after its header (outer type application_data), the inner
 *    content type as SSL3_RT_INNER_CONTENT_TYPE, 1 byte, with version 0x0303 when written and
 *    0x0304 when read (a 3.0 quirk; curl skips these records before looking at the version);
 *  - the handshake messages (and the client's ChangeCipherSpec) with version TLS1_3_VERSION,
 *    in handshake order. The peer's ChangeCipherSpec shows only as a header.
 */
struct msg_counts {
    int headers[2], inner[2], inner_data[2];
};

/* One msg callback record checked against what 3.0 reports; counted by direction. */
static void check_msg(const struct msg_log *log, int i, struct msg_counts *n)
{
    const struct msg_rec *r = &log->r[i];
    assert_true(r->dir == 0 || r->dir == 1);
    if (r->type == SSL3_RT_HEADER) {
        assert_int_equal(r->len, SSL3_RT_HEADER_LENGTH);
        assert_true(r->head[0] >= SSL3_RT_CHANGE_CIPHER_SPEC &&
                    r->head[0] <= SSL3_RT_APPLICATION_DATA);
        assert_int_equal((r->head[1] << 8) | r->head[2], r->version);
        assert_int_equal(r->version, i == 0 ? TLS1_VERSION : TLS1_2_VERSION);
        assert_true(((r->head[3] << 8) | r->head[4]) > 0);
        n->headers[r->dir]++;
    } else if (r->type == SSL3_RT_INNER_CONTENT_TYPE) {
        assert_int_equal(r->len, 1);
        assert_int_equal(r->version, r->dir == 1 ? TLS1_2_VERSION : TLS1_3_VERSION);
        int h = header_before(log, i);
        assert_true(h >= 0);
        assert_int_equal(log->r[h].head[0], SSL3_RT_APPLICATION_DATA);
        n->inner[r->dir]++;
        n->inner_data[r->dir] += r->head[0] == SSL3_RT_APPLICATION_DATA;
    } else {
        assert_int_equal(r->version, TLS1_3_VERSION);
        if (r->type == SSL3_RT_HANDSHAKE) /* the whole message: 4-byte header and body */
            assert_int_equal(r->len, 4 + ((r->head[1] << 16) | (r->head[2] << 8) | r->head[3]));
    }
}

static void curl_msg_callback_sees_headers_inner_types_and_handshake_messages(void **state)
{
    struct fx *f = *state;
    const struct msg_log *log = &f->log;
    struct msg_counts n = {{0, 0}, {0, 0}, {0, 0}};
    curl_attach(f, 7, 64);
    handshake(f, NULL);
    struct xfer up = {.len = 300, .chunk = 64, .moving = 1};
    transfer(f, f->c, f->s, &up);
    struct xfer down = {.len = 300, .chunk = 64};
    transfer(f, f->s, f->c, &down);

    assert_true(log->n > 2 && log->n < MSG_LOG_MAX);
    for (int i = 0; i < log->n; i++)
        check_msg(log, i, &n);
    for (int d = 0; d < 2; d++)
        assert_true(n.headers[d] > 0 && n.inner[d] > 0 && n.inner_data[d] > 0);

    /* The first record out: its header (handshake, 3.1), then the ClientHello. */
    assert_int_equal(log->r[0].dir, 1);
    assert_int_equal(log->r[0].type, SSL3_RT_HEADER);
    assert_int_equal(log->r[0].head[0], SSL3_RT_HANDSHAKE);
    assert_int_equal(log->r[1].dir, 1);
    assert_int_equal(log->r[1].type, SSL3_RT_HANDSHAKE);
    assert_int_equal(log->r[1].head[0], SSL3_MT_CLIENT_HELLO);

    /* "TLSv1.3 (IN), TLS handshake, Server hello (2)" ... in this order. */
    static const int seq[][2] = {{1, SSL3_MT_CLIENT_HELLO}, {0, SSL3_MT_SERVER_HELLO},
                                 {0, SSL3_MT_ENCRYPTED_EXTENSIONS}, {0, SSL3_MT_CERTIFICATE},
                                 {0, SSL3_MT_CERTIFICATE_VERIFY}, {0, SSL3_MT_FINISHED},
                                 {1, SSL3_MT_FINISHED}, {0, SSL3_MT_NEWSESSION_TICKET}};
    int at = 0;
    for (size_t k = 0; k < sizeof(seq) / sizeof(seq[0]); k++) {
        at = find_msg(log, at, seq[k][0], SSL3_RT_HANDSHAKE, seq[k][1]);
        if (at < 0)
            fail_msg("handshake message %d (dir %d) missing or out of order", seq[k][1],
                     seq[k][0]);
        at++;
    }
    /* The client's middlebox-compatibility ChangeCipherSpec, before its Finished. */
    int ccs = find_msg(log, 0, 1, SSL3_RT_CHANGE_CIPHER_SPEC, 1);
    assert_true(ccs > 0);
    assert_true(ccs < find_msg(log, 0, 1, SSL3_RT_HANDSHAKE, SSL3_MT_FINISHED));
}

/*
 * SSL_CTX_set_post_handshake_auth(ctx, 1) (curl sets it always): the server requests a
 * certificate after the handshake (SSL_verify_client_post_handshake, then SSL_do_handshake
 * sends the CertificateRequest); the client answers inside SSL_read, which reports WANT_WRITE
 * while the 7-byte transport is full; the server's SSL_read takes the answer, verifies it and
 * sends num_tickets new tickets. (The server sends the request with SSL_do_handshake, not with
 * an SSL_write: in 3.0 an application record left behind WANT_WRITE while the answer arrives
 * makes the server's next write fail with SSL_R_BAD_WRITE_RETRY.)
 */
static void curl_post_handshake_auth_is_answered_inside_ssl_read(void **state)
{
    struct fx *f = *state;
    struct wants cw = {0, 0}, sw = {0, 0};
    struct guard g = {0, 0, 0};
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, cert("client.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, cert("client.key"),
                                                 SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, cert("ca.pem"), NULL), 1);
    curl_attach(f, 7, 7);
    handshake(f, NULL);
    assert_null(SSL_get0_peer_certificate(f->s));

    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    ERR_clear_error();
    assert_int_equal(SSL_verify_client_post_handshake(f->s), 1);
    assert_int_equal(SSL_in_init(f->s), 1);
    while (SSL_in_init(f->s) || SSL_get0_peer_certificate(f->s) == NULL || f->c2s.len > 0 ||
           f->s2c.len > 0) {
        if (SSL_in_init(f->s))
            handshake_step(f->s, &sw);
        else
            read_nothing(f->s, &sw);
        read_nothing(f->c, &cw);
        guard_round(&g, traffic(f));
    }
    assert_true(cw.wr > 0); /* the client's SSL_read: WANT_WRITE */
    assert_non_null(SSL_get0_peer_certificate(f->s));
    assert_int_equal(SSL_get_verify_result(f->s), X509_V_OK);
    assert_int_equal(new_sessions, 4); /* 2 after the handshake, 2 more after the client auth */
    int req = find_msg(&f->log, 0, 0, SSL3_RT_HANDSHAKE, SSL3_MT_CERTIFICATE_REQUEST);
    assert_true(req >= 0);
    assert_true(find_msg(&f->log, req, 1, SSL3_RT_HANDSHAKE, SSL3_MT_CERTIFICATE) > req);
    struct xfer x = {.len = 100, .chunk = 64};
    transfer(f, f->s, f->c, &x);
    struct xfer y = {.len = 100, .chunk = 64, .moving = 1};
    transfer(f, f->c, f->s, &y);
}

/* Without the client's post_handshake_auth extension the server may not ask. */
static void verify_client_post_handshake_without_client_extension_fails(void **state)
{
    struct fx *f = *state;
    socket_attach(f);
    handshake(f, NULL);
    SSL_set_verify(f->s, SSL_VERIFY_PEER, NULL);
    ERR_clear_error();
    assert_int_equal(SSL_verify_client_post_handshake(f->s), 0);
    assert_one_ssl_error(SSL_R_EXTENSION_NOT_RECEIVED);
}

/* curl's BIO answers BIO_CTRL_EOF after a 0 read: 3.0 then reports the unexpected EOF. */
static void curl_eof_answered_by_bio_ctrl_eof_is_unexpected_eof(void **state)
{
    struct fx *f = *state;
    unsigned char buf[64];
    curl_attach(f, 7, 64);
    handshake(f, NULL);
    assert_int_equal(BIO_method_type(SSL_get_rbio(f->c)), BIO_TYPE_MEM);
    assert_int_equal(SSL_get_fd(f->c), -1);
    f->s2c.shut = 1;
    ERR_clear_error();
    int r = SSL_read(f->c, buf, sizeof(buf));
    assert_int_equal(r, 0);
    assert_int_equal(SSL_get_error(f->c, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_UNEXPECTED_EOF_WHILE_READING);
    assert_int_equal(f->c_end.peer_closed, 1);
}

/*
 * TLS 1.3 tickets come after the client's handshake is over, so they are read inside SSL_read:
 * the new-session callback runs once per ticket (2 by default), never during SSL_do_handshake.
 */
static void curl_tickets_arrive_inside_ssl_read_and_call_new_session_cb_per_ticket(void **state)
{
    struct fx *f = *state;
    curl_attach(f, 7, 64);
    while (handshake_step(f->c, NULL) == 0) { /* until the client is done, before the server */
        int sdone = handshake_step(f->s, NULL);
        assert_int_equal(sdone, 0);
    }
    assert_int_equal(new_sessions, 0);
    struct xfer x = {.len = 100, .chunk = 64};
    handshake(f, NULL); /* the server finishes; the client's SSL_read takes the tickets */
    transfer(f, f->s, f->c, &x);
    assert_int_equal(new_sessions, 2);
}

/* SSL_shutdown until it stops asking to write; returns its result. */
static int shutdown_flushed(struct fx *f, SSL *ssl)
{
    struct guard g = {0, 0, 0};
    for (;;) {
        ERR_clear_error();
        int r = SSL_shutdown(ssl);
        if (r >= 0)
            return r;
        if (want(ssl, r, NULL, "SSL_shutdown") != SSL_ERROR_WANT_WRITE)
            return r;
        read_nothing(ssl == f->c ? f->s : f->c, NULL); /* the peer reads, making room */
        guard_round(&g, traffic(f));
    }
}

/* SSL_read until it returns 0; anything else but WANT_* fails. Returns SSL_get_error. */
static int read_until_zero(struct fx *f, SSL *ssl)
{
    unsigned char buf[64];
    struct guard g = {0, 0, 0};
    for (;;) {
        ERR_clear_error();
        int r = SSL_read(ssl, buf, sizeof(buf));
        if (r == 0)
            return SSL_get_error(ssl, r);
        if (r > 0)
            fail_msg("unexpected application data");
        want(ssl, r, NULL, "SSL_read");
        guard_round(&g, traffic(f));
    }
}

/*
 * ossl_shutdown: SSL_shutdown sends close_notify (0: not received yet) while the server's
 * tickets may still be unread; then SSL_read goes through them to the peer's close_notify,
 * returning 0 with ZERO_RETURN, and SSL_shutdown returns 1.
 */
static void curl_shutdown_reads_peer_close_notify_with_ssl_read_then_completes(void **state)
{
    struct fx *f = *state;
    curl_attach(f, 7, 64);
    handshake(f, NULL);
    assert_int_equal(shutdown_flushed(f, f->c), 0);
    assert_int_equal(SSL_get_shutdown(f->c), SSL_SENT_SHUTDOWN);
    assert_int_equal(read_until_zero(f, f->s), SSL_ERROR_ZERO_RETURN);
    assert_int_equal(shutdown_flushed(f, f->s), 1);
    assert_int_equal(read_until_zero(f, f->c), SSL_ERROR_ZERO_RETURN);
    ERR_clear_error();
    assert_int_equal(SSL_shutdown(f->c), 1);
    assert_int_equal(SSL_get_shutdown(f->c), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
}

/* ------------------------------------------------------------------ */
/* Memory BIOs                                                          */
/* ------------------------------------------------------------------ */

static void bio_pair_attach(struct fx *f, size_t size)
{
    BIO *cb, *sb;
    new_ssls(f);
    assert_int_equal(BIO_new_bio_pair(&cb, size, &sb, size), 1);
    SSL_set_bio(f->c, cb, cb);
    SSL_set_bio(f->s, sb, sb);
}

static void mem_attach(struct fx *f, size_t carry_step)
{
    new_ssls(f);
    f->c_in = BIO_new(BIO_s_mem());
    f->c_out = BIO_new(BIO_s_mem());
    f->s_in = BIO_new(BIO_s_mem());
    f->s_out = BIO_new(BIO_s_mem());
    assert_true(f->c_in && f->c_out && f->s_in && f->s_out);
    f->carry_step = carry_step;
    SSL_set_bio(f->c, f->c_in, f->c_out);
    SSL_set_bio(f->s, f->s_in, f->s_out);
}

/* A 256-byte BIO pair: the handshake and data both ways go through WANT_WRITE and WANT_READ. */
static void bio_pair_with_small_buffers_handshakes_and_transfers_both_ways(void **state)
{
    struct fx *f = *state;
    struct hs_wants w = {{0, 0}, {0, 0}};
    bio_pair_attach(f, 256);
    handshake(f, &w);
    assert_true(w.s.wr > 0);
    assert_true(w.c.rd > 0 && w.s.rd > 0);
    struct xfer up = {.len = 50000, .chunk = 1000};
    transfer(f, f->c, f->s, &up);
    struct xfer down = {.len = 50000, .chunk = 1000};
    transfer(f, f->s, f->c, &down);
    assert_true(up.wr.wr > 0 && down.wr.wr > 0);
    assert_true(up.rd.rd > 0 && down.rd.rd > 0);
    assert_int_equal(up.writes, 1); /* no partial writes: one SSL_write returns all */
}

/* BIO_s_mem never refuses a write: WANT_READ only, bytes carried 7 at a time. */
static void mem_bio_pair_handshakes_and_transfers_with_want_read_only(void **state)
{
    struct fx *f = *state;
    struct hs_wants w = {{0, 0}, {0, 0}};
    mem_attach(f, 7);
    handshake(f, &w);
    assert_true(w.c.rd > 0 && w.s.rd > 0);
    assert_int_equal(w.c.wr + w.s.wr, 0);
    struct xfer up = {.len = 20000, .chunk = 1000};
    transfer(f, f->c, f->s, &up);
    struct xfer down = {.len = 20000, .chunk = 1000};
    transfer(f, f->s, f->c, &down);
    assert_int_equal(up.wr.wr + down.wr.wr, 0);
    assert_true(up.rd.rd > 0 && down.rd.rd > 0);
}

/* ------------------------------------------------------------------ */
/* The SSL_write retry rules                                            */
/* ------------------------------------------------------------------ */

/* Leaves f->s with a record pending behind WANT_WRITE: 4000 bytes into a 256-byte pair. */
static void blocked_write(struct fx *f, long mode)
{
    SSL_CTX_set_mode(f->sctx, mode);
    bio_pair_attach(f, 256);
    handshake(f, NULL);
    drain(f->c);
    ERR_clear_error();
    int r = SSL_write(f->s, pattern_a, 4000);
    assert_int_equal(want(f->s, r, NULL, "SSL_write"), SSL_ERROR_WANT_WRITE);
}

/* Reads from the client until `n` bytes came, retrying the server's write as given. */
static void finish_blocked_write(struct fx *f, const unsigned char *retry_buf, int len)
{
    struct xfer rd = {.len = (size_t)len, .chunk = 1000};
    struct guard g = {0, 0, 0};
    int done = 0;
    while (rd.got < (size_t)len) {
        if (!done) {
            ERR_clear_error();
            int r = SSL_write(f->s, retry_buf, len);
            if (r > 0) {
                assert_int_equal(r, len);
                done = 1;
            } else {
                assert_int_equal(want(f->s, r, NULL, "SSL_write"), SSL_ERROR_WANT_WRITE);
            }
        }
        xfer_read(f->c, &rd);
        guard_round(&g, traffic(f) + rd.got);
    }
    assert_int_equal(done, 1);
}

static void write_retry_with_same_arguments_completes(void **state)
{
    struct fx *f = *state;
    blocked_write(f, 0);
    finish_blocked_write(f, pattern_a, 4000);
}

/* Without ACCEPT_MOVING_WRITE_BUFFER a retry from another address is SSL_R_BAD_WRITE_RETRY. */
static void write_retry_from_other_address_without_moving_mode_is_bad_write_retry(void **state)
{
    struct fx *f = *state;
    blocked_write(f, 0);
    ERR_clear_error();
    int r = SSL_write(f->s, pattern_b, 4000);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->s, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_BAD_WRITE_RETRY);
}

/* With it, the same bytes from another address finish the write. */
static void write_retry_from_other_address_with_moving_mode_completes(void **state)
{
    struct fx *f = *state;
    blocked_write(f, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    finish_blocked_write(f, pattern_b, 4000);
}

/* A retry shorter than the pending record is SSL_R_BAD_LENGTH, moving mode or not. */
static void write_retry_shorter_than_pending_record_is_bad_length(void **state)
{
    struct fx *f = *state;
    blocked_write(f, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    ERR_clear_error();
    int r = SSL_write(f->s, pattern_a, 3999);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->s, r), SSL_ERROR_SSL);
    assert_one_ssl_error(SSL_R_BAD_LENGTH);
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */
/* ------------------------------------------------------------------ */

/* SSL_peek returns the bytes and keeps them: SSL_pending counts them, SSL_read returns them. */
static void peek_then_read_return_the_same_bytes(void **state)
{
    struct fx *f = *state;
    unsigned char p[32], r[32];
    socket_attach(f);
    handshake(f, NULL);
    ERR_clear_error();
    assert_int_equal(want(f->c, SSL_peek(f->c, p, sizeof(p)), NULL, "SSL_peek"),
                     SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_write(f->s, "peek-a-boo", 10), 10);
    assert_int_equal(SSL_peek(f->c, p, sizeof(p)), 10);
    assert_int_equal(SSL_pending(f->c), 10);
    assert_int_equal(SSL_peek(f->c, p, 4), 4);
    assert_memory_equal(p, "peek", 4);
    assert_int_equal(SSL_read(f->c, r, sizeof(r)), 10);
    assert_memory_equal(r, "peek-a-boo", 10);
    assert_int_equal(SSL_pending(f->c), 0);
}

/* A 16384-byte record read one byte at a time: SSL_pending counts down what is left of it. */
static void one_byte_reads_across_a_16k_record_pending_counts_the_rest(void **state)
{
    struct fx *f = *state;
    unsigned char b;
    socket_attach(f);
    handshake(f, NULL);
    assert_int_equal(SSL_write(f->s, pattern_a, TLS_MAX_PLAIN), TLS_MAX_PLAIN);
    for (int i = 0; i < TLS_MAX_PLAIN; i++) {
        assert_int_equal(SSL_read(f->c, &b, 1), 1);
        assert_int_equal(b, pattern_a[i]);
        assert_int_equal(SSL_pending(f->c), TLS_MAX_PLAIN - 1 - i);
        assert_int_equal(SSL_has_pending(f->c), i < TLS_MAX_PLAIN - 1);
    }
    ERR_clear_error();
    assert_int_equal(want(f->c, SSL_read(f->c, &b, 1), NULL, "SSL_read"), SSL_ERROR_WANT_READ);
}

static int socket_bytes(int fd)
{
    int n = -1;
    assert_int_equal(ioctl(fd, FIONREAD, &n), 0);
    return n;
}

/* Tickets and data already in the socket; the server wrote both before the client reads. */
static void tickets_then_data(struct fx *f, int auto_retry)
{
    SSL_CTX_set_session_cache_mode(f->cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(f->cctx, count_new_session);
    SSL_CTX_set_num_tickets(f->sctx, 2);
    if (!auto_retry)
        SSL_CTX_clear_mode(f->cctx, SSL_MODE_AUTO_RETRY);
    socket_attach(f);
    int cdone = 0, sdone = 0;
    struct guard g = {0, 0, 0};
    while (!cdone || !sdone) { /* no read_nothing(): the tickets stay in the socket */
        if (!cdone)
            cdone = handshake_step(f->c, NULL);
        if (!sdone)
            sdone = handshake_step(f->s, NULL);
        guard_round(&g, traffic(f) + (uint64_t)cdone + (uint64_t)sdone);
    }
    assert_int_equal(new_sessions, 0);
    assert_int_equal(SSL_write(f->s, "data", 4), 4);
}

/* SSL_MODE_AUTO_RETRY (3.0's default): one SSL_read goes through both tickets to the data. */
static void tickets_inside_ssl_read_are_hidden_by_auto_retry(void **state)
{
    struct fx *f = *state;
    unsigned char buf[16];
    assert_true(SSL_CTX_get_mode(f->cctx) & SSL_MODE_AUTO_RETRY);
    tickets_then_data(f, 1);
    assert_int_equal(SSL_read(f->c, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "data", 4);
    assert_int_equal(new_sessions, 2);
}

/* AUTO_RETRY cleared: each ticket ends SSL_read with WANT_READ while the data waits. */
static void tickets_with_auto_retry_cleared_each_return_want_read(void **state)
{
    struct fx *f = *state;
    unsigned char buf[16];
    tickets_then_data(f, 0);
    for (int t = 1; t <= 2; t++) {
        ERR_clear_error();
        assert_int_equal(want(f->c, SSL_read(f->c, buf, sizeof(buf)), NULL, "SSL_read"),
                         SSL_ERROR_WANT_READ);
        assert_int_equal(new_sessions, t);
        assert_true(socket_bytes(f->fd[0]) > 0);
    }
    assert_int_equal(SSL_read(f->c, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "data", 4);
}

/*
 * A KeyUpdate with update_requested: 3.0 takes the new read key inside SSL_read but writes
 * nothing there; its own KeyUpdate (update_not_requested) goes out ahead of the next SSL_write.
 */
static void key_update_request_is_answered_by_the_next_ssl_write_not_inside_ssl_read(void **state)
{
    struct fx *f = *state;
    unsigned char buf[16];
    SSL_CTX_set_msg_callback(f->sctx, record_msg);
    SSL_CTX_set_msg_callback_arg(f->sctx, &f->log);
    socket_attach(f);
    handshake(f, NULL);
    drain(f->c);
    assert_int_equal(SSL_key_update(f->s, SSL_KEY_UPDATE_REQUESTED), 1);
    assert_int_equal(SSL_get_key_update_type(f->s), SSL_KEY_UPDATE_REQUESTED);
    assert_int_equal(SSL_write(f->s, "ping", 4), 4);
    assert_int_equal(SSL_get_key_update_type(f->s), SSL_KEY_UPDATE_NONE);

    uint64_t before = written(f->c);
    assert_int_equal(SSL_read(f->c, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "ping", 4);
    assert_int_equal(written(f->c), before);
    assert_int_equal(SSL_get_key_update_type(f->c), SSL_KEY_UPDATE_NOT_REQUESTED);

    int mark = f->log.n;
    assert_int_equal(SSL_write(f->c, "pong", 4), 4);
    assert_int_equal(SSL_get_key_update_type(f->c), SSL_KEY_UPDATE_NONE);
    assert_int_equal(SSL_read(f->s, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "pong", 4);
    int ku = find_msg(&f->log, mark, 0, SSL3_RT_HANDSHAKE, SSL3_MT_KEY_UPDATE);
    assert_true(ku >= 0);
    assert_int_equal(f->log.r[ku].len, 5);
    assert_int_equal(f->log.r[ku].head[4], SSL_KEY_UPDATE_NOT_REQUESTED);
}

/* ------------------------------------------------------------------ */

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as nginx, HAProxy and curl do */
    make_pattern();
    const struct CMUnitTest tests[] = {
        T(nginx_handshake_completes_through_want_read_on_a_nonblocking_socketpair),
        T(nginx_write_retry_from_same_buffer_with_bytes_appended_returns_all),
        T(nginx_read_ahead_has_pending_counts_the_next_record_pending_does_not),
        T(nginx_close_notify_reads_zero_return_then_quiet_shutdown_writes_nothing),
        T(nginx_no_wait_shutdown_sends_one_close_notify_and_returns_1),
        T(nginx_bidirectional_shutdown_returns_0_then_want_read_then_1),
        T(nginx_error_shutdown_is_quiet_returns_1_and_sends_nothing),
        T(shutdown_during_handshake_fails_with_shutdown_while_in_init),
        T(sendfile_without_ktls_fails_cleanly_and_ssl_write_still_works),
        T(socket_eof_without_close_notify_is_ssl_error_unexpected_eof),
        T(socket_eof_with_ignore_unexpected_eof_is_zero_return),
        T(socket_write_to_closed_peer_is_ssl_error_syscall_with_epipe),
        T(haproxy_1_byte_steps_reach_every_want_read_and_want_write),
        T(haproxy_7_byte_steps_reach_every_want_read_and_want_write),
        T(haproxy_partial_write_returns_after_one_record_and_moved_retry_succeeds),
        T(haproxy_eof_without_bio_ctrl_eof_is_syscall_with_empty_queue),
        T(curl_msg_callback_sees_headers_inner_types_and_handshake_messages),
        T(curl_post_handshake_auth_is_answered_inside_ssl_read),
        T(verify_client_post_handshake_without_client_extension_fails),
        T(curl_eof_answered_by_bio_ctrl_eof_is_unexpected_eof),
        T(curl_tickets_arrive_inside_ssl_read_and_call_new_session_cb_per_ticket),
        T(curl_shutdown_reads_peer_close_notify_with_ssl_read_then_completes),
        T(bio_pair_with_small_buffers_handshakes_and_transfers_both_ways),
        T(mem_bio_pair_handshakes_and_transfers_with_want_read_only),
        T(write_retry_with_same_arguments_completes),
        T(write_retry_from_other_address_without_moving_mode_is_bad_write_retry),
        T(write_retry_from_other_address_with_moving_mode_completes),
        T(write_retry_shorter_than_pending_record_is_bad_length),
        T(peek_then_read_return_the_same_bytes),
        T(one_byte_reads_across_a_16k_record_pending_counts_the_rest),
        T(tickets_inside_ssl_read_are_hidden_by_auto_retry),
        T(tickets_with_auto_retry_cleared_each_return_want_read),
        T(key_update_request_is_answered_by_the_next_ssl_write_not_inside_ssl_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
