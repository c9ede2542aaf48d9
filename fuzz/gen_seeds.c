/*
 * Seed corpora from real in-memory handshakes in the fuzzing build (not
 * committed; make fuzz writes them under build-fuzz/corpus): for each
 * configuration of fuzz_common.h used below, what the client and the server
 * received, in fuzz_play's records (fuzz_client, fuzz_server, and fuzz_provide's
 * own format), and the byte streams each side received in the same handshake
 * over TCP, with application data, KeyUpdate and close_notify after it, in
 * fuzz_tcp_play's segments (fuzz_record; each replayed and checked to take its
 * path); the session's DER and PEM (fuzz_session); tickets with and
 * without the application's key callback (fuzz_ticket); protected packets and
 * a Retry (fuzz_packet); ngtcp2 Retry and regular tokens (fuzz_token, when
 * built with the ngtcp2 backend); the server's chain compressed with each
 * algorithm (fuzz_cert_comp). Usage: gen_seeds CORPUS_DIR
 */
#define QTLS_FUZZ_SEEDS
#include <stdio.h>

#include "fuzz_common.h"
#include "fuzz_packet.h"
#ifdef QTLS_FUZZ_NGTCP2
#include "fuzz_token.h"
#endif

#include <openssl/pem.h>

static const char *dir;

void seed_put(const char *target, const char *name, const uint8_t *a, size_t alen)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(a, 1, alen, f) != alen || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

struct buf {
    uint8_t *p;
    size_t n;
};

static void buf_add(struct buf *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->n + n + 1);
    if (b->p == NULL)
        abort();
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

/* What `from` wrote, as fuzz_play records into `rec` and fuzz_provide records into `prov`. */
static void record(const struct mock_side *from, struct buf *rec, struct buf *prov)
{
    for (int l = 0; l < 4; l++) {
        for (size_t off = 0; off < from->out_len[l];) {
            size_t k = from->out_len[l] - off;
            uint8_t h[3] = {(uint8_t)l, (uint8_t)(k >> 8), (uint8_t)k};
            buf_add(rec, h, 3);
            buf_add(rec, from->out[l] + off, k);
            off += k;
        }
        for (size_t off = 0; off < from->out_len[l];) {
            size_t k = from->out_len[l] - off > 255 ? 255 : from->out_len[l] - off;
            uint8_t h[2] = {(uint8_t)(l | (off + k == from->out_len[l] ? 0x80 : 0)), (uint8_t)k};
            buf_add(prov, h, 2);
            buf_add(prov, from->out[l] + off, k);
            off += k;
        }
    }
}

/* One handshake of configuration `cfg`, recorded; returns the client's session. */
static SSL_SESSION *recorded_handshake(unsigned cfg, const char *name)
{
    struct mock_pair p;
    struct buf to_client = {0}, to_server = {0}, prov_client = {0}, prov_server = {0};
    uint8_t c = (uint8_t)cfg, role_client = 0, role_server = 1;
    buf_add(&to_client, &c, 1);
    buf_add(&to_server, &c, 1);
    buf_add(&prov_client, &role_client, 1);
    buf_add(&prov_server, &role_server, 1);
    fuzz_ssl_new_cfg(&p.client, 0, cfg);
    fuzz_ssl_new_cfg(&p.server, 1, cfg);
    int done = 0;
    for (int round = 0; round < 16 && !done; round++) {
        int rc = SSL_do_handshake(p.client.ssl);
        if (rc != 1 && SSL_get_error(p.client.ssl, rc) != SSL_ERROR_WANT_READ)
            break;
        record(&p.client, &to_server, &prov_server);
        if (!mock_deliver(&p.client, &p.server, 0))
            break;
        int rs = SSL_do_handshake(p.server.ssl);
        if (rs != 1 && SSL_get_error(p.server.ssl, rs) != SSL_ERROR_WANT_READ)
            break;
        record(&p.server, &to_client, &prov_client);
        if (!mock_deliver(&p.server, &p.client, 0))
            break;
        if (rc == 1 && rs == 1)
            done = SSL_process_quic_post_handshake(p.client.ssl) == 1;
    }
    if (!done) {
        fprintf(stderr, "gen_seeds: handshake %s failed (alerts: client %d, server %d)\n", name,
                p.client.alert, p.server.alert);
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    /* A seed is only worth its name if it takes the path: resumed, 0-RTT accepted (not after
     * HelloRetryRequest, which rejects it by design). */
    int want_early = (cfg & FUZZ_EARLY) && (cfg & FUZZ_RESUME) && !(cfg & FUZZ_HRR);
    if (((cfg & FUZZ_RESUME) && !SSL_session_reused(p.server.ssl)) ||
        (want_early && SSL_get_early_data_status(p.server.ssl) != SSL_EARLY_DATA_ACCEPTED)) {
        fprintf(stderr, "gen_seeds: handshake %s did not %s (early data reason: server %d)\n",
                name, SSL_session_reused(p.server.ssl) ? "accept 0-RTT" : "resume",
                (int)SSL_get_early_data_reason(p.server.ssl));
        exit(1);
    }
    seed_put("fuzz_client", name, to_client.p, to_client.n);
    seed_put("fuzz_server", name, to_server.p, to_server.n);
    if (cfg == 0 || cfg == FUZZ_HRR) {
        char n2[64];
        snprintf(n2, sizeof(n2), "client-%s", name);
        seed_put("fuzz_provide", n2, prov_client.p, prov_client.n);
        snprintf(n2, sizeof(n2), "server-%s", name);
        seed_put("fuzz_provide", n2, prov_server.p, prov_server.n);
    }
    free(to_client.p);
    free(to_server.p);
    free(prov_client.p);
    free(prov_server.p);
    SSL_SESSION *s = SSL_get1_session(p.client.ssl);
    fuzz_side_free(&p.client);
    fuzz_side_free(&p.server);
    return s;
}

/* ---- fuzz_record: TLS over TCP ---- */

struct tcp_rec {
    const struct fuzz_tcp *client;
    struct buf to_client, to_server; /* the seeds: [cfg] [opt] segments */
};

/* A segment as the receiving side's seed holds it (fuzz_tcp_pump's callback). */
static void tcp_segment(void *arg, const struct fuzz_tcp *to, uint8_t ctl, const uint8_t *p,
                        size_t n)
{
    struct tcp_rec *r = arg;
    uint8_t h[3] = {ctl, (uint8_t)(n >> 8), (uint8_t)n};
    struct buf *b = to == r->client ? &r->to_client : &r->to_server;
    buf_add(b, h, sizeof(h));
    if (n > 0)
        buf_add(b, p, n);
}

/* `t` acts as ctl says (KeyUpdate, a write, SSL_shutdown) with no new input: an empty segment. */
static void tcp_act(struct tcp_rec *r, struct fuzz_tcp *t, uint8_t ctl)
{
    tcp_segment(r, t, ctl, NULL, 0);
    fuzz_tcp_step(t, ctl);
}

/* The same stream in segments of at most `k` bytes; a segment's actions stay on its last
   piece, its reading settings on every piece. */
static struct buf tcp_resegment(const struct buf *in, size_t k)
{
    struct buf out = {0};
    buf_add(&out, in->p, 2);
    for (size_t off = 2; off + 3 <= in->n;) {
        uint8_t ctl = in->p[off];
        size_t n = (size_t)in->p[off + 1] << 8 | in->p[off + 2];
        const uint8_t *p = in->p + off + 3;
        off += 3 + n;
        do {
            size_t m = n < k ? n : k;
            uint8_t last = m == n, h[3] = {(uint8_t)(last ? ctl : ctl & (FUZZ_SEG_SIZE |
                                                                         FUZZ_SEG_PEEK |
                                                                         FUZZ_SEG_ECHO)),
                                           0, (uint8_t)m};
            buf_add(&out, h, sizeof(h));
            if (m > 0)
                buf_add(&out, p, m);
            p += m;
            n -= m;
        } while (n > 0);
    }
    return out;
}

/* Replays a fuzz_record seed and fails unless it takes the path its configuration names, with
   `app` bytes of application data read and `early_bytes` of early data (0-RTT accepted). */
static void tcp_check(const char *seed, const struct buf *b, size_t app, size_t early_bytes)
{
    struct fuzz_tcp_facts f;
    unsigned cfg = b->p[0];
    int server = (b->p[1] & FUZZ_TCP_SERVER) != 0;
    int early = (cfg & FUZZ_EARLY) && (cfg & FUZZ_RESUME), hrr = (cfg & FUZZ_HRR) != 0;
    const char *miss = NULL;
    memset(&f, 0, sizeof(f));
    fuzz_tcp_play(b->p, b->n, &f);
    if (!f.done)
        miss = "the handshake";
    else if (!(cfg & FUZZ_RESUME) == !!f.resumed)
        miss = (cfg & FUZZ_RESUME) ? "resumption" : "a full handshake";
    else if (hrr && f.hs_in[server ? SSL3_MT_CLIENT_HELLO : SSL3_MT_SERVER_HELLO] != 2)
        miss = "HelloRetryRequest";
    else if (early && !hrr && f.early_status != SSL_EARLY_DATA_ACCEPTED)
        miss = "0-RTT accepted";
    else if (early && !hrr && server &&
             (f.early_read != early_bytes || f.hs_in[SSL3_MT_END_OF_EARLY_DATA] != 1))
        miss = "early data read and EndOfEarlyData";
    else if (early && !server && f.early_written != early_bytes)
        miss = "early data written";
    else if (early && hrr && (f.early_status != SSL_EARLY_DATA_REJECTED || f.early_read != 0))
        miss = "0-RTT rejected (its records skipped)";
    else if ((cfg & FUZZ_CLIENT_AUTH) && server && !f.peer_cert)
        miss = "the client's certificate";
    else if ((cfg & FUZZ_CLIENT_AUTH) && !(cfg & FUZZ_RESUME) && !server &&
             f.hs_in[SSL3_MT_CERTIFICATE_REQUEST] != 1) /* §4.3.2: none with a PSK */
        miss = "CertificateRequest";
    else if (!server && f.hs_in[SSL3_MT_NEWSESSION_TICKET] == 0)
        miss = "NewSessionTicket";
    else if (f.hs_in[SSL3_MT_KEY_UPDATE] != 2)
        miss = "two KeyUpdates (one requested, one answering)";
    else if (f.app_read != app)
        miss = "the application data";
    else if (!f.close_notify || !f.shutdown_done)
        miss = "close_notify both ways";
    if (miss != NULL) {
        fprintf(stderr,
                "gen_seeds: fuzz_record seed %s misses %s (done %d, resumed %d, early status %d, "
                "KeyUpdates %u, application bytes %zu, close_notify %d, shutdown %d)\n",
                seed, miss, f.done, f.resumed, f.early_status, f.hs_in[SSL3_MT_KEY_UPDATE],
                f.app_read, f.close_notify, f.shutdown_done);
        exit(1);
    }
}

static void tcp_put(const char *name, const char *role, const struct buf *b, size_t app,
                    size_t early_bytes)
{
    char n[96];
    snprintf(n, sizeof(n), "%s-%s", name, role);
    tcp_check(n, b, app, early_bytes);
    seed_put("fuzz_record", n, b->p, b->n);
}

/*
 * One TCP conversation of configuration `cfg`, both sides with the options `opt`, recorded:
 * the handshake and tickets; the client requests a KeyUpdate and writes, the server echoes; the
 * server requests a KeyUpdate, sent at once, and writes, the client echoes (answering it),
 * reading 13 bytes at a time with SSL_peek first; the client shuts down, the server answers.
 * `big` 1: the server's message is FUZZ_TCP_BIG bytes (a full 2^14-byte record and another),
 * read 16384 bytes at a time; 2: a 0-RTT client's early data fills its ticket's limit (16384
 * bytes, the server's recv_max_early_data). The seeds' size lets libFuzzer's default -max_len
 * reach the record and early data limits. `split`: the two seeds again in 7-byte segments,
 * partial records from the start.
 */
static void tcp_seeds(unsigned cfg, unsigned opt, const char *name, int split, int big)
{
    struct fuzz_tcp c, s;
    struct tcp_rec r = {&c, {0}, {0}};
    uint8_t hc[2] = {(uint8_t)cfg, (uint8_t)(opt & ~FUZZ_TCP_SERVER)};
    uint8_t hs[2] = {(uint8_t)cfg, (uint8_t)(opt | FUZZ_TCP_SERVER)};
    uint8_t server_size = big == 1 ? 3 : 0, client_reads = big == 1 ? 0 : 2;
    size_t app = sizeof(fuzz_tcp_message) + fuzz_tcp_write_sizes[server_size];
    size_t early_bytes = big == 2 ? 16384 : sizeof(fuzz_tcp_message);
    buf_add(&r.to_client, hc, 2);
    buf_add(&r.to_server, hs, 2);
    fuzz_tcp_new(&c, cfg, hc[1]);
    fuzz_tcp_new(&s, cfg, hs[1]);
    c.keep_output = s.keep_output = 1;
    fuzz_tcp_start(&c);
    fuzz_tcp_start(&s);
    if (big == 2) /* the rest of the early data the ticket allows */
        tcp_act(&r, &c, FUZZ_SEG_WRITE | 3);
    fuzz_tcp_pump(&c, &s, 0, 0, tcp_segment, &r);
    tcp_act(&r, &c, 0x40 | FUZZ_SEG_WRITE);
    fuzz_tcp_pump(&c, &s, 0, FUZZ_SEG_ECHO, tcp_segment, &r);
    tcp_act(&r, &s, 0x60 | FUZZ_SEG_WRITE | server_size);
    fuzz_tcp_pump(&c, &s, FUZZ_SEG_ECHO | FUZZ_SEG_PEEK | client_reads, 0, tcp_segment, &r);
    tcp_act(&r, &c, FUZZ_SEG_SHUTDOWN);
    fuzz_tcp_pump(&c, &s, 0, 0, tcp_segment, &r);
    fuzz_tcp_finish(&c);
    fuzz_tcp_finish(&s);
    fuzz_tcp_free(&c);
    fuzz_tcp_free(&s);
    tcp_put(name, "client", &r.to_client, app, early_bytes);
    tcp_put(name, "server", &r.to_server, app, early_bytes);
    if (split) {
        char n[64];
        snprintf(n, sizeof(n), "%s-split7", name);
        struct buf bc = tcp_resegment(&r.to_client, 7), bs = tcp_resegment(&r.to_server, 7);
        tcp_put(n, "client", &bc, app, early_bytes);
        tcp_put(n, "server", &bs, app, early_bytes);
        free(bc.p);
        free(bs.p);
    }
    free(r.to_client.p);
    free(r.to_server.p);
}

static void session_seeds(SSL_SESSION *s)
{
    int n = i2d_SSL_SESSION(s, NULL);
    unsigned char *der = OPENSSL_malloc((size_t)n), *q = der;
    if (n > 0 && i2d_SSL_SESSION(s, &q) == n)
        seed_put("fuzz_session", "session.der", der, (size_t)n);
    OPENSSL_free(der);
    BIO *b = BIO_new(BIO_s_mem());
    char *pem;
    long len;
    if (b != NULL && PEM_write_bio_SSL_SESSION(b, s) && (len = BIO_get_mem_data(b, &pem)) > 0)
        seed_put("fuzz_session", "session.pem", (const uint8_t *)pem, (size_t)len);
    BIO_free(b);
}

/* fuzz_ticket's input: [mode] [ticket]; mode bit 0 = the application's key callback. */
static void ticket_seed(SSL_SESSION *s, uint8_t mode, const char *name)
{
    size_t len;
    const uint8_t *t;
    SSL_SESSION_get0_ticket(s, &t, &len);
    struct buf b = {0};
    buf_add(&b, &mode, 1);
    buf_add(&b, t, len);
    seed_put("fuzz_ticket", name, b.p, b.n);
    free(b.p);
}

/* fuzz_cert_comp: [mode 0] and the server's chain as a CompressedCertificate body, per algorithm. */
static void cert_comp_seeds(void)
{
    static const char *const names[] = {"", "zlib", "brotli", "zstd"};
    SSL_CTX *sctx = fuzz_server_ctx();
    for (int alg = 1; alg <= 3; alg++) {
        unsigned char *data = NULL;
        size_t orig = 0, n = SSL_CTX_get1_compressed_cert(sctx, alg, &data, &orig);
        if (n == 0)
            continue;
        /* mode byte (peer bytes), algorithm, uncompressed_length, compressed<1..2^24-1> */
        uint8_t hdr[9] = {0, 0, (uint8_t)alg, (uint8_t)(orig >> 16), (uint8_t)(orig >> 8),
                          (uint8_t)orig, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
        struct buf b = {0};
        buf_add(&b, hdr, sizeof(hdr));
        buf_add(&b, data, n);
        seed_put("fuzz_cert_comp", names[alg], b.p, b.n);
        free(b.p);
        OPENSSL_free(data);
    }
    SSL_CTX_free(sctx);
    ERR_clear_error();
}

int main(int argc, char **argv)
{
    static const struct {
        unsigned cfg;
        const char *name;
    } configs[] = {
        {0, "full"},
        {FUZZ_HRR, "hrr"},
        {FUZZ_CLIENT_AUTH, "client-auth"},
        {FUZZ_CLIENT_AUTH | FUZZ_HRR, "client-auth-hrr"},
        {FUZZ_RESUME, "resume"},
        {FUZZ_RESUME | FUZZ_EARLY, "resume-early"},
        {FUZZ_RESUME | FUZZ_EARLY | FUZZ_HRR, "resume-early-hrr"},
        {FUZZ_RESUME | FUZZ_TICKET_CB, "resume-ticket-cb"},
        {FUZZ_RESUME | FUZZ_EARLY | FUZZ_TICKET_CB | FUZZ_CLIENT_AUTH, "resume-early-cb-auth"},
        {FUZZ_CERT_RSA, "rsa"},
        {FUZZ_CERT_ED25519 | FUZZ_CLIENT_AUTH, "ed25519-client-auth"},
        {FUZZ_CERT_P384 | FUZZ_SHA384, "p384-sha384"},
        {FUZZ_CERT_RSA | FUZZ_SHA384 | FUZZ_HRR | FUZZ_CLIENT_AUTH, "rsa-sha384-hrr-auth"},
        {FUZZ_SHA384 | FUZZ_RESUME | FUZZ_EARLY, "sha384-resume-early"},
    };
    if (argc != 2)
        return 2;
    dir = argv[1];
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        SSL_SESSION *s = recorded_handshake(configs[i].cfg, configs[i].name);
        if (configs[i].cfg == 0) {
            session_seeds(s);
            ticket_seed(s, 0, "builtin");
        }
        if (configs[i].cfg == (FUZZ_RESUME | FUZZ_TICKET_CB))
            ticket_seed(s, 1, "callback");
        SSL_SESSION_free(s);
        /* over TCP, with the application's settings varied across the configurations */
        unsigned opt = FUZZ_TCP_SHUTDOWN | (i & 1 ? FUZZ_TCP_READ_AHEAD : 0) |
                       (i & 2 ? FUZZ_TCP_NO_AUTO_RETRY : 0) |
                       (i % 3 == 2 ? FUZZ_TCP_RELEASE_BUFFERS : 0) | (i & 4 ? FUZZ_TCP_EOF : 0) |
                       (i % 5 == 4 ? FUZZ_TCP_NO_MIDDLEBOX : 0) |
                       (i % 7 == 3 ? FUZZ_TCP_IGNORE_EOF : 0);
        tcp_seeds(configs[i].cfg, opt, configs[i].name,
                  configs[i].cfg == 0 || configs[i].cfg == (FUZZ_RESUME | FUZZ_EARLY), 0);
    }
    tcp_seeds(0, FUZZ_TCP_SHUTDOWN | FUZZ_TCP_READ_AHEAD, "full-big", 0, 1);
    tcp_seeds(FUZZ_RESUME | FUZZ_EARLY, FUZZ_TCP_SHUTDOWN, "resume-early-big", 0, 2);
    packet_seeds();
    cert_comp_seeds();
#ifdef QTLS_FUZZ_NGTCP2
    token_seeds();
#endif
    return 0;
}
