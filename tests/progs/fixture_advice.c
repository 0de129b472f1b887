/*
 * fixture_advice.c: databases built to make each advice rule fire, and one built to keep them
 * all quiet, through the real pipeline: phase, NVTX, tensor-memory and cuDNN events go into the
 * rings as their collectors record them, CUDA records through replayed CUPTI buffers, the writer
 * and the schema as in any run. Every time is synthetic (ns after t0), phases included, so the
 * report is the same on every run. Usage: fixture_advice SCENARIO OUTPUT.db
 *
 *   healthy   weights copied from pageable memory (before any iteration), training steps
 *             (backward kernels), then fp16 inference: cuDNN searches once, pinned copies, one
 *             layout conversion, one small pageable copy, 4 cudaMemcpy calls (each just under a
 *             threshold): no rule fires
 *   grad      the same iterations in grad and in inference_mode: grad_mode_in_inference
 *   autocast  fp32 GEMM and convolution under bf16 autocast, and under CPU-only fp16 autocast
 *   layout    NCHW/NHWC conversions around convolutions: layout_conversions
 *   search    cuDNN algorithm search for new shapes after warm-up: cudnn_search_repeats
 *   nobench   cuDNN convolutions chosen by heuristics, no search: cudnn_benchmark_off
 *   eval      batch-norm training and dropout in inference_mode: train_mode_in_inference
 *   launch    200 kernels of 3 us, 20 us apart (no iterations: the phase's wall time counts);
 *             on a second thread, iterations of 100 kernels of 3 us 10 us apart: launch_bound
 *             twice
 *   pageable  input copies from pageable memory: pageable_copies
 *   sync      12 synchronous copy calls: synchronous_copies
 *   sync-default  the same at the default settings: the copies' calls seen by the issue callback
 *             only, no CUDA API records (no host time)
 *   dropped   CUPTI records dropped and a buffer request refused: records_dropped
 *   compiled  a torch.compile'd model under bf16 autocast: Triton GEMMs (type unknown) and a
 *             pointwise kernel named after a convolution, beside one cuBLAS bf16 GEMM: no rule
 *             fires, and the summary says what share of the time its answer covers
 *   tail-malloc, tail-sync, tail-copy, tail-search, tail-none
 *             30 iterations of 100 us (a kernel of 60 us each), of which 8, 16 and 24 take
 *             250 us: inside them a cudaMalloc, a cudaDeviceSynchronize, a cudaMemcpy or a cuDNN
 *             algorithm search of 150 us (a new shape each), or nothing recorded (the host
 *             just took longer): each GPU-side cause of a tail, and one where none applies;
 *             tail-clock: the slow iterations' kernel takes 210 us instead of 60 (a test adds
 *             the energy readings of a clock that dropped then)
 *   sweep     one model at batch 8 and 32 (two iteration marks), under no_grad and then
 *             inference_mode 10% faster, and device memory segments: the batch sweep,
 *             inference_mode against no_grad, and memory segments (golden files only)
 */
#include "collectors/registry.h"
#include "collectors/cudnn_internal.h"
#include "collectors/nvtx_internal.h"
#include "collectors/replay.h"
#include "collectors/torch_internal.h"
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

static uint64_t base;
static struct ip_replay_buf buf;
static uint32_t corr = 1;
/* Copies come with CUDA API records (INFPROF_CUDA_API=1); 0: the issue callback's event only,
 * as at the default settings. */
static int with_api = 1;
static uint64_t nvtx_id = 1;

#define US 1000

static const char SGEMM[] = "ampere_sgemm_128x64_nn";
static const char HGEMM[] = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn";
static const char BGEMM[] = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn";
static const char CONV16[] = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc";
static const char CONV32[] = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw";
static const char TRITON_MM[] = "triton_tem_fused_addmm_relu_0";
static const char TRITON_POI[] = "triton_poi_fused_convolution_1";
static const char TO_NHWC[] = "void nchwToNhwcKernel<float, float, float, true, false>(int, int)";
static const char TO_NCHW[] = "void nhwcToNchwKernel<float, float, float, true, false>(int, int)";

/* The calling thread enters phase (grad, autocast) at `ts`, as ip_phase_set records it but at a
 * synthetic time. grad < 0: it leaves libtorch's phases. */
static void iteration_close(void);

static void phase_at(int grad, uint8_t cuda_ac, uint8_t cpu_ac, uint64_t ts)
{
    iteration_close();
    uint8_t id = grad < 0 ? 0 : ip_phase_id((uint8_t)grad, cuda_ac, cpu_ac);
    ip_self.grad = grad < 0 ? 0 : (uint8_t)grad;
    ip_self.cuda_ac = cuda_ac;
    ip_self.cpu_ac = cpu_ac;
    ip_self.phase = id;
    struct ip_ring *r;
    struct ip_ev_phase *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_PHASE), sizeof *e, id};
    e->ts = base + ts;
    e->cuda_autocast = cuda_ac;
    e->cpu_autocast = cpu_ac;
    ip_ring_commit(r, sizeof *e);
}

static void nvtx_ev(uint8_t kind, uint64_t id, uint64_t ts, const char *text)
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
    e->kind = kind;
    e->phase = ip_self.phase;
    if (len) memcpy(e->text, text, len);
    ip_ring_commit(r, size);
}

/* An NVTX range "iteration" (INFPROF_ITERATION_RANGE's default) from start to end, open on the
 * thread's NVTX stack (as the collector's push keeps it) until the next iteration or phase
 * change, so the kernels launched meanwhile belong to it. */
static __thread uint64_t open_id, open_end;

static void iteration_close(void)
{
    if (!open_id) return;
    nvtx_ev(IP_NVTX_POP, open_id, open_end, NULL);
    ip_self.nvtx_depth = 0;
    open_id = 0;
}

static void iteration_named(uint64_t start, uint64_t end, const char *name)
{
    iteration_close();
    open_id = nvtx_id++;
    open_end = end;
    nvtx_ev(IP_NVTX_PUSH, open_id, start, name);
    ip_self.nvtx_stack[0] = open_id;
    ip_self.nvtx_domain[0] = 0;
    ip_self.nvtx_depth = 1;
}

static void iteration(uint64_t start, uint64_t end)
{
    iteration_close();
    open_id = nvtx_id++;
    open_end = end;
    nvtx_ev(IP_NVTX_PUSH, open_id, start, "iteration");
    ip_self.nvtx_stack[0] = open_id;
    ip_self.nvtx_domain[0] = 0;
    ip_self.nvtx_depth = 1;
}

/* An allocator report on cuda:0, as the libtorch collector records it. */
static void tensor(uint64_t ts, int64_t bytes, int64_t allocated, int64_t reserved)
{
    struct ip_ring *r;
    struct ip_ev_torch_memory *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    memset(e, 0, sizeof *e);
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_MEMORY), sizeof *e,
                          ip_self.phase};
    e->ts = base + ts;
    e->ptr = 0x7f0000000000ull + (uint64_t)allocated;
    e->bytes = bytes;
    e->allocated = allocated;
    e->reserved = reserved;
    e->device_type = 1;
    e->device_index = 0;
    ip_ring_commit(r, sizeof *e);
}

static void api(uint32_t cbid, uint32_t c, uint64_t start, uint64_t dur)
{
    CUpti_ActivityAPI *a = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_RUNTIME);
    a->cbid = cbid;
    a->start = base + start;
    a->end = base + start + dur;
    a->processId = (uint32_t)getpid();
    a->threadId = (uint32_t)syscall(SYS_gettid);
    a->correlationId = c;
}

/* A kernel launched 2 us before it starts (launch call of 1 us). */
static void kernel(const char *name, uint64_t start, uint64_t dur)
{
    uint32_t c = corr++;
    ip_replay_launch(c);
    api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, c, start - 2 * US, US);
    CUpti_ActivityKernel10 *k = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = base + start;
    k->end = base + start + dur;
    k->name = name;
    k->correlationId = c;
    k->streamId = 7;
    k->gridX = 80, k->gridY = 1, k->gridZ = 1;
    k->blockX = 256, k->blockY = 1, k->blockZ = 1;
    k->registersPerThread = 64;
}

/* A copy issued by `cbid` 2 us before it starts; the host side in `host_kind`. */
static void copy(uint32_t cbid, int kind, int host_kind, uint64_t bytes, uint64_t start,
                 uint64_t dur)
{
    uint32_t c = corr++;
    if (with_api) {
        ip_replay_launch(c);
        api(cbid, c, start - 2 * US, dur + 3 * US);
    } else {
        ip_replay_issue(c, 1, cbid, base + start - 2 * US, 0);
    }
    CUpti_ActivityMemcpy6 *m = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = (uint8_t)kind;
    m->srcKind =
        (uint8_t)(kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? host_kind
                                                          : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    m->dstKind =
        (uint8_t)(kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? host_kind
                                                          : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    m->bytes = bytes;
    m->start = base + start;
    m->end = base + start + dur;
    m->streamId = 7;
    m->correlationId = c;
}

static void copy_async(int kind, int host_kind, uint64_t bytes, uint64_t start, uint64_t dur)
{
    copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, kind, host_kind, bytes, start, dur);
}

/* A cuDNN call as the collector records it, in the thread's phase. */
static void cudnn(enum ip_cudnn_fn fn, int op, uint32_t plan, uint64_t start, uint64_t dur,
                  uint64_t shape)
{
    struct ip_ev_cudnn_call e;
    memset(&e, 0, sizeof e);
    e.h.aux = fn;
    e.start = base + start;
    e.end = base + start + dur;
    e.handle = 0x4a4d;
    e.stream = 7;
    e.flags = IP_CUDNN_CALL_HAS_STREAM;
    e.shape = shape;
    e.plan = plan;
    e.op_kind = (uint8_t)op;
    e.dtype = (uint8_t)(CUDNN_DATA_HALF + 1);
    e.phase = ip_self.phase;
    ip_cudnn_emit_call(&e);
}

static void conv_plan(uint32_t id, uint64_t shape)
{
    struct ip_cudnn_class c = {IP_CUDNN_OP_CONV_FWD, CUDNN_DATA_HALF + 1, 2, IP_CUDNN_SRC_BUILD,
                               1u << IP_CUDNN_NODE_CONV_FWD | 1u << IP_CUDNN_NODE_POINTWISE};
    ip_cudnn_emit_plan(id, ip_cudnn_class_pack(c), shape, base);
}

/* ---- scenarios: times in us after t0 ------------------------------------------------------ */

static void scenario_healthy(void)
{
    /* Weights loaded in grad mode (no kernels), then a training step with its backward. */
    phase_at(IP_GRAD, 0, 0, 0);
    tensor(10 * US, 4 << 20, 4 << 20, 8 << 20);
    copy_async(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4 << 20,
               20 * US, 100 * US);
    for (uint64_t i = 0; i < 2; i++) {
        uint64_t t = 200 * US + i * 100 * US;
        kernel(SGEMM, t + 5 * US, 40 * US);
        kernel("void at::native::cunn_SoftMaxBackward<4, float, float>(float*, float*)",
               t + 50 * US, 10 * US);
        kernel(SGEMM, t + 65 * US, 20 * US);
    }
    /* fp16 inference: one search at warm-up, then the searched plan; activations freed. */
    phase_at(IP_INFERENCE_MODE, IP_DTYPE_HALF, 0, 400 * US);
    conv_plan(1, 111);
    cudnn(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, 0, 405 * US, 20 * US, 111);
    kernel(TO_NHWC, 430 * US, 1 * US); /* the weights, converted once */
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t t = 500 * US + i * 120 * US;
        iteration(t, t + 110 * US);
        tensor(t + 1 * US, 1 << 20, (4 << 20) + (1 << 20), 8 << 20);
        if (!i) /* a small input from pageable memory, once */
            copy_async(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 256,
                       t + 1 * US, 1 * US);
        copy_async(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 1 << 20,
                   t + 3 * US, 5 * US);
        cudnn(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, 1, t + 8 * US, 2 * US, 111);
        kernel(CONV16, t + 10 * US, 40 * US);
        cudnn(IP_CUDNN_FN_BN_FWD_INFERENCE, IP_CUDNN_OP_BN_INFERENCE, 0, t + 50 * US, 1 * US, 112);
        kernel("void cudnn::bn_fw_inf_1C11_kernel_NCHW<__half, float, true, 1>()", t + 52 * US,
               4 * US);
        kernel(HGEMM, t + 58 * US, 40 * US);
        copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
             CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4096, t + 100 * US, 2 * US);
        tensor(t + 105 * US, -(1 << 20), 4 << 20, 8 << 20);
    }
    phase_at(-1, 0, 0, 1000 * US);
}

/* Iterations of the same model with grad on, activations kept for a backward that never
 * comes, and in inference_mode. */
static void scenario_grad(void)
{
    phase_at(IP_GRAD, 0, 0, 0);
    tensor(5 * US, 4 << 20, 4 << 20, 16 << 20);
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t t = 100 * US + i * 100 * US;
        iteration(t, t + 60 * US);
        for (int64_t layer = 0; layer < 3; layer++) { /* kept for the backward */
            tensor(t + (1 + 10 * (uint64_t)layer) * US, 2 << 20, (6 + 2 * layer) << 20, 16 << 20);
            kernel(SGEMM, t + (2 + 10 * (uint64_t)layer) * US, 8 * US);
        }
        tensor(t + 55 * US, -(6 << 20), 4 << 20, 16 << 20);
    }
    phase_at(IP_INFERENCE_MODE, 0, 0, 600 * US);
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t t = 700 * US + i * 100 * US;
        iteration(t, t + 40 * US);
        for (uint64_t layer = 0; layer < 3; layer++) { /* freed once the next layer ran */
            tensor(t + (1 + 10 * layer) * US, 2 << 20, (layer ? 8 : 6) << 20, 16 << 20);
            kernel(SGEMM, t + (2 + 10 * layer) * US, 8 * US);
            if (layer) tensor(t + (9 + 10 * layer) * US, -(2 << 20), 6 << 20, 16 << 20);
        }
        tensor(t + 38 * US, -(2 << 20), 4 << 20, 16 << 20);
    }
    phase_at(-1, 0, 0, 1200 * US);
}

static void *cpu_autocast_thread(void *arg)
{
    (void)arg;
    phase_at(IP_NO_GRAD, 0, IP_DTYPE_HALF, 300 * US);
    kernel(CONV32, 310 * US, 30 * US);
    kernel(HGEMM, 345 * US, 10 * US);
    phase_at(-1, 0, 0, 400 * US);
    return NULL;
}

static void scenario_autocast(void)
{
    phase_at(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0, 0);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t t = 10 * US + i * 60 * US;
        kernel(SGEMM, t, 40 * US);
        kernel(BGEMM, t + 45 * US, 10 * US);
    }
    phase_at(-1, 0, 0, 200 * US);
    pthread_t t;
    pthread_create(&t, NULL, cpu_autocast_thread, NULL);
    pthread_join(t, NULL);
}

static void scenario_compiled(void)
{
    phase_at(IP_INFERENCE_MODE, IP_DTYPE_BFLOAT16, 0, 0);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t t = 10 * US + i * 60 * US;
        kernel(TRITON_MM, t, 30 * US);
        kernel(TRITON_POI, t + 32 * US, 5 * US);
        kernel(BGEMM, t + 40 * US, 10 * US);
    }
    phase_at(-1, 0, 0, 200 * US);
}

static void scenario_layout(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t t = 10 * US + i * 60 * US;
        kernel(TO_NHWC, t, 4 * US);
        kernel(CONV32, t + 5 * US, 40 * US);
        kernel(TO_NCHW, t + 46 * US, 4 * US);
    }
    phase_at(-1, 0, 0, 200 * US);
}

static void scenario_search(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    conv_plan(1, 111);
    conv_plan(2, 222);
    cudnn(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, 0, 5 * US, 20 * US, 111);
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t t = 100 * US + i * 100 * US, shape = i < 2 ? 111 : 222;
        iteration(t, t + 90 * US);
        if (i == 2) /* a new shape */
            cudnn(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, 0, t + 1 * US, 30 * US,
                  222);
        if (i == 3) /* the first shape again, searched again */
            cudnn(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, 0, t + 1 * US, 25 * US,
                  111);
        cudnn(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, shape == 111 ? 1 : 2, t + 40 * US,
              2 * US, shape);
        kernel(CONV16, t + 45 * US, 40 * US);
    }
    phase_at(-1, 0, 0, 500 * US);
}

static void scenario_nobench(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    cudnn(IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7, IP_CUDNN_OP_CONV_FWD, 0, 5 * US, 3 * US, 111);
    for (uint64_t i = 0; i < 6; i++) {
        uint64_t t = 20 * US + i * 60 * US;
        iteration(t, t + 55 * US);
        cudnn(IP_CUDNN_FN_CONV_FWD, IP_CUDNN_OP_CONV_FWD, 0, t + 1 * US, 2 * US, 111);
        kernel(CONV16, t + 5 * US, 45 * US);
    }
    phase_at(-1, 0, 0, 400 * US);
}

static void scenario_eval(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    for (uint64_t i = 0; i < 2; i++) {
        uint64_t t = 10 * US + i * 100 * US;
        iteration(t, t + 90 * US);
        kernel(CONV32, t + 5 * US, 40 * US);
        cudnn(IP_CUDNN_FN_BN_FWD_TRAINING, IP_CUDNN_OP_BN_TRAINING, 0, t + 46 * US, 2 * US, 333);
        kernel("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>()", t + 50 * US,
               6 * US);
        kernel("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float,"
               " unsigned int, 1, 4, bool>(float*, float*)",
               t + 60 * US, 5 * US);
        kernel(SGEMM, t + 66 * US, 20 * US);
    }
    phase_at(-1, 0, 0, 300 * US);
}

static void *launch_iterations(void *arg)
{
    (void)arg;
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    for (uint64_t i = 0; i < 2; i++) {
        uint64_t t = 5000 * US + i * 2000 * US;
        iteration(t, t + 1000 * US);
        for (uint64_t k = 0; k < 50; k++)
            kernel("void at::native::vectorized_elementwise_kernel<4, "
                   "at::native::MulFunctor<float>>()",
                   t + 10 * US + k * 10 * US, 3 * US);
    }
    phase_at(-1, 0, 0, 9000 * US);
    return NULL;
}

static void scenario_launch(void)
{
    phase_at(IP_NO_GRAD, 0, 0, 0);
    for (uint64_t i = 0; i < 200; i++)
        kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()",
               20 * US + i * 20 * US, 3 * US);
    phase_at(-1, 0, 0, 4020 * US);
    pthread_t t;
    pthread_create(&t, NULL, launch_iterations, NULL);
    pthread_join(t, NULL);
}

static void scenario_pageable(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    for (uint64_t i = 0; i < 2; i++) {
        uint64_t t = 10 * US + i * 100 * US;
        iteration(t, t + 90 * US);
        copy_async(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 3 << 20,
                   t + 5 * US, 10 * US);
        kernel(SGEMM, t + 20 * US, 20 * US);
        copy_async(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4096,
                   t + 45 * US, 2 * US);
    }
    phase_at(-1, 0, 0, 300 * US);
}

static void scenario_sync(void)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 256, 5 * US, 1 * US);
    for (uint64_t i = 0; i < 11; i++) {
        uint64_t t = 20 * US + i * 50 * US;
        kernel(SGEMM, t, 30 * US);
        copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
             CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4096, t + 35 * US, 2 * US);
    }
    phase_at(-1, 0, 0, 600 * US);
}

static void scenario_sync_default(void)
{
    with_api = 0;
    scenario_sync();
}

/* Slow iterations with one cause each (the tail-* scenarios). */
static void scenario_tail(const char *what)
{
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    conv_plan(1, 400);
    for (uint64_t i = 0; i < 30; i++) {
        uint64_t t = 100 * US + i * 300 * US;
        int slow = i == 8 || i == 16 || i == 24;
        iteration(t, t + (slow ? 250 : 100) * US);
        if (slow && !strcmp(what, "malloc"))
            api(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, corr++, t + 5 * US, 150 * US);
        else if (slow && !strcmp(what, "sync"))
            api(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, corr++, t + 5 * US, 150 * US);
        else if (slow && !strcmp(what, "copy"))
            copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                 CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 1 << 20, t + 7 * US, 145 * US);
        else if (slow && !strcmp(what, "search"))
            cudnn(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, 0, t + 5 * US, 150 * US,
                  400 + i);
        if (!strcmp(what, "clock")) /* the same kernel, 3.5x as long: the clock's doing */
            kernel(SGEMM, t + 15 * US, (slow ? 210 : 60) * US);
        else
            kernel(SGEMM, t + (slow ? 165 : 15) * US, 60 * US);
    }
    phase_at(-1, 0, 0, 9200 * US);
}

/* A device memory segment (CUPTI MEMORY2): op 1 allocation, 2 release. */
static void segment(uint64_t ts, int op, uint64_t address, uint64_t bytes)
{
    CUpti_ActivityMemory4 *m = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_MEMORY2);
    m->timestamp = base + ts;
    m->memoryOperationType = (CUpti_ActivityMemoryOperationType)op;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->address = address;
    m->bytes = bytes;
    m->deviceId = 0;
    m->correlationId = corr++;
}

/* One model at batch 8 and at batch 32 (marks "iteration batch=8", "iteration batch=32"), 12
 * iterations each, first under no_grad, then under inference_mode 10% faster; the caching
 * allocator reserves two segments of 20 MiB and gives one back: a batch sweep, inference_mode
 * against no_grad per series, and memory segments. */
static void sweep_phase(int grad, uint64_t at, double scale)
{
    phase_at(grad, 0, 0, at);
    static const struct {
        const char *mark;
        uint64_t kernel_us;
    } b[] = {{"iteration batch=8", 60}, {"iteration batch=32", 200}};
    uint64_t t = at + 50 * US;
    for (size_t k = 0; k < 2; k++)
        for (int i = 0; i < 12; i++) {
            uint64_t dur = (uint64_t)((double)(b[k].kernel_us + 20) * scale) * US;
            iteration_named(t, t + dur, b[k].mark);
            tensor(t + 1 * US, 1 << 20, (4 + (int64_t)k) << 20, 40 << 20);
            kernel(SGEMM, t + 5 * US, (uint64_t)((double)b[k].kernel_us * scale) * US);
            tensor(t + dur - 2 * US, -(1 << 20), 4 << 20, 40 << 20);
            t += dur + 30 * US;
        }
}

static void scenario_sweep(void)
{
    segment(10 * US, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x7f0000000000ull, 20 << 20);
    segment(20 * US, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0x7f0001400000ull, 20 << 20);
    sweep_phase(IP_NO_GRAD, 0, 1.0);
    sweep_phase(IP_INFERENCE_MODE, 10000 * US, 0.9);
    segment(19000 * US, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0x7f0001400000ull, 20 << 20);
    phase_at(-1, 0, 0, 20000 * US);
}

static void scenario_tail_malloc(void)
{
    scenario_tail("malloc");
}

static void scenario_tail_sync(void)
{
    scenario_tail("sync");
}

static void scenario_tail_copy(void)
{
    scenario_tail("copy");
}

static void scenario_tail_search(void)
{
    scenario_tail("search");
}

static void scenario_tail_none(void)
{
    scenario_tail("none");
}

static void scenario_tail_clock(void)
{
    scenario_tail("clock");
}

/* Two buffers taken from a pool of two: the third request is refused; CUPTI reports 5 records
 * dropped with the first. */
static int scenario_dropped(void)
{
    struct ip_replay_buf spare, none;
    phase_at(IP_INFERENCE_MODE, 0, 0, 0);
    if (!ip_replay_buffer(&spare) || ip_replay_buffer(&none)) return 1;
    kernel(SGEMM, 10 * US, 30 * US);
    phase_at(-1, 0, 0, 100 * US);
    ip_replay_complete(&buf, 5);
    ip_replay_complete(&spare, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fixture_advice SCENARIO OUTPUT.db\n");
        return 2;
    }
    setenv("INFPROF_CUPTI_BUFFERS", "2", 1);
    struct ip_start_opts opts = {argv[2], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0 || !ip_replay_buffer(&buf))
        return 1;
    base = ip_t0();
    static const struct {
        const char *name;
        void (*run)(void);
    } scenarios[] = {
        {"healthy", scenario_healthy},
        {"grad", scenario_grad},
        {"autocast", scenario_autocast},
        {"layout", scenario_layout},
        {"search", scenario_search},
        {"nobench", scenario_nobench},
        {"eval", scenario_eval},
        {"launch", scenario_launch},
        {"pageable", scenario_pageable},
        {"sync", scenario_sync},
        {"sync-default", scenario_sync_default},
        {"compiled", scenario_compiled},
        {"tail-malloc", scenario_tail_malloc},
        {"tail-sync", scenario_tail_sync},
        {"tail-copy", scenario_tail_copy},
        {"tail-search", scenario_tail_search},
        {"tail-none", scenario_tail_none},
        {"tail-clock", scenario_tail_clock},
        {"sweep", scenario_sweep},
    };
    int rc = 2;
    if (!strcmp(argv[1], "dropped")) rc = scenario_dropped();
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
        if (!strcmp(argv[1], scenarios[i].name)) {
            scenarios[i].run();
            ip_replay_complete(&buf, 0);
            rc = 0;
        }
    if (rc == 2) fprintf(stderr, "fixture_advice: unknown scenario '%s'\n", argv[1]);
    ip_lifecycle_finish("exit", 0);
    return rc;
}
