/*
 * The TCP interop peers' common part (peer_common.h): command line, sockets, the data
 * pattern, the data flow of each role and the result lines. Nothing here knows TLS.
 */
#include "peer_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const struct backend *B;
static struct opts O;

/* ------------------------------------------------------------------ */
/* The pattern: byte i of a stream is byte (i mod 8) of splitmix64(seed ^ (i / 8)), so that  */
/* any stretch can be made and checked on its own. go_peer/main.go makes the same bytes.     */
/* ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The client's stream and the server's (the same on every connection: with --connect2 the
 * client's second connection is a second server's first). */
static uint64_t stream_seed(int client)
{
    return client ? 0x636c69656e740000ULL : 0x7365727665720000ULL;
}

static void pattern(uint64_t seed, uint64_t off, unsigned char *buf, size_t n)
{
    uint64_t block = UINT64_MAX, w = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t pos = off + i;
        if ((pos >> 3) != block) {
            block = pos >> 3;
            w = splitmix64(seed ^ block);
        }
        buf[i] = (unsigned char)(w >> (8 * (pos & 7)));
    }
}

/* A stream being received: its seed and how much has been checked. */
struct flow {
    uint64_t seed;
    long long off;
};

/* Checks buf against the flow's next bytes; on a mismatch fills r and returns -1. */
static int flow_check(struct flow *f, const unsigned char *buf, size_t n, struct report *r)
{
    unsigned char want[PEER_CHUNK];
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < sizeof(want) ? n - done : sizeof(want);
        pattern(f->seed, (uint64_t)(f->off + (long long)done), want, k);
        if (memcmp(want, buf + done, k) != 0) {
            size_t i = 0;
            while (want[i] == buf[done + i])
                i++;
            r->ok = 0;
            r->stage = "verify";
            snprintf(r->err, sizeof(r->err), "byte %lld of the stream is 0x%02x, not 0x%02x",
                     f->off + (long long)(done + i), buf[done + i], want[i]);
            return -1;
        }
        done += k;
    }
    f->off += (long long)n;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

static void report_init(struct report *r)
{
    memset(r, 0, sizeof(*r));
    r->ok = 1;
    r->stage = "-";
    strcpy(r->version, "-");
    strcpy(r->suite, "-");
    strcpy(r->group, "-");
    r->early = "not_sent";
    r->client_cert = "-";
    r->alert_sent = r->alert_recv = r->err_alert = -1;
}

static const char *num(char *buf, size_t len, long long v)
{
    if (v < 0)
        return "n/a";
    snprintf(buf, len, "%lld", v);
    return buf;
}

static const char *alert_str(char *buf, size_t len, int v)
{
    if (v < 0)
        return "-";
    snprintf(buf, len, "%d", v);
    return buf;
}

static void print_fields(const struct report *r)
{
    char b[11][24];
    const char *close = r->close_sent && r->close_recv ? "ok"
                        : r->close_sent                 ? "sent_only"
                        : r->close_recv                 ? "received_only"
                                                        : "none";
    int alert = r->alert_sent >= 0 ? r->alert_sent : r->alert_recv;
    printf(" version=%s suite=%s group=%s hrr=%s resumed=%s early=%s early_bytes=%lld"
           " bytes_in=%lld bytes_out=%lld keyupdates_sent=%s keyupdates_recv=%s"
           " certreq_sent=%s certreq_recv=%s tickets=%s client_cert=%s close=%s alert=%s"
           " alert_sent=%s alert_recv=%s err_alert=%s",
           r->version, r->suite, r->group, num(b[0], 24, r->hrr), num(b[1], 24, r->resumed),
           r->early, r->early_bytes, r->bytes_in, r->bytes_out, num(b[2], 24, r->ku_sent),
           num(b[3], 24, r->ku_recv), num(b[4], 24, r->certreq_sent),
           num(b[5], 24, r->certreq_recv), num(b[6], 24, r->tickets_recv), r->client_cert,
           close, alert_str(b[7], 24, alert), alert_str(b[8], 24, r->alert_sent),
           alert_str(b[9], 24, r->alert_recv), alert_str(b[10], 24, r->err_alert));
}

/* "conn N ok|fail ..." for each connection; "result ok|fail ..." once at the end. */
static void print_conn(int conn, const struct report *r)
{
    if (r->ok) {
        printf("conn %d ok", conn);
        print_fields(r);
        printf("\n");
    } else {
        printf("conn %d fail stage=%s", conn, r->stage);
        print_fields(r);
        printf(" err=%s\n", r->err[0] ? r->err : "-");
    }
    fflush(stdout);
}

static int print_result(const struct report *r)
{
    if (r->ok) {
        printf("result ok");
        print_fields(r);
        printf("\n");
    } else {
        printf("result fail %s", r->stage);
        print_fields(r);
        printf(" err=%s\n", r->err[0] ? r->err : "-");
    }
    fflush(stdout);
    return r->ok ? 0 : 1;
}

__attribute__((format(printf, 3, 4))) static int fail(struct report *r, const char *stage,
                                                     const char *fmt, ...)
{
    va_list ap;
    r->ok = 0;
    r->stage = stage;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
    return -1;
}

const char *peer_group_name(const char *n)
{
    static const struct {
        const char *from, *to;
    } names[] = {
        {"prime256v1", "P-256"}, {"secp256r1", "P-256"}, {"P-256", "P-256"},
        {"secp384r1", "P-384"},  {"P-384", "P-384"},     {"secp521r1", "P-521"},
        {"P-521", "P-521"},      {"x25519", "X25519"},   {"x448", "X448"},
    };
    if (n == NULL)
        return "-";
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(n, names[i].from) == 0)
            return names[i].to;
    return n;
}

/* ------------------------------------------------------------------ */
/* Sockets                                                             */
/* ------------------------------------------------------------------ */

/* Blocking socket; a read or write that waits longer than the timeout fails instead. */
static void sock_options(int fd)
{
    struct timeval tv = {.tv_sec = O.timeout, .tv_usec = 0};
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_connect(const char *hostport, struct report *r)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host))
        return fail(r, "connect", "bad address %s", hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int e = getaddrinfo(host, colon + 1, &hints, &ai);
    if (e != 0)
        return fail(r, "connect", "getaddrinfo: %s", gai_strerror(e));
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        int saved = errno;
        freeaddrinfo(ai);
        if (fd >= 0)
            close(fd);
        return fail(r, "connect", "connect: %s", strerror(saved));
    }
    freeaddrinfo(ai);
    sock_options(fd);
    return fd;
}

static int tcp_listen(int port, int *bound)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t len = sizeof(a);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("tls peer: listen");
        close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

static int tcp_accept(int lfd, struct report *r)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    int n = poll(&p, 1, O.timeout * 1000);
    if (n <= 0)
        return fail(r, "accept", "no connection within %d s%s", O.timeout,
                    n < 0 ? " (poll failed)" : "");
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return fail(r, "accept", "accept: %s", strerror(errno));
    sock_options(fd);
    return fd;
}

/* ------------------------------------------------------------------ */
/* Data flow                                                           */
/* ------------------------------------------------------------------ */

/* Before each write: a KeyUpdate (update_requested) once bytes_out reaches the next multiple
 * of --key-update-after, --key-updates times in all. */
static int maybe_key_update(struct peer_conn *c, struct report *r, int *done)
{
    if (O.key_update_after <= 0 || *done >= O.key_updates)
        return 0;
    if (r->bytes_out < (long long)(*done + 1) * O.key_update_after)
        return 0;
    if (B->key_update(c) < 0)
        return -1;
    (*done)++;
    return 0;
}

/* Reads and checks until the flow has reached `until` bytes. */
static int read_until(struct peer_conn *c, struct report *r, struct flow *f, long long until,
                      unsigned char *buf)
{
    while (f->off < until) {
        long n = B->read(c, buf, PEER_CHUNK);
        if (n < 0)
            return -1;
        if (n == 0) {
            r->close_recv = 1;
            return fail(r, "read", "close_notify after %lld of %lld bytes", f->off, until);
        }
        if (flow_check(f, buf, (size_t)n, r) < 0)
            return -1;
        r->bytes_in += n;
    }
    return 0;
}

/* Sends close_notify first (then waits for the peer's), or waits for the peer's and replies.
 * Data that comes meanwhile belongs to flow f. */
static int close_phase(struct peer_conn *c, struct report *r, int first, struct flow *f,
                       unsigned char *buf)
{
    if (first) {
        if (B->shutdown(c) < 0)
            return -1;
        r->close_sent = 1;
    }
    for (;;) {
        long n = B->read(c, buf, PEER_CHUNK);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        if (flow_check(f, buf, (size_t)n, r) < 0)
            return -1;
        r->bytes_in += n;
    }
    r->close_recv = 1;
    if (!first) {
        if (B->shutdown(c) < 0)
            return -1;
        r->close_sent = 1;
    }
    return 0;
}

static int client_conn(struct peer_conn *c, struct report *r)
{
    unsigned char buf[PEER_CHUNK];
    uint64_t seed = stream_seed(1);
    long long early = O.early_data, total = early + O.send, off = 0;
    struct flow echo = {seed, 0}, push = {stream_seed(0), 0};
    int early_sent = 0, ku_done = 0;

    for (long long e = 0; e < early;) {
        size_t n = (size_t)(early - e < PEER_EARLY_CHUNK ? early - e : PEER_EARLY_CHUNK);
        pattern(seed, (uint64_t)e, buf, n);
        int rc = B->early_write(c, buf, n);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (e == 0)
                break; /* no session allows early data: all of it goes after the handshake */
            return fail(r, "early_data", "the session took %lld of %lld bytes of early data", e,
                        early);
        }
        e += (long long)n;
        early_sent = 1;
        r->early_bytes = e;
    }
    if (B->handshake(c, NULL) < 0)
        return -1;
    B->describe(c);
    if (early_sent && strcmp(r->early, "accepted") == 0)
        off = early; /* otherwise (rejected) it is sent again */
    r->bytes_out = off;
    while (off < total) {
        if (maybe_key_update(c, r, &ku_done) < 0)
            return -1;
        size_t n = (size_t)(total - off < PEER_CHUNK ? total - off : PEER_CHUNK);
        pattern(seed, (uint64_t)off, buf, n);
        if (B->write(c, buf, n) < 0)
            return -1;
        off += (long long)n;
        r->bytes_out = off;
        if (O.expect_echo && read_until(c, r, &echo, off, buf) < 0)
            return -1;
    }
    if (O.expect_echo && read_until(c, r, &echo, total, buf) < 0)
        return -1;
    if (O.expect > 0 && read_until(c, r, &push, O.expect, buf) < 0)
        return -1;
    if (close_phase(c, r, !O.wait_close, O.expect_echo ? &echo : &push, buf) < 0)
        return -1;
    long long want = (O.expect_echo ? total : 0) + (O.expect > 0 ? O.expect : 0);
    if (r->bytes_in != want)
        return fail(r, "verify", "received %lld bytes, expected %lld", r->bytes_in, want);
    return 0;
}

/* The server's incoming stream; with --echo what it takes waits in pend to be sent back. */
struct server_in {
    struct sink sk;
    struct flow in;
    struct report *r;
    unsigned char *pend;
    size_t pend_len, pend_cap;
};

static int server_take(struct sink *sk, const unsigned char *buf, size_t n)
{
    struct server_in *s = (struct server_in *)sk;
    if (flow_check(&s->in, buf, n, s->r) < 0)
        return -1;
    s->r->bytes_in += (long long)n;
    if (!O.echo)
        return 0;
    if (s->pend_len + n > s->pend_cap) {
        size_t cap = (s->pend_len + n) * 2;
        unsigned char *p = realloc(s->pend, cap);
        if (p == NULL)
            return fail(s->r, "memory", "out of memory");
        s->pend = p;
        s->pend_cap = cap;
    }
    memcpy(s->pend + s->pend_len, buf, n);
    s->pend_len += n;
    return 0;
}

/* Writes what is pending (echo), a record at a time, with KeyUpdates on the way. */
static int server_flush(struct peer_conn *c, struct server_in *s, int *ku_done)
{
    size_t done = 0;
    while (done < s->pend_len) {
        if (maybe_key_update(c, s->r, ku_done) < 0)
            return -1;
        size_t n = s->pend_len - done < PEER_CHUNK ? s->pend_len - done : PEER_CHUNK;
        if (B->write(c, s->pend + done, n) < 0)
            return -1;
        done += n;
        s->r->bytes_out += (long long)n;
    }
    s->pend_len = 0;
    return 0;
}

static int server_conn(struct peer_conn *c, struct report *r)
{
    unsigned char buf[PEER_CHUNK];
    struct server_in s = {.sk = {server_take}, .in = {stream_seed(1), 0}, .r = r};
    int ku_done = 0, pha_requested = 0, cert_in_handshake = 0, rc = -1;
    uint64_t seed = stream_seed(0);

    r->client_cert = "none";
    if (B->handshake(c, &s.sk) < 0)
        goto out;
    r->early_bytes = r->bytes_in;
    B->describe(c);
    cert_in_handshake = B->peer_cert_ok(c);
    if (cert_in_handshake)
        r->client_cert = "handshake";
    if (server_flush(c, &s, &ku_done) < 0)
        goto out;
    for (long long off = 0; off < O.send;) {
        if (maybe_key_update(c, r, &ku_done) < 0)
            goto out;
        size_t n = (size_t)(O.send - off < PEER_CHUNK ? O.send - off : PEER_CHUNK);
        pattern(seed, (uint64_t)off, buf, n);
        if (B->write(c, buf, n) < 0)
            goto out;
        off += (long long)n;
        r->bytes_out = off;
    }
    if (O.close_first) {
        if (B->shutdown(c) < 0)
            goto out;
        r->close_sent = 1;
    }
    for (;;) {
        long n = B->read(c, buf, PEER_CHUNK);
        if (n < 0)
            goto out;
        if (n == 0)
            break;
        if (server_take(&s.sk, buf, (size_t)n) < 0)
            goto out;
        if (O.post_handshake_auth && !pha_requested) {
            pha_requested = 1;
            if (B->request_client_cert(c, &s.sk) < 0)
                goto out;
        }
        if (server_flush(c, &s, &ku_done) < 0)
            goto out;
    }
    r->close_recv = 1;
    if (!O.close_first) {
        if (B->shutdown(c) < 0)
            goto out;
        r->close_sent = 1;
    }
    if (!cert_in_handshake && pha_requested && B->peer_cert_ok(c))
        r->client_cert = "post_handshake";
    if (O.expect_in >= 0 && r->bytes_in != O.expect_in) {
        fail(r, "verify", "received %lld bytes, expected %lld", r->bytes_in, O.expect_in);
        goto out;
    }
    rc = 0;
out:
    free(s.pend);
    return rc;
}

static int run_client(void)
{
    struct report r;
    int conns = O.resume ? 2 : 1;
    for (int conn = 1; conn <= conns; conn++) {
        report_init(&r);
        const char *addr = conn == 2 && O.connect2 != NULL ? O.connect2 : O.connect;
        int fd = tcp_connect(addr, &r);
        if (fd >= 0) {
            struct peer_conn *c = B->open(&O, fd, conn, &r);
            if (c != NULL) {
                client_conn(c, &r);
                B->close(c);
            }
            close(fd);
        }
        print_conn(conn, &r);
        if (!r.ok)
            break;
    }
    return print_result(&r);
}

static int run_server(void)
{
    struct report r;
    int port = 0, lfd = tcp_listen(O.port, &port);
    if (lfd < 0)
        return 1;
    printf("port %d\n", port);
    fflush(stdout);
    report_init(&r);
    for (int conn = 1; conn <= O.connections; conn++) {
        report_init(&r);
        int fd = tcp_accept(lfd, &r);
        if (fd >= 0) {
            struct peer_conn *c = B->open(&O, fd, conn, &r);
            if (c != NULL) {
                server_conn(c, &r);
                B->close(c);
            }
            close(fd);
        }
        print_conn(conn, &r);
        if (!r.ok)
            break;
    }
    close(lfd);
    return print_result(&r);
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s server --port P --cert F --key F [--connections N] [--echo] [--send N]\n"
            "           [--expect N] [--max-early-data N] [--reject-early-data-from N]\n"
            "           [--require-client-cert] [--post-handshake-auth] [--close-first]\n"
            "           [--ca F] [common options]\n"
            "       %s client --connect HOST:PORT --ca F [--connect2 HOST:PORT] [--servername S]\n"
            "           [--send N] [--expect-echo] [--expect N] [--resume] [--early-data N]\n"
            "           [--client-cert F --client-key F] [--post-handshake-auth] [--wait-close]\n"
            "           [common options]\n"
            "       %s version\n"
            "common: [--ciphersuites S] [--groups G] [--tls12-only] [--tls13-only]\n"
            "        [--key-update-after N [--key-updates K]] [--timeout S] [--verbose]\n"
            "N accepts a k or m suffix (1024, 1048576).\n",
            prog, prog, prog);
}

static int size_arg(const char *s, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse(int argc, char **argv)
{
    memset(&O, 0, sizeof(O));
    O.connections = 1;
    O.max_early_data = -1;
    O.expect_in = -1;
    O.servername = "localhost";
    O.timeout = 15;
    if (argc < 2)
        return -1;
    if (strcmp(argv[1], "server") == 0)
        O.server = 1;
    else if (strcmp(argv[1], "client") != 0)
        return -1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long n = 0;
#define FLAG(name, field)                                                                     \
    if (strcmp(a, name) == 0) {                                                               \
        O.field = 1;                                                                          \
        continue;                                                                             \
    }
#define STR(name, field)                                                                      \
    if (strcmp(a, name) == 0) {                                                               \
        if (v == NULL)                                                                        \
            return -1;                                                                        \
        O.field = v;                                                                          \
        i++;                                                                                  \
        continue;                                                                             \
    }
#define SIZE(name, field)                                                                     \
    if (strcmp(a, name) == 0) {                                                               \
        if (v == NULL || size_arg(v, &n) != 0)                                                \
            return -1;                                                                        \
        O.field = n;                                                                          \
        i++;                                                                                  \
        continue;                                                                             \
    }
#define INT(name, field)                                                                      \
    if (strcmp(a, name) == 0) {                                                               \
        if (v == NULL || size_arg(v, &n) != 0 || n > 65535)                                   \
            return -1;                                                                        \
        O.field = (int)n;                                                                     \
        i++;                                                                                  \
        continue;                                                                             \
    }
        INT("--port", port)
        INT("--connections", connections)
        FLAG("--echo", echo)
        SIZE("--send", send)
        SIZE("--expect", expect)
        SIZE("--max-early-data", max_early_data)
        INT("--reject-early-data-from", reject_early_from)
        FLAG("--require-client-cert", require_client_cert)
        FLAG("--post-handshake-auth", post_handshake_auth)
        FLAG("--close-first", close_first)
        STR("--connect", connect)
        STR("--connect2", connect2)
        STR("--servername", servername)
        FLAG("--expect-echo", expect_echo)
        FLAG("--resume", resume)
        SIZE("--early-data", early_data)
        STR("--client-cert", client_cert)
        STR("--client-key", client_key)
        FLAG("--wait-close", wait_close)
        STR("--cert", cert)
        STR("--key", key)
        STR("--ca", ca)
        STR("--ciphersuites", ciphersuites)
        STR("--groups", groups)
        FLAG("--tls12-only", tls12_only)
        FLAG("--tls13-only", tls13_only)
        SIZE("--key-update-after", key_update_after)
        INT("--key-updates", key_updates)
        INT("--timeout", timeout)
        FLAG("--verbose", verbose)
#undef FLAG
#undef STR
#undef SIZE
#undef INT
        fprintf(stderr, "unknown option %s\n", a);
        return -1;
    }
    if (O.server) {
        /* --expect on a server: the bytes it must receive in all */
        O.expect_in = O.expect > 0 ? O.expect : -1;
        O.expect = 0;
        if (O.cert == NULL || O.key == NULL || O.connections < 1)
            return -1;
    } else {
        if (O.connect == NULL || (O.expect_echo && O.expect > 0))
            return -1;
        if ((O.client_cert == NULL) != (O.client_key == NULL))
            return -1;
    }
    if (O.key_update_after > 0 && O.key_updates == 0)
        O.key_updates = 1;
    if (O.tls12_only && O.tls13_only)
        return -1;
    return 0;
}

int peer_main(int argc, char **argv, const struct backend *b)
{
    B = b;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        printf("lib=%s peer=%s\n", b->library(), b->name);
        return 0;
    }
    if (parse(argc, argv) != 0) {
        usage(argv[0]);
        return 2;
    }
    if (B->setup(&O) != 0) {
        printf("result fail setup version=- err=see stderr\n");
        return 1;
    }
    return O.server ? run_server() : run_client();
}
