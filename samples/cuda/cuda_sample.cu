/*
 * cuda_sample.cu: a plain CUDA C program whose GPU work is known in advance, for checking the
 * CUPTI collector on a GPU (tests/gpu/test_cuda_sample.py): a fixed number of launches of three
 * kernels, copies and a memset of known sizes and kinds, a CUDA graph launched a known number of
 * times, and a busy kernel that times itself on the GPU (its first and last reads of the GPU's
 * global timer), so that recorded kernel durations can be compared with what the kernel itself
 * measured; CUDA events around it are printed too (they also hold the launch gaps around it).
 *
 * It prints a JSON manifest of what it did (stdout), including the event timings. Exit status 0,
 * 1 on a CUDA error (named on stderr), 2 when there is no usable device.
 *
 * Kernel names are extern "C" so that CUPTI reports them unmangled.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "cuda_sample: %s failed: %s (line %d)\n", #call,                       \
                    cudaGetErrorString(e_), __LINE__);                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum {
    N = 1 << 20,         /* floats per array: 4 MiB */
    ADD_LAUNCHES = 100,  /* plain launches of k_add */
    SCALE_LAUNCHES = 50, /* plain launches of k_scale */
    SPIN_LAUNCHES = 20,  /* k_spin, each timed with events */
    GRAPH_LAUNCHES = 10, /* launches of the graph k_add -> k_scale -> k_add */
    SPIN_NS = 200000,    /* how long k_spin runs */
};

extern "C" __global__ void k_add(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}

extern "C" __global__ void k_scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

static __device__ unsigned long long now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Busy for `ns` nanoseconds of GPU time (one thread); writes the time it measured itself, from
 * its first read of the global timer to its last. */
extern "C" __global__ void k_spin(unsigned long long ns, unsigned long long *out)
{
    unsigned long long start = now_ns(), t = start;
    while (t - start < ns) t = now_ns();
    if (out) *out = t - start;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "cuda_sample: no CUDA device\n");
        return 2;
    }
    const size_t bytes = N * sizeof(float);
    const int block = 256, grid = (N + block - 1) / block;
    float *d_a, *d_b, *d_pool, *h_pinned;
    float *h_pageable = (float *)malloc(bytes);
    unsigned long long *d_out, spin_self_ns[SPIN_LAUNCHES];
    if (!h_pageable) return 1;
    for (int i = 0; i < N; i++) h_pageable[i] = 1.0f;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_out, sizeof spin_self_ns));
    CHECK(cudaMallocHost(&h_pinned, bytes));
    CHECK(cudaMallocAsync(&d_pool, bytes / 4, s));

    /* Copies: HtoD pageable 4 MiB, HtoD pinned 4 MiB, DtoD 4 MiB, DtoH pinned 4 MiB,
     * DtoH pageable 1 MiB; one memset of 4 MiB. */
    CHECK(cudaMemcpy(d_a, h_pageable, bytes, cudaMemcpyHostToDevice));
    memcpy(h_pinned, h_pageable, bytes);
    CHECK(cudaMemcpyAsync(d_b, h_pinned, bytes, cudaMemcpyHostToDevice, s));
    CHECK(cudaMemsetAsync(d_pool, 0, bytes / 4, s));
    CHECK(cudaMemcpyAsync(d_b, d_a, bytes, cudaMemcpyDeviceToDevice, s));

    for (int i = 0; i < ADD_LAUNCHES; i++) k_add<<<grid, block, 0, s>>>(d_a, 1.0f, N);
    for (int i = 0; i < SCALE_LAUNCHES; i++) k_scale<<<grid, block, 0, s>>>(d_b, 0.5f, N);
    CHECK(cudaGetLastError());

    /* The graph: captured once, launched GRAPH_LAUNCHES times. */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    k_add<<<grid, block, 0, s>>>(d_a, 2.0f, N);
    k_scale<<<grid, block, 0, s>>>(d_a, 0.5f, N);
    k_add<<<grid, block, 0, s>>>(d_a, -1.0f, N);
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < GRAPH_LAUNCHES; i++) CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));

    /* The timed kernel: it times itself; events around each launch, on an otherwise idle
     * stream. */
    double spin_us[SPIN_LAUNCHES];
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < SPIN_LAUNCHES; i++) {
        CHECK(cudaEventRecord(e0, s));
        k_spin<<<1, 1, 0, s>>>(SPIN_NS, d_out + i);
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        spin_us[i] = ms * 1000.0;
    }

    CHECK(cudaMemcpyAsync(h_pinned, d_b, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h_pageable, d_a, bytes / 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(spin_self_ns, d_out, sizeof spin_self_ns, cudaMemcpyDeviceToHost));
    CHECK(cudaFreeAsync(d_pool, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaFreeHost(h_pinned));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_a));
    CHECK(cudaStreamDestroy(s));
    free(h_pageable);

    printf("{\n  \"kernels\": {\"k_add\": %d, \"k_scale\": %d, \"k_spin\": %d},\n",
           ADD_LAUNCHES + 2 * GRAPH_LAUNCHES, SCALE_LAUNCHES + GRAPH_LAUNCHES, SPIN_LAUNCHES);
    printf("  \"graph_launches\": %d,\n  \"graph_kernels\": %d,\n  \"graph_nodes\": 3,\n",
           GRAPH_LAUNCHES, 3 * GRAPH_LAUNCHES);
    printf("  \"copies\": [\n"
           "    {\"kind\": 1, \"host\": 1, \"bytes\": %zu, \"count\": 1},\n"
           "    {\"kind\": 1, \"host\": 2, \"bytes\": %zu, \"count\": 1},\n"
           "    {\"kind\": 8, \"host\": null, \"bytes\": %zu, \"count\": 1},\n"
           "    {\"kind\": 2, \"host\": 2, \"bytes\": %zu, \"count\": 1},\n"
           "    {\"kind\": 2, \"host\": 1, \"bytes\": %zu, \"count\": 1},\n"
           "    {\"kind\": 2, \"host\": 1, \"bytes\": %zu, \"count\": 1}\n  ],\n",
           bytes, bytes, bytes, bytes, bytes / 4, sizeof spin_self_ns);
    printf("  \"memsets\": [{\"bytes\": %zu, \"count\": 1}],\n", bytes / 4);
    printf("  \"device_allocations\": {\"count\": 3, \"bytes\": %zu},\n",
           2 * bytes + sizeof spin_self_ns);
    printf("  \"spin_ns\": %d,\n  \"spin_event_us\": [", SPIN_NS);
    for (int i = 0; i < SPIN_LAUNCHES; i++) printf("%s%.3f", i ? ", " : "", spin_us[i]);
    printf("],\n  \"spin_self_ns\": [");
    for (int i = 0; i < SPIN_LAUNCHES; i++) printf("%s%llu", i ? ", " : "", spin_self_ns[i]);
    printf("]\n}\n");
    return 0;
}
