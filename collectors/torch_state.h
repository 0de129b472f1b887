/*
 * torch_state.h: what torch_state.c offers the libtorch hooks (torch.c) and the writer side: the
 * bits that say which parts of the libtorch API were found or seen, the real functions behind
 * the hooks, libtorch's getters and the thread's state, and the phase poller.
 */
#ifndef INFPROF_TORCH_STATE_H
#define INFPROF_TORCH_STATE_H

#include "../profiler/process.h"
#include "../profiler/thread.h"

#include <stdatomic.h>
#include <stdint.h>

/* What was found or seen, set once by the app side, read by the writer (torch_api, status). */
enum {
    IP_TORCH_ON = 1u << 0,           /* INFPROF_TORCH=1 and the pipeline started */
    IP_TORCH_GRAD_GETTERS = 1u << 1, /* GradMode/InferenceMode::is_enabled resolved */
    IP_TORCH_AUTOCAST_2X = 1u << 2,  /* is_autocast_enabled(DeviceType) (2.4+) resolved */
    IP_TORCH_AUTOCAST_113 = 1u << 3, /* is_enabled()/is_cpu_enabled() (1.13 .. 2.3) resolved */
    IP_TORCH_CPU_MEMORY = 1u << 4,   /* memoryProfilingEnabled() answers true for us */
    IP_TORCH_SEEN_GRAD_SET = 1u << 5,
    IP_TORCH_SEEN_TLS_SET = 1u << 6,
    IP_TORCH_SEEN_AC_SET_113 = 1u << 7,
    IP_TORCH_SEEN_AC_SET_2X = 1u << 8,
    IP_TORCH_SEEN_MEMORY_113 = 1u << 9, /* reportMemoryUsageToProfiler(void*, l, l, l, Device) */
    IP_TORCH_SEEN_MEMORY_2X = 1u << 10, /* reportMemoryUsageToProfiler(void*, l, m, m, Device) */
    IP_TORCH_SEEN_JIT = 1u << 11,       /* Method::operator() (C++11 std::string ABI) */
    IP_TORCH_SEEN_JIT_OLD = 1u << 12,   /* Method::operator() (pre-C++11 std::string ABI) */
    IP_TORCH_SCOPES = 1u << 13,         /* our record_function callback is registered */
    IP_TORCH_SEEN_AOTI = 1u << 14,      /* an AOTInductor run (package loader or runner) */
    IP_TORCH_SEEN_SETTING = 1u << 15,   /* an at::Context setter (torch_settings.c) */
    IP_TORCH_CPU_TABLE = 1u << 16,      /* CPU block sizes in our table (torch_cpumem.c) */
    IP_TORCH_OPERATORS = 1u << 20,      /* our operator callback is registered (torch_ops.c) */
};
extern _Atomic uint32_t ip_torch_found;
/* An address inside the library the getters came from (writer: dladdr for its path). */
extern void *_Atomic ip_torch_lib_addr;

/* A hook may record: the pipeline runs with the torch collector on, and the guard is taken (the
 * caller then calls ip_hook_leave). */
static inline int ip_torch_enter(void)
{
    return (atomic_load_explicit(&ip_torch_found, memory_order_relaxed) & IP_TORCH_ON) &&
           ip_recording() && ip_hook_enter();
}

/* ip_torch_enter for a hook that keeps state across calls (an iteration that opens, a module
 * call whose inner calls it quiets): the run is on, windows or not; it records only inside one
 * (ip_recording at its end). */
static inline int ip_torch_enter_active(void)
{
    return (atomic_load_explicit(&ip_torch_found, memory_order_relaxed) & IP_TORCH_ON) &&
           ip_active() && ip_hook_enter();
}

static inline void ip_torch_seen(uint32_t bit)
{
    if (!(atomic_load_explicit(&ip_torch_found, memory_order_relaxed) & bit))
        atomic_fetch_or(&ip_torch_found, bit);
}

/* Which table keeps the CPU allocator's block sizes (torch_cpumem.c): decided once, on the first
 * call of its New (ours) or of memoryProfilingEnabled (libtorch's), and kept. */
enum { IP_CPUMEM_UNDECIDED, IP_CPUMEM_OURS, IP_CPUMEM_LIBTORCH };
extern _Atomic int ip_torch_cpumem_mode;
/* The CPU allocator's total where our table keeps the sizes (torch_cpumem.c adds to it; torch.c
 * sends it with a shared block's report). */
extern _Atomic int64_t ip_torch_cpumem_total;
static inline int ip_torch_cpumem_is_ours(void)
{
    return atomic_load_explicit(&ip_torch_cpumem_mode, memory_order_relaxed) == IP_CPUMEM_OURS;
}
/* The libtorch collector's observers of a thread's state (torch_memfold.c registers its own):
 * phase_changed on the thread whose phase ip_torch_note changed, thread_exit on a thread that
 * leaves with a phase (before its phase span is closed). Set once, at start. */
void ip_torch_state_observe(void (*phase_changed)(void), void (*thread_exit)(void));

/* libtorch's table keeps them (deciding so when nothing was decided yet). */
static inline int ip_torch_cpumem_libtorch(void)
{
    int m = atomic_load_explicit(&ip_torch_cpumem_mode, memory_order_relaxed);
    if (m == IP_CPUMEM_UNDECIDED) {
        atomic_compare_exchange_strong(&ip_torch_cpumem_mode, &m, IP_CPUMEM_LIBTORCH);
        m = atomic_load(&ip_torch_cpumem_mode);
    }
    return m == IP_CPUMEM_LIBTORCH;
}

/* The real function behind hook `id` (R_*), looked up on first use; NULL if there is none. */
void *ip_torch_real(int id);
/* The same for a hook that cannot stand in for the real one: aborts, logged, if there is none. */
void *ip_torch_real_or_die(int id);
/* A libtorch function that is no hook of ours (the loader is called: safe points only). */
void *ip_torch_symbol(const char *name);
/* Look libtorch up (its getters, every real function). Only where calling the dynamic loader is
 * safe: the constructor, setters, TorchScript calls, CPU allocator reports. */
void ip_torch_resolve(void);
extern _Atomic int ip_torch_getters_ready;
/* The getters are there (resolving first when may_resolve). */
static inline int ip_torch_ready(int may_resolve)
{
    if (atomic_load_explicit(&ip_torch_getters_ready, memory_order_acquire)) return 1;
    if (may_resolve) ip_torch_resolve();
    return atomic_load_explicit(&ip_torch_getters_ready, memory_order_acquire);
}
/* The setter was called from libtorch's own code (a guard around its internals), not by the
 * program: it does not change the phase. Counted (ip_torch_internal_calls). */
int ip_torch_internal_caller(const void *return_address);
uint64_t ip_torch_internal_calls(void);
/* The thread's grad mode (IP_GRAD...) and autocast dtype for a device type (0 CPU, 1 CUDA) as
 * libtorch's getters say now. Only once ip_torch_ready(). */
uint8_t ip_torch_grad_now(void);
uint8_t ip_torch_dtype_now(int device_type);
/* Report the thread's state (ip_phase_set) and make sure its span closes when it exits. safe:
 * pthread_setspecific may be called (not under the CUDA allocator's lock). */
void ip_torch_note(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac, int safe);
/* The phase poller (phase.h). */
void ip_torch_poll(int where);
/* Constructor: the thread-exit handler, before any ring exists. */
void ip_torch_state_init(void);

#endif
