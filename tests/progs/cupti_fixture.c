/*
 * cupti_fixture.c: databases from known CUPTI records of every kind the collector reads, fed
 * through the real buffer callbacks, issue events, rings, writer and schema (replay.h), so that
 * tests/cupti/ can hold rows and report to exact numbers. Usage: cupti_fixture SCENARIO OUT.db
 *
 *   kinds   every record kind: kernels (plain, driver-launched, graph nodes), copies (pageable,
 *           pinned, device, peer), memsets, memory segments and a pool, synchronisation, API
 *           calls of two threads in two phases, an external correlation, a device; plus one
 *           record of each kind of trouble (untimed, unattributed, nested call, driver id).
 *   late    API records arriving a writer cycle after the work they issued
 *   errors  a record CUPTI cannot read mid-buffer, a refused buffer, dropped records
 *           (run it with INFPROF_CUPTI_BUFFERS=2)
 *   records INFPROF_ATTRIBUTION=records: no issue events; kernels in phases, an NVTX iteration,
 *           an NVTX range and a cuDNN call on two threads, their API records completed a writer
 *           cycle after the kernels, and one kernel whose call never comes
 *
 * Times are ns after the run's t0; expected values are spelled out in tests/cupti/.
 */
#include "collectors/registry.h"
#include "collectors/replay.h"
#include "profiler/attrib.h"
#include "profiler/clock.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"
#include "profiler/thread.h"

#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { RT = 1, DRV = 2 };

static uint64_t base;
static struct ip_replay_buf buf;

/* NVTX calls reach the NVTX collector through nvtx3's static injection hook. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;

static void *add(CUpti_ActivityKind kind)
{
    void *r = ip_replay_add(&buf, kind);
    if (!r) {
        fprintf(stderr, "cupti_fixture: buffer full\n");
        _exit(1);
    }
    return r;
}

/* An API call: its issue event (when `issued`) and its API record. */
static void call(int domain, uint32_t cbid, uint32_t corr, uint64_t start, uint64_t end, int issued,
                 int launch)
{
    if (issued) ip_replay_issue(corr, domain, cbid, base + start, launch);
    CUpti_ActivityAPI *a =
        add(domain == RT ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
    a->cbid = cbid;
    a->start = base + start;
    a->end = base + end;
    a->processId = (uint32_t)getpid();
    a->threadId = (uint32_t)syscall(SYS_gettid);
    a->correlationId = corr;
}

static CUpti_ActivityKernel10 *kernel(const char *name, uint32_t corr, uint64_t start, uint64_t dur)
{
    CUpti_ActivityKernel10 *k = add(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->name = name;
    k->correlationId = corr;
    k->start = start || dur ? base + start : 0;
    k->end = start || dur ? base + start + dur : 0;
    k->contextId = 1;
    k->streamId = 7;
    k->gridX = 108, k->gridY = 1, k->gridZ = 1;
    k->blockX = 128, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 32;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 4096;
    return k;
}

static CUpti_ActivityMemcpy6 *copy(uint8_t kind, uint8_t src, uint8_t dst, uint64_t bytes,
                                   uint32_t corr, uint64_t start, uint64_t dur)
{
    CUpti_ActivityMemcpy6 *m = add(CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = kind;
    m->srcKind = src;
    m->dstKind = dst;
    m->bytes = bytes;
    m->start = base + start;
    m->end = base + start + dur;
    m->contextId = 1;
    m->streamId = 7;
    m->correlationId = corr;
    m->copyCount = 1;
    return m;
}

static CUpti_ActivityMemset4 *memset4(uint64_t bytes, uint32_t corr, uint64_t start, uint64_t dur)
{
    CUpti_ActivityMemset4 *m = add(CUPTI_ACTIVITY_KIND_MEMSET);
    m->bytes = bytes;
    m->start = base + start;
    m->end = base + start + dur;
    m->streamId = 7;
    m->correlationId = corr;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    return m;
}

static CUpti_ActivityMemory4 *segment(int op, uint64_t address, uint64_t bytes, uint32_t corr,
                                      uint64_t ts, uint32_t stream)
{
    CUpti_ActivityMemory4 *m = add(CUPTI_ACTIVITY_KIND_MEMORY2);
    m->memoryOperationType = op;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->correlationId = corr;
    m->address = address;
    m->bytes = bytes;
    m->timestamp = base + ts;
    m->contextId = 1;
    m->streamId = stream;
    return m;
}

static CUpti_ActivitySynchronization2 *sync2(int type, uint32_t stream, uint32_t corr,
                                             uint64_t start, uint64_t end)
{
    CUpti_ActivitySynchronization2 *y = add(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    y->type = type;
    y->start = base + start;
    y->end = base + end;
    y->correlationId = corr;
    y->contextId = 1;
    y->streamId = stream;
    return y;
}

/* One launch of graph 9: nodes g_k1 (1001), g_k2 (1002) and a memset (1003). */
static void graph_launch(uint32_t corr, uint64_t api, uint64_t first)
{
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, corr, api, api + 1000, 1, 1);
    CUpti_ActivityKernel10 *k = kernel("g_k1", corr, first, 3000);
    k->graphId = 9, k->graphNodeId = 1001;
    k = kernel("g_k2", corr, first + 3500, corr == 120 ? 1500 : 2000);
    k->graphId = 9, k->graphNodeId = 1002;
    CUpti_ActivityMemset4 *m = memset4(1024, corr, first + (corr == 120 ? 5200 : 5600), 200);
    m->graphId = 9, m->graphNodeId = 1003;
}

static void *kinds_thread2(void *arg)
{
    (void)arg;
    ip_phase_set(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0);
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 201, 500000, 503000, 1, 1);
    kernel("drv_kernel", 201, 510000, 5000);
    /* A copy whose correlation id is the driver's: found through its runtime call's id. */
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 140, 520000, 521000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 2048, 5140, 522000, 700)
        ->runtimeCorrelationId = 140;
    return NULL;
}

static int scenario_kinds(void)
{
    const uint32_t none = CUPTI_INVALID_STREAM_ID;
    ip_phase_set(IP_GRAD, 0, 0);
    CUpti_ActivityDevice5 *d = add(CUPTI_ACTIVITY_KIND_DEVICE);
    d->id = 0;
    d->name = "Fixture GPU";
    d->numMultiprocessors = 132;
    d->globalMemorySize = 85899345920ull;
    d->computeCapabilityMajor = 9;
    d->computeCapabilityMinor = 0;
    d->coreClockRate = 1980000;
    for (int i = 0; i < 16; i++) d->uuid.bytes[i] = (char)(0x10 + i);

    /* Memory: a plain allocation, and one from a stream-ordered pool. */
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 101, 1000, 3000, 1, 0);
    segment(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x100000, 1048576, 101, 2000, none);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, 102, 3500, 4500, 1, 0);
    CUpti_ActivityMemoryPool3 *p = add(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    p->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
    p->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p->correlationId = 102;
    p->address = 0xA000000;
    p->size = 33554432;
    p->utilizedSize = 2097152;
    p->timestamp = base + 3900;
    CUpti_ActivityMemory4 *m =
        segment(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x200000, 2097152, 102, 4000, 7);
    m->isAsync = 1;
    m->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m->memoryPoolConfig.address = 0xA000000;

    /* Copies. The driver call inside cudaMemcpy shares its correlation id (written first, as
     * the inner call ends first). */
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 103, 5500, 105000, 0, 0);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 103, 5000, 110000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1048576, 103, 6000, 100000);
    const uint32_t async = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    call(RT, async, 104, 111000, 112000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1048576, 104, 113000, 50000)
        ->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    call(RT, async, 105, 170000, 171000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 524288, 105, 172000, 30000)
        ->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    call(RT, async, 106, 180000, 181000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 106, 182000, 2000);
    call(RT, async, 107, 185000, 186000, 1, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 107, 186500, 4000);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, 108, 191000, 192000, 1, 0);
    CUpti_ActivityMemcpyPtoP4 *pp = add(CUPTI_ACTIVITY_KIND_MEMCPY2);
    pp->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    pp->srcKind = pp->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    pp->bytes = 8192;
    pp->start = base + 193000;
    pp->end = base + 199000;
    pp->srcDeviceId = 0;
    pp->dstDeviceId = 1;
    pp->streamId = 7;
    pp->correlationId = 108;
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 109, 200000, 201000, 1, 0);
    memset4(65536, 109, 201500, 1500);

    /* Kernels, one of them tagged by an external correlation id. */
    const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    CUpti_ActivityExternalCorrelation *x = add(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    x->externalId = 42;
    x->correlationId = 110;
    call(RT, launch, 110, 250000, 252000, 1, 1);
    kernel("k_main", 110, 255000, 10000);
    call(RT, launch, 111, 270000, 272000, 1, 1);
    kernel("k_main", 111, 273000, 20000);

    /* Synchronisation. */
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 112, 300000, 350000, 1, 0);
    sync2(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 7, 112, 300500, 349500);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 113, 355000, 360000, 1, 0);
    sync2(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, none, 113, 355500, 359500);

    /* A graph launched twice. */
    graph_launch(120, 400000, 405000);
    graph_launch(121, 420000, 423000);

    /* Trouble: a kernel CUPTI could not time, a memset nobody issued. */
    ip_replay_issue(130, RT, launch, base + 430000, 1);
    kernel("untimed", 130, 0, 0);
    memset4(256, 999, 440000, 100);

    pthread_t t;
    pthread_create(&t, NULL, kinds_thread2, NULL);
    pthread_join(t, NULL);

    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, 150, 600000, 601000, 1, 0);
    segment(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x100000, 1048576, 150, 600500, none);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, 151, 602000, 602500, 1, 0);
    m = segment(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x200000, 2097152, 151, 602200, 7);
    m->isAsync = 1;
    m->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m->memoryPoolConfig.address = 0xA000000;
    ip_replay_complete(&buf, 0);
    return 0;
}

/* Work in one writer cycle, the API records of the calls that issued it in the next. */
static int scenario_late(void)
{
    ip_phase_set(IP_NO_GRAD, 0, 0);
    const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    const uint32_t async = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    ip_replay_issue(301, RT, launch, base + 1000, 1);
    kernel("late_k", 301, 6000, 1000);
    ip_replay_issue(302, RT, async, base + 8000, 0);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 302, 9000, 500);
    kernel("orphan_k", 303, 12000, 1000); /* issued by a call nobody saw */
    ip_replay_complete(&buf, 0);
    if (ip_replay_sync() != 0 || !ip_replay_buffer(&buf)) return 1;
    call(RT, launch, 301, 1000, 2500, 0, 0);
    call(RT, async, 302, 8000, 8600, 0, 0);
    call(RT, launch, 303, 10000, 11000, 0, 0);
    ip_replay_complete(&buf, 0);
    return 0;
}

/* Pool of 2: the third request is refused; the first buffer holds a record CUPTI cannot read. */
static int scenario_errors(void)
{
    struct ip_replay_buf second, third;
    if (!ip_replay_buffer(&second)) return 1;
    if (ip_replay_buffer(&third)) return 1; /* must be refused */
    kernel("e1", 0, 1000, 100);
    kernel("e2", 0, 2000, 100);
    add(CUPTI_ACTIVITY_KIND_INVALID);
    kernel("e3", 0, 3000, 100);
    ip_replay_complete(&buf, 5);
    buf = second;
    kernel("e4", 0, 4000, 100);
    ip_replay_complete(&buf, 0);
    return 0;
}

/* ---- records mode ------------------------------------------------------------------------- */

static struct ip_replay_buf api_buf;

/* A kernel launched now on this thread, as CUPTI records it with only its API record enabled:
 * the API record (thread, time) in api_buf, the kernel in buf; no issue event. */
static void launch_now(const char *name, uint32_t corr, int with_api)
{
    uint64_t t = ip_clock_now();
    if (with_api) {
        CUpti_ActivityAPI *a = ip_replay_add(&api_buf, CUPTI_ACTIVITY_KIND_RUNTIME);
        a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
        a->start = t;
        a->end = t + 1;
        a->processId = (uint32_t)getpid();
        a->threadId = (uint32_t)syscall(SYS_gettid);
        a->correlationId = corr;
    }
    kernel(name, corr, t + 5000 - base, 1000);
}

static void *records_thread(void *arg)
{
    (void)arg;
    ip_phase_set(IP_GRAD, 0, 0);
    launch_now("r_thread", 406, 1);
    return NULL;
}

static int scenario_records(void)
{
    if (!ip_replay_buffer(&api_buf)) return 1;
    ip_phase_set(IP_NO_GRAD, 0, 0);
    launch_now("r_pre", 401, 1);
    nvtxRangePushA("iteration batch=4");
    launch_now("r_iter", 402, 1);
    nvtxRangePushA("encoder");
    launch_now("r_encoder", 403, 1);
    /* What the cuDNN wrapper does around a call (cudnn.c): its id is the thread's state. */
    ip_self.cudnn_call = 77;
    ip_attrib_changed();
    launch_now("r_conv", 404, 1);
    ip_self.cudnn_call = 0;
    ip_attrib_changed();
    nvtxRangePop();
    nvtxRangePop();
    ip_phase_set(IP_INFERENCE_MODE, 0, 0);
    launch_now("r_after", 405, 1);
    pthread_t t;
    pthread_create(&t, NULL, records_thread, NULL);
    pthread_join(t, NULL);
    launch_now("r_orphan", 407, 0);
    /* The kernels first; their calls a writer cycle later. */
    ip_replay_complete(&buf, 0);
    if (ip_replay_sync() != 0) return 1;
    ip_replay_complete(&api_buf, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cupti_fixture kinds|late|errors|records OUTPUT.db\n");
        return 2;
    }
    struct ip_start_opts opts = {argv[2], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0 || !ip_replay_buffer(&buf))
        return 1;
    base = ip_t0();
    int rc = 2;
    if (!strcmp(argv[1], "kinds")) rc = scenario_kinds();
    if (!strcmp(argv[1], "late")) rc = scenario_late();
    if (!strcmp(argv[1], "errors")) rc = scenario_errors();
    if (!strcmp(argv[1], "records")) rc = scenario_records();
    ip_lifecycle_finish("exit", 0);
    return rc;
}
