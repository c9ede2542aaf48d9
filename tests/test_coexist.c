/*
 * libqtls.so and the system's libssl.so.3 in one process (issue 9 item 9).
 *
 * Both define SSL_new, SSL_CTX_ctrl, ... A process that links libqtls and also loads libssl
 * (Debian's libcurl.so.4 needs it) must keep every call where it belongs: libssl's calls to its
 * own SSL_* functions (Debian 12's libssl.so.3 has 142 dynamic relocations against them) in
 * libssl, qtls's and the program's in qtls. The dynamic linker does that because libqtls's
 * exports carry a version of their own (QTLS_1, src/libqtls.map; libssl's are OPENSSL_3.0.0),
 * and libqtls binds its internal calls at link time (-Bsymbolic). With unversioned exports,
 * libssl's calls resolve to qtls's functions on libssl's objects and the process crashes.
 *
 * This binary links libqtls.so, not libqtls.a (the Makefile's rule for it), reaches libssl
 * with dlopen(RTLD_LOCAL) and dlsym, and runs a TLS handshake between two libssl SSL objects
 * over a socketpair, step by step, interleaved with a QUIC handshake through qtls
 * (tests/helpers/mock_quic.c). It runs once more as a child with libssl preloaded, ahead of
 * libqtls in the global scope. Two static checks read libqtls.so with readelf: every export is
 * SSL_x@@QTLS_1, and no relocation goes through the dynamic linker to one of them.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/err.h>

#include "mock_quic.h"

/* The libssl functions the TLS-over-TCP side calls, from dlsym on libssl's own handle. */
struct libssl {
    void *handle;
    const SSL_METHOD *(*TLS_client_method)(void);
    const SSL_METHOD *(*TLS_server_method)(void);
    SSL_CTX *(*SSL_CTX_new)(const SSL_METHOD *);
    void (*SSL_CTX_free)(SSL_CTX *);
    long (*SSL_CTX_ctrl)(SSL_CTX *, int, long, void *);
    int (*SSL_CTX_use_certificate_chain_file)(SSL_CTX *, const char *);
    int (*SSL_CTX_use_PrivateKey_file)(SSL_CTX *, const char *, int);
    int (*SSL_CTX_load_verify_locations)(SSL_CTX *, const char *, const char *);
    void (*SSL_CTX_set_verify)(SSL_CTX *, int, SSL_verify_cb);
    SSL *(*SSL_new)(SSL_CTX *);
    void (*SSL_free)(SSL *);
    long (*SSL_ctrl)(SSL *, int, long, void *);
    int (*SSL_set_fd)(SSL *, int);
    int (*SSL_set1_host)(SSL *, const char *);
    void (*SSL_set_connect_state)(SSL *);
    void (*SSL_set_accept_state)(SSL *);
    int (*SSL_do_handshake)(SSL *);
    int (*SSL_get_error)(const SSL *, int);
    int (*SSL_write)(SSL *, const void *, int);
    int (*SSL_read)(SSL *, void *, int);
    int (*SSL_version)(const SSL *);
    long (*SSL_get_verify_result)(const SSL *);
    int (*SSL_session_reused)(const SSL *);
};

static const char *libssl_path(void *handle, const char *sym)
{
    static char path[512];
    Dl_info info;
    void *f = dlsym(handle, sym);
    if (f == NULL || dladdr(f, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    snprintf(path, sizeof(path), "%s", info.dli_fname);
    return path;
}

static int libssl_open(struct libssl *l)
{
    memset(l, 0, sizeof(*l));
    l->handle = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (l->handle == NULL) {
        fprintf(stderr, "dlopen(libssl.so.3): %s (apt-get install libssl3)\n", dlerror());
        return 0;
    }
#define SYM(name)                                                                                 \
    do {                                                                                          \
        *(void **)&l->name = dlsym(l->handle, #name);                                             \
        if (l->name == NULL) {                                                                    \
            fprintf(stderr, "libssl.so.3 has no %s\n", #name);                                   \
            return 0;                                                                             \
        }                                                                                         \
    } while (0)
    SYM(TLS_client_method);
    SYM(TLS_server_method);
    SYM(SSL_CTX_new);
    SYM(SSL_CTX_free);
    SYM(SSL_CTX_ctrl);
    SYM(SSL_CTX_use_certificate_chain_file);
    SYM(SSL_CTX_use_PrivateKey_file);
    SYM(SSL_CTX_load_verify_locations);
    SYM(SSL_CTX_set_verify);
    SYM(SSL_new);
    SYM(SSL_free);
    SYM(SSL_ctrl);
    SYM(SSL_set_fd);
    SYM(SSL_set1_host);
    SYM(SSL_set_connect_state);
    SYM(SSL_set_accept_state);
    SYM(SSL_do_handshake);
    SYM(SSL_get_error);
    SYM(SSL_write);
    SYM(SSL_read);
    SYM(SSL_version);
    SYM(SSL_get_verify_result);
    SYM(SSL_session_reused);
#undef SYM
    return 1;
}

/* One TLS-over-TCP connection between two libssl SSL objects over a socketpair. */
struct tcp_pair {
    SSL_CTX *cctx, *sctx;
    SSL *client, *server;
    int fd[2];
    int client_done, server_done;
};

static int tcp_pair_init(const struct libssl *l, struct tcp_pair *t, int version)
{
    memset(t, 0, sizeof(*t));
    t->fd[0] = t->fd[1] = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, t->fd) != 0)
        return 0;
    for (int i = 0; i < 2; i++)
        if (fcntl(t->fd[i], F_SETFL, O_NONBLOCK) != 0)
            return 0;
    t->cctx = l->SSL_CTX_new(l->TLS_client_method());
    t->sctx = l->SSL_CTX_new(l->TLS_server_method());
    if (t->cctx == NULL || t->sctx == NULL)
        return 0;
    /* SSL_CTX_set_{min,max}_proto_version are SSL_CTX_ctrl macros */
    l->SSL_CTX_ctrl(t->cctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, NULL);
    l->SSL_CTX_ctrl(t->cctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version, NULL);
    l->SSL_CTX_ctrl(t->sctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, NULL);
    l->SSL_CTX_ctrl(t->sctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version, NULL);
    const char *key = mock_cert_path("rsa.key");
    if (l->SSL_CTX_use_certificate_chain_file(t->sctx, mock_cert_path("rsa-chain.pem")) != 1 ||
        l->SSL_CTX_use_PrivateKey_file(t->sctx, key, SSL_FILETYPE_PEM) != 1 ||
        l->SSL_CTX_load_verify_locations(t->cctx, mock_cert_path("ca.pem"), NULL) != 1)
        return 0;
    l->SSL_CTX_set_verify(t->cctx, SSL_VERIFY_PEER, NULL);
    t->client = l->SSL_new(t->cctx);
    t->server = l->SSL_new(t->sctx);
    if (t->client == NULL || t->server == NULL)
        return 0;
    /* SSL_set_tlsext_host_name is an SSL_ctrl macro */
    if (l->SSL_ctrl(t->client, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                    (void *)"localhost") != 1 ||
        l->SSL_set1_host(t->client, "localhost") != 1 || l->SSL_set_fd(t->client, t->fd[0]) != 1 ||
        l->SSL_set_fd(t->server, t->fd[1]) != 1)
        return 0;
    l->SSL_set_connect_state(t->client);
    l->SSL_set_accept_state(t->server);
    return 1;
}

static void tcp_pair_free(const struct libssl *l, struct tcp_pair *t)
{
    if (t->client != NULL)
        l->SSL_free(t->client);
    if (t->server != NULL)
        l->SSL_free(t->server);
    if (t->cctx != NULL)
        l->SSL_CTX_free(t->cctx);
    if (t->sctx != NULL)
        l->SSL_CTX_free(t->sctx);
    for (int i = 0; i < 2; i++)
        if (t->fd[i] >= 0)
            close(t->fd[i]);
}

/* One SSL_do_handshake call; 1 done, 0 wants more, -1 failed. */
static int tcp_step(const struct libssl *l, SSL *ssl)
{
    int r = l->SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    int e = l->SSL_get_error(ssl, r);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* Application data both ways over the finished TLS connection. */
static int tcp_exchange(const struct libssl *l, struct tcp_pair *t)
{
    char buf[16];
    if (l->SSL_write(t->client, "ping", 4) != 4)
        return 0;
    for (int i = 0; i < 100; i++) {
        int n = l->SSL_read(t->server, buf, sizeof(buf));
        if (n == 4 && memcmp(buf, "ping", 4) == 0)
            break;
        if (n > 0 || l->SSL_get_error(t->server, n) != SSL_ERROR_WANT_READ || i == 99)
            return 0;
        /* TLS 1.3: the client may still have to read the server's tickets */
        l->SSL_read(t->client, buf, sizeof(buf));
    }
    if (l->SSL_write(t->server, "pong", 4) != 4)
        return 0;
    for (int i = 0; i < 100; i++) {
        int n = l->SSL_read(t->client, buf, sizeof(buf));
        if (n == 4 && memcmp(buf, "pong", 4) == 0)
            return 1;
        if (n > 0 || l->SSL_get_error(t->client, n) != SSL_ERROR_WANT_READ)
            return 0;
    }
    return 0;
}

/* One round of the QUIC handshake through qtls: each side runs once and its bytes move on. */
static int quic_step(struct mock_pair *p)
{
    SSL_do_handshake(p->client.ssl);
    if (!mock_deliver(&p->client, &p->server, 0))
        return 0;
    SSL_do_handshake(p->server.ssl);
    return mock_deliver(&p->server, &p->client, 0);
}

/*
 * A libssl TLS handshake (`version`) and a qtls QUIC handshake, one step of each in turn, then
 * data over the TLS connection. Returns 1 when both completed as they should; says why not.
 */
static int both_handshakes(const struct libssl *l, int version)
{
    struct tcp_pair t;
    struct mock_pair q;
    int ok = 0;
    SSL_CTX *qc = mock_client_ctx(), *qs = mock_server_ctx("ecdsa256");
    memset(&q, 0, sizeof(q));
    if (qc == NULL || qs == NULL || !mock_pair_init(&q, qc, qs)) {
        fprintf(stderr, "qtls: contexts or SSL objects\n");
        goto out;
    }
    if (!tcp_pair_init(l, &t, version)) {
        fprintf(stderr, "libssl: setting up the TLS connection failed\n");
        goto out_tcp;
    }
    for (int round = 0; round < 50; round++) {
        int r;
        if (!t.client_done) {
            if ((r = tcp_step(l, t.client)) < 0) {
                fprintf(stderr, "libssl: client handshake failed\n");
                goto out_tcp;
            }
            t.client_done = r;
        }
        if (!SSL_is_init_finished(q.client.ssl) || !SSL_is_init_finished(q.server.ssl))
            if (!quic_step(&q)) {
                fprintf(stderr, "qtls: QUIC handshake failed\n");
                goto out_tcp;
            }
        if (!t.server_done) {
            if ((r = tcp_step(l, t.server)) < 0) {
                fprintf(stderr, "libssl: server handshake failed\n");
                goto out_tcp;
            }
            t.server_done = r;
        }
        if (t.client_done && t.server_done && SSL_is_init_finished(q.client.ssl) &&
            SSL_is_init_finished(q.server.ssl))
            break;
    }
    if (!t.client_done || !t.server_done) {
        fprintf(stderr, "libssl: the TLS handshake did not finish\n");
    } else if (l->SSL_version(t.client) != version ||
               l->SSL_get_verify_result(t.client) != X509_V_OK) {
        fprintf(stderr, "libssl: version %#x, verify result %ld\n", l->SSL_version(t.client),
                l->SSL_get_verify_result(t.client));
    } else if (!tcp_exchange(l, &t)) {
        fprintf(stderr, "libssl: data over the TLS connection failed\n");
    } else if (!SSL_is_init_finished(q.client.ssl) || !SSL_is_init_finished(q.server.ssl) ||
               SSL_process_quic_post_handshake(q.client.ssl) != 1 || !SSL_is_quic(q.client.ssl) ||
               !q.client.have_write[ssl_encryption_application] ||
               memcmp(q.client.write_secret[ssl_encryption_application],
                      q.server.read_secret[ssl_encryption_application],
                      q.client.secret_len[ssl_encryption_application]) != 0) {
        fprintf(stderr, "qtls: the QUIC handshake did not complete\n");
    } else {
        ok = 1;
    }
out_tcp:
    tcp_pair_free(l, &t);
out:
    mock_pair_free(&q);
    SSL_CTX_free(qc);
    SSL_CTX_free(qs);
    if (!ok)
        ERR_print_errors_fp(stderr);
    return ok;
}

/* The object a function's address lies in. */
static const char *object_of(void *f)
{
    Dl_info info;
    return f != NULL && dladdr(f, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : "?";
}

static int contains(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

/* The path of the libqtls.so this binary loaded. */
static const char *libqtls_path(void)
{
    return object_of((void *)SSL_provide_quic_data);
}

/* libssl reached through dlopen(RTLD_LOCAL), libqtls first in the global scope. */
static void libssl_dlopened_and_qtls_handshake_together(void **state)
{
    struct libssl l;
    assert_true(libssl_open(&l));
    /* the two SSL_new are different functions in different objects */
    assert_ptr_not_equal((void *)l.SSL_new, (void *)SSL_new);
    assert_true(contains(object_of((void *)l.SSL_new), "libssl.so.3"));
    assert_true(contains(object_of((void *)SSL_new), "libqtls"));
    assert_true(both_handshakes(&l, TLS1_3_VERSION));
    assert_true(both_handshakes(&l, TLS1_2_VERSION));
    dlclose(l.handle);
}

/*
 * In a child with LD_PRELOAD=libssl.so.3: libssl comes before libqtls in the global scope, and
 * an unversioned lookup of SSL_new finds libssl's. This program's and qtls's calls must still
 * reach qtls, libssl's its own.
 */
static int child_main(void)
{
    struct libssl l;
    if (!libssl_open(&l))
        return 1;
    void *first = dlsym(RTLD_DEFAULT, "SSL_CTX_new");
    if (!contains(object_of(first), "libssl.so.3")) {
        fprintf(stderr, "child: libssl.so.3 is not first in the global scope (%s)\n",
                object_of(first));
        return 1;
    }
    if (!contains(object_of((void *)SSL_CTX_new), "libqtls")) {
        fprintf(stderr, "child: this program's SSL_CTX_new is %s's\n",
                object_of((void *)SSL_CTX_new));
        return 1;
    }
    int ok = both_handshakes(&l, TLS1_3_VERSION) && both_handshakes(&l, TLS1_2_VERSION);
    printf("child: %s\n", ok ? "both handshakes completed" : "FAILED");
    return ok ? 0 : 1;
}

static void libssl_preloaded_and_qtls_handshake_together(void **state)
{
    struct libssl l;
    assert_true(libssl_open(&l));
    const char *path = libssl_path(l.handle, "SSL_new");
    assert_non_null(path);
    char preload[1024], asan[1024];
    snprintf(preload, sizeof(preload), "%s", path);
    /* a sanitized build: the sanitizer runtime is not first in the list then, which is fine */
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0", old != NULL ? old : "",
             old != NULL && *old != '\0' ? ":" : "");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LD_PRELOAD", preload, 1);
        setenv("ASAN_OPTIONS", asan, 1);
        setenv("QTLS_COEXIST_CHILD", "1", 1);
        execl("/proc/self/exe", "test_coexist", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    dlclose(l.handle);
}

/*
 * Runs `fmt` with `arg` (a path) through the shell and gives each output line to `fn`, which
 * returns 0 to stop reading. Returns 1 when the command ran and exited 0 (or was stopped).
 */
static int each_line(const char *fmt, const char *arg, int (*fn)(const char *line, void *ctx),
                     void *ctx)
{
    char cmd[1024], line[1024];
    snprintf(cmd, sizeof(cmd), fmt, arg);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return 0;
    int stopped = 0;
    while (!stopped && fgets(line, sizeof(line), f) != NULL)
        stopped = !fn(line, ctx);
    if (stopped)
        while (fgets(line, sizeof(line), f) != NULL)
            ; /* let it finish rather than die of SIGPIPE */
    return pclose(f) == 0;
}

struct exports {
    int versioned, bad;
};

/* A line of readelf --dyn-syms: a defined global symbol must be NAME@@QTLS_1. */
static int check_export(const char *line, void *ctx)
{
    struct exports *e = ctx;
    char num[32], value[32], size[32], type[32], bind[32], vis[32], ndx[32], name[256];
    if (sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %255s", num, value, size, type, bind,
               vis, ndx, name) != 8 ||
        strcmp(ndx, "UND") == 0 || (strcmp(bind, "GLOBAL") != 0 && strcmp(bind, "WEAK") != 0))
        return 1;
    if (strcmp(name, "QTLS_1") == 0) /* the version's own definition */
        return 1;
    const char *at = strstr(name, "@@QTLS_1");
    if (at == NULL || at[8] != '\0') {
        if (e->bad++ < 10)
            fprintf(stderr, "export outside QTLS_1: %s\n", name);
    } else {
        e->versioned++;
    }
    return 1;
}

/* Every symbol libqtls.so defines for others is in version QTLS_1 (src/libqtls.map). */
static void exports_are_versioned_qtls_1(void **state)
{
    struct exports e = {0, 0};
    /* readelf is binutils's, which gcc needs */
    assert_true(each_line("readelf -W --dyn-syms '%s'", libqtls_path(), check_export, &e));
    assert_int_equal(e.bad, 0);
    assert_true(e.versioned > 300); /* SSL_*, TLS_*, the QUIC API, qtls_quic_* */
}

/* The names libqtls.so defines for others, without their versions. */
struct names {
    char *name[2048];
    size_t n;
};

static int collect_export(const char *line, void *ctx)
{
    struct names *names = ctx;
    char num[32], value[32], size[32], type[32], bind[32], vis[32], ndx[32], name[256];
    if (sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %255s", num, value, size, type, bind,
               vis, ndx, name) != 8 ||
        strcmp(ndx, "UND") == 0 || strcmp(type, "FUNC") != 0 || names->n == 2048)
        return 1;
    name[strcspn(name, "@")] = '\0';
    names->name[names->n++] = strdup(name);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct reloc_scan {
    struct names *exports;
    int found;
};

/* A line of readelf -r whose symbol is one of libqtls's own exports: stop there. */
static int find_own_relocation(const char *line, void *ctx)
{
    struct reloc_scan *r = ctx;
    char offset[32], info[32], type[64], value[32], sym[256];
    if (sscanf(line, "%31s %31s %63s %31s %255s", offset, info, type, value, sym) != 5)
        return 1;
    sym[strcspn(sym, "@")] = '\0';
    const char *key = sym;
    if (bsearch(&key, r->exports->name, r->exports->n, sizeof(char *), by_name) == NULL)
        return 1;
    fprintf(stderr, "relocation against an export: %s", line);
    r->found = 1;
    return 0;
}

static int find_libssl(const char *line, void *ctx)
{
    if (strstr(line, "(NEEDED)") == NULL || strstr(line, "[libssl") == NULL)
        return 1;
    fprintf(stderr, "libqtls needs %s", line);
    *(int *)ctx = 1;
    return 0;
}

/*
 * libqtls binds its calls to its own exports at link time: no relocation names one of them,
 * so no other object can be chosen for them at run time. libqtls needs no libssl either.
 */
static void internal_calls_bound_at_link_time(void **state)
{
    static struct names exports;
    struct reloc_scan r = {&exports, 0};
    assert_true(each_line("readelf -W --dyn-syms '%s'", libqtls_path(), collect_export, &exports));
    assert_true(exports.n > 300);
    qsort(exports.name, exports.n, sizeof(char *), by_name);
    assert_true(each_line("readelf -W -r '%s'", libqtls_path(), find_own_relocation, &r));
    for (size_t i = 0; i < exports.n; i++)
        free(exports.name[i]);
    exports.n = 0;
    assert_false(r.found);
    int libssl = 0;
    assert_true(each_line("readelf -d '%s'", libqtls_path(), find_libssl, &libssl));
    assert_false(libssl);
}

int main(int argc, char **argv)
{
    if (getenv("QTLS_COEXIST_CHILD") != NULL)
        return child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exports_are_versioned_qtls_1),
        cmocka_unit_test(internal_calls_bound_at_link_time),
        cmocka_unit_test(libssl_dlopened_and_qtls_handshake_together),
        cmocka_unit_test(libssl_preloaded_and_qtls_handshake_together),
    };
    return cmocka_run_group_tests_name("coexist", tests, NULL, NULL);
}
