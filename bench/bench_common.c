/* The driver shared by the benchmark programs: modes, timing, heap readings. */
#include "bench_common.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT /* no valgrind headers: -c runs, but collects nothing */
#define CALLGRIND_TOGGLE_COLLECT
#endif

/*
 * RFC 9000 §18.2 parameters, varint-encoded, 53 bytes: max_idle_timeout 30000,
 * max_udp_payload_size 1472, initial_max_data 1 MiB, the three
 * initial_max_stream_data_* 256 KiB, initial_max_streams_bidi 100,
 * initial_max_streams_uni 3, disable_active_migration, and an 8-byte
 * initial_source_connection_id that tells the two senders apart.
 */
#define TP_COMMON                                                                               \
    0x01, 0x04, 0x80, 0x00, 0x75, 0x30, 0x03, 0x02, 0x45, 0xc0, 0x04, 0x04, 0x80, 0x10, 0x00,   \
        0x00, 0x05, 0x04, 0x80, 0x04, 0x00, 0x00, 0x06, 0x04, 0x80, 0x04, 0x00, 0x00, 0x07,     \
        0x04, 0x80, 0x04, 0x00, 0x00, 0x08, 0x02, 0x40, 0x64, 0x09, 0x01, 0x03, 0x0c, 0x00,     \
        0x0f, 0x08
const uint8_t bench_client_tp[BENCH_TP_LEN] = {TP_COMMON, 'c', 'l', 'i', 'e', 'n', 't', 'c', 'i'};
const uint8_t bench_server_tp[BENCH_TP_LEN] = {TP_COMMON, 's', 'e', 'r', 'v', 'e', 'r', 'c', 'i'};

static _Thread_local char fail_log[2048]; /* per thread: -T runs handshakes in several */
static int (*prepare_fn)(void);

void bench_set_prepare(int (*fn)(void)) { prepare_fn = fn; }

void bench_fail(const char *fmt, ...)
{
    size_t used = strlen(fail_log);
    if (used + 4 >= sizeof(fail_log))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_log + used, sizeof(fail_log) - used - 2, fmt, ap);
    va_end(ap);
    strcat(fail_log, "; ");
}

const char *bench_path(const char *certdir, const char *name)
{
    static char buf[4][1024];
    static unsigned next;
    char *out = buf[next++ % 4];
    snprintf(out, sizeof(buf[0]), "%s/%s", certdir, name);
    return out;
}

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die_handshake(const struct bench_lib *lib, const char *what, long i)
{
    fprintf(stderr, "FAIL %s: %s handshake %ld failed: %s\n", lib->name, what, i,
            fail_log[0] ? fail_log : "(no reason recorded)");
    exit(1);
}

static void run_handshakes(const struct bench_lib *lib, const char *what, long n)
{
    for (long i = 0; i < n; i++)
        if (!lib->handshake())
            die_handshake(lib, what, i);
}

/* k timed handshakes: their CPU and wall seconds, without prepare_fn's work. */
static void timed_block(const struct bench_lib *lib, long k, double *cpu, double *wall)
{
    if (prepare_fn == NULL) {
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        run_handshakes(lib, "timed", k);
        *cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        *wall = now(CLOCK_MONOTONIC) - w0;
        return;
    }
    *cpu = *wall = 0;
    for (long i = 0; i < k; i++) {
        if (!prepare_fn())
            die_handshake(lib, "prepare for", i);
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        if (!lib->handshake())
            die_handshake(lib, "timed", i);
        *cpu += now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        *wall += now(CLOCK_MONOTONIC) - w0;
    }
}

/* n handshakes under callgrind, collection on for the handshakes only. */
static void collected_handshakes(const struct bench_lib *lib, long n)
{
    if (prepare_fn == NULL) {
        CALLGRIND_TOGGLE_COLLECT;
        run_handshakes(lib, "callgrind", n);
        CALLGRIND_TOGGLE_COLLECT;
        return;
    }
    for (long i = 0; i < n; i++) {
        if (!prepare_fn())
            die_handshake(lib, "prepare for", i);
        CALLGRIND_TOGGLE_COLLECT;
        int ok = lib->handshake();
        CALLGRIND_TOGGLE_COLLECT;
        if (!ok)
            die_handshake(lib, "callgrind", i);
    }
}

/* --- threads (-T) ---------------------------------------------------------- */

/*
 * -s spin, the reference for -T: about a handshake's worth of arithmetic on one local
 * variable, no memory shared between threads and no library. Its 2-thread gain is what
 * the machine gives two threads at that moment (a shared host's other load, and vCPUs
 * that may share a physical core), so a library's gain is read against it.
 */
static int spin_handshake(void)
{
    volatile uint64_t sink;
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 150000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;
    (void)sink;
    return 1;
}

static int spin_init(const char *certdir) { return 1; }
static void spin_fini(void) {}
static const struct bench_lib spin_lib = {
    .name = "spin", .init = spin_init, .handshake = spin_handshake, .threads = 1, .fini = spin_fini,
};

struct worker {
    const struct bench_lib *lib;
    long n, warm;
    int cg; /* under callgrind: each thread toggles its own collection */
    pthread_barrier_t *start;
    double end, cpu; /* when this thread finished (CLOCK_MONOTONIC), its CPU seconds */
};

static void *worker_main(void *v)
{
    struct worker *w = v;
    run_handshakes(w->lib, "warm-up", w->warm);
    pthread_barrier_wait(w->start);
    double c0 = now(CLOCK_THREAD_CPUTIME_ID);
    if (w->cg)
        collected_handshakes(w->lib, w->n);
    else
        run_handshakes(w->lib, "threaded", w->n);
    w->cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
    w->end = now(CLOCK_MONOTONIC);
    return NULL;
}

/*
 * T threads share the library's contexts, each with its own connections; they warm up,
 * wait for each other, then each runs n handshakes. Throughput is all the handshakes over
 * the wall time from the start to the last thread's end; "cores" is CPU over wall time,
 * which shows whether the threads really ran at once (on a shared host they may not).
 * The context switches tell why not: a thread that blocks (a contended lock sleeping in
 * futex) switches voluntarily, one that other processes preempt involuntarily.
 */
static void threads_mode(const struct bench_lib *lib, int t, long n, long warm, int cg)
{
    pthread_t tid[64];
    struct worker w[64];
    pthread_barrier_t start;
    if (t < 1 || t > 64 || pthread_barrier_init(&start, NULL, (unsigned)t + 1) != 0)
        exit(2);
    for (int i = 0; i < t; i++)
        w[i] = (struct worker){lib, n, warm, cg, &start, 0, 0};
    for (int i = 0; i < t; i++)
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "FAIL %s: pthread_create\n", lib->name);
            exit(1);
        }
    struct rusage u0, u1;
    pthread_barrier_wait(&start);
    getrusage(RUSAGE_SELF, &u0);
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    for (int i = 0; i < t; i++)
        pthread_join(tid[i], NULL);
    double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
    getrusage(RUSAGE_SELF, &u1);
    pthread_barrier_destroy(&start);
    double total = (double)t * (double)n, first_end = w1, tcpu_min = 1e9, tcpu_max = 0;
    for (int i = 0; i < t; i++) {
        first_end = w[i].end < first_end ? w[i].end : first_end;
        tcpu_min = w[i].cpu < tcpu_min ? w[i].cpu : tcpu_min;
        tcpu_max = w[i].cpu > tcpu_max ? w[i].cpu : tcpu_max;
    }
    if (cg)
        printf("CALLGRIND %s/T%d n=%.0f\n", lib->name, t, total);
    else
        printf("THREADS %s threads=%d n=%ld hs_per_s=%.1f cpu_us=%.2f cores=%.2f vcsw=%ld "
               "ivcsw=%ld first_done=%.2f thread_cpu=%.2f-%.2f\n",
               lib->name, t, n, total / (w1 - w0), (c1 - c0) * 1e6 / total, (c1 - c0) / (w1 - w0),
               u1.ru_nvcsw - u0.ru_nvcsw, u1.ru_nivcsw - u0.ru_nivcsw,
               (first_end - w0) / (w1 - w0), tcpu_min / (w1 - w0), tcpu_max / (w1 - w0));
}

/* --- heap readings ------------------------------------------------------- */

/* libheapcount.so (bench/heapcount.c), when preloaded; see there. */
struct heapcount {
    size_t bytes;          /* usable bytes currently allocated */
    size_t peak;           /* highest `bytes` since the last reset */
    unsigned long allocs;  /* allocation calls so far (malloc, calloc, realloc, memalign...) */
    size_t bytes_total;    /* usable bytes handed out so far */
};
typedef void (*heapcount_get_fn)(struct heapcount *);
typedef void (*heapcount_reset_peak_fn)(void);

struct reading {
    size_t hc;       /* heapcount bytes */
    size_t mi;       /* mallinfo2 uordblks + hblkhd */
};

static heapcount_get_fn hc_get;

static struct reading read_heap(void)
{
    struct reading r = {0, 0};
    if (hc_get != NULL) {
        struct heapcount h;
        hc_get(&h);
        r.hc = h.bytes;
    }
    struct mallinfo2 mi = mallinfo2();
    r.mi = mi.uordblks + mi.hblkhd;
    return r;
}

static double per(long delta, long m) { return (double)delta / (double)m; }

static void heap_mode(const struct bench_lib *lib, long m, long warm)
{
    hc_get = (heapcount_get_fn)dlsym(RTLD_DEFAULT, "heapcount_get");
    heapcount_reset_peak_fn hc_reset = (heapcount_reset_peak_fn)dlsym(RTLD_DEFAULT,
                                                                      "heapcount_reset_peak");
    run_handshakes(lib, "warm-up", warm);

    /* Allocations made during one whole handshake (create, run, free). */
    if (hc_get != NULL && hc_reset != NULL) {
        const long n = 200;
        struct heapcount a, b;
        size_t peak_max = 0;
        hc_get(&a);
        for (long i = 0; i < n; i++) {
            struct heapcount s, e;
            hc_get(&s);
            hc_reset();
            if (!lib->handshake())
                die_handshake(lib, "heap", i);
            hc_get(&e);
            if (e.peak - s.bytes > peak_max)
                peak_max = e.peak - s.bytes;
        }
        hc_get(&b);
        printf("HEAP %s per_handshake allocs=%.1f bytes=%.0f peak=%zu\n", lib->name,
               (double)(b.allocs - a.allocs) / n, (double)(b.bytes_total - a.bytes_total) / n,
               peak_max);
    }

    void **pairs = calloc((size_t)m, sizeof(*pairs));
    if (pairs == NULL)
        exit(1);
    for (long i = 0; i < m; i++)
        if ((pairs[i] = lib->pair_alloc()) == NULL)
            exit(1);
    struct reading r0 = read_heap();
    for (long i = 0; i < m; i++)
        if (!lib->pair_establish(pairs[i]))
            die_handshake(lib, "heap pair", i);
    struct reading r1 = read_heap();
    for (long i = 0; i < m; i++)
        lib->pair_free_client(pairs[i]);
    struct reading r2 = read_heap();
    for (long i = 0; i < m; i++)
        lib->pair_free_server(pairs[i]);
    struct reading r3 = read_heap();
    for (long i = 0; i < m; i++)
        lib->pair_release(pairs[i]);
    free(pairs);

    /* Per pair; leaked_bytes is the whole difference, so that a few bytes in all show. */
    if (hc_get != NULL)
        printf("HEAP %s held client=%.0f server=%.0f leaked=%.0f leaked_bytes=%ld\n", lib->name,
               per((long)r1.hc - (long)r2.hc, m), per((long)r2.hc - (long)r3.hc, m),
               per((long)r3.hc - (long)r0.hc, m), (long)r3.hc - (long)r0.hc);
    printf("HEAP %s mallinfo client=%.0f server=%.0f leaked=%.0f leaked_bytes=%ld\n", lib->name,
           per((long)r1.mi - (long)r2.mi, m), per((long)r2.mi - (long)r3.mi, m),
           per((long)r3.mi - (long)r0.mi, m), (long)r3.mi - (long)r0.mi);
}

/* --- self-test ------------------------------------------------------------ */

static int selftest(const struct bench_lib *lib)
{
    int bad = 0;
    fail_log[0] = '\0';
    if (!lib->handshake()) {
        printf("CHECK %s handshake: FAILED: %s\n", lib->name, fail_log);
        bad = 1;
    } else {
        printf("CHECK %s handshake with every check: ok\n", lib->name);
    }
    static const struct {
        enum bench_neg neg;
        const char *what;
    } negs[] = {{BENCH_WRONG_HOST, "wrong host name"}, {BENCH_WRONG_CA, "wrong trust anchor"}};
    for (size_t i = 0; i < sizeof(negs) / sizeof(negs[0]); i++) {
        fail_log[0] = '\0';
        int r = lib->handshake_neg(negs[i].neg);
        printf("CHECK %s %s: %s%s%s\n", lib->name, negs[i].what,
               r == 0 ? "the client failed, as it must" : "COMPLETED (wrong)",
               r == 0 && fail_log[0] ? " - " : "", r == 0 ? fail_log : "");
        bad |= r != 0;
    }
    fail_log[0] = '\0';
    /* And the normal configuration still works after the failures. */
    if (!lib->handshake()) {
        printf("CHECK %s handshake after the failures: FAILED: %s\n", lib->name, fail_log);
        bad = 1;
    }
    return bad;
}

/* --- main ----------------------------------------------------------------- */

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-d CERTDIR] [-s full|resume|early|hrr|cold|resume1|bulk-*] [-T THREADS] "
            "(-t | -n N [-w W] | -c N [-w W] | -m M)\n",
            prog);
    exit(2);
}

int bench_main(int argc, char **argv, const struct bench_lib *lib)
{
    const char *certdir = "build/bench", *scen = "full";
    long n = 2000, warm = -1, cg = 0, heap = 0, threads = 0;
    int test = 0, opt;
    while ((opt = getopt(argc, argv, "d:s:tn:w:c:m:T:")) != -1) {
        switch (opt) {
        case 'd': certdir = optarg; break;
        case 's': scen = optarg; break;
        case 't': test = 1; break;
        case 'n': n = atol(optarg); break;
        case 'w': warm = atol(optarg); break;
        case 'c': cg = atol(optarg); break;
        case 'm': heap = atol(optarg); break;
        case 'T': threads = atol(optarg); break;
        default: usage(argv[0]);
        }
    }
    if (optind != argc || n <= 0 || warm < -1 || cg < 0 || heap < 0 || threads < 0 ||
        threads > 64 || (threads > 0 && (test || heap)))
        usage(argv[0]);
    if (strcmp(scen, "spin") == 0) {
        if (threads == 0)
            usage(argv[0]);
        lib = &spin_lib;
        scen = "full";
    }
    if (threads > 1 && !lib->threads) {
        fprintf(stderr, "FAIL %s: this harness runs in one thread only\n", lib->name);
        return 3;
    }
    if (!lib->init(certdir)) {
        fprintf(stderr, "FAIL %s: set-up failed: %s\n", lib->name, fail_log);
        return 1;
    }
    static char name[64];
    static struct bench_lib named;
    if (strcmp(scen, "full") != 0) {
        if (lib->scenario == NULL || !lib->scenario(scen)) {
            fprintf(stderr, "FAIL %s: scenario %s not available: %s\n", lib->name, scen, fail_log);
            return 3;
        }
        named = *lib;
        snprintf(name, sizeof(name), "%s/%s", lib->name, scen);
        named.name = name;
        lib = &named;
    }
    int rc = 0;
    if (test) {
        rc = selftest(lib);
    } else if (threads > 0) {
        threads_mode(lib, (int)threads, cg > 0 ? cg : n, warm >= 0 ? warm : cg > 0 ? 5 : 20,
                     cg > 0);
    } else if (cg > 0) {
        run_handshakes(lib, "warm-up", warm >= 0 ? warm : 5);
        collected_handshakes(lib, cg);
        printf("CALLGRIND %s n=%ld\n", lib->name, cg);
    } else if (heap > 0) {
        heap_mode(lib, heap, warm >= 0 ? warm : 20);
    } else {
        /*
         * The whole run gives cpu_us and wall_us. It is also cut into blocks of
         * BLOCK handshakes, and best_us is the fastest block: on a shared, noisy
         * host the best block is what the code costs when nothing else competes.
         */
        enum { BLOCK = 100 };
        run_handshakes(lib, "warm-up", warm >= 0 ? warm : 20);
        double cpu = 0, wall = 0, best = 0;
        for (long done = 0; done < n;) {
            long k = n - done < BLOCK ? n - done : BLOCK;
            double bc, bw;
            timed_block(lib, k, &bc, &bw);
            double us = bc * 1e6 / (double)k;
            if (k == BLOCK && (best == 0 || us < best))
                best = us;
            cpu += bc;
            wall += bw;
            done += k;
        }
        printf("TIME %s n=%ld cpu_us=%.2f wall_us=%.2f best_us=%.2f\n", lib->name, n,
               cpu * 1e6 / n, wall * 1e6 / n, best);
    }
    lib->fini();
    return rc;
}
