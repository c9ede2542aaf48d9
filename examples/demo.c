/*
 * make demo: in-memory QUIC-style handshakes between a qtls client and a
 * qtls server through the SSL_QUIC_METHOD callbacks, printing what each one
 * negotiated. (The HTTP/3-over-UDP demo with ngtcp2 comes with the interop
 * milestone.)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>

#include "mock_quic.h"

struct row {
    const char *what, *cert, *suites, *client_groups, *server_groups;
    int resume; /* 1: resume the previous row's session with 0-RTT */
};

/* The newest ticket the client received (the new-session callback keeps it). */
static SSL_SESSION *last_session;

static int keep_session(SSL *ssl, SSL_SESSION *s)
{
    SSL_SESSION_free(last_session);
    last_session = s;
    return 1;
}

/* Server and client contexts live across rows so a ticket can be used by the next one. */
static SSL_CTX *server_ctx, *client_ctx;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int run(const struct row *r)
{
    if (!r->resume) {
        SSL_CTX_free(client_ctx);
        SSL_CTX_free(server_ctx);
        client_ctx = mock_client_ctx();
        server_ctx = mock_server_ctx(r->cert);
        if (client_ctx == NULL || server_ctx == NULL)
            return 0;
        SSL_CTX_set_session_cache_mode(client_ctx, SSL_SESS_CACHE_CLIENT);
        SSL_CTX_sess_set_new_cb(client_ctx, keep_session);
        SSL_CTX_set_max_early_data(server_ctx, UINT32_MAX);
    }
    SSL_CTX *cctx = client_ctx, *sctx = server_ctx;
    struct mock_pair p;
    int ok = 0;
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    if (!SSL_CTX_set_ciphersuites(cctx, r->suites) || !SSL_CTX_set_ciphersuites(sctx, r->suites) ||
        !SSL_CTX_set1_groups_list(cctx, r->client_groups) ||
        !SSL_CTX_set1_groups_list(sctx, r->server_groups) || !mock_pair_init(&p, cctx, sctx) ||
        !SSL_set1_host(p.client.ssl, "localhost") ||
        !SSL_set_tlsext_host_name(p.client.ssl, "localhost"))
        goto out;
    if (r->resume) {
        if (last_session == NULL || !SSL_set_session(p.client.ssl, last_session))
            goto out;
        SSL_set_quic_early_data_enabled(p.client.ssl, 1);
        SSL_set_quic_early_data_enabled(p.server.ssl, 1);
    }
    double t0 = now_us();
    ok = mock_handshake(&p, 0);
    double t1 = now_us();
    const unsigned char *alpn = NULL;
    unsigned int alpn_len = 0;
    SSL_get0_alpn_selected(p.client.ssl, &alpn, &alpn_len);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(p.client.ssl);
    int group = SSL_get_negotiated_group(p.client.ssl);
    int early = SSL_get_early_data_status(p.client.ssl) == SSL_EARLY_DATA_ACCEPTED;
    if (r->resume)
        ok = ok && SSL_session_reused(p.client.ssl) && early;
    printf("%-18s %-9s %-29s %-11s %-4.*s %-7s %-7s %-5s %8.0f  %s\n", r->what, r->cert,
           cipher ? SSL_CIPHER_get_name(cipher) : "-", group ? OBJ_nid2sn(group) : "-",
           (int)alpn_len, alpn ? (const char *)alpn : "-",
           SSL_get_verify_result(p.client.ssl) == X509_V_OK ? "ok" : "FAILED",
           SSL_session_reused(p.client.ssl) ? "yes" : "no", early ? "yes" : "no", t1 - t0,
           ok ? "complete" : "FAILED");
    mock_pair_free(&p);
out:
    if (!ok)
        ERR_print_errors_fp(stdout);
    return ok;
}

int main(void)
{
    static const struct row rows[] = {
        {"1-RTT", "ecdsa256", "TLS_AES_128_GCM_SHA256", "X25519", "X25519", 0},
        {"1-RTT", "ecdsa384", "TLS_AES_256_GCM_SHA384", "P-256", "P-256", 0},
        {"1-RTT", "rsa", "TLS_CHACHA20_POLY1305_SHA256", "P-384", "P-384", 0},
        {"1-RTT", "ed25519", "TLS_AES_128_CCM_SHA256", "X448", "X448", 0},
        {"HelloRetryRequest", "ecdsa256", "TLS_AES_128_GCM_SHA256", "X25519:P-256", "P-256", 0},
        {"resumed + 0-RTT", "ecdsa256", "TLS_AES_128_GCM_SHA256", "X25519:P-256", "X25519", 1},
    };
    int failed = 0;
    printf("%-18s %-9s %-29s %-11s %-4s %-7s %-7s %-5s %8s  %s\n", "handshake", "cert", "suite",
           "group", "alpn", "verify", "resumed", "0-RTT", "time(us)", "result");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        failed += !run(&rows[i]);
    printf("%s\n", failed ? "some handshakes FAILED" : "all handshakes completed");
    SSL_SESSION_free(last_session);
    SSL_CTX_free(client_ctx);
    SSL_CTX_free(server_ctx);
    return failed != 0;
}
