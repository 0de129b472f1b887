/*
 * watch.h: the word the writer thread sleeps on, and two facts that its energy sampler (a tick
 * on the writer, nvml.c) watches without reading any collector's state: which CUDA devices the
 * process has used (noted by the writer when it ingests CUPTI work records and allocator reports)
 * and when a thread changed phase (ip_watch_phase, bumped by the app side with the word, so the
 * counters are read at the edge).
 */
#ifndef INFPROF_WATCH_H
#define INFPROF_WATCH_H

#include "futex.h"

#include <stdatomic.h>
#include <stdint.h>

/* Bumped on every phase change and every wake-up (ip_watch_kick, ip_writer_wake); the writer
 * sleeps on it. */
extern _Atomic uint32_t ip_watch_seq;
/* Bumped on every phase change only. */
extern _Atomic uint32_t ip_watch_phase;
/* Nonzero while the writer sleeps and the sampler wants phase edges (no futex call on a phase
 * change otherwise). */
extern _Atomic int ip_watch_waiters;
/* The sampler has something to read at phase edges (a GPU, the CPU's counters): set by it. */
extern _Atomic int ip_watch_wants_edges;
extern _Atomic uint64_t ip_watch_device_mask;

/* Nonzero while the writer thread is away for a fork (writer.c); ip_watch_resume brings it back.
 * Set by the writer, read on a phase change. */
extern _Atomic int ip_watch_parked;
extern void (*_Atomic ip_watch_resume)(void);

/* App side, on a phase change: lock-free; one futex wake (no lock) only when a sampler runs. */
static inline void ip_watch_phase_changed(void)
{
    if (atomic_load_explicit(&ip_watch_parked, memory_order_relaxed)) {
        void (*resume)(void) = atomic_load(&ip_watch_resume);
        if (resume) resume();
    }
    /* Sequentially consistent against the sampler's store of waiters before its futex wait: one
     * of the two sees the other (the wait returns at once, or this wakes it). */
    atomic_fetch_add_explicit(&ip_watch_phase, 1, memory_order_relaxed);
    atomic_fetch_add(&ip_watch_seq, 1);
    if (atomic_load(&ip_watch_waiters)) ip_futex_wake(&ip_watch_seq);
}

/* Wake the writer (and its sampler). */
static inline void ip_watch_kick(void)
{
    atomic_fetch_add(&ip_watch_seq, 1);
    ip_futex_wake(&ip_watch_seq);
}

/* Writer side: CUDA device `ordinal` (0..63) did work for the process. The first time, the
 * sampler is woken (its first reading of the GPUs). */
static inline void ip_watch_device(uint32_t ordinal)
{
    if (ordinal >= 64) return;
    uint64_t bit = 1ull << ordinal;
    if (!(atomic_load_explicit(&ip_watch_device_mask, memory_order_relaxed) & bit)) {
        atomic_fetch_or(&ip_watch_device_mask, bit);
        ip_watch_kick();
    }
}

/* CUDA was initialised in this process (the driver called our InitializeInjection): the GPUs
 * will be used; the sampler takes its first reading, and never loads NVML from now on. */
extern _Atomic int ip_watch_cuda_started;
static inline void ip_watch_cuda_init(void)
{
    atomic_store(&ip_watch_cuda_started, 1);
    ip_watch_kick();
}

/* CUDA is about to be used (a Python program imported a CUDA build of torch): the energy
 * sampler loads NVML now, on the caller's thread, before CUDA starts (nvml.c says why). */
extern void (*_Atomic ip_watch_gpu_soon_fn)(void);
static inline void ip_watch_gpu_soon(void)
{
    void (*fn)(void) = atomic_load(&ip_watch_gpu_soon_fn);
    if (fn) fn();
}

static inline uint64_t ip_watch_devices(void)
{
    return atomic_load_explicit(&ip_watch_device_mask, memory_order_acquire);
}

#endif
