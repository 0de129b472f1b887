/*
 * energy_app.c: a scripted "GPU program" for the energy collector's tests. It runs the real
 * pipeline (like fixture.c) with the stand-in libnvidia-ml (stub_nvml.c, found through
 * INFPROF_NVML_PATH): one replayed kernel on CUDA device 1 makes that GPU the process's, then a
 * worker thread runs two phases of iterations (NVTX ranges "iteration"), setting the GPU's
 * power, clocks and reasons at each phase change:
 *   no_grad         5 x 60 ms at 100 W, SM 1500 MHz, mem 2600 MHz, 60 C, no reason
 *   inference_mode  5 x 60 ms at 300 W, SM 1200 MHz, mem 2600 MHz, 80 C, SW power cap (0x4)
 * ENERGY_APP_POWER_SCALE=N multiplies the power (a run to compare with).
 * ENERGY_APP_LATE_GPU=1 uses the GPU first 60 ms into the no_grad phase (as a program whose
 * model moves to the GPU inside its no_grad block): that phase's start is never read.
 * Usage: energy_app OUTPUT.db STUB_LIBNVML TIDS_FILE [ITERATIONS] (the program's thread ids go
 * to TIDS_FILE; ITERATIONS per phase, 5 by default: more to measure the sampler's cost).
 */
#include "collectors/registry.h"
#include "collectors/replay.h"
#include "profiler/clock.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;

typedef void (*set_fn)(int, unsigned, unsigned, unsigned, unsigned, unsigned long long);
static set_fn stub_set;
static FILE *tids;
static int iterations = 5;
static int late_gpu; /* ENERGY_APP_LATE_GPU=1: the first GPU use inside the first phase */

static void busy_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL); /* the iteration's length; nothing waits on it */
}

/* One replayed kernel on device 1 (the process's first use of that GPU), then a wait until the
 * sampler has read it once. */
static int first_gpu_use(void)
{
    if (ip_replay_begin() != 0) return 1;
    struct ip_replay_buf b;
    if (!ip_replay_buffer(&b)) return 1;
    CUpti_ActivityKernel10 *k = ip_replay_add(&b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->start = late_gpu ? ip_clock_now() : ip_t0() + 1000; /* now, or at the start */
    k->end = k->start + 1000;
    k->name = "warmup";
    k->correlationId = 1;
    k->deviceId = 1;
    ip_replay_complete(&b, 0);
    if (ip_replay_sync() != 0) return 1; /* the writer has noted device 1 */
    /* The sampler loads NVML on that first use and reads every GPU once, then says so in its
     * status ("GPU: " and the library, not "not loaded" or "the process used no GPU", which a
     * tick before the writer noted the device may have set): wait for that (bounded). */
    uint64_t give_up = ip_clock_now() + 10000000000ull;
    char status[256] = "";
    while (ip_clock_now() < give_up) {
        ip_collector_status_copy(IP_COLLECTOR_ENERGY, status, sizeof status);
        if (strstr(status, "GPU: ") && !strstr(status, "GPU: not loaded") &&
            !strstr(status, "used no GPU"))
            break;
        if (!strncmp(status, "off: INFPROF_ENERGY_MS=0", 24)) break;
        sched_yield();
    }
    return 0;
}

static void phase(uint8_t grad, unsigned power, unsigned sm, unsigned temp,
                  unsigned long long reasons)
{
    const char *scale = getenv("ENERGY_APP_POWER_SCALE"); /* a second run at other power */
    stub_set(1, power * (unsigned)(scale ? atoi(scale) : 1), sm, 2600, temp, reasons);
    ip_phase_set(grad, 0, 0);
    if (late_gpu && grad == IP_NO_GRAD) {
        busy_ms(60); /* the phase's first 60 ms before the GPU is used: never read */
        if (first_gpu_use() != 0) return;
    }
    for (int i = 0; i < iterations; i++) {
        nvtxRangePushA("iteration batch=8");
        busy_ms(60);
        nvtxRangePop();
    }
}

static void *worker(void *arg)
{
    (void)arg;
    fprintf(tids, "%d\n", (int)syscall(SYS_gettid));
    phase(IP_NO_GRAD, 100000, 1500, 60, 0);
    phase(IP_INFERENCE_MODE, 300000, 1200, 80, 0x4);
    ip_phase_set(IP_GRAD, 0, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: energy_app OUTPUT.db STUB_LIBNVML TIDS_FILE [ITERATIONS]\n");
        return 2;
    }
    if (argc == 5) iterations = atoi(argv[4]);
    late_gpu = getenv("ENERGY_APP_LATE_GPU") && atoi(getenv("ENERGY_APP_LATE_GPU"));
    void *stub = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    stub_set = stub ? (set_fn)dlsym(stub, "stubnvml_set") : NULL;
    tids = fopen(argv[3], "w");
    if (!stub_set || !tids) return 2;
    fprintf(tids, "%d\n", (int)syscall(SYS_gettid));
    struct ip_start_opts opts = {argv[1], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0) return 1;
    if (!late_gpu && first_gpu_use() != 0) return 1;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    fclose(tids);
    ip_lifecycle_finish("exit", 0);
    return 0;
}
