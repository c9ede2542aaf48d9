/*
 * The compression algorithms of certificate compression (RFC 8879 §3): zlib (1), brotli (2) and
 * zstd (3), from the system's libraries. Each is optional at build time: the Makefile defines
 * QTLS_HAVE_ZLIB / _BROTLI / _ZSTD for the ones pkg-config finds, and this file is the only one
 * that knows which (the rest of qtls asks compress_available). Like crypto.c for EVP, this is the
 * only caller of those libraries.
 */

#include "crypto/crypto.h"

#ifdef QTLS_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef QTLS_HAVE_BROTLI
#include <brotli/decode.h>
#include <brotli/encode.h>
#endif
#ifdef QTLS_HAVE_ZSTD
#include <zstd.h>
#endif

/*
 * The strongest settings: a server compresses each chain once per context (cert_comp.c caches
 * the result), so compression time is paid once and every handshake gets the smallest flight.
 */
#define ZLIB_LEVEL 9
#define BROTLI_QUALITY 11
#define ZSTD_LEVEL 19

int compress_available(int alg)
{
    switch (alg) {
#ifdef QTLS_HAVE_ZLIB
    case CC_ZLIB:
        return 1;
#endif
#ifdef QTLS_HAVE_BROTLI
    case CC_BROTLI:
        return 1;
#endif
#ifdef QTLS_HAVE_ZSTD
    case CC_ZSTD:
        return 1;
#endif
    default:
        return 0;
    }
}

const char *compress_name(int alg)
{
    static const char *const names[CC_LIMIT] = {"none", "zlib", "brotli", "zstd"};
    return alg >= 0 && alg < CC_LIMIT ? names[alg] : NULL;
}

#ifdef QTLS_HAVE_ZLIB
static size_t zlib_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    uLongf len = (uLongf)cap;
    return compress2(out, &len, in, (uLong)n, ZLIB_LEVEL) == Z_OK ? (size_t)len : 0;
}

/* One zlib stream that fills out exactly and leaves no input behind. */
static int zlib_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    uLongf out_len = (uLongf)len;
    uLong in_len = (uLong)n;
    return uncompress2(out, &out_len, in, &in_len) == Z_OK && out_len == len && in_len == n;
}
#endif

#ifdef QTLS_HAVE_BROTLI
static size_t brotli_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t len = cap;
    return BrotliEncoderCompress(BROTLI_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, in,
                                 &len, out) == BROTLI_TRUE
               ? len
               : 0;
}

/* A complete brotli stream of exactly len bytes and no input after it. */
static int brotli_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (st == NULL)
        return 0;
    size_t avail_in = n, avail_out = len;
    const uint8_t *next_in = in;
    uint8_t *next_out = out;
    BrotliDecoderResult r =
        BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
    BrotliDecoderDestroyInstance(st);
    return r == BROTLI_DECODER_RESULT_SUCCESS && avail_in == 0 && avail_out == 0;
}
#endif

#ifdef QTLS_HAVE_ZSTD
static size_t zstd_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t len = ZSTD_compress(out, cap, in, n, ZSTD_LEVEL);
    return ZSTD_isError(len) ? 0 : len;
}

/* Frames that decode to exactly len bytes (a larger output is an error, not a truncation). */
static int zstd_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    size_t got = ZSTD_decompress(out, len, in, n);
    return !ZSTD_isError(got) && got == len;
}
#endif

/* The most bytes alg can turn n bytes into; 0 for an algorithm not built. */
static size_t bound(int alg, size_t n)
{
    switch (alg) {
#ifdef QTLS_HAVE_ZLIB
    case CC_ZLIB:
        return (size_t)compressBound((uLong)n);
#endif
#ifdef QTLS_HAVE_BROTLI
    case CC_BROTLI:
        return BrotliEncoderMaxCompressedSize(n);
#endif
#ifdef QTLS_HAVE_ZSTD
    case CC_ZSTD:
        return ZSTD_compressBound(n);
#endif
    default:
        return 0;
    }
}

int compress_run(int alg, const uint8_t *in, size_t n, struct wr *out)
{
    size_t cap = bound(alg, n), start = wr_len(out), len = 0;
    uint8_t *p = cap > 0 ? wr_reserve(out, cap) : NULL;
    if (p == NULL)
        return 0;
    switch (alg) {
#ifdef QTLS_HAVE_ZLIB
    case CC_ZLIB:
        len = zlib_compress(in, n, p, cap);
        break;
#endif
#ifdef QTLS_HAVE_BROTLI
    case CC_BROTLI:
        len = brotli_compress(in, n, p, cap);
        break;
#endif
#ifdef QTLS_HAVE_ZSTD
    case CC_ZSTD:
        len = zstd_compress(in, n, p, cap);
        break;
#endif
    default:
        break;
    }
    wr_truncate(out, start + len);
    return len > 0;
}

int decompress_exact(int alg, const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    switch (alg) {
#ifdef QTLS_HAVE_ZLIB
    case CC_ZLIB:
        return zlib_decompress(in, n, out, len);
#endif
#ifdef QTLS_HAVE_BROTLI
    case CC_BROTLI:
        return brotli_decompress(in, n, out, len);
#endif
#ifdef QTLS_HAVE_ZSTD
    case CC_ZSTD:
        return zstd_decompress(in, n, out, len);
#endif
    default:
        return 0;
    }
}
