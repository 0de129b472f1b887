/*
 * cudnn_fake.c: drives the fake libcudnn.so.9 (fake_cudnn.c) for the cuDNN collector's tests.
 * Usage: cudnn_fake MODE [ARGS]
 *
 *   passthrough     every interposed function with distinctive arguments; prints what came
 *                   back and whether the fake saw exactly what was passed (exit 1 if not)
 *   durations US N  N convolutions that take at least US microseconds each; prints the
 *                   interval the program measured around each call
 *   backend         plans of several kinds built the way cudnn-frontend builds them (heuristics,
 *                   or an engine set by hand), finalized and executed; and a plan built out of
 *                   our sight, executed
 *   threads N       N threads executing one plan 250 times each
 *   nvtx            a program NVTX range around a convolution and an execute
 *   bench N         N executes and N stream settings; prints ns per call (figures, never
 *                   asserted: compare runs with and without the library)
 */
#include <cudnn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int fakecudnn_calls(const char *fn);
const uintptr_t *fakecudnn_last(const char *fn, double *real);
cudnnBackendDescriptor_t fakecudnn_make_plan(void);

static int failures;

static void check(const char *what, int ok)
{
    printf("check %-44s %s\n", what, ok ? "ok" : "MISMATCH");
    failures += !ok;
}

/* The fake saw exactly these arguments for its last call of fn. */
static void check_args(const char *fn, const uintptr_t *want, int n)
{
    const uintptr_t *got = fakecudnn_last(fn, NULL);
    check(fn, got && memcmp(got, want, sizeof *want * (size_t)n) == 0);
}

#define P(x) ((void *)(uintptr_t)(x))
#define U(x) ((uintptr_t)(x))
#define EXPECT(fn, ...)                                                                            \
    do {                                                                                           \
        uintptr_t w_[] = {__VA_ARGS__};                                                            \
        check_args(fn, w_, (int)(sizeof w_ / sizeof w_[0]));                                       \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct legacy {
    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

static struct legacy legacy_make(cudnnDataType_t dt, int n)
{
    struct legacy l;
    cudnnCreateTensorDescriptor(&l.x);
    cudnnSetTensor4dDescriptor(l.x, CUDNN_TENSOR_NCHW, dt, n, 8, 16, 16);
    cudnnCreateFilterDescriptor(&l.w);
    cudnnSetFilter4dDescriptor(l.w, dt, CUDNN_TENSOR_NCHW, 8, 8, 3, 3);
    cudnnCreateConvolutionDescriptor(&l.conv);
    cudnnSetConvolution2dDescriptor(l.conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    return l;
}

static int passthrough(void)
{
    cudnnHandle_t h = NULL;
    float a = 1, b = 0;
    int out = 0, returned = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[4];
    printf("create %d\n", (int)cudnnCreate(&h));
    printf("set stream %d\n", (int)cudnnSetStream(h, P(0x5170)));
    EXPECT("cudnnSetStream", U(h), 0x5170);
    cudaStream_t s = NULL;
    check("stream reached the library", cudnnGetStream(h, &s) == 0 && s == P(0x5170));
    struct legacy l = legacy_make(CUDNN_DATA_HALF, 2);

    printf("conv %d\n", (int)cudnnConvolutionForward(h, &a, l.x, P(0x1001), l.w, P(0x1002), l.conv,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_GEMM, P(0x1003), 0,
                                                     &b, l.x, &out));
    EXPECT("cudnnConvolutionForward", U(h), U(&a), U(l.x), 0x1001, U(l.w), 0x1002, U(l.conv),
           CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 0x1003, 0, U(&b), U(l.x), U(&out));
    check("output written through", out == 42);
    printf("conv algo 7 %d\n",
           (int)cudnnConvolutionForward(h, &a, l.x, NULL, l.w, NULL, l.conv,
                                        (cudnnConvolutionFwdAlgo_t)7, NULL, 0, &b, l.x, NULL));
    printf("conv bias act %d\n",
           (int)cudnnConvolutionBiasActivationForward(
               h, &a, l.x, P(0x2001), l.w, P(0x2002), l.conv, CUDNN_CONVOLUTION_FWD_ALGO_FFT,
               P(0x2003), 4096, &b, l.x, P(0x2004), l.x, P(0x2005), P(0x2006), l.x, P(0x2007)));
    EXPECT("cudnnConvolutionBiasActivationForward", U(h), U(&a), U(l.x), 0x2001, U(l.w), 0x2002,
           U(l.conv), CUDNN_CONVOLUTION_FWD_ALGO_FFT, 0x2003, 4096, U(&b), U(l.x), 0x2004, U(l.x),
           0x2005, 0x2006, U(l.x), 0x2007);

    double real = 0;
    printf("bn inference %d\n",
           (int)cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &a, &b, l.x,
                                                        P(0x3001), l.x, P(0x3002), l.x, P(0x3003),
                                                        P(0x3004), P(0x3005), P(0x3006), 1.25e-3));
    EXPECT("cudnnBatchNormalizationForwardInference", U(h), CUDNN_BATCHNORM_SPATIAL, U(&a), U(&b),
           U(l.x), 0x3001, U(l.x), 0x3002, U(l.x), 0x3003, 0x3004, 0x3005, 0x3006);
    fakecudnn_last("cudnnBatchNormalizationForwardInference", &real);
    check("bn inference epsilon", real == 1.25e-3);
    printf("bn training %d\n",
           (int)cudnnBatchNormalizationForwardTraining(
               h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, &a, &b, l.x, P(0x4001), l.x, P(0x4002), l.x,
               P(0x4003), P(0x4004), 0.125, P(0x4005), P(0x4006), 1e-5, P(0x4007), P(0x4008)));
    EXPECT("cudnnBatchNormalizationForwardTraining", U(h), CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
           U(&a), U(&b), U(l.x), 0x4001, U(l.x), 0x4002, U(l.x), 0x4003, 0x4004, 0x4005, 0x4006,
           0x4007, 0x4008);
    fakecudnn_last("cudnnBatchNormalizationForwardTraining", &real);
    check("bn training factor and epsilon", real == 0.125 * 1000 + 1e-5);
    printf("bn training ex %d\n",
           (int)cudnnBatchNormalizationForwardTrainingEx(
               h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, &a, &b, l.x,
               P(0x5001), l.x, P(0x5002), l.x, P(0x5003), l.x, P(0x5004), P(0x5005), 0.5, P(0x5006),
               P(0x5007), 2e-5, P(0x5008), P(0x5009), P(0x500a), P(0x500b), 777, P(0x500c), 888));
    EXPECT("cudnnBatchNormalizationForwardTrainingEx", U(h), CUDNN_BATCHNORM_SPATIAL,
           CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, U(&a), U(&b), U(l.x), 0x5001, U(l.x), 0x5002,
           U(l.x), 0x5003, U(l.x), 0x5004, 0x5005, 0x5006, 0x5007, 0x5008, 0x5009, 0x500a, 0x500b,
           777, 0x500c, 888);
    fakecudnn_last("cudnnBatchNormalizationForwardTrainingEx", &real);
    check("bn training ex factor and epsilon", real == 0.5 * 1000 + 2e-5);

    printf("get algo v7 %d", (int)cudnnGetConvolutionForwardAlgorithm_v7(h, l.x, l.w, l.conv, l.x,
                                                                         4, &returned, perf));
    printf(" returned %d first %d\n", returned, (int)perf[0].algo);
    printf("find %d",
           (int)cudnnFindConvolutionForwardAlgorithm(h, l.x, l.w, l.conv, l.x, 4, &returned, perf));
    printf(" returned %d last time %.1f\n", returned, (double)perf[returned - 1].time);
    printf("find ex %d", (int)cudnnFindConvolutionForwardAlgorithmEx(
                             h, l.x, P(0x6001), l.w, P(0x6002), l.conv, l.x, P(0x6003), 2,
                             &returned, perf, P(0x6004), 64));
    printf(" returned %d\n", returned);
    EXPECT("cudnnFindConvolutionForwardAlgorithmEx", U(h), U(l.x), 0x6001, U(l.w), 0x6002,
           U(l.conv), U(l.x), 0x6003, 2, U(&returned), U(perf), 0x6004, 64);
    /* The fake ran 3 + 2 convolutions to benchmark, on top of the program's own 2. */
    check("library's own calls went through", fakecudnn_calls("cudnnConvolutionForward") == 7);
    printf("destroy %d\n", (int)cudnnDestroy(h));
    printf("destroy again %d\n", (int)cudnnDestroy(NULL));
    return failures ? 1 : 0;
}

static int durations(int us, int n)
{
    cudnnHandle_t h;
    cudnnCreate(&h);
    struct legacy l = legacy_make(CUDNN_DATA_FLOAT, 1);
    float a = 1, b = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        cudnnConvolutionForward(h, &a, l.x, NULL, l.w, NULL, l.conv,
                                CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, (size_t)us, &b, l.x, NULL);
        printf("interval %llu\n", (unsigned long long)(now_ns() - t0));
    }
    cudnnDestroy(h);
    return 0;
}

/* ---- backend ------------------------------------------------------------------------------ */

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d = NULL;
    cudnnBackendCreateDescriptor(type, &d);
    return d;
}

static void set_desc(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                     cudnnBackendDescriptor_t v)
{
    cudnnBackendSetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t dt, int64_t n)
{
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[4] = {n, 64, 28, 28};
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    cudnnBackendFinalize(t);
    return t;
}

static cudnnBackendDescriptor_t op(cudnnBackendDescriptorType_t type,
                                   cudnnBackendAttributeName_t in, cudnnBackendDescriptor_t t)
{
    cudnnBackendDescriptor_t o = make(type);
    set_desc(o, in, t);
    return o;
}

static cudnnBackendDescriptor_t norm(cudnnBackendDescriptor_t x, cudnnBackendNormMode_t mode,
                                     cudnnBackendNormFwdPhase_t phase)
{
    cudnnBackendDescriptor_t o =
        op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, x);
    cudnnBackendSetAttribute(o, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode);
    cudnnBackendSetAttribute(o, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1,
                             &phase);
    return o;
}

static cudnnBackendDescriptor_t graph_of(int n, cudnnBackendDescriptor_t *ops)
{
    cudnnBackendDescriptor_t g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    for (int i = 0; i < n; i++) cudnnBackendFinalize(ops[i]);
    cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n,
                             ops);
    cudnnBackendFinalize(g);
    return g;
}

static cudnnBackendDescriptor_t plan_of(cudnnBackendDescriptor_t cfg)
{
    cudnnBackendDescriptor_t p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    printf("finalize plan %d\n", (int)cudnnBackendFinalize(p));
    return p;
}

/* cudnn-frontend's way: heuristics give engine configs; `nplans` of them become plans. */
static void plans_by_heuristics(cudnnBackendDescriptor_t g, int nplans, cudnnBackendDescriptor_t *p)
{
    cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
    cudnnBackendFinalize(heur);
    cudnnBackendDescriptor_t cfg[2] = {make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                                       make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)};
    int64_t n = 0;
    printf("heuristics %d",
           (int)cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, &n, cfg));
    printf(" configs %lld\n", (long long)n);
    cudnnBackendDestroyDescriptor(heur); /* the configs outlive the heuristics */
    for (int i = 0; i < nplans; i++) p[i] = plan_of(cfg[i]);
}

/* An engine set by hand. */
static cudnnBackendDescriptor_t plan_by_engine(cudnnBackendDescriptor_t g)
{
    cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    set_desc(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    cudnnBackendFinalize(engine);
    cudnnBackendDescriptor_t cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
    cudnnBackendFinalize(cfg);
    return plan_of(cfg);
}

static void execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int times)
{
    int st = 0;
    for (int i = 0; i < times; i++) {
        cudnnBackendDescriptor_t vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        cudnnBackendFinalize(vp);
        st |= (int)cudnnBackendExecute(h, plan, vp);
        cudnnBackendDestroyDescriptor(vp);
    }
    printf("execute x%d %d\n", times, st);
}

static int backend(void)
{
    cudnnHandle_t h;
    printf("create %d\n", (int)cudnnCreate(&h));
    cudnnSetStream(h, P(0x77));
    cudnnBackendDescriptor_t x16 = tensor('x', CUDNN_DATA_HALF, 8),
                             w16 = tensor('w', CUDNN_DATA_HALF, 8);
    cudnnBackendDescriptor_t x32 = tensor('f', CUDNN_DATA_FLOAT, 8);
    cudnnBackendDescriptor_t q = tensor('q', CUDNN_DATA_BFLOAT16, 8);

    /* 1: convolution + ReLU, fp16: two candidate plans (benchmark mode), three executes. */
    cudnnBackendDescriptor_t conv = op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x16);
    set_desc(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w16);
    cudnnBackendDescriptor_t relu =
        op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x16);
    cudnnBackendDescriptor_t g1[2] = {conv, relu}, p1[2];
    plans_by_heuristics(graph_of(2, g1), 2, p1);
    execute(h, p1[0], 3);
    /* 2: batch norm, inference phase, fp32, engine by hand. */
    cudnnBackendDescriptor_t bn = norm(x32, CUDNN_BATCH_NORM, CUDNN_NORM_FWD_INFERENCE);
    execute(h, plan_by_engine(graph_of(1, &bn)), 2);
    /* 3: batch norm, training phase, fp16. */
    cudnnBackendDescriptor_t bnt = norm(x16, CUDNN_BATCH_NORM, CUDNN_NORM_FWD_TRAINING);
    execute(h, plan_by_engine(graph_of(1, &bnt)), 1);
    /* 4: attention, bf16. */
    cudnnBackendDescriptor_t sdpa =
        op(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q);
    execute(h, plan_by_engine(graph_of(1, &sdpa)), 1);
    /* 5: matmul + bias, fp16. */
    cudnnBackendDescriptor_t mm =
        op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, CUDNN_ATTR_OPERATION_MATMUL_ADESC, x16);
    cudnnBackendDescriptor_t add =
        op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x16);
    cudnnBackendDescriptor_t g5[2] = {mm, add};
    execute(h, plan_by_engine(graph_of(2, g5)), 1);
    /* 6: pointwise only, fp32. */
    cudnnBackendDescriptor_t pw =
        op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x32);
    execute(h, plan_by_engine(graph_of(1, &pw)), 1);
    /* 7: layer norm: other. */
    cudnnBackendDescriptor_t ln = norm(x32, CUDNN_LAYER_NORM, CUDNN_NORM_FWD_INFERENCE);
    execute(h, plan_by_engine(graph_of(1, &ln)), 1);
    /* 8: a plan built and finalized where we could not see it: classified at first execute. */
    execute(h, fakecudnn_make_plan(), 2);
    /* 10: attention composed of matmuls and a softmax (reductions), as cudnn-frontend builds
     * it without an SDPA node, bf16. */
    cudnnBackendDescriptor_t g10[6] = {
        op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, CUDNN_ATTR_OPERATION_MATMUL_ADESC, q),
        op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, q),
        op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, q),
        op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, q),
        op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, q),
        op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, CUDNN_ATTR_OPERATION_MATMUL_ADESC, q),
    };
    execute(h, plan_by_engine(graph_of(6, g10)), 1);
    printf("destroy %d\n", (int)cudnnDestroy(h));
    return 0;
}

/* ---- threads ------------------------------------------------------------------------------ */

static cudnnBackendDescriptor_t shared_plan;

static void *worker(void *arg)
{
    (void)arg;
    cudnnHandle_t h;
    cudnnCreate(&h);
    for (int i = 0; i < 250; i++) cudnnBackendExecute(h, shared_plan, NULL);
    cudnnDestroy(h);
    return NULL;
}

static int threads(int n)
{
    cudnnBackendDescriptor_t x = tensor('x', CUDNN_DATA_HALF, 1);
    cudnnBackendDescriptor_t conv = op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
    shared_plan = plan_by_engine(graph_of(1, &conv));
    pthread_t t[16];
    if (n > 16) n = 16;
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}

static int nvtx(void)
{
    cudnnHandle_t h;
    cudnnCreate(&h);
    struct legacy l = legacy_make(CUDNN_DATA_HALF, 1);
    float a = 1, b = 0;
    nvtxRangePushA("iteration");
    cudnnConvolutionForward(h, &a, l.x, NULL, l.w, NULL, l.conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                            NULL, 0, &b, l.x, NULL);
    cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &a, &b, l.x, NULL, l.x,
                                            NULL, l.x, NULL, NULL, NULL, NULL, 1e-5);
    nvtxRangePop();
    cudnnDestroy(h);
    return 0;
}

static int bench(int n)
{
    cudnnHandle_t h;
    cudnnCreate(&h);
    cudnnBackendDescriptor_t x = tensor('x', CUDNN_DATA_HALF, 1);
    cudnnBackendDescriptor_t conv = op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
    cudnnBackendDescriptor_t plan = plan_by_engine(graph_of(1, &conv));
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) cudnnBackendExecute(h, plan, NULL);
    uint64_t t1 = now_ns();
    for (int i = 0; i < n; i++) cudnnSetStream(h, P(0x77));
    uint64_t t2 = now_ns();
    printf("execute %.1f ns/call\nset stream %.1f ns/call\n", (double)(t1 - t0) / n,
           (double)(t2 - t1) / n);
    cudnnDestroy(h);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "passthrough")) return passthrough();
    if (!strcmp(mode, "durations") && argc == 4) return durations(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(mode, "backend")) return backend();
    if (!strcmp(mode, "threads") && argc == 3) return threads(atoi(argv[2]));
    if (!strcmp(mode, "nvtx")) return nvtx();
    if (!strcmp(mode, "bench") && argc == 3) return bench(atoi(argv[2]));
    fprintf(stderr,
            "usage: cudnn_fake passthrough|durations US N|backend|threads N|nvtx|bench N\n");
    return 2;
}
