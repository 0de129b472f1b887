/*
 * fake_cudnn.c: a fake libcudnn.so.9 for the cuDNN collector's tests: same soname, same version
 * node (fake_cudnn.map), no GPU. It keeps what it was called with, so a test program can check
 * that arguments and return values pass through the collector untouched:
 *
 *  - handles and legacy descriptors are plain structs; cudnnConvolutionForward sleeps
 *    workSpaceSizeInBytes microseconds (a known lower bound for the recorded duration), writes
 *    42 to *y and fails with CUDNN_STATUS_BAD_PARAM for algo 7;
 *  - the Find functions "benchmark" by calling cudnnConvolutionForward through its exported
 *    name, as a nested call the collector must not count twice;
 *  - backend descriptors keep their attributes; GetAttribute copies descriptors into the ones
 *    the caller created and checks their type, like cuDNN 9.19; like it, it refuses to give an
 *    operation graph's nodes back (CUDNN_STATUS_NOT_SUPPORTED) unless FAKE_CUDNN_OPS_READABLE=1;
 *    heuristics return two engine configs of the graph.
 *
 * Node FAKECUDNN_1 holds what only the tests call: fakecudnn_calls, fakecudnn_last,
 * fakecudnn_make_plan (a plan built without going through any exported name),
 * fakecudnn_on_forward (a function each convolution forward calls: the work it launches).
 */
#include <cudnn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

/* ---- what the fake saw -------------------------------------------------------------------- */

#define MAX_ARGS 32
static struct seen {
    const char *fn;
    int calls;
    uintptr_t args[MAX_ARGS];
    double real;
} seen[64];

static struct seen *saw(const char *fn)
{
    for (int i = 0; i < 64; i++) {
        if (!seen[i].fn) seen[i].fn = fn;
        if (seen[i].fn == fn || !strcmp(seen[i].fn, fn)) {
            seen[i].calls++;
            return &seen[i];
        }
    }
    return &seen[63];
}

#define ARGS(s, ...)                                                                               \
    do {                                                                                           \
        uintptr_t v_[] = {__VA_ARGS__};                                                            \
        memcpy((s)->args, v_, sizeof v_);                                                          \
    } while (0)
#define U(x) ((uintptr_t)(x))

API int fakecudnn_calls(const char *fn)
{
    for (int i = 0; i < 64 && seen[i].fn; i++)
        if (!strcmp(seen[i].fn, fn)) return seen[i].calls;
    return 0;
}

API const uintptr_t *fakecudnn_last(const char *fn, double *real)
{
    for (int i = 0; i < 64 && seen[i].fn; i++)
        if (!strcmp(seen[i].fn, fn)) {
            if (real) *real = seen[i].real;
            return seen[i].args;
        }
    return NULL;
}

/* ---- handles ------------------------------------------------------------------------------ */

struct cudnnContext {
    int magic;
    cudaStream_t stream;
};
#define HANDLE_MAGIC 0x600d

API size_t cudnnGetVersion(void)
{
    return 91900;
}

API cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    ARGS(saw("cudnnCreate"), U(handle));
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    *handle = calloc(1, sizeof **handle);
    (*handle)->magic = HANDLE_MAGIC;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    ARGS(saw("cudnnDestroy"), U(handle));
    if (!handle || handle->magic != HANDLE_MAGIC) return CUDNN_STATUS_BAD_PARAM;
    handle->magic = 0;
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    ARGS(saw("cudnnSetStream"), U(handle), U(stream));
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    handle->stream = stream;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream)
{
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    *stream = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- legacy descriptors ------------------------------------------------------------------- */

struct cudnnTensorStruct {
    cudnnDataType_t dt;
    int n, dims[8];
};
struct cudnnFilterStruct {
    cudnnDataType_t dt;
    int dims[4];
};
struct cudnnConvolutionStruct {
    int pad[2], stride[2], dil[2];
};

API cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *t)
{
    *t = calloc(1, sizeof **t);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t t)
{
    free(t);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t t, cudnnTensorFormat_t f,
                                             cudnnDataType_t dt, int n, int c, int h, int w)
{
    (void)f;
    *t = (struct cudnnTensorStruct){dt, 4, {n, c, h, w}};
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t t, int requested,
                                             cudnnDataType_t *dt, int *n, int dims[], int strides[])
{
    if (!t) return CUDNN_STATUS_BAD_PARAM;
    *dt = t->dt;
    *n = t->n;
    for (int i = 0; i < t->n && i < requested; i++) dims[i] = t->dims[i], strides[i] = 1;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *f)
{
    *f = calloc(1, sizeof **f);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t f)
{
    free(f);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t f, cudnnDataType_t dt,
                                             cudnnTensorFormat_t fmt, int k, int c, int h, int w)
{
    (void)fmt;
    *f = (struct cudnnFilterStruct){dt, {k, c, h, w}};
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t f, int requested,
                                             cudnnDataType_t *dt, cudnnTensorFormat_t *fmt, int *n,
                                             int dims[])
{
    if (!f) return CUDNN_STATUS_BAD_PARAM;
    *dt = f->dt;
    *fmt = CUDNN_TENSOR_NCHW;
    *n = 4;
    for (int i = 0; i < 4 && i < requested; i++) dims[i] = f->dims[i];
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *c)
{
    *c = calloc(1, sizeof **c);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t c)
{
    free(c);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t c, int pad_h,
                                                  int pad_w, int u, int v, int dil_h, int dil_w,
                                                  cudnnConvolutionMode_t mode, cudnnDataType_t type)
{
    (void)mode, (void)type;
    *c = (struct cudnnConvolutionStruct){{pad_h, pad_w}, {u, v}, {dil_h, dil_w}};
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t c,
                                                  int requested, int *len, int pad[], int stride[],
                                                  int dil[], cudnnConvolutionMode_t *mode,
                                                  cudnnDataType_t *type)
{
    if (!c) return CUDNN_STATUS_BAD_PARAM;
    *len = 2;
    for (int i = 0; i < 2 && i < requested; i++)
        pad[i] = c->pad[i], stride[i] = c->stride[i], dil[i] = c->dil[i];
    *mode = CUDNN_CROSS_CORRELATION;
    *type = CUDNN_DATA_FLOAT;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- legacy operations -------------------------------------------------------------------- */

static void sleep_us(size_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Test-only: run inside each cudnnConvolutionForward, as the GPU work a real one launches. */
static void (*on_forward)(void);
API void fakecudnn_on_forward(void (*fn)(void))
{
    on_forward = fn;
}

API cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                          const cudnnTensorDescriptor_t xDesc, const void *x,
                                          const cudnnFilterDescriptor_t wDesc, const void *w,
                                          const cudnnConvolutionDescriptor_t convDesc,
                                          cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                          size_t workSpaceSizeInBytes, const void *beta,
                                          const cudnnTensorDescriptor_t yDesc, void *y)
{
    ARGS(saw("cudnnConvolutionForward"), U(handle), U(alpha), U(xDesc), U(x), U(wDesc), U(w),
         U(convDesc), U(algo), U(workSpace), U(workSpaceSizeInBytes), U(beta), U(yDesc), U(y));
    if (workSpaceSizeInBytes <= 100000) sleep_us(workSpaceSizeInBytes);
    if (on_forward) on_forward();
    if (y) *(int *)y = 42;
    return algo == 7 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes,
    const void *alpha2, const cudnnTensorDescriptor_t zDesc, const void *z,
    const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    ARGS(saw("cudnnConvolutionBiasActivationForward"), U(handle), U(alpha1), U(xDesc), U(x),
         U(wDesc), U(w), U(convDesc), U(algo), U(workSpace), U(workSpaceSizeInBytes), U(alpha2),
         U(zDesc), U(z), U(biasDesc), U(bias), U(activationDesc), U(yDesc), U(y));
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    struct seen *s = saw("cudnnBatchNormalizationForwardInference");
    ARGS(s, U(handle), U(mode), U(alpha), U(beta), U(xDesc), U(x), U(yDesc), U(y),
         U(bnScaleBiasMeanVarDesc), U(bnScale), U(bnBias), U(estimatedMean), U(estimatedVariance));
    s->real = epsilon;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance)
{
    struct seen *s = saw("cudnnBatchNormalizationForwardTraining");
    ARGS(s, U(handle), U(mode), U(alpha), U(beta), U(xDesc), U(x), U(yDesc), U(y),
         U(bnScaleBiasMeanVarDesc), U(bnScale), U(bnBias), U(resultRunningMean),
         U(resultRunningVariance), U(resultSaveMean), U(resultSaveInvVariance));
    s->real = exponentialAverageFactor * 1000 + epsilon;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workspace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    struct seen *s = saw("cudnnBatchNormalizationForwardTrainingEx");
    ARGS(s, U(handle), U(mode), U(bnOps), U(alpha), U(beta), U(xDesc), U(xData), U(zDesc), U(zData),
         U(yDesc), U(yData), U(bnScaleBiasMeanVarDesc), U(bnScale), U(bnBias), U(resultRunningMean),
         U(resultRunningVariance), U(resultSaveMean), U(resultSaveInvVariance), U(activationDesc),
         U(workspace), U(workSpaceSizeInBytes), U(reserveSpace), U(reserveSpaceSizeInBytes));
    s->real = exponentialAverageFactor * 1000 + epsilon;
    return CUDNN_STATUS_SUCCESS;
}

/* Benchmarks each algorithm by running it: through the exported name, as a library may. */
static cudnnStatus_t find(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                          const cudnnFilterDescriptor_t wDesc,
                          const cudnnConvolutionDescriptor_t convDesc,
                          const cudnnTensorDescriptor_t yDesc, int requested, int *returned,
                          cudnnConvolutionFwdAlgoPerf_t *perf)
{
    int n = requested < 3 ? requested : 3;
    for (int i = 0; i < n; i++) {
        float one = 1, zero = 0;
        cudnnConvolutionForward(handle, &one, xDesc, NULL, wDesc, NULL, convDesc,
                                (cudnnConvolutionFwdAlgo_t)i, NULL, 0, &zero, yDesc, NULL);
        memset(&perf[i], 0, sizeof perf[i]);
        perf[i].algo = (cudnnConvolutionFwdAlgo_t)i;
        perf[i].time = 1.5f * (float)i;
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    ARGS(saw("cudnnFindConvolutionForwardAlgorithm"), U(handle), U(xDesc), U(wDesc), U(convDesc),
         U(yDesc), U(requestedAlgoCount), U(returnedAlgoCount), U(perfResults));
    return find(handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
                perfResults);
}

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, void *y, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    ARGS(saw("cudnnFindConvolutionForwardAlgorithmEx"), U(handle), U(xDesc), U(x), U(wDesc), U(w),
         U(convDesc), U(yDesc), U(y), U(requestedAlgoCount), U(returnedAlgoCount), U(perfResults),
         U(workSpace), U(workSpaceSizeInBytes));
    return find(handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
                perfResults);
}

API cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    ARGS(saw("cudnnGetConvolutionForwardAlgorithm_v7"), U(handle), U(srcDesc), U(filterDesc),
         U(convDesc), U(destDesc), U(requestedAlgoCount), U(returnedAlgoCount), U(perfResults));
    *returnedAlgoCount = requestedAlgoCount < 2 ? requestedAlgoCount : 2;
    for (int i = 0; i < *returnedAlgoCount; i++) {
        memset(&perfResults[i], 0, sizeof perfResults[i]);
        perfResults[i].algo = (cudnnConvolutionFwdAlgo_t)(i + 1);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- backend descriptors ------------------------------------------------------------------ */

#define MAX_ATTRS 24
struct attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    unsigned char data[128];
};
struct desc {
    int magic;
    cudnnBackendDescriptorType_t type;
    int finalized, nattrs;
    struct attr attrs[MAX_ATTRS];
};
#define DESC_MAGIC 0xde5c

static size_t elem_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return 8;
    case CUDNN_TYPE_BOOLEAN:
    case CUDNN_TYPE_CHAR:
        return 1;
    default:
        return 4; /* float and the enums */
    }
}

static struct desc *as_desc(cudnnBackendDescriptor_t d)
{
    struct desc *p = d;
    return p && p->magic == DESC_MAGIC ? p : NULL;
}

static struct attr *find_attr(struct desc *d, cudnnBackendAttributeName_t name)
{
    for (int i = 0; i < d->nattrs; i++)
        if (d->attrs[i].name == name) return &d->attrs[i];
    return NULL;
}

static cudnnStatus_t fk_create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    struct desc *d = calloc(1, sizeof *d);
    d->magic = DESC_MAGIC;
    d->type = type;
    *out = d;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t fk_set(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                            cudnnBackendAttributeType_t type, int64_t count, const void *elems)
{
    struct desc *d = as_desc(desc);
    size_t size = elem_size(type) * (size_t)count;
    if (!d || d->finalized || count < 0 || size > sizeof d->attrs[0].data)
        return CUDNN_STATUS_BAD_PARAM;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < count; i++) {
            struct desc *e = as_desc(((const cudnnBackendDescriptor_t *)elems)[i]);
            if (!e) return CUDNN_STATUS_BAD_PARAM;
            if (!e->finalized && name != CUDNN_ATTR_VARIANT_PACK_INTERMEDIATES)
                return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
        }
    }
    struct attr *a = find_attr(d, name);
    if (!a) {
        if (d->nattrs == MAX_ATTRS) return CUDNN_STATUS_BAD_PARAM;
        a = &d->attrs[d->nattrs++];
    }
    a->name = name;
    a->type = type;
    a->count = count;
    memcpy(a->data, elems, size);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t fk_finalize(cudnnBackendDescriptor_t desc)
{
    struct desc *d = as_desc(desc);
    if (!d || d->finalized) return CUDNN_STATUS_BAD_PARAM;
    if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
        !find_attr(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG))
        return CUDNN_STATUS_BAD_PARAM;
    d->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* Heuristics: two engine configs, each with an engine over the heuristics' graph. */
static cudnnStatus_t heur_results(struct desc *heur, int64_t requested, int64_t *count,
                                  cudnnBackendDescriptor_t *out)
{
    struct attr *g = find_attr(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
    if (!g) return CUDNN_STATUS_BAD_PARAM;
    *count = 2;
    for (int64_t i = 0; i < requested && i < 2; i++) {
        struct desc *cfg = as_desc(out[i]);
        if (!cfg || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) return CUDNN_STATUS_BAD_PARAM;
        cudnnBackendDescriptor_t engine;
        int64_t index = i;
        fk_create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine);
        fk_set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
               g->data);
        fk_set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
        fk_finalize(engine);
        cfg->finalized = 0;
        cfg->nattrs = 0;
        fk_set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
        fk_finalize(cfg);
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t fk_get(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                            cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                            void *elems)
{
    struct desc *d = as_desc(desc);
    if (!d || !count) return CUDNN_STATUS_BAD_PARAM;
    if (!d->finalized) return CUDNN_STATUS_NOT_INITIALIZED;
    if (name == CUDNN_ATTR_OPERATIONGRAPH_OPS && !getenv("FAKE_CUDNN_OPS_READABLE"))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) return heur_results(d, requested, count, elems);
    struct attr *a = find_attr(d, name);
    if (!a || a->type != type) return CUDNN_STATUS_BAD_PARAM;
    int64_t n = requested < a->count ? requested : a->count;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < n; i++) {
            struct desc *to = as_desc(((cudnnBackendDescriptor_t *)elems)[i]);
            struct desc *from = ((struct desc **)(void *)a->data)[i];
            if (!to || to->type != from->type) return CUDNN_STATUS_BAD_PARAM;
            *to = *from; /* a copy, as cuDNN gives */
        }
    } else if (n > 0) {
        memcpy(elems, a->data, elem_size(type) * (size_t)n);
    }
    *count = a->count;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                               cudnnBackendDescriptor_t *descriptor)
{
    ARGS(saw("cudnnBackendCreateDescriptor"), U(type), U(descriptor));
    return fk_create(type, descriptor);
}

API cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    struct desc *d = as_desc(descriptor);
    ARGS(saw("cudnnBackendDestroyDescriptor"), U(descriptor));
    if (!d) return CUDNN_STATUS_BAD_PARAM;
    d->magic = 0;
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                           cudnnBackendAttributeName_t attributeName,
                                           cudnnBackendAttributeType_t attributeType,
                                           int64_t elementCount, const void *arrayOfElements)
{
    ARGS(saw("cudnnBackendSetAttribute"), U(descriptor), U(attributeName), U(attributeType),
         U(elementCount), U(arrayOfElements));
    return fk_set(descriptor, attributeName, attributeType, elementCount, arrayOfElements);
}

API cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                           cudnnBackendAttributeName_t attributeName,
                                           cudnnBackendAttributeType_t attributeType,
                                           int64_t requestedElementCount, int64_t *elementCount,
                                           void *arrayOfElements)
{
    ARGS(saw("cudnnBackendGetAttribute"), U(descriptor), U(attributeName), U(attributeType),
         U(requestedElementCount), U(elementCount), U(arrayOfElements));
    return fk_get(descriptor, attributeName, attributeType, requestedElementCount, elementCount,
                  arrayOfElements);
}

API cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    ARGS(saw("cudnnBackendFinalize"), U(descriptor));
    return fk_finalize(descriptor);
}

API cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                      cudnnBackendDescriptor_t variantPack)
{
    ARGS(saw("cudnnBackendExecute"), U(handle), U(executionPlan), U(variantPack));
    struct desc *plan = as_desc(executionPlan);
    if (!handle || handle->magic != HANDLE_MAGIC || !plan || !plan->finalized ||
        plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        return CUDNN_STATUS_BAD_PARAM;
    /* A library may set the handle's stream again through the exported name (nested). */
    return cudnnSetStream(handle, handle->stream);
}

/* ---- a plan built out of sight (tests of classification by reading back) ------------------ */

static cudnnBackendDescriptor_t fk_tensor(int64_t uid, cudnnDataType_t dt)
{
    cudnnBackendDescriptor_t t;
    int64_t dims[4] = {4, 64, 32, 32};
    fk_create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
    fk_set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    fk_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    fk_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    fk_finalize(t);
    return t;
}

/* A finalized plan over [matmul (bf16), pointwise], never seen by the collector being built. */
API cudnnBackendDescriptor_t fakecudnn_make_plan(void)
{
    cudnnBackendDescriptor_t a = fk_tensor('a', CUDNN_DATA_BFLOAT16);
    cudnnBackendDescriptor_t b = fk_tensor('b', CUDNN_DATA_BFLOAT16);
    cudnnBackendDescriptor_t mm, pw, graph, engine, cfg, plan;
    fk_create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &mm);
    fk_set(mm, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
    fk_set(mm, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    fk_finalize(mm);
    fk_create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &pw);
    fk_set(pw, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
    fk_finalize(pw);
    cudnnBackendDescriptor_t ops[2] = {mm, pw};
    fk_create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
    fk_set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, ops);
    fk_finalize(graph);
    fk_create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine);
    fk_set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    fk_finalize(engine);
    fk_create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
    fk_set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    fk_finalize(cfg);
    fk_create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    fk_set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    fk_finalize(plan);
    return plan;
}
