/*
 * Bounds-checked byte reader and growable writer (in the spirit of
 * BoringSSL's CBS/CBB). Nothing outside bytes.c indexes peer bytes: every
 * length read from the wire lives inside a struct rd.
 */
#ifndef QTLS_BYTES_H
#define QTLS_BYTES_H

#include <stddef.h>
#include <stdint.h>

#define QTLS_MUST_CHECK __attribute__((warn_unused_result))

/* A view of bytes; never owns memory. */
struct rd {
    const uint8_t *p;
    size_t n;
};

/* Every rd_* getter returns 1 when it read and advanced, 0 (r unchanged) when too short. */
static inline void rd_init(struct rd *r, const uint8_t *p, size_t n)
{
    r->p = p;
    r->n = n;
}
static inline int rd_empty(const struct rd *r) { return r->n == 0; }
QTLS_MUST_CHECK int rd_u8(struct rd *r, uint8_t *out);
QTLS_MUST_CHECK int rd_u16(struct rd *r, uint16_t *out);
QTLS_MUST_CHECK int rd_u24(struct rd *r, uint32_t *out);
QTLS_MUST_CHECK int rd_u32(struct rd *r, uint32_t *out);
/* Splits off the next len bytes as a sub-view. */
QTLS_MUST_CHECK int rd_bytes(struct rd *r, size_t len, struct rd *out);
/* Copies the next len bytes out. */
QTLS_MUST_CHECK int rd_copy(struct rd *r, uint8_t *out, size_t len);
/* Length-prefixed sub-views (1-, 2- and 3-byte prefixes). */
QTLS_MUST_CHECK int rd_vec8(struct rd *r, struct rd *out);
QTLS_MUST_CHECK int rd_vec16(struct rd *r, struct rd *out);
QTLS_MUST_CHECK int rd_vec24(struct rd *r, struct rd *out);

/*
 * A growable writer. Writes never fail loudly: the first failure (allocation,
 * fixed-buffer overflow, vector too long) sets the sticky `failed` flag and
 * later writes do nothing; check wr_ok() once after a run of writes.
 */
struct wr {
    uint8_t *buf;
    size_t len, cap;
    unsigned fixed : 1, failed : 1;
};

void wr_init(struct wr *w);
/* A writer over caller memory that never grows. */
void wr_init_fixed(struct wr *w, uint8_t *buf, size_t cap);
void wr_u8(struct wr *w, uint8_t v);
void wr_u16(struct wr *w, uint16_t v);
void wr_u24(struct wr *w, uint32_t v);
void wr_u32(struct wr *w, uint32_t v);
void wr_bytes(struct wr *w, const void *p, size_t n);
/* Reserves room for n bytes and returns where they go (NULL on failure). */
uint8_t *wr_reserve(struct wr *w, size_t n);
/* The same, growing to exactly what is needed instead of doubling (a record buffer: 16.6 KB
   rather than 32 KB). */
uint8_t *wr_reserve_exact(struct wr *w, size_t n);
/* Reserves a length prefix of len_bytes (1..3) and returns its position ... */
size_t wr_open_vec(struct wr *w, unsigned len_bytes);
/* ... which wr_close_vec patches with the length written since; fails on overflow. */
void wr_close_vec(struct wr *w, size_t at, unsigned len_bytes);
static inline int wr_ok(const struct wr *w) { return !w->failed; }
/* How many bytes are written: the position the next write goes to. */
static inline size_t wr_len(const struct wr *w) { return w->len; }
/* Marks the writer failed (a write done outside it, such as an i2d_*, went wrong). */
static inline void wr_fail(struct wr *w) { w->failed = 1; }
/*
 * The n bytes already written at `at`, to read or patch in place (a binder over the message
 * written before it); NULL if the writer failed or they are not all written.
 */
uint8_t *wr_at(struct wr *w, size_t at, size_t n);
/* Drops the first n bytes (consumed input), keeping the rest. */
void wr_consume(struct wr *w, size_t n);
/* Drops everything after the first len bytes (an abandoned message, unused reserved room). */
static inline void wr_truncate(struct wr *w, size_t len)
{
    if (len < w->len)
        w->len = len;
}
/* wr_truncate, cleansing the dropped bytes first (they may be plaintext or key material). */
void wr_rewind(struct wr *w, size_t len);
/* Empties the writer, keeping its memory. */
void wr_reset(struct wr *w);
/* Frees the memory (cleansed first: writers may hold secrets). */
void wr_free(struct wr *w);
/* wr_reset and wr_free for a writer that holds nothing secret (records as they go on the wire):
   no cleansing, which would cost as much as the record's encryption. */
void wr_reset_public(struct wr *w);
void wr_free_public(struct wr *w);

/*
 * A short byte string kept in place when it fits (an ALPN name, a client's group list), else on
 * the heap with its pointer stored in `in`: 16 bytes in a connection instead of a worst-case
 * array, and no allocation for the usual sizes. At most 255 bytes.
 */
#define SBUF_INLINE 15
struct sbuf {
    uint8_t in[SBUF_INLINE];
    uint8_t len;
};
/* Replaces the contents with a copy of p[0..n): 1, or 0 (contents unchanged) if n > 255 or
   memory runs out. */
QTLS_MUST_CHECK int sbuf_set(struct sbuf *b, const uint8_t *p, size_t n);
const uint8_t *sbuf_data(const struct sbuf *b);
static inline size_t sbuf_len(const struct sbuf *b) { return b->len; }
void sbuf_free(struct sbuf *b);

#endif
