/*
 * One SSL_CTX per role shared by threads, everything a server does at once:
 * full handshakes with client certificates both ways (each context's
 * decoded-certificate cache), resumptions with 0-RTT through the shared
 * anti-replay filter, and ticket-key rotation on a thread of its own. Made
 * for make check SANITIZE=thread (ThreadSanitizer), and checked in every
 * build: no handshake fails, no ticket's 0-RTT is accepted twice, and
 * resumption still happens while keys rotate. Counts are checked on the
 * main thread (cmocka is not thread-safe). A second case verifies the server
 * through a hashed directory (SSL_CTX_load_verify_dir, or the default one of
 * SSL_CTX_set_default_verify_paths): the CA is added to the shared store
 * during verification, while other threads verify.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "internal.h"
#include "session/session.h"
#include "mock_quic.h"

#define WORKERS 4
#define ROUNDS 12
#define ROTATIONS 20
#define DIR_CONTEXTS 8 /* fresh client contexts, each with an empty store at first */
#define DIR_ROUNDS 3

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

/*
 * A hashed directory as openssl rehash makes it: the test CA as <subject hash>.0 (a copy).
 * dir gets its path, file the certificate's; 1 on success.
 */
static int make_hashed_dir(char *dir, size_t dirlen, char *file, size_t filelen)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dirlen, "%s/qtls-threads-XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    file[0] = '\0';
    if (mkdtemp(dir) == NULL)
        return 0;
    FILE *in = fopen(mock_cert_path("ca.pem"), "r");
    X509 *ca = in != NULL ? PEM_read_X509(in, NULL, NULL, NULL) : NULL;
    if (in != NULL)
        fclose(in);
    int ok = 0;
    unsigned long h = ca != NULL ? X509_NAME_hash_ex(X509_get_subject_name(ca), NULL, NULL, &ok)
                                 : 0;
    if (ok) {
        snprintf(file, filelen, "%s/%08lx.0", dir, h);
        FILE *out = fopen(file, "w");
        ok = out != NULL && PEM_write_X509(out, ca) == 1;
        if (out != NULL && fclose(out) != 0)
            ok = 0;
    }
    X509_free(ca);
    return ok;
}

/* A client context like mock_client_ctx's, trusting only what `dir` holds, with a client
   certificate for the shared server context. The directory is given to
   SSL_CTX_load_verify_dir, or with `by_default` as the default one (SSL_CERT_DIR, the
   default file made absent) to SSL_CTX_set_default_verify_paths. */
static SSL_CTX *dir_client_ctx(const char *dir, int by_default)
{
    static const unsigned char h3[] = {2, 'h', '3'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int trusted = 0;
    if (ctx != NULL && by_default) {
        char none[600];
        snprintf(none, sizeof(none), "%s/absent.pem", dir);
        trusted = setenv(X509_get_default_cert_dir_env(), dir, 1) == 0 &&
                  setenv(X509_get_default_cert_file_env(), none, 1) == 0 &&
                  SSL_CTX_set_default_verify_paths(ctx) == 1;
        unsetenv(X509_get_default_cert_dir_env());
        unsetenv(X509_get_default_cert_file_env());
    } else if (ctx != NULL) {
        trusted = SSL_CTX_load_verify_dir(ctx, dir) == 1;
    }
    if (ctx == NULL || !trusted || !SSL_CTX_set_quic_method(ctx, &mock_quic_method) ||
        SSL_CTX_set_alpn_protos(ctx, h3, sizeof(h3)) != 0 ||
        SSL_CTX_use_certificate_chain_file(ctx, mock_cert_path("client.pem")) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, mock_cert_path("client.key"), SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

static int store_size(SSL_CTX *ctx)
{
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    if (!X509_STORE_lock(store))
        return -1;
    int n = sk_X509_OBJECT_num(X509_STORE_get0_objects(store));
    X509_STORE_unlock(store);
    return n;
}

struct dir_run {
    struct run r;
    pthread_barrier_t *start;
};

/* Full handshakes only, so that each one verifies; all threads start together, while the
   context's store is still empty and the first verifications look the CA up at once. */
static void *dir_worker(void *arg)
{
    struct dir_run *d = arg;
    pthread_barrier_wait(d->start);
    for (int i = 0; i < DIR_ROUNDS; i++) {
        int reused, early;
        connect_once(&d->r, NULL, NULL, &reused, &early);
    }
    return NULL;
}

static void handshakes_at_once_verifying_through_a_hashed_directory(void **state)
{
    struct shared *sh = *state;
    char dir[512], file[600];
    int made = make_hashed_dir(dir, sizeof(dir), file, sizeof(file));
    int handshakes = 0;
    for (int c = 0; made && c < DIR_CONTEXTS; c++) {
        /* every other context through the default paths, which add the same lookup */
        struct shared dsh = {.cctx = dir_client_ctx(dir, c % 2), .sctx = sh->sctx};
        assert_non_null(dsh.cctx);
        assert_int_equal(store_size(dsh.cctx), 0); /* nothing loaded before the first lookup */
        pthread_barrier_t start;
        assert_int_equal(pthread_barrier_init(&start, NULL, WORKERS), 0);
        struct dir_run runs[WORKERS];
        pthread_t th[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            runs[i] = (struct dir_run){.r = {.sh = &dsh}, .start = &start};
            assert_int_equal(pthread_create(&th[i], NULL, dir_worker, &runs[i]), 0);
        }
        for (int i = 0; i < WORKERS; i++) {
            assert_int_equal(pthread_join(th[i], NULL), 0);
            assert_int_equal(runs[i].r.failures, 0);
            handshakes += runs[i].r.handshakes;
        }
        pthread_barrier_destroy(&start);
        /* the CA came from the directory, added to the store by a lookup during verification */
        assert_int_equal(store_size(dsh.cctx), 1);
        SSL_CTX_free(dsh.cctx);
    }
    /* control: the same context over an empty directory does not trust the server */
    int removed = made && unlink(file) == 0;
    if (removed) {
        for (int by_default = 0; by_default <= 1; by_default++) {
            struct shared esh = {.cctx = dir_client_ctx(dir, by_default), .sctx = sh->sctx};
            assert_non_null(esh.cctx);
            struct run r = {.sh = &esh};
            int reused, early;
            int ok = connect_once(&r, NULL, NULL, &reused, &early);
            SSL_CTX_free(esh.cctx);
            assert_false(ok);
        }
    }
    if (file[0] != '\0' && !removed)
        unlink(file);
    rmdir(dir);
    assert_true(made);
    assert_true(removed);
    print_message("%d handshakes verified through a hashed directory\n", handshakes);
    assert_int_equal(handshakes, DIR_CONTEXTS * WORKERS * DIR_ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handshakes_resumptions_replays_and_rotation_at_once),
        cmocka_unit_test(handshakes_at_once_verifying_through_a_hashed_directory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
