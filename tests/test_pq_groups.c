/*
 * Post-quantum key exchange (draft-ietf-tls-ecdhe-mlkem, draft-ietf-tls-mlkem): the hybrid
 * groups X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024 and ML-KEM alone, both roles,
 * over QUIC (the mock transport) and TCP (a BIO pair); the share layouts and the secret's order
 * checked against the halves computed apart; the defaults (hybrid first, with an X25519 share
 * beside it); bad shares refused with illegal_parameter. Where libcrypto has ML-KEM (3.5 and
 * later) every exchange also runs with one side on libcrypto's and the other on qtls's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "internal.h"
#include "crypto/crypto.h"
#include "crypto/mlkem.h"
#include "mock_quic.h"

static const struct {
    const char *name;
    uint16_t id;
    size_t client_share, server_share, secret;
} pq[] = {
    {"X25519MLKEM768", 0x11ec, 1184 + 32, 1088 + 32, 32 + 32},
    {"SecP256r1MLKEM768", 0x11eb, 65 + 1184, 65 + 1088, 32 + 32},
    {"SecP384r1MLKEM1024", 0x11ed, 97 + 1568, 97 + 1568, 48 + 32},
    {"MLKEM768", 0x0201, 1184, 1088, 32},
    {"MLKEM1024", 0x0202, 1568, 1568, 32},
};
#define N_PQ (sizeof(pq) / sizeof(pq[0]))

/* The ML-KEM implementations to pair: qtls's own, and libcrypto's where it has one. */
static int n_impls(void)
{
    crypto_set_test_own_mlkem(0);
    return crypto_kex_mlkem_from_libcrypto() ? 2 : 1;
}

static void use_own_mlkem(int own) { crypto_set_test_own_mlkem(own); }

static int setup(void **state)
{
    ERR_clear_error();
    assert_true(crypto_init());
    return 0;
}

static int teardown(void **state)
{
    crypto_set_test_own_mlkem(0);
    ERR_clear_error();
    return 0;
}

/* ---- the exchange itself, below the handshake ---- */

struct exchange {
    uint8_t cshare[2048], sshare[2048];
    size_t cshare_len, sshare_len;
    uint8_t csecret[CRYPTO_KEX_MAX_SECRET], ssecret[CRYPTO_KEX_MAX_SECRET];
    size_t cn, sn;
    struct kex_key key;
};

/* Client generates with one implementation, server responds with another, client derives. */
static void run_exchange(const struct group *g, int client_own, int server_own,
                         struct exchange *x)
{
    struct wr w;
    memset(x, 0, sizeof(*x));
    wr_init_fixed(&w, x->cshare, sizeof(x->cshare));
    use_own_mlkem(client_own);
    assert_true(crypto_kex_generate(g, &x->key, &w));
    x->cshare_len = wr_len(&w);
    wr_init_fixed(&w, x->sshare, sizeof(x->sshare));
    use_own_mlkem(server_own);
    x->sn = crypto_kex_respond(g, x->cshare, x->cshare_len, &w, x->ssecret, sizeof(x->ssecret));
    x->sshare_len = wr_len(&w);
    x->cn = crypto_kex_derive(g, &x->key, x->sshare, x->sshare_len, x->csecret,
                              sizeof(x->csecret));
}

static void every_group_agrees_on_a_secret_of_the_drafts_length(void **state)
{
    for (int ci = 0; ci < n_impls(); ci++) {
        for (int si = 0; si < n_impls(); si++) {
            for (size_t i = 0; i < N_PQ; i++) {
                const struct group *g = group_by_id(pq[i].id);
                struct exchange x;
                assert_non_null(g);
                run_exchange(g, ci, si, &x);
                assert_int_equal(x.cshare_len, pq[i].client_share);
                assert_int_equal(x.sshare_len, pq[i].server_share);
                assert_int_equal(x.sn, pq[i].secret);
                assert_int_equal(x.cn, pq[i].secret);
                assert_memory_equal(x.csecret, x.ssecret, x.cn);
                crypto_kex_key_clear(&x.key);
            }
        }
    }
}

/* The X25519 secret between a raw private key and a raw public key, computed apart. */
static void x25519(const uint8_t priv[32], const uint8_t pub[32], uint8_t out[32])
{
    EVP_PKEY *a = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
    EVP_PKEY *b = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub, 32);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(a, NULL);
    size_t n = 32;
    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_derive_init(ctx), 1);
    assert_int_equal(EVP_PKEY_derive_set_peer(ctx, b), 1);
    assert_int_equal(EVP_PKEY_derive(ctx, out, &n), 1);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

/*
 * draft-ietf-tls-ecdhe-mlkem §4.1: X25519MLKEM768's client share is ek || X25519 public key, the
 * server's ciphertext || X25519 public key, the secret the ML-KEM secret || the X25519 secret.
 * The client's X25519 key is fixed (the test hook); both halves are recomputed apart.
 */
static void x25519mlkem768_puts_mlkem_first(void **state)
{
    static const uint8_t priv[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    EVP_PKEY *fixed = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
    uint8_t pub[32], ecdh[32], ss[32];
    size_t n = 32;
    struct exchange x;
    assert_int_equal(EVP_PKEY_get_raw_public_key(fixed, pub, &n), 1);
    crypto_set_test_kex_key(fixed);
    run_exchange(group_by_id(0x11ec), 1, 1, &x);
    assert_int_equal(x.cn, 64);
    assert_memory_equal(x.cshare + 1184, pub, 32); /* the X25519 half last */
    x25519(priv, x.sshare + 1088, ecdh);
    assert_memory_equal(x.csecret + 32, ecdh, 32);
    assert_non_null(x.key.dk);
    assert_int_equal(mlkem_decaps(MLKEM_768, x.key.dk, x.sshare, ss), 1);
    assert_memory_equal(x.csecret, ss, 32); /* the ML-KEM secret first */
    crypto_kex_key_clear(&x.key);
}

/* The SecP groups put the curve first: share 0x04 || X || Y then ek; secret ECDH then ML-KEM. */
static void secp_hybrids_put_the_curve_first(void **state)
{
    for (size_t i = 1; i <= 2; i++) {
        const struct group *g = group_by_id(pq[i].id);
        const struct group *ec = group_by_id(g->classical);
        struct exchange x;
        uint8_t ss[32];
        run_exchange(g, 1, 1, &x);
        assert_int_equal(x.cshare[0], 4);
        assert_int_equal(x.sshare[0], 4);
        assert_non_null(x.key.dk);
        assert_int_equal(mlkem_decaps(g->mlkem, x.key.dk, x.sshare + ec->share_len, ss), 1);
        assert_memory_equal(x.csecret + x.cn - 32, ss, 32);
        /* the curve half is the ECDH of the client's key with the server's point */
        uint8_t ecdh[CRYPTO_KEX_MAX_SECRET];
        size_t en = crypto_ecdh_derive(ec, x.key.ec, x.sshare, ec->share_len, ecdh, sizeof(ecdh));
        assert_int_equal(en, x.cn - 32);
        assert_memory_equal(x.csecret, ecdh, en);
        crypto_kex_key_clear(&x.key);
    }
}

/* FIPS 203 §7.2: an encapsulation key with a coefficient >= q is refused by the server. */
static void server_refuses_an_encapsulation_key_out_of_range(void **state)
{
    for (int si = 0; si < n_impls(); si++) {
        for (size_t i = 0; i < N_PQ; i++) {
            const struct group *g = group_by_id(pq[i].id);
            struct exchange x;
            struct wr w;
            run_exchange(g, 1, 1, &x);
            size_t ek_at = g->kind == KEX_HYBRID && g->ec_first ? group_by_id(g->classical)->share_len
                                                                : 0;
            x.cshare[ek_at] = 0xff; /* the first coefficient: 12 bits, 0x?ff >= 3329 */
            x.cshare[ek_at + 1] |= 0x0f;
            wr_init_fixed(&w, x.sshare, sizeof(x.sshare));
            use_own_mlkem(si);
            ERR_clear_error();
            assert_int_equal(crypto_kex_respond(g, x.cshare, x.cshare_len, &w, x.ssecret,
                                                sizeof(x.ssecret)),
                             0);
            assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_KEY_SHARE);
            crypto_kex_key_clear(&x.key);
        }
    }
}

/* Shares of the wrong length either way, and a tampered ciphertext (implicit rejection). */
static void wrong_lengths_fail_and_a_tampered_ciphertext_gives_another_secret(void **state)
{
    for (size_t i = 0; i < N_PQ; i++) {
        const struct group *g = group_by_id(pq[i].id);
        struct exchange x;
        struct wr w;
        run_exchange(g, 1, 1, &x);
        wr_init_fixed(&w, x.sshare, sizeof(x.sshare));
        ERR_clear_error();
        assert_int_equal(crypto_kex_respond(g, x.cshare, x.cshare_len - 1, &w, x.ssecret,
                                            sizeof(x.ssecret)),
                         0);
        assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_KEY_SHARE);
        assert_int_equal(crypto_kex_derive(g, &x.key, x.sshare, pq[i].server_share + 1,
                                           x.csecret, sizeof(x.csecret)),
                         0);
        assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_KEY_SHARE);
        assert_true(crypto_kex_bad_share()); /* the peer's fault: illegal_parameter */
        crypto_kex_key_clear(&x.key);

        run_exchange(g, 1, 1, &x);
        size_t ct_at = g->kind == KEX_HYBRID && g->ec_first ? group_by_id(g->classical)->share_len
                                                            : 0;
        x.sshare[ct_at + 5] ^= 1;
        uint8_t again[CRYPTO_KEX_MAX_SECRET];
        assert_int_equal(crypto_kex_derive(g, &x.key, x.sshare, x.sshare_len, again,
                                           sizeof(again)),
                         pq[i].secret);
        assert_memory_not_equal(again, x.ssecret, pq[i].secret);
        crypto_kex_key_clear(&x.key);
    }
    ERR_clear_error();
}

/* A classical share's own checks stand: a compressed point is "bad ecpoint", the peer's fault. */
static void compressed_point_is_the_peers_fault(void **state)
{
    const struct group *g = group_by_id(0x0017);
    struct exchange x;
    run_exchange(g, 1, 1, &x);
    x.sshare[0] = 2;
    ERR_clear_error();
    assert_int_equal(crypto_kex_derive(g, &x.key, x.sshare, x.sshare_len, x.csecret,
                                       sizeof(x.csecret)),
                     0);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_BAD_ECPOINT);
    assert_true(crypto_kex_bad_share());
    ERR_clear_error();
    assert_false(crypto_kex_bad_share());
    crypto_kex_key_clear(&x.key);
}

/* ---- handshakes over QUIC ---- */

struct hello_log {
    int calls;            /* ClientHellos seen: 2 means a HelloRetryRequest */
    uint16_t groups[4];   /* the key_share entries of the last one */
    size_t lens[4], n;
    uint8_t tails[4][32]; /* the last 32 bytes of each (X25519's place in X25519MLKEM768) */
};

/* A server ClientHello callback that records the key shares (RFC 8446 §4.2.8). */
static int log_key_shares(SSL *s, int *al, void *arg)
{
    struct hello_log *log = arg;
    const unsigned char *p;
    size_t len;
    log->calls++;
    log->n = 0;
    if (!SSL_client_hello_get0_ext(s, TLSEXT_TYPE_key_share, &p, &len) || len < 2)
        return SSL_CLIENT_HELLO_SUCCESS;
    size_t at = 2;
    while (at + 4 <= len && log->n < 4) {
        log->groups[log->n] = (uint16_t)(p[at] << 8 | p[at + 1]);
        log->lens[log->n] = (size_t)(p[at + 2] << 8 | p[at + 3]);
        at += 4 + log->lens[log->n];
        if (at <= len && log->lens[log->n] >= 32)
            memcpy(log->tails[log->n], p + at - 32, 32);
        log->n++;
    }
    return SSL_CLIENT_HELLO_SUCCESS;
}

/* A QUIC handshake with these group lists (NULL: the default); the pair is left for checks. */
static void quic_handshake(struct mock_pair *p, SSL_CTX **cctx, SSL_CTX **sctx,
                           const char *cgroups, const char *sgroups, struct hello_log *log)
{
    *cctx = mock_client_ctx();
    *sctx = mock_server_ctx("ecdsa256");
    assert_non_null(*cctx);
    assert_non_null(*sctx);
    if (cgroups != NULL)
        assert_int_equal(SSL_CTX_set1_groups_list(*cctx, cgroups), 1);
    if (sgroups != NULL)
        assert_int_equal(SSL_CTX_set1_groups_list(*sctx, sgroups), 1);
    memset(log, 0, sizeof(*log));
    SSL_CTX_set_client_hello_cb(*sctx, log_key_shares, log);
    assert_true(mock_pair_init(p, *cctx, *sctx));
    assert_true(mock_handshake(p, -1));
    assert_int_equal(p->client.alerts_sent, 0);
    assert_int_equal(p->server.alerts_sent, 0);
}

static void quic_done(struct mock_pair *p, SSL_CTX *cctx, SSL_CTX *sctx)
{
    mock_pair_free(p);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static void assert_negotiated(struct mock_pair *p, uint16_t id, const char *name)
{
    const struct group *g = group_by_id(id);
    assert_non_null(g);
    assert_int_equal(SSL_get_negotiated_group(p->client.ssl), g->nid);
    assert_int_equal(SSL_get_negotiated_group(p->server.ssl), g->nid);
    assert_string_equal(SSL_get0_group_name(p->client.ssl), name);
    assert_string_equal(SSL_get0_group_name(p->server.ssl), name);
    assert_int_equal(p->client.secret_len[ssl_encryption_handshake],
                     p->server.secret_len[ssl_encryption_handshake]);
    assert_memory_equal(p->client.write_secret[ssl_encryption_handshake],
                        p->server.read_secret[ssl_encryption_handshake],
                        p->client.secret_len[ssl_encryption_handshake]);
}

static void every_pq_group_completes_over_quic(void **state)
{
    for (size_t i = 0; i < N_PQ; i++) {
        struct mock_pair p;
        SSL_CTX *cctx, *sctx;
        struct hello_log log;
        quic_handshake(&p, &cctx, &sctx, pq[i].name, pq[i].name, &log);
        assert_negotiated(&p, pq[i].id, pq[i].name);
        assert_int_equal(log.calls, 1);
        assert_int_equal(log.n, 1);
        assert_int_equal(log.lens[0], pq[i].client_share);
        quic_done(&p, cctx, sctx);
    }
}

/* The defaults: X25519MLKEM768 first with an X25519 share beside it; the server takes it. */
static void defaults_offer_the_hybrid_with_x25519_and_prefer_it(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx, *sctx;
    struct hello_log log;
    quic_handshake(&p, &cctx, &sctx, NULL, NULL, &log);
    assert_negotiated(&p, 0x11ec, "X25519MLKEM768");
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.groups[0], 0x11ec);
    assert_int_equal(log.lens[0], 1216);
    assert_int_equal(log.groups[1], 0x001d);
    assert_int_equal(log.lens[1], 32);
    /* one X25519 key pair for both shares: the hybrid's X25519 half is the X25519 share */
    assert_memory_equal(log.tails[0], log.tails[1], 32);
    quic_done(&p, cctx, sctx);
}

/* A server without post-quantum groups takes the X25519 share: no HelloRetryRequest. */
static void classical_server_takes_the_x25519_share_without_a_retry(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx, *sctx;
    struct hello_log log;
    quic_handshake(&p, &cctx, &sctx, NULL, "X25519:P-256", &log);
    assert_negotiated(&p, 0x001d, "x25519");
    assert_int_equal(log.calls, 1);
    quic_done(&p, cctx, sctx);
}

/* A client whose share is X25519 is asked for the hybrid by a server that takes only it. */
static void hello_retry_request_moves_to_the_hybrid(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx, *sctx;
    struct hello_log log;
    quic_handshake(&p, &cctx, &sctx, "X25519:X25519MLKEM768", "X25519MLKEM768", &log);
    assert_negotiated(&p, 0x11ec, "X25519MLKEM768");
    assert_int_equal(log.calls, 2);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.groups[0], 0x11ec);
    quic_done(&p, cctx, sctx);
}

/*
 * With a hybrid and a classical share offered, the client's first share in a group of the
 * server's is taken, whatever the server's order (OpenSSL 3.0's and 3.5's rule); no retry.
 */
static void client_share_order_decides_between_two_shares(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx, *sctx;
    struct hello_log log;
    quic_handshake(&p, &cctx, &sctx, "SecP256r1MLKEM768:P-256", "P-256:SecP256r1MLKEM768", &log);
    assert_negotiated(&p, 0x11eb, "SecP256r1MLKEM768");
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.n, 2);
    quic_done(&p, cctx, sctx);
    /* a second share of another group than the hybrid's curve has its own key */
    quic_handshake(&p, &cctx, &sctx, "X25519MLKEM768:P-256", "P-256", &log);
    assert_negotiated(&p, 0x0017, "secp256r1");
    assert_int_equal(log.n, 2);
    assert_int_equal(log.lens[1], 65);
    quic_done(&p, cctx, sctx);
}

/*
 * OpenSSL 3.5's tuples ('/'): tuple by tuple, a share in the tuple, else a retry for a group of
 * it the client supports, before any later tuple; SSL_OP_CIPHER_SERVER_PREFERENCE orders the
 * shares within a tuple by the server's list (SSL_CTX_set1_groups_list(3) of OpenSSL 3.5).
 */
static void tuples_decide_as_openssl_35(void **state)
{
    struct mock_pair p;
    SSL_CTX *cctx, *sctx;
    struct hello_log log;
    /* the client's only share is X25519's, in the second tuple: a retry for the first's */
    quic_handshake(&p, &cctx, &sctx, "X25519:X25519MLKEM768", "X25519MLKEM768/X25519", &log);
    assert_negotiated(&p, 0x11ec, "X25519MLKEM768");
    assert_int_equal(log.calls, 2);
    quic_done(&p, cctx, sctx);
    /* one tuple: the X25519 share is taken (no retry) */
    quic_handshake(&p, &cctx, &sctx, "X25519:X25519MLKEM768", "X25519MLKEM768:X25519", &log);
    assert_negotiated(&p, 0x001d, "x25519");
    assert_int_equal(log.calls, 1);
    quic_done(&p, cctx, sctx);
    /* shares for both, in one tuple of the server's: the client's first; its own first when
       the server prefers its order */
    quic_handshake(&p, &cctx, &sctx, "SecP256r1MLKEM768:P-256", "P-256:SecP256r1MLKEM768/X448",
                   &log);
    assert_negotiated(&p, 0x11eb, "SecP256r1MLKEM768");
    quic_done(&p, cctx, sctx);
    cctx = mock_client_ctx();
    sctx = mock_server_ctx("ecdsa256");
    assert_int_equal(SSL_CTX_set1_groups_list(cctx, "SecP256r1MLKEM768:P-256"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(sctx, "P-256:SecP256r1MLKEM768/X448"), 1);
    SSL_CTX_set_options(sctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_true(mock_handshake(&p, 0));
    assert_negotiated(&p, 0x0017, "secp256r1");
    quic_done(&p, cctx, sctx);
}

/* The client's encapsulation key corrupted in flight: the server sends illegal_parameter. */
static void corrupted_client_share_gets_illegal_parameter(void **state)
{
    SSL_CTX *cctx = mock_client_ctx(), *sctx = mock_server_ctx("ecdsa256");
    struct mock_pair p;
    assert_int_equal(SSL_CTX_set1_groups_list(cctx, "MLKEM768"), 1);
    assert_int_equal(SSL_CTX_set1_groups_list(sctx, "MLKEM768"), 1);
    assert_true(mock_pair_init(&p, cctx, sctx));
    assert_int_equal(SSL_do_handshake(p.client.ssl), -1); /* the ClientHello is written */
    uint8_t *ch = p.client.out[ssl_encryption_initial];
    size_t len = p.client.out_len[ssl_encryption_initial], at = 0;
    /* the key_share entry: group 0x0201, length 0x04a0 (1184), then ek */
    for (at = 0; at + 6 < len; at++)
        if (ch[at] == 0x02 && ch[at + 1] == 0x01 && ch[at + 2] == 0x04 && ch[at + 3] == 0xa0)
            break;
    assert_true(at + 6 < len);
    ch[at + 4] = 0xff;
    ch[at + 5] |= 0x0f;
    assert_false(mock_handshake(&p, 0));
    assert_int_equal(p.server.alert, SSL_AD_ILLEGAL_PARAMETER);
    quic_done(&p, cctx, sctx);
    ERR_clear_error();
}

/* ---- handshakes over TCP ---- */

static SSL_CTX *tcp_ctx(int server, const char *groups)
{
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    assert_non_null(ctx);
    if (server) {
        assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, mock_cert_path("ecdsa256.pem")),
                         1);
        assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path("ecdsa256.key"),
                                                     SSL_FILETYPE_PEM),
                         1);
    }
    if (groups != NULL)
        assert_int_equal(SSL_CTX_set1_groups_list(ctx, groups), 1);
    return ctx;
}

/* A TCP handshake through a BIO pair, then a few bytes each way; the group both report. */
static void tcp_handshake(const char *cgroups, const char *sgroups, const char *want)
{
    SSL_CTX *cctx = tcp_ctx(0, cgroups), *sctx = tcp_ctx(1, sgroups);
    SSL *c = SSL_new(cctx), *s = SSL_new(sctx);
    BIO *cb, *sb;
    assert_int_equal(BIO_new_bio_pair(&cb, 0, &sb, 0), 1);
    SSL_set_bio(c, cb, cb);
    SSL_set_bio(s, sb, sb);
    SSL_set_connect_state(c);
    SSL_set_accept_state(s);
    int cdone = 0, sdone = 0;
    for (int i = 0; i < 50 && !(cdone && sdone); i++) {
        cdone = cdone || SSL_do_handshake(c) == 1;
        sdone = sdone || SSL_do_handshake(s) == 1;
    }
    assert_true(cdone && sdone);
    char buf[16];
    assert_int_equal(SSL_write(c, "ping", 4), 4);
    assert_int_equal(SSL_read(s, buf, sizeof(buf)), 4);
    assert_int_equal(SSL_write(s, "pong", 4), 4);
    assert_int_equal(SSL_read(c, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "pong", 4);
    assert_string_equal(SSL_get0_group_name(c), want);
    assert_string_equal(SSL_get0_group_name(s), want);
    SSL_free(c);
    SSL_free(s);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

static void every_pq_group_completes_over_tcp(void **state)
{
    for (int ci = 0; ci < n_impls(); ci++) {
        use_own_mlkem(ci);
        for (size_t i = 0; i < N_PQ; i++)
            tcp_handshake(pq[i].name, pq[i].name, pq[i].name);
        tcp_handshake(NULL, NULL, "X25519MLKEM768");
        tcp_handshake(NULL, "P-384:X25519", "x25519");
    }
}

/* ---- names ---- */

static void names_are_openssl_35s(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "x25519mlkem768:SecP256r1MLKEM768:"
                                                   "SecP384r1MLKEM1024:MLKEM768:MLKEM1024:"
                                                   "X25519:P-256:P-384:X448"),
                     1);
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519Kyber768Draft00"), 0);
    ERR_clear_error();
    /* OpenSSL 3.5's default list, in its own syntax: '?' optional, '*' key share, '/' tuples */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "?*X25519MLKEM768 / ?*X25519:?secp256r1 / "
                                                   "?X448:?secp384r1:?secp521r1 / "
                                                   "?ffdhe2048:?ffdhe3072:?NoSuchGroup"),
                     1);
    static const uint16_t want[] = {0x11ec, 0x001d, 0x0017, 0x001e, 0x0018};
    assert_int_equal(ctx->n_groups, 5);
    assert_memory_equal(ctx->groups, want, sizeof(want));
    assert_int_equal(ctx->group_tuples, 1u << 1 | 1u << 3); /* X25519 and X448 begin tuples */
    assert_int_equal(SSL_CTX_set1_groups_list(ctx, "X25519:NoSuchGroup"), 0);
    ERR_clear_error();
    SSL *s = SSL_new(ctx);
    for (size_t i = 0; i < N_PQ; i++) {
        const struct group *g = group_by_id(pq[i].id);
        assert_int_equal(g->nid, TLSEXT_nid_unknown | pq[i].id);
        assert_string_equal(SSL_group_to_name(s, g->nid), pq[i].name);
    }
    SSL_free(s);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_group_agrees_on_a_secret_of_the_drafts_length,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(x25519mlkem768_puts_mlkem_first, setup, teardown),
        cmocka_unit_test_setup_teardown(secp_hybrids_put_the_curve_first, setup, teardown),
        cmocka_unit_test_setup_teardown(server_refuses_an_encapsulation_key_out_of_range, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            wrong_lengths_fail_and_a_tampered_ciphertext_gives_another_secret, setup, teardown),
        cmocka_unit_test_setup_teardown(compressed_point_is_the_peers_fault, setup, teardown),
        cmocka_unit_test_setup_teardown(every_pq_group_completes_over_quic, setup, teardown),
        cmocka_unit_test_setup_teardown(defaults_offer_the_hybrid_with_x25519_and_prefer_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(classical_server_takes_the_x25519_share_without_a_retry,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(hello_retry_request_moves_to_the_hybrid, setup, teardown),
        cmocka_unit_test_setup_teardown(client_share_order_decides_between_two_shares, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(tuples_decide_as_openssl_35, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupted_client_share_gets_illegal_parameter, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(every_pq_group_completes_over_tcp, setup, teardown),
        cmocka_unit_test_setup_teardown(names_are_openssl_35s, setup, teardown),
    };
    printf("ML-KEM from %s\n", n_impls() == 2 ? "libcrypto and qtls's own" : "qtls's own only");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
