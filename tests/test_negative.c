/*
 * Hostile and malformed input. Every case makes one endpoint fail and checks
 * what a QUIC stack relies on:
 *   1. SSL_do_handshake (or SSL_process_quic_post_handshake) returns <= 0
 *      and SSL_get_error says SSL_ERROR_SSL;
 *   2. exactly one alert, the expected one, went through send_alert, at the
 *      level SSL_quic_write_level reports;
 *   3. the first ERR_LIB_SSL entry on the error queue has the expected reason
 *      (libcrypto may queue its own entries first, e.g. for a bad EC point);
 *   4. nothing crashes or leaks (the SANITIZE=1 build runs the same cases);
 * and that failure is final: SSL_do_handshake again fails, with no second alert.
 *
 * The inputs are hand-crafted (a ClientHello built here from a default that a
 * qtls server accepts, then edited) or real messages of a qtls peer changed
 * in flight: the mock transport's output is parsed into messages per level,
 * one field is changed, and the flight is re-framed before delivery.
 * Each table row names the RFC section it enforces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "mock_quic.h"

#define INI ssl_encryption_initial
#define EARLY ssl_encryption_early_data
#define HSK ssl_encryption_handshake
#define APP ssl_encryption_application

/* Extension codepoints (RFC 8446 §4.2, RFC 7301, RFC 9001 §8.2). */
enum {
    X_SNI = 0,
    X_GROUPS = 10,
    X_SIGALGS = 13,
    X_ALPN = 16,
    X_PSK = 41,
    X_EARLY_DATA = 42,
    X_VERSIONS = 43,
    X_COOKIE = 44,
    X_PSK_MODES = 45,
    X_KEY_SHARE = 51,
    X_TP = 0x39,
    X_TP_DRAFT = 0xffa5,
    X_UNKNOWN = 0x1234, /* no meaning to qtls */
};

/* ------------------------------------------------------------------ */
/* Bytes: a fixed-capacity writer and a reader that asserts           */
/* ------------------------------------------------------------------ */

#define BUF_CAP 16384

struct buf {
    uint8_t d[BUF_CAP];
    size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
    assert_true(n <= BUF_CAP - b->n);
    if (n > 0)
        memcpy(b->d + b->n, p, n);
    b->n += n;
}

/* A big-endian integer of `width` bytes. */
static void put_int(struct buf *b, uint32_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        uint8_t byte = (uint8_t)(v >> (8 * i));
        put(b, &byte, 1);
    }
}

/* A length prefix of `width` bytes, patched by close_vec. */
static size_t open_vec(struct buf *b, int width)
{
    size_t at = b->n;
    put_int(b, 0, width);
    return at;
}

static void close_vec(struct buf *b, size_t at, int width)
{
    size_t len = b->n - at - (size_t)width;
    for (int i = 0; i < width; i++)
        b->d[at + (size_t)i] = (uint8_t)(len >> (8 * (width - 1 - i)));
}

struct cur {
    const uint8_t *p;
    size_t n;
};

static uint32_t get_int(struct cur *c, int width)
{
    uint32_t v = 0;
    assert_true(c->n >= (size_t)width);
    for (int i = 0; i < width; i++)
        v = v << 8 | c->p[i];
    c->p += width;
    c->n -= (size_t)width;
    return v;
}

static struct cur get_bytes(struct cur *c, size_t n)
{
    assert_true(c->n >= n);
    struct cur out = {c->p, n};
    c->p += n;
    c->n -= n;
    return out;
}

static struct cur get_vec(struct cur *c, int width) { return get_bytes(c, get_int(c, width)); }

/* ------------------------------------------------------------------ */
/* Extension lists                                                     */
/* ------------------------------------------------------------------ */

#define EXT_CAP 2048 /* a ClientHello's key_share: X25519MLKEM768's 1216 bytes and X25519's */
#define MAX_EXTS 24

struct ext {
    uint16_t type;
    size_t len;
    uint8_t body[EXT_CAP];
};

struct exts {
    struct ext e[MAX_EXTS];
    size_t n;
};

static struct ext *ext_get(struct exts *x, uint16_t type)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->e[i].type == type)
            return &x->e[i];
    return NULL;
}

/* Appends, even if the type is already there. */
static void ext_add(struct exts *x, uint16_t type, const void *body, size_t len)
{
    assert_true(x->n < MAX_EXTS && len <= EXT_CAP);
    struct ext *e = &x->e[x->n++];
    e->type = type;
    e->len = len;
    if (len > 0)
        memcpy(e->body, body, len);
}

/* Replaces the body of the first extension of this type, or appends it. */
static void ext_set(struct exts *x, uint16_t type, const void *body, size_t len)
{
    struct ext *e = ext_get(x, type);
    if (e == NULL) {
        ext_add(x, type, body, len);
        return;
    }
    assert_true(len <= EXT_CAP);
    e->len = len;
    if (len > 0)
        memcpy(e->body, body, len);
}

static void ext_del(struct exts *x, uint16_t type)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->e[i].type != type)
            x->e[k++] = x->e[i];
    x->n = k;
}

static void exts_parse(struct exts *x, struct cur list)
{
    x->n = 0;
    while (list.n > 0) {
        uint16_t type = (uint16_t)get_int(&list, 2);
        struct cur body = get_vec(&list, 2);
        ext_add(x, type, body.p, body.n);
    }
}

/* Extension extensions<..> with its 2-byte length, plus `adjust` (> 0 overruns). */
static void exts_put(struct buf *b, const struct exts *x, int adjust)
{
    size_t at = open_vec(b, 2);
    for (size_t i = 0; i < x->n; i++) {
        put_int(b, x->e[i].type, 2);
        put_int(b, (uint32_t)x->e[i].len, 2);
        put(b, x->e[i].body, x->e[i].len);
    }
    close_vec(b, at, 2);
    uint32_t len = (uint32_t)(b->n - at - 2) + (uint32_t)adjust;
    b->d[at] = (uint8_t)(len >> 8);
    b->d[at + 1] = (uint8_t)len;
}

/* ------------------------------------------------------------------ */
/* ClientHello / ServerHello / HelloRetryRequest (RFC 8446 §4.1.2-3)   */
/* ------------------------------------------------------------------ */

struct hello {
    int client;             /* ClientHello (vectors) or ServerHello (single values) */
    uint16_t version;       /* legacy_version */
    uint8_t random[32];
    uint8_t sid[40];        /* legacy_session_id(_echo) */
    size_t sid_len;
    uint8_t suites[64];     /* ClientHello: the list; ServerHello: 2 bytes */
    size_t suites_len;
    uint8_t comp[8];        /* ClientHello: the list; ServerHello: 1 byte */
    size_t comp_len;
    struct exts x;
    int exts_len_adjust;    /* added to the extensions length field */
    uint8_t tail[8];        /* bytes after the extensions */
    size_t tail_len;
};

static void hello_parse(struct hello *h, int client, const struct buf *body)
{
    struct cur c = {body->d, body->n}, v;
    memset(h, 0, sizeof(*h));
    h->client = client;
    h->version = (uint16_t)get_int(&c, 2);
    memcpy(h->random, get_bytes(&c, 32).p, 32);
    v = get_vec(&c, 1);
    memcpy(h->sid, v.p, h->sid_len = v.n);
    v = client ? get_vec(&c, 2) : get_bytes(&c, 2);
    assert_true(v.n <= sizeof(h->suites));
    memcpy(h->suites, v.p, h->suites_len = v.n);
    v = client ? get_vec(&c, 1) : get_bytes(&c, 1);
    assert_true(v.n <= sizeof(h->comp));
    memcpy(h->comp, v.p, h->comp_len = v.n);
    exts_parse(&h->x, get_vec(&c, 2));
    assert_int_equal(c.n, 0);
}

static void hello_put(struct buf *b, const struct hello *h)
{
    put_int(b, h->version, 2);
    put(b, h->random, 32);
    put_int(b, (uint32_t)h->sid_len, 1);
    put(b, h->sid, h->sid_len);
    if (h->client)
        put_int(b, (uint32_t)h->suites_len, 2);
    put(b, h->suites, h->suites_len);
    if (h->client)
        put_int(b, (uint32_t)h->comp_len, 1);
    put(b, h->comp, h->comp_len);
    exts_put(b, &h->x, h->exts_len_adjust);
    put(b, h->tail, h->tail_len);
}

/* RFC 7748 §6.1: Alice's X25519 public key, a valid share. */
static const uint8_t x25519_pub[32] = {
    0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54, 0x74, 0x8b, 0x7d, 0xdc, 0xb4, 0x3e, 0xf7, 0x5a,
    0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38, 0x1a, 0xf4, 0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a,
};

/* RFC 8446 §4.1.3: a ServerHello with this random is a HelloRetryRequest. */
static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

/* A ClientHello key_share with one entry. */
static void ch_set_key_share(struct hello *h, uint16_t group, const uint8_t *ke, size_t len)
{
    static struct buf b;
    b.n = 0;
    size_t list = open_vec(&b, 2);
    put_int(&b, group, 2);
    size_t v = open_vec(&b, 2);
    put(&b, ke, len);
    close_vec(&b, v, 2);
    close_vec(&b, list, 2);
    ext_set(&h->x, X_KEY_SHARE, b.d, b.n);
}

/* A ServerHello key_share: one KeyShareEntry. */
static void sh_set_key_share(struct hello *h, uint16_t group, const uint8_t *ke, size_t len)
{
    static struct buf b;
    b.n = 0;
    put_int(&b, group, 2);
    size_t v = open_vec(&b, 2);
    put(&b, ke, len);
    close_vec(&b, v, 2);
    ext_set(&h->x, X_KEY_SHARE, b.d, b.n);
}

/*
 * The ClientHello a qtls server with the default configuration (ecdsa256,
 * ALPN "h3") accepts: TLS 1.3, X25519 share, ecdsa_secp256r1_sha256,
 * transport parameters in the v1 codepoint.
 */
static void hello_default_client(struct hello *h)
{
    static const uint8_t suites[] = {0x13, 0x01, 0x13, 0x02, 0x13, 0x03};
    static const uint8_t versions[] = {2, 0x03, 0x04};
    static const uint8_t groups[] = {0, 2, 0x00, 0x1d};
    static const uint8_t sigalgs[] = {0, 6, 0x04, 0x03, 0x08, 0x04, 0x08, 0x07};
    static const uint8_t alpn[] = {0, 3, 2, 'h', '3'};
    static const uint8_t modes[] = {1, 1};
    memset(h, 0, sizeof(*h));
    h->client = 1;
    h->version = 0x0303;
    memset(h->random, 0x5a, sizeof(h->random));
    memcpy(h->suites, suites, h->suites_len = sizeof(suites));
    h->comp_len = 1; /* the null method */
    ext_add(&h->x, X_VERSIONS, versions, sizeof(versions));
    ext_add(&h->x, X_GROUPS, groups, sizeof(groups));
    ch_set_key_share(h, 0x001d, x25519_pub, sizeof(x25519_pub));
    ext_add(&h->x, X_SIGALGS, sigalgs, sizeof(sigalgs));
    ext_add(&h->x, X_ALPN, alpn, sizeof(alpn));
    ext_add(&h->x, X_PSK_MODES, modes, sizeof(modes));
    ext_add(&h->x, X_TP, "crafted-tp", 10);
}

/* ------------------------------------------------------------------ */
/* Flights: one side's output split into messages per level           */
/* ------------------------------------------------------------------ */

#define MAX_MSGS 8

struct msg {
    uint8_t type;
    struct buf body;
};

struct flight {
    struct msg m[4][MAX_MSGS];
    size_t n[4];
};

/* Takes everything `s` wrote (its out buffers are emptied). */
static void flight_take(struct flight *fl, struct mock_side *s)
{
    for (int l = 0; l < 4; l++) {
        struct cur c = {s->out[l], s->out_len[l]};
        fl->n[l] = 0;
        while (c.n > 0) {
            assert_true(fl->n[l] < MAX_MSGS);
            struct msg *m = &fl->m[l][fl->n[l]++];
            m->type = (uint8_t)get_int(&c, 1);
            struct cur body = get_vec(&c, 3);
            m->body.n = 0;
            put(&m->body, body.p, body.n);
        }
        free(s->out[l]);
        s->out[l] = NULL;
        s->out_len[l] = 0;
    }
}

/* Re-frames the messages (4-byte headers with the new lengths) into s's out buffers. */
static void flight_put(struct mock_side *s, const struct flight *fl)
{
    static struct buf b;
    for (int l = 0; l < 4; l++) {
        b.n = 0;
        for (size_t i = 0; i < fl->n[l]; i++) {
            put_int(&b, fl->m[l][i].type, 1);
            put_int(&b, (uint32_t)fl->m[l][i].body.n, 3);
            put(&b, fl->m[l][i].body.d, fl->m[l][i].body.n);
        }
        if (b.n == 0)
            continue;
        s->out[l] = malloc(b.n);
        assert_non_null(s->out[l]);
        memcpy(s->out[l], b.d, b.n);
        s->out_len[l] = b.n;
    }
}

static size_t flight_index(struct flight *fl, int level, uint8_t type)
{
    for (size_t i = 0; i < fl->n[level]; i++)
        if (fl->m[level][i].type == type)
            return i;
    fail_msg("no message of type %d at level %d", type, level);
    return 0;
}

static struct msg *flight_find(struct flight *fl, int level, uint8_t type)
{
    return &fl->m[level][flight_index(fl, level, type)];
}

static void flight_insert(struct flight *fl, int level, size_t at, uint8_t type,
                          const void *body, size_t len)
{
    assert_true(fl->n[level] < MAX_MSGS && at <= fl->n[level]);
    memmove(&fl->m[level][at + 1], &fl->m[level][at], (fl->n[level] - at) * sizeof(struct msg));
    fl->n[level]++;
    fl->m[level][at].type = type;
    fl->m[level][at].body.n = 0;
    put(&fl->m[level][at].body, body, len);
}

static void flight_remove(struct flight *fl, int level, uint8_t type)
{
    size_t i = flight_index(fl, level, type);
    memmove(&fl->m[level][i], &fl->m[level][i + 1], (fl->n[level] - i - 1) * sizeof(struct msg));
    fl->n[level]--;
}

/* ------------------------------------------------------------------ */
/* The cases                                                           */
/* ------------------------------------------------------------------ */

struct fixture;

enum kind {
    CRAFT, /* the default ClientHello, edited by hello_fn, to a fresh server */
    PUMP,  /* real client and server; flight number `flight` is edited in transit */
};

enum edit {
    NO_EDIT,     /* the failure comes from the configuration alone */
    EDIT_BODY,   /* body_fn on the message (level, type) */
    EDIT_HELLO,  /* hello_fn on the ClientHello / ServerHello (level, type) */
    EDIT_EE,     /* exts_fn on the EncryptedExtensions list */
    EDIT_FLIGHT, /* flight_fn on the whole flight */
};

struct neg_case {
    const char *name;
    enum kind kind;
    const char *server_cert; /* NULL: ecdsa256 */
    void (*config)(struct fixture *f);
    /* CRAFT: frame as this type (0 = ClientHello) and deliver at this level */
    uint8_t craft_type;
    int craft_level;
    /* PUMP: flights count from 0 (the first ClientHello), either direction */
    int flight;
    int level;
    uint8_t type;
    enum edit edit;
    void (*body_fn)(struct buf *body);
    void (*hello_fn)(struct hello *h);
    void (*exts_fn)(struct exts *x);
    void (*flight_fn)(struct flight *fl);
    void (*after)(struct fixture *f); /* extra checks once the failure was checked */
    /* expected */
    int victim_server;
    int alert;
    int reason;
};

struct fixture {
    const struct neg_case *tc;
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
};

/* ---- generic body edits ---- */

static void append_byte(struct buf *b) { put_int(b, 0, 1); }
static void drop_last_byte(struct buf *b) { b->n--; }
static void flip_last_byte(struct buf *b) { b->d[b->n - 1] ^= 0x01; }

/* CertificateVerify: struct { SignatureScheme algorithm; opaque signature<0..2^16-1>; } */
static void cv_scheme_rsa_pkcs1_sha1(struct buf *b) { b->d[0] = 0x02, b->d[1] = 0x01; }
static void cv_scheme_rsa_pkcs1_sha256(struct buf *b) { b->d[0] = 0x04, b->d[1] = 0x01; }
static void cv_scheme_ecdsa_p384(struct buf *b) { b->d[0] = 0x05, b->d[1] = 0x03; }
static void cv_scheme_rsa_pss(struct buf *b) { b->d[0] = 0x08, b->d[1] = 0x04; }

/* Certificate with an empty certificate_list. */
static void cert_empty_list(struct buf *b)
{
    b->n = 0;
    put_int(b, 0, 1);
    put_int(b, 0, 3);
}

/* Certificate whose only entry holds bytes that are not a certificate (an empty SEQUENCE). */
static void cert_garbage_der(struct buf *b)
{
    static const uint8_t body[] = {0, 0, 0, 7, 0, 0, 2, 0x30, 0x00, 0, 0};
    b->n = 0;
    put(b, body, sizeof(body));
}

/* Certificate with a certificate_request_context, which a server's must not have. */
static void cert_with_context(struct buf *b)
{
    static struct buf copy;
    copy = *b;
    b->n = 0;
    put_int(b, 1, 1);
    put_int(b, 0x42, 1);
    put(b, copy.d + 1, copy.n - 1); /* the original context is empty */
}

/* The first CertificateEntry gets the extension bytes `ext` (type, length, body). */
static void cert_leaf_with_extension(struct buf *b, const uint8_t *ext, size_t ext_len)
{
    static struct buf copy;
    struct cur c, list, data;
    copy = *b;
    c = (struct cur){copy.d, copy.n};
    struct cur context = get_vec(&c, 1);
    list = get_vec(&c, 3);
    data = get_vec(&list, 3);
    (void)get_vec(&list, 2); /* the entry's own (empty) extensions */
    b->n = 0;
    put_int(b, (uint32_t)context.n, 1);
    put(b, context.p, context.n);
    size_t l = open_vec(b, 3);
    size_t d = open_vec(b, 3);
    put(b, data.p, data.n);
    close_vec(b, d, 3);
    size_t e = open_vec(b, 2);
    put(b, ext, ext_len);
    close_vec(b, e, 2);
    put(b, list.p, list.n); /* the other entries as they were */
    close_vec(b, l, 3);
}

/* The first CertificateEntry carries an extension the client never offered. */
static void cert_entry_unknown_extension(struct buf *b)
{
    static const uint8_t ext[] = {0x12, 0x34, 0, 0};
    cert_leaf_with_extension(b, ext, sizeof(ext));
}

/* RFC 8446 §4.4.2.1: status_request { ocsp, OCSPResponse<1..2^24-1> = 0xaa }. */
static void cert_leaf_ocsp_staple(struct buf *b)
{
    static const uint8_t ext[] = {0, 5, 0, 5, 1, 0, 0, 1, 0xaa};
    cert_leaf_with_extension(b, ext, sizeof(ext));
}

static void cert_leaf_ocsp_empty_response(struct buf *b)
{
    static const uint8_t ext[] = {0, 5, 0, 4, 1, 0, 0, 0};
    cert_leaf_with_extension(b, ext, sizeof(ext));
}

static void cert_leaf_ocsp_unknown_type(struct buf *b)
{
    static const uint8_t ext[] = {0, 5, 0, 5, 2, 0, 0, 1, 0xaa};
    cert_leaf_with_extension(b, ext, sizeof(ext));
}

static void cert_leaf_ocsp_overrun(struct buf *b)
{
    static const uint8_t ext[] = {0, 5, 0, 5, 1, 0, 0, 2, 0xaa};
    cert_leaf_with_extension(b, ext, sizeof(ext));
}

/* ---- hello edits (the crafted ClientHello, a real ClientHello or ServerHello) ---- */

static void hello_trailing_byte(struct hello *h) { h->tail_len = 1; }
static void hello_exts_overrun(struct hello *h) { h->exts_len_adjust = 1; }
static void hello_session_id(struct hello *h) { memset(h->sid, 0x42, h->sid_len = 32); }
static void hello_session_id_33(struct hello *h) { memset(h->sid, 0x42, h->sid_len = 33); }
static void hello_compression(struct hello *h) { h->comp[0] = 1; }
static void hello_no_versions(struct hello *h) { ext_del(&h->x, X_VERSIONS); }
static void hello_no_key_share(struct hello *h) { ext_del(&h->x, X_KEY_SHARE); }

static void ch_suites_odd(struct hello *h) { h->suites_len = 3; }
static void ch_suites_unshared(struct hello *h)
{
    h->suites[0] = 0x00, h->suites[1] = 0x2f; /* TLS_RSA_WITH_AES_128_CBC_SHA */
    h->suites_len = 2;
}
static void ch_duplicate_alpn(struct hello *h)
{
    struct ext *e = ext_get(&h->x, X_ALPN);
    ext_add(&h->x, X_ALPN, e->body, e->len);
}
static void ch_duplicate_tp(struct hello *h) { ext_add(&h->x, X_TP, "again", 5); }
static void ch_duplicate_unknown(struct hello *h)
{
    ext_add(&h->x, X_UNKNOWN, "a", 1);
    ext_add(&h->x, X_UNKNOWN, "b", 1);
}
static void ch_tls12_only(struct hello *h) { ext_set(&h->x, X_VERSIONS, "\x02\x03\x03", 3); }
static void ch_no_groups(struct hello *h) { ext_del(&h->x, X_GROUPS); }
static void ch_no_sigalgs(struct hello *h) { ext_del(&h->x, X_SIGALGS); }
static void ch_only_sha1_sigalgs(struct hello *h)
{
    ext_set(&h->x, X_SIGALGS, "\0\x02\x02\x01", 4); /* rsa_pkcs1_sha1 */
}
static void ch_only_rsa_pss_sigalgs(struct hello *h)
{
    ext_set(&h->x, X_SIGALGS, "\0\x02\x08\x04", 4); /* rsa_pss_rsae_sha256 */
}
static void ch_no_alpn(struct hello *h) { ext_del(&h->x, X_ALPN); }
static void ch_alpn_unknown(struct hello *h) { ext_set(&h->x, X_ALPN, "\0\x04\x03" "foo", 6); }
static void ch_no_tp(struct hello *h) { ext_del(&h->x, X_TP); }
static void ch_sni_empty_list(struct hello *h) { ext_set(&h->x, X_SNI, "\0\0", 2); }
/* RFC 6066 §8: CertificateStatusRequest { ocsp, responder_id_list, request_extensions } */
static void ch_status_request_truncated(struct hello *h) { ext_add(&h->x, 5, "\x01\x00", 2); }
static void ch_status_request_empty_responder_id(struct hello *h)
{
    ext_add(&h->x, 5, "\x01\x00\x02\x00\x00\x00\x00", 7);
}
static void ch_status_request_trailing_byte(struct hello *h)
{
    ext_add(&h->x, 5, "\x01\x00\x00\x00\x00\x00", 6);
}
/* Two host_names in one ServerNameList (RFC 6066 §3 allows one per type). */
static void ch_sni_two_names(struct hello *h)
{
    ext_set(&h->x, X_SNI, "\0\x0c\0\0\x03" "a.b" "\0\0\x03" "c.d", 14);
}
static void ch_early_data_with_body(struct hello *h) { ext_add(&h->x, X_EARLY_DATA, "\0\0", 2); }
static void ch_psk_not_last(struct hello *h)
{
    /* identities<7..> and binders<33..>: the shape does not matter, only the position */
    static const uint8_t psk[] = {0, 5, 0, 1, 0xaa, 0, 0, 0, 0, 0, 0};
    ext_add(&h->x, X_PSK, psk, sizeof(psk));
    ext_add(&h->x, X_UNKNOWN, NULL, 0);
}
static void ch_share_short(struct hello *h) { ch_set_key_share(h, 0x001d, x25519_pub, 31); }
static void ch_share_zero(struct hello *h)
{
    static const uint8_t zero[32];
    ch_set_key_share(h, 0x001d, zero, sizeof(zero));
}
static void ch_share_p256_off_curve(struct hello *h)
{
    uint8_t point[65];
    point[0] = 0x04; /* uncompressed: x = 0x0101.., y = 0x0202.. is not on the curve */
    memset(point + 1, 0x01, 32);
    memset(point + 33, 0x02, 32);
    ext_set(&h->x, X_GROUPS, "\0\x02\x00\x17", 4);
    ch_set_key_share(h, 0x0017, point, sizeof(point));
}
static void ch_share_p256_compressed(struct hello *h)
{
    uint8_t point[33];
    point[0] = 0x02; /* §4.2.8.2: only the uncompressed form is valid in TLS 1.3 */
    memset(point + 1, 0x01, 32);
    ext_set(&h->x, X_GROUPS, "\0\x02\x00\x17", 4);
    ch_set_key_share(h, 0x0017, point, sizeof(point));
}
static void ch_share_not_in_groups(struct hello *h)
{
    ext_set(&h->x, X_GROUPS, "\0\x02\x00\x17", 4); /* P-256 only, share stays X25519 */
}
static void ch_share_twice(struct hello *h)
{
    static struct buf b;
    b.n = 0;
    size_t list = open_vec(&b, 2);
    for (int i = 0; i < 2; i++) {
        put_int(&b, 0x001d, 2);
        put_int(&b, 32, 2);
        put(&b, x25519_pub, 32);
    }
    close_vec(&b, list, 2);
    ext_set(&h->x, X_KEY_SHARE, b.d, b.n);
}
static void ch_ffdhe_only(struct hello *h)
{
    uint8_t share[256];
    memset(share, 0x07, sizeof(share));
    ext_set(&h->x, X_GROUPS, "\0\x02\x01\x00", 4); /* ffdhe2048, which qtls lacks */
    ch_set_key_share(h, 0x0100, share, sizeof(share));
}
/* A second ClientHello that changes what it may not (§4.1.2). */
static void ch2_other_suites(struct hello *h)
{
    h->suites[0] = 0x13, h->suites[1] = 0x02;
    h->suites_len = 2;
}
static void ch2_other_random(struct hello *h) { h->random[0] ^= 0xff; }
static void ch2_empty_key_share(struct hello *h) { ext_set(&h->x, X_KEY_SHARE, "\0\0", 2); }
static void ch2_early_data(struct hello *h) { ext_add(&h->x, X_EARLY_DATA, NULL, 0); }
static void ch2_cookie(struct hello *h) { ext_add(&h->x, X_COOKIE, "\0\x04\x01\x02\x03\x04", 6); }
static void ch_psk_without_modes(struct hello *h)
{
    static const uint8_t psk[] = {0, 5, 0, 1, 0xaa, 0, 0, 0, 0, 0, 0};
    ext_del(&h->x, X_PSK_MODES);
    ext_add(&h->x, X_PSK, psk, sizeof(psk)); /* last, as §4.2.11 wants */
}
static void ch2_x25519_share(struct hello *h)
{
    ch_set_key_share(h, 0x001d, x25519_pub, sizeof(x25519_pub));
}

static void sh_unknown_extension(struct hello *h) { ext_add(&h->x, X_UNKNOWN, NULL, 0); }
static void sh_pre_shared_key(struct hello *h) { ext_add(&h->x, X_PSK, "\0\0", 2); }
static void sh_cookie(struct hello *h) { ext_add(&h->x, X_COOKIE, "\0\x02\x01\x02", 4); }
static void sh_alpn_extension(struct hello *h) { ext_add(&h->x, X_ALPN, "\0\x03\x02h3", 5); }
static void sh_duplicate_versions(struct hello *h) { ext_add(&h->x, X_VERSIONS, "\x03\x04", 2); }
static void sh_tls12(struct hello *h) { ext_set(&h->x, X_VERSIONS, "\x03\x03", 2); }
static void sh_suite_not_offered(struct hello *h) { h->suites[1] = 0x04; } /* AES_128_CCM */
static void sh_suite_aes256(struct hello *h) { h->suites[1] = 0x02; }
static void sh_session_id_echo(struct hello *h) { h->sid[0] = 0x42, h->sid_len = 1; }
static void sh_share_p256(struct hello *h)
{
    uint8_t point[65];
    memset(point, 0x04, sizeof(point));
    sh_set_key_share(h, 0x0017, point, sizeof(point));
}
static void sh_share_x25519(struct hello *h)
{
    sh_set_key_share(h, 0x001d, x25519_pub, sizeof(x25519_pub));
}
static void sh_share_zero(struct hello *h)
{
    static const uint8_t zero[32];
    sh_set_key_share(h, 0x001d, zero, sizeof(zero));
}
static void sh_share_short(struct hello *h) { sh_set_key_share(h, 0x001d, x25519_pub, 31); }
/* RFC 8701 §3: a server that selects a GREASE value (any of them: none is really offered). */
static void sh_share_grease(struct hello *h)
{
    sh_set_key_share(h, 0x0a0a, x25519_pub, sizeof(x25519_pub));
}
static void sh_suite_grease(struct hello *h) { h->suites[0] = 0x0a, h->suites[1] = 0x0a; }
static void sh_version_grease(struct hello *h) { ext_set(&h->x, X_VERSIONS, "\x0a\x0a", 2); }
static void hrr_select_grease(struct hello *h) { ext_set(&h->x, X_KEY_SHARE, "\x0a\x0a", 2); }
/* HelloRetryRequest key_share: just the selected group (§4.2.8). */
static void hrr_select_x25519(struct hello *h) { ext_set(&h->x, X_KEY_SHARE, "\x00\x1d", 2); }
static void hrr_select_x448(struct hello *h) { ext_set(&h->x, X_KEY_SHARE, "\x00\x1e", 2); }

/* ---- EncryptedExtensions edits ---- */

static void ee_early_data(struct exts *x) { ext_add(x, X_EARLY_DATA, NULL, 0); }
static void ee_unknown(struct exts *x) { ext_add(x, X_UNKNOWN, "x", 1); }
static void ee_key_share(struct exts *x)
{
    uint8_t ks[36] = {0x00, 0x1d, 0, 32};
    memcpy(ks + 4, x25519_pub, 32);
    ext_add(x, X_KEY_SHARE, ks, sizeof(ks));
}
static void ee_pre_shared_key(struct exts *x) { ext_add(x, X_PSK, "\0\0", 2); }
static void ee_duplicate_alpn(struct exts *x) { ext_add(x, X_ALPN, "\0\x03\x02h3", 5); }
static void ee_no_alpn(struct exts *x) { ext_del(x, X_ALPN); }
static void ee_alpn_not_offered(struct exts *x) { ext_set(x, X_ALPN, "\0\x03\x02h2", 5); }
static void ee_alpn_two_names(struct exts *x) { ext_set(x, X_ALPN, "\0\x06\x02h3\x02h2", 8); }
static void ee_no_tp(struct exts *x)
{
    ext_del(x, X_TP);
    ext_del(x, X_TP_DRAFT);
}
static void ee_tp_in_draft_codepoint(struct exts *x) { ext_get(x, X_TP)->type = X_TP_DRAFT; }
static void ee_sni_ack_with_body(struct exts *x) { ext_add(x, X_SNI, "\0\0", 2); }

/* ---- whole-flight edits ---- */

static const uint8_t key_update_body[] = {0}; /* update_not_requested */

static void drop_server_hello(struct flight *fl) { flight_remove(fl, INI, HT_SERVER_HELLO); }
static void message_after_server_hello(struct flight *fl)
{
    struct msg *ee = flight_find(fl, HSK, HT_ENCRYPTED_EXTENSIONS);
    flight_insert(fl, INI, fl->n[INI], HT_ENCRYPTED_EXTENSIONS, ee->body.d, ee->body.n);
}
static void key_update_before_server_hello(struct flight *fl)
{
    flight_insert(fl, INI, 0, HT_KEY_UPDATE, key_update_body, 1);
}
static void key_update_first_at_handshake(struct flight *fl)
{
    flight_insert(fl, HSK, 0, HT_KEY_UPDATE, key_update_body, 1);
}
static void unknown_type_first_at_handshake(struct flight *fl)
{
    flight_insert(fl, HSK, 0, 99, "\x01\x02", 2);
}
static void hello_request_first_at_handshake(struct flight *fl)
{
    flight_insert(fl, HSK, 0, 0, NULL, 0);
}
static void certificate_before_encrypted_extensions(struct flight *fl)
{
    struct msg tmp = fl->m[HSK][0];
    fl->m[HSK][0] = fl->m[HSK][1];
    fl->m[HSK][1] = tmp;
}
static void drop_certificate(struct flight *fl) { flight_remove(fl, HSK, HT_CERTIFICATE); }
static void drop_certificate_verify(struct flight *fl)
{
    flight_remove(fl, HSK, HT_CERTIFICATE_VERIFY);
}
static void ticket_before_server_finished(struct flight *fl)
{
    static const uint8_t nst[] = {0, 0, 0x1c, 0x20, 0, 0, 0, 1, 0, 0, 1, 0xaa, 0, 0};
    flight_insert(fl, HSK, flight_index(fl, HSK, HT_FINISHED), HT_NEW_SESSION_TICKET, nst,
                  sizeof(nst));
}
/* CertificateRequest (§4.3.2) after EncryptedExtensions, with the given extensions. */
static void insert_certificate_request(struct flight *fl, const uint8_t *exts, size_t len)
{
    static struct buf b;
    b.n = 0;
    put_int(&b, 0, 1); /* empty certificate_request_context */
    size_t at = open_vec(&b, 2);
    put(&b, exts, len);
    close_vec(&b, at, 2);
    flight_insert(fl, HSK, 1, HT_CERTIFICATE_REQUEST, b.d, b.n);
}
static void certificate_request_without_sigalgs(struct flight *fl)
{
    insert_certificate_request(fl, NULL, 0);
}
static void certificate_request_with_key_share(struct flight *fl)
{
    static const uint8_t exts[] = {0, 13, 0, 4, 0, 2, 0x04, 0x03, 0, 51, 0, 2, 0x00, 0x1d};
    insert_certificate_request(fl, exts, sizeof(exts));
}
/* CertificateRequest with signature_algorithms and the given certificate_authorities body. */
static void certificate_request_with_cas(struct flight *fl, const uint8_t *cas, size_t len)
{
    uint8_t exts[64] = {0, 13, 0, 4, 0, 2, 0x04, 0x03, 0, 47, 0, (uint8_t)len};
    assert_true(len + 12 <= sizeof(exts));
    memcpy(exts + 12, cas, len);
    insert_certificate_request(fl, exts, 12 + len);
}
static void ca_list_empty(struct flight *fl)
{
    certificate_request_with_cas(fl, (const uint8_t *)"\0\0", 2);
}
static void ca_list_empty_name(struct flight *fl)
{
    certificate_request_with_cas(fl, (const uint8_t *)"\0\2\0\0", 4);
}
static void ca_list_bad_der(struct flight *fl)
{
    certificate_request_with_cas(fl, (const uint8_t *)"\0\4\0\2\x05\0", 6); /* NULL, not a Name */
}
static void ca_list_name_with_trailing_byte(struct flight *fl)
{
    certificate_request_with_cas(fl, (const uint8_t *)"\0\5\0\3\x30\0\0", 7);
}
static void ca_list_overlong(struct flight *fl)
{
    certificate_request_with_cas(fl, (const uint8_t *)"\0\x09\0\2\x30\0", 6);
}
static void ch_empty_ca_list(struct hello *h) { ext_add(&h->x, 47, "\0\0", 2); }
/* RFC 8446 §4.3.2: the context is empty during the handshake. */
static void certificate_request_with_context(struct flight *fl)
{
    static const uint8_t body[] = {1, 0x42, 0, 8, 0, 13, 0, 4, 0, 2, 0x04, 0x03};
    flight_insert(fl, HSK, 1, HT_CERTIFICATE_REQUEST, body, sizeof(body));
}
/* A copy of the level's first message appended after its last one. */
static void repeat_first_message(struct flight *fl, int level)
{
    struct msg *m = &fl->m[level][0];
    flight_insert(fl, level, fl->n[level], m->type, m->body.d, m->body.n);
}
static void client_hello_twice(struct flight *fl) { repeat_first_message(fl, INI); }
static void message_after_server_finished(struct flight *fl) { repeat_first_message(fl, HSK); }
static void message_after_client_finished(struct flight *fl) { repeat_first_message(fl, HSK); }
/* The client sends a Certificate although none was requested. */
static void certificate_before_client_finished(struct flight *fl)
{
    static const uint8_t empty_certificate[] = {0, 0, 0, 0};
    flight_insert(fl, HSK, flight_index(fl, HSK, HT_FINISHED), HT_CERTIFICATE, empty_certificate,
                  sizeof(empty_certificate));
}
static void key_update_before_client_finished(struct flight *fl)
{
    flight_insert(fl, HSK, flight_index(fl, HSK, HT_FINISHED), HT_KEY_UPDATE, key_update_body,
                  1);
}
static void end_of_early_data_before_client_finished(struct flight *fl)
{
    flight_insert(fl, HSK, flight_index(fl, HSK, HT_FINISHED), HT_END_OF_EARLY_DATA, NULL, 0);
}
static void client_finished_at_application_level(struct flight *fl)
{
    struct msg *fin = flight_find(fl, HSK, HT_FINISHED);
    flight_insert(fl, APP, 0, HT_FINISHED, fin->body.d, fin->body.n);
    flight_remove(fl, HSK, HT_FINISHED);
}
/* The ServerHello that answers ClientHello2 turned into a second HelloRetryRequest. */
static void second_hello_retry_request(struct flight *fl)
{
    static struct hello h;
    struct msg *m = flight_find(fl, INI, HT_SERVER_HELLO);
    hello_parse(&h, 0, &m->body);
    memcpy(h.random, hrr_random, sizeof(hrr_random));
    ext_set(&h.x, X_KEY_SHARE, "\x00\x18", 2);
    m->body.n = 0;
    hello_put(&m->body, &h);
    fl->n[HSK] = 0;
}

/* ---- configurations ---- */

static void cfg_client_wants_ocsp(struct fixture *f)
{
    assert_int_equal(SSL_set_tlsext_status_type(f->p.client.ssl, TLSEXT_STATUSTYPE_ocsp), 1);
}

/* A second slot (Ed25519) beside the default ECDSA P-256 one. */
static void cfg_server_ecdsa_and_ed25519(struct fixture *f)
{
    assert_int_equal(SSL_use_certificate_file(f->p.server.ssl, mock_cert_path("ed25519.pem"),
                                              SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_use_PrivateKey_file(f->p.server.ssl, mock_cert_path("ed25519.key"),
                                             SSL_FILETYPE_PEM),
                     1);
}
static int cert_cb_fails(SSL *s, void *arg) { return 0; }
static void cfg_server_cert_cb_fails(struct fixture *f)
{
    SSL_set_cert_cb(f->p.server.ssl, cert_cb_fails, NULL);
}
static void cfg_client_cert_cb_fails(struct fixture *f)
{
    SSL_set_verify(f->p.server.ssl, SSL_VERIFY_PEER, NULL);
    SSL_set_cert_cb(f->p.client.ssl, cert_cb_fails, NULL);
}
static void cfg_server_without_certificate(struct fixture *f) { SSL_certs_clear(f->p.server.ssl); }

/* SSL_CTX_set_cert_verify_callback (cert.c): the application's verdict replaces the chain's. */
static int verify_rejects(X509_STORE_CTX *sctx, void *arg)
{
    X509_STORE_CTX_set_error(sctx, X509_V_ERR_CERT_REJECTED);
    return 0;
}
static void cfg_client_verify_callback_rejects(struct fixture *f)
{
    SSL_set_verify(f->p.client.ssl, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(f->cctx, verify_rejects, NULL);
}

/* Custom extensions (custom_ext.c) of type X_UNKNOWN, in ClientHello and EncryptedExtensions. */
#define X_CTX (SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS)
static int xt_skip(SSL *s, unsigned int type, unsigned int context, const unsigned char **out,
                   size_t *outlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    return 0; /* registered, but not sent */
}
static int xt_refuse(SSL *s, unsigned int type, unsigned int context, const unsigned char *in,
                     size_t inlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    *al = SSL_AD_ILLEGAL_PARAMETER;
    return 0;
}
static void cfg_client_custom_ext_not_sent(struct fixture *f)
{
    assert_int_equal(SSL_CTX_add_custom_ext(f->cctx, X_UNKNOWN, X_CTX, xt_skip, NULL, NULL, NULL,
                                            NULL),
                     1);
}
static void cfg_server_refuses_custom_ext(struct fixture *f)
{
    assert_int_equal(SSL_CTX_add_custom_ext(f->cctx, X_UNKNOWN, X_CTX, NULL, NULL, NULL, NULL,
                                            NULL),
                     1);
    assert_int_equal(SSL_CTX_add_custom_ext(f->sctx, X_UNKNOWN, X_CTX, NULL, NULL, NULL,
                                            xt_refuse, NULL),
                     1);
}

static void cfg_hrr(struct fixture *f)
{
    assert_int_equal(SSL_set1_groups_list(f->p.client.ssl, "X25519:P-384"), 1);
    assert_int_equal(SSL_set1_groups_list(f->p.server.ssl, "P-384"), 1);
}
static void cfg_grease(struct fixture *f) { SSL_set_grease_enabled(f->p.client.ssl, 1); }
static void cfg_hrr_grease(struct fixture *f)
{
    cfg_hrr(f);
    cfg_grease(f);
}
static void cfg_verify_peer(struct fixture *f)
{
    SSL_set_verify(f->p.client.ssl, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_set1_host(f->p.client.ssl, "localhost"), 1);
}
static void cfg_verify_wrong_host(struct fixture *f)
{
    SSL_set_verify(f->p.client.ssl, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_set1_host(f->p.client.ssl, "wrong.example"), 1);
}
static void cfg_no_shared_cipher(struct fixture *f)
{
    assert_int_equal(SSL_set_ciphersuites(f->p.client.ssl, "TLS_AES_128_GCM_SHA256"), 1);
    assert_int_equal(SSL_set_ciphersuites(f->p.server.ssl, "TLS_AES_256_GCM_SHA384"), 1);
}
static void cfg_no_shared_group(struct fixture *f)
{
    assert_int_equal(SSL_set1_groups_list(f->p.client.ssl, "X25519"), 1);
    assert_int_equal(SSL_set1_groups_list(f->p.server.ssl, "P-256"), 1);
}
static void cfg_client_tls12_only(struct fixture *f)
{
    assert_int_equal(SSL_set_max_proto_version(f->p.client.ssl, TLS1_2_VERSION), 1);
}
static void cfg_client_no_alpn(struct fixture *f)
{
    assert_int_equal(SSL_set_alpn_protos(f->p.client.ssl, NULL, 0), 0);
}
static void cfg_client_alpn_foo(struct fixture *f)
{
    assert_int_equal(SSL_set_alpn_protos(f->p.client.ssl, (const uint8_t *)"\x03" "foo", 4), 0);
}
static int alpn_noack(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                      const unsigned char *in, unsigned int inlen, void *arg)
{
    return SSL_TLSEXT_ERR_NOACK;
}
static void cfg_server_alpn_noack(struct fixture *f)
{
    SSL_CTX_set_alpn_select_cb(f->sctx, alpn_noack, NULL);
}
static void cfg_server_no_alpn_cb(struct fixture *f)
{
    SSL_CTX_set_alpn_select_cb(f->sctx, NULL, NULL);
}
static void cfg_client_no_tp(struct fixture *f)
{
    assert_int_equal(SSL_set_quic_transport_params(f->p.client.ssl, NULL, 0), 1);
}
static void cfg_server_no_tp(struct fixture *f)
{
    assert_int_equal(SSL_set_quic_transport_params(f->p.server.ssl, NULL, 0), 1);
}
static void cfg_client_tp_v1(struct fixture *f)
{
    SSL_set_quic_transport_version(f->p.client.ssl, TLSEXT_TYPE_quic_transport_parameters);
}
static void cfg_client_sni(struct fixture *f)
{
    assert_int_equal(SSL_set_tlsext_host_name(f->p.client.ssl, "localhost"), 1);
}
static void cfg_server_requires_client_cert(struct fixture *f)
{
    SSL_set_verify(f->p.server.ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
}
static void cfg_client_cert(struct fixture *f)
{
    SSL_set_verify(f->p.server.ssl, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_CTX_load_verify_locations(f->sctx, mock_cert_path("ca.pem"), NULL), 1);
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM),
                     1);
}
static void cfg_client_cert_untrusted(struct fixture *f)
{
    SSL_set_verify(f->p.server.ssl, SSL_VERIFY_PEER, NULL); /* and no CA in the server's store */
    assert_int_equal(SSL_CTX_use_certificate_file(f->cctx, mock_cert_path("client.pem"),
                                                  SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(f->cctx, mock_cert_path("client.key"),
                                                 SSL_FILETYPE_PEM),
                     1);
}

/* QUIC callbacks that fail (the mock's fault injection, or methods built on the mock's). */
static void cfg_server_secret_fails(struct fixture *f) { f->p.server.fail_secret_call = 1; }
static void cfg_server_add_fails(struct fixture *f) { f->p.server.fail_add_call = 1; }
static void cfg_client_add_fails(struct fixture *f) { f->p.client.fail_add_call = 1; }
static void cfg_client_second_add_fails(struct fixture *f) { f->p.client.fail_add_call = 2; }
static void cfg_client_hs_secret_fails(struct fixture *f) { f->p.client.fail_secret_call = 1; }
static void cfg_client_app_secret_fails(struct fixture *f) { f->p.client.fail_secret_call = 2; }

static SSL_QUIC_METHOD flush_fails_method;

static int flush_fails(SSL *ssl) { return 0; }
static void cfg_server_flush_fails(struct fixture *f)
{
    flush_fails_method = mock_quic_method;
    flush_fails_method.flush_flight = flush_fails;
    assert_int_equal(SSL_set_quic_method(f->p.server.ssl, &flush_fails_method), 1);
}

/* ---- extra checks ---- */

static void nothing_was_sent_by_the_client(struct fixture *f)
{
    assert_int_equal(f->p.client.add_calls, 0);
    for (int l = 0; l < 4; l++)
        assert_int_equal(f->p.client.out_len[l], 0);
}

static void verify_result_is_hostname_mismatch(struct fixture *f)
{
    assert_int_equal(SSL_get_verify_result(f->p.client.ssl), X509_V_ERR_HOSTNAME_MISMATCH);
}

static void verify_result_is_untrusted(struct fixture *f)
{
    assert_int_equal(SSL_get_verify_result(f->p.client.ssl),
                     X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

/* ---- the table ---- */

#define ROW(n, k) .name = (n), .kind = (k)
#define SERVER .victim_server = 1
#define EXPECT(al, rs) .alert = (al), .reason = (rs)
/* Edits of flight `fl`: a message body, a hello, the EncryptedExtensions list, the whole flight. */
#define BODY(fl, lv, ty, fn)                                                                       \
    .flight = (fl), .level = (lv), .type = (ty), .edit = EDIT_BODY, .body_fn = (fn)
#define HELLO(fl, ty, fn)                                                                          \
    .flight = (fl), .level = INI, .type = (ty), .edit = EDIT_HELLO, .hello_fn = (fn)
#define EE(fn)                                                                                     \
    .flight = 1, .level = HSK, .type = HT_ENCRYPTED_EXTENSIONS, .edit = EDIT_EE, .exts_fn = (fn)
#define FLIGHT(fl, fn) .flight = (fl), .edit = EDIT_FLIGHT, .flight_fn = (fn)

/* Flights without HelloRetryRequest: 0 ClientHello, 1 server flight, 2 client Finished. */
#define SH_ HT_SERVER_HELLO
#define CH_ HT_CLIENT_HELLO

static const struct neg_case cases[] = {
    /* ---- truncated messages and trailing bytes: decode_error (RFC 8446 §6.2) ---- */
    /* RFC 8446 §4.1.2: extensions length runs past the end of the ClientHello */
    {ROW("crafted_client_hello_with_overrunning_extensions_is_decode_error", CRAFT),
     .hello_fn = hello_exts_overrun, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.2: bytes after the extensions */
    {ROW("crafted_client_hello_with_trailing_bytes_is_decode_error", CRAFT),
     .hello_fn = hello_trailing_byte, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.2: cipher_suites<2..2^16-2> holds whole 2-byte values */
    {ROW("crafted_client_hello_with_odd_cipher_suites_length_is_decode_error", CRAFT),
     .hello_fn = ch_suites_odd, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.2: legacy_session_id<0..32> */
    {ROW("crafted_client_hello_with_33_byte_session_id_is_decode_error", CRAFT),
     .hello_fn = hello_session_id_33, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 6066 §3: server_name_list<1..2^16-1> */
    {ROW("crafted_client_hello_with_empty_server_name_list_is_decode_error", CRAFT),
     .hello_fn = ch_sni_empty_list, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 6066 §3: no two names of the same type (decode_error, as BoringSSL) */
    {ROW("crafted_client_hello_with_two_server_names_is_decode_error", CRAFT),
     .hello_fn = ch_sni_two_names, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 6066 §8: a CertificateStatusRequest cut short, with an empty ResponderID, or longer */
    {ROW("crafted_client_hello_with_truncated_status_request_is_decode_error", CRAFT),
     .hello_fn = ch_status_request_truncated, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    {ROW("crafted_client_hello_with_empty_ocsp_responder_id_is_decode_error", CRAFT),
     .hello_fn = ch_status_request_empty_responder_id, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    {ROW("crafted_client_hello_with_trailing_byte_in_status_request_is_decode_error", CRAFT),
     .hello_fn = ch_status_request_trailing_byte, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.2.10: early_data in a ClientHello is empty */
    {ROW("crafted_client_hello_with_non_empty_early_data_is_decode_error", CRAFT),
     .hello_fn = ch_early_data_with_body, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.2: a real ClientHello cut short by one byte */
    {ROW("truncated_client_hello_is_decode_error", PUMP), BODY(0, INI, CH_, drop_last_byte),
     SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.2: a real ClientHello with a byte appended */
    {ROW("client_hello_with_trailing_byte_is_decode_error", PUMP),
     BODY(0, INI, CH_, append_byte), SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.3 */
    {ROW("truncated_server_hello_is_decode_error", PUMP), BODY(1, INI, SH_, drop_last_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.3: bytes after the ServerHello extensions */
    {ROW("server_hello_with_trailing_byte_is_decode_error", PUMP), BODY(1, INI, SH_, append_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.1.3: extensions length past the end of the message */
    {ROW("server_hello_with_overrunning_extensions_is_decode_error", PUMP),
     HELLO(1, SH_, hello_exts_overrun), EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.3.1 */
    {ROW("truncated_encrypted_extensions_is_decode_error", PUMP),
     BODY(1, HSK, HT_ENCRYPTED_EXTENSIONS, drop_last_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.3.1: bytes after the extension list */
    {ROW("encrypted_extensions_with_trailing_byte_is_decode_error", PUMP),
     BODY(1, HSK, HT_ENCRYPTED_EXTENSIONS, append_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.4.2 */
    {ROW("truncated_certificate_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, drop_last_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.4.2: bytes after certificate_list */
    {ROW("certificate_with_trailing_byte_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, append_byte), EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.4.3 */
    {ROW("truncated_certificate_verify_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, drop_last_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.4.3: bytes after the signature */
    {ROW("certificate_verify_with_trailing_byte_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, append_byte),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.4.4: verify_data of the wrong length is incorrect contents: decrypt_error */
    {ROW("truncated_server_finished_is_decrypt_error", PUMP),
     BODY(1, HSK, HT_FINISHED, drop_last_byte),
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED)},
    /* RFC 8446 §4.4.4: verify_data one byte too long */
    {ROW("server_finished_with_trailing_byte_is_decrypt_error", PUMP),
     BODY(1, HSK, HT_FINISHED, append_byte),
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED)},
    /* RFC 8446 §4.4.4: the server checks the client's verify_data length too */
    {ROW("client_finished_with_trailing_byte_is_decrypt_error", PUMP),
     BODY(2, HSK, HT_FINISHED, append_byte), SERVER,
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED)},

    /* ---- ClientHello fields (server side) ---- */
    /* RFC 9001 §8.4: no middlebox compatibility mode, a session id is illegal_parameter */
    {ROW("crafted_client_hello_with_session_id_is_illegal_parameter", CRAFT),
     .hello_fn = hello_session_id, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_COMPATIBILITY_MODE)},
    /* RFC 9001 §8.4: the same, in a real client's ClientHello */
    {ROW("client_hello_with_session_id_is_illegal_parameter", PUMP),
     HELLO(0, CH_, hello_session_id), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_COMPATIBILITY_MODE)},
    /* RFC 8446 §4.1.2: legacy_compression_methods must be exactly the null method */
    {ROW("client_hello_with_compression_is_illegal_parameter", CRAFT),
     .hello_fn = hello_compression, SERVER, EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_DATA)},
    /* RFC 8446 §4.2: no two extensions of the same type (a malformed block: decode_error) */
    {ROW("client_hello_with_duplicate_alpn_is_decode_error", CRAFT),
     .hello_fn = ch_duplicate_alpn, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION)},
    /* RFC 8446 §4.2: the QUIC extension twice */
    {ROW("client_hello_with_duplicate_transport_parameters_is_decode_error", CRAFT),
     .hello_fn = ch_duplicate_tp, SERVER, EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION)},
    /* RFC 8446 §4.2: the rule holds for extensions qtls does not know */
    {ROW("client_hello_with_duplicate_unknown_extension_is_decode_error", CRAFT),
     .hello_fn = ch_duplicate_unknown, SERVER,
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION)},
    /* RFC 8446 §4.2.11: pre_shared_key must be the last extension */
    {ROW("client_hello_with_pre_shared_key_not_last_is_illegal_parameter", CRAFT),
     .hello_fn = ch_psk_not_last, SERVER, EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_EXTENSION)},
    /* RFC 8446 §4.2.9: pre_shared_key without psk_key_exchange_modes is missing_extension */
    {ROW("client_hello_with_psk_but_no_psk_modes_is_missing_extension", CRAFT),
     .hello_fn = ch_psk_without_modes, SERVER,
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_PSK_KEX_MODES_EXTENSION)},
    /* RFC 8446 §4.2.1: TLS 1.3 only through supported_versions */
    {ROW("client_hello_without_tls13_is_protocol_version", CRAFT), .hello_fn = ch_tls12_only,
     SERVER, EXPECT(SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL)},
    /* RFC 8446 §4.2.1: a TLS 1.2-style ClientHello to a TLS 1.3-only server */
    {ROW("client_hello_without_supported_versions_is_protocol_version", CRAFT),
     .hello_fn = hello_no_versions, SERVER,
     EXPECT(SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL)},
    /* RFC 8446 §9.2: supported_groups and key_share come together, else missing_extension */
    {ROW("client_hello_without_key_share_is_missing_extension", CRAFT),
     .hello_fn = hello_no_key_share, SERVER,
     EXPECT(SSL_AD_MISSING_EXTENSION, QTLS_R_MISSING_EXTENSION)},
    /* RFC 8446 §9.2: key_share without supported_groups */
    {ROW("client_hello_without_supported_groups_is_missing_extension", CRAFT),
     .hello_fn = ch_no_groups, SERVER, EXPECT(SSL_AD_MISSING_EXTENSION, QTLS_R_MISSING_EXTENSION)},
    /* RFC 8446 §9.2: a certificate-authenticated handshake needs signature_algorithms */
    {ROW("client_hello_without_signature_algorithms_is_missing_extension", CRAFT),
     .hello_fn = ch_no_sigalgs, SERVER,
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_SIGALGS_EXTENSION)},
    /* RFC 8446 §4.4.3: no scheme the server's key can sign with */
    {ROW("client_hello_with_only_sha1_signatures_is_handshake_failure", CRAFT),
     .hello_fn = ch_only_sha1_sigalgs, SERVER,
     EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM)},
    /* RFC 8446 §4.4.2.2: no slot (ECDSA, Ed25519) has a key the client's schemes fit */
    {ROW("client_hello_whose_schemes_fit_no_certificate_is_handshake_failure", CRAFT),
     .config = cfg_server_ecdsa_and_ed25519, .hello_fn = ch_only_rsa_pss_sigalgs, SERVER,
     EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM)},
    /* SSL_CTX_set_cert_cb(3): a callback returning 0 fails the handshake */
    {ROW("server_cert_cb_failure_is_internal_error", CRAFT), .config = cfg_server_cert_cb_fails,
     SERVER, EXPECT(SSL_AD_INTERNAL_ERROR, SSL_R_CERT_CB_ERROR)},
    {ROW("client_cert_cb_failure_is_internal_error", PUMP), .config = cfg_client_cert_cb_fails,
     EXPECT(SSL_AD_INTERNAL_ERROR, SSL_R_CALLBACK_FAILED)},
    /* RFC 8446 §4.4.2: a server must send a certificate; with none set it cannot */
    {ROW("server_without_certificate_is_handshake_failure", CRAFT),
     .config = cfg_server_without_certificate, SERVER,
     EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_CERTIFICATE_SET)},
    /* RFC 9001 §8.1: ALPN is mandatory in QUIC */
    {ROW("client_hello_without_alpn_is_no_application_protocol", CRAFT), .hello_fn = ch_no_alpn,
     SERVER, EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 9001 §8.1, RFC 7301 §3.2: no protocol in common */
    {ROW("client_hello_with_unknown_alpn_is_no_application_protocol", CRAFT),
     .hello_fn = ch_alpn_unknown, SERVER,
     EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 9001 §8.2: quic_transport_parameters is mandatory */
    {ROW("client_hello_without_transport_parameters_is_missing_extension", CRAFT),
     .hello_fn = ch_no_tp, SERVER,
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION)},
    /* RFC 8446 §4.1.1: no cipher suite in common */
    {ROW("client_hello_without_a_shared_cipher_is_handshake_failure", CRAFT),
     .hello_fn = ch_suites_unshared, SERVER,
     EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_CIPHER)},
    /* RFC 8446 §4.1.1: no group in common */
    {ROW("client_hello_without_a_shared_group_is_handshake_failure", CRAFT),
     .hello_fn = ch_ffdhe_only, SERVER, EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_GROUPS)},

    /* ---- key shares: illegal_parameter (RFC 8446 §4.2.8) ---- */
    /* RFC 8446 §4.2.8.2: an X25519 share is 32 bytes */
    {ROW("x25519_share_of_31_bytes_is_illegal_parameter", CRAFT), .hello_fn = ch_share_short,
     SERVER, EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §7.4.2: an all-zero X25519 shared secret must be rejected */
    {ROW("all_zero_x25519_share_is_illegal_parameter", CRAFT), .hello_fn = ch_share_zero, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8.2: the point must be on the curve */
    {ROW("p256_share_off_the_curve_is_illegal_parameter", CRAFT),
     .hello_fn = ch_share_p256_off_curve, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8.2: only the uncompressed point format */
    {ROW("compressed_p256_share_is_illegal_parameter", CRAFT),
     .hello_fn = ch_share_p256_compressed, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8: a share for a group not in supported_groups */
    {ROW("share_for_a_group_not_in_supported_groups_is_illegal_parameter", CRAFT),
     .hello_fn = ch_share_not_in_groups, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8: no two shares for one group */
    {ROW("two_shares_for_one_group_is_illegal_parameter", CRAFT), .hello_fn = ch_share_twice,
     SERVER, EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8: the client's checks of the server's share */
    {ROW("server_share_in_a_group_not_offered_is_illegal_parameter", PUMP),
     HELLO(1, SH_, sh_share_p256), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},
    /* RFC 8446 §7.4.2: the client also rejects an all-zero X25519 secret */
    {ROW("all_zero_server_x25519_share_is_illegal_parameter", PUMP), HELLO(1, SH_, sh_share_zero),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8.2: a 31-byte X25519 share from the server */
    {ROW("short_server_x25519_share_is_illegal_parameter", PUMP), HELLO(1, SH_, sh_share_short),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §9.2: a (non-PSK) ServerHello needs key_share */
    {ROW("server_hello_without_key_share_is_missing_extension", PUMP),
     HELLO(1, SH_, hello_no_key_share), EXPECT(SSL_AD_MISSING_EXTENSION, QTLS_R_MISSING_EXTENSION)},

    /* ---- ServerHello fields (client side) ---- */
    /* RFC 8446 §4.1.3: the session id echo must match the (empty) one sent */
    {ROW("server_hello_with_session_id_echo_is_illegal_parameter", PUMP),
     HELLO(1, SH_, sh_session_id_echo), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_DATA)},
    /* RFC 8446 §4.1.3: legacy_compression_method must be 0 */
    {ROW("server_hello_with_compression_is_illegal_parameter", PUMP),
     HELLO(1, SH_, hello_compression), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_DATA)},
    /* RFC 8446 §4.1.3: a cipher suite the client did not offer */
    {ROW("server_hello_with_suite_not_offered_is_illegal_parameter", PUMP),
     HELLO(1, SH_, sh_suite_not_offered),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CIPHER_RETURNED)},
    /* RFC 8446 §4.2.1: a version below TLS 1.3 in supported_versions */
    {ROW("server_hello_selecting_tls12_is_illegal_parameter", PUMP), HELLO(1, SH_, sh_tls12),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_UNSUPPORTED_PROTOCOL)},
    /* RFC 8446 §4.1.3/§D: a TLS 1.2 ServerHello to a TLS 1.3-only client */
    {ROW("server_hello_without_supported_versions_is_protocol_version", PUMP),
     HELLO(1, SH_, hello_no_versions),
     EXPECT(SSL_AD_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL)},
    /* RFC 8446 §4.2: no two extensions of the same type */
    {ROW("server_hello_with_duplicate_extension_is_decode_error", PUMP),
     HELLO(1, SH_, sh_duplicate_versions),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION)},
    /* RFC 8446 §4.2: an extension the client did not send */
    {ROW("server_hello_with_unknown_extension_is_unsupported_extension", PUMP),
     HELLO(1, SH_, sh_unknown_extension),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 8446 §4.2: pre_shared_key answered though never offered */
    {ROW("server_hello_with_pre_shared_key_not_offered_is_unsupported_extension", PUMP),
     HELLO(1, SH_, sh_pre_shared_key),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 8446 §4.2: a known extension that does not belong in ServerHello */
    {ROW("server_hello_with_cookie_is_illegal_parameter", PUMP), HELLO(1, SH_, sh_cookie),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION)},
    /* RFC 8446 §4.2: ALPN belongs in EncryptedExtensions */
    {ROW("server_hello_with_alpn_is_illegal_parameter", PUMP), HELLO(1, SH_, sh_alpn_extension),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION)},

    /* ---- EncryptedExtensions (client side) ---- */
    /* RFC 8446 §4.2: a response the client did not ask for */
    {ROW("unsolicited_early_data_in_encrypted_extensions_is_unsupported_extension", PUMP),
     EE(ee_early_data), EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 8446 §4.2: an unknown extension cannot have been offered */
    {ROW("unknown_extension_in_encrypted_extensions_is_unsupported_extension", PUMP),
     EE(ee_unknown), EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 8446 §4.2: a custom extension the client registered but did not send (custom_ext.c) */
    {ROW("unsent_custom_extension_in_encrypted_extensions_is_unsupported_extension", PUMP),
     .config = cfg_client_custom_ext_not_sent, EE(ee_unknown),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_BAD_EXTENSION)},
    /* SSL_CTX_set_cert_verify_callback(3): X509_V_ERR_CERT_REJECTED maps to bad_certificate */
    {ROW("cert_verify_callback_rejection_is_bad_certificate", PUMP),
     .config = cfg_client_verify_callback_rejects,
     EXPECT(SSL_AD_BAD_CERTIFICATE, SSL_R_CERTIFICATE_VERIFY_FAILED)},
    /* SSL_CTX_add_custom_ext(3): a parse callback's refusal is its alert */
    {ROW("custom_extension_refused_by_the_server_is_the_callbacks_alert", PUMP),
     .config = cfg_server_refuses_custom_ext, SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_EXTENSION)},
    /* RFC 8446 §4.2: recognised, offered, but not allowed in EncryptedExtensions */
    {ROW("key_share_in_encrypted_extensions_is_illegal_parameter", PUMP), EE(ee_key_share),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION)},
    /* RFC 8446 §4.2: recognised and not allowed in EE (the placement rule is checked first) */
    {ROW("pre_shared_key_in_encrypted_extensions_is_illegal_parameter", PUMP),
     EE(ee_pre_shared_key), EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION)},
    /* RFC 8446 §4.2 */
    {ROW("encrypted_extensions_with_duplicate_alpn_is_decode_error", PUMP),
     EE(ee_duplicate_alpn), EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DUPLICATE_EXTENSION)},
    /* RFC 9001 §8.1: the server must select a protocol */
    {ROW("encrypted_extensions_without_alpn_is_no_application_protocol", PUMP), EE(ee_no_alpn),
     EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 7301 §3.2: the selected protocol must be one the client offered */
    {ROW("alpn_not_offered_is_illegal_parameter", PUMP), EE(ee_alpn_not_offered),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INVALID_ALPN_PROTOCOL)},
    /* RFC 7301 §3.1: the server's list holds exactly one name */
    {ROW("alpn_answer_with_two_names_is_decode_error", PUMP), EE(ee_alpn_two_names),
     EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 9001 §8.2: missing transport parameters are missing_extension */
    {ROW("encrypted_extensions_without_transport_parameters_is_missing_extension", PUMP),
     EE(ee_no_tp),
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION)},
    /* RFC 8446 §4.2 and the contract: a codepoint the client did not send */
    {ROW("transport_parameters_in_a_codepoint_not_sent_is_unsupported_extension", PUMP),
     .config = cfg_client_tp_v1, EE(ee_tp_in_draft_codepoint),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 6066 §3: the server's server_name acknowledgement is empty */
    {ROW("server_name_ack_with_a_body_is_decode_error", PUMP), .config = cfg_client_sni,
     EE(ee_sni_ack_with_body), EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},

    /* ---- message order and levels ---- */
    /* RFC 9001 §4.1.3 and the contract: data at a later level before the current one is done */
    {ROW("server_flight_without_server_hello_is_unexpected_message", PUMP),
     FLIGHT(1, drop_server_hello),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED)},
    /* RFC 8446 §5.1: handshake messages must not span a key change */
    {ROW("message_after_server_hello_at_initial_level_is_unexpected_message", PUMP),
     FLIGHT(1, message_after_server_hello),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA)},
    /* RFC 8446 §5.1: a ClientHello left over at initial when the server moves on */
    {ROW("second_client_hello_without_retry_request_is_unexpected_message", PUMP),
     FLIGHT(0, client_hello_twice), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA)},
    /* RFC 8446 §5.1: bytes left at handshake when the client moves on */
    {ROW("message_after_server_finished_is_unexpected_message", PUMP),
     FLIGHT(1, message_after_server_finished),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA)},
    /* RFC 8446 §5.1: bytes left at handshake when the server moves on */
    {ROW("message_after_client_finished_is_unexpected_message", PUMP),
     FLIGHT(2, message_after_client_finished), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_EXCESS_HANDSHAKE_DATA)},
    /* RFC 9001 §4.1.3: a ClientHello is sent at the initial level only */
    {ROW("client_hello_at_handshake_level_is_unexpected_message", CRAFT), .craft_level = HSK,
     SERVER, EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED)},
    /* RFC 9001 §4.1.4: Finished is a handshake-level message */
    {ROW("client_finished_at_application_level_is_unexpected_message", PUMP),
     FLIGHT(2, client_finished_at_application_level), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED)},
    /* RFC 8446 §4: messages in the order of §2 */
    {ROW("certificate_before_encrypted_extensions_is_unexpected_message", PUMP),
     FLIGHT(1, certificate_before_encrypted_extensions),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4.4.2: Certificate is required without a PSK */
    {ROW("server_flight_without_certificate_is_unexpected_message", PUMP),
     FLIGHT(1, drop_certificate), EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4.4.3: CertificateVerify follows the server Certificate */
    {ROW("server_flight_without_certificate_verify_is_unexpected_message", PUMP),
     FLIGHT(1, drop_certificate_verify),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4.6.1: tickets come after the server Finished */
    {ROW("new_session_ticket_during_the_handshake_is_unexpected_message", PUMP),
     FLIGHT(1, ticket_before_server_finished),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4: HelloRequest (0) does not exist in TLS 1.3; an unknown type never fits */
    {ROW("hello_request_in_server_flight_is_unexpected_message", PUMP),
     FLIGHT(1, hello_request_first_at_handshake),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4: a handshake type that does not exist */
    {ROW("unknown_message_type_in_server_flight_is_unexpected_message", PUMP),
     FLIGHT(1, unknown_type_first_at_handshake),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4: a handshake type that does not exist, at the server */
    {ROW("unknown_message_type_instead_of_client_hello_is_unexpected_message", CRAFT),
     .craft_type = 99, SERVER, EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* 20 is also the ChangeCipherSpec content type: no CCS and no Finished before ClientHello */
    {ROW("finished_instead_of_client_hello_is_unexpected_message", CRAFT),
     .craft_type = HT_FINISHED, SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 9001 §8.3: clients must not send EndOfEarlyData */
    {ROW("end_of_early_data_is_unexpected_message", PUMP),
     FLIGHT(2, end_of_early_data_before_client_finished), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 9001 §6: a KeyUpdate message is a connection error (unexpected_message) */
    {ROW("key_update_instead_of_client_hello_is_unexpected_message", CRAFT),
     .craft_type = HT_KEY_UPDATE, SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED)},
    /* RFC 9001 §6: KeyUpdate at the initial level */
    {ROW("key_update_before_server_hello_is_unexpected_message", PUMP),
     FLIGHT(1, key_update_before_server_hello),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED)},
    /* RFC 9001 §6: KeyUpdate at the handshake level, to the client */
    {ROW("key_update_in_server_flight_is_unexpected_message", PUMP),
     FLIGHT(1, key_update_first_at_handshake),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED)},
    /* RFC 9001 §6: KeyUpdate at the handshake level, to the server */
    {ROW("key_update_in_client_flight_is_unexpected_message", PUMP),
     FLIGHT(2, key_update_before_client_finished), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED)},

    /* ---- Finished and CertificateVerify ---- */
    /* RFC 8446 §4.4.4: a wrong verify_data is decrypt_error */
    {ROW("corrupted_server_finished_is_decrypt_error", PUMP),
     BODY(1, HSK, HT_FINISHED, flip_last_byte),
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED)},
    /* RFC 8446 §4.4.4: the server checks the client's verify_data */
    {ROW("corrupted_client_finished_is_decrypt_error", PUMP),
     BODY(2, HSK, HT_FINISHED, flip_last_byte), SERVER,
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED)},
    /* RFC 8446 §4.4.3: a signature that does not verify is decrypt_error */
    {ROW("corrupted_server_signature_is_decrypt_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, flip_last_byte),
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_BAD_SIGNATURE)},
    /* RFC 8446 §4.4.3: the scheme must be one the client offered */
    {ROW("certificate_verify_with_scheme_not_offered_is_illegal_parameter", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, cv_scheme_rsa_pkcs1_sha1),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_SIGNATURE_TYPE)},
    /* RFC 8446 §4.2.3: RSASSA-PKCS1-v1_5 is for certificates only, never for CertificateVerify */
    {ROW("certificate_verify_with_pkcs1_scheme_is_illegal_parameter", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, cv_scheme_rsa_pkcs1_sha256),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_SIGNATURE_TYPE)},
    /* RFC 8446 §4.2.3: an ECDSA scheme binds the curve; the key is P-256 */
    {ROW("certificate_verify_with_other_curve_scheme_is_illegal_parameter", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, cv_scheme_ecdsa_p384),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_SIGNATURE_TYPE)},
    /* RFC 8446 §4.4.3: the scheme must suit the certificate's key */
    {ROW("certificate_verify_with_rsa_scheme_for_ec_key_is_illegal_parameter", PUMP),
     BODY(1, HSK, HT_CERTIFICATE_VERIFY, cv_scheme_rsa_pss),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_SIGNATURE_TYPE)},

    /* ---- certificates ---- */
    /* RFC 8446 §4.4.2.4: an empty server Certificate is decode_error */
    {ROW("empty_server_certificate_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, cert_empty_list), EXPECT(SSL_AD_DECODE_ERROR, SSL_R_BAD_DATA)},
    /* RFC 8446 §6.2: a corrupt certificate is bad_certificate */
    {ROW("certificate_that_does_not_parse_is_bad_certificate", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, cert_garbage_der),
     EXPECT(SSL_AD_BAD_CERTIFICATE, SSL_R_BAD_DATA)},
    /* RFC 8446 §4.4.2: a server's certificate_request_context is empty (decode_error, as BoringSSL) */
    {ROW("server_certificate_with_request_context_is_decode_error", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, cert_with_context),
     EXPECT(SSL_AD_DECODE_ERROR, SSL_R_BAD_DATA)},
    /* RFC 8446 §4.4.2: entry extensions must correspond to ClientHello ones */
    {ROW("certificate_entry_with_unsolicited_extension_is_unsupported_extension", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, cert_entry_unknown_extension),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* ... an OCSP staple the client did not ask for (RFC 8446 §4.4.2.1) */
    {ROW("unsolicited_ocsp_staple_is_unsupported_extension", PUMP),
     BODY(1, HSK, HT_CERTIFICATE, cert_leaf_ocsp_staple),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 6066 §8: OCSPResponse<1..2^24-1> */
    {ROW("ocsp_staple_with_empty_response_is_decode_error", PUMP),
     .config = cfg_client_wants_ocsp, BODY(1, HSK, HT_CERTIFICATE, cert_leaf_ocsp_empty_response),
     EXPECT(SSL_AD_DECODE_ERROR, SSL_R_LENGTH_MISMATCH)},
    {ROW("ocsp_staple_overrunning_its_extension_is_decode_error", PUMP),
     .config = cfg_client_wants_ocsp, BODY(1, HSK, HT_CERTIFICATE, cert_leaf_ocsp_overrun),
     EXPECT(SSL_AD_DECODE_ERROR, SSL_R_LENGTH_MISMATCH)},
    /* RFC 8446 §4.4.2.1: the body is a CertificateStatus, and only ocsp(1) exists */
    {ROW("ocsp_staple_of_unknown_status_type_is_decode_error", PUMP),
     .config = cfg_client_wants_ocsp, BODY(1, HSK, HT_CERTIFICATE, cert_leaf_ocsp_unknown_type),
     EXPECT(SSL_AD_DECODE_ERROR, SSL_R_UNSUPPORTED_STATUS_TYPE)},
    /* RFC 8446 §4.4.2.4, RFC 5246 §7.2.2: untrusted chain (mapping of X509 errors as OpenSSL) */
    {ROW("untrusted_server_chain_is_unknown_ca", PUMP), .server_cert = "other-leaf",
     .config = cfg_verify_peer, EXPECT(SSL_AD_UNKNOWN_CA, SSL_R_CERTIFICATE_VERIFY_FAILED),
     .after = verify_result_is_untrusted},
    /* RFC 6125 / RFC 8446 §4.4.2.4: the name does not match (SSL_set1_host) */
    {ROW("server_certificate_for_another_host_is_bad_certificate", PUMP),
     .config = cfg_verify_wrong_host,
     EXPECT(SSL_AD_BAD_CERTIFICATE, SSL_R_CERTIFICATE_VERIFY_FAILED),
     .after = verify_result_is_hostname_mismatch},
    /* RFC 8446 §6.2: certificate_expired */
    {ROW("expired_server_certificate_is_certificate_expired", PUMP), .server_cert = "expired",
     .config = cfg_verify_peer,
     EXPECT(SSL_AD_CERTIFICATE_EXPIRED, SSL_R_CERTIFICATE_VERIFY_FAILED)},
    /* RFC 8446 §4.3.2: signature_algorithms must be in CertificateRequest */
    {ROW("certificate_request_without_signature_algorithms_is_missing_extension", PUMP),
     FLIGHT(1, certificate_request_without_sigalgs),
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_SIGALGS_EXTENSION)},
    /* RFC 8446 §4.2.4: DistinguishedName authorities<3..2^16-1>, each name <1..2^16-1> DER */
    {ROW("certificate_request_with_empty_ca_list_is_decode_error", PUMP),
     FLIGHT(1, ca_list_empty), EXPECT(SSL_AD_DECODE_ERROR, SSL_R_BAD_LENGTH)},
    {ROW("certificate_request_with_empty_ca_name_is_decode_error", PUMP),
     FLIGHT(1, ca_list_empty_name), EXPECT(SSL_AD_DECODE_ERROR, SSL_R_BAD_LENGTH)},
    {ROW("certificate_request_with_bad_ca_name_der_is_decode_error", PUMP),
     FLIGHT(1, ca_list_bad_der), EXPECT(SSL_AD_DECODE_ERROR, ERR_R_ASN1_LIB)},
    {ROW("certificate_request_with_bytes_after_ca_name_is_decode_error", PUMP),
     FLIGHT(1, ca_list_name_with_trailing_byte),
     EXPECT(SSL_AD_DECODE_ERROR, SSL_R_CA_DN_LENGTH_MISMATCH)},
    {ROW("certificate_request_with_overlong_ca_list_is_decode_error", PUMP),
     FLIGHT(1, ca_list_overlong), EXPECT(SSL_AD_DECODE_ERROR, SSL_R_LENGTH_MISMATCH)},
    {ROW("client_hello_with_empty_ca_list_is_decode_error", CRAFT), .hello_fn = ch_empty_ca_list,
     SERVER, EXPECT(SSL_AD_DECODE_ERROR, SSL_R_BAD_LENGTH)},
    /* RFC 8446 §4.3.2: certificate_request_context SHALL be empty in the handshake */
    {ROW("certificate_request_with_context_during_handshake_is_decode_error", PUMP),
     FLIGHT(1, certificate_request_with_context), EXPECT(SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR)},
    /* RFC 8446 §4.2: a known extension that does not belong in CertificateRequest */
    {ROW("certificate_request_with_key_share_is_illegal_parameter", PUMP),
     FLIGHT(1, certificate_request_with_key_share),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_UNEXPECTED_EXTENSION)},
    /* RFC 8446 §4.4.2: a client sends Certificate only when asked */
    {ROW("client_certificate_without_request_is_unexpected_message", PUMP),
     FLIGHT(2, certificate_before_client_finished), SERVER,
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4.4.2.4: a server that requires a certificate may send certificate_required */
    {ROW("client_without_required_certificate_is_certificate_required", PUMP),
     .config = cfg_server_requires_client_cert, SERVER,
     EXPECT(SSL_AD_CERTIFICATE_REQUIRED, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)},
    /* RFC 8446 §4.4.3 */
    {ROW("corrupted_client_signature_is_decrypt_error", PUMP), .config = cfg_client_cert,
     BODY(2, HSK, HT_CERTIFICATE_VERIFY, flip_last_byte), SERVER,
     EXPECT(SSL_AD_DECRYPT_ERROR, SSL_R_BAD_SIGNATURE)},
    /* RFC 8446 §4.4.2.4: the server verifies the client chain */
    {ROW("untrusted_client_certificate_is_unknown_ca", PUMP), .config = cfg_client_cert_untrusted,
     SERVER, EXPECT(SSL_AD_UNKNOWN_CA, SSL_R_CERTIFICATE_VERIFY_FAILED)},

    /* ---- negotiation ---- */
    /* RFC 8446 §4.1.1 */
    {ROW("no_shared_cipher_suite_is_handshake_failure", PUMP), .config = cfg_no_shared_cipher,
     SERVER, EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_CIPHER)},
    /* RFC 8446 §4.1.1: no group in common, with real peers */
    {ROW("no_shared_group_is_handshake_failure", PUMP), .config = cfg_no_shared_group, SERVER,
     EXPECT(SSL_AD_HANDSHAKE_FAILURE, SSL_R_NO_SHARED_GROUPS)},
    /* RFC 9001 §4.2: QUIC requires TLS 1.3; a client capped at 1.2 fails before sending */
    {ROW("client_limited_to_tls12_fails_before_sending", PUMP), .config = cfg_client_tls12_only,
     EXPECT(SSL_AD_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE),
     .after = nothing_was_sent_by_the_client},
    /* RFC 9001 §8.1: a client must offer ALPN; without it, it fails before sending */
    {ROW("client_without_alpn_fails_before_sending", PUMP), .config = cfg_client_no_alpn,
     EXPECT(SSL_AD_INTERNAL_ERROR, SSL_R_NO_APPLICATION_PROTOCOL),
     .after = nothing_was_sent_by_the_client},
    /* RFC 9001 §8.1: a server that cannot select a protocol sends no_application_protocol */
    {ROW("server_without_a_matching_protocol_is_no_application_protocol", PUMP),
     .config = cfg_client_alpn_foo, SERVER,
     EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 9001 §8.1: NOACK is no protocol, never "no ALPN" in QUIC */
    {ROW("server_whose_alpn_callback_says_noack_is_no_application_protocol", PUMP),
     .config = cfg_server_alpn_noack, SERVER,
     EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 9001 §8.1: a server with no ALPN selection cannot serve QUIC */
    {ROW("server_without_alpn_callback_is_no_application_protocol", PUMP),
     .config = cfg_server_no_alpn_cb, SERVER,
     EXPECT(SSL_AD_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL)},
    /* RFC 9001 §8.2: an endpoint without the peer's transport parameters: missing_extension */
    {ROW("client_without_transport_parameters_is_missing_extension", PUMP),
     .config = cfg_client_no_tp, SERVER,
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION)},
    /* RFC 9001 §8.2: the client needs the server's parameters */
    {ROW("server_without_transport_parameters_is_missing_extension", PUMP),
     .config = cfg_server_no_tp,
     EXPECT(SSL_AD_MISSING_EXTENSION, SSL_R_MISSING_QUIC_TRANSPORT_PARAMETERS_EXTENSION)},

    /* ---- HelloRetryRequest (client X25519:P-384, server P-384; flights 0 CH1, 1 HRR,
     *      2 CH2, 3 server flight) ---- */
    /* RFC 8446 §4.1.2: ClientHello2 keeps everything but key_share, early_data, cookie... */
    {ROW("second_client_hello_with_other_cipher_suites_is_illegal_parameter", PUMP),
     .config = cfg_hrr, HELLO(2, CH_, ch2_other_suites), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO)},
    /* RFC 8446 §4.1.2: ClientHello2 keeps the random */
    {ROW("second_client_hello_with_other_random_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(2, CH_, ch2_other_random), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO)},
    /* RFC 8446 §4.2.8: ClientHello2 has exactly one share, in the group requested */
    {ROW("second_client_hello_without_the_requested_share_is_illegal_parameter", PUMP),
     .config = cfg_hrr, HELLO(2, CH_, ch2_empty_key_share), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.8: a share for the requested group, not the old one */
    {ROW("second_client_hello_with_the_old_share_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(2, CH_, ch2_x25519_share), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_KEY_SHARE)},
    /* RFC 8446 §4.2.10: no early_data in ClientHello2 */
    {ROW("second_client_hello_with_early_data_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(2, CH_, ch2_early_data), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO)},
    /* RFC 8446 §4.2.2: a cookie in ClientHello2 only if the HelloRetryRequest had one */
    {ROW("second_client_hello_with_a_cookie_never_sent_is_illegal_parameter", PUMP),
     .config = cfg_hrr, HELLO(2, CH_, ch2_cookie), SERVER,
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, QTLS_R_INCONSISTENT_CLIENT_HELLO)},
    /* RFC 8446 §4.1.4: HRR extensions must have been offered (cookie excepted) */
    {ROW("hello_retry_request_with_unknown_extension_is_unsupported_extension", PUMP),
     .config = cfg_hrr, HELLO(1, SH_, sh_unknown_extension),
     EXPECT(SSL_AD_UNSUPPORTED_EXTENSION, SSL_R_UNSOLICITED_EXTENSION)},
    /* RFC 8446 §4.1.4: a second HelloRetryRequest is unexpected_message */
    {ROW("second_hello_retry_request_is_unexpected_message", PUMP), .config = cfg_hrr,
     FLIGHT(3, second_hello_retry_request),
     EXPECT(SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE)},
    /* RFC 8446 §4.2.8: the HRR group must be offered and not already have a share */
    {ROW("hello_retry_request_for_the_group_already_shared_is_illegal_parameter", PUMP),
     .config = cfg_hrr, HELLO(1, SH_, hrr_select_x25519),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},
    /* RFC 8701 §3: a GREASEing client refuses a server that selects a GREASE value */
    {ROW("server_hello_with_a_grease_group_is_illegal_parameter", PUMP), .config = cfg_grease,
     HELLO(1, SH_, sh_share_grease), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},
    {ROW("server_hello_with_a_grease_suite_is_illegal_parameter", PUMP), .config = cfg_grease,
     HELLO(1, SH_, sh_suite_grease),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CIPHER_RETURNED)},
    {ROW("server_hello_with_a_grease_version_is_illegal_parameter", PUMP), .config = cfg_grease,
     HELLO(1, SH_, sh_version_grease),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_UNSUPPORTED_PROTOCOL)},
    {ROW("hello_retry_request_for_a_grease_group_is_illegal_parameter", PUMP),
     .config = cfg_hrr_grease, HELLO(1, SH_, hrr_select_grease),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},
    /* RFC 8446 §4.2.8: HRR's group must be in supported_groups */
    {ROW("hello_retry_request_for_a_group_not_offered_is_illegal_parameter", PUMP),
     .config = cfg_hrr, HELLO(1, SH_, hrr_select_x448),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},
    /* RFC 8446 §4.1.4: an HRR that would change nothing is illegal_parameter */
    {ROW("hello_retry_request_changing_nothing_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(1, SH_, hello_no_key_share), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_BAD_HELLO_REQUEST)},
    /* RFC 8446 §4.1.4: ServerHello must keep the HRR's cipher suite */
    {ROW("server_hello_with_other_suite_than_hrr_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(3, SH_, sh_suite_aes256),
     EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CIPHER_RETURNED)},
    /* RFC 8446 §4.2.8: ServerHello's group must be the HRR's */
    {ROW("server_hello_with_other_group_than_hrr_is_illegal_parameter", PUMP), .config = cfg_hrr,
     HELLO(3, SH_, sh_share_x25519), EXPECT(SSL_AD_ILLEGAL_PARAMETER, SSL_R_WRONG_CURVE)},

    /* ---- QUIC callbacks returning 0: internal_error (the contract, "Functions") ---- */
    /* The contract: set_encryption_secrets returning 0 at the server */
    {ROW("server_secret_callback_failure_is_internal_error", PUMP),
     .config = cfg_server_secret_fails, SERVER,
     EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: add_handshake_data returning 0 */
    {ROW("server_add_handshake_data_failure_is_internal_error", PUMP),
     .config = cfg_server_add_fails, SERVER,
     EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: flush_flight returning 0 */
    {ROW("server_flush_flight_failure_is_internal_error", PUMP), .config = cfg_server_flush_fails,
     SERVER, EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: add_handshake_data returning 0 on ClientHello */
    {ROW("client_add_handshake_data_failure_is_internal_error", PUMP),
     .config = cfg_client_add_fails, EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: add_handshake_data returning 0 on the client Finished */
    {ROW("client_add_handshake_data_failure_on_finished_is_internal_error", PUMP),
     .config = cfg_client_second_add_fails,
     EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: set_encryption_secrets returning 0 at handshake */
    {ROW("client_handshake_secret_callback_failure_is_internal_error", PUMP),
     .config = cfg_client_hs_secret_fails,
     EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
    /* The contract: set_encryption_secrets returning 0 at application */
    {ROW("client_application_secret_callback_failure_is_internal_error", PUMP),
     .config = cfg_client_app_secret_fails,
     EXPECT(SSL_AD_INTERNAL_ERROR, QTLS_R_QUIC_CALLBACK_FAILED)},
};

#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* ------------------------------------------------------------------ */
/* Running and checking                                                */
/* ------------------------------------------------------------------ */

static int setup_with(void **state, const struct neg_case *tc)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    ERR_clear_error();
    f.tc = tc;
    f.cctx = mock_client_ctx();
    f.sctx = mock_server_ctx(tc != NULL && tc->server_cert != NULL ? tc->server_cert : "ecdsa256");
    if (f.cctx == NULL || f.sctx == NULL || !mock_pair_init(&f.p, f.cctx, f.sctx))
        return -1;
    *state = &f;
    return 0;
}

/* cmocka passes the row as the initial state. */
static int setup(void **state) { return setup_with(state, *state); }

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    ERR_clear_error();
    return 0;
}

/* Empties the error queue; returns the reason of its first ERR_LIB_SSL entry (0: none). */
static int pop_first_ssl_reason(char *log, size_t log_len)
{
    unsigned long e;
    const char *file, *func, *data;
    int line, flags, first = 0;
    size_t n = 0;
    log[0] = '\0';
    while ((e = ERR_get_error_all(&file, &line, &func, &data, &flags)) != 0) {
        if (first == 0 && ERR_GET_LIB(e) == ERR_LIB_SSL)
            first = ERR_GET_REASON(e);
        if (n < log_len)
            n += (size_t)snprintf(log + n, log_len - n, "  lib %d reason %d (%s) at %s:%d\n",
                                  ERR_GET_LIB(e), ERR_GET_REASON(e), ERR_reason_error_string(e)
                                  ? ERR_reason_error_string(e) : "?", func, line);
    }
    return first;
}

/*
 * The four checks on the side that failed, and that failing is final. `post`
 * says whether the failing call was SSL_process_quic_post_handshake.
 */
static void assert_failure(struct mock_side *v, int ret, int alert, int reason, int post)
{
    char log[2048];
    int err = SSL_get_error(v->ssl, ret);
    int first = pop_first_ssl_reason(log, sizeof(log));
    if (v->alert != alert || first != reason || v->alerts_sent != 1)
        print_message("%s failed with alert %d (x%d) and error queue:\n%s",
                      SSL_is_server(v->ssl) ? "server" : "client", v->alert, v->alerts_sent, log);
    assert_true(ret <= 0);
    assert_int_equal(err, SSL_ERROR_SSL);
    assert_int_equal(v->alerts_sent, 1);
    assert_int_equal(v->alert, alert);
    assert_int_equal(v->alert_level, SSL_quic_write_level(v->ssl));
    assert_int_equal(first, reason);
    if (!post)
        assert_int_equal(SSL_is_init_finished(v->ssl), 0);
    int again = post ? SSL_process_quic_post_handshake(v->ssl) : SSL_do_handshake(v->ssl);
    assert_true(again <= 0);
    assert_int_equal(SSL_get_error(v->ssl, again), SSL_ERROR_SSL);
    assert_int_equal(v->alerts_sent, 1);
    ERR_clear_error();
}

static void apply_edit(const struct neg_case *tc, struct mock_side *s)
{
    static struct flight fl;
    static struct hello h;
    static struct exts x;
    flight_take(&fl, s);
    struct msg *m = tc->edit == EDIT_FLIGHT ? NULL : flight_find(&fl, tc->level, tc->type);
    switch (tc->edit) {
    case EDIT_BODY:
        tc->body_fn(&m->body);
        break;
    case EDIT_HELLO:
        hello_parse(&h, m->type == HT_CLIENT_HELLO, &m->body);
        tc->hello_fn(&h);
        m->body.n = 0;
        hello_put(&m->body, &h);
        break;
    case EDIT_EE: {
        struct cur c = {m->body.d, m->body.n};
        exts_parse(&x, get_vec(&c, 2));
        assert_int_equal(c.n, 0);
        tc->exts_fn(&x);
        m->body.n = 0;
        exts_put(&m->body, &x, 0);
        break;
    }
    case EDIT_FLIGHT:
        tc->flight_fn(&fl);
        break;
    case NO_EDIT:
        break;
    }
    flight_put(s, &fl);
}

static int has_output(const struct mock_side *s)
{
    for (int l = 0; l < 4; l++)
        if (s->out_len[l] > 0)
            return 1;
    return 0;
}

/* The default ClientHello, edited, framed and handed to a fresh server. */
static void run_craft(struct fixture *f, const struct neg_case *tc)
{
    static struct hello h;
    static struct buf msg;
    hello_default_client(&h);
    if (tc->hello_fn != NULL)
        tc->hello_fn(&h);
    msg.n = 0;
    put_int(&msg, tc->craft_type != 0 ? tc->craft_type : HT_CLIENT_HELLO, 1);
    size_t at = open_vec(&msg, 3);
    hello_put(&msg, &h);
    close_vec(&msg, at, 3);
    int level = tc->craft_level != 0 ? tc->craft_level : INI;
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, level, msg.d, msg.n), 1);
    int r = SSL_do_handshake(f->p.server.ssl);
    assert_failure(&f->p.server, r, tc->alert, tc->reason, 0);
}

/*
 * A real client and server take turns; every non-empty output is a flight,
 * numbered from 0. Flight tc->flight is edited before delivery. The first
 * side whose SSL_do_handshake fails is checked.
 */
static void run_pump(struct fixture *f, const struct neg_case *tc)
{
    struct mock_side *sides[2] = {&f->p.client, &f->p.server};
    int done[2] = {0, 0}, flight = 0;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 2; i++) {
            struct mock_side *me = sides[i], *peer = sides[!i];
            if (!done[i]) {
                int r = SSL_do_handshake(me->ssl);
                if (r == 1) {
                    done[i] = 1;
                } else if (SSL_get_error(me->ssl, r) != SSL_ERROR_WANT_READ) {
                    if (tc->victim_server != (i == 1))
                        print_message("the %s failed, not the %s\n", i ? "server" : "client",
                                      i ? "client" : "server");
                    assert_int_equal(tc->victim_server, i == 1);
                    assert_failure(me, r, tc->alert, tc->reason, 0);
                    assert_int_equal(peer->alerts_sent, 0);
                    return;
                }
            }
            if (has_output(me)) {
                if (flight == tc->flight && tc->edit != NO_EDIT)
                    apply_edit(tc, me);
                flight++;
                assert_true(mock_deliver(me, peer, 0));
            }
        }
    }
    fail_msg("the handshake did not fail");
}

static void table_case(void **state)
{
    struct fixture *f = *state;
    const struct neg_case *tc = f->tc;
    if (tc->config != NULL)
        tc->config(f);
    if (tc->kind == CRAFT)
        run_craft(f, tc);
    else
        run_pump(f, tc);
    if (tc->after != NULL)
        tc->after(f);
}

/* ------------------------------------------------------------------ */
/* Controls: the unedited inputs succeed, so the failures above are    */
/* caused by the edits                                                 */
/* ------------------------------------------------------------------ */

static void crafted_client_hello_is_accepted(void **state)
{
    struct fixture *f = *state;
    static struct hello h;
    static struct buf msg;
    hello_default_client(&h);
    msg.n = 0;
    put_int(&msg, HT_CLIENT_HELLO, 1);
    size_t at = open_vec(&msg, 3);
    hello_put(&msg, &h);
    close_vec(&msg, at, 3);
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, INI, msg.d, msg.n), 1);
    int r = SSL_do_handshake(f->p.server.ssl);
    assert_int_equal(SSL_get_error(f->p.server.ssl, r), SSL_ERROR_WANT_READ);
    assert_true(f->p.server.out_len[INI] > 0 && f->p.server.out_len[HSK] > 0);
    assert_int_equal(f->p.server.alerts_sent, 0);
}

/* Parsing and re-framing every flight without a change keeps the handshake intact. */
static void reframed_flights_complete(void **state)
{
    struct fixture *f = *state;
    struct mock_side *sides[2] = {&f->p.client, &f->p.server};
    int done[2] = {0, 0};
    for (int round = 0; round < 8 && !(done[0] && done[1]); round++) {
        for (int i = 0; i < 2; i++) {
            if (!done[i]) {
                int r = SSL_do_handshake(sides[i]->ssl);
                done[i] = r == 1;
                assert_true(r == 1 || SSL_get_error(sides[i]->ssl, r) == SSL_ERROR_WANT_READ);
            }
            if (has_output(sides[i])) {
                static struct flight fl;
                flight_take(&fl, sides[i]);
                flight_put(sides[i], &fl);
                assert_true(mock_deliver(sides[i], sides[!i], 0));
            }
        }
    }
    assert_true(done[0] && done[1]);
}

/*
 * RFC 8446 §4.2 and §4.1.4: cookie is the one extension a HelloRetryRequest
 * may carry unsolicited; §4.2.2: the client echoes it in ClientHello2.
 */
static void hello_retry_request_cookie_is_echoed(void **state)
{
    struct fixture *f = *state;
    static struct flight fl;
    static struct hello h;
    static const uint8_t cookie[] = {0, 4, 1, 2, 3, 4};
    cfg_hrr(f);
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    flight_take(&fl, &f->p.server);
    struct msg *hrr = flight_find(&fl, INI, HT_SERVER_HELLO);
    hello_parse(&h, 0, &hrr->body);
    assert_memory_equal(h.random, hrr_random, 32);
    ext_add(&h.x, X_COOKIE, cookie, sizeof(cookie));
    hrr->body.n = 0;
    hello_put(&hrr->body, &h);
    flight_put(&f->p.server, &fl);
    assert_true(mock_deliver(&f->p.server, &f->p.client, 0));
    int r = SSL_do_handshake(f->p.client.ssl);
    if (f->p.client.alerts_sent != 0) {
        char log[2048];
        pop_first_ssl_reason(log, sizeof(log));
        print_message("client sent alert %d:\n%s", f->p.client.alert, log);
    }
    assert_int_equal(f->p.client.alerts_sent, 0);
    assert_int_equal(SSL_get_error(f->p.client.ssl, r), SSL_ERROR_WANT_READ);
    flight_take(&fl, &f->p.client);
    hello_parse(&h, 1, &flight_find(&fl, INI, HT_CLIENT_HELLO)->body);
    struct ext *e = ext_get(&h.x, X_COOKIE);
    assert_non_null(e);
    assert_int_equal(e->len, sizeof(cookie));
    assert_memory_equal(e->body, cookie, sizeof(cookie));
}

/* ------------------------------------------------------------------ */
/* SSL_provide_quic_data                                               */
/* ------------------------------------------------------------------ */

static void assert_refused(SSL *ssl, int ret, int reason)
{
    assert_int_equal(ret, 0);
    assert_int_equal(ERR_GET_LIB(ERR_peek_error()), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(ERR_peek_error()), reason);
    ERR_clear_error();
}

/* The contract: a zero-length call is a no-op that succeeds (even with NULL data). */
static void provide_with_zero_length_returns_one(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, INI, NULL, 0), 1);
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, INI, (const uint8_t *)"x", 0), 1);
    assert_int_equal(ERR_peek_error(), 0);
    int r = SSL_do_handshake(f->p.server.ssl);
    assert_int_equal(SSL_get_error(f->p.server.ssl, r), SSL_ERROR_WANT_READ);
}

/* The contract: SSL_provide_quic_data on a connection that is not QUIC. */
static void provide_on_a_non_quic_ssl_should_not_have_been_called(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_set_quic_method(f->p.server.ssl, NULL), 1);
    assert_int_equal(SSL_is_quic(f->p.server.ssl), 0);
    assert_refused(f->p.server.ssl,
                   SSL_provide_quic_data(f->p.server.ssl, INI, (const uint8_t *)"\x01", 1),
                   ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
}

/* The contract: SSL_do_handshake without a QUIC method fails cleanly, and keeps failing. */
static void do_handshake_without_a_quic_method_fails(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method()); /* no SSL_CTX_set_quic_method */
    assert_non_null(ctx);
    SSL *ssl = SSL_new(ctx);
    assert_non_null(ssl);
    for (int i = 0; i < 2; i++) {
        int r = SSL_do_handshake(ssl);
        assert_true(r <= 0);
        assert_int_equal(SSL_get_error(ssl, r), SSL_ERROR_SSL);
        assert_int_equal(ERR_GET_REASON(ERR_peek_error()), QTLS_R_NO_QUIC_METHOD);
        ERR_clear_error();
    }
    assert_int_equal(SSL_process_quic_post_handshake(ssl), 0);
    ERR_clear_error();
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    /* A QUIC connection switched off by SSL_set_quic_method(NULL): no callback is called. */
    assert_int_equal(SSL_set_quic_method(f->p.client.ssl, NULL), 1);
    int r = SSL_do_handshake(f->p.client.ssl);
    assert_true(r <= 0);
    assert_int_equal(SSL_get_error(f->p.client.ssl, r), SSL_ERROR_SSL);
    assert_int_equal(f->p.client.add_calls + f->p.client.alerts_sent, 0);
    ERR_clear_error();
}

/* The contract: a level lower than the previous call's. */
static void provide_below_the_previous_level_is_refused(void **state)
{
    struct fixture *f = *state;
    static const uint8_t fin[] = {HT_FINISHED, 0, 0, 0};
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, HSK, fin, sizeof(fin)), 1);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, INI, fin, sizeof(fin)),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_int_equal(f->p.server.alerts_sent, 0);
}

/* RFC 9001 §4.1.3: a message may not start at one level and continue at another. */
static void provide_splitting_a_message_across_levels_is_refused(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    const uint8_t *ch = f->p.client.out[INI];
    size_t n = f->p.client.out_len[INI];
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, INI, ch, 10), 1);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, HSK, ch + 10, n - 10),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_int_equal(f->p.server.alerts_sent, 0);
}

/* The contract: a level lower than the current read level (the client read ServerHello). */
static void provide_below_the_read_level_is_refused(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_true(mock_deliver(&f->p.client, &f->p.server, 0));
    assert_int_equal(SSL_do_handshake(f->p.server.ssl), -1);
    /* only the ServerHello */
    assert_int_equal(SSL_provide_quic_data(f->p.client.ssl, INI, f->p.server.out[INI],
                                           f->p.server.out_len[INI]),
                     1);
    int r = SSL_do_handshake(f->p.client.ssl);
    assert_int_equal(SSL_get_error(f->p.client.ssl, r), SSL_ERROR_WANT_READ);
    assert_int_equal(SSL_quic_read_level(f->p.client.ssl), HSK);
    assert_refused(f->p.client.ssl,
                   SSL_provide_quic_data(f->p.client.ssl, INI, f->p.server.out[INI], 4),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_int_equal(f->p.client.alerts_sent, 0);
}

/* The contract: only the four levels exist. */
static void provide_at_an_invalid_level_is_refused(void **state)
{
    struct fixture *f = *state;
    static const uint8_t fin[] = {HT_FINISHED, 0, 0, 0};
    assert_refused(f->p.server.ssl,
                   SSL_provide_quic_data(f->p.server.ssl, (OSSL_ENCRYPTION_LEVEL)4, fin,
                                         sizeof(fin)),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_refused(f->p.server.ssl,
                   SSL_provide_quic_data(f->p.server.ssl, (OSSL_ENCRYPTION_LEVEL)-1, fin,
                                         sizeof(fin)),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
}

/* The contract: at most SSL_quic_max_handshake_flight_len unprocessed bytes per level. */
static void provide_beyond_the_flight_limit_is_excessive(void **state)
{
    struct fixture *f = *state;
    size_t limit = SSL_quic_max_handshake_flight_len(f->p.server.ssl, INI);
    assert_int_equal(limit, 16384);
    uint8_t *big = calloc(1, limit + 1);
    assert_non_null(big);
    /* One message of limit - 4 + 1 body bytes: its 24-bit length is over the limit. */
    big[0] = HT_CLIENT_HELLO;
    big[1] = (uint8_t)((limit - 3) >> 16), big[2] = (uint8_t)((limit - 3) >> 8);
    big[3] = (uint8_t)(limit - 3);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, INI, big, limit + 1),
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
    /* Exactly the limit is accepted; one more byte is not. */
    assert_int_equal(SSL_provide_quic_data(f->p.server.ssl, INI, big, limit), 1);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, INI, big, 1),
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
    assert_int_equal(f->p.server.alerts_sent, 0);
    free(big);
}

/*
 * A message whose 24-bit length exceeds the flight limit (here the bytes of a
 * TLS ChangeCipherSpec record, read as a handshake header: type 20, length
 * 0x030001) can never arrive whole: qtls fails it at its header with
 * illegal_parameter, as libssl does, and still refuses the bytes that would
 * exceed the limit.
 */
static void message_longer_than_the_flight_limit_fails_at_its_header(void **state)
{
    struct fixture *f = *state;
    static const uint8_t ccs_record[] = {0x14, 0x03, 0x03, 0x00, 0x01, 0x01};
    static uint8_t chunk[4096];
    SSL *s = f->p.server.ssl;
    assert_int_equal(SSL_provide_quic_data(s, INI, ccs_record, sizeof(ccs_record)), 1);
    int r = SSL_do_handshake(s);
    assert_int_equal(SSL_get_error(s, r), SSL_ERROR_SSL);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_EXCESSIVE_MESSAGE_SIZE);
    assert_int_equal(f->p.server.alert, SSL_AD_ILLEGAL_PARAMETER);
    ERR_clear_error();
    size_t total = sizeof(ccs_record);
    while (total + sizeof(chunk) <= SSL_quic_max_handshake_flight_len(s, INI)) {
        assert_int_equal(SSL_provide_quic_data(s, INI, chunk, sizeof(chunk)), 1);
        total += sizeof(chunk);
    }
    assert_refused(s, SSL_provide_quic_data(s, INI, chunk, sizeof(chunk)),
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
    assert_int_equal(f->p.server.alerts_sent, 1);
}

/* RFC 9001 §8.3 and the contract: no handshake data at the 0-RTT level (limit 0). */
static void provide_at_the_early_data_level_is_excessive(void **state)
{
    struct fixture *f = *state;
    static const uint8_t eoed[] = {HT_END_OF_EARLY_DATA, 0, 0, 0};
    assert_int_equal(SSL_quic_max_handshake_flight_len(f->p.server.ssl, EARLY), 0);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, EARLY, eoed, 4),
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
    assert_refused(f->p.client.ssl, SSL_provide_quic_data(f->p.client.ssl, EARLY, eoed, 4),
                   SSL_R_EXCESSIVE_MESSAGE_SIZE);
}

/* The contract: after the handshake the read level is application. */
static void provide_at_handshake_level_after_completion_is_refused(void **state)
{
    struct fixture *f = *state;
    static const uint8_t fin[] = {HT_FINISHED, 0, 0, 0};
    assert_true(mock_handshake(&f->p, 0));
    assert_refused(f->p.client.ssl, SSL_provide_quic_data(f->p.client.ssl, HSK, fin, 4),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_refused(f->p.server.ssl, SSL_provide_quic_data(f->p.server.ssl, HSK, fin, 4),
                   SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
}

/* ------------------------------------------------------------------ */
/* After the handshake (SSL_process_quic_post_handshake)              */
/* ------------------------------------------------------------------ */

/* Completes a handshake, then hands `side` one framed message at the application level. */
static void post_handshake_input(struct fixture *f, struct mock_side *side, uint8_t type,
                                 const uint8_t *body, size_t len)
{
    static struct buf msg;
    assert_true(mock_handshake(&f->p, 0));
    msg.n = 0;
    put_int(&msg, type, 1);
    put_int(&msg, (uint32_t)len, 3);
    put(&msg, body, len);
    assert_int_equal(SSL_provide_quic_data(side->ssl, APP, msg.d, msg.n), 1);
}

/* RFC 9001 §6: KeyUpdate is forbidden in QUIC, also after the handshake. */
static void key_update_after_the_handshake_is_unexpected_message(void **state)
{
    struct fixture *f = *state;
    post_handshake_input(f, &f->p.client, HT_KEY_UPDATE, key_update_body, 1);
    int r = SSL_process_quic_post_handshake(f->p.client.ssl);
    assert_int_equal(r, 0);
    assert_failure(&f->p.client, r, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED, 1);
    assert_int_equal(f->p.client.alert_level, APP);
}

static void key_update_to_the_server_after_the_handshake_is_unexpected_message(void **state)
{
    struct fixture *f = *state;
    post_handshake_input(f, &f->p.server, HT_KEY_UPDATE, (const uint8_t *)"\x01", 1);
    int r = SSL_process_quic_post_handshake(f->p.server.ssl);
    assert_failure(&f->p.server, r, SSL_AD_UNEXPECTED_MESSAGE, QTLS_R_KEY_UPDATE_NOT_ALLOWED, 1);
}

/* RFC 8446 §4.6.1: only a server sends NewSessionTicket. */
static void new_session_ticket_to_the_server_is_unexpected_message(void **state)
{
    struct fixture *f = *state;
    static const uint8_t nst[] = {0, 0, 0x1c, 0x20, 0, 0, 0, 1, 0, 0, 1, 0xaa, 0, 0};
    post_handshake_input(f, &f->p.server, HT_NEW_SESSION_TICKET, nst, sizeof(nst));
    int r = SSL_process_quic_post_handshake(f->p.server.ssl);
    assert_failure(&f->p.server, r, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE, 1);
}

/* RFC 8446 §4: no Finished after the handshake. */
static void finished_after_the_handshake_is_unexpected_message(void **state)
{
    struct fixture *f = *state;
    static const uint8_t verify[32];
    post_handshake_input(f, &f->p.client, HT_FINISHED, verify, sizeof(verify));
    int r = SSL_process_quic_post_handshake(f->p.client.ssl);
    assert_failure(&f->p.client, r, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE, 1);
}

/* RFC 9001 §4.4: servers must not send post-handshake CertificateRequest. */
static void post_handshake_certificate_request_is_unexpected_message(void **state)
{
    struct fixture *f = *state;
    static const uint8_t cr[] = {1, 0x42, 0, 8, 0, 13, 0, 4, 0, 2, 0x04, 0x03};
    post_handshake_input(f, &f->p.client, HT_CERTIFICATE_REQUEST, cr, sizeof(cr));
    int r = SSL_process_quic_post_handshake(f->p.client.ssl);
    assert_failure(&f->p.client, r, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE, 1);
}

/* RFC 8446 §4.6.1: ticket<1..2^16-1> runs past the end of the message. */
static void truncated_new_session_ticket_is_decode_error(void **state)
{
    struct fixture *f = *state;
    static const uint8_t nst[] = {0, 0, 0x1c, 0x20, 0, 0, 0, 1, 0, 0, 9, 0xaa};
    post_handshake_input(f, &f->p.client, HT_NEW_SESSION_TICKET, nst, sizeof(nst));
    int r = SSL_process_quic_post_handshake(f->p.client.ssl);
    assert_failure(&f->p.client, r, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR, 1);
}

/* RFC 9001 §4.6.1: max_early_data_size other than 0xffffffff is a protocol violation. */
static void ticket_with_other_max_early_data_is_illegal_parameter(void **state)
{
    struct fixture *f = *state;
    static const uint8_t nst[] = {0,    0,    0x1c, 0x20, 0, 0, 0, 1, 0, 0, 1, 0xaa,
                                  0,    8,    0,    42,   0, 4, 0, 0, 0x40, 0};
    post_handshake_input(f, &f->p.client, HT_NEW_SESSION_TICKET, nst, sizeof(nst));
    int r = SSL_process_quic_post_handshake(f->p.client.ssl);
    assert_failure(&f->p.client, r, SSL_AD_ILLEGAL_PARAMETER, SSL_R_INVALID_MAX_EARLY_DATA, 1);
}

/* The contract: SSL_process_quic_post_handshake during the handshake returns 0, no alert. */
static void post_handshake_processing_during_the_handshake_is_refused(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(SSL_do_handshake(f->p.client.ssl), -1);
    assert_int_equal(SSL_process_quic_post_handshake(f->p.client.ssl), 0);
    assert_int_equal(f->p.client.alerts_sent, 0);
    ERR_clear_error();
    assert_true(mock_handshake(&f->p, 0)); /* and the handshake is not harmed */
}

/* ------------------------------------------------------------------ */
/* SSL_VERIFY_NONE: the same chain errors complete, the result says so */
/* ------------------------------------------------------------------ */

static void verify_none_case(const char *cert, const char *host, long expected)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx(cert);
    struct mock_pair p;
    assert_non_null(cctx);
    assert_non_null(sctx);
    assert_true(mock_pair_init(&p, cctx, sctx));
    SSL_set_verify(p.client.ssl, SSL_VERIFY_NONE, NULL);
    assert_int_equal(SSL_set1_host(p.client.ssl, host), 1);
    assert_true(mock_handshake(&p, 0));
    assert_int_equal(p.client.alerts_sent + p.server.alerts_sent, 0);
    assert_int_equal(SSL_get_verify_result(p.client.ssl), expected);
    mock_pair_free(&p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

/* RFC 8446 §4.4.2.4 leaves the decision to the client: SSL_VERIFY_NONE goes on. */
static void untrusted_chain_under_verify_none_completes_with_the_error_recorded(void **state)
{
    verify_none_case("other-leaf", "localhost", X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

static void wrong_host_under_verify_none_completes_with_the_error_recorded(void **state)
{
    verify_none_case("ecdsa256", "wrong.example", X509_V_ERR_HOSTNAME_MISMATCH);
}

static void expired_certificate_under_verify_none_completes_with_the_error_recorded(void **state)
{
    verify_none_case("expired", "localhost", X509_V_ERR_CERT_HAS_EXPIRED);
}

/* ------------------------------------------------------------------ */

static int setup_plain(void **state) { return setup_with(state, NULL); }

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_plain, teardown)

int main(void)
{
    static const struct CMUnitTest fixed[] = {
        T(crafted_client_hello_is_accepted),
        T(reframed_flights_complete),
        T(hello_retry_request_cookie_is_echoed),
        T(provide_with_zero_length_returns_one),
        T(provide_on_a_non_quic_ssl_should_not_have_been_called),
        T(do_handshake_without_a_quic_method_fails),
        T(provide_below_the_previous_level_is_refused),
        T(provide_splitting_a_message_across_levels_is_refused),
        T(provide_below_the_read_level_is_refused),
        T(provide_at_an_invalid_level_is_refused),
        T(provide_beyond_the_flight_limit_is_excessive),
        T(message_longer_than_the_flight_limit_fails_at_its_header),
        T(provide_at_the_early_data_level_is_excessive),
        T(provide_at_handshake_level_after_completion_is_refused),
        T(key_update_after_the_handshake_is_unexpected_message),
        T(key_update_to_the_server_after_the_handshake_is_unexpected_message),
        T(new_session_ticket_to_the_server_is_unexpected_message),
        T(finished_after_the_handshake_is_unexpected_message),
        T(post_handshake_certificate_request_is_unexpected_message),
        T(truncated_new_session_ticket_is_decode_error),
        T(ticket_with_other_max_early_data_is_illegal_parameter),
        T(post_handshake_processing_during_the_handshake_is_refused),
        T(untrusted_chain_under_verify_none_completes_with_the_error_recorded),
        T(wrong_host_under_verify_none_completes_with_the_error_recorded),
        T(expired_certificate_under_verify_none_completes_with_the_error_recorded),
    };
    /* The table rows, one cmocka test each, named by the row. */
    static struct CMUnitTest tests[sizeof(fixed) / sizeof(fixed[0]) + NUM_CASES];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        tests[n++] = fixed[i];
    for (size_t i = 0; i < NUM_CASES; i++) {
        tests[n] = (struct CMUnitTest){cases[i].name, table_case, setup, teardown,
                                       (void *)&cases[i]};
        n++;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
