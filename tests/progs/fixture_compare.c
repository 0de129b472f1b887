/*
 * fixture_compare.c: pairs of runs for `infprof compare` and reports over several databases,
 * built through the real pipeline (rings, replayed CUPTI buffers, NVTX and allocator events,
 * phases, writer, schema). Usage: FIXTURE_SCENARIO=NAME fixture_compare OUTPUT.db [ARGS...]
 * The scenario comes from the environment so that two scenarios can have the same command line
 * (extra ARGS change it on purpose); FIXTURE_WAIT=1 makes the run print "ready" after its
 * allocations and wait for a line on stdin before it ends, so a test can overlap two runs.
 *
 *   base   grad/off: 4 iterations (1, 2, 3, 4 us, batch 2), gemm_fp32 x3 (1, 3, 2 us), relu x2
 *          (100, 300 ns), old_kernel (500 ns), CUDA tensor memory peaking at 8 MiB (reserved
 *          8 MiB); no_grad/fp16 on a second thread: 2 iterations (500, 700 ns), gemm_fp16 x2
 *          (500, 700 ns), 1 MiB more while 4 MiB are live (peak 5 MiB). GPU "Fake H100".
 *   new    grad/off: 4 iterations (0.5, 1, 1.5, 2 us), gemm_fp32 x3 (500, 1500, 1000 ns), relu x2
 *          as in base, new_kernel (800 ns), a kernel named with control characters (50 ns),
 *          memory peaking at 6 MiB (reserved 8 MiB); inference/bf16 on a second thread: 1
 *          iteration (900 ns), gemm_bf16 (400 ns). Same GPU.
 *   other  base's figures on "Fake A100", 3 CUPTI records dropped.
 *   latency grad/off: two series (FIXTURE_ONE_SERIES: "a" alone), "iteration a" at
 *          FIXTURE_P50_US (100 by default) and "iteration b" at twice that (FIXTURE_B_PCT
 *          percent of it where set), 40 iterations
 *          each, one after the other, each latency the p50 times a fixed pattern within 2% (no
 *          kernels); FIXTURE_RENAME=1 names the
 *          first "iteration a tf32=on" (a setting that renamed it); FIXTURE_SHIFT=1 doubles
 *          series a's latency from its 21st iteration (a machine that slowed mid-run);
 *          FIXTURE_GAP_US (10 by default) is the time after each iteration, within 2% by the
 *          same pattern (a loop waiting for its data); FIXTURE_ITERS (40) iterations a series;
 *          FIXTURE_LEVELS, eight percents, series a's level in each eighth of its iterations (a
 *          server whose load wanders); FIXTURE_MODE=no_grad or inference: that mode instead of
 *          grad (a mode chosen per process); FIXTURE_AUTOCAST=bf16 or fp16: autocast on.
 *   pin    a DataLoader's pin-memory thread beside an inference loop (the H200 fixture's): the
 *          main thread in grad/off takes cuda:0 to 6 MiB and back to 2, then in inference/bf16
 *          to 9 MiB; meanwhile a second thread, in grad/off (the default: it never sets a
 *          mode, after a moment in no_grad), makes CPU allocations only. grad/off's cuda:0
 *          peak is 6 MiB: the second thread's grad/off does not make the main thread's
 *          inference memory grad/off's; no_grad/off, only ever the second thread's, has no
 *          cuda:0 peak at all.
 *
 * Kernel and iteration times are exact; allocations carry exact totals and are stamped with the
 * real clock (inside the thread's phase span, whose start is the real time of the phase change).
 */
#include "collectors/registry.h"
#include "collectors/nvtx_internal.h"
#include "collectors/replay.h"
#include "collectors/torch_internal.h"
#include "profiler/clock.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"
#include "profiler/ring.h"
#include "profiler/thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MIB (1024 * 1024LL)

static uint64_t base;
static int other;
static uint32_t next_corr = 1;
static uint64_t next_range = 1;

static uint32_t gettid_(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* One kernel: its launch on this thread, its API record and its activity record. */
static void kernel(struct ip_replay_buf *b, const char *name, uint64_t start, uint64_t dur)
{
    uint32_t corr = __atomic_fetch_add(&next_corr, 1, __ATOMIC_RELAXED);
    ip_replay_launch(corr);
    CUpti_ActivityAPI *api = ip_replay_add(b, CUPTI_ACTIVITY_KIND_RUNTIME);
    api->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api->start = base + start - 1500;
    api->end = base + start - 500;
    api->processId = (uint32_t)getpid();
    api->threadId = gettid_();
    api->correlationId = corr;
    CUpti_ActivityKernel10 *k = ip_replay_add(b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = base + start;
    k->end = base + start + dur;
    k->name = name;
    k->correlationId = corr;
    k->deviceId = 0;
    k->streamId = 7;
    k->gridX = 80, k->gridY = 1, k->gridZ = 1;
    k->blockX = 256, k->blockY = 1, k->blockZ = 1;
}

/* An NVTX push or pop as the NVTX collector's app side records it (text NULL for a pop). */
static void nvtx_ev(uint8_t kind, uint64_t id, uint64_t ts, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    uint16_t size = ip_ev_size((uint32_t)(sizeof(struct ip_ev_nvtx) + len + 1));
    struct ip_ring *r;
    struct ip_ev_nvtx *e = ip_ring_begin(size, &r);
    if (!e) return;
    memset(e, 0, size);
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_NVTX, 1), size, (uint32_t)len};
    e->ts = ts;
    e->id = id;
    e->kind = kind;
    e->phase = ip_self.phase;
    if (len) memcpy(e->text, text, len);
    ip_ring_commit(r, size);
}

/* Iterations: NVTX ranges matching INFPROF_ITERATION_RANGE, back to back from `from` (real
 * clock, after the thread's phase began) with 10 us between their starts. The writer gives each
 * the phase the thread spent most of it in: the open span of this thread's only phase. */
static void iterations(uint64_t from, const char *text, const uint64_t *dur, int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t id = __atomic_fetch_add(&next_range, 1, __ATOMIC_RELAXED);
        uint64_t start = from + (uint64_t)i * 10000;
        nvtx_ev(IP_NVTX_PUSH, id, start, text);
        nvtx_ev(IP_NVTX_POP, id, start + dur[i], NULL);
    }
}

/* One allocator report, as the libtorch collector's hook records it: cuda:0's (c10's DeviceType
 * CUDA, 1), or the CPU allocator's (type 0, index -1). */
static void report_memory(int type, int index, int64_t bytes, int64_t allocated, int64_t reserved)
{
    static uint64_t ptr = 0x7f0000000000ull;
    struct ip_ring *r;
    struct ip_ev_torch_memory *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    memset(e, 0, sizeof *e);
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_MEMORY), sizeof *e,
                          ip_self.phase};
    e->ts = ip_clock_now();
    e->ptr = ptr += 1 << 20;
    e->bytes = bytes;
    e->allocated = allocated;
    e->reserved = reserved;
    e->device_type = (int8_t)type;
    e->device_index = (int8_t)index;
    ip_ring_commit(r, sizeof *e);
}

static void alloc(int64_t bytes, int64_t allocated, int64_t reserved)
{
    report_memory(1, 0, bytes, allocated, reserved);
}

static void cpu_alloc(int64_t bytes, int64_t allocated)
{
    report_memory(0, -1, bytes, allocated, 0);
}

static void device(struct ip_replay_buf *b)
{
    CUpti_ActivityDevice5 *d = ip_replay_add(b, CUPTI_ACTIVITY_KIND_DEVICE);
    d->id = 0;
    d->name = other ? "Fake A100" : "Fake H100";
    d->numMultiprocessors = other ? 108 : 132;
    d->globalMemorySize = 80 * 1024 * MIB;
    d->computeCapabilityMajor = other ? 8 : 9;
    d->computeCapabilityMinor = 0;
    d->coreClockRate = 1980000;
    for (int i = 0; i < 16; i++) d->uuid.bytes[i] = (char)(other ? 0xa0 + i : i);
}

static void *base_second(void *arg)
{
    struct ip_replay_buf *b = arg;
    ip_phase_set(IP_NO_GRAD, IP_DTYPE_HALF, 0);
    static const uint64_t it[] = {500, 700};
    iterations(ip_clock_now(), "iteration", it, 2);
    kernel(b, "gemm_fp16", 60000, 500);
    kernel(b, "gemm_fp16", 61000, 700);
    alloc(1 * MIB, 5 * MIB, 8 * MIB);
    alloc(-1 * MIB, 4 * MIB, 8 * MIB);
    return NULL;
}

static int scenario_base(struct ip_replay_buf *b)
{
    ip_phase_set(IP_GRAD, 0, 0);
    static const uint64_t it[] = {1000, 2000, 3000, 4000};
    iterations(ip_clock_now(), "iteration batch=2", it, 4);
    kernel(b, "gemm_fp32", 10000, 1000);
    kernel(b, "gemm_fp32", 12000, 3000);
    kernel(b, "gemm_fp32", 16000, 2000);
    kernel(b, "relu", 20000, 100);
    kernel(b, "relu", 21000, 300);
    kernel(b, "old_kernel", 22000, 500);
    alloc(4 * MIB, 4 * MIB, 8 * MIB);
    alloc(4 * MIB, 8 * MIB, 8 * MIB);
    alloc(-4 * MIB, 4 * MIB, 8 * MIB);
    pthread_t t;
    pthread_create(&t, NULL, base_second, b);
    pthread_join(t, NULL);
    return 0;
}

static void *new_second(void *arg)
{
    struct ip_replay_buf *b = arg;
    ip_phase_set(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0);
    static const uint64_t it[] = {900};
    iterations(ip_clock_now(), "iteration", it, 1);
    kernel(b, "gemm_bf16", 60000, 400);
    return NULL;
}

static int scenario_new(struct ip_replay_buf *b)
{
    ip_phase_set(IP_GRAD, 0, 0);
    static const uint64_t it[] = {500, 1000, 1500, 2000};
    iterations(ip_clock_now(), "iteration batch=2", it, 4);
    kernel(b, "gemm_fp32", 10000, 500);
    kernel(b, "gemm_fp32", 12000, 1500);
    kernel(b, "gemm_fp32", 16000, 1000);
    kernel(b, "relu", 20000, 100);
    kernel(b, "relu", 21000, 300);
    kernel(b, "new_kernel", 22000, 800);
    kernel(b, "evil\x1b[31m_kernel\n", 23000, 50);
    alloc(3 * MIB, 3 * MIB, 8 * MIB);
    alloc(3 * MIB, 6 * MIB, 8 * MIB);
    alloc(-3 * MIB, 3 * MIB, 8 * MIB);
    pthread_t t;
    pthread_create(&t, NULL, new_second, b);
    pthread_join(t, NULL);
    return 0;
}

static pthread_barrier_t pin_step;

static void *pin_thread(void *arg)
{
    (void)arg;
    ip_phase_set(IP_NO_GRAD, 0, 0); /* a moment of its own: a phase only it is ever in */
    cpu_alloc(1 * MIB, 1 * MIB);
    ip_phase_set(IP_GRAD, 0, 0);     /* then as a thread that never sets a mode is */
    pthread_barrier_wait(&pin_step); /* its span is open: the main thread may go on */
    pthread_barrier_wait(&pin_step); /* the main thread's inference allocations are made */
    cpu_alloc(-1 * MIB, 0);
    return NULL;
}

static int scenario_pin(void)
{
    static const uint64_t it[] = {1000};
    ip_phase_set(IP_GRAD, 0, 0);
    iterations(ip_clock_now(), "iteration", it, 1); /* each phase ran something: named */
    alloc(6 * MIB, 6 * MIB, 8 * MIB);
    alloc(-4 * MIB, 2 * MIB, 8 * MIB);
    pthread_barrier_init(&pin_step, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, pin_thread, NULL);
    pthread_barrier_wait(&pin_step);
    ip_phase_set(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0);
    iterations(ip_clock_now(), "iteration", it, 1);
    alloc(7 * MIB, 9 * MIB, 10 * MIB);
    alloc(-7 * MIB, 2 * MIB, 10 * MIB);
    pthread_barrier_wait(&pin_step);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&pin_step);
    return 0;
}

static int scenario_latency(void)
{
    const char *us = getenv("FIXTURE_P50_US");
    uint64_t p50 = (uint64_t)((us ? atof(us) : 100.0) * 1000.0);
    const char *gap_us = getenv("FIXTURE_GAP_US");
    uint64_t gap = (uint64_t)((gap_us ? atof(gap_us) : 10.0) * 1000.0);
    const char *mode = getenv("FIXTURE_MODE"), *ac = getenv("FIXTURE_AUTOCAST");
    ip_phase_set(mode && !strcmp(mode, "inference") ? IP_INFERENCE_MODE
                 : mode && !strcmp(mode, "no_grad") ? IP_NO_GRAD
                                                    : IP_GRAD,
                 ac && !strcmp(ac, "bf16")   ? IP_DTYPE_BFLOAT16
                 : ac && !strcmp(ac, "fp16") ? IP_DTYPE_HALF
                                             : 0,
                 0);
    static const int pct[] = {-2, -1, 0, 1, 2, 0, -1, 1, 0, 0};
    uint64_t t = ip_clock_now();
    int series = getenv("FIXTURE_ONE_SERIES") ? 1 : 2; /* "a" alone: the phase's one series */
    const char *ni = getenv("FIXTURE_ITERS"), *lv = getenv("FIXTURE_LEVELS");
    int iters = ni ? atoi(ni) : 40, level[8];
    for (int b = 0; b < 8; b++) {
        level[b] = lv && *lv ? atoi(lv) : 100;
        while (lv && *lv && *lv != ',') lv++;
        if (lv && *lv == ',') lv++;
    }
    for (int k = 0; k < series; k++) {
        for (int i = 0; i < iters; i++) {
            uint64_t dur = (p50 << k) * (uint64_t)(100 + pct[i % 10]) / 100;
            if (k == 0) dur = dur * (uint64_t)level[i * 8 / iters] / 100;
            if (k == 0 && i >= 20 && getenv("FIXTURE_SHIFT")) dur *= 2; /* a, halfway: slower */
            if (k == 1 && getenv("FIXTURE_B_PCT"))
                dur = dur / 2 * (uint64_t)atoi(getenv("FIXTURE_B_PCT")) / 100;
            uint64_t id = __atomic_fetch_add(&next_range, 1, __ATOMIC_RELAXED);
            const char *a = getenv("FIXTURE_RENAME") ? "iteration a tf32=on" : "iteration a";
            nvtx_ev(IP_NVTX_PUSH, id, t, k ? "iteration b" : a);
            nvtx_ev(IP_NVTX_POP, id, t + dur, NULL);
            t += dur + gap * (uint64_t)(100 + pct[(i + 3) % 10]) / 100;
        }
    }
    while (ip_clock_now() < t) continue; /* the phase's span holds every iteration */
    return 0;
}

int main(int argc, char **argv)
{
    const char *scenario = getenv("FIXTURE_SCENARIO");
    if (argc < 2 || !scenario) {
        fprintf(stderr,
                "usage: FIXTURE_SCENARIO=base|new|other|latency|pin fixture_compare OUTPUT.db\n");
        return 2;
    }
    struct ip_start_opts opts = {argv[1], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) return 1;
    base = ip_t0();
    other = !strcmp(scenario, "other");
    struct ip_replay_buf b;
    if (!ip_replay_buffer(&b)) return 1;
    device(&b);
    int rc = 2;
    if (!strcmp(scenario, "base") || other) rc = scenario_base(&b);
    if (!strcmp(scenario, "new")) rc = scenario_new(&b);
    if (!strcmp(scenario, "latency")) rc = scenario_latency();
    if (!strcmp(scenario, "pin")) rc = scenario_pin();
    ip_replay_complete(&b, other ? 3 : 0);
    const char *wait = getenv("FIXTURE_WAIT");
    if (rc == 0 && wait && !strcmp(wait, "1")) {
        printf("ready\n");
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin)) rc = 1;
    }
    ip_lifecycle_finish("exit", 0);
    return rc;
}
