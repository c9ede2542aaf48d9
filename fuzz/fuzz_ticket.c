/*
 * A ticket from a ClientHello's pre_shared_key, opened as
 * resumption.c's open_ticket does (ticket_open, then session_decode), with the
 * built-in rotating keys (mode bit 0 clear; the fuzzing build's keys are
 * fixed, so seeds' tickets open) or the application's key callback (set).
 * Mode bit 1: the rest is a session encoding, sealed first, so that the
 * decoder behind a ticket that opens is reached too.
 * Input: mode, then the ticket (or plaintext).
 */
#include <stdio.h>

#include "fuzz_common.h"
#include "internal.h"
#include "session/session.h"

static SSL_SESSION *open_and_decode(SSL *ssl, const uint8_t *t, size_t n)
{
    struct rd r;
    struct wr plain;
    SSL_SESSION *s = NULL;
    wr_init(&plain);
    rd_init(&r, t, n);
    int status = ticket_open(ssl, r, &plain);
    if (status == SSL_TICKET_SUCCESS || status == SSL_TICKET_SUCCESS_RENEW) {
        rd_init(&r, plain.buf, plain.len);
        s = session_decode(r);
    }
    wr_free(&plain);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    struct mock_side server;
    SSL *ssl = fuzz_ssl_new_cfg(&server, 1, mode & 1 ? FUZZ_TICKET_CB : 0);
    SSL_SESSION *s = NULL;
    if (mode & 2) {
        struct wr sealed;
        wr_init(&sealed);
        if (ticket_seal(ssl, data + 1, size - 1, &sealed)) {
            s = open_and_decode(ssl, sealed.buf, sealed.len);
            SSL_SESSION *direct = session_decode((struct rd){data + 1, size - 1});
            if (s == NULL && direct != NULL) {
                fprintf(stderr, "a session that decodes does not survive its ticket\n");
                abort();
            }
            SSL_SESSION_free(direct);
        }
        wr_free(&sealed);
    } else {
        s = open_and_decode(ssl, data + 1, size - 1);
    }
    SSL_SESSION_free(s);
    fuzz_side_free(&server);
    return 0;
}
