/*
 * torch_cpumem.c: the CPU allocator's reports without libtorch's table (issue 49,
 * docs/performance.md "Defaults on a small model").
 *
 * libtorch's CPU allocator reports through c10::ProfiledCPUMemoryReporter::New and ::Delete.
 * While memory profiling is on they take a process-wide mutex and insert or erase the block in a
 * std::unordered_map (a heap node each) to know its size when it is freed: about half of what
 * CPU tensor memory cost a small eager model. Both are interposed here (libc10 calls them through
 * its PLT, as it calls memoryProfilingEnabled, which torch.c already answers). A block's size goes
 * into a table of our own, lock-free (open addressing, probing from two places: near its
 * neighbours, then hashed; tombstones reused by later blocks), a fixed 4 MiB mapped when chosen and
 * touched as used (not in .bss: under an address-space limit the program would lose it even with
 * CPU memory off); the total is one atomic add; the report goes where libtorch's went (torch.c
 * records it, then forwards it to c10's reportMemoryUsageToProfiler for torch.profiler).
 *
 * Which table keeps the sizes is decided once, on the first call, and kept:
 *  - ours, when our New is reached first with CPU memory on (and the table could be mapped):
 *    memoryProfilingEnabled then gives libtorch's own answer (libtorch's table is used only
 *    where it would be without us);
 *  - libtorch's, when memoryProfilingEnabled is asked first (a libc10 that binds New inside
 *    itself): torch.c answers "on" as before and libtorch's table keeps the sizes.
 * Meta torch_api says which ("CPU memory: on (our table)").
 *
 * Once ours, every block allocated goes in the table, recording or not (a free must find what it
 * frees; outside the run the report is dropped): the table is never destroyed, so threads still
 * allocating during the exit handlers are safe without torch.c's exit handshake. A block that
 * finds no free slot among its near probes nor IP_CPUMEM_PROBE from its hash (none of 250,000 live
 * blocks in the table's 262,144 slots, 153 of 258,000; 64 probes lost 6 of 238,000) is left out of
 * the figures: counted (meta cpu_memory_untracked_blocks and _bytes), shown as a warning, and its
 * free finds nothing, as one made before the run. A free that finds nothing goes to libtorch's
 * Delete, which does what it does without us.
 */
#include "torch_internal.h"
#include "torch_state.h"
#include "torch_symbols.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define IP_EXPORT      __attribute__((visibility("default")))
#define REAL(id, type) ((type)ip_torch_real_or_die(id))

#ifndef IP_CPUMEM_BITS /* tests/progs/cpumem_check.c builds a small one */
#define IP_CPUMEM_BITS 18
#endif
#define IP_CPUMEM_SLOTS (1u << IP_CPUMEM_BITS)
#define IP_CPUMEM_PROBE 256
#define IP_CPUMEM_TOMB  ((uintptr_t)1) /* a slot whose block was freed: reused by the next */
#define IP_CPUMEM_PROFILED (1ll << 62) /* in a slot's bytes: made while libtorch's answer was on   \
                                        */

struct cpumem_slot {
    _Atomic uintptr_t key; /* the block's address; 0 never used; IP_CPUMEM_TOMB freed */
    _Atomic int64_t bytes; /* written by its owner after the key: read only by its free */
};

static struct cpumem_slot *_Atomic cpumem_table; /* mapped once, never unmapped */
static _Atomic int64_t cpumem_untracked, cpumem_untracked_bytes;
static _Atomic int cpumem_debug_pushed; /* some thread-local debug info was ever pushed */

/* Where p's probes start. First near the slots of the blocks around it (IP_CPUMEM_NEAR probes):
 * the blocks of one 4 KiB page of the heap share one run of 64 slots (1 KiB of table, the page's
 * place among the runs hashed), so a program whose allocator hands out addresses that drift
 * through its heap touches a few lines and pages of the table, not one of each per block (a
 * 20-layer MLP's forward: about 1 us less, the table's cache and TLB misses). Where that run is
 * full (a dense page sharing its run with others), the block's address hashed whole (up to
 * IP_CPUMEM_PROBE probes), as a hash that keeps no order spreads any pattern of addresses. */
#define IP_CPUMEM_NEAR 16
static inline uint32_t cpumem_near(uintptr_t p)
{
    uint32_t run =
        (uint32_t)(((uint64_t)(p >> 12) * 0x9E3779B97F4A7C15ull) >> (64 - (IP_CPUMEM_BITS - 6)));
    return (run << 6) | (uint32_t)((p >> 6) & 63);
}

static inline uint32_t cpumem_hash(uintptr_t p)
{
    return (uint32_t)(((uint64_t)p * 0xC2B2AE3D27D4EB4Full) >> (64 - IP_CPUMEM_BITS));
}

/* Probe i of a run from h: the near ones next to each other, the hashed ones a stride apart (odd:
 * every slot once), so that they do not pile up beside full runs of near ones. */
static inline struct cpumem_slot *cpumem_probe(struct cpumem_slot *t, uint32_t h, unsigned i,
                                               uint32_t stride)
{
    return &t[(h + i * stride) & (IP_CPUMEM_SLOTS - 1)];
}
#define IP_CPUMEM_STRIDE 97u

static int cpumem_put_from(struct cpumem_slot *t, uint32_t h, unsigned n, uint32_t stride,
                           uintptr_t p, int64_t bytes)
{
    for (unsigned i = 0; i < n; i++) {
        struct cpumem_slot *s = cpumem_probe(t, h, i, stride);
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k > IP_CPUMEM_TOMB) continue;
        if (atomic_compare_exchange_strong_explicit(&s->key, &k, p, memory_order_acquire,
                                                    memory_order_relaxed)) {
            atomic_store_explicit(&s->bytes, bytes, memory_order_relaxed);
            return 1;
        }
    }
    return 0;
}

/* Claims a slot for p (a live block is never in the table twice: the allocator hands an address
 * out again only once it was freed): among its near probes, else among its hashed ones. 0: none
 * free in either. */
static int cpumem_put(uintptr_t p, int64_t bytes)
{
    struct cpumem_slot *t = atomic_load_explicit(&cpumem_table, memory_order_acquire);
    return cpumem_put_from(t, cpumem_near(p), IP_CPUMEM_NEAR, 1, p, bytes) ||
           cpumem_put_from(t, cpumem_hash(p), IP_CPUMEM_PROBE, IP_CPUMEM_STRIDE, p, bytes);
}

/* p's size out of the probes from h: 1 taken, 0 not there (a slot never used ends the probes:
 * slots only go from unused to used, so none lies beyond one on p's path), -1 not among them. */
static int cpumem_take_from(struct cpumem_slot *t, uint32_t h, unsigned n, uint32_t stride,
                            uintptr_t p, int64_t *bytes)
{
    for (unsigned i = 0; i < n; i++) {
        struct cpumem_slot *s = cpumem_probe(t, h, i, stride);
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == p) {
            *bytes = atomic_load_explicit(&s->bytes, memory_order_relaxed);
            atomic_store_explicit(&s->key, IP_CPUMEM_TOMB, memory_order_release);
            return 1;
        }
        if (!k) return 0;
    }
    return -1;
}

/* The size of p, taken out of the table; -1 when it is not there. A block put among its hashed
 * probes found every near one taken, and a taken slot is never unused again: its near probes
 * never end early. */
static int64_t cpumem_take(uintptr_t p)
{
    struct cpumem_slot *t = atomic_load_explicit(&cpumem_table, memory_order_acquire);
    int64_t b = -1;
    int r = cpumem_take_from(t, cpumem_near(p), IP_CPUMEM_NEAR, 1, p, &b);
    if (r < 0) r = cpumem_take_from(t, cpumem_hash(p), IP_CPUMEM_PROBE, IP_CPUMEM_STRIDE, p, &b);
    return r > 0 ? b : -1;
}

/* Our table keeps the sizes (deciding it on the first call: mapping the table, or, where it
 * cannot be mapped, leaving the sizes to libtorch's). */
static int cpumem_ours(void)
{
    int m = atomic_load_explicit(&ip_torch_cpumem_mode, memory_order_acquire);
    if (m != IP_CPUMEM_UNDECIDED) return m == IP_CPUMEM_OURS;
    if (!ip_torch_cpu_memory_wanted()) return 0;
    int want = IP_CPUMEM_OURS;
    if (!atomic_load(&cpumem_table)) {
        size_t size = sizeof(struct cpumem_slot) * IP_CPUMEM_SLOTS;
        void *t = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        struct cpumem_slot *none = NULL;
        if (t == MAP_FAILED)
            want = IP_CPUMEM_LIBTORCH;
        else if (!atomic_compare_exchange_strong(&cpumem_table, &none, t))
            munmap(t, size); /* another thread's is there */
    }
    int expect = IP_CPUMEM_UNDECIDED;
    atomic_compare_exchange_strong(&ip_torch_cpumem_mode, &expect, want);
    if (atomic_load(&ip_torch_cpumem_mode) != IP_CPUMEM_OURS) return 0;
    ip_torch_seen(IP_TORCH_CPU_TABLE);
    return 1;
}

/* libtorch's own answer on this thread (torch.profiler recording memory), asked only once some
 * debug info was pushed. */
static __attribute__((noinline)) int cpumem_profiler_asked(void)
{
    _Bool (*fn)(void) = (_Bool(*)(void))ip_torch_real(IP_TORCH_R_MEMORY_QUERY);
    return fn && fn();
}

static inline int cpumem_profiler_on(void)
{
    return atomic_load_explicit(&cpumem_debug_pushed, memory_order_relaxed) &&
           cpumem_profiler_asked();
}

/* Some thread may have torch.profiler's state to report to: c10's reportMemoryUsageToProfiler
 * does nothing where no debug info was ever pushed (it finds none), and is not called then (80
 * calls of a small MLP's forward, 2.4 k instructions). */
static inline int cpumem_profiler_may(void)
{
    return atomic_load_explicit(&cpumem_debug_pushed, memory_order_relaxed);
}

IP_EXPORT void ip_torch_cpu_new(void *self, void *ptr, size_t nbytes) IP_TORCH_LINKAGE(CPU_NEW);
void ip_torch_cpu_new(void *self, void *ptr, size_t nbytes)
{
    if (nbytes && ptr && cpumem_ours()) {
        int64_t b = (int64_t)nbytes;
        if (cpumem_put((uintptr_t)ptr, b | (cpumem_profiler_on() ? IP_CPUMEM_PROFILED : 0))) {
            int64_t total =
                atomic_fetch_add_explicit(&ip_torch_cpumem_total, b, memory_order_relaxed) + b;
            ip_torch_cpu_report(ptr, b, total, cpumem_profiler_may());
        } else {
            atomic_fetch_add_explicit(&cpumem_untracked, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&cpumem_untracked_bytes, b, memory_order_relaxed);
        }
        return;
    }
    REAL(IP_TORCH_R_CPU_NEW, void (*)(void *, void *, size_t))(self, ptr, nbytes);
}

IP_EXPORT void ip_torch_cpu_delete(void *self, void *ptr) IP_TORCH_LINKAGE(CPU_DELETE);
void ip_torch_cpu_delete(void *self, void *ptr)
{
    if (ptr &&
        atomic_load_explicit(&ip_torch_cpumem_mode, memory_order_relaxed) == IP_CPUMEM_OURS) {
        int64_t v = cpumem_take((uintptr_t)ptr);
        if (v > 0) {
            int64_t b = v & ~IP_CPUMEM_PROFILED;
            int64_t total =
                atomic_fetch_sub_explicit(&ip_torch_cpumem_total, b, memory_order_relaxed) - b;
            /* Made before the profiler recorded, freed while it does: libtorch's (above). */
            int unknown = !(v & IP_CPUMEM_PROFILED) && cpumem_profiler_on();
            ip_torch_cpu_report(ptr, -b, total, !unknown && cpumem_profiler_may());
            if (!unknown) return;
        }
    }
    REAL(IP_TORCH_R_CPU_DELETE, void (*)(void *, void *))(self, ptr);
}

/* DebugInfoKind is a uint8_t; the shared_ptr, passed by value, comes by hidden reference. */
IP_EXPORT void ip_torch_debug_push(uint8_t kind, void *info) IP_TORCH_LINKAGE(DEBUG_PUSH);
void ip_torch_debug_push(uint8_t kind, void *info)
{
    if (!atomic_load_explicit(&cpumem_debug_pushed, memory_order_relaxed))
        atomic_store(&cpumem_debug_pushed, 1);
    REAL(IP_TORCH_R_DEBUG_PUSH, void (*)(uint8_t, void *))(kind, info);
}

void ip_torch_cpumem_untracked(int64_t *blocks, int64_t *bytes)
{
    *blocks = atomic_load(&cpumem_untracked);
    *bytes = atomic_load(&cpumem_untracked_bytes);
}
