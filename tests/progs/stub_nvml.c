/*
 * stub_nvml.c: a stand-in libnvidia-ml.so.1 for the energy tests. Exports the NVML entry points
 * infprof loads (collectors/nvml_api.h) over scripted GPUs: a program sets each GPU's power,
 * clocks, temperature and clock-event reasons with stubnvml_set(), and the energy counter is
 * the exact integral of the power set over time (CLOCK_MONOTONIC), so every figure the report
 * gives can be computed from the script.
 *
 * STUB_NVML (comma-separated) picks the trouble:
 *   noperm     nvmlInit_v2 fails with NO_PERMISSION
 *   noenergy   nvmlDeviceGetTotalEnergyConsumption fails with NOT_SUPPORTED (a pre-Volta GPU)
 *   mig        every GPU is in MIG mode
 *   gpus=N     N GPUs (default 2)
 *   coarse=MS  the energy counter moves only every MS ms (NVML's does about every 100 ms on an
 *              H100 or H200), showing the energy at its last move in between
 *   limit=W    the enforced power limit (default 700 W; 0: the function fails)
 * Built twice: with -DSTUB_NVML_NO_ENERGY_FN the energy function is not exported at all (a
 * driver too old to have it).
 * STUB_NVML_LOG: a file that gets one line "TID BLOCKED" per thread that calls NVML (BLOCKED: 1
 * when that thread had every signal blocked).
 */
#include "collectors/nvml_api.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define GPUS   24

static struct {
    int init, noperm, noenergy, mig, ngpu;
    unsigned coarse_ms, limit_w;
    pthread_mutex_t lock;
    struct {
        double energy_mj;
        uint64_t last_ns;
        double shown_mj; /* coarse: the counter at its last move, at shown_ns */
        uint64_t shown_ns;
        unsigned power_mw, sm, mem, temp;
        unsigned long long reasons;
    } g[GPUS];
    int tids[16], ntids;
    int energy_reads;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void configure(void)
{
    if (st.init) return;
    st.init = 1;
    st.ngpu = 2;
    st.limit_w = 700;
    const char *m = getenv("STUB_NVML");
    if (m) {
        st.noperm = strstr(m, "noperm") != NULL;
        st.noenergy = strstr(m, "noenergy") != NULL;
        st.mig = strstr(m, "mig") != NULL;
        const char *g = strstr(m, "gpus=");
        if (g) st.ngpu = atoi(g + 5);
        if (st.ngpu < 1 || st.ngpu > GPUS) st.ngpu = 2;
        const char *c = strstr(m, "coarse=");
        if (c) st.coarse_ms = (unsigned)atoi(c + 7);
        const char *l = strstr(m, "limit=");
        if (l) st.limit_w = (unsigned)atoi(l + 6);
    }
    for (int i = 0; i < GPUS; i++) {
        st.g[i].last_ns = now_ns();
        st.g[i].power_mw = 50000;
        st.g[i].sm = 1000, st.g[i].mem = 2000, st.g[i].temp = 40;
    }
}

/* Every call: note the calling thread once, with whether it blocks all signals. */
static void note_thread(void)
{
    int tid = (int)syscall(SYS_gettid);
    for (int i = 0; i < st.ntids; i++)
        if (st.tids[i] == tid) return;
    if (st.ntids < 16) st.tids[st.ntids++] = tid;
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    int blocked = sigismember(&cur, SIGINT) && sigismember(&cur, SIGTERM) &&
                  sigismember(&cur, SIGUSR1) && sigismember(&cur, SIGPROF);
    const char *path = getenv("STUB_NVML_LOG");
    if (!path) return;
    char line[64];
    int n = snprintf(line, sizeof line, "%d %d\n", tid, blocked);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

static void advance(int i)
{
    uint64_t t = now_ns();
    st.g[i].energy_mj += st.g[i].power_mw * (double)(t - st.g[i].last_ns) / 1e9;
    st.g[i].last_ns = t;
}

/* The script: from now on GPU i draws power_mw at these clocks. */
EXPORT void stubnvml_set(int i, unsigned power_mw, unsigned sm, unsigned mem, unsigned temp,
                         unsigned long long reasons)
{
    pthread_mutex_lock(&st.lock);
    configure();
    advance(i);
    st.g[i].power_mw = power_mw, st.g[i].sm = sm, st.g[i].mem = mem, st.g[i].temp = temp;
    st.g[i].reasons = reasons;
    pthread_mutex_unlock(&st.lock);
}

/* How many GPU readings have been served (power reads: every reading makes one). */
EXPORT int stubnvml_reads(void)
{
    pthread_mutex_lock(&st.lock);
    int n = st.energy_reads;
    pthread_mutex_unlock(&st.lock);
    return n;
}

#define ENTER                                                                                      \
    pthread_mutex_lock(&st.lock);                                                                  \
    configure();                                                                                   \
    note_thread()
#define LEAVE(rc)                                                                                  \
    do {                                                                                           \
        pthread_mutex_unlock(&st.lock);                                                            \
        return rc;                                                                                 \
    } while (0)
#define DEV(d) ((int)(intptr_t)(d)-1)

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    ENTER;
    LEAVE(st.noperm ? NVML_ERROR_NO_PERMISSION : NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned n)
{
    snprintf(v, n, "999.99-stub");
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    ENTER;
    *count = (unsigned)st.ngpu;
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
    ENTER;
    if ((int)i >= st.ngpu) LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *d = (nvmlDevice_t)(intptr_t)(i + 1);
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned n)
{
    snprintf(uuid, n, "GPU-5706-%04d", DEV(d));
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned n)
{
    snprintf(name, n, "Stub GPU %d", DEV(d));
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pending)
{
    (void)d;
    *cur = *pending = st.mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}

#ifndef STUB_NVML_NO_ENERGY_FN
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *e)
{
    ENTER;
    if (st.noenergy) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    advance(DEV(d));
    double mj = st.g[DEV(d)].energy_mj;
    if (st.coarse_ms) { /* it moves on a fixed beat from its first read, at the energy then */
        uint64_t beat = (uint64_t)st.coarse_ms * 1000000u, t = st.g[DEV(d)].last_ns;
        if (!st.g[DEV(d)].shown_ns) st.g[DEV(d)].shown_ns = t, st.g[DEV(d)].shown_mj = mj;
        if (t - st.g[DEV(d)].shown_ns >= beat) {
            uint64_t at = st.g[DEV(d)].shown_ns + (t - st.g[DEV(d)].shown_ns) / beat * beat;
            st.g[DEV(d)].shown_mj = mj - st.g[DEV(d)].power_mw * (double)(t - at) / 1e9;
            st.g[DEV(d)].shown_ns = at;
        }
        mj = st.g[DEV(d)].shown_mj;
    }
    *e = (unsigned long long)(mj + 0.5);
    LEAVE(NVML_SUCCESS);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *limit)
{
    ENTER;
    (void)d;
    if (!st.limit_w) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *limit = st.limit_w * 1000;
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *p)
{
    ENTER;
    *p = st.g[DEV(d)].power_mw;
    st.energy_reads++;
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    ENTER;
    *mhz = type == NVML_CLOCK_MEM ? st.g[DEV(d)].mem : st.g[DEV(d)].sm;
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
    (void)sensor;
    ENTER;
    *t = st.g[DEV(d)].temp;
    LEAVE(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                           unsigned long long *reasons)
{
    ENTER;
    *reasons = st.g[DEV(d)].reasons;
    LEAVE(NVML_SUCCESS);
}
