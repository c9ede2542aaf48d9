/*
 * The byte reader and writer (src/bytes.h): every parser in qtls relies on
 * a getter that fails without moving when the data is short, and on a
 * writer whose first failure is sticky, so these are tested exhaustively
 * at every boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

/* 0x00 0x01 0x02 ... : a pattern whose every byte says where it is. */
static uint8_t pattern[1024];

static int setup_pattern(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(pattern); i++)
        pattern[i] = (uint8_t)(i * 7 + 1);
    return 0;
}

static void assert_reader_at(const struct rd *r, const uint8_t *p, size_t n)
{
    assert_ptr_equal(r->p, p);
    assert_int_equal(r->n, n);
}

/* ---- reader: fixed-size getters ---- */

static void test_rd_ints_read_big_endian_and_advance(void **state)
{
    (void)state;
    static const uint8_t in[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a};
    struct rd r;
    uint8_t v8;
    uint16_t v16;
    uint32_t v24, v32;

    rd_init(&r, in, sizeof(in));
    assert_true(rd_u8(&r, &v8));
    assert_int_equal(v8, 0x01);
    assert_true(rd_u16(&r, &v16));
    assert_int_equal(v16, 0x0203);
    assert_true(rd_u24(&r, &v24));
    assert_int_equal(v24, 0x040506);
    assert_true(rd_u32(&r, &v32));
    assert_int_equal(v32, 0x0708090a);
    assert_reader_at(&r, in + sizeof(in), 0);
    assert_true(rd_empty(&r));
}

static void test_rd_ints_take_full_range(void **state)
{
    (void)state;
    static const uint8_t ff[4] = {0xff, 0xff, 0xff, 0xff};
    struct rd r;
    uint8_t v8;
    uint16_t v16;
    uint32_t v24, v32;

    rd_init(&r, ff, 1);
    assert_true(rd_u8(&r, &v8));
    assert_int_equal(v8, 0xff);
    rd_init(&r, ff, 2);
    assert_true(rd_u16(&r, &v16));
    assert_int_equal(v16, 0xffff);
    rd_init(&r, ff, 3);
    assert_true(rd_u24(&r, &v24));
    assert_int_equal(v24, 0xffffff);
    rd_init(&r, ff, 4);
    assert_true(rd_u32(&r, &v32));
    assert_int_equal(v32, 0xffffffffu);
}

static void test_rd_ints_fail_unchanged_at_every_short_length(void **state)
{
    (void)state;
    struct rd r;
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;

    for (size_t n = 0; n < 4; n++) {
        if (n < 1) {
            rd_init(&r, pattern, n);
            assert_false(rd_u8(&r, &v8));
            assert_reader_at(&r, pattern, n);
        }
        if (n < 2) {
            rd_init(&r, pattern, n);
            assert_false(rd_u16(&r, &v16));
            assert_reader_at(&r, pattern, n);
        }
        if (n < 3) {
            rd_init(&r, pattern, n);
            assert_false(rd_u24(&r, &v32));
            assert_reader_at(&r, pattern, n);
        }
        rd_init(&r, pattern, n);
        assert_false(rd_u32(&r, &v32));
        assert_reader_at(&r, pattern, n);
    }
}

/* A getter that fails in the middle of a message must not eat what came before. */
static void test_rd_ints_fail_unchanged_after_partial_consumption(void **state)
{
    (void)state;
    struct rd r;
    uint8_t v8;
    uint32_t v32;

    rd_init(&r, pattern, 6);
    assert_true(rd_u8(&r, &v8));
    assert_true(rd_u16(&r, &(uint16_t){0}));
    assert_false(rd_u32(&r, &v32));
    assert_reader_at(&r, pattern + 3, 3);
    assert_true(rd_u24(&r, &v32));
    assert_int_equal(v32, (uint32_t)pattern[3] << 16 | pattern[4] << 8 | pattern[5]);
    assert_false(rd_u8(&r, &v8));
    assert_reader_at(&r, pattern + 6, 0);
}

/* ---- reader: rd_bytes and rd_copy ---- */

static void test_rd_bytes_splits_exactly_when_enough(void **state)
{
    (void)state;
    for (size_t avail = 0; avail <= 64; avail++) {
        for (size_t len = 0; len <= avail; len++) {
            struct rd r, sub;
            rd_init(&r, pattern, avail);
            assert_true(rd_bytes(&r, len, &sub));
            assert_reader_at(&sub, pattern, len);
            assert_reader_at(&r, pattern + len, avail - len);
        }
    }
}

static void test_rd_bytes_fails_unchanged_when_short(void **state)
{
    (void)state;
    for (size_t avail = 0; avail <= 64; avail++) {
        for (size_t len = avail + 1; len <= avail + 70; len++) {
            struct rd r, sub = {NULL, 12345};
            rd_init(&r, pattern, avail);
            assert_false(rd_bytes(&r, len, &sub));
            assert_reader_at(&r, pattern, avail);
        }
        struct rd r, sub;
        rd_init(&r, pattern, avail);
        assert_false(rd_bytes(&r, SIZE_MAX, &sub));
        assert_reader_at(&r, pattern, avail);
    }
}

static void test_rd_copy_copies_or_fails_unchanged(void **state)
{
    (void)state;
    uint8_t out[80];
    for (size_t avail = 0; avail <= 64; avail++) {
        for (size_t len = 0; len <= sizeof(out) - 1; len++) {
            struct rd r;
            memset(out, 0xee, sizeof(out));
            rd_init(&r, pattern, avail);
            if (len <= avail) {
                assert_true(rd_copy(&r, out, len));
                assert_memory_equal(out, pattern, len);
                assert_int_equal(out[len], 0xee);
                assert_reader_at(&r, pattern + len, avail - len);
            } else {
                assert_false(rd_copy(&r, out, len));
                assert_reader_at(&r, pattern, avail);
            }
        }
    }
}

/* ---- reader: length-prefixed vectors ---- */

typedef int (*vec_fn)(struct rd *, struct rd *);

/* Builds prefix(len_bytes, declared) || avail bytes of pattern into buf. */
static size_t make_vec(uint8_t *buf, unsigned len_bytes, uint32_t declared, size_t avail)
{
    for (unsigned i = 0; i < len_bytes; i++)
        buf[i] = (uint8_t)(declared >> (8 * (len_bytes - 1 - i)));
    memcpy(buf + len_bytes, pattern, avail);
    return len_bytes + avail;
}

/* Success iff declared <= available; on success the sub-view and the rest are exact. */
static void check_vec(vec_fn fn, unsigned len_bytes, uint32_t declared, size_t avail)
{
    static uint8_t buf[3 + sizeof(pattern)];
    size_t n = make_vec(buf, len_bytes, declared, avail);
    struct rd r, sub;
    rd_init(&r, buf, n);
    if (declared <= avail) {
        assert_true(fn(&r, &sub));
        assert_reader_at(&sub, buf + len_bytes, declared);
        assert_reader_at(&r, buf + len_bytes + declared, avail - declared);
    } else {
        assert_false(fn(&r, &sub));
        assert_reader_at(&r, buf, n);
    }
}

static void test_rd_vec8_fails_unchanged_when_length_exceeds_data(void **state)
{
    (void)state;
    for (size_t avail = 0; avail <= 300; avail++)
        for (uint32_t declared = 0; declared <= 0xff; declared++)
            check_vec(rd_vec8, 1, declared, avail);
}

static void test_rd_vec16_fails_unchanged_when_length_exceeds_data(void **state)
{
    (void)state;
    static const uint32_t lens[] = {0,     1,     2,     0xff,  0x100,  0x101,  0x1ff,
                                    0x200, 0x3ff, 0x400, 0x401, 0x8000, 0xfffe, 0xffff};
    for (size_t avail = 0; avail <= sizeof(pattern); avail++)
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
            check_vec(rd_vec16, 2, lens[i], avail);
    /* Every declared length around a fixed amount of data. */
    for (uint32_t declared = 0; declared <= 0xffff; declared++)
        check_vec(rd_vec16, 2, declared, 300);
}

static void test_rd_vec24_fails_unchanged_when_length_exceeds_data(void **state)
{
    (void)state;
    static const uint32_t lens[] = {0,      1,       0xff,    0x100,    0x3ff,    0x400,   0x401,
                                    0xffff, 0x10000, 0x10400, 0x800000, 0xfffffe, 0xffffff};
    for (size_t avail = 0; avail <= sizeof(pattern); avail++)
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
            check_vec(rd_vec24, 3, lens[i], avail);
    for (uint32_t declared = 0; declared <= 0x1000; declared++)
        check_vec(rd_vec24, 3, declared, 777);
}

static void test_rd_vec_fails_unchanged_when_prefix_is_short(void **state)
{
    (void)state;
    static const vec_fn fns[] = {rd_vec8, rd_vec16, rd_vec24};
    static const uint8_t zeros[3];
    for (unsigned len_bytes = 1; len_bytes <= 3; len_bytes++) {
        for (size_t n = 0; n < len_bytes; n++) {
            struct rd r, sub;
            /* Zero bytes: a complete prefix would declare an empty vector and succeed. */
            rd_init(&r, zeros, n);
            assert_false(fns[len_bytes - 1](&r, &sub));
            assert_reader_at(&r, zeros, n);
        }
    }
}

static void test_rd_vec_nested_parse_stays_inside_its_vector(void **state)
{
    (void)state;
    /* vec16 { vec8 { aa bb } u8 cc } dd : the inner reads cannot see dd. */
    static const uint8_t in[] = {0x00, 0x04, 0x02, 0xaa, 0xbb, 0xcc, 0xdd};
    struct rd r, outer, inner;
    uint8_t v;
    rd_init(&r, in, sizeof(in));
    assert_true(rd_vec16(&r, &outer));
    assert_true(rd_vec8(&outer, &inner));
    assert_reader_at(&inner, in + 3, 2);
    assert_true(rd_u8(&outer, &v));
    assert_int_equal(v, 0xcc);
    assert_true(rd_empty(&outer));
    assert_false(rd_u8(&outer, &v));
    assert_true(rd_u8(&r, &v));
    assert_int_equal(v, 0xdd);
    assert_true(rd_empty(&r));
}

/* ---- writer: integers, bytes and reserve ---- */

static void test_wr_writes_big_endian_and_reads_back(void **state)
{
    (void)state;
    static const uint8_t expect[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                     0x07, 0x08, 0x09, 0x0a, 'h',  'i'};
    struct wr w;
    wr_init(&w);
    wr_u8(&w, 0x01);
    wr_u16(&w, 0x0203);
    wr_u24(&w, 0x040506);
    wr_u32(&w, 0x0708090a);
    wr_bytes(&w, "hi", 2);
    wr_bytes(&w, NULL, 0);
    assert_true(wr_ok(&w));
    assert_int_equal(w.len, sizeof(expect));
    assert_memory_equal(w.buf, expect, sizeof(expect));

    struct rd r;
    uint8_t v8;
    uint16_t v16;
    uint32_t v24, v32;
    rd_init(&r, w.buf, w.len);
    assert_true(rd_u8(&r, &v8));
    assert_true(rd_u16(&r, &v16));
    assert_true(rd_u24(&r, &v24));
    assert_true(rd_u32(&r, &v32));
    assert_int_equal(v8, 0x01);
    assert_int_equal(v16, 0x0203);
    assert_int_equal(v24, 0x040506);
    assert_int_equal(v32, 0x0708090a);
    wr_free(&w);
}

static void test_wr_u24_keeps_only_low_24_bits(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_u24(&w, 0xab123456);
    assert_true(wr_ok(&w));
    assert_int_equal(w.len, 3);
    assert_memory_equal(w.buf, "\x12\x34\x56", 3);
    wr_free(&w);
}

/*
 * A writer with no memory yet reserves zero bytes without failing and
 * without a pointer: NULL + 0 is undefined behaviour (clang's UBSan, the
 * fuzzing build, aborts on it).
 */
static void test_wr_reserve_zero_on_an_empty_writer(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    assert_null(wr_reserve(&w, 0));
    wr_bytes(&w, NULL, 0);
    assert_true(wr_ok(&w));
    assert_int_equal(w.len, 0);
    wr_free(&w);
}

static void test_wr_reserve_returns_room_in_place(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_u8(&w, 0x11);
    uint8_t *p = wr_reserve(&w, 3);
    assert_non_null(p);
    assert_ptr_equal(p, w.buf + 1);
    memcpy(p, "\x22\x33\x44", 3);
    wr_u8(&w, 0x55);
    assert_true(wr_ok(&w));
    assert_memory_equal(w.buf, "\x11\x22\x33\x44\x55", 5);
    wr_free(&w);
}

static void test_wr_growth_across_many_writes_keeps_content(void **state)
{
    (void)state;
    enum { N = 200000 };
    struct wr w;
    wr_init(&w);
    /* Mixed write sizes so that growth happens inside every kind of write. */
    size_t i = 0;
    while (i < N) {
        switch (i % 5) {
        case 0:
            wr_u8(&w, pattern[i % 256]);
            i += 1;
            break;
        case 1:
            wr_u16(&w, (uint16_t)(pattern[i % 256] << 8 | pattern[(i + 1) % 256]));
            i += 2;
            break;
        case 2:
            wr_u24(&w, (uint32_t)pattern[i % 256] << 16 | pattern[(i + 1) % 256] << 8 |
                           pattern[(i + 2) % 256]);
            i += 3;
            break;
        case 3:
            wr_u32(&w, (uint32_t)pattern[i % 256] << 24 | pattern[(i + 1) % 256] << 16 |
                           pattern[(i + 2) % 256] << 8 | pattern[(i + 3) % 256]);
            i += 4;
            break;
        default: {
            size_t n = 1 + i % 700;
            for (size_t k = 0; k < n; k++)
                wr_u8(&w, pattern[(i + k) % 256]);
            i += n;
            break;
        }
        }
        assert_true(wr_ok(&w));
        assert_int_equal(w.len, i);
        assert_true(w.cap >= w.len);
    }
    for (size_t k = 0; k < w.len; k++)
        if (w.buf[k] != pattern[k % 256])
            fail_msg("byte %zu is %02x, expected %02x", k, w.buf[k], pattern[k % 256]);

    /* One large write after many small ones. */
    static uint8_t big[100000];
    for (size_t k = 0; k < sizeof(big); k++)
        big[k] = (uint8_t)(k ^ (k >> 8));
    size_t before = w.len;
    wr_bytes(&w, big, sizeof(big));
    assert_true(wr_ok(&w));
    assert_int_equal(w.len, before + sizeof(big));
    assert_memory_equal(w.buf + before, big, sizeof(big));
    assert_int_equal(w.buf[0], pattern[0]);
    assert_int_equal(w.buf[before - 1], pattern[(before - 1) % 256]);
    wr_free(&w);
    assert_null(w.buf);
    assert_int_equal(w.len, 0);
}

/* ---- writer: length-prefixed vectors ---- */

static void test_wr_close_vec_patches_lengths_of_nested_vectors(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    size_t v24 = wr_open_vec(&w, 3);
    size_t v16 = wr_open_vec(&w, 2);
    size_t v8 = wr_open_vec(&w, 1);
    wr_bytes(&w, "abc", 3);
    wr_close_vec(&w, v8, 1);
    size_t empty = wr_open_vec(&w, 1);
    wr_close_vec(&w, empty, 1);
    wr_close_vec(&w, v16, 2);
    wr_u8(&w, 0x7f);
    wr_close_vec(&w, v24, 3);
    assert_true(wr_ok(&w));

    static const uint8_t expect[] = {0x00, 0x00, 0x08, 0x00, 0x05, 0x03, 'a', 'b', 'c', 0x00, 0x7f};
    assert_int_equal(w.len, sizeof(expect));
    assert_memory_equal(w.buf, expect, sizeof(expect));

    /* What the writer builds the reader takes apart. */
    struct rd r, a, b, c, d;
    rd_init(&r, w.buf, w.len);
    assert_true(rd_vec24(&r, &a) && rd_empty(&r));
    assert_true(rd_vec16(&a, &b));
    assert_true(rd_vec8(&b, &c));
    assert_int_equal(c.n, 3);
    assert_memory_equal(c.p, "abc", 3);
    assert_true(rd_vec8(&b, &d) && d.n == 0 && rd_empty(&b));
    wr_free(&w);
}

static void test_wr_vec8_takes_up_to_255_bytes_at_every_length(void **state)
{
    (void)state;
    for (size_t len = 0; len <= 255; len++) {
        struct wr w;
        wr_init(&w);
        wr_u8(&w, 0xaa);
        size_t at = wr_open_vec(&w, 1);
        assert_int_equal(at, 1);
        wr_bytes(&w, pattern, len);
        wr_close_vec(&w, at, 1);
        assert_true(wr_ok(&w));
        assert_int_equal(w.len, 2 + len);
        assert_int_equal(w.buf[0], 0xaa);
        assert_int_equal(w.buf[1], len);
        assert_memory_equal(w.buf + 2, pattern, len);
        wr_free(&w);
    }
}

static void test_wr_vec8_over_255_bytes_fails_and_stays_failed(void **state)
{
    (void)state;
    for (size_t len = 256; len <= 600; len++) {
        struct wr w;
        wr_init(&w);
        size_t at = wr_open_vec(&w, 1);
        wr_bytes(&w, pattern, len);
        assert_true(wr_ok(&w));
        wr_close_vec(&w, at, 1);
        assert_false(wr_ok(&w));
        /* Sticky: later writes do nothing, the error stays. */
        size_t n = w.len;
        wr_u8(&w, 1);
        wr_u16(&w, 1);
        wr_u24(&w, 1);
        wr_u32(&w, 1);
        wr_bytes(&w, "x", 1);
        assert_null(wr_reserve(&w, 1));
        size_t at2 = wr_open_vec(&w, 2);
        wr_close_vec(&w, at2, 2);
        assert_int_equal(w.len, n);
        assert_false(wr_ok(&w));
        wr_free(&w);
    }
}

static void test_wr_vec16_boundary_is_65535(void **state)
{
    (void)state;
    static uint8_t big[65536];
    struct wr w;

    wr_init(&w);
    size_t at = wr_open_vec(&w, 2);
    wr_bytes(&w, big, 65535);
    wr_close_vec(&w, at, 2);
    assert_true(wr_ok(&w));
    assert_int_equal(w.buf[0], 0xff);
    assert_int_equal(w.buf[1], 0xff);
    wr_free(&w);

    wr_init(&w);
    at = wr_open_vec(&w, 2);
    wr_bytes(&w, big, 65536);
    wr_close_vec(&w, at, 2);
    assert_false(wr_ok(&w));
    wr_u8(&w, 1);
    assert_false(wr_ok(&w));
    assert_int_equal(w.len, 2 + 65536);
    wr_free(&w);
}

static void test_wr_vec24_boundary_is_16777215(void **state)
{
    (void)state;
    struct wr w;
    const size_t max = 0xffffff;

    wr_init(&w);
    size_t at = wr_open_vec(&w, 3);
    uint8_t *p = wr_reserve(&w, max);
    assert_non_null(p);
    memset(p, 0x5a, max);
    wr_close_vec(&w, at, 3);
    assert_true(wr_ok(&w));
    assert_memory_equal(w.buf, "\xff\xff\xff\x5a", 4);
    /* One byte more in the same vector no longer fits. */
    wr_u8(&w, 0x5a);
    wr_close_vec(&w, at, 3);
    assert_false(wr_ok(&w));
    wr_free(&w);
}

static void test_wr_close_vec_after_earlier_failure_does_nothing(void **state)
{
    (void)state;
    uint8_t buf[4];
    struct wr w;
    memset(buf, 0xcc, sizeof(buf));
    wr_init_fixed(&w, buf, sizeof(buf));
    size_t at = wr_open_vec(&w, 1);
    wr_bytes(&w, pattern, 5); /* overflows the fixed buffer */
    assert_false(wr_ok(&w));
    wr_close_vec(&w, at, 1);
    assert_false(wr_ok(&w));
    /* The prefix placeholder was not patched with a length. */
    assert_int_equal(buf[0], 0x00);
    assert_int_equal(w.len, 1);
}

/* ---- writer: fixed buffers ---- */

static void test_wr_fixed_fills_exactly_to_capacity(void **state)
{
    (void)state;
    uint8_t buf[10];
    struct wr w;
    wr_init_fixed(&w, buf, sizeof(buf));
    wr_u8(&w, 1);
    wr_u16(&w, 0x0203);
    wr_u24(&w, 0x040506);
    wr_u32(&w, 0x0708090a);
    assert_true(wr_ok(&w));
    assert_ptr_equal(w.buf, buf);
    assert_int_equal(w.len, 10);
    assert_memory_equal(buf, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", 10);
    wr_free(&w); /* must not free caller memory */
    assert_null(w.buf);
}

/* Every write size at every fill level: an overflow sets failed, writes nothing past cap. */
static void test_wr_fixed_overflow_sets_failed_and_later_writes_do_nothing(void **state)
{
    (void)state;
    enum { CAP = 8, GUARD = 8 };
    for (size_t fill = 0; fill <= CAP; fill++) {
        for (unsigned kind = 0; kind < 6; kind++) {
            for (size_t blen = 0; blen <= CAP + 2; blen++) {
                uint8_t mem[CAP + GUARD];
                struct wr w;
                memset(mem, 0xcc, sizeof(mem));
                wr_init_fixed(&w, mem, CAP);
                wr_bytes(&w, pattern, fill);
                assert_true(wr_ok(&w));

                size_t need;
                switch (kind) {
                case 0:
                    need = 1;
                    wr_u8(&w, 0xee);
                    break;
                case 1:
                    need = 2;
                    wr_u16(&w, 0xeeee);
                    break;
                case 2:
                    need = 3;
                    wr_u24(&w, 0xeeeeee);
                    break;
                case 3:
                    need = 4;
                    wr_u32(&w, 0xeeeeeeee);
                    break;
                case 4:
                    need = blen;
                    wr_bytes(&w, pattern + 100, blen);
                    break;
                default:
                    need = blen;
                    if (fill + blen <= CAP)
                        assert_ptr_equal(wr_reserve(&w, blen), mem + fill);
                    else
                        assert_null(wr_reserve(&w, blen));
                    break;
                }
                if (fill + need <= CAP) {
                    assert_true(wr_ok(&w));
                    assert_int_equal(w.len, fill + need);
                } else {
                    assert_false(wr_ok(&w));
                    assert_int_equal(w.len, fill);
                    assert_memory_equal(mem, pattern, fill);
                    for (size_t k = fill; k < sizeof(mem); k++)
                        assert_int_equal(mem[k], 0xcc);
                    /* Even a write that would fit does nothing now. */
                    wr_bytes(&w, "", 0);
                    wr_u8(&w, 0x11);
                    assert_null(wr_reserve(&w, 0));
                    assert_false(wr_ok(&w));
                    assert_int_equal(w.len, fill);
                    if (fill < CAP)
                        assert_int_equal(mem[fill], 0xcc);
                }
                for (size_t k = CAP; k < sizeof(mem); k++)
                    assert_int_equal(mem[k], 0xcc);
                /* The only allowed way out is wr_reset. */
                wr_reset(&w);
                assert_true(wr_ok(&w));
                assert_int_equal(w.len, 0);
                assert_ptr_equal(w.buf, mem);
            }
        }
    }
}

static void test_wr_fixed_zero_capacity_fails_on_first_byte(void **state)
{
    (void)state;
    uint8_t mem[1] = {0xcc};
    struct wr w;
    wr_init_fixed(&w, mem, 0);
    wr_bytes(&w, NULL, 0);
    assert_true(wr_ok(&w));
    wr_u8(&w, 1);
    assert_false(wr_ok(&w));
    assert_int_equal(mem[0], 0xcc);
    assert_int_equal(w.len, 0);
}

static void test_wr_reserve_of_impossible_size_fails(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_u8(&w, 1);
    assert_null(wr_reserve(&w, SIZE_MAX));
    assert_false(wr_ok(&w));
    assert_int_equal(w.len, 1);
    wr_free(&w);
}

/* ---- writer: consume, reset ---- */

static void test_wr_consume_keeps_the_rest(void **state)
{
    (void)state;
    for (size_t total = 0; total <= 300; total += 7) {
        for (size_t n = 0; n <= total + 3; n++) {
            struct wr w;
            wr_init(&w);
            wr_bytes(&w, pattern, total);
            wr_consume(&w, n);
            assert_true(wr_ok(&w));
            if (n >= total) {
                assert_int_equal(w.len, 0);
            } else {
                assert_int_equal(w.len, total - n);
                assert_memory_equal(w.buf, pattern + n, total - n);
            }
            /* Appending after a consume continues after the kept bytes. */
            wr_u8(&w, 0x99);
            assert_int_equal(w.len, (n >= total ? 0 : total - n) + 1);
            assert_int_equal(w.buf[w.len - 1], 0x99);
            wr_free(&w);
        }
    }
}

static void test_wr_consume_in_steps_equals_one_consume(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_bytes(&w, pattern, sizeof(pattern));
    size_t gone = 0;
    for (size_t step = 1; gone + step <= sizeof(pattern); step++) {
        wr_consume(&w, step);
        gone += step;
        assert_int_equal(w.len, sizeof(pattern) - gone);
        assert_memory_equal(w.buf, pattern + gone, w.len);
    }
    wr_free(&w);
}

static void test_wr_reset_empties_clears_failure_and_keeps_memory(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_bytes(&w, pattern, 100);
    size_t at = wr_open_vec(&w, 1);
    wr_bytes(&w, pattern, 256);
    wr_close_vec(&w, at, 1);
    assert_false(wr_ok(&w));
    uint8_t *mem = w.buf;
    size_t cap = w.cap;
    wr_reset(&w);
    assert_true(wr_ok(&w));
    assert_int_equal(w.len, 0);
    assert_ptr_equal(w.buf, mem);
    assert_int_equal(w.cap, cap);
    wr_u16(&w, 0xbeef);
    assert_true(wr_ok(&w));
    assert_memory_equal(w.buf, "\xbe\xef", 2);
    wr_free(&w);
}

static void test_wr_at_views_only_written_bytes(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_bytes(&w, pattern, 10);
    assert_int_equal(wr_len(&w), 10);
    uint8_t *p = wr_at(&w, 4, 6);
    assert_non_null(p);
    assert_memory_equal(p, pattern + 4, 6);
    p[0] = 0xaa; /* patched in place */
    assert_int_equal(w.buf[4], 0xaa);
    assert_non_null(wr_at(&w, 10, 0));
    assert_null(wr_at(&w, 4, 7));
    assert_null(wr_at(&w, 11, 0));
    assert_null(wr_at(&w, 1, SIZE_MAX));
    wr_fail(&w);
    assert_false(wr_ok(&w));
    assert_null(wr_at(&w, 0, 1)); /* a failed writer has no trustworthy bytes */
    wr_free(&w);
}

static void test_wr_rewind_cleanses_what_it_drops(void **state)
{
    (void)state;
    struct wr w;
    wr_init(&w);
    wr_bytes(&w, pattern + 1, 8);
    uint8_t *mem = w.buf;
    wr_rewind(&w, 3);
    assert_int_equal(wr_len(&w), 3);
    assert_memory_equal(mem, pattern + 1, 3);
    for (size_t i = 3; i < 8; i++)
        assert_int_equal(mem[i], 0);
    wr_rewind(&w, 5); /* never grows */
    assert_int_equal(wr_len(&w), 3);
    assert_true(wr_ok(&w));
    wr_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rd_ints_read_big_endian_and_advance),
        cmocka_unit_test(test_rd_ints_take_full_range),
        cmocka_unit_test(test_rd_ints_fail_unchanged_at_every_short_length),
        cmocka_unit_test(test_rd_ints_fail_unchanged_after_partial_consumption),
        cmocka_unit_test(test_rd_bytes_splits_exactly_when_enough),
        cmocka_unit_test(test_rd_bytes_fails_unchanged_when_short),
        cmocka_unit_test(test_rd_copy_copies_or_fails_unchanged),
        cmocka_unit_test(test_rd_vec8_fails_unchanged_when_length_exceeds_data),
        cmocka_unit_test(test_rd_vec16_fails_unchanged_when_length_exceeds_data),
        cmocka_unit_test(test_rd_vec24_fails_unchanged_when_length_exceeds_data),
        cmocka_unit_test(test_rd_vec_fails_unchanged_when_prefix_is_short),
        cmocka_unit_test(test_rd_vec_nested_parse_stays_inside_its_vector),
        cmocka_unit_test(test_wr_writes_big_endian_and_reads_back),
        cmocka_unit_test(test_wr_u24_keeps_only_low_24_bits),
        cmocka_unit_test(test_wr_reserve_zero_on_an_empty_writer),
        cmocka_unit_test(test_wr_reserve_returns_room_in_place),
        cmocka_unit_test(test_wr_growth_across_many_writes_keeps_content),
        cmocka_unit_test(test_wr_close_vec_patches_lengths_of_nested_vectors),
        cmocka_unit_test(test_wr_vec8_takes_up_to_255_bytes_at_every_length),
        cmocka_unit_test(test_wr_vec8_over_255_bytes_fails_and_stays_failed),
        cmocka_unit_test(test_wr_vec16_boundary_is_65535),
        cmocka_unit_test(test_wr_vec24_boundary_is_16777215),
        cmocka_unit_test(test_wr_close_vec_after_earlier_failure_does_nothing),
        cmocka_unit_test(test_wr_fixed_fills_exactly_to_capacity),
        cmocka_unit_test(test_wr_fixed_overflow_sets_failed_and_later_writes_do_nothing),
        cmocka_unit_test(test_wr_fixed_zero_capacity_fails_on_first_byte),
        cmocka_unit_test(test_wr_reserve_of_impossible_size_fails),
        cmocka_unit_test(test_wr_consume_keeps_the_rest),
        cmocka_unit_test(test_wr_consume_in_steps_equals_one_consume),
        cmocka_unit_test(test_wr_reset_empties_clears_failure_and_keeps_memory),
        cmocka_unit_test(test_wr_at_views_only_written_bytes),
        cmocka_unit_test(test_wr_rewind_cleanses_what_it_drops),
    };
    return cmocka_run_group_tests(tests, setup_pattern, NULL);
}
