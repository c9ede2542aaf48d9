/*
 * crypto/mlkem.c: ML-KEM-768 and ML-KEM-1024 (FIPS 203, August 2024), qtls's own, written
 * from the standard. Section and algorithm numbers below are FIPS 203's.
 *
 * Arithmetic is in Z_q, q = 3329, on int16_t coefficients: Montgomery reduction (R = 2^16)
 * after every product, Barrett reduction where sums would grow past int16_t. The NTT's
 * twiddle factors are kept in Montgomery form (times R mod q), so that a Montgomery
 * multiplication by one is an exact multiplication by the factor. Sums of products
 * (the matrix-vector products of §5 and §6) are accumulated in int32_t and reduced once.
 *
 * Constant time: nothing branches on, or indexes memory by, secret data (d, z, m, dk, and
 * the seeds, polynomials and messages derived from them); Compress multiplies and shifts
 * instead of dividing; the implicit rejection of Decaps computes both keys and selects one
 * with a mask. The matrix A and its seed rho are public (rho is part of ek), so SampleNTT
 * branches on its rejection test. tests/mlkem/ct.sh checks all this under valgrind.
 *
 * libcrypto supplies SHA3-256, SHA3-512, SHAKE128 and SHAKE256 (§4.1), fetched once.
 * OpenSSL 3.0's SHAKE can be finalised once only (no incremental squeeze), so SampleNTT
 * asks for three SHAKE128 blocks and, in the rare case that is not enough, asks again for
 * more: an XOF's longer output extends the shorter one, so the result is the same.
 */
#include "crypto/mlkem.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "crypto/crypto.h"

#define Q 3329
#define N 256
#define QINV (-3327)       /* q^-1 mod 2^16, as an int16_t */
#define MONT_R2 1353       /* 2^32 mod q: a Montgomery product with it multiplies by 2^16 */
#define INVNTT_SCALE 1441  /* 2^32 / 128 mod q: NTT^-1's 1/128 (Alg. 10 step 14), and 2^16 */
#define MAX_K 4            /* k of ML-KEM-1024 */
#define POLY_BYTES 384     /* ByteEncode_12 of one polynomial */
#define SHAKE128_RATE 168  /* bytes per Keccak permutation */
#define XOF_FIRST_BLOCKS 3 /* 504 bytes: enough for SampleNTT 99.3% of the time */
#define XOF_MAX_BYTES (1u << 20) /* SampleNTT gives up (probability far below 2^-1000) */

typedef struct {
    int16_t c[N];
} poly;

/* The parameter sets of §8, Table 2 (eta1 = eta2 = 2 in both). */
struct params {
    unsigned k, du, dv;
    size_t ek_len, dk_len, ct_len;
};

static const struct params param_sets[2] = {
    [MLKEM_768] = {3, 10, 4, MLKEM768_EK_LEN, MLKEM768_DK_LEN, MLKEM768_CT_LEN},
    [MLKEM_1024] = {4, 11, 5, MLKEM1024_EK_LEN, MLKEM1024_DK_LEN, MLKEM1024_CT_LEN},
};

static const struct params *params_of(enum mlkem_param p)
{
    if (p != MLKEM_768 && p != MLKEM_1024)
        return NULL;
    return &param_sets[p];
}

/* params_of(p), raising an error if p is neither parameter set. */
static const struct params *params_or_raise(enum mlkem_param p)
{
    const struct params *prm = params_of(p);
    if (prm == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
    return prm;
}

size_t mlkem_ek_len(enum mlkem_param p) { return params_of(p) ? params_of(p)->ek_len : 0; }
size_t mlkem_dk_len(enum mlkem_param p) { return params_of(p) ? params_of(p)->dk_len : 0; }
size_t mlkem_ct_len(enum mlkem_param p) { return params_of(p) ? params_of(p)->ct_len : 0; }

/* ------------------------------------------------------------------ */
/* Arithmetic modulo q                                                 */
/* ------------------------------------------------------------------ */

/* a * 2^-16 mod q, in (-q, q), for |a| < q * 2^15 (Montgomery reduction). */
static inline int16_t mont_reduce(int32_t a)
{
    int16_t t = (int16_t)((int16_t)a * QINV); /* a * q^-1 mod 2^16 */
    return (int16_t)((a - (int32_t)t * Q) >> 16); /* exact: a - t q = 0 mod 2^16 */
}

/*
 * a * b * 2^-16 mod q, in (-q, q), for |a * b| < q * 2^15: mont_reduce(a * b) written in
 * 16-bit halves (the high half of a b less the high half of t q, whose low halves are
 * equal), the form compilers turn into vector multiply-high instructions.
 */
static inline int16_t fqmul(int16_t a, int16_t b)
{
    int16_t lo = (int16_t)(a * b);
    int16_t hi = (int16_t)(((int32_t)a * b) >> 16);
    int16_t t = (int16_t)(lo * QINV);
    return (int16_t)(hi - (int16_t)(((int32_t)t * Q) >> 16));
}

/*
 * a mod q, in [-(q-1)/2, (q-1)/2], for any int16_t a: Barrett reduction with
 * round(2^26 / q) = 20159, the quotient round(a 20159 / 2^26) taken from the product's high
 * half (equal, since adding the low half never carries past a multiple of 2^10).
 */
static inline int16_t barrett_reduce(int16_t a)
{
    int16_t hi = (int16_t)((20159 * (int32_t)a) >> 16);
    int16_t t = (int16_t)((hi + (1 << 9)) >> 10);
    return (int16_t)(a - t * Q);
}

/* a in (-q, q) to its representative in [0, q), without a branch. */
static inline uint16_t to_unsigned(int16_t a)
{
    return (uint16_t)(a + ((a >> 15) & Q));
}

/* Keeps the optimiser from seeing that v is a 0/1 mask, so that it stays arithmetic. */
static inline uint32_t value_barrier(uint32_t v)
{
    __asm__("" : "+r"(v));
    return v;
}

/*
 * Compress_d (§4.2.1, eq. 4.7) of x in [0, q): round(2^d x / q) mod 2^d. The division by q
 * is a multiplication by ceil(2^35 / q) and a shift, exact for numerators below 2^23
 * (d <= 11); (q - 1) / 2 rounds half up like round(), since q is odd.
 */
static inline uint16_t compress(uint16_t x, unsigned d)
{
    uint64_t n = ((uint64_t)x << d) + (Q - 1) / 2;
    return (uint16_t)(((n * 10321340u) >> 35) & ((1u << d) - 1));
}

/* Decompress_d (§4.2.1, eq. 4.8) of y < 2^d: round(q y / 2^d), in [0, q). */
static inline int16_t decompress(uint16_t y, unsigned d)
{
    return (int16_t)(((uint32_t)y * Q + (1u << (d - 1))) >> d);
}

/* ------------------------------------------------------------------ */
/* The NTT (§4.3)                                                      */
/* ------------------------------------------------------------------ */

/* zeta^BitRev7(i) * 2^16 mod q, centred, zeta = 17 (Algorithms 9 and 10; Appendix A). */
static const int16_t zetas[128] = {
    -1044, -758,  -359,  -1517, 1493,  1422,  287,   202,   -171,  622,   1577,  182,
    962,   -1202, -1474, 1468,  573,   -1325, 264,   383,   -829,  1458,  -1602, -130,
    -681,  1017,  732,   608,   -1542, 411,   -205,  -1571, 1223,  652,   -552,  1015,
    -1293, 1491,  -282,  -1544, 516,   -8,    -320,  -666,  -1618, -1162, 126,   1469,
    -853,  -90,   -271,  830,   107,   -1421, -247,  -951,  -398,  961,   -1508, -725,
    448,   -1065, 677,   -1275, -1103, 430,   555,   843,   -1251, 871,   1550,  105,
    422,   587,   177,   -235,  -291,  -460,  1574,  1653,  -246,  778,   1159,  -147,
    -777,  1483,  -602,  1119,  -1590, 644,   -872,  349,   418,   329,   -156,  -75,
    817,   1097,  603,   610,   1322,  -1285, -1465, 384,   -1215, -136,  1218,  -1335,
    -874,  220,   -1187, -1659, -1185, -1530, -1278, 794,   -1510, -854,  -870,  478,
    -108,  -308,  996,   991,   958,   -1460, 1522,  1628,
};

/* zeta^(2 BitRev7(i) + 1) * 2^16 mod q, centred: the gammas of BaseCaseMultiply (Alg. 12). */
static const int16_t gammas[128] = {
    -1103, 1103,  430,   -430,  555,   -555,  843,   -843,  -1251, 1251,  871,   -871,
    1550,  -1550, 105,   -105,  422,   -422,  587,   -587,  177,   -177,  -235,  235,
    -291,  291,   -460,  460,   1574,  -1574, 1653,  -1653, -246,  246,   778,   -778,
    1159,  -1159, -147,  147,   -777,  777,   1483,  -1483, -602,  602,   1119,  -1119,
    -1590, 1590,  644,   -644,  -872,  872,   349,   -349,  418,   -418,  329,   -329,
    -156,  156,   -75,   75,    817,   -817,  1097,  -1097, 603,   -603,  610,   -610,
    1322,  -1322, -1285, 1285,  -1465, 1465,  384,   -384,  -1215, 1215,  -136,  136,
    1218,  -1218, -1335, 1335,  -874,  874,   220,   -220,  -1187, 1187,  -1659, 1659,
    -1185, 1185,  -1530, 1530,  -1278, 1278,  794,   -794,  -1510, 1510,  -854,  854,
    -870,  870,   478,   -478,  -108,  108,   -308,  308,   996,   -996,  991,   -991,
    958,   -958,  -1460, 1460,  1522,  -1522, 1628,  -1628,
};

/*
 * The butterflies of one NTT layer on one block (Algorithm 9, steps 5-8): lo = f[start..),
 * hi = f[start + len..), which do not overlap. Runs of 8 let compilers use vector
 * instructions; len 2 and 4 take the plain loop.
 */
static void ntt_butterflies(int16_t *restrict lo, int16_t *restrict hi, size_t len,
                            int16_t zeta)
{
    size_t j = 0;
    for (; j + 8 <= len; j += 8) {
        for (size_t u = 0; u < 8; u++) {
            int16_t t = fqmul(zeta, hi[j + u]);
            hi[j + u] = (int16_t)(lo[j + u] - t);
            lo[j + u] = (int16_t)(lo[j + u] + t);
        }
    }
    for (; j < len; j++) {
        int16_t t = fqmul(zeta, hi[j]);
        hi[j] = (int16_t)(lo[j] - t);
        lo[j] = (int16_t)(lo[j] + t);
    }
}

static void poly_barrett_reduce(poly *f)
{
    for (size_t j = 0; j < N; j++)
        f->c[j] = barrett_reduce(f->c[j]);
}

/*
 * NTT (Algorithm 9), in place, for |f| < q; the result is Barrett-reduced, |f| <= (q-1)/2.
 * Each layer adds less than q to the bound, so seven layers stay below 8q < 2^15.
 */
static void ntt(poly *f)
{
    unsigned i = 1;
    for (size_t len = 128; len >= 2; len >>= 1)
        for (size_t start = 0; start < N; start += 2 * len)
            ntt_butterflies(f->c + start, f->c + start + len, len, zetas[i++]);
    poly_barrett_reduce(f);
}

/* The butterflies of one NTT^-1 layer on one block (Algorithm 10, steps 5-8). */
static void inv_ntt_butterflies(int16_t *restrict lo, int16_t *restrict hi, size_t len,
                                int16_t zeta)
{
    size_t j = 0;
    for (; j + 8 <= len; j += 8) {
        for (size_t u = 0; u < 8; u++) {
            int16_t t = lo[j + u];
            lo[j + u] = (int16_t)(t + hi[j + u]);
            hi[j + u] = fqmul(zeta, (int16_t)(hi[j + u] - t));
        }
    }
    for (; j < len; j++) {
        int16_t t = lo[j];
        lo[j] = (int16_t)(t + hi[j]);
        hi[j] = fqmul(zeta, (int16_t)(hi[j] - t));
    }
}

/*
 * NTT^-1 (Algorithm 10), in place, for |f| < q, and a multiplication by 2^16 (undoing the
 * 2^-16 of the Montgomery products before it); the result is in (-q, q). Sums double each
 * layer: reducing after the layers of length 8 and 64 keeps every value below 8q and
 * every difference below 2^15.
 */
static void inv_ntt(poly *f)
{
    unsigned i = 127;
    for (size_t len = 2; len <= 128; len <<= 1) {
        for (size_t start = 0; start < N; start += 2 * len)
            inv_ntt_butterflies(f->c + start, f->c + start + len, len, zetas[i--]);
        if (len == 8 || len == 64)
            poly_barrett_reduce(f);
    }
    for (size_t j = 0; j < N; j++)
        f->c[j] = fqmul(f->c[j], INVNTT_SCALE);
}

/*
 * acc += a x b in the NTT domain: MultiplyNTTs (Algorithm 11), BaseCaseMultiply (Algorithm
 * 12) on each pair, without the final reduction. With |a|, |b| < q each call adds less than
 * 2 q^2 to |acc|; four calls stay below q 2^15, the bound of mont_reduce.
 */
static void basemul_acc(int32_t acc[N], const poly *a, const poly *b)
{
    for (unsigned i = 0; i < N / 2; i++) {
        int32_t a0 = a->c[2 * i], a1 = a->c[2 * i + 1];
        int32_t b0 = b->c[2 * i], b1 = b->c[2 * i + 1];
        acc[2 * i] += a0 * b0 + (int32_t)mont_reduce(a1 * b1) * gammas[i];
        acc[2 * i + 1] += a0 * b1 + a1 * b0;
    }
}

/* The accumulated sum, times 2^-16, in (-q, q); acc is cleared for the next sum. */
static void acc_reduce(poly *r, int32_t acc[N])
{
    for (unsigned j = 0; j < N; j++) {
        r->c[j] = mont_reduce(acc[j]);
        acc[j] = 0;
    }
}

/* ------------------------------------------------------------------ */
/* Encoding (§4.2.1)                                                   */
/* ------------------------------------------------------------------ */

/* ByteEncode_12 (Algorithm 5) of f, |f| < q, as its representatives in [0, q). */
static void encode12(uint8_t out[POLY_BYTES], const poly *f)
{
    for (unsigned i = 0; i < N / 2; i++) {
        uint16_t x0 = to_unsigned(f->c[2 * i]), x1 = to_unsigned(f->c[2 * i + 1]);
        out[3 * i] = (uint8_t)x0;
        out[3 * i + 1] = (uint8_t)((x0 >> 8) | (x1 << 4));
        out[3 * i + 2] = (uint8_t)(x1 >> 4);
    }
}

/* The two 12-bit integers of in[0..2], unreduced. */
static inline void load12(const uint8_t in[3], uint16_t *x0, uint16_t *x1)
{
    *x0 = (uint16_t)(in[0] | ((in[1] & 0x0f) << 8));
    *x1 = (uint16_t)((in[1] >> 4) | (in[2] << 4));
}

/* x < 2^12 reduced mod q, without a branch (x < 2q). */
static inline int16_t reduce12(uint16_t x)
{
    int16_t r = (int16_t)(x - Q);
    return (int16_t)(r + ((r >> 15) & Q));
}

/* ByteDecode_12 (Algorithm 6): for d = 12 the integers are reduced mod q. */
static void decode12(poly *f, const uint8_t in[POLY_BYTES])
{
    for (unsigned i = 0; i < N / 2; i++) {
        uint16_t x0, x1;
        load12(in + 3 * i, &x0, &x1);
        f->c[2 * i] = reduce12(x0);
        f->c[2 * i + 1] = reduce12(x1);
    }
}

/* ByteEncode_d(Compress_d(f)) for d < 12 (Algorithms 5, eq. 4.7), |f| < q: 32 d bytes. */
static void compress_encode(uint8_t *out, const poly *f, unsigned d)
{
    uint32_t bits = 0;
    unsigned nbits = 0;
    for (unsigned i = 0; i < N; i++) {
        bits |= (uint32_t)compress(to_unsigned(f->c[i]), d) << nbits;
        for (nbits += d; nbits >= 8; nbits -= 8) {
            *out++ = (uint8_t)bits;
            bits >>= 8;
        }
    }
}

/* Decompress_d(ByteDecode_d(in)) for d < 12 (Algorithm 6, eq. 4.8): 32 d bytes in. */
static void decode_decompress(poly *f, const uint8_t *in, unsigned d)
{
    uint32_t bits = 0;
    unsigned nbits = 0;
    for (unsigned i = 0; i < N; i++) {
        for (; nbits < d; nbits += 8)
            bits |= (uint32_t)*in++ << nbits;
        f->c[i] = decompress((uint16_t)(bits & ((1u << d) - 1)), d);
        bits >>= d;
        nbits -= d;
    }
}

/* ------------------------------------------------------------------ */
/* Hashes (§4.1) and sampling (§4.2.2)                                 */
/* ------------------------------------------------------------------ */

static struct {
    CRYPTO_ONCE once;
    int ok;
    EVP_MD *sha3_256, *sha3_512, *shake128, *shake256;
} md = {.once = CRYPTO_ONCE_STATIC_INIT};

static void fetch_mds(void)
{
    md.sha3_256 = EVP_MD_fetch(NULL, "SHA3-256", NULL);
    md.sha3_512 = EVP_MD_fetch(NULL, "SHA3-512", NULL);
    md.shake128 = EVP_MD_fetch(NULL, "SHAKE128", NULL);
    md.shake256 = EVP_MD_fetch(NULL, "SHAKE256", NULL);
    md.ok = md.sha3_256 != NULL && md.sha3_512 != NULL && md.shake128 != NULL &&
            md.shake256 != NULL;
}

/*
 * One operation's hashing context. A context re-initialised with the digest it had keeps
 * its provider state, so each operation does its hashing in runs of one function.
 */
static EVP_MD_CTX *hash_ctx_new(void)
{
    EVP_MD_CTX *ctx = NULL;
    if (!CRYPTO_THREAD_run_once(&md.once, fetch_mds) || !md.ok ||
        (ctx = EVP_MD_CTX_new()) == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ctx;
}

/* out = md(a || b), out_len bytes: a fixed-length hash, or an XOF's first out_len bytes. */
static int hash2(EVP_MD_CTX *ctx, const EVP_MD *m, const uint8_t *a, size_t a_len,
                 const uint8_t *b, size_t b_len, uint8_t *out, size_t out_len)
{
    int ok = EVP_DigestInit_ex2(ctx, m, NULL) && EVP_DigestUpdate(ctx, a, a_len) &&
             (b_len == 0 || EVP_DigestUpdate(ctx, b, b_len));
    if (ok && (m == md.shake128 || m == md.shake256))
        ok = EVP_DigestFinalXOF(ctx, out, out_len);
    else if (ok)
        ok = EVP_DigestFinal_ex(ctx, out, NULL);
    if (!ok)
        ERR_raise(ERR_LIB_SSL, ERR_R_EVP_LIB);
    return ok;
}

/* G (SHA3-512) of a || b: 64 bytes. */
static int hash_g(EVP_MD_CTX *ctx, const uint8_t *a, size_t a_len, const uint8_t *b,
                  size_t b_len, uint8_t out[64])
{
    return hash2(ctx, md.sha3_512, a, a_len, b, b_len, out, 64);
}

/* H (SHA3-256): 32 bytes. */
static int hash_h(EVP_MD_CTX *ctx, const uint8_t *in, size_t len, uint8_t out[32])
{
    return hash2(ctx, md.sha3_256, in, len, NULL, 0, out, 32);
}

/*
 * Rejection sampling of SampleNTT (Algorithm 7, steps 5-13) from buf[*pos..len), appending
 * to a[*n..]; returns when 256 are there or the bytes run out. Each candidate is written and
 * counted only if below q, without a branch (the rejections are unpredictable), so a has
 * room for two more than N.
 */
static void sample_from_bytes(int16_t a[N + 2], unsigned *n, const uint8_t *buf, size_t *pos,
                              size_t len)
{
    unsigned k = *n;
    size_t i = *pos;
    for (; k < N && i + 3 <= len; i += 3) {
        uint16_t d1, d2;
        load12(buf + i, &d1, &d2);
        a[k] = (int16_t)d1;
        k += d1 < Q;
        a[k] = (int16_t)d2;
        k += d2 < Q;
    }
    *n = k < N ? k : N;
    *pos = i;
}

/* The rare tail of SampleNTT: longer XOF outputs, from the heap, until a is full. */
static int sample_ntt_more(EVP_MD_CTX *ctx, const uint8_t seed[34], int16_t a[N + 2],
                           unsigned n, size_t pos)
{
    for (size_t len = 2 * XOF_FIRST_BLOCKS * SHAKE128_RATE; len <= XOF_MAX_BYTES; len *= 2) {
        uint8_t *buf = OPENSSL_malloc(len);
        int ok = buf != NULL && hash2(ctx, md.shake128, seed, 34, NULL, 0, buf, len);
        if (ok)
            sample_from_bytes(a, &n, buf, &pos, len);
        OPENSSL_free(buf);
        if (!ok)
            return 0;
        if (n == N)
            return 1;
    }
    return 0;
}

/* SampleNTT(rho || x || y) (Algorithm 7): one entry of the matrix A-hat, in [0, q). */
static int sample_ntt(EVP_MD_CTX *ctx, const uint8_t rho[32], uint8_t x, uint8_t y, poly *a)
{
    uint8_t seed[34], buf[XOF_FIRST_BLOCKS * SHAKE128_RATE];
    int16_t c[N + 2];
    unsigned n = 0;
    size_t pos = 0;
    memcpy(seed, rho, 32);
    seed[32] = x;
    seed[33] = y;
    if (!hash2(ctx, md.shake128, seed, sizeof(seed), NULL, 0, buf, sizeof(buf)))
        return 0;
    sample_from_bytes(c, &n, buf, &pos, sizeof(buf));
    if (n < N && !sample_ntt_more(ctx, seed, c, n, pos))
        return 0;
    memcpy(a->c, c, sizeof(a->c));
    return 1;
}

/*
 * SamplePolyCBD_2(PRF_2(sigma, b)) (Algorithm 8, eq. 4.3): PRF is SHAKE256(sigma || b), 128
 * bytes. Coefficient i is (bit 4i + bit 4i+1) - (bit 4i+2 + bit 4i+3), in [-2, 2].
 */
static int sample_cbd2(EVP_MD_CTX *ctx, const uint8_t sigma[32], uint8_t b, poly *f)
{
    uint8_t buf[128];
    if (!hash2(ctx, md.shake256, sigma, 32, &b, 1, buf, sizeof(buf)))
        return 0;
    for (unsigned i = 0; i < N / 8; i++) {
        const uint8_t *p = buf + 4 * i;
        uint32_t t = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        uint32_t pairs = (t & 0x55555555u) + ((t >> 1) & 0x55555555u);
        for (unsigned j = 0; j < 8; j++) {
            int16_t x = (int16_t)((pairs >> (4 * j)) & 3);
            int16_t y = (int16_t)((pairs >> (4 * j + 2)) & 3);
            f->c[8 * i + j] = (int16_t)(x - y);
        }
    }
    OPENSSL_cleanse(buf, sizeof(buf));
    return 1;
}

/* k polynomials of SamplePolyCBD_2(PRF(sigma, *b++)), each through the NTT if ntt_them. */
static int sample_cbd2_vec(EVP_MD_CTX *ctx, const uint8_t sigma[32], uint8_t *b, poly *v,
                           unsigned k, int ntt_them)
{
    for (unsigned i = 0; i < k; i++) {
        if (!sample_cbd2(ctx, sigma, (*b)++, &v[i]))
            return 0;
        if (ntt_them)
            ntt(&v[i]);
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* K-PKE (§5)                                                          */
/* ------------------------------------------------------------------ */

/* The secrets of K-PKE.KeyGen, wiped as one. */
struct keygen_work {
    uint8_t rho_sigma[64]; /* (rho, sigma) = G(d || k) */
    poly s_hat[MAX_K], e_hat[MAX_K], a, t;
    int32_t acc[N];
};

/* K-PKE.KeyGen(d) (Algorithm 13): ek_PKE (384k + 32 bytes) and dk_PKE (384k bytes). */
static int kpke_keygen(const struct params *p, EVP_MD_CTX *ctx, const uint8_t d[32],
                       uint8_t *ek, uint8_t *dk_pke, struct keygen_work *w)
{
    const uint8_t k_byte = (uint8_t)p->k;
    const uint8_t *rho = w->rho_sigma, *sigma = w->rho_sigma + 32;
    uint8_t b = 0;
    if (!hash_g(ctx, d, 32, &k_byte, 1, w->rho_sigma) ||
        !sample_cbd2_vec(ctx, sigma, &b, w->s_hat, p->k, 1) ||
        !sample_cbd2_vec(ctx, sigma, &b, w->e_hat, p->k, 1))
        return 0;
    memset(w->acc, 0, sizeof(w->acc));
    for (unsigned i = 0; i < p->k; i++) {
        for (unsigned j = 0; j < p->k; j++) {
            if (!sample_ntt(ctx, rho, (uint8_t)j, (uint8_t)i, &w->a)) /* A-hat[i, j] */
                return 0;
            basemul_acc(w->acc, &w->a, &w->s_hat[j]);
        }
        acc_reduce(&w->t, w->acc);
        for (unsigned x = 0; x < N; x++) /* t-hat = A-hat s-hat + e-hat */
            w->t.c[x] = barrett_reduce((int16_t)(fqmul(w->t.c[x], MONT_R2) + w->e_hat[i].c[x]));
        encode12(ek + POLY_BYTES * i, &w->t);
        encode12(dk_pke + POLY_BYTES * i, &w->s_hat[i]);
    }
    memcpy(ek + POLY_BYTES * p->k, rho, 32);
    return 1;
}

/* The secrets of K-PKE.Encrypt, wiped as one. */
struct encrypt_work {
    poly r_hat[MAX_K], e1[MAX_K], e2, a, t_hat, u, v;
    int32_t acc[N];
};

/* v = NTT^-1(t-hat^T r-hat) + e2 + Decompress_1(ByteDecode_1(m)) (Algorithm 14, 19-21). */
static void encrypt_v(const struct params *p, const uint8_t *ek, const uint8_t m[32],
                      struct encrypt_work *w)
{
    for (unsigned j = 0; j < p->k; j++) {
        decode12(&w->t_hat, ek + POLY_BYTES * j);
        basemul_acc(w->acc, &w->t_hat, &w->r_hat[j]);
    }
    acc_reduce(&w->v, w->acc);
    inv_ntt(&w->v);
    for (unsigned i = 0; i < N; i++) {
        int16_t bit = (int16_t)((m[i / 8] >> (i % 8)) & 1);
        int16_t mu = (int16_t)(-bit & ((Q + 1) / 2)); /* Decompress_1: 0 or 1665 */
        w->v.c[i] = barrett_reduce((int16_t)(w->v.c[i] + w->e2.c[i] + mu));
    }
}

/* K-PKE.Encrypt(ek_PKE, m, r) (Algorithm 14): c, 32 (du k + dv) bytes. */
static int kpke_encrypt(const struct params *p, EVP_MD_CTX *ctx, const uint8_t *ek,
                        const uint8_t m[32], const uint8_t r[32], uint8_t *c,
                        struct encrypt_work *w)
{
    const uint8_t *rho = ek + POLY_BYTES * p->k;
    uint8_t b = 0;
    if (!sample_cbd2_vec(ctx, r, &b, w->r_hat, p->k, 1) ||
        !sample_cbd2_vec(ctx, r, &b, w->e1, p->k, 0) || !sample_cbd2_vec(ctx, r, &b, &w->e2, 1, 0))
        return 0;
    memset(w->acc, 0, sizeof(w->acc));
    for (unsigned i = 0; i < p->k; i++) { /* u = NTT^-1(A-hat^T r-hat) + e1 */
        for (unsigned j = 0; j < p->k; j++) {
            if (!sample_ntt(ctx, rho, (uint8_t)i, (uint8_t)j, &w->a)) /* A-hat[j, i] */
                return 0;
            basemul_acc(w->acc, &w->a, &w->r_hat[j]);
        }
        acc_reduce(&w->u, w->acc);
        inv_ntt(&w->u);
        for (unsigned x = 0; x < N; x++)
            w->u.c[x] = barrett_reduce((int16_t)(w->u.c[x] + w->e1[i].c[x]));
        compress_encode(c + 32 * p->du * i, &w->u, p->du);
    }
    encrypt_v(p, ek, m, w);
    compress_encode(c + 32 * p->du * p->k, &w->v, p->dv);
    return 1;
}

/* The secrets of K-PKE.Decrypt, wiped as one. */
struct decrypt_work {
    poly u_hat, s_hat, w;
    int32_t acc[N];
};

/* K-PKE.Decrypt(dk_PKE, c) (Algorithm 15): m, 32 bytes. */
static void kpke_decrypt(const struct params *p, const uint8_t *dk_pke, const uint8_t *c,
                         uint8_t m[32], struct decrypt_work *w)
{
    memset(w->acc, 0, sizeof(w->acc));
    for (unsigned i = 0; i < p->k; i++) { /* s-hat^T NTT(u') */
        decode_decompress(&w->u_hat, c + 32 * p->du * i, p->du);
        ntt(&w->u_hat);
        decode12(&w->s_hat, dk_pke + POLY_BYTES * i);
        basemul_acc(w->acc, &w->s_hat, &w->u_hat);
    }
    acc_reduce(&w->w, w->acc);
    inv_ntt(&w->w);
    decode_decompress(&w->u_hat, c + 32 * p->du * p->k, p->dv); /* v' */
    memset(m, 0, 32);
    for (unsigned i = 0; i < N; i++) { /* m = ByteEncode_1(Compress_1(v' - w)) */
        int16_t x = barrett_reduce((int16_t)(w->u_hat.c[i] - w->w.c[i]));
        m[i / 8] |= (uint8_t)(compress(to_unsigned(x), 1) << (i % 8));
    }
}

/* ------------------------------------------------------------------ */
/* ML-KEM (§6, §7)                                                     */
/* ------------------------------------------------------------------ */

/* ML-KEM.KeyGen_internal(d, z) (Algorithm 16): dk = dk_PKE || ek || H(ek) || z. */
static int keygen_internal(const struct params *p, EVP_MD_CTX *ctx, const uint8_t d[32],
                           const uint8_t z[32], uint8_t *ek, uint8_t *dk)
{
    struct keygen_work w;
    size_t pke_len = POLY_BYTES * p->k;
    int ok = kpke_keygen(p, ctx, d, ek, dk, &w);
    OPENSSL_cleanse(&w, sizeof(w));
    if (!ok)
        return 0;
    memcpy(dk + pke_len, ek, p->ek_len);
    memcpy(dk + pke_len + p->ek_len + 32, z, 32);
    return hash_h(ctx, ek, p->ek_len, dk + pke_len + p->ek_len);
}

int mlkem_keygen_derand(enum mlkem_param p, const uint8_t d[MLKEM_SEED_LEN],
                        const uint8_t z[MLKEM_SEED_LEN], uint8_t *ek, uint8_t *dk)
{
    const struct params *prm = params_or_raise(p);
    EVP_MD_CTX *ctx = NULL;
    if (prm == NULL)
        return 0;
    int ok = (ctx = hash_ctx_new()) != NULL && keygen_internal(prm, ctx, d, z, ek, dk);
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        OPENSSL_cleanse(ek, prm->ek_len);
        OPENSSL_cleanse(dk, prm->dk_len);
    }
    return ok;
}

int mlkem_keygen(enum mlkem_param p, uint8_t *ek, uint8_t *dk)
{
    const struct params *prm = params_or_raise(p);
    uint8_t dz[2 * MLKEM_SEED_LEN];
    if (prm == NULL)
        return 0;
    int ok = crypto_random(dz, sizeof(dz)) &&
             mlkem_keygen_derand(p, dz, dz + MLKEM_SEED_LEN, ek, dk);
    OPENSSL_cleanse(dz, sizeof(dz));
    if (!ok) {
        OPENSSL_cleanse(ek, prm->ek_len);
        OPENSSL_cleanse(dk, prm->dk_len);
    }
    return ok;
}

/* The modulus check of §7.2: every 12-bit integer of ek's t-hat is below q. Public data. */
static int ek_modulus_ok(const struct params *p, const uint8_t *ek)
{
    for (size_t i = 0; i < POLY_BYTES * p->k; i += 3) {
        uint16_t x0, x1;
        load12(ek + i, &x0, &x1);
        if (x0 >= Q || x1 >= Q)
            return 0;
    }
    return 1;
}

int mlkem_ek_check(enum mlkem_param p, const uint8_t *ek)
{
    const struct params *prm = params_of(p);
    return prm != NULL && ek_modulus_ok(prm, ek);
}

/* ML-KEM.Encaps_internal(ek, m) (Algorithm 17): (K, r) = G(m || H(ek)), c = Encrypt. */
static int encaps_internal(const struct params *p, EVP_MD_CTX *ctx, const uint8_t *ek,
                           const uint8_t m[32], uint8_t *ct, uint8_t ss[32])
{
    struct encrypt_work w;
    uint8_t h[32], k_r[64];
    int ok = hash_h(ctx, ek, p->ek_len, h) && hash_g(ctx, m, 32, h, 32, k_r) &&
             kpke_encrypt(p, ctx, ek, m, k_r + 32, ct, &w);
    if (ok)
        memcpy(ss, k_r, 32);
    OPENSSL_cleanse(&w, sizeof(w));
    OPENSSL_cleanse(k_r, sizeof(k_r));
    return ok;
}

int mlkem_encaps_derand(enum mlkem_param p, const uint8_t *ek, const uint8_t m[MLKEM_SEED_LEN],
                        uint8_t *ct, uint8_t ss[MLKEM_SS_LEN])
{
    const struct params *prm = params_or_raise(p);
    EVP_MD_CTX *ctx = NULL;
    int ok = prm != NULL && ek_modulus_ok(prm, ek) && (ctx = hash_ctx_new()) != NULL &&
             encaps_internal(prm, ctx, ek, m, ct, ss);
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        if (prm != NULL)
            OPENSSL_cleanse(ct, prm->ct_len);
        OPENSSL_cleanse(ss, MLKEM_SS_LEN);
    }
    return ok;
}

int mlkem_encaps(enum mlkem_param p, const uint8_t *ek, uint8_t *ct, uint8_t ss[MLKEM_SS_LEN])
{
    const struct params *prm = params_or_raise(p);
    uint8_t m[MLKEM_SEED_LEN];
    if (prm == NULL)
        return 0;
    int ok = crypto_random(m, sizeof(m)) && mlkem_encaps_derand(p, ek, m, ct, ss);
    OPENSSL_cleanse(m, sizeof(m));
    if (!ok) {
        OPENSSL_cleanse(ct, prm->ct_len);
        OPENSSL_cleanse(ss, MLKEM_SS_LEN);
    }
    return ok;
}

/* The secrets of Decaps, wiped as one. */
struct decaps_work {
    struct decrypt_work dec;
    struct encrypt_work enc;
    uint8_t m[32], k_r[64], k_bar[32], c2[MLKEM_MAX_CT_LEN];
};

/* 0xff if a and b (len bytes) are equal, else 0, in time independent of their contents. */
static uint8_t ct_equal_mask(const uint8_t *a, const uint8_t *b, size_t len)
{
    uint32_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (uint32_t)(a[i] ^ b[i]);
    /* diff in [0, 255]: diff - 1 has its high bits set only when diff is 0 */
    return (uint8_t)(value_barrier(diff - 1) >> 8);
}

/* ML-KEM.Decaps_internal(dk, c) (Algorithm 18), implicit rejection without a branch. */
static int decaps_internal(const struct params *p, EVP_MD_CTX *ctx, const uint8_t *dk,
                           const uint8_t *c, uint8_t ss[32], struct decaps_work *w)
{
    size_t pke_len = POLY_BYTES * p->k;
    const uint8_t *ek = dk + pke_len, *h = ek + p->ek_len, *z = h + 32;
    kpke_decrypt(p, dk, c, w->m, &w->dec);
    if (!hash_g(ctx, w->m, 32, h, 32, w->k_r) ||                          /* (K', r') */
        !kpke_encrypt(p, ctx, ek, w->m, w->k_r + 32, w->c2, &w->enc) || /* c' */
        !hash2(ctx, md.shake256, z, 32, c, p->ct_len, w->k_bar, 32))     /* K-bar = J(z||c) */
        return 0;
    uint8_t eq = ct_equal_mask(c, w->c2, p->ct_len);
    for (unsigned i = 0; i < 32; i++)
        ss[i] = (uint8_t)((w->k_r[i] & eq) | (w->k_bar[i] & (uint8_t)~eq));
    return 1;
}

int mlkem_decaps(enum mlkem_param p, const uint8_t *dk, const uint8_t *ct,
                 uint8_t ss[MLKEM_SS_LEN])
{
    const struct params *prm = params_or_raise(p);
    EVP_MD_CTX *ctx = NULL;
    struct decaps_work w;
    int ok = prm != NULL && (ctx = hash_ctx_new()) != NULL &&
             decaps_internal(prm, ctx, dk, ct, ss, &w);
    EVP_MD_CTX_free(ctx);
    OPENSSL_cleanse(&w, sizeof(w));
    if (!ok)
        OPENSSL_cleanse(ss, MLKEM_SS_LEN);
    return ok;
}
