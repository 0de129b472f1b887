/*
 * clock.h: the one clock of a run.
 *
 * Every host event and every GPU record is stamped with CLOCK_MONOTONIC nanoseconds (CUPTI is
 * handed ip_clock_now as its timestamp callback), so phases, allocator reports, cuDNN calls, NVTX
 * ranges and kernels share one timeline. Rows store times relative to the run's t0.
 */
#ifndef INFPROF_CLOCK_H
#define INFPROF_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline uint64_t ip_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ip_clock_realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* In a time-ordered array of n records of `stride` bytes, each starting with its uint64_t time:
 * the index of the last one at or before ts (0 when none is). */
static inline size_t ip_clock_index(const void *records, size_t n, size_t stride, uint64_t ts)
{
    const unsigned char *p = records;
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        uint64_t t;
        memcpy(&t, p + mid * stride, sizeof t);
        if (t <= ts)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

#endif
