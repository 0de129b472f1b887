/*
 * bench_events.c: the event path under load, and the cost of recording one event.
 *
 *   infprof-bench burst [--threads 8] [--seconds 2]
 *       THREADS threads append allocator reports as fast as they can (a phase change every
 *       1000 events), through the real rings, writer and schema, for SECONDS. Prints the events
 *       per second the threads sustained, how many were dropped (0 at defaults), how long the
 *       threads waited for the writer, the peak memory of the buffers, and the writer's time.
 *   infprof-bench hooks [--n N]
 *       ns per call, on one thread, into a warm buffer: an ordinary event (an allocator report),
 *       a critical one (a phase change), the CUPTI launch callback's work (replay path), an
 *       NVTX push and pop through our capture, and the state event of INFPROF_ATTRIBUTION=records
 *       (one per change of iteration, NVTX range or cuDNN call).
 */
#include "bench.h"
#include "collectors/replay.h"
#include "collectors/registry.h"
#include "collectors/torch_internal.h"
#include "profiler/attrib.h"
#include "profiler/clock.h"
#include "profiler/iteration.h"
#include "profiler/lifecycle.h"
#include "profiler/opname.h"
#include "profiler/phase.h"
#include "profiler/ring.h"
#include "profiler/thread.h"

#include <limits.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NVTX calls of this program reach the NVTX collector through nvtx3's static injection hook. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;

static _Atomic int burst_go, burst_stop;
static _Atomic uint64_t burst_events;

static int append_memory(int64_t bytes)
{
    struct ip_ring *r;
    struct ip_ev_torch_memory *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return 0;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_MEMORY), sizeof *e,
                          ip_self.phase};
    e->ts = ip_clock_now();
    e->ptr = 0x1000;
    e->bytes = bytes;
    e->allocated = bytes > 0 ? bytes : 0;
    e->reserved = 0;
    e->device_type = 1;
    e->device_index = 0;
    ip_ring_commit(r, sizeof *e);
    return 1;
}

static void *burst_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&burst_go)) {
    }
    uint64_t n = 0;
    while (!atomic_load_explicit(&burst_stop, memory_order_relaxed)) {
        for (int i = 0; i < 1000; i++) append_memory(i & 1 ? 256 : -256);
        n += 1000;
        ip_phase_set((uint8_t)((n / 1000) % 3), 0, 0);
    }
    atomic_fetch_add(&burst_events, n);
    return NULL;
}

static long flag(int argc, char **argv, const char *name, long dflt)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return strtol(argv[i + 1], NULL, 10);
    return dflt;
}

int bench_burst(int argc, char **argv)
{
    int threads = (int)flag(argc, argv, "--threads", 8);
    double seconds = (double)flag(argc, argv, "--seconds", 2);
    if (threads < 1 || threads > 256 || seconds <= 0) return 2;
    char path[PATH_MAX];
    bench_temp_path(path, sizeof path, NULL);
    struct ip_start_opts opts = {path, 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0) return 1;
    pthread_t t[256];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, burst_thread, NULL);
    uint64_t t0 = ip_clock_now();
    atomic_store(&burst_go, 1);
    while (ip_clock_now() - t0 < (uint64_t)(seconds * 1e9)) usleep(10000);
    atomic_store(&burst_stop, 1);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    uint64_t t1 = ip_clock_now();
    ip_lifecycle_finish("exit", 0);
    uint64_t t2 = ip_clock_now();
    uint64_t events = atomic_load(&burst_events);
    double burst_s = (double)(t1 - t0) / 1e9, total_s = (double)(t2 - t0) / 1e9;
    double waited = bench_meta_number(path, "buffer_wait_ns") / 1e9;
    printf("threads %d\nseconds %.2f\n", threads, burst_s);
    printf("events %llu\n", (unsigned long long)events);
    /* Appended while the threads ran (throttled to the writer when it falls behind), and written
     * from the first event to the closed database: the rate the pipeline sustains. */
    printf("events_per_s_appended %.0f\n", (double)events / burst_s);
    printf("events_per_s_sustained %.0f\n", (double)events / total_s);
    printf("dropped_events %.0f\n", bench_meta_number(path, "dropped_events"));
    printf("rows_written %.0f\n", bench_meta_number(path, "rows_written"));
    printf("program_wait_s %.3f (%.1f%% of the threads' time)\n", waited,
           100.0 * waited / (burst_s * threads));
    printf("buffer_peak_mib %.1f\n", bench_meta_number(path, "buffer_bytes_peak") / 1048576.0);
    printf("buffer_budget_mib %.0f\n", bench_meta_number(path, "buffer_budget_bytes") / 1048576.0);
    printf("writer_cpu_s %.3f\n", bench_meta_number(path, "writer_cpu_ns") / 1e9);
    printf("writer_max_cycle_ms %.1f\n", bench_meta_number(path, "writer_max_cycle_ns") / 1e6);
    printf("writer_cycles %.0f\n", bench_meta_number(path, "writer_cycles"));
    printf("writer_s_rings_collectors_commit %.3f %.3f %.3f\n",
           bench_meta_number(path, "writer_rings_ns") / 1e9,
           bench_meta_number(path, "writer_collectors_ns") / 1e9,
           bench_meta_number(path, "writer_commit_ns") / 1e9);
    bench_temp_done(path, NULL);
    return 0;
}

static double per_call(long n, int (*op)(long))
{
    double best = 1e30;
    for (long done = 0; done < n; done += 1000) {
        uint64_t a = ip_clock_now();
        for (long i = 0; i < 1000; i++) op(i);
        double ns = (double)(ip_clock_now() - a) / 1000.0;
        if (ns < best) best = ns;
        usleep(2000); /* the writer drains: time appends into a warm buffer, never a full one */
    }
    return best;
}

static int op_memory(long i)
{
    return append_memory(i & 1 ? 512 : -512);
}

static int op_phase(long i)
{
    ip_phase_set((uint8_t)(i & 1), 0, 0);
    return 1;
}

static int op_launch(long i)
{
    ip_replay_issue((uint32_t)(i + 1), 1, 211, ip_clock_now(), 1);
    return 1;
}

/* A launch inside an open PyTorch operator: its name id already looked up (the usual case: an
 * operator's launches after its first), or looked up afresh at every launch (an operator's first
 * launch: a hash of the name and a probe of the table). */
static const char *bench_op_name(const void *rf)
{
    (void)rf;
    return "aten::cudnn_convolution";
}

static int op_launch_in_op(long i)
{
    ip_replay_issue((uint32_t)(i + 1), 1, 211, ip_clock_now(), 1);
    return 1;
}

static int op_launch_first_in_op(long i)
{
    ip_self.op_id = 0;
    ip_replay_issue((uint32_t)(i + 1), 1, 211, ip_clock_now(), 1);
    return 1;
}

static int op_nvtx(long i)
{
    (void)i;
    nvtxRangePushA("bench range");
    nvtxRangePop();
    return 1;
}

/* An outermost iteration's edges: its id, and its thread's CPU time and context switches read at
 * both ends (two system calls each) and sent to the writer. */
static int op_iteration(long i)
{
    (void)i;
    ip_iter_end(ip_iter_begin());
    return 1;
}

static int op_state(long i)
{
    ip_self.cudnn_call = (uint64_t)i + 1;
    ip_attrib_changed();
    return 1;
}

int bench_hooks(int argc, char **argv)
{
    long n = flag(argc, argv, "--n", 200000);
    char path[PATH_MAX];
    bench_temp_path(path, sizeof path, NULL);
    setenv("INFPROF_FLUSH_MS", "1", 0);
    struct ip_start_opts opts = {path, 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) return 1;
    /* The clock as a run has it once started: the TSC line comes on after the writer's baseline
     * (about 20 ms; clock.h), clock_gettime before it and where it is not used. */
    for (int i = 0; i < 500 && !atomic_load(&ip_clock_line.on); i++) usleep(1000);
    printf("clock %s\n", atomic_load(&ip_clock_line.on) ? "tsc" : "clock_gettime");
    printf("ring_append_ns %.1f\n", per_call(n, op_memory));
    printf("phase_change_ns %.1f\n", per_call(n, op_phase));
    printf("launch_callback_ns %.1f\n", per_call(n, op_launch));
    printf("nvtx_push_pop_ns %.1f\n", per_call(n, op_nvtx));
    printf("iteration_edges_ns %.1f\n", per_call(n / 10, op_iteration));
    static const int fake_rf;
    ip_opname_source(bench_op_name);
    ip_self.op_rf = &fake_rf;
    printf("launch_callback_in_operator_ns %.1f\n", per_call(n, op_launch_in_op));
    printf("launch_callback_first_in_operator_ns %.1f\n", per_call(n, op_launch_first_in_op));
    ip_self.op_rf = NULL;
    ip_self.op_id = 0;
    ip_attrib_by_time = 1;
    printf("records_state_event_ns %.1f\n", per_call(n, op_state));
    printf("nvtx_push_pop_records_ns %.1f\n", per_call(n, op_nvtx));
    ip_attrib_by_time = 0;
    ip_self.cudnn_call = 0;
    ip_lifecycle_finish("exit", 0);
    bench_temp_done(path, NULL);
    return 0;
}
