/*
 * An in-memory QUIC transport for tests: two SSL objects joined through the
 * SSL_QUIC_METHOD callbacks. Each side records what qtls hands it (secrets
 * per level, handshake bytes per level, flushes, alerts) and the pump moves
 * handshake bytes across with any framing.
 */
#ifndef QTLS_TEST_MOCK_QUIC_H
#define QTLS_TEST_MOCK_QUIC_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>
#include "qtls/quic.h"

struct mock_side {
    SSL *ssl;
    /* bytes written by this side, per level, not yet delivered to the peer */
    uint8_t *out[4];
    size_t out_len[4];
    /* secrets installed, from this side's point of view */
    uint8_t read_secret[4][64], write_secret[4][64];
    size_t secret_len[4];
    int have_read[4], have_write[4];
    uint32_t cipher_id_at_secret[4]; /* SSL_get_current_cipher() during the callback */
    int secret_calls;
    int flushes;
    int add_calls;
    /* the last alert sent */
    int alert;
    int alert_level;
    int alerts_sent;
    /* fault injection: make the n-th callback of a kind return 0 (0 = never) */
    int fail_secret_call;
    int fail_add_call;
    /* called inside set_encryption_secrets (e.g. to set transport params there) */
    void (*on_secret)(struct mock_side *side, OSSL_ENCRYPTION_LEVEL level);
    /* ALPN / transport parameters seen at the first add_handshake_data */
    int saw_alpn_at_first_add;
    int saw_peer_tp_at_first_add;
};

struct mock_pair {
    struct mock_side client, server;
};

extern const SSL_QUIC_METHOD mock_quic_method;

/* Path of a generated test certificate file: $QTLS_CERTS/<name>. */
const char *mock_cert_path(const char *name);

/* A client context: QUIC method, ALPN "h3", trusting ca.pem, no verification. */
SSL_CTX *mock_client_ctx(void);
/* A server context with the named certificate (e.g. "ecdsa256") and ALPN select "h3". */
SSL_CTX *mock_server_ctx(const char *cert);

/* Makes both SSLs with transport parameters "client-tp" / "server-tp". */
int mock_pair_init(struct mock_pair *p, SSL_CTX *cctx, SSL_CTX *sctx);
void mock_pair_free(struct mock_pair *p);

/* Delivers everything `from` wrote to `to`, `chunk` bytes per call (0 = all at once, -1 = random). */
int mock_deliver(struct mock_side *from, struct mock_side *to, long chunk);

/*
 * Runs the handshake to completion or failure: 1 if both sides completed
 * and the client processed the post-handshake messages (tickets), 0
 * otherwise. `chunk` as in mock_deliver.
 */
int mock_handshake(struct mock_pair *p, long chunk);

/* Reason of the first error on the queue for ERR_LIB_SSL, 0 if none (queue left as is). */
int mock_first_ssl_reason(void);

#endif
