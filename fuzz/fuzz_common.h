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

#include <openssl/err.h>
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

static inline SSL_CTX *fuzz_server_ctx(void)
{
    fuzz_set_certs();
    SSL_CTX *ctx = mock_server_ctx("ecdsa256");
    if (ctx == NULL) {
        ERR_print_errors_fp(stderr);
        abort(); /* certificates missing: run scripts/gen-certs.sh, set QTLS_CERTS */
    }
    return ctx;
}

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

#endif
