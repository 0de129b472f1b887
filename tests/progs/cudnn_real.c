/*
 * cudnn_real.c: calls the real libcudnn.so.9 of the CUDA install, the way a program linked with
 * -lcudnn does, and prints every status it gets back. Without a GPU cudnnCreate fails (1001) and
 * so does anything that needs a handle, but backend descriptors up to the engine are built and
 * finalized on the host, which lets the tests check what the collector reads from real cuDNN
 * descriptors. Run with and without the library, the output must be the same.
 * (cudnnGetConvolutionForwardAlgorithm_v7 is left out: cuDNN 9.19 crashes on a NULL handle.)
 */
#include <cudnn.h>
#include <stdbool.h>
#include <stdio.h>

#define SHOW(call) printf("%-28s %d\n", #call, (int)(call))

static cudnnBackendDescriptor_t tensor(int64_t uid, const int64_t dims[4], const int64_t strides[4],
                                       bool is_virtual)
{
    cudnnBackendDescriptor_t t = NULL;
    cudnnDataType_t dt = CUDNN_DATA_HALF;
    int64_t align = 16;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    printf("%-28s %d\n", "finalize tensor", (int)cudnnBackendFinalize(t));
    return t;
}

/* A convolution forward graph (NHWC fp16, 1x1 filter) down to its execution plan. */
static void backend(void)
{
    const int64_t xd[4] = {1, 8, 16, 16}, xs[4] = {2048, 1, 128, 8};
    const int64_t wd[4] = {8, 8, 1, 1}, ws[4] = {8, 1, 8, 8};
    cudnnBackendDescriptor_t x = tensor('x', xd, xs, false), w = tensor('w', wd, ws, false);
    cudnnBackendDescriptor_t y = tensor('y', xd, xs, false);
    cudnnBackendDescriptor_t conv = NULL, op = NULL, graph = NULL, engine = NULL, cfg = NULL,
                             plan = NULL;
    int64_t nd = 2, pad[2] = {0, 0}, one[2] = {1, 1}, index = 0;
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    float alpha = 1, beta = 0;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nd);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
                             &mode);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
    cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one);
    printf("%-28s %d\n", "finalize conv", (int)cudnnBackendFinalize(conv));

    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT,
                             1, &alpha);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
                             &beta);
    printf("%-28s %d\n", "finalize conv op", (int)cudnnBackendFinalize(op));

    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
    printf("%-28s %d\n", "set graph ops",
           (int)cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
    printf("%-28s %d\n", "finalize graph", (int)cudnnBackendFinalize(graph));
    int64_t n = -1;
    printf("%-28s %d\n", "get graph ops",
           (int)cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));

    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine);
    cudnnBackendSetAttribute(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    cudnnBackendSetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    printf("%-28s %d\n", "finalize engine", (int)cudnnBackendFinalize(engine));
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
    cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &engine);
    printf("%-28s %d\n", "finalize engine config", (int)cudnnBackendFinalize(cfg));
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    printf("%-28s %d\n", "finalize plan", (int)cudnnBackendFinalize(plan));
    printf("%-28s %d\n", "execute", (int)cudnnBackendExecute(NULL, plan, NULL));
    cudnnBackendDescriptor_t all[] = {plan, cfg, engine, graph, op, conv, x, w, y};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cudnnBackendDestroyDescriptor(all[i]);
}

/* The legacy API with descriptors built on the host and no handle (none can be had). */
static void legacy(void)
{
    cudnnTensorDescriptor_t x = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t conv = NULL;
    cudnnCreateTensorDescriptor(&x);
    cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 2, 8, 16, 16);
    cudnnCreateFilterDescriptor(&w);
    cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 8, 8, 3, 3);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    float one = 1, zero = 0;
    int returned = -1;
    cudnnConvolutionFwdAlgoPerf_t perf[4];
    printf("%-28s %d\n", "convolution forward",
           (int)cudnnConvolutionForward(NULL, &one, x, NULL, w, NULL, conv,
                                        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, x,
                                        NULL));
    printf("%-28s %d\n", "find algorithm",
           (int)cudnnFindConvolutionForwardAlgorithm(NULL, x, w, conv, x, 4, &returned, perf));
    printf("%-28s %d\n", "bn inference",
           (int)cudnnBatchNormalizationForwardInference(NULL, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                        x, NULL, x, NULL, x, NULL, NULL, NULL, NULL,
                                                        1e-5));
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(x);
}

int main(void)
{
    cudnnHandle_t h = NULL;
    printf("%-28s %zu\n", "version", cudnnGetVersion());
    SHOW(cudnnCreate(&h));
    SHOW(cudnnSetStream(h, NULL));
    SHOW(cudnnDestroy(h));
    backend();
    legacy();
    return 0;
}
