/*
 * window_prog.c: 40 iterations, each an NVTX range "iteration" spinning MS ms (default 2); with
 * "capture", iterations 10-19 and 30-39 run inside an NVTX range "capture" (a recording window
 * under INFPROF_CAPTURE_RANGE=nvtx:capture). Prints each iteration's own time: "own I NS".
 * Usage: window_prog [capture|plain] [MS] [ITERATIONS]
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int capture = argc > 1 && !strcmp(argv[1], "capture");
    long long ms = argc > 2 ? atoll(argv[2]) : 2;
    int n = argc > 3 ? atoi(argv[3]) : 40;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a test follows its progress line by line */
    for (int i = 0; i < n; i++) {
        int in = capture && (i / 10) % 2 == 1;
        if (in && i % 10 == 0) nvtxRangePushA("capture");
        long long t0 = now_ns();
        nvtxRangePushA("iteration");
        while (now_ns() - t0 < ms * 1000000LL) {
        }
        nvtxRangePop();
        printf("own %d %lld\n", i, now_ns() - t0);
        if (in && i % 10 == 9) nvtxRangePop();
    }
    return 0;
}
