/*
 * One SSL_CTX per role shared by threads, everything a server does at once:
 * full handshakes with client certificates both ways (each context's
 * decoded-certificate cache), resumptions with 0-RTT through the shared
 * anti-replay filter, and ticket-key rotation on a thread of its own. Made
 * for make check SANITIZE=thread (ThreadSanitizer), and checked in every
 * build: no handshake fails, no ticket's 0-RTT is accepted twice, and
 * resumption still happens while keys rotate. Counts are checked on the
 * main thread (cmocka is not thread-safe).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <time.h>

#include <openssl/err.h>

#include "internal.h"
#include "mock_quic.h"

#define WORKERS 4
#define ROUNDS 12
#define ROTATIONS 20

struct shared {
    SSL_CTX *cctx, *sctx;
    int stop_rotating;
};

struct run {
    struct shared *sh;
    int handshakes, failures, resumed, early_accepted, replays_accepted;
};

static int setup(void **state)
{
    static struct shared sh;
    memset(&sh, 0, sizeof(sh));
    sh.cctx = mock_client_ctx();
    sh.sctx = mock_server_ctx("ecdsa256");
    if (sh.cctx == NULL || sh.sctx == NULL)
        return -1;
    /* client certificates, verified, both ways: each context's certificate cache is used */
    SSL_CTX_set_verify(sh.cctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_verify(sh.sctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (SSL_CTX_load_verify_locations(sh.sctx, mock_cert_path("ca.pem"), NULL) != 1 ||
        SSL_CTX_use_certificate_chain_file(sh.cctx, mock_cert_path("client.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(sh.cctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM) != 1)
        return -1;
    SSL_CTX_set_max_early_data(sh.sctx, UINT32_MAX);
    *state = &sh;
    return 0;
}

static int teardown(void **state)
{
    struct shared *sh = *state;
    SSL_CTX_free(sh->cctx);
    SSL_CTX_free(sh->sctx);
    return 0;
}

/* One connection, offering `s` when not NULL; 1 if it completed. *out gets the new session. */
static int connect_once(struct run *r, SSL_SESSION *s, SSL_SESSION **out, int *reused,
                        int *early)
{
    struct mock_pair p;
    int ok = mock_pair_init(&p, r->sh->cctx, r->sh->sctx);
    if (ok) {
        SSL_set_tlsext_host_name(p.client.ssl, "localhost");
        SSL_set_quic_early_data_enabled(p.client.ssl, 1);
        SSL_set_quic_early_data_enabled(p.server.ssl, 1);
        ok = (s == NULL || SSL_set_session(p.client.ssl, s) == 1) && mock_handshake(&p, 0);
    }
    if (ok) {
        *reused = SSL_session_reused(p.client.ssl);
        *early = SSL_get_early_data_status(p.client.ssl) == SSL_EARLY_DATA_ACCEPTED;
        if (out != NULL)
            *out = SSL_get1_session(p.client.ssl);
    }
    mock_pair_free(&p);
    ERR_clear_error();
    r->handshakes++;
    r->failures += !ok;
    return ok;
}

/* Full handshake, then its ticket offered twice with 0-RTT: the second use is a replay. */
static void *worker(void *arg)
{
    struct run *r = arg;
    for (int i = 0; i < ROUNDS; i++) {
        SSL_SESSION *s = NULL;
        int reused, early;
        if (!connect_once(r, NULL, &s, &reused, &early) || s == NULL)
            continue;
        if (connect_once(r, s, NULL, &reused, &early)) {
            r->resumed += reused;
            r->early_accepted += early;
            /* RFC 8446 §8.2: the filter refuses a second 0-RTT with the same ticket */
            if (early && connect_once(r, s, NULL, &reused, &early))
                r->replays_accepted += early;
        }
        SSL_SESSION_free(s);
    }
    return NULL;
}

static void *rotator(void *arg)
{
    struct shared *sh = arg;
    for (int i = 0; i < ROTATIONS && !__atomic_load_n(&sh->stop_rotating, __ATOMIC_ACQUIRE);
         i++) {
        ticket_keys_test_rotate(sh->sctx);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void handshakes_resumptions_replays_and_rotation_at_once(void **state)
{
    struct shared *sh = *state;
    struct run runs[WORKERS];
    pthread_t th[WORKERS], rot;
    assert_int_equal(pthread_create(&rot, NULL, rotator, sh), 0);
    for (int i = 0; i < WORKERS; i++) {
        runs[i] = (struct run){.sh = sh};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &runs[i]), 0);
    }
    int handshakes = 0, resumed = 0, early = 0;
    for (int i = 0; i < WORKERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(runs[i].failures, 0);
        assert_int_equal(runs[i].replays_accepted, 0);
        handshakes += runs[i].handshakes;
        resumed += runs[i].resumed;
        early += runs[i].early_accepted;
    }
    __atomic_store_n(&sh->stop_rotating, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(rot, NULL), 0);
    print_message("%d handshakes, %d resumed, %d with 0-RTT accepted\n", handshakes, resumed,
                  early);
    /* a ticket outlives one rotation (the previous key opens it): most resumptions succeed */
    assert_true(resumed > 0);
    assert_true(early > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handshakes_resumptions_replays_and_rotation_at_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
