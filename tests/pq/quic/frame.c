/* The framing, command line, wire reading, result line and the shared SSL_CTX of frame.h. */
#include "frame.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s client|server --in FIFO --out FIFO [--groups LIST] [--cert PEM --key PEM]"
            " [--ca PEM] [--tp STRING] [--timeout SECONDS]\n",
            prog);
    exit(2);
}

void side_parse(int argc, char **argv, const char *impl, struct side_opts *o)
{
    static char tp[64];
    memset(o, 0, sizeof(*o));
    o->timeout = 10;
    if (argc < 2)
        usage(argv[0]);
    if (strcmp(argv[1], "server") == 0)
        o->server = 1;
    else if (strcmp(argv[1], "client") != 0)
        usage(argv[0]);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            usage(argv[0]);
        const char *v = argv[++i];
        if (strcmp(a, "--in") == 0)
            o->in = v;
        else if (strcmp(a, "--out") == 0)
            o->out = v;
        else if (strcmp(a, "--groups") == 0)
            o->groups = v;
        else if (strcmp(a, "--cert") == 0)
            o->cert = v;
        else if (strcmp(a, "--key") == 0)
            o->key = v;
        else if (strcmp(a, "--ca") == 0)
            o->ca = v;
        else if (strcmp(a, "--tp") == 0)
            o->tp = v;
        else if (strcmp(a, "--timeout") == 0)
            o->timeout = atoi(v);
        else
            usage(argv[0]);
    }
    if (o->in == NULL || o->out == NULL || (o->server && (o->cert == NULL || o->key == NULL)))
        usage(argv[0]);
    if (o->tp == NULL) {
        snprintf(tp, sizeof(tp), "tp-%s-%s", impl, o->server ? "server" : "client");
        o->tp = tp;
    }
}

int side_open(const struct side_opts *o, int *in_fd, int *out_fd)
{
    if (o->server) {
        *in_fd = open(o->in, O_RDONLY | O_CLOEXEC);
        *out_fd = *in_fd < 0 ? -1 : open(o->out, O_WRONLY | O_CLOEXEC);
    } else {
        *out_fd = open(o->out, O_WRONLY | O_CLOEXEC);
        *in_fd = *out_fd < 0 ? -1 : open(o->in, O_RDONLY | O_CLOEXEC);
    }
    return *in_fd >= 0 && *out_fd >= 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

int frame_write(int fd, uint8_t kind, uint8_t level, const void *p, size_t len)
{
    uint8_t h[6] = {kind, level, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                    (uint8_t)len};
    if (len > sizeof(((struct frame *)0)->data))
        return 0;
    return write_all(fd, h, sizeof(h)) && (len == 0 || write_all(fd, p, len));
}

/* 1 all n bytes, 0 end of file before the first, -1 otherwise */
static int read_all(int fd, uint8_t *p, size_t n, int timeout_s)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, timeout_s * 1000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "frame: %s\n", r == 0 ? "no record in time" : strerror(errno));
            return -1;
        }
        ssize_t m = read(fd, p + got, n - got);
        if (m < 0 && errno == EINTR)
            continue;
        if (m < 0)
            return -1;
        if (m == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)m;
    }
    return 1;
}

int frame_read(int fd, struct frame *f, int timeout_s)
{
    uint8_t h[6];
    int r = read_all(fd, h, sizeof(h), timeout_s);
    if (r <= 0)
        return r;
    f->kind = h[0];
    f->level = h[1];
    f->len = (uint32_t)h[2] << 24 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 8 | h[5];
    if (f->len > sizeof(f->data) || f->level > 3)
        return -1;
    return f->len == 0 ? 1 : read_all(fd, f->data, f->len, timeout_s) == 1 ? 1 : -1;
}

void secrets_set(struct secrets *s, int server_role, int level, int write, const uint8_t *p,
                 size_t len)
{
    if (level < 0 || level > 3 || p == NULL || len > 64)
        return;
    /* a client writes with the client's secret, a server with the server's */
    int is_client_secret = server_role ? !write : write;
    memcpy(is_client_secret ? s->client[level] : s->server[level], p, len);
    *(is_client_secret ? &s->client_len[level] : &s->server_len[level]) = len;
}

static void sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
    unsigned int len = 32;
    EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

int secrets_ap_digest(const struct secrets *s, uint8_t out[64])
{
    if (s->client_len[3] == 0 || s->server_len[3] == 0)
        return 0;
    sha256(s->client[3], s->client_len[3], out);
    sha256(s->server[3], s->server_len[3], out + 32);
    return 1;
}

static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

/* A ServerHello body: its key share's group (the selected group of a HelloRetryRequest). */
static void server_hello(struct wire *w, const uint8_t *b, size_t n)
{
    size_t at = 2 + 32;
    if (n < at + 1)
        return;
    int is_hrr = memcmp(b + 2, hrr_random, 32) == 0;
    at += 1 + b[at];      /* legacy_session_id_echo */
    at += 2 + 1;          /* cipher_suite, legacy_compression_method */
    if (n < at + 2)
        return;
    size_t end = at + 2 + ((size_t)b[at] << 8 | b[at + 1]);
    at += 2;
    if (end > n)
        return;
    while (at + 4 <= end) {
        unsigned type = (unsigned)b[at] << 8 | b[at + 1];
        size_t len = (size_t)b[at + 2] << 8 | b[at + 3];
        at += 4;
        if (at + len > end)
            return;
        if (type == 51 && len >= 2) { /* key_share */
            if (is_hrr)
                w->hrr = 1;
            else
                w->group = b[at] << 8 | b[at + 1];
        }
        at += len;
    }
}

void wire_feed(struct wire *w, const uint8_t *p, size_t n)
{
    if (n > sizeof(w->buf) - w->len)
        n = sizeof(w->buf) - w->len;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    /* re-read the whole stream: it is small, and messages may arrive in pieces */
    w->hrr = 0;
    w->group = 0;
    for (size_t at = 0; at + 4 <= w->len;) {
        size_t len = (size_t)w->buf[at + 1] << 16 | (size_t)w->buf[at + 2] << 8 | w->buf[at + 3];
        if (at + 4 + len > w->len)
            break;
        if (w->buf[at] == 2)
            server_hello(w, w->buf + at + 4, len);
        at += 4 + len;
    }
}

const char *group_name(int id)
{
    static char buf[8];
    switch (id) {
    case 0x11ec:
        return "X25519MLKEM768";
    case 0x11eb:
        return "SecP256r1MLKEM768";
    case 0x11ed:
        return "SecP384r1MLKEM1024";
    case 0x0201:
        return "MLKEM768";
    case 0x0202:
        return "MLKEM1024";
    case 0x001d:
        return "X25519";
    case 0x0017:
        return "P-256";
    case 0x0018:
        return "P-384";
    case 0:
        return "none";
    }
    snprintf(buf, sizeof(buf), "0x%04x", (unsigned)id & 0xffff);
    return buf;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
    out[2 * n] = 0;
}

/* SHA-256 of a secret in hex, "none" if it was never given */
static const char *secret_hash(char out[65], const uint8_t *p, size_t n)
{
    uint8_t d[32];
    if (n == 0)
        return "none";
    sha256(p, n, d);
    hex(out, d, 32);
    return out;
}

/* Printable bytes as they are, anything else as hex */
static void printable(char *out, size_t cap, const uint8_t *p, size_t n)
{
    int ok = n > 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] > '~')
            ok = 0;
    if (ok && n < cap) {
        memcpy(out, p, n);
        out[n] = 0;
    } else if (n == 0) {
        snprintf(out, cap, "none");
    } else {
        if (n > (cap - 4) / 2)
            n = (cap - 4) / 2;
        memcpy(out, "0x", 2);
        hex(out + 2, p, n);
    }
}

int side_report(const char *impl, const struct side_opts *o, const char *group,
                const struct wire *w, const char *suite, const char *alpn, const uint8_t *peer_tp,
                size_t peer_tp_len, const struct secrets *s, const uint8_t *peer_digest,
                size_t app_in)
{
    char h[4][65], tp[256];
    uint8_t mine[64];
    const char *pd = "none";
    if (peer_digest != NULL)
        pd = secrets_ap_digest(s, mine) && memcmp(mine, peer_digest, 64) == 0 ? "match"
                                                                               : "mismatch";
    printable(tp, sizeof(tp), peer_tp, peer_tp_len);
    printf("result ok impl=%s role=%s group=%s wire_group=%s hrr=%d suite=%s alpn=%s tp=%s "
           "peer_tp=%s c_hs=%s s_hs=%s c_ap=%s s_ap=%s peer_digest=%s app_in=%zu\n",
           impl, o->server ? "server" : "client", group != NULL ? group : "none",
           group_name(w->group), w->hrr, suite != NULL ? suite : "none",
           alpn != NULL && *alpn ? alpn : "none", o->tp, tp,
           secret_hash(h[0], s->client[2], s->client_len[2]),
           secret_hash(h[1], s->server[2], s->server_len[2]),
           secret_hash(h[2], s->client[3], s->client_len[3]),
           secret_hash(h[3], s->server[3], s->server_len[3]), pd, app_in);
    fflush(stdout);
    return 0;
}

int side_fail(const char *fmt, ...)
{
    va_list ap;
    printf("result fail ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return 1;
}

/* The server's ALPN choice: h3, the only protocol either side speaks. */
static int select_h3(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    if (SSL_select_next_proto((unsigned char **)out, outlen, h3, sizeof(h3), in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    return SSL_TLSEXT_ERR_OK;
}

/* A server's certificate and ALPN choice, or a client's ALPN offer and trust anchor. */
static int side_ctx_role(SSL_CTX *ctx, const struct side_opts *o)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    if (o->server) {
        SSL_CTX_set_alpn_select_cb(ctx, select_h3, NULL);
        return SSL_CTX_use_certificate_chain_file(ctx, o->cert) == 1 &&
               SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) == 1;
    }
    if (SSL_CTX_set_alpn_protos(ctx, h3, sizeof(h3)) != 0)
        return 0;
    if (o->ca == NULL)
        return 1;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return SSL_CTX_load_verify_locations(ctx, o->ca, NULL) == 1;
}

SSL_CTX *side_ctx(const struct side_opts *o, const char *impl)
{
    SSL_CTX *ctx = SSL_CTX_new(o->server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION))
        goto err;
    if (o->groups != NULL && SSL_CTX_set1_groups_list(ctx, o->groups) != 1) {
        fprintf(stderr, "%s_side: groups %s refused\n", impl, o->groups);
        goto err;
    }
    if (!side_ctx_role(ctx, o))
        goto err;
    return ctx;
err:
    SSL_CTX_free(ctx);
    return NULL;
}
