/*
 * Floods and abuse of SSL_provide_quic_data, at every read level of both
 * roles (a server before and after its flight, a client before and after
 * ServerHello, a client after the handshake):
 *   - endless CRYPTO data: what is buffered never exceeds
 *     SSL_quic_max_handshake_flight_len for the level, the byte past it is
 *     refused (SSL_R_EXCESSIVE_MESSAGE_SIZE), and the handshake then fails;
 *   - length fields at every maximum: a message that exactly fills the level's
 *     limit is buffered whole and judged; one byte more, or 2^24 - 1, fails
 *     at its header with illegal_parameter, without waiting for the bytes;
 *   - 10 000 one-byte CRYPTO frames; 10 000 NewSessionTickets;
 *   - levels out of order, a message across a level change, 0-RTT level data;
 *   - data after a fatal alert: buffered within the limit, no second alert.
 * Every failing case asserts the alert sent and the first ERR_LIB_SSL reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "internal.h"
#include "base/base.h"
#include "transport/transport.h"
#include "mock_quic.h"

#define INI ssl_encryption_initial
#define EARLY ssl_encryption_early_data
#define HSK ssl_encryption_handshake
#define APP ssl_encryption_application

/* The side under attack and the level it reads, reached through a real handshake. */
enum victim { SERVER_INITIAL, CLIENT_INITIAL, SERVER_HANDSHAKE, CLIENT_HANDSHAKE, CLIENT_DONE };
#define VICTIMS 5

static const char *const victim_names[VICTIMS] = {"server/initial", "client/initial",
                                                  "server/handshake", "client/handshake",
                                                  "client/application"};
/* The level each victim reads, and the message type it expects next there. */
static const OSSL_ENCRYPTION_LEVEL victim_level[VICTIMS] = {INI, INI, HSK, HSK, APP};
static const uint8_t victim_expects[VICTIMS] = {HT_CLIENT_HELLO, HT_SERVER_HELLO,
                                                HT_FINISHED, HT_ENCRYPTED_EXTENSIONS,
                                                HT_NEW_SESSION_TICKET};

struct fixture {
    SSL_CTX *cctx, *sctx;
    struct mock_pair p;
    struct mock_side *v; /* the victim */
    OSSL_ENCRYPTION_LEVEL level;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->cctx = mock_client_ctx();
    f->sctx = mock_server_ctx("ecdsa256");
    assert_non_null(f->cctx);
    assert_non_null(f->sctx);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    mock_pair_free(&f->p);
    SSL_CTX_free(f->cctx);
    SSL_CTX_free(f->sctx);
    free(f);
    ERR_clear_error();
    return 0;
}

static void drop_output(struct mock_side *s)
{
    for (int l = 0; l < 4; l++) {
        free(s->out[l]);
        s->out[l] = NULL;
        s->out_len[l] = 0;
    }
}

/* A fresh pair, driven until the victim waits for its peer at the victim's level. */
static void reach(struct fixture *f, enum victim v)
{
    mock_pair_free(&f->p);
    memset(&f->p, 0, sizeof(f->p));
    assert_true(mock_pair_init(&f->p, f->cctx, f->sctx));
    SSL_set_tlsext_host_name(f->p.client.ssl, "localhost");
    struct mock_side *c = &f->p.client, *s = &f->p.server;
    f->level = victim_level[v];
    if (v == CLIENT_DONE) {
        assert_true(mock_handshake(&f->p, 0));
        f->v = c;
    } else if (v == SERVER_INITIAL) {
        f->v = s;
    } else {
        assert_int_equal(SSL_do_handshake(c->ssl), -1); /* ClientHello */
        f->v = c;
        if (v != CLIENT_INITIAL) {
            assert_true(mock_deliver(c, s, 0));
            assert_int_equal(SSL_do_handshake(s->ssl), -1); /* the server's flight */
            if (v == SERVER_HANDSHAKE) {
                f->v = s;
            } else {
                /* ServerHello only: the client moves to the handshake level */
                assert_int_equal(SSL_provide_quic_data(c->ssl, INI, s->out[INI],
                                                       s->out_len[INI]), 1);
                assert_int_equal(SSL_do_handshake(c->ssl), -1);
            }
        }
    }
    drop_output(c);
    drop_output(s);
    assert_int_equal(SSL_quic_read_level(f->v->ssl), f->level);
    assert_int_equal(f->v->alerts_sent, 0);
    ERR_clear_error();
}

/* One step of the victim: 1 handshake done, 0 wants more (or post-handshake data taken), -1 failed. */
static int advance(struct mock_side *v)
{
    if (SSL_is_init_finished(v->ssl))
        return SSL_process_quic_post_handshake(v->ssl) == 1 ? 0 : -1;
    int r = SSL_do_handshake(v->ssl);
    if (r == 1)
        return 1;
    int e = SSL_get_error(v->ssl, r);
    assert_true(e == SSL_ERROR_WANT_READ || e == SSL_ERROR_SSL);
    return e == SSL_ERROR_WANT_READ ? 0 : -1;
}

/* Buffered input at every level stays within its limit (a grown buffer at most twice it). */
static void assert_bounded(const struct mock_side *v)
{
    for (int l = INI; l <= APP; l++) {
        size_t max = SSL_quic_max_handshake_flight_len(v->ssl, (OSSL_ENCRYPTION_LEVEL)l);
        size_t len, cap;
        quic_test_input(v->ssl, (OSSL_ENCRYPTION_LEVEL)l, &len, &cap);
        assert_true(len <= max);
        assert_true(cap <= 2 * max + 64);
    }
}

/* The victim failed once with `alert` and `reason`, and stays failed without a second alert. */
static void assert_failed(struct mock_side *v, int alert, int reason, const char *what)
{
    int got_reason = mock_first_ssl_reason();
    if (v->alert != alert || got_reason != reason || v->alerts_sent != 1)
        print_error("%s: alert %d (want %d), reason %d (want %d), alerts sent %d\n", what,
                    v->alert, alert, got_reason, reason, v->alerts_sent);
    assert_int_equal(v->alert, alert);
    assert_int_equal(got_reason, reason);
    assert_int_equal(v->alerts_sent, 1);
    assert_int_equal(advance(v), -1);
    assert_int_equal(v->alerts_sent, 1);
    assert_bounded(v);
    ERR_clear_error();
}

/* What a step of a failed connection says: the handshake failed before, or (after the
 * handshake) that post-handshake processing is over. */
static int after_failure_reason(const struct mock_side *v)
{
    return SSL_is_init_finished(v->ssl) ? ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED
                                        : QTLS_R_HANDSHAKE_FAILED_BEFORE;
}

static size_t level_max(const struct fixture *f)
{
    return SSL_quic_max_handshake_flight_len(f->v->ssl, f->level);
}

/* ---- endless CRYPTO data ---- */

/*
 * 1 000-byte frames of zeros (an endless run of empty HelloRequests, type 0)
 * without a handshake step between them, as a stack that reads many packets
 * before calling SSL_do_handshake: the level's limit is accepted, the frame
 * past it refused; the step then fails on the first message.
 */
static void endless_crypto_data_is_refused_at_the_limit(void **state)
{
    struct fixture *f = *state;
    static uint8_t zeros[1000];
    for (int v = 0; v < VICTIMS; v++) {
        reach(f, (enum victim)v);
        size_t total = 0, max = level_max(f);
        int frames = 0;
        while (SSL_provide_quic_data(f->v->ssl, f->level, zeros, sizeof(zeros)) == 1) {
            total += sizeof(zeros);
            assert_true(++frames <= 1000);
        }
        assert_int_equal(mock_first_ssl_reason(), SSL_R_EXCESSIVE_MESSAGE_SIZE);
        assert_true(total <= max && total + sizeof(zeros) > max);
        assert_bounded(f->v);
        ERR_clear_error();
        assert_int_equal(advance(f->v), -1);
        assert_failed(f->v, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE,
                      victim_names[v]);
    }
}

/* The same flood with a step after each frame: the first frame's first message ends it. */
static void endless_crypto_data_with_steps_fails_on_the_first_message(void **state)
{
    struct fixture *f = *state;
    static uint8_t zeros[1000];
    for (int v = 0; v < VICTIMS; v++) {
        reach(f, (enum victim)v);
        int frames = 0, r = 0;
        while (r == 0 && SSL_provide_quic_data(f->v->ssl, f->level, zeros, sizeof(zeros))) {
            frames++;
            r = advance(f->v);
        }
        assert_int_equal(frames, 1);
        assert_int_equal(r, -1);
        assert_failed(f->v, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_MESSAGE,
                      victim_names[v]);
        /* more data after the fatal alert: refused past the limit, never a second alert */
        for (int i = 0; i < 100; i++)
            (void)SSL_provide_quic_data(f->v->ssl, f->level, zeros, sizeof(zeros));
        ERR_clear_error();
        assert_int_equal(advance(f->v), -1);
        assert_failed(f->v, SSL_AD_UNEXPECTED_MESSAGE, after_failure_reason(f->v),
                      victim_names[v]);
    }
}

/* ---- length fields at every maximum ---- */

/* A header of the type the victim expects, claiming `len` bytes of body. */
static void provide_header(struct fixture *f, enum victim v, uint32_t len)
{
    uint8_t h[4] = {victim_expects[v], (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, f->level, h, sizeof(h)), 1);
}

/* 2^24 - 1, and one byte more than the limit leaves room for: failed at the header. */
static void a_length_past_the_limit_fails_at_the_header(void **state)
{
    struct fixture *f = *state;
    for (int v = 0; v < VICTIMS; v++) {
        reach(f, (enum victim)v);
        const uint32_t lens[2] = {0xffffff, (uint32_t)(level_max(f) - 4 + 1)};
        for (int i = 0; i < 2; i++) {
            reach(f, (enum victim)v);
            provide_header(f, (enum victim)v, lens[i]);
            assert_int_equal(advance(f->v), -1);
            assert_failed(f->v, SSL_AD_ILLEGAL_PARAMETER, SSL_R_EXCESSIVE_MESSAGE_SIZE,
                          victim_names[v]);
        }
    }
}

/*
 * A message that exactly fills the limit: buffered whole (one byte more is
 * refused), waited for while incomplete, then parsed, and its zero body is
 * rejected as the message it claims to be.
 */
static void a_message_that_fills_the_limit_is_read_whole(void **state)
{
    struct fixture *f = *state;
    static uint8_t zeros[1000];
    static const struct {
        int alert, reason;
    } want[VICTIMS] = {
        [SERVER_INITIAL] = {SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR},
        [CLIENT_INITIAL] = {SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR},
        [SERVER_HANDSHAKE] = {SSL_AD_DECRYPT_ERROR, SSL_R_DIGEST_CHECK_FAILED},
        [CLIENT_HANDSHAKE] = {SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR},
        [CLIENT_DONE] = {SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR},
    };
    for (int v = 0; v < VICTIMS; v++) {
        reach(f, (enum victim)v);
        size_t max = level_max(f), left = max - 4;
        provide_header(f, (enum victim)v, (uint32_t)left);
        while (left > 0) {
            assert_int_equal(advance(f->v), 0);
            size_t n = left < sizeof(zeros) ? left : sizeof(zeros);
            assert_int_equal(SSL_provide_quic_data(f->v->ssl, f->level, zeros, n), 1);
            left -= n;
        }
        size_t len, cap;
        quic_test_input(f->v->ssl, f->level, &len, &cap);
        assert_int_equal(len, max);
        assert_int_equal(SSL_provide_quic_data(f->v->ssl, f->level, zeros, 1), 0);
        assert_int_equal(mock_first_ssl_reason(), SSL_R_EXCESSIVE_MESSAGE_SIZE);
        ERR_clear_error();
        assert_int_equal(advance(f->v), -1);
        assert_failed(f->v, want[v].alert, want[v].reason, victim_names[v]);
    }
}

/* ---- many small frames and messages ---- */

/* 10 000 one-byte frames, a step after each: memory stays bounded, one alert in all. */
static void ten_thousand_one_byte_frames(void **state)
{
    struct fixture *f = *state;
    for (int v = 0; v < VICTIMS; v++) {
        reach(f, (enum victim)v);
        /* a header claiming 9 996 bytes, then the bytes: 10 000 frames in all */
        uint8_t msg[10000] = {victim_expects[v], 0, 0x27, 0x0c};
        int failed_at = -1;
        for (int i = 0; i < 10000; i++) {
            assert_int_equal(SSL_provide_quic_data(f->v->ssl, f->level, msg + i, 1), 1);
            int r = advance(f->v);
            if (r < 0 && failed_at < 0)
                failed_at = i;
            assert_true(r <= 0);
            assert_true(f->v->alerts_sent <= 1);
            assert_bounded(f->v);
        }
        /* failed on the last byte, the message's, never before it */
        assert_int_equal(failed_at, 9999);
        assert_int_equal(f->v->alerts_sent, 1);
        ERR_clear_error();
    }
}

static int tickets_seen;

static int count_ticket(SSL *ssl, SSL_SESSION *sess)
{
    tickets_seen++;
    return 0; /* not kept: the SSL's own reference is the only one */
}

/*
 * 10 000 NewSessionTickets, as small as they come (a one-byte ticket), in
 * frames of as many as fit the limit, processed after each frame: every one
 * reaches the application, and the client holds one session, not 10 000.
 */
static void ten_thousand_new_session_tickets(void **state)
{
    struct fixture *f = *state;
    SSL_CTX_set_session_cache_mode(f->cctx, SSL_SESS_CACHE_CLIENT);
    SSL_CTX_sess_set_new_cb(f->cctx, count_ticket);
    reach(f, CLIENT_DONE);
    tickets_seen = 0;
    /* lifetime(4) age_add(4) nonce<1> ticket<2> extensions<2> */
    static const uint8_t nst[4 + 15] = {HT_NEW_SESSION_TICKET, 0, 0, 15, 0, 0, 0x1c, 0x20,
                                        1, 2, 3, 4, 1, 9, 0, 1, 0x42, 0, 0};
    uint8_t frame[sizeof(nst) * 800];
    for (size_t i = 0; i < 800; i++)
        memcpy(frame + i * sizeof(nst), nst, sizeof(nst));
    for (int sent = 0; sent < 10000; sent += 800) {
        size_t n = (10000 - sent < 800 ? 10000 - sent : 800) * sizeof(nst);
        assert_int_equal(SSL_provide_quic_data(f->v->ssl, APP, frame, n), 1);
        assert_int_equal(SSL_process_quic_post_handshake(f->v->ssl), 1);
        assert_bounded(f->v);
    }
    assert_int_equal(tickets_seen, 10000);
    assert_int_equal(f->v->alerts_sent, 0);
    SSL_CTX_sess_set_new_cb(f->cctx, NULL);
}

/* ---- levels ---- */

/* Handshake-level bytes before the initial level has what it needs: unexpected_message. */
static void a_later_level_first_is_an_unexpected_message(void **state)
{
    struct fixture *f = *state;
    static const uint8_t finished[4 + 32] = {HT_FINISHED, 0, 0, 32};
    static const enum victim early[] = {SERVER_INITIAL, CLIENT_INITIAL, CLIENT_HANDSHAKE};
    for (size_t i = 0; i < sizeof(early) / sizeof(early[0]); i++) {
        reach(f, early[i]);
        OSSL_ENCRYPTION_LEVEL later = f->level == INI ? HSK : APP;
        assert_int_equal(SSL_provide_quic_data(f->v->ssl, later, finished, sizeof(finished)), 1);
        /* and the earlier level may no longer be given data */
        assert_int_equal(SSL_provide_quic_data(f->v->ssl, f->level, finished, 4), 0);
        assert_int_equal(mock_first_ssl_reason(), SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
        ERR_clear_error();
        assert_int_equal(advance(f->v), -1);
        assert_failed(f->v, SSL_AD_UNEXPECTED_MESSAGE, SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED,
                      victim_names[early[i]]);
    }
}

/* RFC 9001 §4.1.3: a message cut off at a level change is refused at the next level's data. */
static void a_message_across_a_level_change_is_refused(void **state)
{
    struct fixture *f = *state;
    static const uint8_t half[] = {HT_CLIENT_HELLO, 0, 0, 200, 3, 3};
    reach(f, SERVER_INITIAL);
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, INI, half, sizeof(half)), 1);
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, HSK, half, sizeof(half)), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    assert_bounded(f->v);
}

/* QUIC has no EndOfEarlyData (RFC 9001 §8.3): the 0-RTT level takes no handshake bytes. */
static void the_early_data_level_takes_no_bytes(void **state)
{
    struct fixture *f = *state;
    static const uint8_t eoed[4] = {HT_END_OF_EARLY_DATA, 0, 0, 0};
    reach(f, SERVER_INITIAL);
    assert_int_equal(SSL_quic_max_handshake_flight_len(f->v->ssl, EARLY), 0);
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, EARLY, eoed, sizeof(eoed)), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_EXCESSIVE_MESSAGE_SIZE);
    assert_bounded(f->v);
}

/* An invalid level number is refused, not used as an index. */
static void a_level_out_of_range_is_refused(void **state)
{
    struct fixture *f = *state;
    reach(f, SERVER_INITIAL);
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, (OSSL_ENCRYPTION_LEVEL)4, (const uint8_t *)"x",
                                           1), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
    ERR_clear_error();
    assert_int_equal(SSL_provide_quic_data(f->v->ssl, (OSSL_ENCRYPTION_LEVEL)-1,
                                           (const uint8_t *)"x", 1), 0);
    assert_int_equal(mock_first_ssl_reason(), SSL_R_WRONG_ENCRYPTION_LEVEL_RECEIVED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endless_crypto_data_is_refused_at_the_limit),
        cmocka_unit_test(endless_crypto_data_with_steps_fails_on_the_first_message),
        cmocka_unit_test(a_length_past_the_limit_fails_at_the_header),
        cmocka_unit_test(a_message_that_fills_the_limit_is_read_whole),
        cmocka_unit_test(ten_thousand_one_byte_frames),
        cmocka_unit_test(ten_thousand_new_session_tickets),
        cmocka_unit_test(a_later_level_first_is_an_unexpected_message),
        cmocka_unit_test(a_message_across_a_level_change_is_refused),
        cmocka_unit_test(the_early_data_level_takes_no_bytes),
        cmocka_unit_test(a_level_out_of_range_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
