/*
 * (B) GnuTLS 3.7 in QUIC mode, driven as ngtcp2's GnuTLS backend drives it
 * (and as tests/test_gnutls.c does): outgoing handshake messages arrive
 * through gnutls_handshake_set_read_function, queued per level; incoming
 * ones go in with gnutls_handshake_write per level, each followed by
 * gnutls_handshake() until it returns 0. Secrets are copied by the secret
 * hook; no TLS record is ever written. The 0x39 extension is registered on
 * each session. Credentials and the priority cache are made once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "bench_common.h"
#include "gnutls_quic.h"

#define NLEVELS GQ_LEVELS
#define OUTMAX 4096 /* a level's output in one flight; reserved before anything is measured */

struct gside {
    struct gq_peer p; /* tests/helpers/gnutls: the hooks' view */
    int done, last_error;
};

struct gpair {
    struct gside c, s;
};

static gnutls_certificate_credentials_t ccred, ccred_wrong_ca, scred;
static gnutls_priority_t prio;
static struct gpair one;

#define PRIORITY                                                                            \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE:-CIPHER-ALL:+AES-128-GCM:"   \
    "-GROUP-ALL:+GROUP-X25519:-SIGN-ALL:+SIGN-ECDSA-SECP256R1-SHA256"

static int reserve_side(struct gside *g);

static int init(const char *dir)
{
    const char *err = NULL;
    int r;
    if ((r = gnutls_global_init()) < 0 || (r = gnutls_priority_init(&prio, PRIORITY, &err)) < 0) {
        bench_fail("priority: %s at %s", gnutls_strerror(r), err != NULL ? err : "-");
        return 0;
    }
    if ((r = gnutls_certificate_allocate_credentials(&ccred)) < 0 ||
        (r = gnutls_certificate_allocate_credentials(&ccred_wrong_ca)) < 0 ||
        (r = gnutls_certificate_allocate_credentials(&scred)) < 0) {
        bench_fail("credentials: %s", gnutls_strerror(r));
        return 0;
    }
    if (gnutls_certificate_set_x509_trust_file(ccred, bench_path(dir, "cert.pem"),
                                               GNUTLS_X509_FMT_PEM) != 1 ||
        gnutls_certificate_set_x509_trust_file(ccred_wrong_ca, bench_path(dir, "other.pem"),
                                               GNUTLS_X509_FMT_PEM) != 1) {
        bench_fail("trust files");
        return 0;
    }
    r = gnutls_certificate_set_x509_key_file(scred, bench_path(dir, "cert.pem"),
                                             bench_path(dir, "key.pem"), GNUTLS_X509_FMT_PEM);
    if (r < 0) {
        bench_fail("server key: %s", gnutls_strerror(r));
        return 0;
    }
    return reserve_side(&one.c) && reserve_side(&one.s);
}

static void fini(void)
{
    gnutls_certificate_free_credentials(ccred);
    gnutls_certificate_free_credentials(ccred_wrong_ca);
    gnutls_certificate_free_credentials(scred);
    gnutls_priority_deinit(prio);
    gnutls_global_deinit();
    gq_peer_free(&one.c.p);
    gq_peer_free(&one.s.p);
}

/* Each level's output buffer made at its full size, so that no handshake allocates one. */
static int reserve_side(struct gside *g)
{
    for (int l = 0; l < NLEVELS; l++) {
        if ((g->p.out[l] = malloc(OUTMAX)) == NULL)
            return 0;
        g->p.out_cap[l] = OUTMAX;
    }
    return 1;
}

static void reset_side(struct gside *g)
{
    gq_peer_reset(&g->p);
    g->done = g->last_error = 0;
}

static int side_new(struct gside *g, int server, gnutls_certificate_credentials_t cred,
                    const char *host)
{
    static const gnutls_datum_t h3 = {(unsigned char *)"h3", 2};
    unsigned flags = (server ? GNUTLS_SERVER : GNUTLS_CLIENT) | GNUTLS_NO_END_OF_EARLY_DATA |
                     GNUTLS_NO_TICKETS;
    gnutls_session_t session;
    if (gnutls_init(&session, flags) < 0)
        return 0;
    if (gq_peer_attach(&g->p, session, server, server ? bench_server_tp : bench_client_tp,
                       BENCH_TP_LEN) < 0 ||
        gnutls_priority_set(session, prio) < 0 ||
        gnutls_alpn_set_protocols(session, &h3, 1, GNUTLS_ALPN_MANDATORY) < 0 ||
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, cred) < 0)
        return 0;
    if (!server) {
        gnutls_session_set_verify_cert(session, host, 0);
        if (gnutls_server_name_set(session, GNUTLS_NAME_DNS, BENCH_HOST, strlen(BENCH_HOST)) < 0)
            return 0;
    }
    return 1;
}

static int pair_new(struct gpair *p, gnutls_certificate_credentials_t client_cred,
                    const char *host)
{
    reset_side(&p->c);
    reset_side(&p->s);
    return side_new(&p->c, 0, client_cred, host) && side_new(&p->s, 1, scred, NULL);
}

/* One gnutls_handshake() unless done: 0 ok (done or wants more), -1 failed. */
static int step(struct gside *g)
{
    if (g->done)
        return 0;
    int r = gnutls_handshake(g->p.session);
    if (r == 0)
        g->done = 1;
    else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
        g->last_error = r;
        return -1;
    }
    return 0;
}

/* Everything `from` emitted goes to `to`, level by level, each followed by a step. */
static int deliver(struct gside *from, struct gside *to)
{
    for (int l = 0; l < NLEVELS; l++) {
        if (from->p.out_len[l] == 0)
            continue;
        int r = gnutls_handshake_write(to->p.session, (gnutls_record_encryption_level_t)l,
                                       from->p.out[l], from->p.out_len[l]);
        from->p.out_len[l] = 0;
        if (r < 0 && gnutls_error_is_fatal(r)) {
            to->last_error = r;
            return 0;
        }
        if (step(to) < 0)
            return 0;
    }
    return 1;
}

static int run(struct gpair *p)
{
    if (step(&p->c) < 0)
        return 0;
    for (int round = 0; round < 8; round++) {
        if (!deliver(&p->c, &p->s))
            return 0;
        if (p->c.done && p->s.done)
            return !p->c.p.hook_failed && !p->s.p.hook_failed && !p->c.p.pushed &&
                   !p->s.p.pushed;
        if (!deliver(&p->s, &p->c))
            return 0;
    }
    return 0;
}

static int alpn_is_h3(gnutls_session_t s)
{
    gnutls_datum_t a = {NULL, 0};
    return gnutls_alpn_get_selected_protocol(s, &a) == 0 && a.size == 2 &&
           memcmp(a.data, "h3", 2) == 0;
}

static int check(struct gpair *p)
{
    gnutls_session_t c = p->c.p.session, s = p->s.p.session;
    char sni[64];
    size_t sni_len = sizeof(sni);
    unsigned sni_type = 0;
    int ok = 1;
#define CHECK(cond)                     \
    if (!(cond)) {                      \
        bench_fail("check: %s", #cond); \
        ok = 0;                         \
    }
    CHECK(gnutls_protocol_get_version(c) == GNUTLS_TLS1_3 &&
          gnutls_protocol_get_version(s) == GNUTLS_TLS1_3);
    CHECK(gnutls_cipher_get(c) == GNUTLS_CIPHER_AES_128_GCM &&
          gnutls_cipher_get(s) == GNUTLS_CIPHER_AES_128_GCM);
    CHECK(gnutls_group_get(c) == GNUTLS_GROUP_X25519 && gnutls_group_get(s) == GNUTLS_GROUP_X25519);
    CHECK(gnutls_sign_algorithm_get(c) == GNUTLS_SIGN_ECDSA_SECP256R1_SHA256);
    CHECK(alpn_is_h3(c) && alpn_is_h3(s));
    CHECK(p->c.p.peer_tp_len == BENCH_TP_LEN &&
          memcmp(p->c.p.peer_tp, bench_server_tp, BENCH_TP_LEN) == 0);
    CHECK(p->s.p.peer_tp_len == BENCH_TP_LEN &&
          memcmp(p->s.p.peer_tp, bench_client_tp, BENCH_TP_LEN) == 0);
    CHECK(gnutls_session_get_verify_cert_status(c) == 0);
    CHECK(gnutls_server_name_get(s, sni, &sni_len, &sni_type, 0) == 0 &&
          sni_type == GNUTLS_NAME_DNS && strcmp(sni, BENCH_HOST) == 0);
    CHECK(p->s.p.out_len[GNUTLS_ENCRYPTION_LEVEL_APPLICATION] == 0); /* no NewSessionTicket */
    CHECK(p->c.p.alerts == 0 && p->s.p.alerts == 0);
#undef CHECK
    return ok;
}

static void side_free(struct gside *g)
{
    if (g->p.session != NULL)
        gnutls_deinit(g->p.session);
    g->p.session = NULL;
}

static void why(struct gpair *p)
{
    bench_fail("client: %s, %d alert(s) reported; server: %s, %d alert(s) reported",
               p->c.last_error ? gnutls_strerror(p->c.last_error) : "no error", p->c.p.alerts,
               p->s.last_error ? gnutls_strerror(p->s.last_error) : "no error", p->s.p.alerts);
}

static int handshake(void)
{
    int ok = pair_new(&one, ccred, BENCH_HOST) && run(&one);
    if (!ok)
        why(&one);
    ok = ok && check(&one);
    side_free(&one.c);
    side_free(&one.s);
    return ok;
}

static int handshake_neg(enum bench_neg neg)
{
    int ok = pair_new(&one, neg == BENCH_WRONG_CA ? ccred_wrong_ca : ccred,
                      neg == BENCH_WRONG_HOST ? "wrong.example" : BENCH_HOST) &&
             run(&one);
    if (!ok)
        why(&one);
    side_free(&one.c);
    side_free(&one.s);
    return ok;
}

static void pair_release(void *v);

static void *pair_alloc(void)
{
    struct gpair *p = calloc(1, sizeof(struct gpair));
    if (p != NULL && (!reserve_side(&p->c) || !reserve_side(&p->s))) {
        pair_release(p);
        return NULL;
    }
    return p;
}

static void pair_release(void *v)
{
    struct gpair *p = v;
    gq_peer_free(&p->c.p);
    gq_peer_free(&p->s.p);
    free(p);
}

static int pair_establish(void *v)
{
    struct gpair *p = v;
    return pair_new(p, ccred, BENCH_HOST) && run(p) && check(p);
}

static void pair_free_client(void *v) { side_free(&((struct gpair *)v)->c); }
static void pair_free_server(void *v) { side_free(&((struct gpair *)v)->s); }

int main(int argc, char **argv)
{
    static const struct bench_lib lib = {
        .name = "gnutls_quic",
        .init = init,
        .handshake = handshake,
        .handshake_neg = handshake_neg,
        .pair_alloc = pair_alloc,
        .pair_establish = pair_establish,
        .pair_free_client = pair_free_client,
        .pair_free_server = pair_free_server,
        .pair_release = pair_release,
        .fini = fini,
    };
    return bench_main(argc, argv, &lib);
}
