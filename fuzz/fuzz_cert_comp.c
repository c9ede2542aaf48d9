/*
 * The decompression path of certificate compression (RFC 8879 §4): a client that offered zlib,
 * brotli and zstd reads a CompressedCertificate body, decompresses it (cert_comp_read_body, the
 * function the handshake calls) and parses the Certificate it holds.
 *
 * The first input byte picks the mode. Even: the rest is a CompressedCertificate body, as the
 * peer would send it; it must either be refused with bad_certificate or decode_error, or
 * decompress to exactly its declared length. Odd: the rest is a Certificate body, compressed
 * here with algorithm (byte % 3) + 1; it must decompress back to the same bytes. The second mode
 * lets the fuzzer reach the certificate parser behind real compressed data.
 */
#include "fuzz_common.h"
#include "internal.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "handshake/handshake.h"

#include <stdio.h>

static SSL_CTX *ctx;

/* A client that sent its ClientHello with compress_certificate: ready for a certificate. */
static SSL *client(struct mock_side *side)
{
    if (ctx == NULL) {
        static int algs[] = {TLSEXT_comp_cert_zlib, TLSEXT_comp_cert_brotli,
                             TLSEXT_comp_cert_zstd};
        ctx = fuzz_client_ctx();
        if (SSL_CTX_set1_cert_comp_preference(ctx, algs, 3) != 1)
            abort(); /* the fuzz build links all three libraries */
    }
    SSL *s = fuzz_ssl_new(ctx, side, 0);
    if (SSL_do_handshake(s) != -1 || s->hs == NULL || !s->hs->cert_comp_offered)
        abort();
    return s;
}

/* Decompresses `body`; if that works, parses what came out. Returns the decompressed length. */
static int read_body(SSL *s, const uint8_t *p, size_t n, struct wr *plain)
{
    struct rd body, cert;
    rd_init(&body, p, n);
    if (!cert_comp_read_body(s, body, plain)) {
        if (s->alert != SSL_AD_BAD_CERTIFICATE && s->alert != SSL_AD_DECODE_ERROR) {
            fprintf(stderr, "refused with alert %d, not bad_certificate or decode_error\n",
                    s->alert);
            abort();
        }
        return 0;
    }
    rd_init(&cert, plain->buf, plain->len);
    if (!msg_parse_certificate(s, cert, 0))
        ERR_clear_error();
    return 1;
}

static void peer_bytes(SSL *s, const uint8_t *p, size_t n)
{
    struct wr plain;
    wr_init(&plain);
    if (read_body(s, p, n, &plain)) {
        size_t declared = n >= 5 ? ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4] : 0;
        if (plain.len != declared) {
            fprintf(stderr, "decompressed %zu bytes, declared %zu\n", plain.len, declared);
            abort();
        }
    }
    wr_free(&plain);
}

static void round_trip(SSL *s, int alg, const uint8_t *p, size_t n)
{
    struct wr msg, plain;
    if (n == 0 || n > s->ctx->max_cert_list)
        return;
    wr_init(&msg);
    wr_init(&plain);
    wr_u16(&msg, (uint16_t)alg);
    wr_u24(&msg, (uint32_t)n);
    size_t at = wr_open_vec(&msg, 3);
    if (!compress_run(alg, p, n, &msg))
        abort();
    wr_close_vec(&msg, at, 3);
    if (!wr_ok(&msg) || !read_body(s, msg.buf, msg.len, &plain) || plain.len != n ||
        memcmp(plain.buf, p, n) != 0) {
        fprintf(stderr, "%s: %zu bytes do not survive compression\n", compress_name(alg), n);
        abort();
    }
    wr_free(&msg);
    wr_free(&plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mock_side side;
    if (size == 0)
        return 0;
    SSL *s = client(&side);
    if (data[0] % 2 == 0)
        peer_bytes(s, data + 1, size - 1);
    else
        round_trip(s, TLSEXT_comp_cert_zlib + (data[0] / 2) % 3, data + 1, size - 1);
    fuzz_side_free(&side);
    return 0;
}
