/*
 * Certificate compression (RFC 8879) between two qtls endpoints: each algorithm in both roles
 * (server Certificate, client Certificate after a CertificateRequest), the server's preference,
 * the SSL_OP_NO_TX/RX options, the per-context cache (a chain is compressed once), OpenSSL 3.2's
 * and BoringSSL's API, and every bad CompressedCertificate (RFC 8879 §4: bad_certificate),
 * made by rewriting the server's flight before the client reads it. make check installs zlib,
 * brotli and zstd: a build without one of them fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"
#include "mock_quic.h"

static const int all_algs[] = {TLSEXT_comp_cert_zlib, TLSEXT_comp_cert_brotli,
                               TLSEXT_comp_cert_zstd};

/* A server context with a two-certificate chain (leaf, intermediate). */
static SSL_CTX *chain_server_ctx(void)
{
    SSL_CTX *ctx = mock_server_ctx("ecdsa256");
    if (ctx == NULL ||
        SSL_CTX_use_certificate_chain_file(ctx, mock_cert_path("ecdsa256-inter-chain.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path("ecdsa256-inter.key"), SSL_FILETYPE_PEM) !=
            1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int set_pref(SSL_CTX *ctx, const int *algs, size_t n)
{
    return SSL_CTX_set1_cert_comp_preference(ctx, (int *)algs, n);
}

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
    int paired;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    f->cctx = mock_client_ctx();
    f->sctx = chain_server_ctx();
    *state = f;
    return f->cctx != NULL && f->sctx != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->paired)
        mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    free(f);
    ERR_clear_error();
    return 0;
}

static void pair(struct fixture *f)
{
    if (f->paired)
        mock_pair_free(&f->p);
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    f->paired = 1;
}

/* The types of the handshake-level messages a side has not yet delivered. */
static int has_message(const struct mock_side *s, uint8_t type)
{
    const uint8_t *p = s->out[ssl_encryption_handshake];
    size_t n = s->out_len[ssl_encryption_handshake];
    for (size_t off = 0; off + 4 <= n;) {
        size_t len = ((size_t)p[off + 1] << 16) | ((size_t)p[off + 2] << 8) | p[off + 3];
        if (p[off] == type)
            return 1;
        off += 4 + len;
    }
    return 0;
}

/* Client to server, server to the point where its flight is written (not yet delivered). */
static void run_to_server_flight(struct fixture *f)
{
    pair(f);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
}

static void handshake_ok(struct fixture *f)
{
    pair(f);
    assert_true(mock_handshake(&f->p, 0));
    assert_non_null(SSL_get0_peer_certificate(f->p.client.ssl));
}

/* ---- each algorithm, both roles ---- */

static void server_certificate_compressed_with_each_algorithm(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->sctx, all_algs, 3));
    for (size_t i = 0; i < 3; i++) {
        assert_true(set_pref(f->cctx, &all_algs[i], 1));
        run_to_server_flight(f);
        assert_true(has_message(&f->p.server, HT_COMPRESSED_CERTIFICATE));
        assert_false(has_message(&f->p.server, HT_CERTIFICATE));
        assert_true(mock_handshake(&f->p, 0));
        assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), all_algs[i]);
        assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.server.ssl), all_algs[i]);
        assert_int_equal(SSL_get_negotiated_client_cert_comp(f->p.client.ssl), 0);
        /* the chain arrived whole: leaf and intermediate */
        assert_int_equal(sk_X509_num(SSL_get_peer_cert_chain(f->p.client.ssl)), 2);
    }
}

static void client_certificate_compressed_with_each_algorithm(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_verify(f->sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM), 1);
    assert_true(set_pref(f->cctx, all_algs, 3));
    for (size_t i = 0; i < 3; i++) {
        /* the server accepts only this one (its CertificateRequest lists it alone) */
        assert_true(set_pref(f->sctx, &all_algs[i], 1));
        handshake_ok(f);
        assert_int_equal(SSL_get_negotiated_client_cert_comp(f->p.server.ssl), all_algs[i]);
        assert_int_equal(SSL_get_negotiated_client_cert_comp(f->p.client.ssl), all_algs[i]);
        assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), all_algs[i]);
        assert_non_null(SSL_get0_peer_certificate(f->p.server.ssl));
    }
}

/* The server compresses with the first algorithm of its own list that the client offered. */
static void server_preference_decides(void **state)
{
    struct fixture *f = *state;
    static const int client[] = {TLSEXT_comp_cert_zstd, TLSEXT_comp_cert_zlib};
    static const int server[] = {TLSEXT_comp_cert_brotli, TLSEXT_comp_cert_zlib,
                                 TLSEXT_comp_cert_zstd};
    assert_true(set_pref(f->cctx, client, 2));
    assert_true(set_pref(f->sctx, server, 3));
    handshake_ok(f);
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), TLSEXT_comp_cert_zlib);
}

/* ---- off unless configured, and the two options ---- */

static void off_by_default(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->sctx, all_algs, 3)); /* the client offers nothing */
    run_to_server_flight(f);
    assert_true(has_message(&f->p.server, HT_CERTIFICATE));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), 0);
}

static void no_tx_sends_plain_certificate(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->cctx, all_algs, 3));
    assert_true(set_pref(f->sctx, all_algs, 3));
    SSL_CTX_set_options(f->sctx, SSL_OP_NO_TX_CERTIFICATE_COMPRESSION);
    run_to_server_flight(f);
    assert_true(has_message(&f->p.server, HT_CERTIFICATE));
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), 0);
}

static void no_rx_offers_nothing(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->cctx, all_algs, 3));
    assert_true(set_pref(f->sctx, all_algs, 3));
    SSL_CTX_set_options(f->cctx, SSL_OP_NO_RX_CERTIFICATE_COMPRESSION);
    run_to_server_flight(f);
    assert_true(has_message(&f->p.server, HT_CERTIFICATE));
    assert_true(mock_handshake(&f->p, 0));
}

/* ---- compressed once per context ---- */

static void chain_is_compressed_once_per_context_and_algorithm(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->cctx, all_algs, 1));
    assert_true(set_pref(f->sctx, all_algs, 3));
    size_t before = cert_comp_test_compressions();
    for (int i = 0; i < 3; i++)
        handshake_ok(f);
    assert_int_equal(cert_comp_test_compressions() - before, 1);
    /* ahead of time: every algorithm of the list once, then handshakes compress nothing */
    SSL_CTX *sctx2 = chain_server_ctx();
    assert_non_null(sctx2);
    assert_true(set_pref(sctx2, all_algs, 3));
    before = cert_comp_test_compressions();
    assert_int_equal(SSL_CTX_compress_certs(sctx2, 0), 1);
    assert_int_equal(cert_comp_test_compressions() - before, 3);
    SSL_CTX_free(f->sctx);
    f->sctx = sctx2;
    for (size_t i = 0; i < 3; i++) {
        assert_true(set_pref(f->cctx, &all_algs[i], 1));
        handshake_ok(f);
        assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), all_algs[i]);
    }
    assert_int_equal(cert_comp_test_compressions() - before, 3);
}

/* SSL_CTX_get1_compressed_cert in one context, SSL_CTX_set1_compressed_cert in another. */
static void precompressed_chain_moves_between_contexts(void **state)
{
    struct fixture *f = *state;
    unsigned char *data = NULL;
    size_t orig = 0;
    size_t n = SSL_CTX_get1_compressed_cert(f->sctx, TLSEXT_comp_cert_zstd, &data, &orig);
    assert_true(n > 0 && n < orig);
    SSL_CTX *sctx2 = chain_server_ctx();
    assert_non_null(sctx2);
    assert_int_equal(SSL_CTX_set1_compressed_cert(sctx2, TLSEXT_comp_cert_zstd, data, n, orig), 1);
    /* a wrong original length is refused */
    assert_int_equal(SSL_CTX_set1_compressed_cert(sctx2, TLSEXT_comp_cert_zstd, data, n, orig + 1),
                     0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_DECOMPRESSION);
    ERR_clear_error();
    OPENSSL_free(data);
    SSL_CTX_free(f->sctx);
    f->sctx = sctx2;
    assert_true(set_pref(f->sctx, &all_algs[2], 1));
    assert_true(set_pref(f->cctx, &all_algs[2], 1));
    size_t before = cert_comp_test_compressions();
    handshake_ok(f);
    assert_int_equal(cert_comp_test_compressions(), before);
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), TLSEXT_comp_cert_zstd);
}

/* ---- the API ---- */

static void preference_list_is_checked(void **state)
{
    struct fixture *f = *state;
    int bad[] = {TLSEXT_comp_cert_zlib, 7};
    assert_int_equal(SSL_CTX_set1_cert_comp_preference(f->cctx, bad, 2), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
    assert_int_equal(SSL_CTX_set1_cert_comp_preference(f->cctx, NULL, 1), 0);
    ERR_clear_error();
    int dup[] = {TLSEXT_comp_cert_zstd, TLSEXT_comp_cert_zstd, TLSEXT_comp_cert_zlib};
    assert_int_equal(SSL_CTX_set1_cert_comp_preference(f->cctx, dup, 3), 1);
    /* SSL_set1_ on one connection: an empty list turns it off there */
    assert_true(set_pref(f->sctx, all_algs, 3));
    pair(f);
    assert_int_equal(SSL_set1_cert_comp_preference(f->p.client.ssl, NULL, 0), 1);
    assert_true(mock_handshake(&f->p, 0));
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl), 0);
}

static int dummy_compress(SSL *ssl, CBB *out, const uint8_t *in, size_t in_len) { return 0; }

/* BoringSSL's call, as QUIC stacks make it, enables qtls's own implementation. */
static void boringssl_add_cert_compression_alg(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_CTX_add_cert_compression_alg(f->cctx, TLSEXT_comp_cert_brotli,
                                                      dummy_compress, NULL), 1);
    assert_int_equal(SSL_CTX_add_cert_compression_alg(f->cctx, TLSEXT_comp_cert_brotli,
                                                      dummy_compress, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_DUPLICATE_COMPRESSION_ID);
    assert_int_equal(SSL_CTX_add_cert_compression_alg(f->cctx, 0x4242, dummy_compress, NULL), 0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), QTLS_R_NOT_IMPLEMENTED);
    ERR_clear_error();
    assert_int_equal(SSL_CTX_add_cert_compression_alg(f->sctx, TLSEXT_comp_cert_brotli,
                                                      dummy_compress, NULL), 1);
    handshake_ok(f);
    assert_int_equal(SSL_get_negotiated_server_cert_comp(f->p.client.ssl),
                     TLSEXT_comp_cert_brotli);
}

/* ---- bad CompressedCertificate messages (RFC 8879 §4) ---- */

enum tamper {
    LENGTH_TOO_LARGE,   /* declared one more than the data decompresses to */
    LENGTH_TOO_SMALL,   /* declared one less */
    EMPTY_RESULT,       /* uncompressed_length 0 */
    OVER_MAX_CERT_LIST, /* declared 2^24-1, beyond SSL_CTX_set_max_cert_list */
    UNKNOWN_ALGORITHM,  /* 0x4242 */
    UNOFFERED_ALGORITHM, /* brotli, which the client did not offer */
    CORRUPT_DATA,       /* the compressed bytes flipped */
    TRAILING_DATA,      /* a valid stream with a byte after it */
    NOT_OFFERED_AT_ALL, /* a CompressedCertificate to a client that offered nothing */
};

/* Rewrites the server's certificate message (at the handshake level) as `how` says. */
static void tamper_server_flight(struct mock_side *s, enum tamper how)
{
    uint8_t *p = s->out[ssl_encryption_handshake];
    size_t n = s->out_len[ssl_encryption_handshake], off = 0, len = 0;
    while (off + 4 <= n) {
        len = ((size_t)p[off + 1] << 16) | ((size_t)p[off + 2] << 8) | p[off + 3];
        if (p[off] == HT_CERTIFICATE || p[off] == HT_COMPRESSED_CERTIFICATE)
            break;
        off += 4 + len;
    }
    assert_true(off + 4 + len <= n);
    /* the plain Certificate body, from either form */
    struct wr plain, msg;
    wr_init(&plain);
    wr_init(&msg);
    if (p[off] == HT_CERTIFICATE) {
        wr_bytes(&plain, p + off + 4, len);
    } else {
        size_t ulen = ((size_t)p[off + 6] << 16) | ((size_t)p[off + 7] << 8) | p[off + 8];
        uint8_t *u = wr_reserve(&plain, ulen);
        assert_non_null(u);
        assert_true(decompress_exact(p[off + 5], p + off + 12, len - 8, u, ulen));
    }
    int alg = how == UNOFFERED_ALGORITHM ? TLSEXT_comp_cert_brotli : TLSEXT_comp_cert_zlib;
    uint32_t declared = (uint32_t)plain.len;
    if (how == LENGTH_TOO_LARGE)
        declared++;
    if (how == LENGTH_TOO_SMALL)
        declared--;
    if (how == EMPTY_RESULT)
        declared = 0;
    if (how == OVER_MAX_CERT_LIST)
        declared = 0xffffff;
    wr_u8(&msg, HT_COMPRESSED_CERTIFICATE);
    size_t body = wr_open_vec(&msg, 3);
    wr_u16(&msg, how == UNKNOWN_ALGORITHM ? 0x4242 : (uint16_t)alg);
    wr_u24(&msg, declared);
    size_t data = wr_open_vec(&msg, 3);
    size_t start = wr_len(&msg);
    assert_true(compress_run(alg, plain.buf, plain.len, &msg));
    if (how == CORRUPT_DATA)
        for (size_t i = start + 2; i < wr_len(&msg); i++)
            *wr_at(&msg, i, 1) ^= 0x5a;
    if (how == TRAILING_DATA)
        wr_u8(&msg, 0);
    wr_close_vec(&msg, data, 3);
    wr_close_vec(&msg, body, 3);
    assert_true(wr_ok(&msg));
    /* splice: what came before, the new message, what came after */
    size_t tail = n - (off + 4 + len);
    uint8_t *out = malloc(off + msg.len + tail);
    assert_non_null(out);
    memcpy(out, p, off);
    memcpy(out + off, msg.buf, msg.len);
    memcpy(out + off + msg.len, p + off + 4 + len, tail);
    free(p);
    s->out[ssl_encryption_handshake] = out;
    s->out_len[ssl_encryption_handshake] = off + msg.len + tail;
    wr_free(&plain);
    wr_free(&msg);
}

static void client_rejects(struct fixture *f, enum tamper how, int alert, int reason)
{
    static const int client[] = {TLSEXT_comp_cert_zlib, TLSEXT_comp_cert_zstd};
    if (how != NOT_OFFERED_AT_ALL)
        assert_true(set_pref(f->cctx, client, 2));
    assert_true(set_pref(f->sctx, all_algs, 3));
    ERR_clear_error();
    run_to_server_flight(f);
    tamper_server_flight(&f->p.server, how);
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    int r = SSL_do_handshake(f->p.client.ssl);
    assert_int_equal(r, -1);
    assert_int_equal(SSL_get_error(f->p.client.ssl, r), SSL_ERROR_SSL);
    assert_int_equal(f->p.client.alerts_sent, 1);
    assert_int_equal(f->p.client.alert, alert);
    assert_int_equal(mock_first_ssl_reason(), reason);
    assert_null(SSL_get0_peer_certificate(f->p.client.ssl));
    ERR_clear_error();
}

static void declared_length_too_large_is_bad_certificate(void **state)
{
    client_rejects(*state, LENGTH_TOO_LARGE, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
}

static void declared_length_too_small_is_bad_certificate(void **state)
{
    client_rejects(*state, LENGTH_TOO_SMALL, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
}

static void empty_result_is_bad_certificate(void **state)
{
    client_rejects(*state, EMPTY_RESULT, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
}

/* Checked before any allocation: 16 MB are never reserved for a few bytes of input. */
static void length_beyond_max_cert_list_is_bad_certificate(void **state)
{
    client_rejects(*state, OVER_MAX_CERT_LIST, SSL_AD_BAD_CERTIFICATE,
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
}

static void unknown_algorithm_is_bad_certificate(void **state)
{
    client_rejects(*state, UNKNOWN_ALGORITHM, SSL_AD_BAD_CERTIFICATE,
                   SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
}

static void unoffered_algorithm_is_bad_certificate(void **state)
{
    client_rejects(*state, UNOFFERED_ALGORITHM, SSL_AD_BAD_CERTIFICATE,
                   SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
}

static void corrupt_data_is_bad_certificate(void **state)
{
    client_rejects(*state, CORRUPT_DATA, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
}

static void trailing_data_is_bad_certificate(void **state)
{
    client_rejects(*state, TRAILING_DATA, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
}

static void compressed_certificate_without_offer_is_unexpected(void **state)
{
    client_rejects(*state, NOT_OFFERED_AT_ALL, SSL_AD_UNEXPECTED_MESSAGE,
                   SSL_R_UNEXPECTED_MESSAGE);
}

/* §3: algorithms<2..2^8-2>: an empty or odd list is a decode_error from the server. */
static void malformed_extension_is_decode_error(void **state)
{
    struct fixture *f = *state;
    assert_true(set_pref(f->sctx, all_algs, 3));
    pair(f);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    /* build a ClientHello by hand: a real one with an odd-length compress_certificate appended */
    uint8_t *p = f->p.client.out[ssl_encryption_initial];
    size_t n = f->p.client.out_len[ssl_encryption_initial];
    /* ClientHello: type(1) len(3) version(2) random(32) sid(1+x) suites(2+x) comp(1+x) exts(2+x) */
    size_t off = 4 + 2 + 32;
    off += 1 + p[off];
    off += 2 + (((size_t)p[off] << 8) | p[off + 1]);
    off += 1 + p[off];
    static const uint8_t bad_ext[] = {0x00, 0x1b, 0x00, 0x02, 0x01, 0x00};
    /* before the extensions that must stay last (pre_shared_key is absent: no session) */
    uint8_t *out = malloc(n + sizeof(bad_ext));
    assert_non_null(out);
    memcpy(out, p, off + 2);
    memcpy(out + off + 2, bad_ext, sizeof(bad_ext));
    memcpy(out + off + 2 + sizeof(bad_ext), p + off + 2, n - off - 2);
    size_t ext_len = (((size_t)p[off] << 8) | p[off + 1]) + sizeof(bad_ext);
    out[off] = (uint8_t)(ext_len >> 8);
    out[off + 1] = (uint8_t)ext_len;
    size_t body = n - 4 + sizeof(bad_ext);
    out[1] = (uint8_t)(body >> 16);
    out[2] = (uint8_t)(body >> 8);
    out[3] = (uint8_t)body;
    free(p);
    f->p.client.out[ssl_encryption_initial] = out;
    f->p.client.out_len[ssl_encryption_initial] = n + sizeof(bad_ext);
    ERR_clear_error();
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    assert_int_equal(f->p.server.alert, SSL_AD_DECODE_ERROR);
    assert_int_equal(mock_first_ssl_reason(), QTLS_R_DECODE_ERROR);
    ERR_clear_error();
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(server_certificate_compressed_with_each_algorithm),
        T(client_certificate_compressed_with_each_algorithm),
        T(server_preference_decides),
        T(off_by_default),
        T(no_tx_sends_plain_certificate),
        T(no_rx_offers_nothing),
        T(chain_is_compressed_once_per_context_and_algorithm),
        T(precompressed_chain_moves_between_contexts),
        T(preference_list_is_checked),
        T(boringssl_add_cert_compression_alg),
        T(declared_length_too_large_is_bad_certificate),
        T(declared_length_too_small_is_bad_certificate),
        T(empty_result_is_bad_certificate),
        T(length_beyond_max_cert_list_is_bad_certificate),
        T(unknown_algorithm_is_bad_certificate),
        T(unoffered_algorithm_is_bad_certificate),
        T(corrupt_data_is_bad_certificate),
        T(trailing_data_is_bad_certificate),
        T(compressed_certificate_without_offer_is_unexpected),
        T(malformed_extension_is_decode_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
