/*
 * Shared set-up for the libFuzzer targets: certificates from $QTLS_CERTS
 * (default QTLS_FUZZ_CERTS, build-fuzz/certs), contexts made once per
 * process, and one mock_quic side per SSL (QUIC) or one SSL on two memory
 * BIOs (TLS over TCP, fuzz_record) so that every input starts clean and frees
 * everything it made (LeakSanitizer runs after each input).
 */
#ifndef QTLS_FUZZ_COMMON_H
#define QTLS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
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

/* The settings of configuration `cfg` on a context of either transport; `max_early` is what a
 * server's tickets allow when FUZZ_EARLY is set. */
static inline int fuzz_ctx_configure(SSL_CTX *c, int server, unsigned cfg, uint32_t max_early)
{
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
        if (cfg & FUZZ_EARLY)
            ok = ok && SSL_CTX_set_max_early_data(c, max_early);
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
    return ok;
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
    /* a QUIC server's tickets allow 0-RTT only with this limit */
    if (!fuzz_ctx_configure(c, server, cfg, 0xffffffff)) {
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

/* ------------------------------------------------------------------ */
/* TLS over TCP: fuzz_record and its seeds                             */
/* ------------------------------------------------------------------ */

/*
 * fuzz_record's input (fuzz/gen_seeds.c writes it from real handshakes):
 *
 *   [cfg]  a configuration above (suites, certificates, client certificate, HelloRetryRequest,
 *          resumption, 0-RTT, ticket callback);
 *   [opt]  the role and how the application drives the SSL (FUZZ_TCP_* below);
 *   then segments, each [ctl] [length, 2 bytes] [length bytes] (truncated at the end of the
 *   input): the bytes the peer sent, appended to the SSL's rbio (a memory BIO) as they come,
 *   in pieces of any size, so that records arrive whole, split or several at once; after each
 *   the SSL under test runs (fuzz_tcp_step) as `ctl` says (FUZZ_SEG_*).
 *
 * The SSL runs SSL_do_handshake (a server with FUZZ_EARLY SSL_read_early_data first, a client
 * with FUZZ_EARLY | FUZZ_RESUME SSL_write_early_data before anything), then SSL_read until it
 * wants more input, each call bounded; its output goes to a memory BIO that is emptied. It
 * stops at its first failure, or when SSL_read says the peer closed (answering close_notify
 * with SSL_shutdown). The fuzzing build's record protection is transparent (crypto.c), so the
 * records past the ServerHello are read as the peer wrote them. A few answers that libssl's
 * API guarantees are checked (abort): SSL_peek then SSL_read agree, SSL_write takes all,
 * SSL_key_update is reported by SSL_get_key_update_type, SSL_pending implies SSL_has_pending,
 * nothing is read after close_notify and nothing written after SSL_shutdown.
 */
enum {
    FUZZ_TCP_SERVER = 1,           /* opt: the SSL under test is the server */
    FUZZ_TCP_READ_AHEAD = 2,       /* SSL_set_read_ahead */
    FUZZ_TCP_NO_AUTO_RETRY = 4,    /* SSL_MODE_AUTO_RETRY cleared (set by default) */
    FUZZ_TCP_RELEASE_BUFFERS = 8,  /* SSL_MODE_RELEASE_BUFFERS */
    FUZZ_TCP_EOF = 16,             /* the rbio ends with the input (else it wants more) */
    FUZZ_TCP_SHUTDOWN = 32,        /* SSL_shutdown when the input is used up */
    FUZZ_TCP_NO_MIDDLEBOX = 64,    /* SSL_OP_ENABLE_MIDDLEBOX_COMPAT cleared (set by default) */
    FUZZ_TCP_IGNORE_EOF = 128      /* SSL_OP_IGNORE_UNEXPECTED_EOF */
};

enum {
    FUZZ_SEG_SIZE = 3,             /* ctl bits 0-1: the size of reads (fuzz_tcp_read_sizes; the
                                      odd ones with SSL_read_ex / SSL_peek_ex) and of the
                                      message FUZZ_SEG_WRITE writes (fuzz_tcp_write_sizes) */
    FUZZ_SEG_PEEK = 4,             /* SSL_peek before each SSL_read (which must agree) */
    FUZZ_SEG_ECHO = 8,             /* SSL_write what each SSL_read returned; during the
                                      handshake, SSL_read drives it (not SSL_do_handshake) */
    FUZZ_SEG_WRITE = 16,           /* after reading: SSL_write a message (during the handshake
                                      too: SSL_write drives it; a 0-RTT client's is early
                                      data, fuzz_tcp_write_message) */
    FUZZ_SEG_KEY_UPDATE = 0x60,    /* before reading, bits 5-6: SSL_key_update, not requested
                                      (0x20), requested (0x40), requested and sent at once by
                                      SSL_do_handshake (0x60) */
    FUZZ_SEG_SHUTDOWN = 128        /* at the end: SSL_shutdown; later steps wait for the peer's */
};

#define FUZZ_TCP_MAX_CALLS 2048 /* SSL calls per step: every path is bounded */
#define FUZZ_TCP_MAX_WAITS 8    /* want-reads in a row while input waits (no AUTO_RETRY) */
#define FUZZ_TCP_BIG 20000      /* the largest message: two records */

static const int fuzz_tcp_read_sizes[4] = {16384, 1, 13, 700};
static const uint8_t fuzz_tcp_message[] = "qtls fuzz_record: application data";
static const size_t fuzz_tcp_write_sizes[4] = {sizeof(fuzz_tcp_message), 1, 700, FUZZ_TCP_BIG};

/* What the SSL under test went through, from the message callback and its calls. */
struct fuzz_tcp_facts {
    unsigned hs_in[32];      /* handshake messages received, by type */
    unsigned alerts_in;      /* alerts received */
    size_t app_read;         /* bytes SSL_read returned */
    size_t early_read;       /* server: bytes SSL_read_early_data returned */
    size_t early_written;    /* client: bytes SSL_write_early_data took */
    int done;                /* the handshake completed */
    int resumed;             /* SSL_session_reused */
    int early_status;        /* SSL_get_early_data_status */
    int peer_cert;           /* a peer certificate */
    int close_notify;        /* SSL_get_shutdown says the peer's close_notify came */
    int shutdown_done;       /* SSL_shutdown returned 1 */
};

struct fuzz_tcp {
    SSL *ssl;
    BIO *in, *out;    /* its rbio (what the peer sent) and wbio, memory BIOs it owns */
    unsigned cfg, opt;
    int keep_output;  /* gen_seeds: the output stays in `out` for the peer */
    int stopped;      /* failed, or closed: nothing more is called */
    int early_over;   /* server: SSL_read_early_data is done with */
    int shutting;     /* SSL_shutdown sent close_notify: later steps call it again */
    struct fuzz_tcp_facts f;
};

static inline void fuzz_tcp_msg_cb(int write_p, int version, int content_type, const void *buf,
                                   size_t len, SSL *ssl, void *arg)
{
    struct fuzz_tcp *t = arg;
    const uint8_t *p = buf;
    if (write_p || t == NULL || len == 0)
        return;
    if (content_type == SSL3_RT_HANDSHAKE && p[0] < 32)
        t->f.hs_in[p[0]]++;
    else if (content_type == SSL3_RT_ALERT)
        t->f.alerts_in++;
}

/* The TCP context of a role and configuration (no QUIC method), made once per process. */
static inline SSL_CTX *fuzz_tcp_ctx(int server, unsigned cfg)
{
    static SSL_CTX *ctx[2][FUZZ_CONFIGS];
    cfg %= FUZZ_CONFIGS;
    if (server) /* as fuzz_ctx: the one context whose ticket key opens the resumable session */
        cfg &= ~(unsigned)FUZZ_RESUME;
    if (ctx[server][cfg] != NULL)
        return ctx[server][cfg];
    fuzz_set_certs();
    SSL_CTX *c = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    int ok = c != NULL;
    if (ok && server) {
        char pem[64], key[64];
        snprintf(pem, sizeof(pem), "%s.pem", fuzz_server_cert(cfg));
        snprintf(key, sizeof(key), "%s.key", fuzz_server_cert(cfg));
        ok = SSL_CTX_use_certificate_chain_file(c, mock_cert_path(pem)) == 1 &&
             SSL_CTX_use_PrivateKey_file(c, mock_cert_path(key), SSL_FILETYPE_PEM) == 1;
    } else if (ok) {
        /* Verify for real: the certificate chain path is part of what is fuzzed. */
        ok = SSL_CTX_load_verify_locations(c, mock_cert_path("ca.pem"), NULL);
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    }
    /* over TCP a ticket allows what the server reads (recv_max_early_data, 16384) */
    if (!ok || !fuzz_ctx_configure(c, server, cfg, 16384)) {
        ERR_print_errors_fp(stderr); /* certificates missing: scripts/gen-certs.sh, QTLS_CERTS */
        abort();
    }
    return ctx[server][cfg] = c;
}

static inline SSL_SESSION *fuzz_tcp_resumable_session(unsigned cfg);

/* A TCP SSL of the configuration and options on two fresh memory BIOs. */
static inline void fuzz_tcp_new(struct fuzz_tcp *t, unsigned cfg, unsigned opt)
{
    int server = (opt & FUZZ_TCP_SERVER) != 0;
    cfg %= FUZZ_CONFIGS;
    /* A resuming server's ticket key must exist before the ClientHello comes (fuzz_ssl_new_cfg) */
    if (server && (cfg & FUZZ_RESUME))
        (void)fuzz_tcp_resumable_session(cfg);
    memset(t, 0, sizeof(*t));
    t->cfg = cfg;
    t->opt = opt;
    t->ssl = SSL_new(fuzz_tcp_ctx(server, cfg));
    t->in = BIO_new(BIO_s_mem());
    t->out = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->in == NULL || t->out == NULL)
        abort();
    SSL_set_bio(t->ssl, t->in, t->out); /* the SSL owns both */
    SSL_set_msg_callback(t->ssl, fuzz_tcp_msg_cb);
    SSL_set_msg_callback_arg(t->ssl, t);
    if (server) {
        SSL_set_accept_state(t->ssl);
    } else {
        SSL_set_connect_state(t->ssl);
        SSL_set_tlsext_host_name(t->ssl, "localhost");
        if ((cfg & FUZZ_RESUME) && !SSL_set_session(t->ssl, fuzz_tcp_resumable_session(cfg)))
            abort();
    }
    if (opt & FUZZ_TCP_READ_AHEAD)
        SSL_set_read_ahead(t->ssl, 1);
    if (opt & FUZZ_TCP_NO_AUTO_RETRY)
        SSL_clear_mode(t->ssl, SSL_MODE_AUTO_RETRY);
    if (opt & FUZZ_TCP_RELEASE_BUFFERS)
        SSL_set_mode(t->ssl, SSL_MODE_RELEASE_BUFFERS);
    if (opt & FUZZ_TCP_NO_MIDDLEBOX)
        SSL_clear_options(t->ssl, SSL_OP_ENABLE_MIDDLEBOX_COMPAT);
    if (opt & FUZZ_TCP_IGNORE_EOF)
        SSL_set_options(t->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
}

/* The facts SSL_* report, then the SSL (and its BIOs) freed. */
static inline void fuzz_tcp_free(struct fuzz_tcp *t)
{
    t->f.done = SSL_is_init_finished(t->ssl);
    t->f.resumed = SSL_session_reused(t->ssl);
    t->f.early_status = SSL_get_early_data_status(t->ssl);
    t->f.peer_cert = SSL_get0_peer_certificate(t->ssl) != NULL;
    t->f.close_notify = (SSL_get_shutdown(t->ssl) & SSL_RECEIVED_SHUTDOWN) != 0;
    SSL_free(t->ssl);
    t->ssl = NULL;
    ERR_clear_error();
}

/* After a call that returned r <= 0: 1 if it waits for input (want-read), else 0, stopped. */
static inline int fuzz_tcp_wants_input(struct fuzz_tcp *t, int r)
{
    int want = SSL_get_error(t->ssl, r) == SSL_ERROR_WANT_READ;
    ERR_clear_error();
    if (!want)
        t->stopped = 1;
    return want;
}

/* Is some of the peer's input still unread, in the rbio or the SSL? */
static inline int fuzz_tcp_input_waits(struct fuzz_tcp *t)
{
    return BIO_ctrl_pending(t->in) > 0 || SSL_has_pending(t->ssl);
}

static inline void fuzz_tcp_drain(struct fuzz_tcp *t)
{
    if (!t->keep_output)
        (void)BIO_reset(t->out);
}

static inline void fuzz_tcp_write(struct fuzz_tcp *t, const void *p, size_t n)
{
    ERR_clear_error();
    int r = SSL_write(t->ssl, p, (int)n);
    if (r <= 0)
        (void)fuzz_tcp_wants_input(t, r); /* a memory wbio never refuses: want-read or failed */
    else if ((size_t)r != n)
        abort(); /* SSL_write(3): all of it, without SSL_MODE_ENABLE_PARTIAL_WRITE */
    fuzz_tcp_drain(t);
}

/*
 * The message FUZZ_SEG_WRITE writes, of the size ctl says; a 0-RTT client during the handshake
 * writes it as early data (SSL_write_early_data), the largest size as much as its ticket
 * still allows (so that a seed holds the server's whole recv_max_early_data).
 */
static inline void fuzz_tcp_write_message(struct fuzz_tcp *t, uint8_t ctl)
{
    static uint8_t big[FUZZ_TCP_BIG];
    size_t n = fuzz_tcp_write_sizes[ctl & FUZZ_SEG_SIZE];
    const uint8_t *p = fuzz_tcp_message;
    if (n != sizeof(fuzz_tcp_message)) {
        for (size_t i = 0; i < n; i++)
            big[i] = fuzz_tcp_message[i % (sizeof(fuzz_tcp_message) - 1)];
        p = big;
    }
    if ((t->opt & FUZZ_TCP_SERVER) || !(t->cfg & FUZZ_EARLY) || !(t->cfg & FUZZ_RESUME) ||
        SSL_is_init_finished(t->ssl)) {
        fuzz_tcp_write(t, p, n);
        return;
    }
    const SSL_SESSION *sess = SSL_get_session(t->ssl);
    size_t max = sess != NULL ? SSL_SESSION_get_max_early_data(sess) : 0, w = 0;
    if (n == FUZZ_TCP_BIG)
        n = max > t->f.early_written ? max - t->f.early_written : 0;
    ERR_clear_error();
    if (n > 0 && SSL_write_early_data(t->ssl, p, n, &w) == 1) {
        if (w != n)
            abort(); /* SSL_write_early_data(3): all of it */
        t->f.early_written += w;
    }
    ERR_clear_error(); /* refused: the handshake says whether the connection failed */
    fuzz_tcp_drain(t);
}

/* SSL_shutdown: sends close_notify first, then waits for the peer's. */
static inline void fuzz_tcp_shutdown(struct fuzz_tcp *t)
{
    ERR_clear_error();
    int r = SSL_shutdown(t->ssl);
    fuzz_tcp_drain(t);
    if (r == 1) {
        t->f.shutdown_done = 1;
        t->stopped = 1;
    } else if (r == 0) {
        t->shutting = 1; /* close_notify sent; the peer's has not come */
    } else if (!t->shutting || !fuzz_tcp_wants_input(t, r)) {
        ERR_clear_error();
        t->stopped = 1;
    }
    if (t->shutting || t->f.shutdown_done) {
        /* SSL_write(3): nothing goes after close_notify */
        ERR_clear_error();
        if (SSL_write(t->ssl, "x", 1) > 0)
            abort();
        ERR_clear_error();
        fuzz_tcp_drain(t);
    }
}

/* The handshake as far as the input goes: 1 done, 0 not yet (or stopped). */
static inline int fuzz_tcp_handshake(struct fuzz_tcp *t)
{
    static uint8_t buf[512];
    int server = (t->opt & FUZZ_TCP_SERVER) != 0;
    for (int i = 0; i < FUZZ_TCP_MAX_CALLS && !t->stopped; i++) {
        if (SSL_is_init_finished(t->ssl))
            return 1;
        ERR_clear_error();
        if (server && (t->cfg & FUZZ_EARLY) && !t->early_over) {
            size_t n = 0;
            int r = SSL_read_early_data(t->ssl, buf, sizeof(buf), &n);
            fuzz_tcp_drain(t);
            if (r == SSL_READ_EARLY_DATA_SUCCESS) {
                t->f.early_read += n;
                continue;
            }
            if (r == SSL_READ_EARLY_DATA_FINISH) {
                t->early_over = 1;
                continue;
            }
            (void)fuzz_tcp_wants_input(t, r); /* ERROR: want-read, or a failure */
            return 0;
        }
        int r = SSL_do_handshake(t->ssl);
        fuzz_tcp_drain(t);
        if (r == 1)
            return 1;
        (void)fuzz_tcp_wants_input(t, r);
        return 0;
    }
    return 0;
}

/* SSL_read or SSL_read_ex (peek: SSL_peek or SSL_peek_ex): bytes, 0 or -1 as SSL_read. */
static inline int fuzz_tcp_read_call(SSL *ssl, uint8_t *buf, int size, int ex, int peek)
{
    size_t n = 0;
    if (!ex)
        return peek ? SSL_peek(ssl, buf, size) : SSL_read(ssl, buf, size);
    int ok = peek ? SSL_peek_ex(ssl, buf, (size_t)size, &n)
                  : SSL_read_ex(ssl, buf, (size_t)size, &n);
    if (ok != (n > 0))
        abort(); /* SSL_read_ex(3): 1 with at least a byte, else 0 */
    if (ok)
        return (int)n;
    /* the int form's 0 (the peer closed) or -1, as SSL_get_error tells them apart */
    return SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

/* SSL_read (and SSL_peek) until the input is used up, the peer closed or a failure. */
static inline void fuzz_tcp_read(struct fuzz_tcp *t, uint8_t ctl)
{
    static uint8_t buf[16384], peeked[16384];
    int size = fuzz_tcp_read_sizes[ctl & FUZZ_SEG_SIZE], ex = ctl & 1, waits = 0;
    for (int i = 0; i < FUZZ_TCP_MAX_CALLS && !t->stopped; i++) {
        int p = 0;
        if (ctl & FUZZ_SEG_PEEK) {
            ERR_clear_error();
            p = fuzz_tcp_read_call(t->ssl, peeked, size, ex, 1);
            fuzz_tcp_drain(t);
            ERR_clear_error(); /* a failure: SSL_read says the same */
        }
        ERR_clear_error();
        int r = fuzz_tcp_read_call(t->ssl, buf, size, ex, 0);
        fuzz_tcp_drain(t);
        /* SSL_peek(3): what it returned is what the next read returns */
        if (p > 0 && (r != p || memcmp(buf, peeked, (size_t)p) != 0))
            abort();
        if (r > 0) {
            t->f.app_read += (size_t)r;
            waits = 0;
            if (SSL_pending(t->ssl) > 0 && !SSL_has_pending(t->ssl))
                abort(); /* SSL_has_pending(3): pending bytes are pending */
            if (ctl & FUZZ_SEG_ECHO)
                fuzz_tcp_write(t, buf, (size_t)r);
            continue;
        }
        if (r == 0) { /* the peer closed: close_notify answered, as applications do */
            int closed = SSL_get_error(t->ssl, r) == SSL_ERROR_ZERO_RETURN;
            ERR_clear_error();
            if (closed) {
                if (SSL_read(t->ssl, buf, size) > 0)
                    abort(); /* nothing after close_notify */
                ERR_clear_error();
                fuzz_tcp_shutdown(t);
            }
            t->stopped = 1;
            return;
        }
        if (!fuzz_tcp_wants_input(t, r))
            return;
        /* want-read: without SSL_MODE_AUTO_RETRY after each post-handshake message, so again
           while input waits */
        if (!fuzz_tcp_input_waits(t) || ++waits >= FUZZ_TCP_MAX_WAITS)
            return;
    }
}

/*
 * One step of the SSL under test, after the peer's bytes (if any) were appended to its rbio:
 * SSL_key_update if ctl says, the handshake, SSL_read; then SSL_write and SSL_shutdown if ctl
 * says. A step once SSL_shutdown sent close_notify calls SSL_shutdown again.
 */
static inline void fuzz_tcp_step(struct fuzz_tcp *t, uint8_t ctl)
{
    if (t->stopped)
        return;
    int ku = ctl & FUZZ_SEG_KEY_UPDATE;
    if (ku != 0 && !t->shutting) {
        int type = ku == 0x20 ? SSL_KEY_UPDATE_NOT_REQUESTED : SSL_KEY_UPDATE_REQUESTED;
        ERR_clear_error();
        /* refused during the handshake (SSL_R_STILL_IN_INIT) */
        if (SSL_key_update(t->ssl, type) == 1 && SSL_get_key_update_type(t->ssl) != type)
            abort(); /* SSL_get_key_update_type(3): the update waiting to go */
        if (ku == 0x60) { /* SSL_key_update(3): SSL_do_handshake sends it now */
            ERR_clear_error();
            int r = SSL_do_handshake(t->ssl);
            fuzz_tcp_drain(t);
            if (r != 1)
                (void)fuzz_tcp_wants_input(t, r);
        }
        ERR_clear_error();
    }
    /* ECHO during the handshake: SSL_read drives it (a server after SSL_read_early_data) */
    int implicit = (ctl & FUZZ_SEG_ECHO) &&
                   (t->early_over || !(t->opt & FUZZ_TCP_SERVER) || !(t->cfg & FUZZ_EARLY));
    if (t->shutting)
        fuzz_tcp_shutdown(t);
    else if (!t->stopped && (implicit || fuzz_tcp_handshake(t)))
        fuzz_tcp_read(t, ctl);
    if (!t->stopped && !t->shutting && (ctl & FUZZ_SEG_WRITE))
        fuzz_tcp_write_message(t, ctl);
    if (!t->stopped && !t->shutting && (ctl & FUZZ_SEG_SHUTDOWN))
        fuzz_tcp_shutdown(t);
    ERR_clear_error();
}

/* Before any input: a 0-RTT client writes early data (its ClientHello goes first), then the
   first step (a client's ClientHello). */
static inline void fuzz_tcp_start(struct fuzz_tcp *t)
{
    if (!(t->opt & FUZZ_TCP_SERVER) && (t->cfg & FUZZ_EARLY) && (t->cfg & FUZZ_RESUME)) {
        size_t n = 0;
        ERR_clear_error();
        if (SSL_write_early_data(t->ssl, fuzz_tcp_message, sizeof(fuzz_tcp_message), &n) == 1)
            t->f.early_written += n;
        ERR_clear_error();
        fuzz_tcp_drain(t);
    }
    fuzz_tcp_step(t, 0);
}

/* The input is used up: the rbio ends (FUZZ_TCP_EOF), SSL_shutdown (FUZZ_TCP_SHUTDOWN). */
static inline void fuzz_tcp_finish(struct fuzz_tcp *t)
{
    if (t->opt & FUZZ_TCP_EOF) {
        BIO_set_mem_eof_return(t->in, 0);
        fuzz_tcp_step(t, 0);
    }
    /* as applications do, also after a failure (it must refuse cleanly) */
    if ((t->opt & FUZZ_TCP_SHUTDOWN) && !t->f.shutdown_done) {
        t->stopped = 0;
        fuzz_tcp_shutdown(t);
        if (t->shutting && !t->stopped)
            fuzz_tcp_shutdown(t);
    }
    ERR_clear_error();
}

/* fuzz_record: one input played against a fresh SSL; its facts in *f if f is not NULL. */
static inline void fuzz_tcp_play(const uint8_t *data, size_t size, struct fuzz_tcp_facts *f)
{
    struct fuzz_tcp t;
    if (size < 2)
        return;
    fuzz_tcp_new(&t, data[0], data[1]);
    data += 2;
    size -= 2;
    fuzz_tcp_start(&t);
    while (size >= 3 && !t.stopped) {
        uint8_t ctl = data[0];
        size_t n = (size_t)data[1] << 8 | data[2];
        data += 3;
        size -= 3;
        if (n > size)
            n = size;
        if (n > 0 && BIO_write(t.in, data, (int)n) != (int)n)
            abort();
        data += n;
        size -= n;
        fuzz_tcp_step(&t, ctl);
    }
    fuzz_tcp_finish(&t);
    fuzz_tcp_free(&t);
    if (f != NULL)
        *f = t.f;
}

/*
 * Two TCP SSLs talking: what each wrote goes to the other as one segment (with the ctl of its
 * direction), then the other steps, until neither writes. `on_segment`, if set, sees each
 * segment as the receiver's input records it (gen_seeds).
 */
typedef void (*fuzz_tcp_segment_fn)(void *arg, const struct fuzz_tcp *to, uint8_t ctl,
                                    const uint8_t *p, size_t n);

static inline size_t fuzz_tcp_deliver(struct fuzz_tcp *from, struct fuzz_tcp *to, uint8_t ctl,
                                      fuzz_tcp_segment_fn on_segment, void *arg)
{
    char *p = NULL;
    long n = BIO_get_mem_data(from->out, &p);
    if (n <= 0)
        return 0;
    if (n > 0xffff || BIO_write(to->in, p, (int)n) != (int)n)
        abort(); /* a segment's length is 16 bits */
    if (on_segment != NULL)
        on_segment(arg, to, ctl, (const uint8_t *)p, (size_t)n);
    (void)BIO_reset(from->out);
    fuzz_tcp_step(to, ctl);
    return (size_t)n;
}

static inline void fuzz_tcp_pump(struct fuzz_tcp *a, struct fuzz_tcp *b, uint8_t ctl_to_a,
                                 uint8_t ctl_to_b, fuzz_tcp_segment_fn on_segment, void *arg)
{
    for (int round = 0; round < 64; round++)
        if (fuzz_tcp_deliver(a, b, ctl_to_b, on_segment, arg) +
                fuzz_tcp_deliver(b, a, ctl_to_a, on_segment, arg) == 0)
            return;
}

/* The session the TCP client of `cfg` resumes: from a whole handshake run once per process. */
static inline SSL_SESSION *fuzz_tcp_resumable_session(unsigned cfg)
{
    static SSL_SESSION *sessions[FUZZ_CONFIGS];
    cfg = cfg % FUZZ_CONFIGS & ~(unsigned)FUZZ_RESUME;
    if (sessions[cfg] != NULL)
        return sessions[cfg];
    struct fuzz_tcp c, s;
    fuzz_tcp_new(&c, cfg, 0);
    fuzz_tcp_new(&s, cfg, FUZZ_TCP_SERVER);
    c.keep_output = s.keep_output = 1;
    fuzz_tcp_start(&c);
    fuzz_tcp_pump(&c, &s, 0, 0, NULL, NULL);
    SSL_SESSION *sess = SSL_get1_session(c.ssl);
    int ok = sess != NULL && SSL_is_init_finished(c.ssl) &&
             c.f.hs_in[SSL3_MT_NEWSESSION_TICKET] > 0 && SSL_SESSION_is_resumable(sess) &&
             (!(cfg & FUZZ_EARLY) || SSL_SESSION_get_max_early_data(sess) > 0);
    fuzz_tcp_free(&c);
    fuzz_tcp_free(&s);
    if (!ok) {
        fprintf(stderr, "fuzz: the TCP handshake of configuration %u gave no resumable session\n",
                cfg);
        abort();
    }
    return sessions[cfg] = sess;
}

#endif
