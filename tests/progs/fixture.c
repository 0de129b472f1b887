/*
 * fixture.c: builds databases from known synthetic records through the real pipeline (rings,
 * replayed CUPTI buffers, writer, schema), so tests can hold the database and the report to exact
 * numbers. Usage: fixture SCENARIO OUTPUT.db
 *
 *   basic  two phases on two threads; kernels with known durations (one with control characters
 *          in its name), a copy, API records, a dropped-records count.
 *   busy   overlapping and late kernels in one phase: the GPU busy union.
 *   nvtx   kernels inside nested NVTX ranges (through the real NVTX capture).
 *   nvtx-noapi  the same without CUPTI's API records, as at the default settings
 */
#include "collectors/registry.h"
#include "collectors/replay.h"
#include "profiler/clock.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t base;
static int with_api = 1; /* API records beside the launch events (INFPROF_CUDA_API=1) */

/* NVTX calls of this program reach the NVTX collector through nvtx3's static injection hook, as
 * they would through NVTX_INJECTION64_PATH in a preloaded run. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;

/* One kernel: its launch (on the calling thread, as the launch callback records it), its API
 * record and its activity record. */
static void kernel(struct ip_replay_buf *b, uint32_t corr, const char *name, uint64_t start,
                   uint64_t dur)
{
    ip_replay_launch(corr);
    CUpti_ActivityAPI *api = with_api ? ip_replay_add(b, CUPTI_ACTIVITY_KIND_RUNTIME) : NULL;
    if (api) {
        api->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
        api->start = base + start - 4000;
        api->end = base + start - 1000;
        api->processId = (uint32_t)getpid();
        api->threadId = (uint32_t)syscall(SYS_gettid);
        api->correlationId = corr;
    }
    CUpti_ActivityKernel10 *k = ip_replay_add(b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = base + start;
    k->end = base + start + dur;
    k->name = name;
    k->correlationId = corr;
    k->deviceId = 0;
    k->streamId = 7;
    k->gridX = 80, k->gridY = 1, k->gridZ = 1;
    k->blockX = 256, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 64;
}

static void *second_thread(void *arg)
{
    struct ip_replay_buf *b = arg;
    ip_phase_set(IP_NO_GRAD, IP_DTYPE_HALF, 0);
    kernel(b, 4, "gemm_fp16", 40000, 500);
    kernel(b, 5, "gemm_fp16", 41000, 700);
    kernel(b, 6, "evil\x1b[31m_kernel\n", 42000, 100);
    return NULL;
}

static int scenario_basic(void)
{
    struct ip_replay_buf b;
    if (!ip_replay_buffer(&b)) return 1;
    ip_phase_set(IP_GRAD, 0, 0);
    kernel(&b, 1, "gemm_fp32", 10000, 1000);
    kernel(&b, 2, "gemm_fp32", 12000, 3000);
    kernel(&b, 3, "gemm_fp32", 16000, 2000);
    pthread_t t;
    pthread_create(&t, NULL, second_thread, &b);
    pthread_join(t, NULL);
    ip_replay_launch(10);
    CUpti_ActivityAPI *api = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_RUNTIME);
    api->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    api->start = base + 50000;
    api->end = base + 51000;
    api->threadId = (uint32_t)syscall(SYS_gettid);
    api->correlationId = 10;
    CUpti_ActivityMemcpy6 *m = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->bytes = 4096;
    m->start = base + 52000;
    m->end = base + 52800;
    m->streamId = 7;
    m->correlationId = 10;
    ip_replay_complete(&b, 3);
    return 0;
}

/* GPU busy time: overlapping kernels on two streams, one that only touches another, and one that
 * arrives late (in a second buffer, older than the rest): the union is 8400 + 1000 ns. */
static int scenario_busy(void)
{
    struct ip_replay_buf b;
    ip_phase_set(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0);
    static const uint64_t spans[][2] = {{1000, 5000}, {3000, 8000}, {20000, 21000}, {21000, 22000}};
    if (!ip_replay_buffer(&b)) return 1;
    for (uint32_t i = 0; i < 4; i++)
        kernel(&b, 100 + i, "gemm_bf16", spans[i][0], spans[i][1] - spans[i][0]);
    ip_replay_complete(&b, 0);
    if (!ip_replay_buffer(&b)) return 1;
    kernel(&b, 200, "late_kernel", 500, 400);
    ip_replay_complete(&b, 0);
    return 0;
}

/* Kernels inside nested NVTX ranges ("step" > "encoder"), one directly in "step", one outside:
 * what --nvtx and the NVTX section's GPU projection must count. */
static int scenario_nvtx(void)
{
    struct ip_replay_buf b;
    ip_phase_set(IP_NO_GRAD, 0, 0);
    if (!ip_replay_buffer(&b)) return 1;
    nvtxRangePushA("step");
    nvtxRangePushA("encoder");
    kernel(&b, 300, "gemm_a", 10000, 1000);
    kernel(&b, 301, "gemm_b", 12000, 2000);
    nvtxRangePop();
    kernel(&b, 302, "softmax", 15000, 500);
    nvtxRangePop();
    kernel(&b, 303, "outside", 17000, 700);
    nvtxRangePushA("step");
    kernel(&b, 304, "gemm_a", 20000, 1000);
    nvtxRangePop();
    ip_replay_complete(&b, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fixture SCENARIO OUTPUT.db\n");
        return 2;
    }
    struct ip_start_opts opts = {argv[2], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) return 1;
    base = ip_t0();
    int rc = 2;
    if (!strcmp(argv[1], "basic")) rc = scenario_basic();
    if (!strcmp(argv[1], "busy")) rc = scenario_busy();
    if (!strcmp(argv[1], "nvtx")) rc = scenario_nvtx();
    if (!strcmp(argv[1], "nvtx-noapi")) with_api = 0, rc = scenario_nvtx();
    ip_lifecycle_finish("exit", 0);
    return rc;
}
