/*
 * certcomp_flight CHAIN.pem KEY.pem LABEL: the server's first flight, in TLS bytes, with its
 * certificate uncompressed and compressed with each RFC 8879 algorithm (bench/certcomp.sh).
 * In memory (tests/helpers/mock_quic.c): the client's ClientHello goes to the server, and what
 * the server hands to add_handshake_data at the Initial and Handshake levels is counted; then
 * the handshake is finished, so that every figure comes from a handshake that worked.
 * QTLS_CERTS names the test PKI (the client trusts nothing; it does not verify).
 * One line per algorithm: LABEL ALG CERT_MSG_BYTES INITIAL_BYTES HANDSHAKE_BYTES.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

static const char *const names[] = {"none", "zlib", "brotli", "zstd"};

/* The Certificate or CompressedCertificate message's length, header included. */
static size_t cert_message_bytes(const struct mock_side *s)
{
    const uint8_t *p = s->out[ssl_encryption_handshake];
    size_t n = s->out_len[ssl_encryption_handshake];
    for (size_t off = 0; off + 4 <= n;) {
        size_t len = ((size_t)p[off + 1] << 16) | ((size_t)p[off + 2] << 8) | p[off + 3];
        if (p[off] == 11 || p[off] == 25)
            return 4 + len;
        off += 4 + len;
    }
    return 0;
}

static int select_h3(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    return SSL_select_next_proto((unsigned char **)out, outlen, h3, sizeof(h3), in, inlen) ==
                   OPENSSL_NPN_NEGOTIATED
               ? SSL_TLSEXT_ERR_OK
               : SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* A server with this chain only (mock_server_ctx's certificate would be chosen over it). */
static SSL_CTX *server_ctx(const char *chain, const char *key)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || !SSL_CTX_set_quic_method(ctx, &mock_quic_method) ||
        SSL_CTX_use_certificate_chain_file(ctx, chain) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_alpn_select_cb(ctx, select_h3, NULL);
    return ctx;
}

static int measure(const char *chain, const char *key, const char *label, int alg)
{
    SSL_CTX *sctx = server_ctx(chain, key), *cctx = mock_client_ctx();
    struct mock_pair p;
    int ok = 0;
    if (sctx == NULL || cctx == NULL)
        goto done;
    if (alg != 0 && (SSL_CTX_set1_cert_comp_preference(sctx, &alg, 1) != 1 ||
                     SSL_CTX_set1_cert_comp_preference(cctx, &alg, 1) != 1))
        goto done;
    if (!mock_pair_init(&p, cctx, sctx))
        goto done;
    SSL_set_tlsext_host_name(p.client.ssl, "localhost");
    if (SSL_do_handshake(p.client.ssl) != -1 || !mock_deliver(&p.client, &p.server, 0) ||
        SSL_do_handshake(p.server.ssl) != -1)
        goto free_pair;
    size_t cert = cert_message_bytes(&p.server);
    size_t initial = p.server.out_len[ssl_encryption_initial];
    size_t handshake = p.server.out_len[ssl_encryption_handshake];
    if (!mock_handshake(&p, 0) || SSL_get_negotiated_server_cert_comp(p.client.ssl) != alg)
        goto free_pair;
    printf("%s %s %zu %zu %zu\n", label, names[alg], cert, initial, handshake);
    ok = 1;
free_pair:
    mock_pair_free(&p);
done:
    if (!ok) {
        fprintf(stderr, "certcomp_flight: %s with %s failed\n", label, names[alg]);
        ERR_print_errors_fp(stderr);
    }
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: certcomp_flight CHAIN.pem KEY.pem LABEL\n");
        return 2;
    }
    for (int alg = 0; alg <= 3; alg++)
        if (!measure(argv[1], argv[2], argv[3], alg))
            return 1;
    return 0;
}
