/*
 * iter_gap.c: a loop of tight NVTX-marked iterations that compute, with a short computed gap
 * between them (tests/core/test_cpu_time.py, IterationEdges). Usage:
 * iter_gap MS ITER_US GAP_US [SLEEP_EVERY SLEEP_US]: MS milliseconds of iterations of ITER_US
 * inside range "iteration", then GAP_US outside it, both spinning on the clock, and every
 * SLEEP_EVERY-th gap a sleep of SLEEP_US besides (a thread that blocks between iterations).
 * Prints "iterations N" to stdout.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void spin(long long ns)
{
    long long end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

int main(int argc, char **argv)
{
    long long ms = argc > 1 ? atoll(argv[1]) : 600, it = argc > 2 ? atoll(argv[2]) : 40,
              gap = argc > 3 ? atoll(argv[3]) : 12;
    long long every = argc > 4 ? atoll(argv[4]) : 0, nap = argc > 5 ? atoll(argv[5]) : 0;
    long long end = now_ns() + ms * 1000000LL, n = 0;
    while (now_ns() < end) {
        nvtxRangePushA("iteration");
        spin(it * 1000);
        nvtxRangePop();
        spin(gap * 1000);
        n++;
        if (every > 0 && n % every == 0) usleep((useconds_t)nap);
    }
    printf("iterations %lld\n", n);
    return 0;
}
