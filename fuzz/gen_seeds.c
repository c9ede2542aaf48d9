/*
 * Seed corpora from a real in-memory handshake (not committed; make fuzz
 * writes them under build-fuzz/corpus): the ClientHello for fuzz_server, the
 * server's flight in fuzz_client's framing, the resumable session's DER for
 * fuzz_session, the server's side of the handshake in fuzz_provide's
 * record format, and the server's chain compressed for fuzz_cert_comp. Usage: gen_seeds CORPUS_DIR
 */
#include "fuzz_common.h"

#include <stdio.h>

static const char *dir;

static void put(const char *target, const char *name, const uint8_t *a, size_t alen,
                const uint8_t *b, size_t blen)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* fuzz_provide records for `bytes` at `level`, 255 bytes a record, handshake after the last. */
static void provide_records(uint8_t **buf, size_t *len, int level, const uint8_t *b, size_t n)
{
    for (size_t off = 0; off < n;) {
        size_t k = n - off > 255 ? 255 : n - off;
        *buf = realloc(*buf, *len + 2 + k);
        (*buf)[(*len)++] = (uint8_t)(level | (off + k == n ? 0x80 : 0));
        (*buf)[(*len)++] = (uint8_t)k;
        memcpy(*buf + *len, b + off, k);
        *len += k;
        off += k;
    }
}

/* fuzz_cert_comp: the server's chain as a CompressedCertificate body, one per algorithm. */
static void cert_comp_seeds(SSL_CTX *sctx)
{
    static const char *const names[] = {"", "zlib", "brotli", "zstd"};
    for (int alg = 1; alg <= 3; alg++) {
        unsigned char *data = NULL;
        size_t orig = 0, n = SSL_CTX_get1_compressed_cert(sctx, alg, &data, &orig);
        if (n == 0)
            continue;
        /* mode byte (peer bytes), algorithm, uncompressed_length, compressed<1..2^24-1> */
        uint8_t hdr[9] = {0,
                          0,
                          (uint8_t)alg,
                          (uint8_t)(orig >> 16),
                          (uint8_t)(orig >> 8),
                          (uint8_t)orig,
                          (uint8_t)(n >> 16),
                          (uint8_t)(n >> 8),
                          (uint8_t)n};
        put("fuzz_cert_comp", names[alg], hdr, sizeof(hdr), data, n);
        OPENSSL_free(data);
    }
    ERR_clear_error();
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    SSL_CTX *sctx = fuzz_server_ctx(), *cctx = fuzz_client_ctx();
    struct mock_pair p;
    if (!mock_pair_init(&p, cctx, sctx))
        return 1;
    SSL_set_tlsext_host_name(p.client.ssl, "localhost");

    /* ClientHello */
    (void)SSL_do_handshake(p.client.ssl);
    put("fuzz_server", "clienthello", p.client.out[0], p.client.out_len[0], NULL, 0);
    uint8_t *prov = NULL;
    size_t prov_len = 0;
    uint8_t role = 1;
    prov = malloc(1);
    prov[prov_len++] = role;
    provide_records(&prov, &prov_len, 0, p.client.out[0], p.client.out_len[0]);
    if (!mock_deliver(&p.client, &p.server, 0))
        return 1;

    /* Server flight */
    (void)SSL_do_handshake(p.server.ssl);
    uint8_t hdr[3] = {(uint8_t)(p.server.out_len[0] >> 8), (uint8_t)p.server.out_len[0], 1};
    uint8_t *flight = malloc(p.server.out_len[0] + p.server.out_len[2] + 1);
    memcpy(flight, p.server.out[0], p.server.out_len[0]);
    memcpy(flight + p.server.out_len[0], p.server.out[2], p.server.out_len[2]);
    put("fuzz_client", "serverflight", hdr, 2, flight,
        p.server.out_len[0] + p.server.out_len[2]);
    /* the client's role in fuzz_provide, with the same flight */
    uint8_t *cprov = malloc(1);
    size_t cprov_len = 0;
    cprov[cprov_len++] = 0;
    provide_records(&cprov, &cprov_len, 0, p.server.out[0], p.server.out_len[0]);
    provide_records(&cprov, &cprov_len, 2, p.server.out[2], p.server.out_len[2]);
    put("fuzz_provide", "client", cprov, cprov_len, NULL, 0);
    free(cprov);
    free(flight);
    (void)hdr[2];

    if (!mock_handshake(&p, 0)) {
        fprintf(stderr, "gen_seeds: handshake failed\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    put("fuzz_provide", "server", prov, prov_len, NULL, 0);
    free(prov);

    SSL_SESSION *s = SSL_get1_session(p.client.ssl);
    if (s != NULL) {
        int n = i2d_SSL_SESSION(s, NULL);
        unsigned char *der = OPENSSL_malloc((size_t)n), *q = der;
        if (n > 0 && i2d_SSL_SESSION(s, &q) == n)
            put("fuzz_session", "session", der, (size_t)n, NULL, 0);
        OPENSSL_free(der);
        SSL_SESSION_free(s);
    }
    cert_comp_seeds(sctx);
    mock_pair_free(&p);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    return 0;
}
