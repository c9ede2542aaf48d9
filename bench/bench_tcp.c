/*
 * (T) TLS 1.3 over TCP through libssl's I/O API, built twice from this one source:
 * bench_tcp_openssl with the system's libssl, bench_tcp_qtls with libqtls.a in its place (the
 * drop-in: the same calls, nothing else changed; -DBENCH_QTLS only names the program and says
 * how many tickets a resumption brings, DEFAULT_TICKETS_RESUMED), as tests/tcp/tls_peer.c is.
 * Both sides run in one thread over a BIO pair (BIO_new_bio_pair, 17 KB each way, so one full
 * record and its header fit), each driven in turn with SSL_do_handshake, as bench_openssl.c
 * does for row A.
 *
 * The configuration is the QUIC rows' (TLS 1.3, TLS_AES_128_GCM_SHA256, X25519, ECDSA+SHA256,
 * the same certificate, the client verifies the chain and the host name localhost and sends SNI
 * localhost), without what only QUIC has (transport parameters) and without ALPN; middlebox
 * compatibility stays at each library's default (on). The scenarios (-s):
 *
 *   full         tickets off on both sides (SSL_OP_NO_TICKET, num_tickets 0), as the QUIC rows.
 *   resume       tickets on at each library's default (num_tickets 2; both send 1 after a
 *                resumed handshake, see DEFAULT_TICKETS_RESUMED), stateless
 *                (server session cache off); psk_dhe_ke. The client restores its last stored
 *                ticket (d2i_SSL_SESSION + SSL_set_session) and stores each new one from its
 *                new-session callback (i2d_SSL_SESSION), as the QUIC resume row does; one
 *                handshake includes the client reading the tickets (one SSL_read, which ends
 *                in want-read). The first call, with nothing stored, is a full handshake.
 *   resume1      the same with num_tickets 1 on the server: one ticket per handshake on both.
 *   bulk-aes128, bulk-aes256, bulk-chacha
 *                one connection with that suite (tickets off) made by scenario(); then one
 *                "handshake" of bench_common's driver is one record: the client's SSL_write of
 *                16384 bytes (one record, sealed) and the server's SSL_read into a 16 KB buffer
 *                (opened). The driver's µs per handshake is µs per record.
 *
 * Every handshake checks: TLS 1.3 and the suite on both sides, X25519 on both, on a full
 * handshake the peer's signature (ECDSA with SHA-256), the verify result, SNI on the server,
 * SSL_session_reused on both as expected, and with tickets off nothing sent after the
 * handshake (no NewSessionTicket). The self-test (-t) adds the wrong host name and wrong trust
 * anchor cases.
 *
 * Heap (-m): an idle established connection after the handshake (tickets on, the default 2),
 * one small exchange (4 bytes each way; the client's SSL_read takes both tickets first), with
 * SSL_MODE_RELEASE_BUFFERS when BENCH_RELEASE_BUFFERS=1 (the name gets "+release_buffers").
 * The BIO pair, the transport, is freed before the reading, as bench_openssl.c does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "bench_common.h"

#ifdef BENCH_QTLS
#define LIB "qtls-tcp"
#else
#define LIB "openssl-tcp"
#endif

/*
 * Tickets a server sends at its default (num_tickets 2): both libraries send them after a full
 * handshake but only one after a resumed one (SSL_CTX_set_num_tickets(3); qtls since stop 26).
 * Checked every handshake.
 */
#define DEFAULT_TICKETS_RESUMED 1

#define PAIR_BUF (17 * 1024) /* each way: a 2^14-byte record sealed is 5 + 16384 + 1 + 16 bytes */
#define RECORD 16384         /* the bulk rows' SSL_write and SSL_read size */

struct tpair {
    SSL *c, *s;
};

static SSL_CTX *cctx, *cctx_wrong_ca, *sctx; /* full: tickets off */
static SSL_CTX *cctx_t, *sctx_t;             /* resume and heap: tickets on, the default 2 */
static SSL_CTX *cctx_b, *sctx_b;             /* bulk: the scenario's suite, tickets off */
static enum { FULL, RESUME, BULK } scen;
static int one_ticket; /* -s resume1: num_tickets 1 on the server, the same work on both */
static unsigned long suite_id = 0x03001301; /* TLS_AES_128_GCM_SHA256 */
static int release_buffers;
static const char *certdir;

/* The client's session store ("on disk": the last ticket as i2d_SSL_SESSION wrote it). */
static uint8_t stored[4096];
static size_t stored_len;
static int got_ticket;
static struct tpair one;
/* bulk: the established connection and the record's bytes */
static struct tpair bulk;
static uint8_t wbuf[RECORD], rbuf[RECORD];
static unsigned long records;

static int common_ctx(SSL_CTX *ctx, const char *suite)
{
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (release_buffers)
        SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    /* qtls ignores the sigalgs list (its fixed TLS 1.3 list); a P-256 key signs only with
     * ecdsa_secp256r1_sha256 in TLS 1.3, so the scheme is the same anyway. */
    return SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_ciphersuites(ctx, suite) == 1 &&
           SSL_CTX_set1_groups_list(ctx, "X25519") == 1 &&
           SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256") == 1;
}

static SSL_CTX *client_ctx(const char *anchor, const char *suite)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || !common_ctx(ctx, suite) ||
        SSL_CTX_load_verify_locations(ctx, anchor, NULL) != 1) {
        bench_fail("client context (%s)", anchor);
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

static SSL_CTX *server_ctx(const char *suite)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || !common_ctx(ctx, suite) ||
        SSL_CTX_use_certificate_chain_file(ctx, bench_path(certdir, "cert.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, bench_path(certdir, "key.pem"), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_set_num_tickets(ctx, 0) != 1) {
        bench_fail("server context");
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* The client stores every ticket it gets, as a client keeping sessions on disk does. */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
    unsigned char *p = stored;
    int len = i2d_SSL_SESSION(sess, NULL);
    if (len > 0 && (size_t)len <= sizeof(stored) && i2d_SSL_SESSION(sess, &p) == len) {
        stored_len = (size_t)len;
        got_ticket++;
    }
    return 0; /* the reference stays with the caller */
}

/* Tickets on, each library's default count (2 for both; checked), stateless, no server cache. */
static int ticket_ctxs(void)
{
    const char *suite = "TLS_AES_128_GCM_SHA256";
    cctx_t = client_ctx(bench_path(certdir, "cert.pem"), suite);
    if (cctx_t == NULL || (sctx_t = SSL_CTX_new(TLS_server_method())) == NULL ||
        !common_ctx(sctx_t, suite) ||
        SSL_CTX_use_certificate_chain_file(sctx_t, bench_path(certdir, "cert.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(sctx_t, bench_path(certdir, "key.pem"), SSL_FILETYPE_PEM) != 1) {
        bench_fail("ticket contexts");
        return 0;
    }
    SSL_CTX_clear_options(cctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_clear_options(sctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(cctx_t, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(cctx_t, new_session);
    if (SSL_CTX_get_num_tickets(sctx_t) != 2) {
        bench_fail("the server's default ticket count is %zu, not 2",
                   (size_t)SSL_CTX_get_num_tickets(sctx_t));
        return 0;
    }
    return 1;
}

static int init(const char *dir)
{
    const char *rb = getenv("BENCH_RELEASE_BUFFERS");
    release_buffers = rb != NULL && strcmp(rb, "1") == 0;
    certdir = dir;
    cctx = client_ctx(bench_path(dir, "cert.pem"), "TLS_AES_128_GCM_SHA256");
    cctx_wrong_ca = client_ctx(bench_path(dir, "other.pem"), "TLS_AES_128_GCM_SHA256");
    sctx = server_ctx("TLS_AES_128_GCM_SHA256");
    return cctx != NULL && cctx_wrong_ca != NULL && sctx != NULL && ticket_ctxs();
}

static void pair_free(struct tpair *p)
{
    SSL_free(p->c);
    SSL_free(p->s);
    p->c = p->s = NULL;
}

static void fini(void)
{
    pair_free(&bulk);
    SSL_CTX_free(cctx);
    SSL_CTX_free(cctx_wrong_ca);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx_t);
    SSL_CTX_free(sctx_t);
    SSL_CTX_free(cctx_b);
    SSL_CTX_free(sctx_b);
}

static int pair_new(struct tpair *p, SSL_CTX *client_ctx_, SSL_CTX *server_ctx_, const char *host)
{
    BIO *bc = NULL, *bs = NULL;
    p->c = SSL_new(client_ctx_);
    p->s = SSL_new(server_ctx_);
    if (p->c == NULL || p->s == NULL || BIO_new_bio_pair(&bc, PAIR_BUF, &bs, PAIR_BUF) != 1)
        return 0;
    SSL_set_bio(p->c, bc, bc);
    SSL_set_bio(p->s, bs, bs);
    SSL_set_connect_state(p->c);
    SSL_set_accept_state(p->s);
    return SSL_set_tlsext_host_name(p->c, BENCH_HOST) == 1 && SSL_set1_host(p->c, host) == 1;
}

/* 1 done, 0 wants more, -1 failed. */
static int step(SSL *ssl)
{
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    int e = SSL_get_error(ssl, r);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* Both sides in turn until both are done (the server has processed the client Finished). */
static int run(struct tpair *p)
{
    int c = 0, s = 0;
    for (int round = 0; round < 8; round++) {
        if (!c && (c = step(p->c)) < 0)
            return 0;
        if (!s && (s = step(p->s)) < 0)
            return 0;
        if (c && s)
            return 1;
    }
    return 0;
}

static int check(struct tpair *p, int resumed)
{
    SSL *c = p->c, *s = p->s;
    const SSL_CIPHER *cc = SSL_get_current_cipher(c), *sc = SSL_get_current_cipher(s);
    const char *sni = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    int sig_type = 0, sig_md = 0, ok = 1;
#define CHECK(cond)                     \
    if (!(cond)) {                      \
        bench_fail("check: %s", #cond); \
        ok = 0;                         \
    }
    CHECK(SSL_version(c) == TLS1_3_VERSION && SSL_version(s) == TLS1_3_VERSION);
    CHECK(cc != NULL && SSL_CIPHER_get_id(cc) == suite_id);
    CHECK(sc != NULL && SSL_CIPHER_get_id(sc) == suite_id);
    CHECK(SSL_get_negotiated_group(c) == NID_X25519);
    CHECK(SSL_get_negotiated_group(s) == NID_X25519);
    CHECK(SSL_session_reused(c) == resumed && SSL_session_reused(s) == resumed);
    /* A resumed handshake has no CertificateVerify, so no signature. */
    CHECK(resumed || (SSL_get_peer_signature_type_nid(c, &sig_type) == 1 && sig_type == EVP_PKEY_EC));
    CHECK(resumed || (SSL_get_peer_signature_nid(c, &sig_md) == 1 && sig_md == NID_sha256));
    CHECK(SSL_get_verify_result(c) == X509_V_OK);
    CHECK(sni != NULL && strcmp(sni, BENCH_HOST) == 0);
#undef CHECK
    return ok;
}

/* A failure with the library's reason, from its error queue. */
static void fail_err(const char *what)
{
    char err[256] = "";
    ERR_error_string_n(ERR_peek_error(), err, sizeof(err));
    bench_fail("%s: %s", what, err);
    ERR_clear_error();
}

/* A full handshake with tickets off: nothing may follow towards the client. */
static int handshake_full(void)
{
    int ok = pair_new(&one, cctx, sctx, BENCH_HOST) && run(&one);
    if (!ok)
        fail_err("handshake did not complete");
    ok = ok && check(&one, 0);
    if (ok && BIO_ctrl_pending(SSL_get_rbio(one.c)) != 0) {
        bench_fail("%zu bytes after the handshake (a NewSessionTicket?)",
                   (size_t)BIO_ctrl_pending(SSL_get_rbio(one.c)));
        ok = 0;
    }
    pair_free(&one);
    return ok;
}

/*
 * -s resume: the client restores the last stored ticket, psk_dhe_ke, the server issues its
 * default 2 tickets, the client reads them (one SSL_read ending in want-read) and stores each.
 */
static int handshake_resumed(void)
{
    SSL_SESSION *sess = NULL;
    int resumed = stored_len > 0;
    if (resumed) {
        const unsigned char *der = stored;
        sess = d2i_SSL_SESSION(NULL, &der, (long)stored_len);
    }
    got_ticket = 0;
    int ok = (sess != NULL || !resumed) && pair_new(&one, cctx_t, sctx_t, BENCH_HOST) &&
             (sess == NULL || SSL_set_session(one.c, sess) == 1);
    SSL_SESSION_free(sess);
    unsigned char byte;
    int r = 0;
    ok = ok && run(&one) && (r = SSL_read(one.c, &byte, 1)) <= 0 &&
         SSL_get_error(one.c, r) == SSL_ERROR_WANT_READ;
    if (!ok)
        fail_err("resumed handshake did not complete");
    ok = ok && check(&one, resumed);
    int want = one_ticket ? 1 : resumed ? DEFAULT_TICKETS_RESUMED : 2;
    if (ok && got_ticket != want) {
        bench_fail("tickets %d, not %d", got_ticket, want);
        ok = 0;
    }
    pair_free(&one);
    return ok;
}

/* -s bulk-*: one 16 KB record, sealed by the client, opened by the server. */
static int handshake_record(void)
{
    size_t got = 0;
    memcpy(wbuf, &records, sizeof(records)); /* each record is told apart */
    int w = SSL_write(bulk.c, wbuf, RECORD);
    if (w != RECORD) {
        fail_err("SSL_write");
        return 0;
    }
    while (got < RECORD) { /* one record: one SSL_read gives it all; loop for safety */
        int r = SSL_read(bulk.s, rbuf + got, (int)(RECORD - got));
        if (r <= 0) {
            fail_err("SSL_read");
            return 0;
        }
        got += (size_t)r;
    }
    /* The whole content is compared on the first records (self-test, warm-up), the record's
       number on every one: a copy of 16 KB per record would weigh on the figure. */
    if (records < 4 ? memcmp(rbuf, wbuf, RECORD) != 0 : memcmp(rbuf, wbuf, sizeof(records)) != 0) {
        bench_fail("record %lu: the bytes read are not those written", records);
        return 0;
    }
    records++;
    return 1;
}

static int handshake(void)
{
    switch (scen) {
    case RESUME:
        return handshake_resumed();
    case BULK:
        return handshake_record();
    default:
        return handshake_full();
    }
}

static int handshake_neg(enum bench_neg neg)
{
    int ok = pair_new(&one, neg == BENCH_WRONG_CA ? cctx_wrong_ca : cctx, sctx,
                      neg == BENCH_WRONG_HOST ? "wrong.example" : BENCH_HOST) &&
             run(&one);
    if (!ok)
        bench_fail("verify result %ld (%s)", SSL_get_verify_result(one.c),
                   X509_verify_cert_error_string(SSL_get_verify_result(one.c)));
    pair_free(&one);
    ERR_clear_error();
    return ok;
}

static int scenario(const char *name)
{
    static const struct {
        const char *name, *suite;
        unsigned long id;
    } bulks[] = {
        {"bulk-aes128", "TLS_AES_128_GCM_SHA256", 0x03001301},
        {"bulk-aes256", "TLS_AES_256_GCM_SHA384", 0x03001302},
        {"bulk-chacha", "TLS_CHACHA20_POLY1305_SHA256", 0x03001303},
    };
    if (strcmp(name, "resume") == 0 || strcmp(name, "resume1") == 0) {
        scen = RESUME;
        one_ticket = name[6] == '1';
        return !one_ticket || SSL_CTX_set_num_tickets(sctx_t, 1) == 1;
    }
    for (size_t i = 0; i < sizeof(bulks) / sizeof(bulks[0]); i++) {
        if (strcmp(name, bulks[i].name) != 0)
            continue;
        scen = BULK;
        suite_id = bulks[i].id;
        cctx_b = client_ctx(bench_path(certdir, "cert.pem"), bulks[i].suite);
        sctx_b = server_ctx(bulks[i].suite);
        for (size_t k = 0; k < sizeof(wbuf); k++)
            wbuf[k] = (uint8_t)(k * 131 + 7);
        int ok = cctx_b != NULL && sctx_b != NULL && pair_new(&bulk, cctx_b, sctx_b, BENCH_HOST) &&
                 run(&bulk);
        if (!ok)
            fail_err("bulk connection");
        return ok && check(&bulk, 0);
    }
    return 0;
}

/* Heap mode: the idle connection of the file comment; only the two SSL objects are kept. */
static int pair_establish(void *v);

/*
 * The first call also makes and frees one idle connection before the heap readings begin, so
 * that what a context makes once, with the first ticket (qtls: its ticket keys, about 5 KB),
 * is not counted as held or leaked by the measured pairs.
 */
static void *pair_alloc(void)
{
    static int primed;
    if (!primed) {
        struct tpair t = {NULL, NULL};
        primed = 1;
        if (!pair_establish(&t))
            return NULL;
        pair_free(&t);
    }
    return calloc(1, sizeof(struct tpair));
}

static int pair_establish(void *v)
{
    struct tpair *p = v;
    uint8_t buf[16];
    got_ticket = 0;
    int ok = pair_new(p, cctx_t, sctx_t, BENCH_HOST) && run(p) && check(p, 0) &&
             SSL_write(p->c, "ping", 4) == 4 && SSL_read(p->s, buf, sizeof(buf)) == 4 &&
             SSL_write(p->s, "pong", 4) == 4 && SSL_read(p->c, buf, sizeof(buf)) == 4 &&
             memcmp(buf, "pong", 4) == 0;
    if (!ok)
        fail_err("idle connection");
    if (ok && got_ticket != 2) {
        bench_fail("tickets %d, not 2", got_ticket);
        ok = 0;
    }
    /* Only TLS state is counted: the BIO pair (the "transport") goes. */
    SSL_set_bio(p->c, NULL, NULL);
    SSL_set_bio(p->s, NULL, NULL);
    return ok;
}

static void pair_free_client(void *v)
{
    struct tpair *p = v;
    SSL_free(p->c);
    p->c = NULL;
}

static void pair_free_server(void *v)
{
    struct tpair *p = v;
    SSL_free(p->s);
    p->s = NULL;
}

int main(int argc, char **argv)
{
    const char *rb = getenv("BENCH_RELEASE_BUFFERS");
    static struct bench_lib lib = {
        .name = LIB,
        .init = init,
        .handshake = handshake,
        .handshake_neg = handshake_neg,
        .pair_alloc = pair_alloc,
        .pair_establish = pair_establish,
        .pair_free_client = pair_free_client,
        .pair_free_server = pair_free_server,
        .pair_release = free,
        .scenario = scenario,
        .threads = 0, /* one session store and one bulk connection per process */
        .fini = fini,
    };
    if (rb != NULL && strcmp(rb, "1") == 0)
        lib.name = LIB "+release_buffers";
    return bench_main(argc, argv, &lib);
}
