/*
 * An in-memory QUIC stack written against OpenSSL 3.5's third-party QUIC API
 * (SSL_set_quic_tls_cbs), as ngtcp2's ossl backend uses it: CRYPTO data goes out at the newest
 * write level yielded and comes in at the newest read level yielded, one record at a time
 * through crypto_recv_rcd, released before the next. It joins another stack35 or a quictls-API
 * mock_side (mock_quic.h), and records what the 3.5 callbacks were given.
 */
#ifndef QTLS_TEST_STACK35_H
#define QTLS_TEST_STACK35_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>
#include "qtls/quic_tls35.h"
#include "mock_quic.h"

struct stack35 {
    SSL *ssl;
    uint32_t rx_level, tx_level; /* the newest yielded (NONE before any) */
    uint8_t *out[4];             /* sent, per level, not yet delivered */
    size_t out_len[4];
    uint8_t *in[4];              /* received, per level, not yet handed to TLS */
    size_t in_len[4], in_off[4];
    size_t record_max; /* crypto_recv_rcd hands at most this many bytes (0: all there is) */
    size_t send_max;   /* crypto_send takes at most this many bytes a call (0: all) */
    int record_out;    /* a record handed over and not released */
    size_t record_len;
    int release_errors; /* release_rcd with a size other than the record's, or none out */
    uint8_t read_secret[4][64], write_secret[4][64];
    size_t read_len[4], write_len[4];
    char yields[128]; /* "w1 r2 w2 ..." in order: direction and level */
    /* yields and sends in one order: "s0 w2 r2 s2 ...", sN a crypto_send taking bytes while
       the newest write level yielded is N (repeats of one token are written once) */
    char events[256];
    int send_zero_first; /* crypto_send takes nothing on every other call, starting at the first */
    int send_calls, want_writes; /* crypto_send calls; SSL_ERROR_WANT_WRITE returns seen */
    uint8_t peer_tp[256];
    size_t peer_tp_len;
    int got_tp_calls;
    int alert, alerts;
    int fail_yield_call; /* make the n-th yield_secret return 0 (0: never) */
    int yield_calls;
    const char *tp_in_got_tp; /* server: set transport parameters inside got_transport_params */
    const char *tp_in_yield;  /* server: ... inside yield_secret(handshake, write), as ngtcp2 */
};

extern const OSSL_DISPATCH stack35_dispatch[];

/* SSL_new on ctx, the role, SSL_set_quic_tls_cbs and transport parameters tp (NULL: none). */
int stack35_init(struct stack35 *s, SSL_CTX *ctx, int server, const char *tp);
void stack35_free(struct stack35 *s);
/* Moves what `from` sent to the peer. */
int stack35_to_stack35(struct stack35 *from, struct stack35 *to);
int stack35_to_mock(struct stack35 *from, struct mock_side *to);
int mock_to_stack35(struct mock_side *from, struct stack35 *to);
/* SSL_do_handshake, then SSL_read for post-handshake messages: 1 done, 0 wants data, -1 failed. */
int stack35_step(struct stack35 *s);
/* Runs two 3.5 stacks to completion: 1 both done, 0 otherwise. */
int stack35_handshake(struct stack35 *c, struct stack35 *s);
/* A 3.5 stack against a quictls-API mock side; `s35_is_client` says which is the client. */
int stack35_handshake_mock(struct stack35 *a, struct mock_side *m, int a_is_client);
/* The context helpers of mock_quic.h without their SSL_QUIC_METHOD (so the 3.5 API may be set). */
SSL_CTX *stack35_client_ctx(void);
SSL_CTX *stack35_server_ctx(const char *cert);

#endif
