/*
 * fixture_export.c: databases for the export and nsys-view tests, built through the real
 * pipeline (rings, replayed CUPTI buffers, the NVTX collector's writer side, phases, writer,
 * schema). Usage: fixture_export SCENARIO OUTPUT.db
 *
 *   rich   two threads in two phases; kernels on two devices and streams (one launched through
 *          the driver API, one named with control characters and invalid UTF-8), a copy, a
 *          memset, device memory records, NVTX push/pop, start/end (ended on the other thread),
 *          marks, a range never popped. Tensor memory, cuDNN calls and device facts have no
 *          producer in this build: they are inserted after the run, as their collectors would
 *          write them.
 *   many N N kernels and their API calls on two streams, the phase switching every 1000, for
 *          size and memory figures.
 *
 * Times of synthetic records are exact (ns after t0); API calls last 1 us and end 500 ns before
 * the work they launch, so everything on a thread nests.
 */
#include "collectors/registry.h"
#include "collectors/cupti_layout.h"
#include "collectors/nvtx_internal.h"
#include "collectors/replay.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"
#include "profiler/ring.h"
#include "profiler/thread.h"

#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t base;

static uint32_t gettid_(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* An NVTX event as the collector's app side records it. */
static void nvtx_ev(uint8_t kind, uint64_t id, uint64_t ext, uint64_t domain, uint64_t ts,
                    const char *text, uint32_t category, uint32_t color)
{
    size_t len = text ? strlen(text) : 0;
    uint16_t size = ip_ev_size((uint32_t)(sizeof(struct ip_ev_nvtx) + len + 1));
    struct ip_ring *r;
    struct ip_ev_nvtx *e = ip_ring_begin(size, &r);
    if (!e) return;
    memset(e, 0, size);
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_NVTX, 1), size, (uint32_t)len};
    e->ts = base + ts;
    e->id = id;
    e->ext = ext;
    e->domain = domain;
    e->category = category;
    e->color = color;
    e->kind = kind;
    e->phase = ip_self.phase; /* as the collector records it */
    if (len) memcpy(e->text, text, len);
    ip_ring_commit(r, size);
}

static void api(struct ip_replay_buf *b, CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
                uint64_t work_start)
{
    CUpti_ActivityAPI *a = ip_replay_add(b, kind);
    a->cbid = cbid;
    a->start = base + work_start - 1500;
    a->end = base + work_start - 500;
    a->processId = (uint32_t)getpid();
    a->threadId = gettid_();
    a->correlationId = corr;
}

static void kernel(struct ip_replay_buf *b, uint32_t corr, const char *name, uint32_t device,
                   uint32_t stream, uint64_t start, uint64_t dur, int driver)
{
    ip_replay_launch(corr);
    if (driver)
        api(b, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, start);
    else
        api(b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr,
            start);
    CUpti_ActivityKernel10 *k = ip_replay_add(b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = base + start;
    k->end = base + start + dur;
    k->name = name;
    k->correlationId = corr;
    k->deviceId = device;
    k->contextId = 1;
    k->streamId = stream;
    k->gridX = 80, k->gridY = 2, k->gridZ = 1;
    k->blockX = 256, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 64;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 2048;
}

static void memory(struct ip_replay_buf *b, uint64_t ts, int op, uint64_t bytes, int kind)
{
    CUpti_ActivityMemory4 *m = ip_replay_add(b, CUPTI_ACTIVITY_KIND_MEMORY2);
    m->timestamp = base + ts;
    m->memoryOperationType = op;
    m->memoryKind = kind;
    m->address = 0x7f0000000000ull + ts;
    m->bytes = bytes;
    m->deviceId = 0;
}

static const char evil[] = "bad\x01name\xff\xfe\"q\\ caf\xc3\xa9 \xc0\xaf \xed\xa0\x80 end";

static void *second_thread(void *arg)
{
    struct ip_replay_buf *b = arg;
    ip_phase_set(IP_NO_GRAD, IP_DTYPE_HALF, 0);
    nvtx_ev(IP_NVTX_PUSH, 20, 0, 0, 39000, "infer", 0, 0);
    kernel(b, 4, "gemm_fp16", 1, 13, 41000, 500, 0);
    kernel(b, 5, "gemm_fp16", 1, 13, 43000, 700, 0);
    kernel(b, 6, evil, 1, 13, 44000, 100, 0);
    nvtx_ev(IP_NVTX_POP, 20, 0, 0, 44600, NULL, 0, 0);
    nvtx_ev(IP_NVTX_END, 0, 0x77, 0xd1, 45000, NULL, 0, 0);
    return NULL;
}

static int scenario_rich(void)
{
    struct ip_replay_buf b;
    if (!ip_replay_buffer(&b)) return 1;
    ip_phase_set(IP_GRAD, 0, 0);
    nvtx_ev(IP_NVTX_DOMAIN, 0xd1, 0, 0, 0, "app", 0, 0);
    nvtx_ev(IP_NVTX_PUSH, 10, 0, 0, 5000, "step \"1\" \\ batch=2", 3, 0xff00ff00);
    memory(&b, 9000, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1 << 20,
           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    kernel(&b, 1, "gemm_fp32", 0, 7, 10000, 1000, 0);
    memory(&b, 11000, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 2 << 20,
           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    memory(&b, 11500, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 4096,
           CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    kernel(&b, 2, "gemm_fp32", 0, 7, 12000, 3000, 0);
    kernel(&b, 3, "gemm_fp32", 0, 7, 16000, 2000, 0);
    nvtx_ev(IP_NVTX_MARK, 11, 0, 0, 20000, "ready", 0, 0);

    ip_replay_launch(30);
    api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 30, 22000);
    CUpti_ActivityMemcpy6 *m = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->bytes = 4096;
    m->start = base + 22000;
    m->end = base + 22800;
    m->streamId = 7;
    m->correlationId = 30;

    ip_replay_launch(31);
    api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 31, 24000);
    CUpti_ActivityMemset4 *s = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_MEMSET);
    s->bytes = 1024;
    s->value = 0;
    s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s->start = base + 24000;
    s->end = base + 24200;
    s->streamId = 7;
    s->correlationId = 31;

    nvtx_ev(IP_NVTX_START, 12, 0x77, 0xd1, 25000, "async load", 0, 0);
    nvtx_ev(IP_NVTX_POP, 10, 0, 0, 28000, NULL, 0, 0);
    nvtx_ev(IP_NVTX_PUSH, 13, 0, 0, 29000, "never popped", 0, 0);
    memory(&b, 30000, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 1 << 20,
           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);

    pthread_t t;
    pthread_create(&t, NULL, second_thread, &b);
    pthread_join(t, NULL);
    kernel(&b, 7, "triton_kernel", 0, 7, 50000, 300, 1);
    ip_replay_complete(&b, 0);
    return 0;
}

/* What the torch and cuDNN collectors and the device query would have written. */
static int insert_rest(const char *path)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return 1;
    static const char sql[] =
        "BEGIN;"
        "INSERT INTO devices VALUES (0, 'Fake GPU 0', 132, 85899345920, 9, 0, 1980000, 2619000,"
        " 5120, 'GPU-0000'), (1, 'Fake GPU 1', 108, 42949672960, 8, 0, 1410000, 1215000, 5120,"
        " 'GPU-0001');"
        "INSERT INTO strings(id, value) VALUES ((SELECT max(id) + 1 FROM strings),"
        " 'cudnnConvolutionForward');"
        "INSERT INTO cudnn_calls(start, dur, tid, phase, fn_id, status, handle, stream, op_kind,"
        " dtype, plan, ext_id) SELECT 14000, 2000, (SELECT tid FROM threads ORDER BY first_ns"
        " LIMIT 1), 1, (SELECT max(id) FROM strings), 0, 1, 7, 1, 2, NULL, NULL;"
        "INSERT INTO tensor_memory(ts, tid, phase, device_type, device_index, ptr, bytes,"
        " allocated, reserved) SELECT ts, (SELECT tid FROM threads ORDER BY first_ns LIMIT 1),"
        " phase, dt, di, 4096, b, a, r FROM (SELECT 9500 AS ts, 1 AS phase, 1 AS dt, 0 AS di,"
        " 4096 AS b, 4096 AS a, 1048576 AS r UNION ALL SELECT 12500, 1, 1, 0, 8192, 12288,"
        " 3145728 UNION ALL SELECT 31000, 1, 1, 0, -4096, 8192, 2097152 UNION ALL"
        " SELECT 26000, 1, 0, -1, 100, 100, NULL UNION ALL"
        " SELECT 41500, 5, 1, 1, 2048, 2048, 2097152);"
        "COMMIT;";
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : 1;
    if (rc) fprintf(stderr, "fixture_export: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

#define NAMES 16
static char names[NAMES][200];

static int scenario_many(long n)
{
    for (int i = 0; i < NAMES; i++)
        snprintf(names[i], sizeof names[i],
                 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<"
                 "op_%02d>(at::TensorIteratorBase&)::{lambda(int)#1}>(int, T3)",
                 i);
    uint64_t ts = 10000;
    long done = 0;
    while (done < n) {
        struct ip_replay_buf b;
        while (!ip_replay_buffer(&b)) sched_yield(); /* the writer frees buffers as it goes */
        for (; done < n; done++) {
            if (b.used + 2 * ip_cupti_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) > b.size)
                break;
            if (done % 1000 == 0) ip_phase_set((done / 1000) % 2 ? IP_NO_GRAD : IP_GRAD, 0, 0);
            ts += 2000;
            kernel(&b, (uint32_t)done + 1, names[done % NAMES], 0, done % 3 ? 7 : 13, ts,
                   1000 + (uint64_t)(done % 97), 0);
        }
        ip_replay_complete(&b, 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fixture_export rich OUTPUT.db | many N OUTPUT.db\n");
        return 2;
    }
    const char *out = argv[argc - 1];
    long n = argc == 4 ? strtol(argv[2], NULL, 10) : 0;
    setenv("INFPROF_CUPTI_BUFFERS", "64", 0);
    struct ip_start_opts opts = {out, 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) return 1;
    base = ip_t0();
    int rc = 2;
    if (!strcmp(argv[1], "rich") && argc == 3)
        rc = scenario_rich();
    else if (!strcmp(argv[1], "many") && argc == 4 && n > 0)
        rc = scenario_many(n);
    ip_lifecycle_finish("exit", 0);
    if (rc == 0 && !strcmp(argv[1], "rich")) rc = insert_rest(out);
    return rc;
}
