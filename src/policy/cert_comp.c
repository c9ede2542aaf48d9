/*
 * Certificate compression (RFC 8879): the preference lists (OpenSSL 3.2's API, and BoringSSL's
 * SSL_CTX_add_cert_compression_alg mapped onto it), the compress_certificate extension, the
 * body of the CompressedCertificate message both ways, and the per-context cache that makes a
 * server compress each chain once per algorithm rather than once per handshake. The algorithms
 * themselves are in compress.c.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"

#include <string.h>

/* ---- preference lists ---- */

/*
 * Each value must name an RFC 8879 algorithm qtls was built with (an error names the missing
 * one); duplicates count once; an empty list turns compression off.
 */
static int set_pref(struct cert_comp_pref *dst, const int *algs, size_t len)
{
    struct cert_comp_pref pref;
    memset(&pref, 0, sizeof(pref));
    if (algs == NULL && len > 0) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        int a = algs[i];
        if (a <= CC_NONE || a >= CC_LIMIT) {
            ERR_raise_data(ERR_LIB_SSL, SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM,
                           "certificate compression algorithm %d", a);
            return 0;
        }
        if (!compress_available(a)) {
            ERR_raise_data(ERR_LIB_SSL, QTLS_R_NOT_IMPLEMENTED,
                           "certificate compression with %s: qtls was built without it",
                           compress_name(a));
            return 0;
        }
        if (memchr(pref.alg, a, pref.n) == NULL)
            pref.alg[pref.n++] = (uint8_t)a;
    }
    *dst = pref;
    return 1;
}

int SSL_CTX_set1_cert_comp_preference(SSL_CTX *ctx, int *algs, size_t len)
{
    return ctx != NULL && set_pref(&ctx->cert_comp, algs, len);
}

int SSL_set1_cert_comp_preference(SSL *ssl, int *algs, size_t len)
{
    return ssl != NULL && set_pref(&ssl->cert_comp, algs, len);
}

/* BoringSSL: appends alg_id to the list; qtls's own implementation of it does the work. */
int SSL_CTX_add_cert_compression_alg(SSL_CTX *ctx, uint16_t alg_id,
                                     ssl_cert_compression_func_t compress,
                                     ssl_cert_decompression_func_t decompress)
{
    if (ctx == NULL || (compress == NULL && decompress == NULL)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    struct cert_comp_pref *p = &ctx->cert_comp;
    if (alg_id >= CC_LIMIT || alg_id == CC_NONE || !compress_available(alg_id)) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_NOT_IMPLEMENTED,
                       "certificate compression algorithm %u", (unsigned)alg_id);
        return 0;
    }
    if (memchr(p->alg, alg_id, p->n) != NULL) { /* BoringSSL refuses an algorithm twice */
        ERR_raise(ERR_LIB_SSL, SSL_R_DUPLICATE_COMPRESSION_ID);
        return 0;
    }
    p->alg[p->n++] = (uint8_t)alg_id;
    return 1;
}

int SSL_get_negotiated_client_cert_comp(SSL *s) { return s != NULL ? s->cert_comp_client : 0; }

int SSL_get_negotiated_server_cert_comp(SSL *s) { return s != NULL ? s->cert_comp_server : 0; }

/* ---- the extension (RFC 8879 §3): its row in extensions.c, ClientHello and CertificateRequest */

/* struct { CertificateCompressionAlgorithm algorithms<2..2^8-2>; } CertificateCompressionAlgorithms; */
int cert_comp_write_request(SSL *c, struct wr *w)
{
    const struct cert_comp_pref *p = &c->cert_comp;
    if (p->n == 0 || (c->options & SSL_OP_NO_RX_CERTIFICATE_COMPRESSION))
        return EXT_NOT_SENT;
    size_t list = wr_open_vec(w, 1);
    for (size_t i = 0; i < p->n; i++)
        wr_u16(w, p->alg[i]);
    wr_close_vec(w, list, 1);
    c->hs->cert_comp_offered = 1;
    return 1;
}

/* The peer's list: our Certificate goes out with the first algorithm of ours it accepts. */
int cert_comp_take_offer(SSL *c, const struct rd *b)
{
    struct rd body, list;
    unsigned accepted = 0;
    uint16_t id;
    if (b == NULL) /* not offered: the certificate goes uncompressed */
        return 1;
    body = *b;
    if (!rd_vec8(&body, &list) || !rd_empty(&body) || list.n < 2 || list.n % 2 != 0)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    while (rd_u16(&list, &id))
        if (id < CC_LIMIT) /* §3: unknown algorithms are ignored */
            accepted |= 1u << id;
    if (c->options & SSL_OP_NO_TX_CERTIFICATE_COMPRESSION)
        return 1;
    for (size_t i = 0; i < c->cert_comp.n && c->hs->cert_comp_tx == 0; i++)
        if (accepted & (1u << c->cert_comp.alg[i]))
            c->hs->cert_comp_tx = c->cert_comp.alg[i];
    return 1;
}

/* ---- the per-context cache of compressed chains ---- */

/* A cached compression: the bytes a chain compressed to with one algorithm. */
struct packed {
    size_t len;
    uint8_t b[];
};

static size_t compressions; /* test hook: how many times a chain was compressed */

size_t cert_comp_test_compressions(void) { return __atomic_load_n(&compressions, __ATOMIC_RELAXED); }

static void packed_free(void *p) { OPENSSL_free(p); }

/* slot_cache_find's take: appends the cached bytes to the struct wr out. */
static int packed_take(void *p, void *out)
{
    const struct packed *pk = p;
    wr_bytes(out, pk->b, pk->len);
    return 1;
}

/* Caches packed (m bytes) as plain's (n bytes) compression with alg, if memory allows. */
static void cache_packed(SSL_CTX *ctx, int alg, const uint8_t *plain, size_t n,
                         const uint8_t *packed, size_t m)
{
    struct slot_cache *cache = slot_cache_of(&ctx->cert_comp_cache, packed_free);
    struct packed *pk = cache != NULL ? OPENSSL_malloc(sizeof(*pk) + m) : NULL;
    if (pk == NULL)
        return;
    pk->len = m;
    memcpy(pk->b, packed, m);
    slot_cache_put(cache, (uint8_t)alg, plain, n, pk);
}

/* Appends plain compressed with alg: from the cache, else compressed now and cached. */
static int compress_cached(SSL_CTX *ctx, int alg, const uint8_t *plain, size_t n, struct wr *out)
{
    struct slot_cache *cache = slot_cache_of(&ctx->cert_comp_cache, packed_free);
    if (slot_cache_find(cache, (uint8_t)alg, plain, n, packed_take, out))
        return wr_ok(out);
    size_t start = wr_len(out);
    if (!compress_run(alg, plain, n, out))
        return 0;
    __atomic_add_fetch(&compressions, 1, __ATOMIC_RELAXED);
    size_t m = wr_len(out) - start;
    cache_packed(ctx, alg, plain, n, wr_at(out, start, m), m);
    return 1;
}

/* ---- the CompressedCertificate message (RFC 8879 §4) ---- */

/*
 * struct { CertificateCompressionAlgorithm algorithm; uint24 uncompressed_length;
 *          opaque compressed_certificate_message<1..2^24-1>; } CompressedCertificate;
 */
int cert_comp_write_body(SSL *c, int alg, const uint8_t *body, size_t n, struct wr *w)
{
    wr_u16(w, (uint16_t)alg);
    wr_u24(w, (uint32_t)n);
    size_t at = wr_open_vec(w, 3);
    if (!compress_cached(c->ctx, alg, body, n, w))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, SSL_R_COMPRESSION_FAILURE);
    wr_close_vec(w, at, 3);
    if (c->server)
        c->cert_comp_server = (uint8_t)alg;
    else
        c->cert_comp_client = (uint8_t)alg;
    return 1;
}

static int we_offered(const SSL *c, uint16_t alg)
{
    if (!c->hs->cert_comp_offered || alg == CC_NONE || alg >= CC_LIMIT)
        return 0;
    return memchr(c->cert_comp.alg, alg, c->cert_comp.n) != NULL;
}

/*
 * §4: an algorithm we did not offer, or bytes that do not decompress to exactly the declared
 * length, are bad_certificate. The declared length is checked against the largest certificate
 * list we accept (SSL_CTX_set_max_cert_list) before anything is allocated.
 */
int cert_comp_read_body(SSL *c, struct rd body, struct wr *out)
{
    uint16_t alg;
    uint32_t len;
    struct rd packed;
    if (!rd_u16(&body, &alg) || !rd_u24(&body, &len) || !rd_vec24(&body, &packed) ||
        !rd_empty(&body) || rd_empty(&packed))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!we_offered(c, alg))
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
    if (len == 0)
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
    if (len > c->ctx->max_cert_list)
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, SSL_R_EXCESSIVE_MESSAGE_SIZE);
    uint8_t *p = wr_reserve(out, len);
    if (p == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    if (!decompress_exact(alg, packed.p, packed.n, p, len))
        return qtls_fail(c, SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DECOMPRESSION);
    if (c->server)
        c->cert_comp_client = (uint8_t)alg;
    else
        c->cert_comp_server = (uint8_t)alg;
    return 1;
}

/* ---- compressing ahead of handshakes (OpenSSL 3.2) ---- */

/* struct Certificate (RFC 8446 §4.4.2) of a configured pair: empty context, no extensions. */
static int write_plain_certificate(const struct cert_cfg *cc, struct wr *w)
{
    if (cc->cert == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_SET);
        return 0;
    }
    wr_u8(w, 0);
    size_t list = wr_open_vec(w, 3);
    int n = cc->chain != NULL ? sk_X509_num(cc->chain) : 0;
    for (int i = -1; i < n; i++) {
        cert_write_der(w, i < 0 ? cc->cert : sk_X509_value(cc->chain, i));
        wr_u16(w, 0);
    }
    wr_close_vec(w, list, 3);
    if (!wr_ok(w)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR);
        return 0;
    }
    return 1;
}

/* The current slot of a certificate set, with the context's extra chain when it has none. */
static struct cert_cfg current_pair(const struct cert_set *s)
{
    struct cert_cfg cc = s->slot[s->current];
    if (cc.chain == NULL)
        cc.chain = s->extra;
    return cc;
}

/* Compresses the set's current chain with alg, or each algorithm of pref (alg 0), into the cache. */
static int compress_certs(SSL_CTX *ctx, const struct cert_set *s, const struct cert_comp_pref *p,
                          int alg)
{
    struct wr plain, packed;
    int ok = 1;
    if (alg != CC_NONE && (alg >= CC_LIMIT || !compress_available(alg))) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
        return 0;
    }
    struct cert_cfg cc = current_pair(s);
    wr_init(&plain);
    wr_init(&packed);
    if (!write_plain_certificate(&cc, &plain))
        ok = 0;
    for (int a = CC_ZLIB; ok && a < CC_LIMIT; a++) {
        if (alg != CC_NONE ? a != alg : (p->n > 0 && memchr(p->alg, a, p->n) == NULL))
            continue;
        if (!compress_available(a))
            continue;
        wr_reset(&packed);
        ok = compress_cached(ctx, a, plain.buf, plain.len, &packed);
        if (!ok)
            ERR_raise(ERR_LIB_SSL, SSL_R_COMPRESSION_FAILURE);
    }
    wr_free(&plain);
    wr_free(&packed);
    return ok;
}

int SSL_CTX_compress_certs(SSL_CTX *ctx, int alg)
{
    return ctx != NULL && compress_certs(ctx, &ctx->certs, &ctx->cert_comp, alg);
}

int SSL_compress_certs(SSL *ssl, int alg)
{
    return ssl != NULL && compress_certs(ssl->ctx, certset_of(ssl), &ssl->cert_comp, alg);
}

size_t SSL_CTX_get1_compressed_cert(SSL_CTX *ctx, int alg, unsigned char **data,
                                    size_t *orig_len)
{
    struct wr plain, packed;
    size_t n = 0;
    if (ctx == NULL || data == NULL || orig_len == NULL || alg <= CC_NONE || alg >= CC_LIMIT ||
        !compress_available(alg)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
        return 0;
    }
    struct cert_cfg cc = current_pair(&ctx->certs);
    wr_init(&plain);
    wr_init(&packed);
    if (write_plain_certificate(&cc, &plain) &&
        compress_cached(ctx, alg, plain.buf, plain.len, &packed)) {
        *data = OPENSSL_memdup(packed.buf, packed.len);
        *orig_len = plain.len;
        n = *data != NULL ? packed.len : 0;
    }
    wr_free(&plain);
    wr_free(&packed);
    return n;
}

/*
 * Installs a Certificate body compressed elsewhere (SSL_CTX_get1_compressed_cert of another
 * process): it is decompressed once here, and used by handshakes that send exactly that body.
 */
int SSL_CTX_set1_compressed_cert(SSL_CTX *ctx, int algorithm, unsigned char *comp_data,
                                 size_t comp_length, size_t orig_length)
{
    if (ctx == NULL || comp_data == NULL || comp_length == 0 || algorithm <= CC_NONE ||
        algorithm >= CC_LIMIT || !compress_available(algorithm)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_COMPRESSION_ALGORITHM);
        return 0;
    }
    if (orig_length == 0 || orig_length > ctx->max_cert_list) {
        ERR_raise(ERR_LIB_SSL, SSL_R_EXCESSIVE_MESSAGE_SIZE);
        return 0;
    }
    uint8_t *plain = OPENSSL_malloc(orig_length);
    int ok = plain != NULL && decompress_exact(algorithm, comp_data, comp_length, plain,
                                               orig_length);
    if (!ok)
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_DECOMPRESSION);
    else
        cache_packed(ctx, algorithm, plain, orig_length, comp_data, comp_length);
    OPENSSL_free(plain);
    return ok;
}
