/*
 * cpumem_check.c: collectors/torch_cpumem.c's table of CPU block sizes, built small (256 slots)
 * and driven without libtorch: every report's total is the running sum of what was allocated and
 * not freed; a block with no room is counted untracked, never reported, and its free goes to
 * libtorch's Delete; freed slots are reused (churn never overflows); threads allocating and
 * freeing at once lose nothing; and a process whose memoryProfilingEnabled is asked before New
 * leaves every block to libtorch's table. Exits 0 when all hold.
 */
#define IP_CPUMEM_BITS 8
#include "collectors/torch_cpumem.c"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

_Atomic uint32_t ip_torch_found;
_Atomic int ip_torch_cpumem_mode;
_Atomic int64_t ip_torch_cpumem_total; /* torch_state.c's */
static _Atomic int64_t reported_sum, reports, bad_totals, real_news, real_deletes, forwarded;
static _Atomic int profiling;        /* libtorch's own memoryProfilingEnabled answer, scripted */
static _Atomic int64_t expect_total; /* single-threaded checks only */
static int single = 1;

int ip_torch_cpu_memory_wanted(void)
{
    return 1;
}

void ip_torch_cpu_report(void *ptr, int64_t bytes, int64_t allocated, int forward)
{
    (void)ptr;
    if (forward) atomic_fetch_add(&forwarded, 1);
    atomic_fetch_add(&reported_sum, bytes);
    atomic_fetch_add(&reports, 1);
    if (single && allocated != atomic_fetch_add(&expect_total, bytes) + bytes)
        atomic_fetch_add(&bad_totals, 1);
    if (allocated < 0) atomic_fetch_add(&bad_totals, 1);
}

static void real_new(void *self, void *ptr, size_t n)
{
    (void)self, (void)ptr, (void)n;
    atomic_fetch_add(&real_news, 1);
}

static void real_delete(void *self, void *ptr)
{
    (void)self, (void)ptr;
    atomic_fetch_add(&real_deletes, 1);
}

static _Bool real_query(void)
{
    return atomic_load(&profiling);
}

static void real_push(uint8_t kind, void *info)
{
    (void)kind, (void)info;
}

void *ip_torch_real(int id)
{
    return id == IP_TORCH_R_MEMORY_QUERY ? (void *)real_query : NULL;
}

void *ip_torch_real_or_die(int id)
{
    if (id == IP_TORCH_R_DEBUG_PUSH) return (void *)real_push;
    return id == IP_TORCH_R_CPU_NEW ? (void *)real_new : (void *)real_delete;
}

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "cpumem_check: " __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void *addr(uintptr_t i)
{
    return (void *)(0x7f0000000000u + i * 64);
}

static void *churn(void *arg)
{
    uintptr_t base = (uintptr_t)arg * 1000000;
    for (uintptr_t i = 0; i < 200000; i++) {
        ip_torch_cpu_new(NULL, addr(base + i % 40 + (i / 40) * 50), 100);
        if (i >= 20) {
            uintptr_t j = i - 20;
            ip_torch_cpu_delete(NULL, addr(base + j % 40 + (j / 40) * 50));
        }
    }
    for (uintptr_t j = 200000 - 20; j < 200000; j++)
        ip_torch_cpu_delete(NULL, addr(base + j % 40 + (j / 40) * 50));
    return NULL;
}

int main(void)
{
    /* Sizes and totals, freed in another order than allocated. */
    int64_t sum = 0;
    for (uintptr_t i = 1; i <= 60; i++) {
        ip_torch_cpu_new(NULL, addr(i), i * 10);
        sum += i * 10;
    }
    CHECK(atomic_load(&ip_torch_cpumem_mode) == IP_CPUMEM_OURS, "our table was not chosen");
    CHECK(atomic_load(&reported_sum) == sum, "allocated %lld, reported %lld", (long long)sum,
          (long long)atomic_load(&reported_sum));
    for (uintptr_t i = 60; i >= 1; i -= 2) ip_torch_cpu_delete(NULL, addr(i));
    for (uintptr_t i = 1; i <= 59; i += 2) ip_torch_cpu_delete(NULL, addr(i));
    CHECK(atomic_load(&reported_sum) == 0, "freed all, reported %lld",
          (long long)atomic_load(&reported_sum));
    CHECK(atomic_load(&ip_torch_cpumem_total) == 0, "total %lld after every free",
          (long long)atomic_load(&ip_torch_cpumem_total));
    CHECK(atomic_load(&real_deletes) == 0, "a known block went to libtorch's Delete");
    ip_torch_cpu_new(NULL, addr(999), 0); /* zero bytes: libtorch's New returns at once */
    CHECK(atomic_load(&real_news) == 1 && atomic_load(&reports) == 120,
          "a zero-byte block: %lld reports", (long long)atomic_load(&reports));
    ip_torch_cpu_delete(NULL, addr(12345)); /* never seen: libtorch's Delete, as without us */
    CHECK(atomic_load(&real_deletes) == 1, "an unknown block was not left to libtorch");

    /* Dense pages: three pages of 64-byte blocks whose near slots are one run (pages 104, 107 and
     * 109 from addr(0): 192 blocks for its 64 slots, of the table's 256); the blocks past it go to
     * their hashed probes, and every one is found. */
    int64_t reports0 = atomic_load(&reports), dense0 = atomic_load(&real_deletes), ublocks0, ub;
    ip_torch_cpumem_untracked(&ublocks0, &ub);
    static const uintptr_t page[3] = {104, 107, 109};
#define DENSE(i) addr(page[(i) / 64] * 64 + (i) % 64)
    for (uintptr_t i = 0; i < 192; i++) ip_torch_cpu_new(NULL, DENSE(i), 8);
    int64_t ublocks1;
    ip_torch_cpumem_untracked(&ublocks1, &ub);
    CHECK(atomic_load(&reports) - reports0 == 192 && ublocks1 == ublocks0,
          "dense pages: %lld of 192 tracked", (long long)(atomic_load(&reports) - reports0));
    for (uintptr_t i = 0; i < 192; i++) ip_torch_cpu_delete(NULL, DENSE((i * 37) % 192));
    CHECK(atomic_load(&real_deletes) == dense0 && atomic_load(&ip_torch_cpumem_total) == 0,
          "dense pages: %lld frees not found, total %lld after",
          (long long)(atomic_load(&real_deletes) - dense0),
          (long long)atomic_load(&ip_torch_cpumem_total));

    /* Overflow: 1000 live blocks in 256 slots. */
    int64_t before = atomic_load(&reports);
    for (uintptr_t i = 0; i < 1000; i++) ip_torch_cpu_new(NULL, addr(5000 + i * 7), 64);
    int64_t blocks, bytes;
    ip_torch_cpumem_untracked(&blocks, &bytes);
    int64_t tracked = atomic_load(&reports) - before;
    CHECK(tracked + blocks == 1000 && blocks >= 1000 - 256 && bytes == blocks * 64,
          "overflow: %lld tracked, %lld untracked (%lld bytes)", (long long)tracked,
          (long long)blocks, (long long)bytes);
    int64_t deletes0 = atomic_load(&real_deletes);
    for (uintptr_t i = 0; i < 1000; i++) ip_torch_cpu_delete(NULL, addr(5000 + i * 7));
    CHECK(atomic_load(&real_deletes) - deletes0 == blocks,
          "untracked frees: %lld to libtorch, want %lld",
          (long long)(atomic_load(&real_deletes) - deletes0), (long long)blocks);
    CHECK(atomic_load(&ip_torch_cpumem_total) == 0 && atomic_load(&reported_sum) == 0,
          "after the overflow's frees: total %lld", (long long)atomic_load(&ip_torch_cpumem_total));

    /* Churn: freed slots are reused, 20 live at a time never overflow; then threads at once. */
    ip_torch_cpumem_untracked(&blocks, &bytes);
    churn((void *)1);
    int64_t blocks2;
    ip_torch_cpumem_untracked(&blocks2, &bytes);
    CHECK(blocks2 == blocks, "churn of 20 live blocks left %lld untracked",
          (long long)(blocks2 - blocks));
    single = 0;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, (void *)(i + 2));
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    ip_torch_cpumem_untracked(&blocks2, &bytes);
    CHECK(atomic_load(&ip_torch_cpumem_total) == 0 && atomic_load(&reported_sum) == 0 &&
              blocks2 == blocks && atomic_load(&bad_totals) == 0,
          "4 threads: total %lld, reported %lld, %lld untracked, %lld bad totals",
          (long long)atomic_load(&ip_torch_cpumem_total), (long long)atomic_load(&reported_sum),
          (long long)(blocks2 - blocks), (long long)atomic_load(&bad_totals));

    /* torch.profiler: a block made before it recorded and freed while it does goes to
     * libtorch's Delete (its warning) and not to the profiler; one made while it records is the
     * profiler's as well. Before a debug info was ever pushed nothing is forwarded: c10's
     * reportMemoryUsageToProfiler would find no profiler state on any thread. */
    int64_t d0 = atomic_load(&real_deletes), f0 = atomic_load(&forwarded);
    ip_torch_cpu_new(NULL, addr(900001), 10); /* before: nothing pushed */
    atomic_store(&profiling, 1);              /* on, but never pushed: not asked */
    ip_torch_cpu_delete(NULL, addr(900001));
    CHECK(atomic_load(&real_deletes) == d0 && atomic_load(&forwarded) == f0,
          "before any push: libtorch's answer was asked, or %lld forwarded",
          (long long)(atomic_load(&forwarded) - f0));
    atomic_store(&profiling, 0);
    ip_torch_cpu_new(NULL, addr(900002), 10);
    ip_torch_debug_push(2, NULL); /* the profiler starts */
    atomic_store(&profiling, 1);
    ip_torch_cpu_new(NULL, addr(900003), 10);
    ip_torch_cpu_delete(NULL, addr(900002)); /* made before it: libtorch's */
    CHECK(atomic_load(&real_deletes) == d0 + 1 && atomic_load(&forwarded) == f0 + 1,
          "a block made before the profiler: %lld to libtorch's Delete, %lld forwarded",
          (long long)(atomic_load(&real_deletes) - d0), (long long)(atomic_load(&forwarded) - f0));
    ip_torch_cpu_delete(NULL, addr(900003)); /* made while it records: its own */
    CHECK(atomic_load(&real_deletes) == d0 + 1 && atomic_load(&forwarded) == f0 + 2,
          "a block made while the profiler recorded was not forwarded");
    CHECK(atomic_load(&ip_torch_cpumem_total) == 0, "total %lld after the profiler's blocks",
          (long long)atomic_load(&ip_torch_cpumem_total));
    atomic_store(&profiling, 0);

    /* A process that asked memoryProfilingEnabled first keeps libtorch's table. */
    pid_t pid = fork();
    if (pid == 0) {
        atomic_store(&ip_torch_cpumem_mode, IP_CPUMEM_UNDECIDED);
        int64_t r0 = atomic_load(&reports), n0 = atomic_load(&real_news);
        int lib = ip_torch_cpumem_libtorch();
        ip_torch_cpu_new(NULL, addr(77), 10);
        _exit(lib && atomic_load(&reports) == r0 && atomic_load(&real_news) == n0 + 1 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "asked first, New still used our table");
    if (!failures) printf("cpumem_check: all held\n");
    return failures ? 1 : 0;
}
