/* Bounds-checked reader and growable writer; see bytes.h. */
#include "base/bytes.h"

#include <string.h>

#include <openssl/crypto.h>

/* Reads an n-byte big-endian integer (n <= 4). */
static int rd_uint(struct rd *r, unsigned n, uint32_t *out)
{
    uint32_t v = 0;
    if (r->n < n)
        return 0;
    for (unsigned i = 0; i < n; i++)
        v = (v << 8) | r->p[i];
    r->p += n;
    r->n -= n;
    *out = v;
    return 1;
}

int rd_u8(struct rd *r, uint8_t *out)
{
    uint32_t v;
    if (!rd_uint(r, 1, &v))
        return 0;
    *out = (uint8_t)v;
    return 1;
}

int rd_u16(struct rd *r, uint16_t *out)
{
    uint32_t v;
    if (!rd_uint(r, 2, &v))
        return 0;
    *out = (uint16_t)v;
    return 1;
}

int rd_u24(struct rd *r, uint32_t *out) { return rd_uint(r, 3, out); }

int rd_u32(struct rd *r, uint32_t *out) { return rd_uint(r, 4, out); }

int rd_bytes(struct rd *r, size_t len, struct rd *out)
{
    if (r->n < len)
        return 0;
    out->p = r->p;
    out->n = len;
    r->p += len;
    r->n -= len;
    return 1;
}

int rd_copy(struct rd *r, uint8_t *out, size_t len)
{
    struct rd sub;
    if (!rd_bytes(r, len, &sub))
        return 0;
    if (len > 0)
        memcpy(out, sub.p, len);
    return 1;
}

/* A length-prefixed vector; r stays unchanged if either part is short. */
static int rd_vec(struct rd *r, unsigned len_bytes, struct rd *out)
{
    struct rd save = *r;
    uint32_t len;
    if (!rd_uint(r, len_bytes, &len) || !rd_bytes(r, len, out)) {
        *r = save;
        return 0;
    }
    return 1;
}

int rd_vec8(struct rd *r, struct rd *out) { return rd_vec(r, 1, out); }
int rd_vec16(struct rd *r, struct rd *out) { return rd_vec(r, 2, out); }
int rd_vec24(struct rd *r, struct rd *out) { return rd_vec(r, 3, out); }

void wr_init(struct wr *w) { memset(w, 0, sizeof(*w)); }

void wr_init_fixed(struct wr *w, uint8_t *buf, size_t cap)
{
    memset(w, 0, sizeof(*w));
    w->buf = buf;
    w->cap = cap;
    w->fixed = 1;
}

/* Makes room for n more bytes; grows by doubling and cleanses the old block. */
/* Room for n more bytes: doubling from 256, or (exact) to the very size asked. */
static int wr_grow_by(struct wr *w, size_t n, int exact)
{
    if (w->failed)
        return 0;
    if (n > SIZE_MAX - w->len) {
        w->failed = 1;
        return 0;
    }
    if (w->len + n <= w->cap)
        return 1;
    if (w->fixed) {
        w->failed = 1;
        return 0;
    }
    size_t cap = exact ? w->len + n : w->cap ? w->cap : 256;
    while (cap < w->len + n)
        cap = cap > SIZE_MAX / 2 ? w->len + n : cap * 2;
    uint8_t *nb = OPENSSL_malloc(cap);
    if (nb == NULL) {
        w->failed = 1;
        return 0;
    }
    if (w->len > 0)
        memcpy(nb, w->buf, w->len);
    OPENSSL_clear_free(w->buf, w->cap);
    w->buf = nb;
    w->cap = cap;
    return 1;
}


static uint8_t *reserve(struct wr *w, size_t n, int exact)
{
    if (!wr_grow_by(w, n, exact))
        return NULL;
    if (w->buf == NULL)
        return NULL; /* n == 0 on a writer with no memory yet: no pointer (NULL + 0 is UB) */
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

uint8_t *wr_reserve(struct wr *w, size_t n) { return reserve(w, n, 0); }

uint8_t *wr_reserve_exact(struct wr *w, size_t n) { return reserve(w, n, 1); }

static void wr_uint(struct wr *w, uint32_t v, unsigned n)
{
    uint8_t *p = wr_reserve(w, n);
    if (p == NULL)
        return;
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

void wr_u8(struct wr *w, uint8_t v) { wr_uint(w, v, 1); }
void wr_u16(struct wr *w, uint16_t v) { wr_uint(w, v, 2); }
void wr_u24(struct wr *w, uint32_t v) { wr_uint(w, v, 3); }
void wr_u32(struct wr *w, uint32_t v) { wr_uint(w, v, 4); }

void wr_bytes(struct wr *w, const void *p, size_t n)
{
    uint8_t *dst = wr_reserve(w, n);
    if (dst != NULL && n > 0)
        memcpy(dst, p, n);
}

size_t wr_open_vec(struct wr *w, unsigned len_bytes)
{
    size_t at = w->len;
    wr_uint(w, 0, len_bytes);
    return at;
}

void wr_close_vec(struct wr *w, size_t at, unsigned len_bytes)
{
    if (w->failed)
        return;
    size_t len = w->len - at - len_bytes;
    if (len_bytes < 4 && len >= ((size_t)1 << (8 * len_bytes))) {
        w->failed = 1;
        return;
    }
    for (unsigned i = 0; i < len_bytes; i++)
        w->buf[at + i] = (uint8_t)(len >> (8 * (len_bytes - 1 - i)));
}

void wr_consume(struct wr *w, size_t n)
{
    if (n >= w->len) {
        OPENSSL_cleanse(w->buf, w->len);
        w->len = 0;
        return;
    }
    memmove(w->buf, w->buf + n, w->len - n);
    w->len -= n;
}

uint8_t *wr_at(struct wr *w, size_t at, size_t n)
{
    if (w->failed || at > w->len || n > w->len - at)
        return NULL;
    return w->buf + at;
}

void wr_rewind(struct wr *w, size_t len)
{
    if (len >= w->len)
        return;
    OPENSSL_cleanse(w->buf + len, w->len - len);
    w->len = len;
}

void wr_reset(struct wr *w)
{
    if (w->buf != NULL)
        OPENSSL_cleanse(w->buf, w->len);
    w->len = 0;
    w->failed = 0;
}

void wr_reset_public(struct wr *w)
{
    w->len = 0;
    w->failed = 0;
}

void wr_free_public(struct wr *w)
{
    if (!w->fixed)
        OPENSSL_free(w->buf);
    wr_init(w);
}

void wr_free(struct wr *w)
{
    if (!w->fixed)
        OPENSSL_clear_free(w->buf, w->cap);
    wr_init(w);
}

/* ---- short byte strings ---- */

static uint8_t *sbuf_heap(const struct sbuf *b)
{
    uint8_t *p;
    memcpy(&p, b->in, sizeof(p));
    return p;
}

const uint8_t *sbuf_data(const struct sbuf *b)
{
    return b->len > SBUF_INLINE ? sbuf_heap(b) : b->in;
}

void sbuf_free(struct sbuf *b)
{
    if (b->len > SBUF_INLINE)
        OPENSSL_free(sbuf_heap(b));
    memset(b, 0, sizeof(*b));
}

int sbuf_set(struct sbuf *b, const uint8_t *p, size_t n)
{
    if (n > 255)
        return 0;
    if (n <= SBUF_INLINE) {
        sbuf_free(b);
        if (n > 0)
            memcpy(b->in, p, n);
        b->len = (uint8_t)n;
        return 1;
    }
    uint8_t *copy = OPENSSL_memdup(p, n);
    if (copy == NULL)
        return 0;
    sbuf_free(b);
    memcpy(b->in, &copy, sizeof(copy));
    b->len = (uint8_t)n;
    return 1;
}
