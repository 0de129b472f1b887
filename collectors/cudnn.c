/*
 * cudnn.c: the cuDNN collector, app side: the interposed cuDNN functions.
 *
 * The wrappers are exported in version node libcudnn.so.9 (preload/exports.map), the node the
 * real libcudnn.so.9 defines them in, so references bound to cudnnX@libcudnn.so.9 reach us
 * (docs/cudnn.md). Each forwards to the real function, found with dlvsym/dlsym(RTLD_NEXT)
 * or in the already loaded libcudnn.so.9; we never depend on cuDNN at link time. When the real
 * function cannot be found the wrapper answers CUDNN_STATUS_NOT_INITIALIZED (counted, and said
 * in the collector status) instead of crashing.
 *
 * A recorded call: under the re-entrancy guard we read what the call works on
 * (cudnn_classify.c), give it an id that the launch events of its kernels carry (the tie to
 * its kernels), and with INFPROF_MODE=full open an NVTX range in domain "infprof" (our NVTX
 * capture skips it, a chained tool sees it); the guard is released across the real call, so
 * the launch callback still sees the kernels it launches; then one ring event. Calls that cuDNN
 * makes through an exported name while one of ours runs on the thread pass straight through
 * (counted as nested, not as calls).
 */
#include "cudnn_config.h"
#include "registry.h"
#include "cudnn_internal.h"
#include "cupti_internal.h"
#include "../profiler/attrib.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/emit.h"
#include "../profiler/opname.h"
#include "../profiler/process.h"
#include "../profiler/phase.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <string.h>

#define IP_EXPORT __attribute__((visibility("default")))

static int cudnn_enabled, cudnn_nvtx;
static _Atomic uint64_t next_ext_id = 1;
static __thread uint32_t cudnn_depth __attribute__((tls_model("initial-exec")));

/* ---- NVTX ranges -------------------------------------------------------------------------- */

static _Atomic(nvtxStringHandle_t) nvtx_strings[IP_CUDNN_OP_COUNT + IP_CUDNN_FN_COUNT];
static const char *const op_range_names[IP_CUDNN_OP_COUNT] = {
    "cudnn",
    "cudnn convolution forward",
    "cudnn batch-norm inference",
    "cudnn batch-norm training",
    "cudnn attention",
    "cudnn matmul",
    "cudnn pointwise",
    "cudnn other",
    "cudnn unclassified",
};

/* Called with the guard held: our own NVTX capture skips it, a chained tool gets it. */
static int nvtx_push(int op_kind, enum ip_cudnn_fn fn)
{
    int slot = op_kind ? op_kind : IP_CUDNN_OP_COUNT + (int)fn;
    const char *text = op_kind ? op_range_names[op_kind] : ip_cudnn_fn_names[fn];
    nvtxEventAttributes_t a;
    ip_emit_attr(&a, &nvtx_strings[slot], text);
    nvtxDomainRangePushEx(ip_emit_domain(), &a);
    return 1;
}

/* ---- one call ----------------------------------------------------------------------------- */

struct call {
    struct ip_ev_cudnn_call ev;
    uint8_t track; /* we follow descriptors and handles for this call */
    uint8_t depth; /* we raised cudnn_depth */
    uint8_t rec;   /* the call is recorded */
    uint8_t nvtx;  /* an NVTX range is open */
};

/* Returns 1 when the call is recorded; the guard is then held until call_start. */
static int call_begin(struct call *c, enum ip_cudnn_fn fn, const void *handle)
{
    c->track = c->depth = c->rec = c->nvtx = 0;
    if (!cudnn_enabled || !ip_recording() || ip_self.in_hook) return 0;
    c->track = 1;
    c->depth = 1;
    if (cudnn_depth++) {
        atomic_fetch_add(&ip_cudnn_counters.nested, 1);
        return 0;
    }
    ip_hook_enter();
    c->rec = 1;
    memset(&c->ev, 0, sizeof c->ev);
    c->ev.h.aux = (uint32_t)fn;
    c->ev.handle = (uint64_t)(uintptr_t)handle;
    if (ip_phase_poller) ip_phase_poller(IP_POLL_LAUNCH);
    c->ev.phase = ip_self.phase;
    c->ev.op = ip_self.op_rf ? ip_thread_op() : 0;
    uint64_t stream;
    if (handle && ip_cudnn_handle_stream((cudnnHandle_t)handle, &stream)) {
        c->ev.stream = stream;
        c->ev.flags |= IP_CUDNN_CALL_HAS_STREAM;
    }
    return 1;
}

static void call_class(struct call *c, uint64_t cls)
{
    struct ip_cudnn_class k = ip_cudnn_class_unpack(cls);
    c->ev.op_kind = k.kind;
    c->ev.dtype = k.dtype;
}

/* Guard held: open the range, stamp the call's id, release the guard, start the clock.
 * traced: the call may launch GPU work or take long enough to show in a timeline. */
static void call_start(struct call *c, int traced)
{
    if (!c->rec) return;
    if (traced) {
        ip_phase_emit();
        if (cudnn_nvtx) c->nvtx = (uint8_t)nvtx_push(c->ev.op_kind, (enum ip_cudnn_fn)c->ev.h.aux);
        /* Every launch made inside the call carries this id (the launch callback reads it), which
         * ties the call to its kernels; no CUPTI external correlation, which needs CUPTI's API
         * records and costs two CUPTI calls per cuDNN call. */
        if (ip_cupti_active()) {
            c->ev.ext_id = atomic_fetch_add(&next_ext_id, 1);
            ip_self.cudnn_call = c->ev.ext_id;
            ip_attrib_changed();
        }
    }
    ip_hook_leave();
    c->ev.start = ip_clock_now();
}

/* Right after the real call: stop the clock and close what call_start opened. */
static void call_stop(struct call *c, cudnnStatus_t st)
{
    if (!c->rec) return;
    c->ev.end = ip_clock_now();
    c->ev.status = (int32_t)st;
    int guarded = ip_hook_enter();
    if (ip_self.cudnn_call) {
        ip_self.cudnn_call = 0;
        if (guarded) ip_attrib_changed();
    }
    if (c->nvtx) nvtxDomainRangePop(ip_emit_domain());
    if (guarded) ip_hook_leave();
}

void ip_cudnn_emit_call(const struct ip_ev_cudnn_call *call)
{
    struct ip_ring *r;
    struct ip_ev_cudnn_call *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    *e = *call;
    e->h.type = IP_EV_TYPE(IP_COLLECTOR_CUDNN, IP_EV_CUDNN_CALL);
    e->h.size = sizeof *e;
    ip_ring_commit(r, sizeof *e);
}

static cudnnStatus_t call_end(struct call *c, cudnnStatus_t st)
{
    if (c->rec) {
        int guarded = ip_hook_enter();
        ip_cudnn_emit_call(&c->ev);
        if (guarded) ip_hook_leave();
    }
    if (c->depth) cudnn_depth--;
    return st;
}

static cudnnStatus_t call_done(struct call *c, cudnnStatus_t st)
{
    call_stop(c, st);
    return call_end(c, st);
}

/* Our own bookkeeping on behalf of a call (tracking), under the guard. */
static int track_enter(const struct call *c)
{
    return c->track && ip_hook_enter();
}

#define REAL(fn, name)   __typeof__(&name) real = (__typeof__(&name))ip_cudnn_real(fn)
#define FORWARD(fn, ...) (real ? real(__VA_ARGS__) : ip_cudnn_missing(fn))

/* ---- handles ------------------------------------------------------------------------------ */

IP_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    REAL(IP_CUDNN_FN_CREATE, cudnnCreate);
    struct call c;
    call_begin(&c, IP_CUDNN_FN_CREATE, NULL);
    call_start(&c, 0);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_CREATE, handle);
    call_stop(&c, st);
    if (st == CUDNN_STATUS_SUCCESS && handle && track_enter(&c)) {
        ip_cudnn_handle_stream_set(*handle, 0); /* a new handle works on the default stream */
        c.ev.handle = (uint64_t)(uintptr_t)*handle;
        ip_hook_leave();
    }
    return call_end(&c, st);
}

IP_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    REAL(IP_CUDNN_FN_DESTROY, cudnnDestroy);
    struct call c;
    call_begin(&c, IP_CUDNN_FN_DESTROY, handle);
    call_start(&c, 0);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_DESTROY, handle);
    call_stop(&c, st);
    if (st == CUDNN_STATUS_SUCCESS && track_enter(&c)) {
        ip_cudnn_handle_forget(handle);
        ip_hook_leave();
    }
    return call_end(&c, st);
}

IP_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    REAL(IP_CUDNN_FN_SET_STREAM, cudnnSetStream);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_SET_STREAM, handle)) {
        c.ev.stream = (uint64_t)(uintptr_t)stream;
        c.ev.flags |= IP_CUDNN_CALL_HAS_STREAM;
    }
    call_start(&c, 0);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_SET_STREAM, handle, stream);
    call_stop(&c, st);
    if (st == CUDNN_STATUS_SUCCESS && track_enter(&c)) {
        ip_cudnn_handle_stream_set(handle, (uint64_t)(uintptr_t)stream);
        ip_hook_leave();
    }
    return call_end(&c, st);
}

/* ---- backend API -------------------------------------------------------------------------- */

IP_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    REAL(IP_CUDNN_FN_BACKEND_FINALIZE, cudnnBackendFinalize);
    struct call c;
    int is_plan = 0;
    if (call_begin(&c, IP_CUDNN_FN_BACKEND_FINALIZE, NULL)) {
        uint32_t plan;
        call_class(&c, ip_cudnn_desc_class(descriptor, &plan, &c.ev.shape));
        is_plan = ip_cudnn_desc_is_plan(descriptor);
    }
    call_start(&c, is_plan);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_BACKEND_FINALIZE, descriptor);
    call_stop(&c, st);
    /* A plan is classified once, now that it can be read. */
    if (st == CUDNN_STATUS_SUCCESS && track_enter(&c)) {
        if (c.rec ? is_plan : ip_cudnn_desc_is_plan(descriptor)) {
            uint32_t plan;
            uint64_t shape;
            uint64_t cls = ip_cudnn_plan_classify(descriptor, &plan, &shape);
            if (c.rec) call_class(&c, cls), c.ev.plan = plan, c.ev.shape = shape;
        }
        ip_hook_leave();
    }
    return call_end(&c, st);
}

IP_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                            cudnnBackendDescriptor_t executionPlan,
                                            cudnnBackendDescriptor_t variantPack)
{
    REAL(IP_CUDNN_FN_BACKEND_EXECUTE, cudnnBackendExecute);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_BACKEND_EXECUTE, handle))
        call_class(&c, ip_cudnn_plan_lookup(executionPlan, &c.ev.plan, &c.ev.shape));
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_BACKEND_EXECUTE, handle, executionPlan, variantPack));
}

IP_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                                     cudnnBackendDescriptor_t *descriptor)
{
    REAL(IP_CUDNN_FN_BACKEND_CREATE_DESC, cudnnBackendCreateDescriptor);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_BACKEND_CREATE_DESC, descriptorType, descriptor);
    if (st == CUDNN_STATUS_SUCCESS && descriptor && cudnn_enabled && ip_recording() &&
        ip_hook_enter()) {
        ip_cudnn_track_create(descriptorType, *descriptor);
        ip_hook_leave();
    }
    return st;
}

IP_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    REAL(IP_CUDNN_FN_BACKEND_DESTROY_DESC, cudnnBackendDestroyDescriptor);
    /* Forgotten before it is freed: once freed, another thread may be given the same address. */
    if (cudnn_enabled && ip_hook_enter()) {
        ip_cudnn_track_destroy(descriptor);
        ip_hook_leave();
    }
    return FORWARD(IP_CUDNN_FN_BACKEND_DESTROY_DESC, descriptor);
}

IP_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                 cudnnBackendAttributeName_t attributeName,
                                                 cudnnBackendAttributeType_t attributeType,
                                                 int64_t elementCount, const void *arrayOfElements)
{
    REAL(IP_CUDNN_FN_BACKEND_SET_ATTR, cudnnBackendSetAttribute);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_BACKEND_SET_ATTR, descriptor, attributeName,
                               attributeType, elementCount, arrayOfElements);
    if (st == CUDNN_STATUS_SUCCESS && attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR &&
        cudnn_enabled && ip_recording() && ip_hook_enter()) {
        ip_cudnn_track_set(descriptor, attributeName, elementCount, arrayOfElements);
        ip_hook_leave();
    }
    return st;
}

IP_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                 cudnnBackendAttributeName_t attributeName,
                                                 cudnnBackendAttributeType_t attributeType,
                                                 int64_t requestedElementCount,
                                                 int64_t *elementCount, void *arrayOfElements)
{
    REAL(IP_CUDNN_FN_BACKEND_GET_ATTR, cudnnBackendGetAttribute);
    cudnnStatus_t st = FORWARD(IP_CUDNN_FN_BACKEND_GET_ATTR, descriptor, attributeName,
                               attributeType, requestedElementCount, elementCount, arrayOfElements);
    if (st == CUDNN_STATUS_SUCCESS && attributeName == CUDNN_ATTR_ENGINEHEUR_RESULTS &&
        elementCount && cudnn_enabled && ip_recording() && ip_hook_enter()) {
        int64_t n = *elementCount < requestedElementCount ? *elementCount : requestedElementCount;
        ip_cudnn_track_get(descriptor, attributeName, n, arrayOfElements);
        ip_hook_leave();
    }
    return st;
}

/* ---- legacy convolution and batch norm ----------------------------------------------------- */

static void legacy_conv(struct call *c, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                        cudnnConvolutionDescriptor_t conv)
{
    c->ev.op_kind = IP_CUDNN_OP_CONV_FWD;
    c->ev.shape = ip_cudnn_conv_shape(x, w, conv, &c->ev.dtype);
}

static void legacy_bn(struct call *c, int kind, cudnnTensorDescriptor_t x)
{
    c->ev.op_kind = (uint8_t)kind;
    c->ev.dtype = ip_cudnn_tensor_dtype(x, &c->ev.shape);
}

IP_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                                const cudnnTensorDescriptor_t xDesc, const void *x,
                                                const cudnnFilterDescriptor_t wDesc, const void *w,
                                                const cudnnConvolutionDescriptor_t convDesc,
                                                cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                                size_t workSpaceSizeInBytes, const void *beta,
                                                const cudnnTensorDescriptor_t yDesc, void *y)
{
    REAL(IP_CUDNN_FN_CONV_FWD, cudnnConvolutionForward);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_CONV_FWD, handle)) legacy_conv(&c, xDesc, wDesc, convDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_CONV_FWD, handle, alpha, xDesc, x, wDesc, w, convDesc,
                                 algo, workSpace, workSpaceSizeInBytes, beta, yDesc, y));
}

IP_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes,
    const void *alpha2, const cudnnTensorDescriptor_t zDesc, const void *z,
    const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    REAL(IP_CUDNN_FN_CONV_BIAS_ACT_FWD, cudnnConvolutionBiasActivationForward);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_CONV_BIAS_ACT_FWD, handle))
        legacy_conv(&c, xDesc, wDesc, convDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_CONV_BIAS_ACT_FWD, handle, alpha1, xDesc, x, wDesc, w,
                                 convDesc, algo, workSpace, workSpaceSizeInBytes, alpha2, zDesc, z,
                                 biasDesc, bias, activationDesc, yDesc, y));
}

IP_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    REAL(IP_CUDNN_FN_BN_FWD_INFERENCE, cudnnBatchNormalizationForwardInference);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_BN_FWD_INFERENCE, handle))
        legacy_bn(&c, IP_CUDNN_OP_BN_INFERENCE, xDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_BN_FWD_INFERENCE, handle, mode, alpha, beta, xDesc, x,
                                 yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias, estimatedMean,
                                 estimatedVariance, epsilon));
}

IP_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance)
{
    REAL(IP_CUDNN_FN_BN_FWD_TRAINING, cudnnBatchNormalizationForwardTraining);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_BN_FWD_TRAINING, handle))
        legacy_bn(&c, IP_CUDNN_OP_BN_TRAINING, xDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_BN_FWD_TRAINING, handle, mode, alpha, beta, xDesc, x,
                                 yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias,
                                 exponentialAverageFactor, resultRunningMean, resultRunningVariance,
                                 epsilon, resultSaveMean, resultSaveInvVariance));
}

IP_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workspace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    REAL(IP_CUDNN_FN_BN_FWD_TRAINING_EX, cudnnBatchNormalizationForwardTrainingEx);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_BN_FWD_TRAINING_EX, handle))
        legacy_bn(&c, IP_CUDNN_OP_BN_TRAINING, xDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_BN_FWD_TRAINING_EX, handle, mode, bnOps, alpha, beta,
                                 xDesc, xData, zDesc, zData, yDesc, yData, bnScaleBiasMeanVarDesc,
                                 bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
                                 resultRunningVariance, epsilon, resultSaveMean,
                                 resultSaveInvVariance, activationDesc, workspace,
                                 workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes));
}

/* ---- algorithm search --------------------------------------------------------------------- */

IP_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    REAL(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, cudnnFindConvolutionForwardAlgorithm);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_FIND_CONV_FWD_ALGO, handle))
        legacy_conv(&c, xDesc, wDesc, convDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, handle, xDesc, wDesc, convDesc,
                                 yDesc, requestedAlgoCount, returnedAlgoCount, perfResults));
}

IP_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, void *y, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    REAL(IP_CUDNN_FN_FIND_CONV_FWD_ALGO_EX, cudnnFindConvolutionForwardAlgorithmEx);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_FIND_CONV_FWD_ALGO_EX, handle))
        legacy_conv(&c, xDesc, wDesc, convDesc);
    call_start(&c, 1);
    return call_done(&c, FORWARD(IP_CUDNN_FN_FIND_CONV_FWD_ALGO_EX, handle, xDesc, x, wDesc, w,
                                 convDesc, yDesc, y, requestedAlgoCount, returnedAlgoCount,
                                 perfResults, workSpace, workSpaceSizeInBytes));
}

IP_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    REAL(IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7, cudnnGetConvolutionForwardAlgorithm_v7);
    struct call c;
    if (call_begin(&c, IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7, handle))
        legacy_conv(&c, srcDesc, filterDesc, convDesc);
    call_start(&c, 0); /* a heuristic query: no GPU work */
    return call_done(&c, FORWARD(IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7, handle, srcDesc, filterDesc,
                                 convDesc, destDesc, requestedAlgoCount, returnedAlgoCount,
                                 perfResults));
}

/* ---- the collector ------------------------------------------------------------------------ */

static void cudnn_init(void)
{
    cudnn_enabled = (int)ip_cfg_group_int(&ip_cudnn_cfg, IP_CUDNN_CFG_ON);
    cudnn_nvtx = (int)ip_cfg_group_int(&ip_cudnn_cfg, IP_CUDNN_CFG_NVTX);
    if (cudnn_enabled)
        ip_collector_status(IP_COLLECTOR_CUDNN, "on", "the program made no cuDNN call");
    else
        ip_collector_status(IP_COLLECTOR_CUDNN, "off", "INFPROF_CUDNN=0");
}

static void cudnn_atfork_child(void)
{
    atomic_store(&ip_cudnn_counters.nested, 0);
    atomic_store(&ip_cudnn_counters.table_full, 0);
    atomic_store(&ip_cudnn_counters.unclassified, 0);
    atomic_store(&ip_cudnn_counters.missing, 0);
    atomic_store(&ip_cudnn_counters.missing_first, 0);
    ip_cudnn_classify_atfork_child();
}

extern const char ip_schema_cudnn[]; /* collectors/cudnn.sql, embedded at build time */

const struct ip_collector ip_collector_cudnn = {
    .name = "cudnn",
    .title = "cuDNN",
    .settings = &ip_cudnn_cfg,
    .schema = ip_schema_cudnn,
    .init = cudnn_init,
    .atfork_child = cudnn_atfork_child,
    .prepare = ip_cudnn_ingest_prepare,
    .ingest = ip_cudnn_ingest,
    .finish = ip_cudnn_ingest_finish,
};
