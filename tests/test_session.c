/*
 * session.c: SSL_SESSION accessors with OpenSSL 3.0's conventions, the
 * session encoding through i2d/d2i and PEM (every field survives), hostile
 * encodings (truncations, byte flips, bad versions and lengths) refused with
 * an ERR_LIB_SSL reason and never a crash, sessions made from a connection,
 * and the SSL/SSL_CTX session configuration and reference counting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <openssl/pem.h>

#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "mock_quic.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* Drains the error queue; 1 if (lib, reason) was on it. */
static int queue_has(int lib, int reason)
{
    unsigned long e;
    int found = 0;
    while ((e = ERR_get_error()) != 0)
        if (ERR_GET_LIB(e) == lib && ERR_GET_REASON(e) == reason)
            found = 1;
    return found;
}

/* The last error is qtls's session reason (nothing from ASN.1 or elsewhere is left on top). */
static int last_is_bad_session(void)
{
    unsigned long e = ERR_peek_last_error();
    int ok = ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == QTLS_R_BAD_SESSION;
    ERR_clear_error();
    return ok;
}

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

static X509 *load_cert(const char *name)
{
    BIO *b = BIO_new_file(mock_cert_path(name), "r");
    assert_non_null(b);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(x);
    return x;
}

/* A session with every field set to something distinctive. */
static SSL_SESSION *full_session(void)
{
    static const uint8_t ticket[] = "an opaque ticket from the server";
    static const uint8_t appdata[] = "quic-v1";
    static const uint8_t ectx[] = "transport parameters + settings";
    static const uint8_t sid_ctx[] = "vhost-a";
    static const uint8_t id[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t psk[48];
    SSL_SESSION *s = SSL_SESSION_new();
    assert_non_null(s);
    for (size_t i = 0; i < sizeof(psk); i++)
        psk[i] = (uint8_t)(0xa0 + i);
    assert_int_equal(SSL_SESSION_set_cipher(s, suite_by_tls_id(0x1302)), 1); /* SHA-384 */
    assert_int_equal(SSL_SESSION_set1_master_key(s, psk, sizeof(psk)), 1);
    assert_int_equal(SSL_SESSION_set_time(s, 1700000000), 1700000000);
    assert_int_equal(SSL_SESSION_set_timeout(s, 86400), 1);
    s->age_add = 0xdeadbeef;
    assert_int_equal(SSL_SESSION_set_max_early_data(s, 0xffffffff), 1);
    s->verify_result = X509_V_ERR_CERT_HAS_EXPIRED;
    assert_int_equal(SSL_SESSION_set1_id(s, id, sizeof(id)), 1);
    assert_int_equal(SSL_SESSION_set1_id_context(s, sid_ctx, sizeof(sid_ctx) - 1), 1);
    assert_int_equal(SSL_SESSION_set1_hostname(s, "server.example"), 1);
    assert_int_equal(SSL_SESSION_set1_alpn_selected(s, (const unsigned char *)"h3", 2), 1);
    assert_int_equal(SSL_SESSION_set1_ticket_appdata(s, appdata, sizeof(appdata) - 1), 1);
    s->early_context = OPENSSL_memdup(ectx, sizeof(ectx) - 1);
    s->early_context_len = sizeof(ectx) - 1;
    s->ticket = OPENSSL_memdup(ticket, sizeof(ticket) - 1);
    s->ticket_len = sizeof(ticket) - 1;
    s->peer = load_cert("client.pem");
    static const uint8_t sct_list[] = {0, 4, 0, 2, 0x5c, 0x7a}; /* one SCT, opaque */
    s->sct_list = OPENSSL_memdup(sct_list, sizeof(sct_list));
    s->sct_list_len = sizeof(sct_list);
    return s;
}

static void assert_bytes_equal(const void *a, size_t a_len, const void *b, size_t b_len)
{
    assert_int_equal(a_len, b_len);
    if (a_len > 0)
        assert_memory_equal(a, b, a_len);
}

static void assert_sessions_equal(const SSL_SESSION *a, const SSL_SESSION *b, int with_ticket)
{
    assert_ptr_equal(a->cipher, b->cipher);
    assert_bytes_equal(a->psk.b, a->psk.len, b->psk.b, b->psk.len);
    assert_true(a->time == b->time);
    assert_true(a->timeout == b->timeout);
    assert_int_equal(a->age_add, b->age_add);
    assert_int_equal(a->max_early_data, b->max_early_data);
    assert_int_equal(a->verify_result, b->verify_result);
    assert_int_equal(a->not_resumable, b->not_resumable);
    assert_bytes_equal(a->id, a->id_len, b->id, b->id_len);
    assert_bytes_equal(a->sid_ctx, a->sid_ctx_len, b->sid_ctx, b->sid_ctx_len);
    if (a->hostname == NULL)
        assert_null(b->hostname);
    else
        assert_string_equal(a->hostname, b->hostname);
    assert_bytes_equal(a->alpn, a->alpn_len, b->alpn, b->alpn_len);
    assert_bytes_equal(a->appdata, a->appdata_len, b->appdata, b->appdata_len);
    assert_bytes_equal(a->early_context, a->early_context_len, b->early_context,
                       b->early_context_len);
    assert_bytes_equal(a->sct_list, a->sct_list_len, b->sct_list, b->sct_list_len);
    if (session_peer(a) == NULL)
        assert_null(session_peer(b));
    else
        assert_int_equal(X509_cmp(session_peer(a), session_peer(b)), 0);
    if (with_ticket)
        assert_bytes_equal(a->ticket, a->ticket_len, b->ticket, b->ticket_len);
    else
        assert_null(b->ticket);
}

/* i2d into a fresh buffer. */
static unsigned char *to_der(const SSL_SESSION *s, int *len)
{
    unsigned char *der = NULL;
    *len = i2d_SSL_SESSION(s, &der);
    assert_true(*len > 0);
    assert_non_null(der);
    return der;
}

/* The inner encoding (no DER frame), as the server puts it in tickets. */
static void inner(const SSL_SESSION *s, int with_ticket, struct wr *w)
{
    wr_init(w);
    session_encode(s, with_ticket, w);
    assert_true(wr_ok(w));
}

static SSL_SESSION *decode_bytes(const uint8_t *p, size_t n)
{
    struct rd r;
    rd_init(&r, p, n);
    return session_decode(r);
}

/* Wraps an inner encoding in the DER OCTET STRING frame i2d writes. */
static size_t frame(const uint8_t *p, size_t n, uint8_t *out, size_t cap)
{
    size_t h = 0;
    out[h++] = 0x04;
    if (n < 0x80) {
        out[h++] = (uint8_t)n;
    } else if (n < 0x100) {
        out[h++] = 0x81;
        out[h++] = (uint8_t)n;
    } else {
        out[h++] = 0x82;
        out[h++] = (uint8_t)(n >> 8);
        out[h++] = (uint8_t)n;
    }
    assert_true(h + n <= cap);
    memcpy(out + h, p, n);
    return h + n;
}

/* ------------------------------------------------------------------ */
/* Accessors                                                           */
/* ------------------------------------------------------------------ */

static void new_session_has_openssl_defaults(void **state)
{
    SSL_SESSION *s = SSL_SESSION_new();
    assert_non_null(s);
    assert_int_equal(SSL_SESSION_get_timeout(s), 304);
    assert_true(SSL_SESSION_get_time(s) > 1600000000);
    assert_int_equal(SSL_SESSION_get_protocol_version(s), TLS1_3_VERSION);
    assert_null(SSL_SESSION_get0_cipher(s));
    assert_int_equal(SSL_SESSION_is_resumable(s), 0);
    assert_int_equal(SSL_SESSION_has_ticket(s), 0);
    assert_int_equal(SSL_SESSION_get_ticket_lifetime_hint(s), 0);
    assert_null(SSL_SESSION_get0_hostname(s));
    assert_null(SSL_SESSION_get0_peer(s));
    assert_int_equal(SSL_SESSION_get_max_early_data(s), 0);
    assert_int_equal(SSL_SESSION_get_master_key(s, NULL, 0), 0);
    unsigned int len = 99;
    assert_non_null(SSL_SESSION_get_id(s, &len));
    assert_int_equal(len, 0);
    len = 99;
    assert_non_null(SSL_SESSION_get0_id_context(s, &len));
    assert_int_equal(len, 0);
    const unsigned char *alpn = (const unsigned char *)"x";
    size_t alen = 9;
    SSL_SESSION_get0_alpn_selected(s, &alpn, &alen);
    assert_null(alpn);
    assert_int_equal(alen, 0);
    void *data = (void *)1;
    size_t dlen = 9;
    assert_int_equal(SSL_SESSION_get0_ticket_appdata(s, &data, &dlen), 1);
    assert_null(data);
    assert_int_equal(dlen, 0);
    assert_int_equal(SSL_SESSION_get_compress_id(s), 0);
    SSL_SESSION_free(s);
}

static void setters_follow_openssl(void **state)
{
    SSL_SESSION *s = SSL_SESSION_new();
    assert_non_null(s);
    /* time and timeout: set_time returns t, set_timeout 1; negatives refused */
    assert_int_equal(SSL_SESSION_set_time(s, 12345), 12345);
    assert_int_equal(SSL_SESSION_get_time(s), 12345);
    assert_int_equal(SSL_SESSION_set_timeout(s, 600), 1);
    assert_int_equal(SSL_SESSION_get_timeout(s), 600);
    assert_int_equal(SSL_SESSION_set_timeout(s, -1), 0);
    assert_int_equal(SSL_SESSION_get_timeout(s), 600);
    assert_int_equal(SSL_SESSION_set_time(s, -5), 0);
    /* cipher: only qtls's suites */
    const SSL_CIPHER *aes128 = suite_by_tls_id(0x1301);
    assert_int_equal(SSL_SESSION_set_cipher(s, aes128), 1);
    assert_ptr_equal(SSL_SESSION_get0_cipher(s), aes128);
    struct ssl_cipher_st fake = *aes128;
    assert_int_equal(SSL_SESSION_set_cipher(s, &fake), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_UNKNOWN_CIPHER_TYPE));
    assert_ptr_equal(SSL_SESSION_get0_cipher(s), aes128);
    /* protocol version */
    assert_int_equal(SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION), 1);
    assert_int_equal(SSL_SESSION_set_protocol_version(s, TLS1_2_VERSION), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_UNSUPPORTED_SSL_VERSION));
    /* host name: NULL clears, "" refused */
    assert_int_equal(SSL_SESSION_set1_hostname(s, "a.example"), 1);
    assert_string_equal(SSL_SESSION_get0_hostname(s), "a.example");
    assert_int_equal(SSL_SESSION_set1_hostname(s, ""), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME));
    assert_string_equal(SSL_SESSION_get0_hostname(s), "a.example");
    assert_int_equal(SSL_SESSION_set1_hostname(s, NULL), 1);
    assert_null(SSL_SESSION_get0_hostname(s));
    /* ALPN: one name of 1..255 bytes */
    unsigned char name[256];
    memset(name, 'p', sizeof(name));
    assert_int_equal(SSL_SESSION_set1_alpn_selected(s, name, 255), 1);
    assert_int_equal(SSL_SESSION_set1_alpn_selected(s, name, 256), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_LENGTH_TOO_LONG));
    const unsigned char *alpn;
    size_t alen;
    SSL_SESSION_get0_alpn_selected(s, &alpn, &alen);
    assert_int_equal(alen, 255);
    assert_memory_equal(alpn, name, 255);
    assert_int_equal(SSL_SESSION_set1_alpn_selected(s, NULL, 3), 1);
    SSL_SESSION_get0_alpn_selected(s, &alpn, &alen);
    assert_null(alpn);
    /* session ID context and ID: at most 32 bytes */
    uint8_t big[33] = {0};
    assert_int_equal(SSL_SESSION_set1_id_context(s, big, 33), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG));
    assert_int_equal(SSL_SESSION_set1_id_context(s, big, 32), 1);
    assert_int_equal(SSL_SESSION_set1_id(s, big, 33), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_TOO_LONG));
    assert_int_equal(SSL_SESSION_set1_id(s, (const unsigned char *)"abc", 3), 1);
    unsigned int idlen;
    assert_memory_equal(SSL_SESSION_get_id(s, &idlen), "abc", 3);
    assert_int_equal(idlen, 3);
    /* max_early_data */
    assert_int_equal(SSL_SESSION_set_max_early_data(s, 0xffffffff), 1);
    assert_int_equal(SSL_SESSION_get_max_early_data(s), 0xffffffff);
    SSL_SESSION_free(s);
}

/* For a TLS 1.3 session the "master key" is the resumption PSK, as in OpenSSL. */
static void master_key_is_the_resumption_psk(void **state)
{
    SSL_SESSION *s = full_session();
    uint8_t out[64];
    assert_int_equal(SSL_SESSION_get_master_key(s, NULL, 0), 48);
    assert_int_equal(SSL_SESSION_get_master_key(s, out, sizeof(out)), 48);
    assert_memory_equal(out, s->psk.b, 48);
    assert_int_equal(SSL_SESSION_get_master_key(s, out, 10), 10);
    uint8_t huge[EVP_MAX_MD_SIZE + 1] = {0};
    assert_int_equal(SSL_SESSION_set1_master_key(s, huge, sizeof(huge)), 0);
    SSL_SESSION_free(s);
}

static void resumable_needs_ticket_cipher_and_no_veto(void **state)
{
    SSL_SESSION *s = full_session();
    assert_int_equal(SSL_SESSION_is_resumable(s), 1);
    assert_int_equal(SSL_SESSION_has_ticket(s), 1);
    assert_int_equal(SSL_SESSION_get_ticket_lifetime_hint(s), 86400);
    const unsigned char *tick;
    size_t tlen;
    SSL_SESSION_get0_ticket(s, &tick, &tlen);
    assert_int_equal(tlen, s->ticket_len);
    assert_ptr_equal(tick, s->ticket);
    s->not_resumable = 1;
    assert_int_equal(SSL_SESSION_is_resumable(s), 0);
    s->not_resumable = 0;
    assert_int_equal(SSL_SESSION_set_cipher(s, NULL), 1);
    assert_int_equal(SSL_SESSION_is_resumable(s), 0);
    assert_int_equal(SSL_SESSION_set_cipher(s, suite_by_tls_id(0x1302)), 1);
    OPENSSL_free(s->ticket);
    s->ticket = NULL;
    s->ticket_len = 0;
    assert_int_equal(SSL_SESSION_is_resumable(s), 0);
    SSL_SESSION_free(s);
}

/* ngtcp2 keeps its QUIC version here (OpenSSL 3.0 prototypes and semantics). */
static void ticket_appdata_set_get_clear(void **state)
{
    SSL_SESSION *s = SSL_SESSION_new();
    assert_non_null(s);
    void *data;
    size_t len;
    uint32_t version = 0x00000001;
    assert_int_equal(SSL_SESSION_set1_ticket_appdata(s, &version, sizeof(version)), 1);
    version = 2; /* a copy was taken */
    assert_int_equal(SSL_SESSION_get0_ticket_appdata(s, &data, &len), 1);
    assert_int_equal(len, 4);
    assert_int_equal(*(uint32_t *)data, 1);
    assert_int_equal(SSL_SESSION_set1_ticket_appdata(s, "longer appdata", 14), 1);
    assert_int_equal(SSL_SESSION_get0_ticket_appdata(s, &data, &len), 1);
    assert_int_equal(len, 14);
    assert_memory_equal(data, "longer appdata", 14);
    assert_int_equal(SSL_SESSION_set1_ticket_appdata(s, "x", 0), 1);
    assert_int_equal(SSL_SESSION_get0_ticket_appdata(s, &data, &len), 1);
    assert_null(data);
    assert_int_equal(len, 0);
    assert_int_equal(SSL_SESSION_set1_ticket_appdata(s, NULL, 5), 1);
    assert_int_equal(SSL_SESSION_get0_ticket_appdata(s, &data, &len), 1);
    assert_int_equal(len, 0);
    SSL_SESSION_free(s);
}

static int free_calls;
static void count_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    free_calls++;
}

static void ex_data_and_dup(void **state)
{
    int idx = SSL_SESSION_get_ex_new_index(0, NULL, NULL, NULL, count_free);
    assert_true(idx >= 0);
    SSL_SESSION *s = full_session();
    int marker;
    assert_int_equal(SSL_SESSION_set_ex_data(s, idx, &marker), 1);
    assert_ptr_equal(SSL_SESSION_get_ex_data(s, idx), &marker);
    SSL_SESSION *d = SSL_SESSION_dup(s);
    assert_non_null(d);
    assert_int_equal(d->references, 1);
    assert_sessions_equal(s, d, 1);
    /* a deep copy: nothing shared but the (reference-counted) certificate */
    assert_ptr_not_equal(d->ticket, s->ticket);
    assert_ptr_not_equal(d->hostname, s->hostname);
    assert_ptr_not_equal(d->appdata, s->appdata);
    assert_ptr_equal(d->peer, s->peer);
    free_calls = 0;
    SSL_SESSION_free(s);
    assert_int_equal(free_calls, 1);
    assert_int_equal(SSL_SESSION_get_compress_id(d), 0);
    SSL_SESSION_free(d);
    assert_int_equal(free_calls, 2);
}

/* ------------------------------------------------------------------ */
/* i2d / d2i / PEM                                                     */
/* ------------------------------------------------------------------ */

static void i2d_d2i_round_trip_keeps_every_field(void **state)
{
    SSL_SESSION *s = full_session();
    s->not_resumable = 1;
    int len;
    unsigned char *der = to_der(s, &len);
    const unsigned char *p = der;
    SSL_SESSION *back = d2i_SSL_SESSION(NULL, &p, len);
    assert_non_null(back);
    assert_ptr_equal(p, der + len);
    assert_sessions_equal(s, back, 1);
    assert_int_equal(back->references, 1);
    /* and the copy encodes to the same bytes */
    int len2;
    unsigned char *der2 = to_der(back, &len2);
    assert_bytes_equal(der, (size_t)len, der2, (size_t)len2);
    OPENSSL_free(der2);
    SSL_SESSION_free(back);
    OPENSSL_free(der);
    SSL_SESSION_free(s);
}

/* Minimal sessions: no host name, ALPN, appdata, context, peer or ID. */
static void round_trip_of_a_bare_session(void **state)
{
    SSL_SESSION *s = SSL_SESSION_new();
    uint8_t psk[32] = {7};
    assert_int_equal(SSL_SESSION_set_cipher(s, suite_by_tls_id(0x1303)), 1);
    assert_int_equal(SSL_SESSION_set1_master_key(s, psk, sizeof(psk)), 1);
    int len;
    unsigned char *der = to_der(s, &len);
    const unsigned char *p = der;
    SSL_SESSION *back = d2i_SSL_SESSION(NULL, &p, len);
    assert_non_null(back);
    assert_sessions_equal(s, back, 1);
    assert_int_equal(SSL_SESSION_is_resumable(back), 0);
    SSL_SESSION_free(back);
    OPENSSL_free(der);
    SSL_SESSION_free(s);
}

static void i2d_follows_openssl_conventions(void **state)
{
    SSL_SESSION *s = full_session();
    int len = i2d_SSL_SESSION(s, NULL);
    assert_true(len > 0);
    unsigned char *buf = OPENSSL_malloc((size_t)len + 8);
    unsigned char *p = buf;
    assert_int_equal(i2d_SSL_SESSION(s, &p), len);
    assert_ptr_equal(p, buf + len); /* written and advanced */
    unsigned char *alloc = NULL;
    assert_int_equal(i2d_SSL_SESSION(s, &alloc), len);
    assert_memory_equal(alloc, buf, (size_t)len); /* allocated, not advanced */
    OPENSSL_free(alloc);
    /* d2i with trailing data reads one object and stops after it */
    memset(buf + len, 0xee, 8);
    const unsigned char *q = buf;
    SSL_SESSION *back = d2i_SSL_SESSION(NULL, &q, len + 8);
    assert_non_null(back);
    assert_ptr_equal(q, buf + len);
    SSL_SESSION_free(back);
    /* d2i into an existing object fills that object */
    SSL_SESSION *into = SSL_SESSION_new();
    SSL_SESSION *keep = into;
    assert_int_equal(SSL_SESSION_up_ref(into), 1);
    q = buf;
    assert_ptr_equal(d2i_SSL_SESSION(&into, &q, len), keep);
    assert_ptr_equal(into, keep);
    assert_int_equal(keep->references, 2);
    assert_sessions_equal(s, keep, 1);
    SSL_SESSION_free(into);
    SSL_SESSION_free(keep);
    /* d2i with a == &NULL stores the new object */
    SSL_SESSION *out = NULL;
    q = buf;
    assert_non_null(d2i_SSL_SESSION(&out, &q, len));
    assert_non_null(out);
    SSL_SESSION_free(out);
    OPENSSL_free(buf);
    SSL_SESSION_free(s);
}

/* A session the encoding cannot represent is refused, as OpenSSL refuses one without a cipher. */
static void i2d_refuses_incomplete_sessions(void **state)
{
    SSL_SESSION *s = SSL_SESSION_new();
    unsigned char *der = NULL;
    assert_int_equal(i2d_SSL_SESSION(s, &der), 0);
    assert_null(der);
    assert_true(last_is_bad_session());
    assert_int_equal(SSL_SESSION_set_cipher(s, suite_by_tls_id(0x1302)), 1);
    uint8_t psk[32] = {0}; /* SHA-256 length for a SHA-384 suite */
    assert_int_equal(SSL_SESSION_set1_master_key(s, psk, sizeof(psk)), 1);
    assert_int_equal(i2d_SSL_SESSION(s, NULL), 0);
    assert_true(last_is_bad_session());
    assert_int_equal(i2d_SSL_SESSION(NULL, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER));
    /* session_encode marks the writer failed, so ticket code sees it in wr_ok */
    struct wr w;
    wr_init(&w);
    session_encode(s, 0, &w);
    assert_false(wr_ok(&w));
    wr_free(&w);
    ERR_clear_error();
    SSL_SESSION_free(s);
}

/* Inside a ticket the session carries no ticket (with_ticket = 0). */
static void ticket_plaintext_leaves_the_ticket_out(void **state)
{
    SSL_SESSION *s = full_session();
    struct wr w;
    inner(s, 0, &w);
    SSL_SESSION *back = decode_bytes(w.buf, w.len);
    assert_non_null(back);
    assert_sessions_equal(s, back, 0);
    assert_int_equal(SSL_SESSION_has_ticket(back), 0);
    SSL_SESSION_free(back);
    wr_free(&w);
    SSL_SESSION_free(s);
}

static void pem_write_and_read_back(void **state)
{
    SSL_SESSION *s = full_session();
    BIO *b = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_SSL_SESSION(b, s), 1);
    char *text;
    long n = BIO_get_mem_data(b, &text);
    assert_true(n > 0);
    assert_memory_equal(text, "-----BEGIN SSL SESSION PARAMETERS-----\n", 39);
    SSL_SESSION *back = PEM_read_bio_SSL_SESSION(b, NULL, NULL, NULL);
    assert_non_null(back);
    assert_sessions_equal(s, back, 1);
    SSL_SESSION_free(back);
    BIO_free(b);

    /* the FILE* forms */
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(PEM_write_SSL_SESSION(f, s), 1);
    rewind(f);
    SSL_SESSION *x = NULL;
    back = PEM_read_SSL_SESSION(f, &x, NULL, NULL);
    assert_non_null(back);
    assert_ptr_equal(back, x);
    assert_sessions_equal(s, back, 1);
    SSL_SESSION_free(back);
    fclose(f);
    SSL_SESSION_free(s);
}

/* d2i_SSL_SESSION_bio (ASN1_d2i_bio) finds the end of the object from its DER frame. */
static void der_bio_forms_work(void **state)
{
    SSL_SESSION *s = full_session();
    BIO *b = BIO_new(BIO_s_mem());
    assert_int_equal(i2d_SSL_SESSION_bio(b, s), 1);
    assert_int_equal(i2d_SSL_SESSION_bio(b, s), 1);
    SSL_SESSION *one = d2i_SSL_SESSION_bio(b, NULL);
    SSL_SESSION *two = d2i_SSL_SESSION_bio(b, NULL);
    assert_non_null(one);
    assert_non_null(two);
    assert_sessions_equal(s, one, 1);
    assert_sessions_equal(s, two, 1);
    SSL_SESSION_free(one);
    SSL_SESSION_free(two);
    BIO_free(b);
    SSL_SESSION_free(s);
}

/* ------------------------------------------------------------------ */
/* Hostile encodings                                                   */
/* ------------------------------------------------------------------ */

static void every_truncation_is_refused(void **state)
{
    SSL_SESSION *s = full_session();
    int len;
    unsigned char *der = to_der(s, &len);
    for (long cut = 0; cut < len; cut++) {
        /* a copy of exactly `cut` bytes, so ASan sees any read past the end */
        unsigned char *copy = OPENSSL_malloc(cut > 0 ? (size_t)cut : 1);
        memcpy(copy, der, (size_t)cut);
        const unsigned char *p = copy;
        assert_null(d2i_SSL_SESSION(NULL, &p, cut));
        assert_ptr_equal(p, copy); /* not advanced */
        assert_true(last_is_bad_session());
        OPENSSL_free(copy);
    }
    /* the same for the inner encoding the server decrypts from tickets */
    struct wr w;
    inner(s, 1, &w);
    for (size_t cut = 0; cut < w.len; cut++) {
        uint8_t *copy = OPENSSL_malloc(cut > 0 ? cut : 1);
        memcpy(copy, w.buf, cut);
        assert_null(decode_bytes(copy, cut));
        assert_true(last_is_bad_session());
        OPENSSL_free(copy);
    }
    wr_free(&w);
    OPENSSL_free(der);
    SSL_SESSION_free(s);
}

static uint32_t rng_state = 0x2545f491;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/*
 * Flipped bits either land in a value field (the result decodes) or break
 * the structure (refused with the reason); never anything else.
 */
static void random_byte_flips_never_crash(void **state)
{
    SSL_SESSION *s = full_session();
    int len;
    unsigned char *der = to_der(s, &len);
    unsigned char *copy = OPENSSL_malloc((size_t)len);
    int refused = 0, decoded = 0;
    rng_state = 0x2545f491;
    for (int round = 0; round < 4000; round++) {
        memcpy(copy, der, (size_t)len);
        int flips = 1 + (int)(rng() % 4);
        for (int i = 0; i < flips; i++)
            copy[rng() % (uint32_t)len] ^= (uint8_t)(1u << (rng() % 8));
        const unsigned char *p = copy;
        SSL_SESSION *back = d2i_SSL_SESSION(NULL, &p, len);
        if (back == NULL) {
            assert_true(last_is_bad_session());
            refused++;
        } else {
            /* whatever decodes is a well-formed session: it encodes again */
            assert_true(i2d_SSL_SESSION(back, NULL) > 0);
            /* its peer decodes when asked for, or says why not */
            ERR_clear_error();
            if (SSL_SESSION_get0_peer(back) == NULL && back->peer_der_len > 0)
                assert_true(last_is_bad_session());
            SSL_SESSION_free(back);
            decoded++;
        }
    }
    assert_true(refused > 0 && decoded > 0);
    OPENSSL_free(copy);
    OPENSSL_free(der);
    SSL_SESSION_free(s);
}

/* Layout offsets of the inner encoding (see session.c): magic 0, version 2, flags 3, suite 4. */
enum { OFF_VERSION = 2, OFF_FLAGS = 3, OFF_SUITE = 4, OFF_PSK_LEN = 6 };

/* Decodes a modified copy of the inner encoding; expects refusal with the reason. */
static void expect_refused(const uint8_t *p, size_t n, const char *detail)
{
    ERR_clear_error();
    assert_null(decode_bytes(p, n));
    const char *data = NULL;
    int flags = 0;
    unsigned long e = ERR_peek_last_error_data(&data, &flags);
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), QTLS_R_BAD_SESSION);
    if (detail != NULL) {
        assert_non_null(data);
        assert_non_null(strstr(data, detail));
    }
    /* and through d2i, with the DER frame */
    uint8_t framed[4096];
    size_t fl = frame(p, n, framed, sizeof(framed));
    const unsigned char *q = framed;
    assert_null(d2i_SSL_SESSION(NULL, &q, (long)fl));
    assert_true(last_is_bad_session());
}

/* Offset of the field after the fixed part: psk vector, u64 time, timeout, u32 x2, i64. */
static size_t after_fixed(const struct wr *w) { return OFF_PSK_LEN + 1 + w->buf[OFF_PSK_LEN] + 32; }

static void malformed_fields_are_refused(void **state)
{
    SSL_SESSION *s = full_session();
    struct wr w;
    inner(s, 1, &w);
    uint8_t *m = OPENSSL_malloc(w.len + 64);

#define RESET() memcpy(m, w.buf, w.len)
    RESET();
    m[OFF_VERSION] = 1; /* the layout before the SCT list */
    expect_refused(m, w.len, "version");
    RESET();
    m[OFF_VERSION] = 3;
    expect_refused(m, w.len, "version");
    RESET();
    m[0] = 0x30; /* not our magic */
    expect_refused(m, w.len, "not a qtls session");
    RESET();
    m[OFF_FLAGS] = 0x80;
    expect_refused(m, w.len, "flags");
    RESET();
    m[OFF_SUITE] = 0x00; /* 0x0002: no such TLS 1.3 suite */
    expect_refused(m, w.len, "cipher suite");
    RESET();
    m[OFF_SUITE + 1] = 0x01; /* TLS_AES_128_GCM_SHA256 with a 48-byte PSK */
    expect_refused(m, w.len, "PSK length");
    RESET();
    m[OFF_PSK_LEN] = 0xff; /* oversize: runs past the end */
    expect_refused(m, w.len, "truncated");
    /* trailing bytes */
    RESET();
    m[w.len] = 0;
    expect_refused(m, w.len + 1, "trailing");

    /* the session ID vector: 33 bytes is too long (grow the encoding to keep it well formed) */
    size_t id_at = after_fixed(&w);
    assert_int_equal(w.buf[id_at], 32);
    memcpy(m, w.buf, id_at);
    m[id_at] = 33;
    memcpy(m + id_at + 1, w.buf + id_at + 1, 32);
    m[id_at + 33] = 0xaa;
    memcpy(m + id_at + 34, w.buf + id_at + 33, w.len - id_at - 33);
    expect_refused(m, w.len + 1, "session ID too long");

    /* a NUL in the host name */
    size_t sid_ctx_at = id_at + 1 + 32;
    size_t host_at = sid_ctx_at + 1 + w.buf[sid_ctx_at];
    assert_int_equal(w.buf[host_at] << 8 | w.buf[host_at + 1], strlen("server.example"));
    RESET();
    m[host_at + 2 + 3] = 0;
    expect_refused(m, w.len, "NUL");
    /* host name length far beyond the input */
    RESET();
    m[host_at] = 0xff;
    m[host_at + 1] = 0xff;
    expect_refused(m, w.len, "truncated");

    /* a peer certificate that is not DER */
    size_t alpn_at = host_at + 2 + strlen("server.example");
    size_t app_at = alpn_at + 1 + w.buf[alpn_at];
    size_t app_len = (size_t)w.buf[app_at] << 16 | w.buf[app_at + 1] << 8 | w.buf[app_at + 2];
    size_t ectx_at = app_at + 3 + app_len;
    size_t ectx_len = (size_t)w.buf[ectx_at] << 16 | w.buf[ectx_at + 1] << 8 | w.buf[ectx_at + 2];
    size_t peer_at = ectx_at + 3 + ectx_len;
    RESET();
    assert_int_equal(m[peer_at + 3], 0x30); /* a SEQUENCE: the certificate */
    m[peer_at + 3] = 0x31;
    expect_refused(m, w.len, "peer certificate");
    RESET();
    m[peer_at] = 0xff; /* 24-bit length beyond the input */
    expect_refused(m, w.len, "truncated");
#undef RESET

    OPENSSL_free(m);
    wr_free(&w);
    SSL_SESSION_free(s);
}

/* The DER frame: only a minimal-length OCTET STRING is accepted. */
/*
 * The stored peer certificate is kept as bytes and decoded when first asked
 * for: a well-framed SEQUENCE that is no certificate decodes as a session, and
 * SSL_SESSION_get0_peer then gives NULL with the reason, every time.
 */
static void peer_certificate_is_decoded_when_asked_for(void **state)
{
    static const uint8_t not_a_cert[] = {0x30, 0x03, 0x02, 0x01, 0x05}; /* SEQUENCE { 5 } */
    SSL_SESSION *s = full_session();
    int len;
    unsigned char *der = to_der(s, &len);
    const unsigned char *p = der;
    SSL_SESSION *good = d2i_SSL_SESSION(NULL, &p, len);
    assert_non_null(good);
    assert_null(good->peer); /* not decoded by d2i */
    X509 *leaf = SSL_SESSION_get0_peer(good);
    assert_non_null(leaf);
    assert_int_equal(X509_cmp(leaf, s->peer), 0);
    assert_ptr_equal(SSL_SESSION_get0_peer(good), leaf); /* decoded once */
    SSL_SESSION *copy = SSL_SESSION_dup(good);
    assert_non_null(copy);
    assert_ptr_equal(SSL_SESSION_get0_peer(copy), leaf);
    SSL_SESSION_free(copy);
    OPENSSL_free(der);

    X509_free(s->peer);
    s->peer = NULL;
    s->peer_der = OPENSSL_memdup(not_a_cert, sizeof(not_a_cert));
    s->peer_der_len = sizeof(not_a_cert);
    der = to_der(s, &len);
    p = der;
    SSL_SESSION *bad = d2i_SSL_SESSION(NULL, &p, len);
    assert_non_null(bad);
    for (int i = 0; i < 2; i++) {
        ERR_clear_error();
        assert_null(SSL_SESSION_get0_peer(bad));
        assert_true(last_is_bad_session());
    }
    int len2;
    unsigned char *der2 = to_der(bad, &len2); /* the bytes go on as they came */
    assert_bytes_equal(der, (size_t)len, der2, (size_t)len2);
    OPENSSL_free(der2);
    SSL_SESSION_free(bad);
    SSL_SESSION_free(good);
    OPENSSL_free(der);
    SSL_SESSION_free(s);
}

static void bad_der_frames_are_refused(void **state)
{
    SSL_SESSION *s = full_session();
    struct wr w;
    inner(s, 1, &w);
    assert_true(w.len > 0xff && w.len < 0x10000);
    uint8_t buf[4096];
    size_t n = frame(w.buf, w.len, buf, sizeof(buf));
    const unsigned char *p;

    /* an OpenSSL session is a SEQUENCE */
    buf[0] = 0x30;
    p = buf;
    assert_null(d2i_SSL_SESSION(NULL, &p, (long)n));
    assert_true(last_is_bad_session());
    buf[0] = 0x04;
    /* non-minimal length: 0x83 00 LL LL */
    uint8_t nm[4096];
    nm[0] = 0x04;
    nm[1] = 0x83;
    nm[2] = 0;
    memcpy(nm + 3, buf + 2, n - 2);
    p = nm;
    assert_null(d2i_SSL_SESSION(NULL, &p, (long)n + 1));
    assert_true(last_is_bad_session());
    /* a length of five bytes, and the indefinite form */
    nm[1] = 0x85;
    p = nm;
    assert_null(d2i_SSL_SESSION(NULL, &p, (long)n + 1));
    assert_true(last_is_bad_session());
    nm[1] = 0x80;
    p = nm;
    assert_null(d2i_SSL_SESSION(NULL, &p, (long)n + 1));
    assert_true(last_is_bad_session());
    /* a short length written in long form */
    uint8_t tiny[] = {0x04, 0x81, 0x05, 1, 2, 3, 4, 5};
    p = tiny;
    assert_null(d2i_SSL_SESSION(NULL, &p, sizeof(tiny)));
    assert_true(last_is_bad_session());
    /* a length longer than the buffer */
    buf[2] = 0xff;
    p = buf;
    assert_null(d2i_SSL_SESSION(NULL, &p, (long)n));
    assert_true(last_is_bad_session());
    /* no input at all */
    p = NULL;
    assert_null(d2i_SSL_SESSION(NULL, &p, 10));
    assert_true(last_is_bad_session());
    p = buf;
    assert_null(d2i_SSL_SESSION(NULL, &p, 0));
    assert_true(last_is_bad_session());
    assert_null(d2i_SSL_SESSION(NULL, &p, -1));
    assert_true(last_is_bad_session());
    /* a failed d2i leaves *a alone */
    SSL_SESSION *keep = SSL_SESSION_new();
    SSL_SESSION *a = keep;
    p = tiny;
    assert_null(d2i_SSL_SESSION(&a, &p, sizeof(tiny)));
    assert_ptr_equal(a, keep);
    ERR_clear_error();
    SSL_SESSION_free(keep);
    /* PEM with garbage inside */
    BIO *b = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio(b, PEM_STRING_SSL_SESSION, "", tiny, sizeof(tiny)) > 0);
    assert_null(PEM_read_bio_SSL_SESSION(b, NULL, NULL, NULL));
    assert_true(queue_has(ERR_LIB_SSL, QTLS_R_BAD_SESSION));
    BIO_free(b);
    wr_free(&w);
    SSL_SESSION_free(s);
}

/* The reason has a string, so logs read clearly. */
static void bad_session_reason_has_text(void **state)
{
    char buf[256];
    ERR_error_string_n(ERR_PACK(ERR_LIB_SSL, 0, QTLS_R_BAD_SESSION), buf, sizeof(buf));
    assert_non_null(strstr(buf, "bad session encoding"));
}

/* ------------------------------------------------------------------ */
/* Connections and contexts                                            */
/* ------------------------------------------------------------------ */

static void context_defaults_and_inheritance(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(ctx);
    assert_int_equal(SSL_CTX_get_timeout(ctx), 7200);
    assert_int_equal(SSL_CTX_get_num_tickets(ctx), 2);
    assert_int_equal(SSL_CTX_get_max_early_data(ctx), 0);
    assert_int_equal(SSL_CTX_get_recv_max_early_data(ctx), SSL3_RT_MAX_PLAIN_LENGTH);
    assert_int_equal(SSL_CTX_sess_get_cache_size(ctx), SSL_SESSION_CACHE_MAX_SIZE_DEFAULT);
    assert_int_equal(SSL_CTX_sess_set_cache_size(ctx, 10), SSL_SESSION_CACHE_MAX_SIZE_DEFAULT);
    assert_int_equal(SSL_CTX_sess_get_cache_size(ctx), 10);
    assert_int_equal(SSL_CTX_sess_number(ctx), 0);
    assert_int_equal(SSL_CTX_sess_hits(ctx), 0);

    assert_int_equal(SSL_CTX_set_timeout(ctx, 300), 7200);
    assert_int_equal(SSL_CTX_set_num_tickets(ctx, 5), 1);
    assert_int_equal(SSL_CTX_set_max_early_data(ctx, 0xffffffff), 1);
    assert_int_equal(SSL_CTX_set_recv_max_early_data(ctx, 1000), 1);
    assert_int_equal(SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"ctx-a", 5), 1);
    uint8_t big[33] = {0};
    assert_int_equal(SSL_CTX_set_session_id_context(ctx, big, 33), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG));

    SSL *c = SSL_new(ctx);
    assert_non_null(c);
    assert_int_equal(SSL_get_num_tickets(c), 5);
    assert_int_equal(SSL_get_max_early_data(c), 0xffffffff);
    assert_int_equal(SSL_get_recv_max_early_data(c), 1000);
    assert_int_equal(c->sid_ctx_len, 5);
    assert_memory_equal(c->sid_ctx, "ctx-a", 5);
    assert_int_equal(SSL_get_early_data_status(c), SSL_EARLY_DATA_NOT_SENT);
    assert_int_equal(SSL_session_reused(c), 0);
    assert_null(SSL_get_session(c));
    assert_null(SSL_get1_session(c));
    assert_int_equal(SSL_get_default_timeout(c), 7200);

    /* per-connection setters do not reach the context */
    assert_int_equal(SSL_set_num_tickets(c, 0), 1);
    assert_int_equal(SSL_get_num_tickets(c), 0);
    assert_int_equal(SSL_CTX_get_num_tickets(ctx), 5);
    assert_int_equal(SSL_set_max_early_data(c, 0), 1);
    assert_int_equal(SSL_get_max_early_data(c), 0);
    assert_int_equal(SSL_set_recv_max_early_data(c, 7), 1);
    assert_int_equal(SSL_get_recv_max_early_data(c), 7);
    assert_int_equal(SSL_set_session_id_context(c, big, 33), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG));
    assert_int_equal(SSL_set_session_id_context(c, (const unsigned char *)"conn", 4), 1);
    assert_int_equal(c->sid_ctx_len, 4);
    SSL_free(c);
    SSL_CTX_free(ctx);
}

/* OpenSSL's rule at an SNI switch: an inherited ID context follows the new context. */
static void session_id_context_follows_a_context_switch(void **state)
{
    SSL_CTX *a = SSL_CTX_new(TLS_server_method());
    SSL_CTX *b = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_set_session_id_context(a, (const unsigned char *)"vhost-a", 7), 1);
    assert_int_equal(SSL_CTX_set_session_id_context(b, (const unsigned char *)"vhost-b", 7), 1);
    SSL *c = SSL_new(a);
    assert_ptr_equal(SSL_set_SSL_CTX(c, b), b);
    assert_memory_equal(c->sid_ctx, "vhost-b", 7);
    SSL_free(c);
    /* one set on the connection stays */
    c = SSL_new(a);
    assert_int_equal(SSL_set_session_id_context(c, (const unsigned char *)"own", 3), 1);
    assert_ptr_equal(SSL_set_SSL_CTX(c, b), b);
    assert_int_equal(c->sid_ctx_len, 3);
    assert_memory_equal(c->sid_ctx, "own", 3);
    SSL_free(c);
    SSL_CTX_free(a);
    SSL_CTX_free(b);
}

static int dummy_new_cb(SSL *s, SSL_SESSION *sess) { return 0; }
static void dummy_remove_cb(SSL_CTX *ctx, SSL_SESSION *sess) {}
static SSL_SESSION *dummy_get_cb(SSL *s, const unsigned char *id, int len, int *copy)
{
    return NULL;
}
static int dummy_gen(SSL *s, void *arg) { return 1; }
static SSL_TICKET_RETURN dummy_dec(SSL *s, SSL_SESSION *ss, const unsigned char *name,
                                   size_t name_len, SSL_TICKET_STATUS st, void *arg)
{
    return SSL_TICKET_RETURN_USE;
}
static int dummy_allow(SSL *s, void *arg) { return 1; }
static int dummy_allow2(SSL *s, void *arg) { return 0; }
static int dummy_client_cert(SSL *s, X509 **x, EVP_PKEY **k) { return 0; }
static int dummy_key_cb(SSL *s, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cc,
                        EVP_MAC_CTX *hc, int enc)
{
    return 0;
}
static int dummy_hmac_key_cb(SSL *s, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cc,
                             HMAC_CTX *hc, int enc)
{
    return 0;
}

static void callbacks_are_stored(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL_CTX_sess_set_new_cb(ctx, dummy_new_cb);
    assert_ptr_equal(SSL_CTX_sess_get_new_cb(ctx), dummy_new_cb);
    SSL_CTX_sess_set_remove_cb(ctx, dummy_remove_cb);
    assert_ptr_equal(SSL_CTX_sess_get_remove_cb(ctx), dummy_remove_cb);
    SSL_CTX_sess_set_get_cb(ctx, dummy_get_cb);
    assert_ptr_equal(SSL_CTX_sess_get_get_cb(ctx), dummy_get_cb);
    assert_int_equal(SSL_CTX_set_session_ticket_cb(ctx, dummy_gen, dummy_dec, ctx), 1);
    assert_ptr_equal(ctx->ticket_gen_cb, dummy_gen);
    assert_ptr_equal(ctx->ticket_dec_cb, dummy_dec);
    assert_ptr_equal(ctx->ticket_cb_arg, ctx);
    SSL_CTX_set_client_cert_cb(ctx, dummy_client_cert);
    assert_ptr_equal(SSL_CTX_get_client_cert_cb(ctx), dummy_client_cert);
    assert_int_equal(SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, dummy_key_cb), 1);
    assert_ptr_equal(ctx->ticket_key_evp_cb, dummy_key_cb);
    /* the deprecated HMAC_CTX form is refused with a reason */
    assert_int_equal(SSL_CTX_set_tlsext_ticket_key_cb(ctx, dummy_hmac_key_cb), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_GET_REASON(ERR_R_UNSUPPORTED)));
    SSL_CTX_set_allow_early_data_cb(ctx, dummy_allow, ctx);
    SSL *c = SSL_new(ctx);
    assert_ptr_equal(c->allow_early_data_cb, dummy_allow);
    assert_ptr_equal(c->allow_early_data_arg, ctx);
    SSL_set_allow_early_data_cb(c, dummy_allow2, c);
    assert_ptr_equal(c->allow_early_data_cb, dummy_allow2);
    assert_ptr_equal(ctx->allow_early_data_cb, dummy_allow);
    /* no internal cache: the cache calls answer as for an empty one */
    SSL_SESSION *s = SSL_SESSION_new();
    assert_int_equal(SSL_CTX_add_session(ctx, s), 0);
    assert_int_equal(SSL_CTX_remove_session(ctx, s), 0);
    SSL_CTX_flush_sessions(ctx, 0);
    assert_null(SSL_CTX_sessions(ctx));
    assert_int_equal(s->references, 1);
    SSL_SESSION_free(s);
    SSL_free(c);
    SSL_CTX_free(ctx);
}

static void set_session_and_get1_count_references(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *c = SSL_new(ctx);
    SSL_SESSION *s = full_session();
    assert_int_equal(SSL_set_session(c, s), 1);
    assert_int_equal(s->references, 2);
    assert_ptr_equal(SSL_get_session(c), s);
    assert_int_equal(s->references, 2); /* get0: no reference */
    assert_int_equal(SSL_get_verify_result(c), X509_V_ERR_CERT_HAS_EXPIRED); /* as OpenSSL */
    SSL_SESSION *g = SSL_get1_session(c);
    assert_ptr_equal(g, s);
    assert_int_equal(s->references, 3);
    SSL_SESSION_free(g);
    /* replacing drops the old reference */
    SSL_SESSION *t = full_session();
    assert_int_equal(SSL_set_session(c, t), 1);
    assert_int_equal(s->references, 1);
    assert_int_equal(t->references, 2);
    assert_int_equal(SSL_set_session(c, NULL), 1);
    assert_null(SSL_get_session(c));
    assert_int_equal(t->references, 1);
    /* SSL_free drops the connection's reference */
    assert_int_equal(SSL_set_session(c, t), 1);
    assert_int_equal(t->references, 2);
    SSL_free(c);
    assert_int_equal(t->references, 1);
    /* during the handshake the offered session cannot change under the binder */
    c = SSL_new(ctx);
    c->phase = PHASE_HANDSHAKE;
    assert_int_equal(SSL_set_session(c, s), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_GET_REASON(ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED)));
    assert_int_equal(s->references, 1);
    c->phase = PHASE_BEFORE;
    SSL_free(c);
    SSL_SESSION_free(s);
    SSL_SESSION_free(t);
    SSL_CTX_free(ctx);
}

/* What the handshake gets from session_new_from_conn before it adds the PSK and ticket. */
static void session_from_connection_outcome(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_set_max_early_data(ctx, 0xffffffff), 1);
    assert_int_equal(SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"sid", 3), 1);
    SSL *c = SSL_new(ctx);
    c->cipher = suite_by_tls_id(0x1303);
    c->hostname = OPENSSL_strdup("server.example");
    assert_true(sbuf_set(&c->alpn_selected, (const uint8_t *)"h3", 2));
    c->peer_cert = load_cert("client.pem");
    c->verify_result = X509_V_OK;
    /* Bracketed by the library's own clock: time() reads the coarse clock, which lags
     * clock_gettime's seconds for a few ms after each second boundary (src/clock.c), so
     * "s->time <= time(NULL)" failed about once in 200 runs. */
    uint64_t before = clock_now_seconds();
    SSL_SESSION *s = session_new_from_conn(c);
    uint64_t after = clock_now_seconds();
    assert_non_null(s);
    assert_ptr_equal(s->cipher, c->cipher);
    assert_string_equal(s->hostname, "server.example");
    assert_ptr_not_equal(s->hostname, c->hostname);
    assert_bytes_equal(s->alpn, s->alpn_len, "h3", 2);
    assert_bytes_equal(s->sid_ctx, s->sid_ctx_len, "sid", 3);
    assert_ptr_equal(s->peer, c->peer_cert); /* a reference */
    assert_int_equal(s->verify_result, X509_V_OK);
    assert_int_equal(s->max_early_data, 0xffffffff);
    assert_true(s->timeout == 7200);
    assert_true(s->time >= before && s->time <= after);
    assert_int_equal(s->psk.len, 0);
    assert_null(s->ticket);
    SSL_SESSION_free(s);
    /* lifetimes: 0 means the default; more than 7 days is not allowed (RFC 8446 §4.6.1) */
    long old = SSL_CTX_set_timeout(ctx, 0);
    assert_int_equal(old, 7200);
    s = session_new_from_conn(c);
    assert_true(s->timeout == 7200);
    SSL_SESSION_free(s);
    old = SSL_CTX_set_timeout(ctx, 30L * 86400);
    s = session_new_from_conn(c);
    assert_true(s->timeout == 604800);
    SSL_SESSION_free(s);
    old = SSL_CTX_set_timeout(ctx, 1);
    s = session_new_from_conn(c);
    assert_true(s->timeout == 1);
    SSL_SESSION_free(s);
    (void)old;
    SSL_free(c); /* frees hostname and peer_cert */
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(new_session_has_openssl_defaults, clear_errors),
        cmocka_unit_test_setup(setters_follow_openssl, clear_errors),
        cmocka_unit_test_setup(master_key_is_the_resumption_psk, clear_errors),
        cmocka_unit_test_setup(resumable_needs_ticket_cipher_and_no_veto, clear_errors),
        cmocka_unit_test_setup(ticket_appdata_set_get_clear, clear_errors),
        cmocka_unit_test_setup(ex_data_and_dup, clear_errors),
        cmocka_unit_test_setup(i2d_d2i_round_trip_keeps_every_field, clear_errors),
        cmocka_unit_test_setup(round_trip_of_a_bare_session, clear_errors),
        cmocka_unit_test_setup(i2d_follows_openssl_conventions, clear_errors),
        cmocka_unit_test_setup(i2d_refuses_incomplete_sessions, clear_errors),
        cmocka_unit_test_setup(ticket_plaintext_leaves_the_ticket_out, clear_errors),
        cmocka_unit_test_setup(pem_write_and_read_back, clear_errors),
        cmocka_unit_test_setup(der_bio_forms_work, clear_errors),
        cmocka_unit_test_setup(every_truncation_is_refused, clear_errors),
        cmocka_unit_test_setup(random_byte_flips_never_crash, clear_errors),
        cmocka_unit_test_setup(malformed_fields_are_refused, clear_errors),
        cmocka_unit_test_setup(peer_certificate_is_decoded_when_asked_for, clear_errors),
        cmocka_unit_test_setup(bad_der_frames_are_refused, clear_errors),
        cmocka_unit_test_setup(bad_session_reason_has_text, clear_errors),
        cmocka_unit_test_setup(context_defaults_and_inheritance, clear_errors),
        cmocka_unit_test_setup(session_id_context_follows_a_context_switch, clear_errors),
        cmocka_unit_test_setup(callbacks_are_stored, clear_errors),
        cmocka_unit_test_setup(set_session_and_get1_count_references, clear_errors),
        cmocka_unit_test_setup(session_from_connection_outcome, clear_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
