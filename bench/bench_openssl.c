/*
 * (A) OpenSSL 3.0 libssl, TLS 1.3 over a BIO pair: TLS records in memory,
 * SSL_do_handshake on each side in turn. The quic_transport_parameters
 * extension (0x39) is a custom extension in ClientHello and
 * EncryptedExtensions. Linked with the system libssl and libcrypto, never
 * with libqtls (both define SSL_*).
 *
 * BENCH_OPENSSL_RELEASE_BUFFERS=1 sets SSL_MODE_RELEASE_BUFFERS (used for a
 * second heap figure: the record buffers are what a QUIC stack does not have).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "bench_common.h"

#define TLSEXT_QUIC_TP 0x39

struct oconn {
    SSL *ssl;
    uint8_t peer_tp[64];
    size_t peer_tp_len;
    int client_hellos; /* counted on the HRR client only: 2 after a HelloRetryRequest */
};

struct opair {
    struct oconn c, s;
};

static SSL_CTX *cctx, *cctx_wrong_ca, *sctx;
/* -s resume: contexts with one (stateless) ticket per handshake; -s hrr: a client keying P-256 first */
static SSL_CTX *cctx_t, *sctx_t, *cctx_hrr;
static enum { FULL, RESUME, HRR, COLD } scen;
/*
 * Per thread (-T: threads share the contexts above, never a connection): the client's
 * session store ("on disk", the last ticket as i2d_SSL_SESSION wrote it) and the pair.
 */
static _Thread_local uint8_t stored[4096];
static _Thread_local size_t stored_len;
static _Thread_local int got_ticket;
static _Thread_local struct opair one;
/* -s cold: the fresh client context of the next handshake, and whether it was used. */
static SSL_CTX *cold_cctx;
static int cold_used;
static int release_buffers;

static int tp_add(SSL *s, unsigned int type, unsigned int context, const unsigned char **out,
                  size_t *outlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    *out = SSL_is_server(s) ? bench_server_tp : bench_client_tp;
    *outlen = BENCH_TP_LEN;
    return 1;
}

static int tp_parse(SSL *s, unsigned int type, unsigned int context, const unsigned char *in,
                    size_t inlen, X509 *x, size_t chainidx, int *al, void *arg)
{
    struct oconn *o = SSL_get_app_data(s);
    if (inlen > sizeof(o->peer_tp)) {
        *al = SSL_AD_ILLEGAL_PARAMETER;
        return 0;
    }
    memcpy(o->peer_tp, in, inlen);
    o->peer_tp_len = inlen;
    return 1;
}

static const unsigned char alpn_h3[] = {2, 'h', '3'};

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    if (SSL_select_next_proto((unsigned char **)out, outlen, alpn_h3, sizeof(alpn_h3), in,
                              inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    return SSL_TLSEXT_ERR_OK;
}

static int common_ctx(SSL_CTX *ctx)
{
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_clear_options(ctx, SSL_OP_ENABLE_MIDDLEBOX_COMPAT);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (release_buffers)
        SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    return SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) &&
           SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") == 1 &&
           SSL_CTX_set1_groups_list(ctx, "X25519") == 1 &&
           SSL_CTX_set1_sigalgs_list(ctx, "ECDSA+SHA256") == 1 &&
           SSL_CTX_add_custom_ext(ctx, TLSEXT_QUIC_TP,
                                  SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS,
                                  tp_add, NULL, NULL, tp_parse, NULL) == 1;
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
    const char *rb = getenv("BENCH_OPENSSL_RELEASE_BUFFERS");
    release_buffers = rb != NULL && strcmp(rb, "1") == 0;
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

static void count_hellos(int write_p, int version, int content_type, const void *buf, size_t len,
                         SSL *ssl, void *arg)
{
    struct oconn *o = SSL_get_app_data(ssl);
    if (write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        ((const uint8_t *)buf)[0] == SSL3_MT_CLIENT_HELLO)
        o->client_hellos++;
}

/*
 * -s cold, as in bench_qtls.c: a new client context per handshake, configured as cctx and
 * sharing its trust store; libssl has no certificate decode cache, so this is its full
 * handshake on a context that has made no connection yet.
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
    if (strcmp(name, "cold") == 0) {
        scen = COLD;
        bench_set_prepare(cold_prepare);
        return 1;
    }
    if (strcmp(name, "hrr") == 0) {
        /* The client's first key share is P-256, which the server (X25519 only) does not take. */
        scen = HRR;
        cctx_hrr = client_ctx(bench_path(certdir, "cert.pem"));
        if (cctx_hrr == NULL)
            return 0;
        SSL_CTX_set_msg_callback(cctx_hrr, count_hellos);
        return SSL_CTX_set1_groups_list(cctx_hrr, "P-256:X25519") == 1;
    }
    if (strcmp(name, "early") == 0)
        bench_fail("this harness is TLS over a BIO pair, and OpenSSL 3.0 libssl has no QUIC API "
                   "(no QUIC 0-RTT)");
    if (strcmp(name, "resume") != 0)
        return 0;
    scen = RESUME;
    cctx_t = client_ctx(bench_path(certdir, "cert.pem"));
    sctx_t = server_ctx(certdir);
    if (cctx_t == NULL || sctx_t == NULL || SSL_CTX_set_num_tickets(sctx_t, 1) != 1)
        return 0;
    SSL_CTX_clear_options(cctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_clear_options(sctx_t, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(cctx_t,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(cctx_t, new_session);
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

static int pair_new(struct opair *p, SSL_CTX *client_ctx_, SSL_CTX *server_ctx_, const char *host)
{
    memset(p, 0, sizeof(*p));
    p->c.ssl = SSL_new(client_ctx_);
    p->s.ssl = SSL_new(server_ctx_);
    BIO *bc = NULL, *bs = NULL;
    if (p->c.ssl == NULL || p->s.ssl == NULL || BIO_new_bio_pair(&bc, 0, &bs, 0) != 1)
        return 0;
    SSL_set_bio(p->c.ssl, bc, bc);
    SSL_set_bio(p->s.ssl, bs, bs);
    SSL_set_app_data(p->c.ssl, &p->c);
    SSL_set_app_data(p->s.ssl, &p->s);
    SSL_set_connect_state(p->c.ssl);
    SSL_set_accept_state(p->s.ssl);
    return SSL_set_tlsext_host_name(p->c.ssl, BENCH_HOST) == 1 &&
           SSL_set1_host(p->c.ssl, host) == 1;
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

static int run(struct opair *p)
{
    int c = 0, s = 0;
    for (int round = 0; round < 8; round++) {
        if (!c && (c = step(p->c.ssl)) < 0)
            return 0;
        if (!s && (s = step(p->s.ssl)) < 0)
            return 0;
        if (c && s)
            return 1;
    }
    return 0;
}

static int alpn_is_h3(const SSL *ssl)
{
    const unsigned char *a;
    unsigned int len;
    SSL_get0_alpn_selected(ssl, &a, &len);
    return len == 2 && memcmp(a, "h3", 2) == 0;
}

static int check(struct opair *p)
{
    SSL *c = p->c.ssl, *s = p->s.ssl;
    const SSL_CIPHER *cc = SSL_get_current_cipher(c), *sc = SSL_get_current_cipher(s);
    const char *sni = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    int sig_type = 0, sig_md = 0, ok = 1;
#define CHECK(cond)                     \
    if (!(cond)) {                      \
        bench_fail("check: %s", #cond); \
        ok = 0;                         \
    }
    CHECK(SSL_version(c) == TLS1_3_VERSION && SSL_version(s) == TLS1_3_VERSION);
    CHECK(cc != NULL && SSL_CIPHER_get_id(cc) == 0x03001301);
    CHECK(sc != NULL && SSL_CIPHER_get_id(sc) == 0x03001301);
    CHECK(SSL_get_negotiated_group(c) == NID_X25519);
    CHECK(SSL_get_negotiated_group(s) == NID_X25519);
    /* A resumed handshake has no CertificateVerify, so no signature. */
    CHECK(SSL_session_reused(c) ||
          (SSL_get_peer_signature_type_nid(c, &sig_type) == 1 && sig_type == EVP_PKEY_EC));
    CHECK(SSL_session_reused(c) ||
          (SSL_get_peer_signature_nid(c, &sig_md) == 1 && sig_md == NID_sha256));
    CHECK(alpn_is_h3(c) && alpn_is_h3(s));
    CHECK(p->c.peer_tp_len == BENCH_TP_LEN &&
          memcmp(p->c.peer_tp, bench_server_tp, BENCH_TP_LEN) == 0);
    CHECK(p->s.peer_tp_len == BENCH_TP_LEN &&
          memcmp(p->s.peer_tp, bench_client_tp, BENCH_TP_LEN) == 0);
    CHECK(SSL_get_verify_result(c) == X509_V_OK);
    CHECK(sni != NULL && strcmp(sni, BENCH_HOST) == 0);
    /* No NewSessionTicket: nothing is left in flight towards the client. */
    CHECK(BIO_ctrl_pending(SSL_get_rbio(c)) == 0);
    CHECK(scen != HRR || p->c.client_hellos == 2);
#undef CHECK
    return ok;
}

static void pair_free(struct opair *p)
{
    SSL_free(p->c.ssl);
    SSL_free(p->s.ssl);
    p->c.ssl = p->s.ssl = NULL;
}

/*
 * -s resume: the client restores the last stored ticket (d2i_SSL_SESSION + SSL_set_session),
 * psk_dhe_ke, the server issues one ticket, the client reads it (SSL_read) and stores it for
 * the next connection. The first call, with nothing stored, is a full handshake.
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
    unsigned char byte;
    int r = 0;
    ok = ok && run(&one) && (r = SSL_read(one.c.ssl, &byte, 1)) <= 0 &&
         SSL_get_error(one.c.ssl, r) == SSL_ERROR_WANT_READ;
    if (!ok) {
        char err[256] = "";
        ERR_error_string_n(ERR_peek_error(), err, sizeof(err));
        bench_fail("resumed handshake did not complete: %s", err);
        ERR_clear_error();
    }
    ok = ok && check(&one);
    if (ok && (got_ticket != 1 || SSL_session_reused(one.c.ssl) != resumed ||
               SSL_session_reused(one.s.ssl) != resumed)) {
        bench_fail("tickets %d, reused %d/%d", got_ticket, SSL_session_reused(one.c.ssl),
                   SSL_session_reused(one.s.ssl));
        ok = 0;
    }
    pair_free(&one);
    return ok;
}

static int handshake(void)
{
    if (scen == RESUME)
        return handshake_resumed();
    SSL_CTX *client = scen == HRR ? cctx_hrr : cctx;
    if (scen == COLD) {
        if ((cold_cctx == NULL || cold_used) && !cold_prepare())
            return 0;
        cold_used = 1;
        client = cold_cctx;
    }
    int ok = pair_new(&one, client, sctx, BENCH_HOST) && run(&one);
    if (!ok) {
        char err[256] = "";
        ERR_error_string_n(ERR_peek_error(), err, sizeof(err));
        bench_fail("handshake did not complete: %s", err);
        ERR_clear_error();
    }
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
        bench_fail("verify result %ld (%s)", SSL_get_verify_result(one.c.ssl),
                   X509_verify_cert_error_string(SSL_get_verify_result(one.c.ssl)));
    pair_free(&one);
    ERR_clear_error();
    return ok;
}

static void *pair_alloc(void) { return calloc(1, sizeof(struct opair)); }

static int pair_establish(void *v)
{
    struct opair *p = v;
    if (!(pair_new(p, cctx, sctx, BENCH_HOST) && run(p) && check(p)))
        return 0;
    /* Only TLS state is counted: the BIO pair (the "transport") goes. */
    SSL_set_bio(p->c.ssl, NULL, NULL);
    SSL_set_bio(p->s.ssl, NULL, NULL);
    return 1;
}

static void pair_free_client(void *v)
{
    struct opair *p = v;
    SSL_free(p->c.ssl);
    p->c.ssl = NULL;
}

static void pair_free_server(void *v)
{
    struct opair *p = v;
    SSL_free(p->s.ssl);
    p->s.ssl = NULL;
}

int main(int argc, char **argv)
{
    const char *rb = getenv("BENCH_OPENSSL_RELEASE_BUFFERS");
    static struct bench_lib lib = {
        .name = "openssl",
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
    if (rb != NULL && strcmp(rb, "1") == 0)
        lib.name = "openssl+release_buffers";
    return bench_main(argc, argv, &lib);
}
