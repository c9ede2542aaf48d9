/*
 * Shared set-up for the libFuzzer targets: certificates from $QTLS_CERTS
 * (default QTLS_FUZZ_CERTS, build-fuzz/certs), contexts made once per
 * process, and one mock_quic side per SSL so that every input starts clean
 * and frees everything it made (LeakSanitizer runs after each input).
 */
#ifndef QTLS_FUZZ_COMMON_H
#define QTLS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "mock_quic.h"

#ifndef QTLS_FUZZ_CERTS
#define QTLS_FUZZ_CERTS "build-fuzz/certs"
#endif

static inline void fuzz_set_certs(void) { setenv("QTLS_CERTS", QTLS_FUZZ_CERTS, 0); }

/* An SSL on `ctx` bound to `side` (zeroed), client or server, with transport parameters. */
static inline SSL *fuzz_ssl_new(SSL_CTX *ctx, struct mock_side *side, int server)
{
    memset(side, 0, sizeof(*side));
    side->ssl = SSL_new(ctx);
    if (side->ssl == NULL)
        abort();
    SSL_set_app_data(side->ssl, side);
    if (server)
        SSL_set_accept_state(side->ssl);
    else
        SSL_set_connect_state(side->ssl);
    if (!SSL_set_quic_transport_params(side->ssl, (const uint8_t *)"fuzz-tp", 7))
        abort();
    return side->ssl;
}

static inline void fuzz_side_discard_output(struct mock_side *side)
{
    for (int l = 0; l < 4; l++) {
        free(side->out[l]);
        side->out[l] = NULL;
        side->out_len[l] = 0;
    }
}

static inline void fuzz_side_free(struct mock_side *side)
{
    SSL_free(side->ssl);
    fuzz_side_discard_output(side);
    memset(side, 0, sizeof(*side));
    ERR_clear_error();
}

static inline SSL_CTX *fuzz_server_ctx_with(const char *cert)
{
    fuzz_set_certs();
    SSL_CTX *ctx = mock_server_ctx(cert);
    if (ctx == NULL) {
        ERR_print_errors_fp(stderr);
        abort(); /* certificates missing: run scripts/gen-certs.sh, set QTLS_CERTS */
    }
    return ctx;
}

static inline SSL_CTX *fuzz_server_ctx(void) { return fuzz_server_ctx_with("ecdsa256"); }

static inline SSL_CTX *fuzz_client_ctx(void)
{
    fuzz_set_certs();
    SSL_CTX *ctx = mock_client_ctx();
    if (ctx == NULL) {
        ERR_print_errors_fp(stderr);
        abort();
    }
    /* Verify for real: the certificate chain path is part of what is fuzzed. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}


/*
 * Handshake configurations: the first input byte of fuzz_client and
 * fuzz_server picks one, so that the fuzzer reaches each path from a seed
 * of that configuration (fuzz/gen_seeds.c writes one per configuration it
 * uses).
 */
enum {
    FUZZ_CLIENT_AUTH = 1, /* the server requires a client certificate; the client has one */
    FUZZ_HRR = 2,         /* the server takes P-256 only; the client's first share is X25519 */
    FUZZ_EARLY = 4,       /* 0-RTT enabled on both sides */
    FUZZ_RESUME = 8,      /* the client offers a session from a handshake made at start-up */
    FUZZ_TICKET_CB = 16,  /* the server seals tickets through the application's key callback */
    FUZZ_SHA384 = 32,     /* the client offers AES-256-GCM-SHA384 and ChaCha20 only */
    FUZZ_CERT_RSA = 64,   /* the server's certificate (bits 6-7): ECDSA P-256, RSA (PSS), */
    FUZZ_CERT_ED25519 = 128,          /* Ed25519, */
    FUZZ_CERT_P384 = 64 | 128,        /* or ECDSA P-384 */
    FUZZ_CONFIGS = 256
};

static inline const char *fuzz_server_cert(unsigned cfg)
{
    static const char *const names[4] = {"ecdsa256", "rsa", "ed25519", "ecdsa384"};
    return names[(cfg & FUZZ_CERT_P384) >> 6];
}

/* A fleet ticket key of the application (fixed: seeds' tickets open in any process). */
static inline int fuzz_ticket_key_cb(SSL *s, unsigned char key_name[16], unsigned char *iv,
                                     EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx, int enc)
{
    static const unsigned char name[16] = "qtls-fuzz-fleet";
    static unsigned char aes[32] = {7, 7, 7}, mac[32] = {8, 8, 8};
    OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, mac, 32),
                           OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                           OSSL_PARAM_construct_end()};
    if (enc) {
        memcpy(key_name, name, 16);
        memset(iv, 0x11, 16);
        if (!EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv))
            return -1;
    } else {
        if (memcmp(key_name, name, 16) != 0)
            return 0;
        if (!EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv))
            return -1;
    }
    return EVP_MAC_CTX_set_params(hctx, params) ? 1 : -1;
}

/* The context of a role and configuration, made once per process. */
static inline SSL_CTX *fuzz_ctx(int server, unsigned cfg)
{
    static SSL_CTX *ctx[2][FUZZ_CONFIGS];
    cfg %= FUZZ_CONFIGS;
    /* A server's set-up does not depend on FUZZ_RESUME: one context, so the ticket key that
     * sealed the resumable session (fuzz_resumable_session) is the one that opens it. */
    if (server)
        cfg &= ~(unsigned)FUZZ_RESUME;
    if (ctx[server][cfg] != NULL)
        return ctx[server][cfg];
    SSL_CTX *c = server ? fuzz_server_ctx_with(fuzz_server_cert(cfg)) : fuzz_client_ctx();
    int ok = 1;
    if (server) {
        /* Inputs must replay alike: the anti-replay filter would refuse a seed's 0-RTT after
         * its first run (ticket.c's filter has unit tests and the TSan stress test). */
        SSL_CTX_set_options(c, SSL_OP_NO_ANTI_REPLAY);
        if (cfg & FUZZ_CLIENT_AUTH) {
            SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
            ok = SSL_CTX_load_verify_locations(c, mock_cert_path("ca.pem"), NULL);
        }
        if (cfg & FUZZ_HRR)
            ok = ok && SSL_CTX_set1_groups_list(c, "P-256");
        if (cfg & FUZZ_TICKET_CB)
            ok = ok && SSL_CTX_set_tlsext_ticket_key_evp_cb(c, fuzz_ticket_key_cb);
        if (cfg & FUZZ_EARLY) /* a QUIC server's tickets allow 0-RTT only with this limit */
            ok = ok && SSL_CTX_set_max_early_data(c, 0xffffffff);
    } else {
        ok = SSL_CTX_set1_groups_list(c, "X25519:P-256");
        if (cfg & FUZZ_SHA384)
            ok = ok && SSL_CTX_set_ciphersuites(
                           c, "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
        if (cfg & FUZZ_CLIENT_AUTH)
            ok = ok &&
                 SSL_CTX_use_certificate_chain_file(c, mock_cert_path("client.pem")) == 1 &&
                 SSL_CTX_use_PrivateKey_file(c, mock_cert_path("client.key"), SSL_FILETYPE_PEM);
    }
    if (!ok) {
        ERR_print_errors_fp(stderr);
        abort();
    }
    return ctx[server][cfg] = c;
}

static inline SSL *fuzz_ssl_new_cfg(struct mock_side *side, int server, unsigned cfg);

/* The session the client of `cfg` resumes: from a whole handshake run once per process. */
static inline SSL_SESSION *fuzz_resumable_session(unsigned cfg)
{
    static SSL_SESSION *sessions[FUZZ_CONFIGS];
    cfg = cfg % FUZZ_CONFIGS & ~(unsigned)FUZZ_RESUME;
    if (sessions[cfg] != NULL)
        return sessions[cfg];
    struct mock_pair p;
    fuzz_ssl_new_cfg(&p.client, 0, cfg);
    fuzz_ssl_new_cfg(&p.server, 1, cfg);
    if (!mock_handshake(&p, 0) || (sessions[cfg] = SSL_get1_session(p.client.ssl)) == NULL) {
        ERR_print_errors_fp(stderr);
        abort();
    }
    fuzz_side_free(&p.client);
    fuzz_side_free(&p.server);
    return sessions[cfg];
}

/* An SSL of the configuration, bound to `side`. */
static inline SSL *fuzz_ssl_new_cfg(struct mock_side *side, int server, unsigned cfg)
{
    /*
     * A resuming server needs its context's ticket key to exist before the ClientHello
     * comes: it is made when the context seals its first ticket, in the handshake that
     * makes the resumable session (run once per process). The fuzzing build's fixed
     * randomness makes it the key that sealed the seeds' tickets.
     */
    if (server && (cfg & FUZZ_RESUME))
        (void)fuzz_resumable_session(cfg);
    SSL *ssl = fuzz_ssl_new(fuzz_ctx(server, cfg), side, server);
    if (cfg & FUZZ_EARLY)
        SSL_set_quic_early_data_enabled(ssl, 1);
    if (!server) {
        SSL_set_tlsext_host_name(ssl, "localhost");
        if ((cfg & FUZZ_RESUME) && !SSL_set_session(ssl, fuzz_resumable_session(cfg)))
            abort();
    }
    return ssl;
}

/*
 * Plays the peer's side from records: [level (low 2 bits)] [length, 2 bytes] [bytes]
 * (truncated at the end of the input). SSL_do_handshake runs after each record and,
 * once the handshake is done, SSL_process_quic_post_handshake; what the side writes
 * is dropped. Stops at the first failure.
 */
static inline void fuzz_play(struct mock_side *side, const uint8_t *data, size_t size)
{
    int r = SSL_do_handshake(side->ssl);
    if (r != 1 && SSL_get_error(side->ssl, r) != SSL_ERROR_WANT_READ)
        return;
    fuzz_side_discard_output(side);
    while (size >= 3) {
        int level = data[0] & 3;
        size_t n = (size_t)data[1] << 8 | data[2];
        data += 3;
        size -= 3;
        if (n > size)
            n = size;
        if (!SSL_provide_quic_data(side->ssl, (OSSL_ENCRYPTION_LEVEL)level, data, n))
            return;
        data += n;
        size -= n;
        if (SSL_is_init_finished(side->ssl)) {
            if (SSL_process_quic_post_handshake(side->ssl) != 1)
                return;
        } else {
            r = SSL_do_handshake(side->ssl);
            if (r != 1 && SSL_get_error(side->ssl, r) != SSL_ERROR_WANT_READ)
                return;
            if (r == 1 && SSL_process_quic_post_handshake(side->ssl) != 1)
                return;
        }
        fuzz_side_discard_output(side);
    }
}

#endif
