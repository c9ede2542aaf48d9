/*
 * One clock (src/clock.c) behind session times, ticket arrival and age,
 * ticket key rotation and the replay filter, pinned through its test hook at
 * second boundaries. The bug this guards against (issue 13): arrival read
 * from clock_gettime but liveness from time(), whose coarse clock lags by a
 * few ms after each second boundary, so a client did not offer a ticket it
 * had just received. The hook runs the clock in 2023 while the machine's is
 * years later: any time read that bypasses clock.c sees the ticket years
 * old, and the resumptions below fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include <openssl/err.h>

#include "internal.h"
#include "base/base.h"
#include "mock_quic.h"

#define SECOND 1000000ull
#define EPOCH (1700000000ull * SECOND) /* 2023-11-14T22:13:20Z */

static uint64_t now_us;

static uint64_t pinned_clock(void) { return now_us; }

struct fixture {
    SSL_CTX *cctx, *sctx;
};

static int setup(void **state)
{
    static struct fixture f;
    f.cctx = mock_client_ctx();
    f.sctx = mock_server_ctx("ecdsa256");
    if (f.cctx == NULL || f.sctx == NULL)
        return -1;
    SSL_CTX_set_max_early_data(f.sctx, UINT32_MAX);
    clock_set_test_clock(pinned_clock);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    clock_set_test_clock(NULL);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    ERR_clear_error();
    return 0;
}

/* A full handshake at `at` µs; returns the client's session, its ticket in it. */
static SSL_SESSION *ticket_at(struct fixture *f, uint64_t at)
{
    struct mock_pair p;
    now_us = at;
    assert_true(mock_pair_init(&p, f->cctx, f->sctx));
    SSL_set_quic_early_data_enabled(p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(p.server.ssl, 1);
    assert_true(mock_handshake(&p, 0));
    SSL_SESSION *s = SSL_get1_session(p.client.ssl);
    assert_non_null(s);
    assert_int_equal(SSL_SESSION_get_time(s), (long)(at / SECOND));
    mock_pair_free(&p);
    return s;
}

/* A connection at `at` µs offering `s` with 0-RTT; 1 if it resumed, with early data accepted. */
static int resumes_at(struct fixture *f, SSL_SESSION *s, uint64_t at)
{
    struct mock_pair p;
    now_us = at;
    assert_true(mock_pair_init(&p, f->cctx, f->sctx));
    assert_int_equal(SSL_set_session(p.client.ssl, s), 1);
    SSL_set_quic_early_data_enabled(p.client.ssl, 1);
    SSL_set_quic_early_data_enabled(p.server.ssl, 1);
    assert_true(mock_handshake(&p, 0));
    int reused = SSL_session_reused(p.client.ssl);
    if (reused)
        assert_int_equal(SSL_get_early_data_status(p.client.ssl), SSL_EARLY_DATA_ACCEPTED);
    mock_pair_free(&p);
    return reused;
}

/* Received 10 µs before a second boundary, offered 10 µs after it: resumed with 0-RTT. */
static void a_ticket_from_just_before_a_second_is_offered_just_after_it(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = ticket_at(f, EPOCH + SECOND - 10);
    assert_int_equal(resumes_at(f, s, EPOCH + SECOND + 10), 1);
    SSL_SESSION_free(s);
}

/* Received 1 µs after a boundary, offered 1 µs before the next: the same second, resumed. */
static void a_ticket_is_offered_within_its_own_second(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = ticket_at(f, EPOCH + 2 * SECOND + 1);
    assert_int_equal(resumes_at(f, s, EPOCH + 3 * SECOND - 1), 1);
    SSL_SESSION_free(s);
}

/* A clock that steps back a second (NTP): the ticket is not offered from the future. */
static void a_clock_stepped_back_does_not_offer_a_ticket_from_the_future(void **state)
{
    struct fixture *f = *state;
    SSL_SESSION *s = ticket_at(f, EPOCH + 10 * SECOND);
    assert_int_equal(resumes_at(f, s, EPOCH + 9 * SECOND + SECOND / 2), 0);
    SSL_SESSION_free(s);
}

/* The lifetime ends on a second boundary: offered in its last µs, not at its end. */
static void a_ticket_lives_exactly_its_lifetime(void **state)
{
    struct fixture *f = *state;
    uint64_t issued = EPOCH + 20 * SECOND;
    SSL_SESSION *s = ticket_at(f, issued);
    uint64_t life = (uint64_t)SSL_SESSION_get_timeout(s) * SECOND;
    assert_true(life > 0);
    assert_int_equal(resumes_at(f, s, issued + life - 1), 1);
    SSL_SESSION_free(s);
    s = ticket_at(f, issued);
    assert_int_equal(resumes_at(f, s, issued + life), 0);
    SSL_SESSION_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_ticket_from_just_before_a_second_is_offered_just_after_it),
        cmocka_unit_test(a_ticket_is_offered_within_its_own_second),
        cmocka_unit_test(a_clock_stepped_back_does_not_offer_a_ticket_from_the_future),
        cmocka_unit_test(a_ticket_lives_exactly_its_lifetime),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
