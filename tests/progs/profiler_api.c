/*
 * profiler_api.c: 30 iterations (NVTX ranges "iteration", 2 ms each), iterations 10-19 between
 * cudaProfilerStart and cudaProfilerStop (the program's own window under
 * INFPROF_CAPTURE_RANGE=cudaProfilerApi). Needs no GPU: without a driver the calls fail, and the
 * program goes on. Prints "start RC" and "stop RC", the runtime's answers.
 */
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    for (int i = 0; i < 30; i++) {
        if (i == 10) printf("start %d\n", (int)cudaProfilerStart());
        if (i == 20) printf("stop %d\n", (int)cudaProfilerStop());
        long long t0 = now_ns();
        nvtxRangePushA("iteration");
        while (now_ns() - t0 < 2000000) {
        }
        nvtxRangePop();
    }
    return 0;
}
