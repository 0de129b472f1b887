/*
 * iter_gap.c: a loop of tight NVTX-marked iterations that compute, with a short computed gap
 * between them (tests/core/test_cpu_time.py, IterationEdges). Usage:
 * iter_gap MS ITER_US GAP_US [SLEEP_EVERY SLEEP_US]: MS milliseconds of iterations of ITER_US
 * inside range "iteration", then GAP_US outside it, both spinning on the clock, and every
 * SLEEP_EVERY-th gap a sleep of SLEEP_US besides (a thread that blocks between iterations).
 * Prints "iterations N" to stdout, and "cpu_share X": the thread's CPU time over the loop's wall
 * time, by its own clocks (what a loaded machine left it).
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
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    long long start = now_ns(), end = start + ms * 1000000LL, n = 0;
    while (now_ns() < end) {
        nvtxRangePushA("iteration");
        spin(it * 1000);
        nvtxRangePop();
        spin(gap * 1000);
        n++;
        if (every > 0 && n % every == 0) usleep((useconds_t)nap);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    long long wall = now_ns() - start;
    double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
    printf("iterations %lld\ncpu_share %.3f\n", n, wall > 0 ? cpu / (double)wall : 0);
    return 0;
}
