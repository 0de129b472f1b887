/*
 * clock.h: the one clock of a run.
 *
 * Every host event and every GPU record is stamped with ip_clock_now (CUPTI is handed it as its
 * timestamp callback), so phases, allocator reports, cuDNN calls, NVTX ranges and kernels share
 * one timeline. Rows store times relative to the run's t0.
 *
 * It is CLOCK_MONOTONIC in nanoseconds, read one of two ways:
 *  - the vDSO's clock_gettime (about 21 ns on a 2-vCPU EPYC VM, most of what a ring append
 *    costs), until the writer has calibrated the line below, and always where the kernel's own
 *    clocksource is not the TSC, and off x86-64;
 *  - the TSC through a line the writer keeps on CLOCK_MONOTONIC (clock.c): ns = ns0 + (tsc -
 *    tsc0) * mult / 2^32, one unserialised rdtsc and a multiply (about 10 ns). The writer moves
 *    the line at every cycle, continuously (the new line starts where the old one is), its slope
 *    the recent rate steered so that it meets CLOCK_MONOTONIC again within half a second: within
 *    about 100 ns of it in our runs, some microseconds while NTP changes CLOCK_MONOTONIC's rate
 *    (docs/internals.md, "Times"). Where the two part by more than a millisecond (the kernel
 *    gave up the TSC) the clock goes back to clock_gettime for good.
 * The line is read under a sequence count (the writer changes it, never a hook); a reader that
 * finds it being changed, or changed under it 64 times in a row, reads clock_gettime instead, so
 * a hook never waits.
 */
#ifndef INFPROF_CLOCK_H
#define INFPROF_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

struct ip_clock_line {
    _Atomic uint32_t seq;             /* odd while the writer changes the line */
    _Atomic uint32_t on;              /* the line is in use */
    _Atomic uint64_t tsc0, ns0, mult; /* mult: ns per tick, 32.32 fixed point */
    _Atomic uint64_t frac0;           /* ns0's fraction, in 2^-32 ns (a step loses none) */
};
extern struct ip_clock_line ip_clock_line;
/* The calling thread's last reading: a thread's readings never go back (the TSCs of two CPUs may
 * differ by a few cycles, and an unserialised rdtsc may run a few cycles early; the vDSO clamps
 * the same way). */
extern _Thread_local uint64_t ip_clock_last __attribute__((tls_model("initial-exec")));

static inline uint64_t ip_clock_gettime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t ip_clock_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The line at tsc t (t may lie a few cycles before tsc0: a reader's rdtsc is not ordered; the
 * fraction is left out there). */
static inline uint64_t ip_clock_line_at(uint64_t t, uint64_t tsc0, uint64_t ns0, uint64_t frac0,
                                        uint64_t mult)
{
    if (t >= tsc0) return ns0 + (uint64_t)(((unsigned __int128)(t - tsc0) * mult + frac0) >> 32);
    return ns0 - (uint64_t)(((unsigned __int128)(tsc0 - t) * mult) >> 32);
}
#endif

static inline uint64_t ip_clock_monotone(uint64_t v)
{
    uint64_t last = ip_clock_last;
    if (v < last) return last;
    ip_clock_last = v;
    return v;
}

static inline uint64_t ip_clock_now(void)
{
#if defined(__x86_64__)
    if (atomic_load_explicit(&ip_clock_line.on, memory_order_relaxed)) {
        for (int tries = 0; tries < 64; tries++) {
            uint32_t s = atomic_load_explicit(&ip_clock_line.seq, memory_order_acquire);
            uint32_t on = atomic_load_explicit(&ip_clock_line.on, memory_order_relaxed);
            uint64_t tsc0 = atomic_load_explicit(&ip_clock_line.tsc0, memory_order_relaxed);
            uint64_t ns0 = atomic_load_explicit(&ip_clock_line.ns0, memory_order_relaxed);
            uint64_t mult = atomic_load_explicit(&ip_clock_line.mult, memory_order_relaxed);
            uint64_t frac0 = atomic_load_explicit(&ip_clock_line.frac0, memory_order_relaxed);
            uint64_t t = ip_clock_rdtsc();
            atomic_thread_fence(memory_order_acquire);
            if (s & 1 || !on) break; /* the writer is moving it: this reading without it */
            if (atomic_load_explicit(&ip_clock_line.seq, memory_order_relaxed) != s) continue;
            return ip_clock_monotone(ip_clock_line_at(t, tsc0, ns0, frac0, mult));
        }
    }
#endif
    return ip_clock_monotone(ip_clock_gettime());
}

/* Read whether the TSC may be used (the kernel's clocksource, INFPROF_CLOCK), once, where the
 * library starts (ip_writer_start, before the program runs: the file is opened there, not
 * beside a program already handling its descriptors). */
void ip_clock_init(void);
/* Writer side (clock.c): keep the line on CLOCK_MONOTONIC. Called by the writer thread only, at
 * each of its cycles; does something at most every IP_CLOCK_STEP_MS. */
#define IP_CLOCK_STEP_MS 50
void ip_clock_calibrate(void);
/* What the clock did, for the run metadata: 0 clock_gettime, 1 the TSC line, -1 the TSC line
 * given up (parted from CLOCK_MONOTONIC); steps taken; the largest distance (ns) the line was
 * found from CLOCK_MONOTONIC at a step. */
void ip_clock_summary(int *source, uint64_t *steps, int64_t *max_error_ns);
/* For tests (tests/progs/clock_check.c): one step of the writer given a (tsc, CLOCK_MONOTONIC)
 * pair; usable: the TSC may be used (the kernel's clocksource). */
void ip_clock_step(uint64_t tsc, uint64_t ns, int usable);
/* The writer's step now (ip_clock_calibrate without its pace). */
void ip_clock_step_now(void);
void ip_clock_reset(void);
/* In a forked child: its writer's steps and distances are its own; a line the fork caught half
 * written (its writer was stepping: not under writer_lock) is dropped, and a new baseline begun. */
void ip_clock_atfork_child(void);

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
