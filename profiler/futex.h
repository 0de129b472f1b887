/*
 * futex.h: the two waits of the pipeline (the writer's sleep, the finish handshake) as raw futex
 * calls: async-signal-safe, no lock, bounded by a timeout.
 */
#ifndef INFPROF_FUTEX_H
#define INFPROF_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *word == expected, at most timeout_ms. */
static inline void ip_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ms)
{
    struct timespec ts = {(time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

static inline void ip_futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

#endif
