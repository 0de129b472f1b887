/*
 * bench.c: infprof-bench, the speed figures (never asserted in tests; docs/performance.md keeps
 * the numbers).
 *
 *   infprof-bench ingest [--records N] [--by-records]
 *                                        synthetic kernel records through the real CUPTI buffer
 *                                        callbacks, launch events, rings, writer and schema;
 *                                        prints records_per_s and bytes_per_kernel. With
 *                                        --by-records: INFPROF_ATTRIBUTION=records, an API record
 *                                        per kernel instead of the launch event, in a buffer
 *                                        completed after the next chunk of kernels (so kernels
 *                                        wait for their calls)
 *   infprof-bench report [--kernels N]   builds such a database and times `infprof report`
 *                                        on it; prints report_s
 *   infprof-bench burst, hooks           the event path under load, and per-event costs
 *                                        (bench_events.c)
 *   infprof-bench floor [--records N]    kernel rows through the store alone: the ceiling
 *                                        ingest could reach with one SQLite row a kernel
 *                                        (bench_db.c)
 */
#include "collectors/registry.h"
#include "bench.h"
#include "collectors/replay.h"
#include "profiler/clock.h"
#include "profiler/lifecycle.h"
#include "profiler/writer.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAMES 64

static char names[NAMES][160];

static void usage(void)
{
    fprintf(stderr, "usage: infprof-bench ingest [--records N] [--by-records] [--keep FILE]\n"
                    "       infprof-bench report [--kernels N] [--keep FILE]\n"
                    "       infprof-bench burst [--threads N] [--seconds S]\n"
                    "       infprof-bench hooks [--n N]\n"
                    "       infprof-bench floor [--records N]\n");
    exit(2);
}

static int by_records; /* --by-records */

/* The API record of kernel `corr` launched at ts, this thread (records mode). */
static void api_record(struct ip_replay_buf *b, uint32_t corr, uint64_t ts)
{
    CUpti_ActivityAPI *a = ip_replay_add(b, CUPTI_ACTIVITY_KIND_RUNTIME);
    if (!a) return;
    a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a->start = ts - 5000;
    a->end = ts - 3000;
    a->threadId = (uint32_t)gettid();
    a->correlationId = corr;
}

/* Push `n` kernels (one launch event each, or one API record with --by-records) through the
 * pipeline into `path`. Returns seconds. */
static double build(const char *path, long n)
{
    setenv("INFPROF_CUPTI_BUFFERS", "64", 0);
    if (by_records) setenv("INFPROF_ATTRIBUTION", "records", 1);
    struct ip_start_opts opts = {path, 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) {
        fprintf(stderr, "infprof-bench: cannot start the pipeline\n");
        exit(1);
    }
    for (int i = 0; i < NAMES; i++)
        snprintf(names[i], sizeof names[i],
                 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<"
                 "op_%02d>(at::TensorIteratorBase&)::{lambda(int)#1}>(int, T3)",
                 i);
    uint64_t t0 = ip_clock_now(), ts = t0;
    uint32_t corr = 1;
    long done = 0;
    struct ip_replay_buf late = {0}; /* the previous chunk's API records */
    while (done < n) {
        struct ip_replay_buf b, api = {0};
        /* The writer frees buffers as it goes; wait for one without taking its core. */
        while (!ip_replay_buffer(&b)) nanosleep(&(struct timespec){0, 100000}, NULL);
        while (by_records && !ip_replay_buffer(&api))
            nanosleep(&(struct timespec){0, 100000}, NULL);
        CUpti_ActivityKernel10 *k;
        while (done < n && (k = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
            if (by_records)
                api_record(&api, corr, ts + 1500);
            else
                ip_replay_launch(corr);
            int i = (int)(done % NAMES);
            ts += 1500;
            k->start = ts;
            k->end = ts + 1000 + (uint64_t)(i * 37 + done % 101);
            k->name = names[i];
            k->correlationId = corr++;
            k->streamId = 7;
            k->gridX = 128 << (i % 4);
            k->gridY = k->gridZ = 1;
            k->blockX = 256;
            k->blockY = k->blockZ = 1;
            k->registersPerThread = 32;
            done++;
        }
        ip_replay_complete(&b, 0);
        /* The calls a chunk later than the work they issued. */
        if (late.data) ip_replay_complete(&late, 0);
        late = api;
    }
    if (late.data) ip_replay_complete(&late, 0);
    ip_lifecycle_finish("exit", 0);
    return (double)(ip_clock_now() - t0) / 1e9;
}

static long parse_n(int argc, char **argv, const char *flag, long dflt, const char **keep)
{
    long n = dflt;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], flag) && i + 1 < argc)
            n = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--by-records"))
            by_records = 1;
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            *keep = argv[++i];
        else
            usage();
    }
    if (n <= 0) usage();
    return n;
}

static int bench_ingest(int argc, char **argv)
{
    const char *keep = NULL;
    long n = parse_n(argc, argv, "--records", 5000000, &keep);
    char path[PATH_MAX];
    bench_temp_path(path, sizeof path, keep);
    double secs = build(path, n);
    printf("records %ld\n", n);
    printf("seconds %.3f\n", secs);
    printf("records_per_s %.0f\n", (double)n / secs);
    /* The writer's own CPU time: the figure that does not depend on what else the machine runs. */
    double cpu = bench_meta_number(path, "writer_cpu_ns") / 1e9;
    printf("writer_cpu_s %.3f\n", cpu);
    if (cpu > 0) printf("records_per_writer_cpu_s %.0f\n", (double)n / cpu);
    printf("bytes_per_kernel %.1f\n", bench_table_bytes(path, "kernel_rows") / (double)n);
    if (by_records) {
        printf("records_waited %.0f\n", bench_meta_number(path, "cupti_records_waited"));
        printf("unattributed %.0f\n", bench_meta_number(path, "cupti_unattributed_records"));
    }
    bench_temp_done(path, keep);
    return 0;
}

static int bench_report(int argc, char **argv)
{
    const char *keep = NULL;
    long n = parse_n(argc, argv, "--kernels", 10000000, &keep);
    char path[PATH_MAX], self[PATH_MAX], cli[PATH_MAX + 16];
    bench_temp_path(path, sizeof path, keep);
    build(path, n);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(cli, sizeof cli, "%s/infprof", self);
    uint64_t t0 = ip_clock_now();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        execl(cli, "infprof", "report", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    double secs = (double)(ip_clock_now() - t0) / 1e9;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "infprof-bench: %s report failed\n", cli);
        return 1;
    }
    printf("kernels %ld\n", n);
    printf("report_s %.3f\n", secs);
    bench_temp_done(path, keep);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) usage();
    if (!strcmp(argv[1], "ingest")) return bench_ingest(argc, argv);
    if (!strcmp(argv[1], "report")) return bench_report(argc, argv);
    if (!strcmp(argv[1], "burst")) return bench_burst(argc, argv);
    if (!strcmp(argv[1], "hooks")) return bench_hooks(argc, argv);
    if (!strcmp(argv[1], "floor")) return bench_floor(argc, argv);
    usage();
}
