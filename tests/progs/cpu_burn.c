/*
 * cpu_burn.c: known CPU use in three stages, each an NVTX range of its name: "one" spins one
 * thread for MS ms, "two" spins two threads for MS ms, "idle" sleeps MS ms (the work here is
 * sleeping: nothing waits on it). For each stage it prints its own measure of the cores it kept
 * busy, its process CPU time over the stage's wall time: "STAGE CORES". Usage: cpu_burn [MS]
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ms = 600;

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin(void *unused)
{
    (void)unused;
    volatile unsigned long x = 0;
    double end = now(CLOCK_MONOTONIC) + (double)ms / 1000;
    while (now(CLOCK_MONOTONIC) < end) x++;
    return NULL;
}

static void stage(const char *name, int threads)
{
    nvtxRangePushA(name);
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (threads) {
        pthread_t t;
        if (threads > 1) pthread_create(&t, NULL, spin, NULL);
        spin(NULL);
        if (threads > 1) pthread_join(t, NULL);
    } else {
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
        nanosleep(&d, NULL);
    }
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    nvtxRangePop();
    printf("%s %.4f\n", name, (c1 - c0) / (w1 - w0));
}

int main(int argc, char **argv)
{
    if (argc > 1) ms = atol(argv[1]);
    stage("one", 1);
    stage("two", 2);
    stage("idle", 0);
    return 0;
}
