/*
 * (Q) qtls through SSL_QUIC_METHOD: handshake bytes move per encryption level
 * in memory, as CRYPTO frames would, all queued bytes of a level in one
 * SSL_provide_quic_data call. The set_encryption_secrets callback copies the
 * secrets (as the GnuTLS benchmark's secret hook does); no packet protection
 * keys are derived, on either QUIC benchmark. Linked with libqtls.a and
 * libcrypto only, never libssl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h> /* include/compat: the system header plus qtls/quic.h */
#include <openssl/x509.h>

#include "bench_common.h"

#define NLEVELS 4
#define OUTMAX 4096 /* per level: the server's handshake flight is about 700 bytes */

struct qside {
    SSL *ssl;
    uint8_t out[NLEVELS][OUTMAX];
    size_t out_len[NLEVELS];
    uint8_t read_secret[NLEVELS][48], write_secret[NLEVELS][48];
    int alerts, last_alert, overflow;
};

struct qpair {
    struct qside c, s;
    int client_hellos; /* 2 after a HelloRetryRequest */
    size_t c_initial, s_initial; /* bytes each side wrote at the initial level */
};

static SSL_CTX *cctx, *cctx_wrong_ca, *sctx;
/* -s resume / early: contexts with one ticket per handshake; -s hrr: a client keying P-256 first */
static SSL_CTX *cctx_t, *sctx_t, *cctx_hrr;
static enum { FULL, RESUME, EARLY, HRR, COLD } scen;
/* -s pq: X25519MLKEM768 on both sides; -s pq2: the client also sends an X25519 share, as
 * OpenSSL 3.5's and qtls's defaults do. Full handshakes otherwise. */
static int want_group = NID_X25519;
static const char *scen_name = "full";
/*
 * Per thread (-T: threads share the contexts above, never a connection): the client's
 * session store ("on disk", the last ticket as i2d_SSL_SESSION wrote it) and the one
 * transport that every handshake of the thread reuses.
 */
static _Thread_local uint8_t stored[4096];
static _Thread_local size_t stored_len;
static _Thread_local int got_ticket;
static _Thread_local struct qpair one;
/* -s cold: the fresh client context of the next handshake, and whether it was used. */
static SSL_CTX *cold_cctx;
static int cold_used;

static int set_secrets(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *rs,
                       const uint8_t *ws, size_t len)
{
    struct qside *q = SSL_get_app_data(ssl);
    if (len > sizeof(q->read_secret[0]))
        return 0;
    if (rs != NULL)
        memcpy(q->read_secret[level], rs, len);
    if (ws != NULL)
        memcpy(q->write_secret[level], ws, len);
    return 1;
}

static int add_handshake_data(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                              size_t len)
{
    struct qside *q = SSL_get_app_data(ssl);
    if (len > OUTMAX - q->out_len[level]) {
        q->overflow = 1;
        return 0;
    }
    memcpy(q->out[level] + q->out_len[level], data, len);
    q->out_len[level] += len;
    return 1;
}

static int flush_flight(SSL *ssl) { return 1; }

static int send_alert(SSL *ssl, enum ssl_encryption_level_t level, uint8_t alert)
{
    struct qside *q = SSL_get_app_data(ssl);
    q->alerts++;
    q->last_alert = alert;
    return 1;
}

static const SSL_QUIC_METHOD quic_method = {set_secrets, add_handshake_data, flush_flight,
                                            send_alert};

static const unsigned char alpn_h3[] = {2, 'h', '3'};

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    if (SSL_select_next_proto((unsigned char **)out, outlen, alpn_h3, sizeof(alpn_h3), in,
                              inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    return SSL_TLSEXT_ERR_OK;
}

/* What both sides share: TLS 1.3, one suite, one group, one scheme, no tickets, no cache. */
static int common_ctx(SSL_CTX *ctx)
{
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    /* qtls ignores the sigalgs list (a fixed TLS 1.3 list); a P-256 key signs only
     * with ecdsa_secp256r1_sha256 in TLS 1.3, so the scheme is the same anyway. */
    return SSL_CTX_set_quic_method(ctx, &quic_method) &&
           SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") == 1 &&
           SSL_CTX_set1_groups_list(ctx, "X25519") == 1 &&
           SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256") == 1;
}

/* A client context trusting the certificate in the file anchor, or (anchor NULL) the store. */
static SSL_CTX *client_ctx_with(const char *anchor, X509_STORE *store)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || !common_ctx(ctx) ||
        SSL_CTX_set_alpn_protos(ctx, alpn_h3, sizeof(alpn_h3)) != 0 ||
        (anchor != NULL && SSL_CTX_load_verify_locations(ctx, anchor, NULL) != 1)) {
        bench_fail("client context (%s)", anchor != NULL ? anchor : "shared store");
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (anchor == NULL)
        SSL_CTX_set1_cert_store(ctx, store);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

static SSL_CTX *client_ctx(const char *anchor) { return client_ctx_with(anchor, NULL); }

static SSL_CTX *server_ctx(const char *dir)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || !common_ctx(ctx) ||
        SSL_CTX_use_certificate_chain_file(ctx, bench_path(dir, "cert.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, bench_path(dir, "key.pem"), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_set_num_tickets(ctx, 0) != 1) {
        bench_fail("server context");
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    return ctx;
}

static const char *certdir;

static int init(const char *dir)
{
    certdir = dir;
    cctx = client_ctx(bench_path(dir, "cert.pem"));
    cctx_wrong_ca = client_ctx(bench_path(dir, "other.pem"));
    sctx = server_ctx(dir);
    return cctx != NULL && cctx_wrong_ca != NULL && sctx != NULL;
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

/*
 * -s cold, first contact: a new client context per handshake, configured as cctx and
 * sharing its trust store (loaded once, as a client's is), so the handshake starts with
 * an empty certificate decode cache and no session. The server context stays: every
 * client is new to a server anyway, and this one sends no tickets.
 */
static int cold_prepare(void)
{
    SSL_CTX_free(cold_cctx); /* the last handshake's, freed outside the measurement */
    cold_cctx = client_ctx_with(NULL, SSL_CTX_get_cert_store(cctx));
    cold_used = 0;
    return cold_cctx != NULL;
}

static int scenario(const char *name)
{
    scen_name = name;
    if (strcmp(name, "pq") == 0 || strcmp(name, "pq2") == 0) {
        const char *client = name[2] == '2' ? "X25519MLKEM768:X25519" : "X25519MLKEM768";
        want_group = TLSEXT_nid_unknown | 0x11ec;
        return SSL_CTX_set1_groups_list(cctx, client) == 1 &&
               SSL_CTX_set1_groups_list(sctx, "X25519MLKEM768:X25519") == 1;
    }
    if (strcmp(name, "cold") == 0) {
        scen = COLD;
        bench_set_prepare(cold_prepare);
        return 1;
    }
    if (strcmp(name, "hrr") == 0) {
        /* The client's first key share is P-256, which the server (X25519 only) does not take. */
        scen = HRR;
        cctx_hrr = client_ctx(bench_path(certdir, "cert.pem"));
        return cctx_hrr != NULL && SSL_CTX_set1_groups_list(cctx_hrr, "P-256:X25519") == 1;
    }
    if (strcmp(name, "resume") != 0 && strcmp(name, "early") != 0)
        return 0;
    scen = name[0] == 'r' ? RESUME : EARLY;
    cctx_t = client_ctx(bench_path(certdir, "cert.pem"));
    sctx_t = server_ctx(certdir);
    if (cctx_t == NULL || sctx_t == NULL || SSL_CTX_set_num_tickets(sctx_t, 1) != 1)
        return 0;
    SSL_CTX_clear_options(cctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_clear_options(sctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(cctx_t, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(cctx_t, new_session);
    if (scen == EARLY)
        SSL_CTX_set_max_early_data(sctx_t, UINT32_MAX);
    return 1;
}

static void fini(void)
{
    SSL_CTX_free(cctx);
    SSL_CTX_free(cctx_wrong_ca);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx_t);
    SSL_CTX_free(sctx_t);
    SSL_CTX_free(cctx_hrr);
    SSL_CTX_free(cold_cctx);
}

static void reset_side(struct qside *q)
{
    q->ssl = NULL;
    memset(q->out_len, 0, sizeof(q->out_len));
    q->alerts = q->last_alert = q->overflow = 0;
}

static int pair_new(struct qpair *p, SSL_CTX *client_ctx_, SSL_CTX *server_ctx_, const char *host)
{
    reset_side(&p->c);
    reset_side(&p->s);
    p->client_hellos = 0;
    p->c_initial = p->s_initial = 0;
    p->c.ssl = SSL_new(client_ctx_);
    p->s.ssl = SSL_new(server_ctx_);
    if (p->c.ssl == NULL || p->s.ssl == NULL)
        return 0;
    SSL_set_app_data(p->c.ssl, &p->c);
    SSL_set_app_data(p->s.ssl, &p->s);
    SSL_set_connect_state(p->c.ssl);
    SSL_set_accept_state(p->s.ssl);
    return SSL_set_quic_transport_params(p->c.ssl, bench_client_tp, BENCH_TP_LEN) &&
           SSL_set_quic_transport_params(p->s.ssl, bench_server_tp, BENCH_TP_LEN) &&
           SSL_set_tlsext_host_name(p->c.ssl, BENCH_HOST) == 1 &&
           SSL_set1_host(p->c.ssl, host) == 1;
}

/* 1 done, 0 wants more, -1 failed. */
static int step(struct qside *q)
{
    if (SSL_is_init_finished(q->ssl))
        return 1;
    int r = SSL_do_handshake(q->ssl);
    if (r == 1)
        return 1;
    return SSL_get_error(q->ssl, r) == SSL_ERROR_WANT_READ ? 0 : -1;
}

static int deliver(struct qside *from, struct qside *to)
{
    for (int l = 0; l < NLEVELS; l++) {
        if (from->out_len[l] == 0)
            continue;
        if (!SSL_provide_quic_data(to->ssl, (OSSL_ENCRYPTION_LEVEL)l, from->out[l],
                                   from->out_len[l]))
            return 0;
        from->out_len[l] = 0;
    }
    return 1;
}

static int run(struct qpair *p)
{
    for (int round = 0; round < 8; round++) {
        int c = step(&p->c);
        if (p->c.out_len[ssl_encryption_initial] > 0 && p->c.out[ssl_encryption_initial][0] == 1)
            p->client_hellos++;
        p->c_initial += p->c.out_len[ssl_encryption_initial];
        if (c < 0 || !deliver(&p->c, &p->s))
            return 0;
        int s = step(&p->s);
        if (s < 0)
            return 0;
        p->s_initial += p->s.out_len[ssl_encryption_initial];
        if (c == 1 && s == 1)
            return 1; /* anything the server wrote now would be a ticket: checked below */
        if (!deliver(&p->s, &p->c))
            return 0;
    }
    return 0;
}

static int tp_is(const SSL *ssl, const uint8_t *want)
{
    const uint8_t *tp;
    size_t len;
    SSL_get_peer_quic_transport_params(ssl, &tp, &len);
    return len == BENCH_TP_LEN && memcmp(tp, want, BENCH_TP_LEN) == 0;
}

static int alpn_is_h3(const SSL *ssl)
{
    const unsigned char *a;
    unsigned int len;
    SSL_get0_alpn_selected(ssl, &a, &len);
    return len == 2 && memcmp(a, "h3", 2) == 0;
}

static int check(struct qpair *p)
{
    SSL *c = p->c.ssl, *s = p->s.ssl;
    const SSL_CIPHER *cc = SSL_get_current_cipher(c), *sc = SSL_get_current_cipher(s);
    const char *sni = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    int ok = 1;
#define CHECK(cond)                  \
    if (!(cond)) {                   \
        bench_fail("check: %s", #cond); \
        ok = 0;                      \
    }
    CHECK(SSL_version(c) == TLS1_3_VERSION && SSL_version(s) == TLS1_3_VERSION);
    CHECK(cc != NULL && SSL_CIPHER_get_id(cc) == 0x03001301);
    CHECK(sc != NULL && SSL_CIPHER_get_id(sc) == 0x03001301);
    CHECK(SSL_get_negotiated_group(c) == want_group);
    CHECK(SSL_get_negotiated_group(s) == want_group);
    CHECK(alpn_is_h3(c) && alpn_is_h3(s));
    CHECK(tp_is(c, bench_server_tp) && tp_is(s, bench_client_tp));
    CHECK(SSL_get_verify_result(c) == X509_V_OK);
    CHECK(sni != NULL && strcmp(sni, BENCH_HOST) == 0);
    CHECK(p->s.out_len[ssl_encryption_application] == 0); /* no NewSessionTicket */
    CHECK(p->c.alerts == 0 && p->s.alerts == 0);
    CHECK(p->client_hellos == (scen == HRR ? 2 : 1));
#undef CHECK
    /* BENCH_FLIGHT=1: the first flights' sizes, once (the ClientHello, the ServerHello). */
    static int flight_told;
    if (ok && !flight_told && getenv("BENCH_FLIGHT") != NULL) {
        printf("FLIGHT qtls/%s client_initial=%zu server_initial=%zu\n", scen_name,
               p->c_initial, p->s_initial);
        flight_told = 1;
    }
    return ok;
}

static void pair_free(struct qpair *p)
{
    SSL_free(p->c.ssl);
    SSL_free(p->s.ssl);
    p->c.ssl = p->s.ssl = NULL;
}

/*
 * -s resume / early: the client restores the last stored ticket (d2i_SSL_SESSION +
 * SSL_set_session), psk_dhe_ke, the server issues one ticket, the client processes it and
 * stores it for the next connection (each ticket is used once, so the replay filter never
 * refuses 0-RTT). The first call, with nothing stored, is a full handshake that gets a ticket.
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
             (sess == NULL || SSL_set_session(one.c.ssl, sess) == 1);
    SSL_SESSION_free(sess);
    if (ok && scen == EARLY) {
        SSL_set_quic_early_data_enabled(one.c.ssl, 1);
        SSL_set_quic_early_data_enabled(one.s.ssl, 1);
    }
    ok = ok && run(&one) && deliver(&one.s, &one.c) &&
         SSL_process_quic_post_handshake(one.c.ssl) == 1;
    if (!ok)
        bench_fail("resumed handshake did not complete (client alert %d, server alert %d)",
                   one.c.last_alert, one.s.last_alert);
    ok = ok && check(&one);
    if (ok && (got_ticket != 1 || SSL_session_reused(one.c.ssl) != resumed ||
               SSL_session_reused(one.s.ssl) != resumed)) {
        bench_fail("tickets %d, reused %d/%d", got_ticket, SSL_session_reused(one.c.ssl),
                   SSL_session_reused(one.s.ssl));
        ok = 0;
    }
    if (ok && resumed && scen == EARLY &&
        (SSL_get_early_data_status(one.c.ssl) != SSL_EARLY_DATA_ACCEPTED ||
         SSL_get_early_data_status(one.s.ssl) != SSL_EARLY_DATA_ACCEPTED)) {
        bench_fail("0-RTT not accepted: %s",
                   SSL_early_data_reason_string(SSL_get_early_data_reason(one.s.ssl)));
        ok = 0;
    }
    pair_free(&one);
    return ok;
}

static int handshake(void)
{
    if (scen == RESUME || scen == EARLY)
        return handshake_resumed();
    SSL_CTX *client = scen == HRR ? cctx_hrr : cctx;
    if (scen == COLD) {
        if ((cold_cctx == NULL || cold_used) && !cold_prepare())
            return 0;
        cold_used = 1;
        client = cold_cctx;
    }
    int ok = pair_new(&one, client, sctx, BENCH_HOST) && run(&one);
    if (!ok)
        bench_fail("handshake did not complete (client alert %d, server alert %d)",
                   one.c.last_alert, one.s.last_alert);
    ok = ok && check(&one);
    pair_free(&one);
    return ok;
}

static int handshake_neg(enum bench_neg neg)
{
    int ok = pair_new(&one, neg == BENCH_WRONG_CA ? cctx_wrong_ca : cctx, sctx,
                      neg == BENCH_WRONG_HOST ? "wrong.example" : BENCH_HOST) &&
             run(&one);
    if (!ok)
        bench_fail("client alert %d, verify result %ld (%s)", one.c.last_alert,
                   SSL_get_verify_result(one.c.ssl),
                   X509_verify_cert_error_string(SSL_get_verify_result(one.c.ssl)));
    pair_free(&one);
    ERR_clear_error();
    return ok;
}

/*
 * Heap mode: an established pair keeps its two SSL objects only. The handshake runs over
 * the thread's one transport (a QUIC stack's would be its own, and is not counted), so
 * 100 000 pairs fit (a struct qpair is 33 KB of buffers). Nothing calls back into an
 * established connection's app data here.
 */
struct qconn {
    SSL *c, *s;
};

static void *pair_alloc(void) { return calloc(1, sizeof(struct qconn)); }

static int pair_establish(void *v)
{
    struct qconn *p = v;
    int ok = pair_new(&one, cctx, sctx, BENCH_HOST) && run(&one) && check(&one);
    p->c = one.c.ssl;
    p->s = one.s.ssl;
    one.c.ssl = one.s.ssl = NULL;
    return ok;
}

static void pair_free_client(void *v)
{
    struct qconn *p = v;
    SSL_free(p->c);
    p->c = NULL;
}

static void pair_free_server(void *v)
{
    struct qconn *p = v;
    SSL_free(p->s);
    p->s = NULL;
}

int main(int argc, char **argv)
{
    static const struct bench_lib lib = {
        .name = "qtls",
        .init = init,
        .handshake = handshake,
        .handshake_neg = handshake_neg,
        .pair_alloc = pair_alloc,
        .pair_establish = pair_establish,
        .pair_free_client = pair_free_client,
        .pair_free_server = pair_free_server,
        .pair_release = free,
        .scenario = scenario,
        .threads = 1,
        .fini = fini,
    };
    return bench_main(argc, argv, &lib);
}
