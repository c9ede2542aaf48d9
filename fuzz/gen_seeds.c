/*
 * Seed corpora from real in-memory handshakes in the fuzzing build (not
 * committed; make fuzz writes them under build-fuzz/corpus): for each
 * configuration of fuzz_common.h used below, what the client and the server
 * received, in fuzz_play's records (fuzz_client, fuzz_server, and fuzz_provide's
 * own format); the session's DER and PEM (fuzz_session); tickets with and
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
    }
    packet_seeds();
    cert_comp_seeds();
#ifdef QTLS_FUZZ_NGTCP2
    token_seeds();
#endif
    return 0;
}
