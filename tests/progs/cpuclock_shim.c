/*
 * cpuclock_shim.c: a preloaded library that counts the CPU-clock reads (clock_gettime of
 * CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID or a pthread_getcpuclockid clock) made on the
 * process's main thread, and prints "cpu_clock_reads N" to stderr at exit
 * (tests/core/test_cpu_time.py). Such a read brings the scheduler's account up to date, which on
 * an EEVDF kernel preempts, there and then, a thread that has used its slice: none may happen
 * at an iteration's edges. It counts the main thread's getrusage(RUSAGE_THREAD) calls too
 * ("thread_rusage_reads N"): a loop's tight iterations make one each, not two.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic long reads, rusage_reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    if ((id == CLOCK_THREAD_CPUTIME_ID || id == CLOCK_PROCESS_CPUTIME_ID || id < 0) &&
        syscall(SYS_gettid) == getpid())
        atomic_fetch_add(&reads, 1);
    return real(id, ts);
}

int getrusage(int who, struct rusage *ru)
{
    static int (*real)(int, struct rusage *);
    if (!real) real = (int (*)(int, struct rusage *))dlsym(RTLD_NEXT, "getrusage");
    if (who == RUSAGE_THREAD && syscall(SYS_gettid) == getpid()) atomic_fetch_add(&rusage_reads, 1);
    return real(who, ru);
}

__attribute__((destructor)) static void report(void)
{
    dprintf(2, "cpu_clock_reads %ld\n", atomic_load(&reads));
    dprintf(2, "thread_rusage_reads %ld\n", atomic_load(&rusage_reads));
}
