/*
 * clock.h: the one clock of a run.
 *
 * Every host event and every GPU record is stamped with CLOCK_MONOTONIC nanoseconds (CUPTI is
 * handed ip_clock_now as its timestamp callback), so phases, allocator reports, cuDNN calls, NVTX
 * ranges and kernels share one timeline. Rows store times relative to the run's t0.
 */
#ifndef INFPROF_CLOCK_H
#define INFPROF_CLOCK_H

#include <stdint.h>
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

#endif
