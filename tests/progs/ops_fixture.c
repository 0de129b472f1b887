/*
 * ops_fixture.c: GPU work inside PyTorch operator scopes, through the real pipeline (the operator
 * collector's own RecordFunction callbacks, replayed CUPTI records), without libtorch or a GPU.
 * The program stands in for libtorch: it exports at::addGlobalCallback (which keeps the callback
 * the collector registers) and at::RecordFunction::name, then opens and closes operators by
 * calling that callback as the dispatcher would. Run with INFPROF_OPERATORS=1; with
 * INFPROF_ATTRIBUTION=records the kernels are attributed from API records (no launch callback).
 * Usage: ops_fixture SCENARIO OUTPUT.db
 *
 *   nested  aten::conv2d > aten::cudnn_convolution: kernel "outer" in conv2d, "inner", a copy
 *           and a memset in cudnn_convolution, "after" in conv2d again, "none" outside any.
 *   cudnn   aten::cudnn_convolution calls cudnnConvolutionForward (the cuDNN collector's wrapper
 *           over the fake libcudnn.so.9), which launches kernel "in_cudnn"; then the same call
 *           outside any operator, and kernel "none".
 *   deep    70 nested operators (past the 64-deep stack): kernel "deepest" launched innermost,
 *           then "none" outside; the collector must count, not crash.
 *   names   2100 operators of distinct names, one kernel in each (named like its operator): past
 *           the 2048-name table the kernels carry no operator, and the rest are counted.
 *   long    600 kernels over 40 s of GPU time (past the writer's 16 s of 1 ms buckets, so its
 *           kernel_time buckets widen twice), each over a bucket's edge, in two operators and two
 *           phases; one starts before t0, one lasts 3 s, one runs outside any operator, and
 *           one broken record starts 2^62 ns after t0.
 */
#include "../../collectors/cupti_config.h"
#include "collectors/registry.h"
#include "collectors/replay.h"
#include "collectors/torch_internal.h"
#include "profiler/clock.h"
#include "profiler/config.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"

#include <cudnn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* at::RecordFunctionCallback, as collectors/torch_internal.h lays it out. */
static struct rf_callback registered;

struct fake_rf {
    const char *name;
};

__attribute__((visibility("default"))) uint64_t
add_global(struct rf_callback cb) __asm__("_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE");
uint64_t add_global(struct rf_callback cb)
{
    registered = cb;
    return 1;
}

__attribute__((visibility("default"))) const char *
rf_name(const void *rf) __asm__("_ZNK2at14RecordFunction4nameEv");
const char *rf_name(const void *rf)
{
    return ((const struct fake_rf *)rf)->name;
}

static uint64_t base;
static int by_records;
static struct ip_replay_buf buf;

static void op_begin(struct fake_rf *rf)
{
    void *ret;
    if (registered.start) registered.start(&ret, rf);
}

static void op_end(struct fake_rf *rf)
{
    if (registered.end) registered.end(rf, NULL);
}

/* The call that issues work: the launch callback's path, or (records mode) its API record. */
static void issue(uint32_t corr, uint32_t cbid)
{
    if (!by_records) {
        ip_replay_issue(corr, 1, cbid, ip_clock_now(), cbid != 0);
        return;
    }
    CUpti_ActivityAPI *api = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_RUNTIME);
    api->cbid = cbid ? cbid : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api->start = ip_clock_now();
    api->end = api->start + 100;
    api->processId = (uint32_t)getpid();
    api->threadId = (uint32_t)syscall(SYS_gettid);
    api->correlationId = corr;
}

static void kernel(uint32_t corr, const char *name)
{
    issue(corr, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    CUpti_ActivityKernel10 *k = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = base + 10000 * corr;
    k->end = k->start + 1000 * corr;
    k->name = name;
    k->correlationId = corr;
    k->streamId = 7;
    k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
}

static void copy(uint32_t corr)
{
    issue(corr, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
    CUpti_ActivityMemcpy6 *m = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m->bytes = 4096;
    m->start = base + 10000 * corr;
    m->end = m->start + 500;
    m->streamId = 7;
    m->correlationId = corr;
}

static void set(uint32_t corr)
{
    issue(corr, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
    CUpti_ActivityMemset4 *m = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_MEMSET);
    m->bytes = 4096;
    m->start = base + 10000 * corr;
    m->end = m->start + 300;
    m->streamId = 7;
    m->correlationId = corr;
}

static void scenario_nested(void)
{
    struct fake_rf conv = {"aten::conv2d"}, cudnn = {"aten::cudnn_convolution"};
    op_begin(&conv);
    kernel(1, "outer");
    op_begin(&cudnn);
    kernel(2, "inner");
    copy(3);
    set(4);
    op_end(&cudnn);
    kernel(5, "after");
    op_end(&conv);
    kernel(6, "none");
}

void fakecudnn_on_forward(void (*fn)(void));

static uint32_t cudnn_corr;

static void launch_in_cudnn(void)
{
    kernel(++cudnn_corr, "in_cudnn");
}

static void scenario_cudnn(void)
{
    struct fake_rf conv = {"aten::cudnn_convolution"};
    cudnnHandle_t h = NULL;
    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t c;
    cudnnCreate(&h);
    cudnnCreateTensorDescriptor(&x);
    cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 8, 16, 16);
    cudnnCreateFilterDescriptor(&w);
    cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, 8, 3, 3);
    cudnnCreateConvolutionDescriptor(&c);
    cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    fakecudnn_on_forward(launch_in_cudnn);
    float a = 1, b = 0;
    op_begin(&conv);
    cudnnConvolutionForward(h, &a, x, NULL, w, NULL, c, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0,
                            &b, x, NULL);
    op_end(&conv);
    cudnnConvolutionForward(h, &a, x, NULL, w, NULL, c, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0,
                            &b, x, NULL);
    fakecudnn_on_forward(NULL);
    kernel(++cudnn_corr, "none");
}

static void scenario_deep(void)
{
    static struct fake_rf rf[70];
    static char names[70][24];
    for (int i = 0; i < 70; i++) {
        snprintf(names[i], sizeof names[i], "aten::level%d", i + 1);
        rf[i].name = names[i];
        op_begin(&rf[i]);
    }
    kernel(1, "deepest");
    for (int i = 69; i >= 0; i--) op_end(&rf[i]);
    kernel(2, "none");
}

static void kernel_at(uint32_t corr, const char *name, int64_t start, int64_t dur)
{
    issue(corr, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    CUpti_ActivityKernel10 *k = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = (uint64_t)((int64_t)base + start);
    k->end = k->start + (uint64_t)dur;
    k->name = name;
    k->correlationId = corr;
    k->streamId = 7;
    k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
}

static void scenario_long(void)
{
    struct fake_rf mm = {"aten::mm"}, add = {"aten::add"};
    uint32_t corr = 1;
    for (int i = 0; i < 600; i++) {
        if (i == 300) ip_phase_set(IP_NO_GRAD, 0, 0);
        struct fake_rf *rf = i % 3 ? &mm : &add;
        op_begin(rf);
        /* 66.6 ms apart, 1.5 ms long, starting 0.3 ms before a 1 ms edge */
        kernel_at(corr++, i % 3 ? "gemm" : "add", (int64_t)i * 66600000 + 700000, 1500000);
        op_end(rf);
    }
    op_begin(&mm);
    kernel_at(corr++, "early", -500000, 1000000);
    kernel_at(corr++, "long", 20000000000, 3000000000);
    op_end(&mm);
    kernel_at(corr++, "none", 39000000000, 2000000);
    /* A broken record 2^62 ns (146 years) after t0: stored, not folded (no endless widening). */
    kernel_at(corr++, "broken", (int64_t)1 << 62, 1000);
}

static void scenario_names(void)
{
    static struct fake_rf rf[2100];
    static char names[2100][24];
    for (uint32_t i = 0; i < 2100; i++) {
        snprintf(names[i], sizeof names[i], "aten::op%u", i + 1);
        rf[i].name = names[i];
        op_begin(&rf[i]);
        kernel(i + 1, names[i]);
        op_end(&rf[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ops_fixture SCENARIO OUTPUT.db\n");
        return 2;
    }
    struct ip_start_opts opts = {argv[2], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0) return 1;
    base = ip_t0();
    by_records = ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ATTRIBUTION) == 1;
    ip_torch_ops_arm();
    ip_phase_set(IP_INFERENCE_MODE, 0, 0);
    if (!ip_replay_buffer(&buf)) return 1;
    int rc = 0;
    if (!strcmp(argv[1], "nested"))
        scenario_nested();
    else if (!strcmp(argv[1], "cudnn"))
        scenario_cudnn();
    else if (!strcmp(argv[1], "names"))
        scenario_names();
    else if (!strcmp(argv[1], "deep"))
        scenario_deep();
    else if (!strcmp(argv[1], "long"))
        scenario_long();
    else
        rc = 2;
    ip_replay_complete(&buf, 0);
    ip_lifecycle_finish("exit", 0);
    return rc;
}
