/*
 * The one wall clock behind session times, ticket ages, ticket key rotation
 * and the replay filter. Everything reads clock_gettime(CLOCK_REALTIME):
 * time() reads the kernel's coarse clock, which lags it by up to a tick
 * after each second boundary, and mixing the two made a ticket received a
 * moment ago look issued in the future, so the client did not offer it.
 */

#include "base/base.h"

#include <time.h>

static uint64_t (*test_now_us)(void);

void clock_set_test_clock(uint64_t (*now_us)(void)) { test_now_us = now_us; }

uint64_t clock_now_us(void)
{
    if (test_now_us != NULL)
        return test_now_us();
#ifdef QTLS_FUZZING
    return (uint64_t)1700000000 * 1000000; /* a fixed time: fuzz inputs replay alike (crypto.c) */
#endif
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t clock_now_seconds(void) { return clock_now_us() / 1000000; }
