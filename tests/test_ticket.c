/*
 * ticket.c: sealing and opening stateless tickets (RFC 8446 §4.6.1) with the
 * built-in rotating keys and with an application key callback in OpenSSL
 * 3.0's format, hostile ticket bytes, and the 0-RTT replay filter (§8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "internal.h"
#include "session/session.h"

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */
/* ------------------------------------------------------------------ */

static uint64_t fake_now = 1000000;
static uint64_t fake_clock(void) { return fake_now; }

struct fixture {
    SSL_CTX *ctx;
    SSL *ssl;
    uint8_t plain[300];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    /* The clock first: SSL_CTX_new makes the first ticket key, at the fake time. */
    fake_now = 1000000;
    ticket_set_test_clock(fake_clock);
    f->ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(f->ctx);
    f->ssl = SSL_new(f->ctx);
    assert_non_null(f->ssl);
    for (size_t i = 0; i < sizeof(f->plain); i++)
        f->plain[i] = (uint8_t)(i * 7 + 3);
    ERR_clear_error();
    *state = f;
    return 0;
}

/* Frees the key set and filter here too: SSL_CTX_free may not own them yet. */
static void free_ctx_parts(SSL_CTX *ctx)
{
    ticket_keys_free(ctx->ticket_keys);
    ctx->ticket_keys = NULL;
    replay_filter_free(ctx->replay);
    ctx->replay = NULL;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    SSL_free(f->ssl);
    free_ctx_parts(f->ctx);
    SSL_CTX_free(f->ctx);
    free(f);
    ticket_set_test_clock(NULL);
    ERR_clear_error();
    return 0;
}

static void seal(SSL *s, const uint8_t *plain, size_t n, struct wr *out)
{
    wr_init(out);
    assert_int_equal(ticket_seal(s, plain, n, out), 1);
    assert_true(wr_ok(out));
}

/* Opens and, on success, checks the plaintext; returns the status. */
static int open_check(SSL *s, const uint8_t *t, size_t n, const uint8_t *want, size_t want_len)
{
    struct rd r;
    struct wr plain;
    rd_init(&r, t, n);
    wr_init(&plain);
    int st = ticket_open(s, r, &plain);
    if (st == SSL_TICKET_SUCCESS || st == SSL_TICKET_SUCCESS_RENEW) {
        assert_int_equal(plain.len, want_len);
        assert_memory_equal(plain.buf, want, want_len);
    } else {
        assert_int_equal(plain.len, 0); /* nothing unauthenticated is handed back */
    }
    wr_free(&plain);
    return st;
}

/* Every single-bit change anywhere, and every truncation, fails without a crash. */
static void check_hostile_variants(SSL *s, const struct wr *t, const uint8_t *plain, size_t n)
{
    uint8_t *copy = malloc(t->len);
    assert_non_null(copy);
    for (size_t i = 0; i < t->len; i++) {
        for (int bit = 0; bit < 8; bit += 7) {
            memcpy(copy, t->buf, t->len);
            copy[i] ^= (uint8_t)(1u << bit);
            assert_int_equal(open_check(s, copy, t->len, plain, n), SSL_TICKET_NO_DECRYPT);
        }
    }
    for (size_t len = 0; len < t->len; len++) {
        /* A heap copy of exactly len bytes, so ASan sees any read past the end. */
        uint8_t *cut = malloc(len ? len : 1);
        assert_non_null(cut);
        memcpy(cut, t->buf, len);
        assert_int_equal(open_check(s, cut, len, plain, n),
                         len == 0 ? SSL_TICKET_EMPTY : SSL_TICKET_NO_DECRYPT);
        free(cut);
    }
    /* Extra bytes after a valid ticket are a different ticket. */
    uint8_t *longer = malloc(t->len + 1);
    assert_non_null(longer);
    memcpy(longer, t->buf, t->len);
    longer[t->len] = 0;
    assert_int_equal(open_check(s, longer, t->len + 1, plain, n), SSL_TICKET_NO_DECRYPT);
    free(longer);
    free(copy);
}

/* ------------------------------------------------------------------ */
/* Built-in keys                                                       */
/* ------------------------------------------------------------------ */

static void builtin_round_trip(void **state)
{
    struct fixture *f = *state;
    struct wr t1, t2;
    seal(f->ssl, f->plain, sizeof(f->plain), &t1);
    /* key_name(16) || nonce(12) || ciphertext || tag(16) */
    assert_int_equal(t1.len, 16 + 12 + sizeof(f->plain) + 16);
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, sizeof(f->plain)),
                     SSL_TICKET_SUCCESS);
    /* Same key, fresh nonce: tickets for the same session are unlinkable. */
    seal(f->ssl, f->plain, sizeof(f->plain), &t2);
    assert_memory_equal(t1.buf, t2.buf, 16);
    assert_memory_not_equal(t1.buf + 16, t2.buf + 16, 12);
    assert_memory_not_equal(t1.buf + 28, t2.buf + 28, sizeof(f->plain));
    /* An empty plaintext seals and opens too. */
    struct wr t3;
    seal(f->ssl, NULL, 0, &t3);
    assert_int_equal(t3.len, 16 + 12 + 16);
    assert_int_equal(open_check(f->ssl, t3.buf, t3.len, NULL, 0), SSL_TICKET_SUCCESS);
    /* Appends after what the writer already holds (the NewSessionTicket being built). */
    struct wr w;
    wr_init(&w);
    wr_u16(&w, 0xabcd);
    assert_int_equal(ticket_seal(f->ssl, f->plain, 10, &w), 1);
    assert_int_equal(w.len, 2 + 16 + 12 + 10 + 16);
    assert_int_equal(open_check(f->ssl, w.buf + 2, w.len - 2, f->plain, 10), SSL_TICKET_SUCCESS);
    assert_int_equal(ERR_peek_error(), 0);
    wr_free(&w);
    wr_free(&t1);
    wr_free(&t2);
    wr_free(&t3);
}

static void builtin_tampered_or_truncated_tickets_do_not_open(void **state)
{
    struct fixture *f = *state;
    struct wr t;
    seal(f->ssl, f->plain, 40, &t);
    check_hostile_variants(f->ssl, &t, f->plain, 40);
    /* The original still opens: failures left no state behind. */
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 40), SSL_TICKET_SUCCESS);
    wr_free(&t);
}

static void builtin_random_garbage_does_not_open(void **state)
{
    struct fixture *f = *state;
    uint8_t junk[200];
    for (size_t n = 1; n <= sizeof(junk); n += 7) {
        assert_int_equal(RAND_bytes(junk, (int)n), 1);
        assert_int_equal(open_check(f->ssl, junk, n, NULL, 0), SSL_TICKET_NO_DECRYPT);
    }
}

static void ticket_from_another_context_does_not_open(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *other_ctx = SSL_CTX_new(TLS_server_method());
    SSL *other = SSL_new(other_ctx);
    assert_non_null(other);
    struct wr t;
    seal(other, f->plain, 50, &t);
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 50), SSL_TICKET_NO_DECRYPT);
    assert_int_equal(open_check(other, t.buf, t.len, f->plain, 50), SSL_TICKET_SUCCESS);
    wr_free(&t);
    SSL_free(other);
    free_ctx_parts(other_ctx);
    SSL_CTX_free(other_ctx);
}

static void forced_rotation_keeps_one_previous_key(void **state)
{
    struct fixture *f = *state;
    struct wr t1, t2;
    seal(f->ssl, f->plain, 64, &t1);
    ticket_keys_test_rotate(f->ctx);
    /* The previous key still opens, and asks for a fresh ticket. */
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 64), SSL_TICKET_SUCCESS_RENEW);
    seal(f->ssl, f->plain, 64, &t2);
    assert_memory_not_equal(t1.buf, t2.buf, 16); /* a new key name */
    assert_int_equal(open_check(f->ssl, t2.buf, t2.len, f->plain, 64), SSL_TICKET_SUCCESS);
    ticket_keys_test_rotate(f->ctx);
    /* The retired key is gone; the one before it is now the previous one. */
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 64), SSL_TICKET_NO_DECRYPT);
    assert_int_equal(open_check(f->ssl, t2.buf, t2.len, f->plain, 64), SSL_TICKET_SUCCESS_RENEW);
    wr_free(&t1);
    wr_free(&t2);
}

static void keys_rotate_with_the_session_timeout(void **state)
{
    struct fixture *f = *state;
    f->ctx->session_timeout = 100;
    struct wr t1, t2, t3;
    seal(f->ssl, f->plain, 32, &t1);
    fake_now += 99; /* still the current key */
    seal(f->ssl, f->plain, 32, &t2);
    assert_memory_equal(t1.buf, t2.buf, 16);
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 32), SSL_TICKET_SUCCESS);
    fake_now += 1; /* one lifetime: the next seal rotates */
    seal(f->ssl, f->plain, 32, &t3);
    assert_memory_not_equal(t1.buf, t3.buf, 16);
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 32), SSL_TICKET_SUCCESS_RENEW);
    assert_int_equal(open_check(f->ssl, t3.buf, t3.len, f->plain, 32), SSL_TICKET_SUCCESS);
    /* Two lifetimes after its creation a key cannot have sealed a live ticket. */
    fake_now += 99;
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 32), SSL_TICKET_SUCCESS_RENEW);
    fake_now += 1;
    assert_int_equal(open_check(f->ssl, t1.buf, t1.len, f->plain, 32), SSL_TICKET_NO_DECRYPT);
    /* t3's key has now served its lifetime too: the chain moved on as t1 was opened. */
    assert_int_equal(open_check(f->ssl, t3.buf, t3.len, f->plain, 32), SSL_TICKET_SUCCESS_RENEW);
    /* After a long idle gap the old current key is wiped, not kept as previous. */
    fake_now += 1000;
    struct wr t4;
    seal(f->ssl, f->plain, 32, &t4);
    assert_int_equal(open_check(f->ssl, t3.buf, t3.len, f->plain, 32), SSL_TICKET_NO_DECRYPT);
    assert_int_equal(open_check(f->ssl, t4.buf, t4.len, f->plain, 32), SSL_TICKET_SUCCESS);
    /* A clock that steps back does not retire keys. */
    fake_now -= 5000;
    assert_int_equal(open_check(f->ssl, t4.buf, t4.len, f->plain, 32), SSL_TICKET_SUCCESS);
    wr_free(&t1);
    wr_free(&t2);
    wr_free(&t3);
    wr_free(&t4);
}

/*
 * A child forked after SSL_CTX_new seals at `age` seconds; NULL if it could not. The child
 * writes the ticket to a pipe and exits without cmocka (a worker of a pre-fork server).
 */
static struct wr forked_seal(struct fixture *f, uint64_t age, size_t n)
{
    struct wr t;
    wr_init(&t);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        fake_now += age;
        struct wr out;
        wr_init(&out);
        int ok = ticket_seal(f->ssl, f->plain, n, &out) == 1 && wr_ok(&out) &&
                 write(fds[1], out.buf, out.len) == (ssize_t)out.len;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    uint8_t buf[1024];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof(buf))) > 0) {
        uint8_t *p = wr_reserve(&t, (size_t)r);
        assert_non_null(p);
        memcpy(p, buf, (size_t)r);
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(t.len > 0);
    return t;
}

/*
 * nginx's workers: the master makes the contexts, then forks. The keys are made by SSL_CTX_new
 * and each next key is derived from the one before, so a ticket sealed in one worker opens in
 * another, now and after rotations neither has seen (it sealed nothing meanwhile).
 */
static void forked_workers_share_the_keys(void **state)
{
    struct fixture *f = *state;
    f->ctx->session_timeout = 100;
    struct wr t0 = forked_seal(f, 0, 40);
    assert_int_equal(open_check(f->ssl, t0.buf, t0.len, f->plain, 40), SSL_TICKET_SUCCESS);
    /* Two and a half lifetimes later the child is two keys on; the parent catches up. */
    struct wr t2 = forked_seal(f, 250, 41);
    assert_memory_not_equal(t0.buf, t2.buf, 16);
    fake_now += 250;
    assert_int_equal(open_check(f->ssl, t2.buf, t2.len, f->plain, 41), SSL_TICKET_SUCCESS);
    assert_int_equal(open_check(f->ssl, t0.buf, t0.len, f->plain, 40), SSL_TICKET_NO_DECRYPT);
    /* And the parent's own ticket now is sealed with the same key as the child's. */
    struct wr mine;
    seal(f->ssl, f->plain, 41, &mine);
    assert_memory_equal(mine.buf, t2.buf, 16);
    /* Another context, forked or not, has a chain of its own. */
    SSL_CTX *other_ctx = SSL_CTX_new(TLS_server_method());
    SSL *other = SSL_new(other_ctx);
    assert_non_null(other);
    assert_int_equal(open_check(other, t2.buf, t2.len, f->plain, 41), SSL_TICKET_NO_DECRYPT);
    SSL_free(other);
    free_ctx_parts(other_ctx);
    SSL_CTX_free(other_ctx);
    wr_free(&t0);
    wr_free(&t2);
    wr_free(&mine);
}

static void default_lifetime_is_two_hours(void **state)
{
    struct fixture *f = *state;
    f->ctx->session_timeout = 0; /* unset: OpenSSL's 7200 s */
    struct wr t1, t2;
    seal(f->ssl, f->plain, 16, &t1);
    fake_now += 7199;
    seal(f->ssl, f->plain, 16, &t2);
    assert_memory_equal(t1.buf, t2.buf, 16);
    wr_free(&t2);
    fake_now += 1;
    seal(f->ssl, f->plain, 16, &t2);
    assert_memory_not_equal(t1.buf, t2.buf, 16);
    wr_free(&t1);
    wr_free(&t2);
}

/* Threads sharing one context seal and open while another rotates the keys. */
struct thread_arg {
    struct fixture *f;
    int failures;
    int opened;
};

static void *seal_open_loop(void *p)
{
    struct thread_arg *a = p;
    SSL *s = SSL_new(a->f->ctx);
    for (int i = 0; i < 300 && s != NULL; i++) {
        struct wr t, plain;
        struct rd r;
        wr_init(&t);
        wr_init(&plain);
        if (!ticket_seal(s, a->f->plain, 100, &t)) {
            a->failures++;
        } else {
            rd_init(&r, t.buf, t.len);
            int st = ticket_open(s, r, &plain);
            /*
             * Two rotations between seal and open retire the key (NO_DECRYPT);
             * anything that opens must be intact.
             */
            if (st == SSL_TICKET_SUCCESS || st == SSL_TICKET_SUCCESS_RENEW)
                a->opened++;
            if ((st == SSL_TICKET_NO_DECRYPT && plain.len != 0) ||
                (st != SSL_TICKET_NO_DECRYPT &&
                 (st != SSL_TICKET_SUCCESS && st != SSL_TICKET_SUCCESS_RENEW)) ||
                (st != SSL_TICKET_NO_DECRYPT &&
                 (plain.len != 100 || memcmp(plain.buf, a->f->plain, 100) != 0)))
                a->failures++;
        }
        wr_free(&t);
        wr_free(&plain);
    }
    SSL_free(s);
    return NULL;
}

static void *rotate_loop(void *p)
{
    struct thread_arg *a = p;
    for (int i = 0; i < 50; i++)
        ticket_keys_test_rotate(a->f->ctx);
    return NULL;
}

static void shared_context_is_thread_safe(void **state)
{
    struct fixture *f = *state;
    ticket_set_test_clock(NULL);
    pthread_t th[5];
    struct thread_arg args[5];
    for (int i = 0; i < 5; i++) {
        args[i] = (struct thread_arg){f, 0, 0};
        assert_int_equal(
            pthread_create(&th[i], NULL, i == 4 ? rotate_loop : seal_open_loop, &args[i]), 0);
    }
    for (int i = 0; i < 5; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
        if (i < 4)
            assert_true(args[i].opened > 0);
    }
}

/* ------------------------------------------------------------------ */
/* The application's key callback: AES-256-CBC + HMAC-SHA256           */
/* ------------------------------------------------------------------ */

struct app_key {
    uint8_t name[16];
    uint8_t aes[32];
    uint8_t hmac[32];
    int retiring; /* decryption answers 2: renew */
};

static struct app_key app_keys[2];
static int app_enc_result = 1; /* what the callback returns for enc = 1 */
static int app_dec_error;      /* make decryption return -1 */
static int app_enc_calls, app_dec_calls;

static int set_hmac_key(EVP_MAC_CTX *hctx, const struct app_key *k)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)k->hmac, sizeof(k->hmac)),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    return EVP_MAC_CTX_set_params(hctx, params);
}

/* The callback as OpenSSL's SSL_CTX_set_tlsext_ticket_key_evp_cb(3) example writes it. */
static int app_ticket_cb(SSL *s, unsigned char key_name[16], unsigned char iv[EVP_MAX_IV_LENGTH],
                         EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx, int enc)
{
    assert_non_null(s);
    if (enc) {
        app_enc_calls++;
        if (app_enc_result <= 0)
            return app_enc_result;
        const struct app_key *k = &app_keys[0];
        if (RAND_bytes(iv, 16) != 1)
            return -1;
        memcpy(key_name, k->name, 16);
        if (!EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes, iv) ||
            !set_hmac_key(hctx, k))
            return -1;
        return 1;
    }
    app_dec_calls++;
    if (app_dec_error)
        return -1;
    for (size_t i = 0; i < 2; i++) {
        const struct app_key *k = &app_keys[i];
        if (memcmp(key_name, k->name, 16) != 0)
            continue;
        if (!EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes, iv) ||
            !set_hmac_key(hctx, k))
            return -1;
        return k->retiring ? 2 : 1;
    }
    return 0;
}

static int setup_cb(void **state)
{
    setup(state);
    struct fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(RAND_bytes((uint8_t *)&app_keys[i], sizeof(app_keys[i])), 1);
        app_keys[i].retiring = 0;
    }
    app_enc_result = 1;
    app_dec_error = 0;
    app_enc_calls = app_dec_calls = 0;
    f->ctx->ticket_key_evp_cb = app_ticket_cb;
    return 0;
}

/* Opens a callback-format ticket by hand, so the layout is checked independently of ticket.c. */
static void open_by_hand(const struct wr *t, const struct app_key *k, const uint8_t *want,
                         size_t want_len)
{
    uint8_t mac[32], out[400];
    unsigned int mac_len = 0;
    assert_true(t->len > 16 + 16 + 32);
    assert_memory_equal(t->buf, k->name, 16);
    size_t authed = t->len - 32;
    assert_non_null(HMAC(EVP_sha256(), k->hmac, 32, t->buf, authed, mac, &mac_len));
    assert_memory_equal(mac, t->buf + authed, 32);
    EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
    int n = 0, fin = 0;
    assert_int_equal(EVP_DecryptInit_ex(cc, EVP_aes_256_cbc(), NULL, k->aes, t->buf + 16), 1);
    assert_int_equal(EVP_DecryptUpdate(cc, out, &n, t->buf + 32, (int)(authed - 32)), 1);
    assert_int_equal(EVP_DecryptFinal_ex(cc, out + n, &fin), 1);
    EVP_CIPHER_CTX_free(cc);
    assert_int_equal((size_t)(n + fin), want_len);
    assert_memory_equal(out, want, want_len);
}

static void callback_round_trip_in_openssl_format(void **state)
{
    struct fixture *f = *state;
    struct wr t;
    seal(f->ssl, f->plain, 100, &t);
    assert_int_equal(app_enc_calls, 1);
    /* key_name(16) || iv(16) || AES-256-CBC(100 bytes → 112) || HMAC-SHA256(32) */
    assert_int_equal(t.len, 16 + 16 + 112 + 32);
    open_by_hand(&t, &app_keys[0], f->plain, 100);
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 100), SSL_TICKET_SUCCESS);
    assert_int_equal(app_dec_calls, 1);
    /* SSL_CTX_new made the built-in keys (as OpenSSL's does), but the callback's sealed it. */
    assert_non_null(f->ctx->ticket_keys);
    assert_memory_equal(t.buf, app_keys[0].name, 16);
    assert_int_equal(ERR_peek_error(), 0);
    wr_free(&t);
}

static void callback_tampered_or_truncated_tickets_do_not_open(void **state)
{
    struct fixture *f = *state;
    struct wr t;
    seal(f->ssl, f->plain, 20, &t);
    check_hostile_variants(f->ssl, &t, f->plain, 20);
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 20), SSL_TICKET_SUCCESS);
    wr_free(&t);
}

static void callback_key_choice(void **state)
{
    struct fixture *f = *state;
    struct wr t;
    seal(f->ssl, f->plain, 77, &t);
    /* 2: valid but retiring, so the server should issue a fresh ticket. */
    app_keys[0].retiring = 1;
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 77), SSL_TICKET_SUCCESS_RENEW);
    /* 0: a key name the application no longer knows. */
    app_keys[0].name[0] ^= 1;
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 77), SSL_TICKET_NO_DECRYPT);
    assert_int_equal(ERR_peek_error(), 0);
    app_keys[0].name[0] ^= 1;
    /* A known name with the wrong keys fails the MAC. */
    memcpy(app_keys[1].name, app_keys[0].name, 16);
    memcpy(&app_keys[0], &app_keys[1], sizeof(app_keys[0]));
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 77), SSL_TICKET_NO_DECRYPT);
    /* -1: a fatal error. */
    app_dec_error = 1;
    assert_int_equal(open_check(f->ssl, t.buf, t.len, f->plain, 77), SSL_TICKET_FATAL_ERR_OTHER);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_CALLBACK_FAILED);
    wr_free(&t);
}

static void callback_declining_issues_no_ticket(void **state)
{
    struct fixture *f = *state;
    struct wr w;
    wr_init(&w);
    wr_u8(&w, 0x42);
    app_enc_result = 0;
    assert_int_equal(ticket_seal(f->ssl, f->plain, 50, &w), 0);
    /* Declining is not an error: nothing queued, nothing written. */
    assert_int_equal(ERR_peek_error(), 0);
    assert_int_equal(w.len, 1);
    assert_true(wr_ok(&w));
    app_enc_result = -1;
    assert_int_equal(ticket_seal(f->ssl, f->plain, 50, &w), 0);
    assert_int_equal(ERR_GET_REASON(ERR_get_error()), SSL_R_CALLBACK_FAILED);
    assert_int_equal(w.len, 1);
    wr_free(&w);
}

/* A callback that returns 1 without setting anything up must not crash qtls. */
static int lazy_cb(SSL *s, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *c,
                   EVP_MAC_CTX *h, int enc)
{
    return 1;
}

static void callback_leaving_contexts_unset_fails_cleanly(void **state)
{
    struct fixture *f = *state;
    f->ctx->ticket_key_evp_cb = lazy_cb;
    struct wr w;
    wr_init(&w);
    assert_int_equal(ticket_seal(f->ssl, f->plain, 50, &w), 0);
    assert_int_equal(w.len, 0);
    assert_int_not_equal(ERR_get_error(), 0);
    uint8_t junk[100] = {0};
    assert_int_equal(open_check(f->ssl, junk, sizeof(junk), NULL, 0), SSL_TICKET_FATAL_ERR_OTHER);
    wr_free(&w);
}

/* ------------------------------------------------------------------ */
/* Anti-replay                                                         */
/* ------------------------------------------------------------------ */

static void replay_first_use_only_within_window(void **state)
{
    struct fixture *f = *state;
    const uint8_t a[] = "ticket A", b[] = "ticket B";
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 100, 10), 1);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 100, 10), 0);
    assert_int_equal(replay_check_and_add(f->ctx, b, sizeof(b), 105, 10), 1);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 109, 10), 0);
    /* A prefix is a different ticket. */
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a) - 1, 109, 10), 1);
    /* Past the window the entry has expired (the ticket-age check rejects such tickets). */
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 110, 10), 1);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 111, 10), 0);
    assert_int_equal(replay_check_and_add(f->ctx, b, sizeof(b), 111, 10), 0);
    assert_int_equal(replay_check_and_add(f->ctx, b, sizeof(b), 115, 10), 1);
}

static void replay_filter_grows_and_refuses_when_full(void **state)
{
    struct fixture *f = *state;
    uint32_t id;
    /* Entries from the past that expire make room without counting against the cap. */
    for (id = 0; id < 1000; id++)
        assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 10, 50), 1);
    for (id = 1000; id < 1000 + 65536; id++)
        assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 100, 50), 1);
    /* 65536 live entries: a new ticket is refused (0-RTT rejected, not replayable) ... */
    assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 100, 50), 0);
    assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 101, 50), 0);
    /* ... while the ones recorded are still recognised. */
    uint32_t old = 1000;
    assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&old, sizeof(old), 101, 50), 0);
    /* Once the window passes, the filter takes new tickets again. */
    assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 150, 50), 1);
    assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 150, 50), 0);
    for (id = 1000; id < 1100; id++)
        assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 150, 50), 1);
}

/*
 * RFC 8446 §8.1: a ticket used for 0-RTT stays recorded for its own window,
 * whatever the window of the tickets checked after it (SSL_CTX_set_timeout
 * may change; fleet keys may open tickets of other lifetimes). Judged by a
 * later, shorter window it used to look expired, was reused or dropped by a
 * rebuild, and could then be replayed.
 */
static void replay_entries_keep_their_own_window(void **state)
{
    struct fixture *f = *state;
    const uint8_t a[] = "a ticket that lives two hours";
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 1000, 7200), 1);
    /* Enough short-lived tickets to make the filter rebuild (and probe over every slot). */
    for (uint32_t id = 0; id < 300; id++)
        assert_int_equal(replay_check_and_add(f->ctx, (uint8_t *)&id, sizeof(id), 1020, 10), 1);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 1030, 7200), 0);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 8199, 7200), 0);
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 8200, 7200), 1);
}

static void replay_filters_are_per_context(void **state)
{
    struct fixture *f = *state;
    SSL_CTX *other = SSL_CTX_new(TLS_server_method());
    assert_non_null(other);
    const uint8_t a[] = "shared";
    assert_int_equal(replay_check_and_add(f->ctx, a, sizeof(a), 1, 10), 1);
    assert_int_equal(replay_check_and_add(other, a, sizeof(a), 1, 10), 1);
    assert_int_equal(replay_check_and_add(other, a, sizeof(a), 1, 10), 0);
    free_ctx_parts(other);
    SSL_CTX_free(other);
}

struct replay_arg {
    SSL_CTX *ctx;
    int accepted;
};

static void *replay_loop(void *p)
{
    struct replay_arg *a = p;
    for (uint32_t id = 0; id < 2000; id++)
        a->accepted += replay_check_and_add(a->ctx, (uint8_t *)&id, sizeof(id), 7, 100);
    return NULL;
}

/* Four threads race on the same tickets: each is accepted exactly once overall. */
static void replay_filter_is_thread_safe(void **state)
{
    struct fixture *f = *state;
    pthread_t th[4];
    struct replay_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct replay_arg){f->ctx, 0};
        assert_int_equal(pthread_create(&th[i], NULL, replay_loop, &args[i]), 0);
    }
    int total = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        total += args[i].accepted;
    }
    assert_int_equal(total, 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(builtin_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(builtin_tampered_or_truncated_tickets_do_not_open, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(builtin_random_garbage_does_not_open, setup, teardown),
        cmocka_unit_test_setup_teardown(ticket_from_another_context_does_not_open, setup, teardown),
        cmocka_unit_test_setup_teardown(forced_rotation_keeps_one_previous_key, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_rotate_with_the_session_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(forked_workers_share_the_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(default_lifetime_is_two_hours, setup, teardown),
        cmocka_unit_test_setup_teardown(shared_context_is_thread_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(callback_round_trip_in_openssl_format, setup_cb, teardown),
        cmocka_unit_test_setup_teardown(callback_tampered_or_truncated_tickets_do_not_open,
                                        setup_cb, teardown),
        cmocka_unit_test_setup_teardown(callback_key_choice, setup_cb, teardown),
        cmocka_unit_test_setup_teardown(callback_declining_issues_no_ticket, setup_cb, teardown),
        cmocka_unit_test_setup_teardown(callback_leaving_contexts_unset_fails_cleanly, setup_cb,
                                        teardown),
        cmocka_unit_test_setup_teardown(replay_first_use_only_within_window, setup, teardown),
        cmocka_unit_test_setup_teardown(replay_filter_grows_and_refuses_when_full, setup, teardown),
        cmocka_unit_test_setup_teardown(replay_entries_keep_their_own_window, setup, teardown),
        cmocka_unit_test_setup_teardown(replay_filters_are_per_context, setup, teardown),
        cmocka_unit_test_setup_teardown(replay_filter_is_thread_safe, setup, teardown),
    };
    return cmocka_run_group_tests_name("ticket", tests, NULL, NULL);
}
