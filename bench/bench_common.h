/*
 * Shared by the handshake benchmark programs (bench_openssl.c, bench_gnutls.c,
 * bench_qtls.c, and bench_tcp.c built on each library). Each program measures one library, because
 * libssl and libqtls define the same SSL_* symbols and cannot share a
 * process; bench/run.sh runs them in interleaved rounds and compares.
 *
 * A program fills a struct bench_lib and calls bench_main(). The modes:
 *   -t          self-test: one checked handshake, then the negative cases
 *               (wrong host name, wrong trust anchor) must fail
 *   -n N -w W   timing: W warm-up handshakes, then N timed ones; prints
 *               "TIME <name> n=N cpu_us=.. wall_us=.." (per handshake)
 *   -c N        callgrind: 5 warm-ups, then collection toggled around N
 *               handshakes (run under valgrind --collect-atstart=no)
 *   -m M        heap: M established pairs kept alive; prints "HEAP ..."
 *               lines (needs libheapcount.so preloaded for the exact figures)
 *   -d DIR      where cert.pem, key.pem and other.pem are (default build/bench)
 *   -s SCEN     the handshake to measure: full (default), resume, early (resumed +
 *               0-RTT accepted), hrr (HelloRetryRequest), cold (first contact: a fresh
 *               client SSL_CTX per handshake, made outside the measurement); the
 *               printed name becomes <lib>/<SCEN>. The negative cases of -t always use
 *               the full handshake. bench_tcp.c (TLS over TCP) has full, resume, resume1
 *               and bulk-aes128|bulk-aes256|bulk-chacha (one "handshake" = one 16 KB record).
 *   -T T        with -n: T threads, each W warm-up then N handshakes on the shared
 *               contexts, started together; prints "THREADS <name> threads=T ..."
 *               (handshakes per second of wall time, CPU µs per handshake, cores = CPU
 *               over wall, voluntary / involuntary context switches, when the first
 *               thread finished and each thread's CPU, both as fractions of the wall
 *               time). With -c: each
 *               thread collects its own N handshakes. -T with -s spin: the reference, a
 *               compute loop sharing nothing, timed the same way (no library involved).
 *   -w W        also with -c: the warm-up count (default 5; -w 0 -c 1 is the first
 *               handshake of the process)
 */
#ifndef QTLS_BENCH_COMMON_H
#define QTLS_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The QUIC transport parameters each side sends (53 bytes, RFC 9000 §18.2 encoding). */
#define BENCH_TP_LEN 53
extern const uint8_t bench_client_tp[BENCH_TP_LEN];
extern const uint8_t bench_server_tp[BENCH_TP_LEN];

/* The host name the client sends as SNI and verifies in the certificate. */
#define BENCH_HOST "localhost"

enum bench_neg {
    BENCH_OK = 0,      /* the normal configuration */
    BENCH_WRONG_HOST,  /* the client expects another host name */
    BENCH_WRONG_CA,    /* the client trusts another (self-signed) certificate */
};

/*
 * One connection pair, kept alive for the heap measurement. Libraries
 * allocate their own pair type; bench_common treats it as opaque.
 */
struct bench_lib {
    const char *name;
    /* Creates the contexts / credentials once. 1 on success. */
    int (*init)(const char *certdir);
    /*
     * One handshake as the benchmark counts it: create both objects, run to
     * completion (the server has processed the client Finished), check what
     * was negotiated, free both. 1 if it completed and every check passed.
     */
    int (*handshake)(void);
    /* The same with a broken client configuration: must return 0 (failure). */
    int (*handshake_neg)(enum bench_neg neg);
    /*
     * Heap mode: the pair's transport bookkeeping, allocated before the
     * first reading so that it is not counted, then a checked handshake that
     * leaves both objects alive (transport dropped), then each side freed.
     */
    void *(*pair_alloc)(void);
    int (*pair_establish)(void *pair);
    void (*pair_free_client)(void *pair);
    void (*pair_free_server)(void *pair);
    void (*pair_release)(void *pair); /* the bookkeeping itself */
    /*
     * Selects what handshake() measures (after init): "resume", "early" or "hrr".
     * 1 if the library's harness can do it. NULL: only the full handshake.
     */
    int (*scenario)(const char *name);
    /* 1 if handshake() may run in several threads at once (thread-local harness state). */
    int threads;
    /* Frees what init created. */
    void (*fini)(void);
};

int bench_main(int argc, char **argv, const struct bench_lib *lib);

/* Appends a reason to the failure log printed when a handshake fails. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Called by scenario() (-s cold): fn runs before each measured handshake, outside the
 * timing and the callgrind collection (the fresh client context). handshake() must also
 * work without it: the self-test and the warm-ups do not call it.
 */
void bench_set_prepare(int (*fn)(void));

/* Path of DIR/name in a static buffer (rotating, 4 at a time). */
const char *bench_path(const char *certdir, const char *name);

#endif
