/*
 * libheapcount.so: preloaded (LD_PRELOAD) into the benchmark programs for
 * their heap run only. It interposes the glibc allocator entry points,
 * forwards to glibc's own (__libc_malloc, ...), and keeps the usable size
 * (malloc_usable_size) of every live block, so that one accounting covers
 * every library alike: libssl and libcrypto, GnuTLS with nettle, GMP and
 * libtasn1, qtls, and anything glibc allocates on their behalf. The timing
 * runs never load it. Single-threaded programs only (plain counters).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

struct heapcount {
    size_t bytes;
    size_t peak;
    unsigned long allocs;
    size_t bytes_total;
};

static struct heapcount hc;

__attribute__((visibility("default"))) void heapcount_get(struct heapcount *out) { *out = hc; }
__attribute__((visibility("default"))) void heapcount_reset_peak(void) { hc.peak = hc.bytes; }

static void *counted(void *p)
{
    if (p != NULL) {
        size_t n = malloc_usable_size(p);
        hc.bytes += n;
        hc.bytes_total += n;
        hc.allocs++;
        if (hc.bytes > hc.peak)
            hc.peak = hc.bytes;
    }
    return p;
}

static void uncount(void *p)
{
    if (p != NULL)
        hc.bytes -= malloc_usable_size(p);
}

void *malloc(size_t n) { return counted(__libc_malloc(n)); }
void *calloc(size_t a, size_t b) { return counted(__libc_calloc(a, b)); }

void free(void *p)
{
    uncount(p);
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    size_t old = p != NULL ? malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q == NULL) {
        if (n == 0 && p != NULL) /* glibc's realloc(p, 0) frees p */
            hc.bytes -= old;
        return NULL; /* otherwise it failed and the old block stays, still counted */
    }
    hc.bytes -= old;
    return counted(q);
}

void *memalign(size_t align, size_t n) { return counted(__libc_memalign(align, n)); }
void *aligned_alloc(size_t align, size_t n) { return counted(__libc_memalign(align, n)); }
void *valloc(size_t n) { return counted(__libc_memalign(4096, n)); }

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = counted(__libc_memalign(align, n));
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}
