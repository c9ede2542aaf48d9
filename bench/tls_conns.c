/*
 * bench/tls_conns.c: the TLS client of bench/servers.sh, on the SYSTEM libssl (OpenSSL 3.0),
 * whatever library the server under test uses. One thread, non-blocking sockets, epoll.
 *
 *   tls_conns idle HOST PORT COUNT CYCLES
 *       COUNT connections to HOST:PORT, each a finished TLS 1.3 handshake that then sits idle
 *       (no request); at most 200 handshakes in flight. Prints "ready OK FAILED" when all are
 *       up, then waits for a line on stdin; then counts the connections the server still
 *       holds open, closes them all, prints "closed ALIVE", and waits for another line.
 *       CYCLES times; the script reads the server's memory at each pause.
 *
 *   tls_conns load HOST PORT N C [resume]
 *       N requests, each on a new connection (a handshake, "GET / HTTP/1.1" with
 *       "Connection: close", the response read to the server's close), C connections at a
 *       time. With "resume" every connection but the first C offers the newest session
 *       ticket the client got (TLS 1.3 PSK with (EC)DHE, as OpenSSL's client always offers).
 *       Prints "requests N ok OK failed F reused R proto P cipher S group G".
 *
 * Both: TLS 1.3 only, TLS_AES_128_GCM_SHA256, X25519, SNI localhost, no certificate
 * verification (the server's work is what is measured; h2load does not verify either).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum state { FREE, CONNECTING, HANDSHAKE, WRITING, READING, IDLE };

struct conn {
    int fd;
    enum state st;
    SSL *ssl;
    char resp[64];
    size_t resp_len;
};

static SSL_CTX *ctx;
static struct sockaddr_in addr;
static int ep;
static struct conn *conns;
static size_t nconns;
static int resume;
static SSL_SESSION *latest; /* the newest session the client got (load resume) */
static unsigned long ok, failed, reused, in_flight;
static char proto[32], cipher[64], group[32];

static const char request[] = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

static void watch(struct conn *c, uint32_t events, int op)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    if (epoll_ctl(ep, op, c->fd, &ev) != 0) {
        perror("epoll_ctl");
        exit(1);
    }
}

static void drop(struct conn *c, int good)
{
    if (c->ssl) {
        if (good) /* a normal end, whether the server sent close_notify or not */
            SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_free(c->ssl);
    }
    if (c->fd >= 0)
        close(c->fd); /* also removes it from the epoll set */
    c->ssl = NULL;
    c->fd = -1;
    c->st = FREE;
    in_flight--;
    if (good)
        ok++;
    else
        failed++;
}

static int start(struct conn *c)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("socket");
        return 0;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->st = CONNECTING;
    in_flight++;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EINPROGRESS) {
        perror("connect");
        drop(c, 0);
        return 0;
    }
    watch(c, EPOLLOUT, EPOLL_CTL_ADD);
    return 1;
}

/* The first connection that completes says what was negotiated; every later one must agree. */
static int negotiated(struct conn *c)
{
    const char *p = SSL_get_version(c->ssl);
    const char *s = SSL_CIPHER_get_name(SSL_get_current_cipher(c->ssl));
    int nid = SSL_get_negotiated_group(c->ssl);
    const char *g = nid ? OBJ_nid2sn(nid) : "none";
    if (!proto[0]) {
        snprintf(proto, sizeof proto, "%s", p);
        snprintf(cipher, sizeof cipher, "%s", s);
        snprintf(group, sizeof group, "%s", g);
    }
    if (strcmp(p, proto) || strcmp(s, cipher) || strcmp(g, group)) {
        fprintf(stderr, "tls_conns: negotiated %s %s %s, and before %s %s %s\n", p, s, g,
                proto, cipher, group);
        return 0;
    }
    return 1;
}

/* Runs connection C as far as it goes now. Returns 1 while it is in flight. */
static int step(struct conn *c, int idle_mode)
{
    int r, e;
    switch (c->st) {
    case CONNECTING: {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            fprintf(stderr, "tls_conns: connect: %s\n", strerror(err));
            drop(c, 0);
            return 0;
        }
        c->ssl = SSL_new(ctx);
        SSL_set_fd(c->ssl, c->fd);
        SSL_set_tlsext_host_name(c->ssl, "localhost");
        SSL_set_connect_state(c->ssl);
        if (resume && latest)
            SSL_set_session(c->ssl, latest);
        c->st = HANDSHAKE;
    }
        /* fall through */
    case HANDSHAKE:
        r = SSL_do_handshake(c->ssl);
        if (r != 1)
            break;
        if (!negotiated(c)) {
            drop(c, 0);
            return 0;
        }
        if (SSL_session_reused(c->ssl))
            reused++;
        if (idle_mode) {
            c->st = IDLE; /* no more events: it sits there until the script says */
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
            in_flight--;
            ok++;
            return 0;
        }
        c->st = WRITING;
        /* fall through */
    case WRITING:
        r = SSL_write(c->ssl, request, sizeof request - 1);
        if (r <= 0)
            break;
        c->st = READING;
        /* fall through */
    case READING:
        for (;;) {
            char buf[4096];
            r = SSL_read(c->ssl, buf, sizeof buf);
            if (r <= 0)
                break;
            size_t n = (size_t)r;
            if (n > sizeof c->resp - 1 - c->resp_len)
                n = sizeof c->resp - 1 - c->resp_len;
            memcpy(c->resp + c->resp_len, buf, n);
            c->resp_len += n;
        }
        if (resume) { /* the tickets came before the response */
            SSL_SESSION *s = SSL_get0_session(c->ssl);
            /* a copy: libssl marks a connection's session not resumable when it ends
             * without close_notify, or is freed without SSL_shutdown */
            if (s && SSL_SESSION_is_resumable(s) && (s = SSL_SESSION_dup(s))) {
                SSL_SESSION_free(latest);
                latest = s;
            }
        }
        break;
    default:
        return 0;
    }
    e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ) {
        watch(c, EPOLLIN, EPOLL_CTL_MOD);
        return 1;
    }
    if (e == SSL_ERROR_WANT_WRITE) {
        watch(c, EPOLLOUT, EPOLL_CTL_MOD);
        return 1;
    }
    if (c->st == READING && (e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL)) {
        /* the server closed after its response */
        int good = strncmp(c->resp, "HTTP/1.1 200 ", 13) == 0;
        if (!good)
            fprintf(stderr, "tls_conns: response '%.12s'\n", c->resp);
        drop(c, good);
        return 0;
    }
    unsigned long err = ERR_get_error();
    fprintf(stderr, "tls_conns: state %d: SSL error %d: %s\n", (int)c->st, e,
            err ? ERR_error_string(err, NULL) : strerror(errno));
    ERR_clear_error();
    drop(c, 0);
    return 0;
}

/* Starts connections while fewer than MAX are in flight and TODO remain; runs the loop until
 * all TODO have ended or gone idle. */
static void run(unsigned long todo, unsigned long max, int idle_mode)
{
    struct epoll_event evs[256];
    size_t next = 0;
    while (todo > 0 || in_flight > 0) {
        while (todo > 0 && in_flight < max) {
            while (conns[next].st != FREE)
                next = (next + 1) % nconns;
            start(&conns[next]);
            todo--;
        }
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n == 0) {
            fprintf(stderr, "tls_conns: 10 s without an event, %lu in flight\n", in_flight);
            exit(1);
        }
        for (int i = 0; i < n; i++)
            step(evs[i].data.ptr, idle_mode);
    }
}

static int wait_line(void)
{
    char line[64];
    return fgets(line, sizeof line, stdin) != NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "idle") && strcmp(argv[1], "load"))) {
        fprintf(stderr, "usage: %s idle HOST PORT COUNT CYCLES\n"
                        "       %s load HOST PORT N C [resume]\n", argv[0], argv[0]);
        return 2;
    }
    int idle_mode = strcmp(argv[1], "idle") == 0;
    unsigned long count = strtoul(argv[4], NULL, 10);
    unsigned long arg5 = argc > 5 ? strtoul(argv[5], NULL, 10) : 1;
    resume = !idle_mode && argc > 6 && strcmp(argv[6], "resume") == 0;
    if (count == 0 || arg5 == 0)
        return 2;

    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[3]));
    if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) {
        fprintf(stderr, "tls_conns: not an IPv4 address: %s\n", argv[2]);
        return 2;
    }

    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") ||
        !SSL_CTX_set1_groups_list(ctx, "X25519")) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF); /* a close without close_notify */

    ep = epoll_create1(EPOLL_CLOEXEC);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (idle_mode) {
        nconns = count;
        conns = calloc(nconns, sizeof *conns);
        for (unsigned long cycle = 0; conns && cycle < arg5; cycle++) {
            ok = failed = 0;
            for (size_t i = 0; i < nconns; i++)
                conns[i].st = FREE;
            run(count, 200, 1);
            printf("ready %lu %lu\n", ok, failed);
            if (!wait_line())
                return 0;
            unsigned long alive = 0;
            for (size_t i = 0; i < nconns; i++) {
                if (conns[i].st != IDLE)
                    continue;
                char b;
                /* the server's tickets may wait there; 0 is the server's close */
                ssize_t r = recv(conns[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
                if (r > 0 || (r < 0 && errno == EAGAIN))
                    alive++;
                SSL_free(conns[i].ssl);
                close(conns[i].fd);
                conns[i].ssl = NULL;
                conns[i].fd = -1;
                conns[i].st = FREE;
            }
            printf("closed %lu\n", alive);
            if (!wait_line())
                return 0;
        }
        return conns ? 0 : 1;
    }

    nconns = arg5;
    conns = calloc(nconns, sizeof *conns);
    if (!conns)
        return 1;
    run(count, arg5, 0);
    printf("requests %lu ok %lu failed %lu reused %lu proto %s cipher %s group %s\n", count, ok,
           failed, reused, proto, cipher, group);
    return failed == 0 && ok == count ? 0 : 1;
}
