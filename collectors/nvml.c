/*
 * nvml.c: the energy collector, sampler side. The writer thread (our one thread, every signal
 * blocked, never a program thread) calls its tick: it loads libnvidia-ml.so.1 at run time (never
 * linked), reads every GPU once when the process first uses CUDA, then every INFPROF_ENERGY_MS and
 * at every phase change (the writer sleeps on the word that profiler/watch.h bumps) the GPUs the
 * process has used, and once more at the end: energy counter, power, SM and memory clocks,
 * temperature, clock-event (throttle) reasons. The CPU's RAPL energy and cpufreq clock (nvml_cpu.c)
 * are read with them. Readings go to a lock-free queue that the writer drains into energy_samples
 * (nvml_ingest.c).
 *
 * NVML is loaded before CUDA starts, or never. On an H100 (driver 580.159.04, CUDA 13, PyTorch
 * 2.11) a process whose NVML was initialised after its CUDA had started hung at its next CUDA
 * library start (cublasCreate -> cuInit, waiting on a driver mutex), every run; NVML initialised
 * before the program's first CUDA call did not (docs/validation/2026-11-25-gpu-nvml-hang.md). So
 * it is loaded, on a thread that holds no CUDA lock, at our start in a process that has a CUDA
 * library loaded (a libtorch or CUDA runtime program), or when a Python program has imported a
 * CUDA build of torch (torch_python.c calls ip_watch_gpu_soon); INFPROF_NVML=start loads it at
 * start in any process, off never. A process whose CUDA started first reads no GPU, and says why.
 * A CPU-only run never loads it.
 *
 * Failure is never the program's: without NVML, without an energy counter, without permission
 * or on a MIG GPU, the reason goes to the run header (collector.energy, energy.gpu).
 */
#include "nvml_config.h"
#include "registry.h"
#include "nvml_api.h"
#include "nvml_internal.h"
#include "../profiler/clock.h"
#include "../profiler/process.h"
#include "../profiler/config.h"
#include "../profiler/futex.h"
#include "../profiler/lifecycle.h"
#include "../profiler/log.h"
#include "../profiler/watch.h"
#include "../profiler/writer.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ip_energy_queue ip_energy_q;

int ip_energy_push(struct ip_energy_queue *q, const struct ip_energy_reading *r)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (head - atomic_load_explicit(&q->tail, memory_order_acquire) >= IP_ENERGY_QUEUE) {
        atomic_fetch_add(&q->dropped, 1);
        return -1;
    }
    q->v[head % IP_ENERGY_QUEUE] = *r;
    atomic_store_explicit(&q->head, head + 1, memory_order_release);
    return 0;
}

int ip_energy_pop(struct ip_energy_queue *q, struct ip_energy_reading *out)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (tail == atomic_load_explicit(&q->head, memory_order_acquire)) return 0;
    *out = q->v[tail % IP_ENERGY_QUEUE];
    atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
    return 1;
}

/* ---- NVML ----------------------------------------------------------------------------------- */

static struct {
    void *lib;
    nvmlInit_v2_fn Init;
    nvmlShutdown_fn Shutdown;
    nvmlErrorString_fn ErrorString;
    nvmlSystemGetDriverVersion_fn DriverVersion;
    nvmlDeviceGetCount_v2_fn Count;
    nvmlDeviceGetHandleByIndex_v2_fn ByIndex;
    nvmlDeviceGetHandleByUUID_fn ByUUID;
    nvmlDeviceGetUUID_fn Uuid;
    nvmlDeviceGetName_fn Name;
    nvmlDeviceGetMigMode_fn MigMode;
    nvmlDeviceGetTotalEnergyConsumption_fn Energy;
    nvmlDeviceGetPowerUsage_fn Power;
    nvmlDeviceGetClockInfo_fn Clock;
    nvmlDeviceGetTemperature_fn Temp;
    nvmlDeviceGetCurrentClocksEventReasons_fn Reasons;
    nvmlDeviceGetEnforcedPowerLimit_fn Limit;
} nv;

struct gpu {
    nvmlDevice_t h;
    int cuda; /* CUDA ordinal mapped here, -1 none yet */
    int mig;
    int energy_ok, power_ok; /* the counter read at start */
    int64_t limit_mw;        /* the enforced power limit, -1 unknown */
    char name[96], uuid[96], status[160];
};

static struct {
    _Atomic int running, done;
    int ticked;
    uint64_t period, next, last;
    uint32_t seen;     /* ip_watch_phase at the last phase reading */
    char gpu_why[240]; /* what the GPU side reads, or why not */
    int ngpu;
    struct gpu gpu[IP_ENERGY_GPUS];
    int cuda_map[64]; /* CUDA ordinal -> index in gpu[], -1 unmapped, -2 not found */
    uint64_t mapped_mask;
    int cpu_ok, gpu_settled;
    char cpu_why[200]; /* what the CPU side reads, or why not */
    struct ip_energy_facts facts;
} es;

static const char *nv_err(nvmlReturn_t rc)
{
    const char *s = nv.ErrorString ? nv.ErrorString(rc) : NULL;
    return s ? s : "unknown error";
}

/* The documented reason for an NVML failure, in words a user can act on. */
static const char *nv_hint(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_ERROR_NOT_SUPPORTED:
        return "not supported on this GPU (energy counter: Volta or later)";
    case NVML_ERROR_NO_PERMISSION:
        return "permission denied (NVML access restricted by the admin)";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "NVIDIA driver not loaded";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return "NVML library not found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "function not in this driver's NVML";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "";
    }
}

static void *nv_open(char *why, size_t n)
{
    const char *configured = ip_cfg_group_str(&ip_nvml_cfg, IP_NVML_CFG_PATH);
    const char *path = configured && *configured ? configured : "libnvidia-ml.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (configured && *configured)
            snprintf(why, n, "cannot load %s (%s)", path, dlerror());
        else
            snprintf(why, n, "no NVML: libnvidia-ml.so.1 not found (no NVIDIA driver)");
    }
    return h;
}

/* Loads NVML and finds the GPUs; 0, or -1 with the reason in `why`. */
static int nv_start(char *why, size_t n)
{
    if (!(nv.lib = nv_open(why, n))) return -1;
#define SYM(field, name) nv.field = (__typeof__(nv.field))dlsym(nv.lib, name)
    SYM(Init, "nvmlInit_v2");
    SYM(Shutdown, "nvmlShutdown");
    SYM(ErrorString, "nvmlErrorString");
    SYM(DriverVersion, "nvmlSystemGetDriverVersion");
    SYM(Count, "nvmlDeviceGetCount_v2");
    SYM(ByIndex, "nvmlDeviceGetHandleByIndex_v2");
    SYM(ByUUID, "nvmlDeviceGetHandleByUUID");
    SYM(Uuid, "nvmlDeviceGetUUID");
    SYM(Name, "nvmlDeviceGetName");
    SYM(MigMode, "nvmlDeviceGetMigMode");
    SYM(Energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(Power, "nvmlDeviceGetPowerUsage");
    SYM(Clock, "nvmlDeviceGetClockInfo");
    SYM(Temp, "nvmlDeviceGetTemperature");
    SYM(Reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nv.Reasons) SYM(Reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    SYM(Limit, "nvmlDeviceGetEnforcedPowerLimit");
#undef SYM
    if (!nv.Init || !nv.Count || !nv.ByIndex) {
        snprintf(why, n, "NVML lacks %s (driver too old)",
                 !nv.Init    ? "nvmlInit_v2"
                 : !nv.Count ? "nvmlDeviceGetCount_v2"
                             : "nvmlDeviceGetHandleByIndex_v2");
        return -1;
    }
    nvmlReturn_t rc = nv.Init();
    if (rc != NVML_SUCCESS) {
        const char *hint = nv_hint(rc);
        snprintf(why, n, "nvmlInit failed: %s (%d)%s%s", nv_err(rc), rc, *hint ? "; " : "", hint);
        return -1;
    }
    unsigned count = 0;
    if ((rc = nv.Count(&count)) != NVML_SUCCESS || count == 0) {
        snprintf(why, n, "NVML sees no GPU%s%s", rc ? ": " : "", rc ? nv_err(rc) : "");
        return -1;
    }
    unsigned seen = count;
    if (count > IP_ENERGY_GPUS) count = IP_ENERGY_GPUS;
    for (unsigned i = 0; i < count; i++) {
        struct gpu *g = &es.gpu[es.ngpu];
        memset(g, 0, sizeof *g);
        g->cuda = -1;
        if (nv.ByIndex(i, &g->h) != NVML_SUCCESS) {
            g->h = NULL;
            snprintf(g->status, sizeof g->status, "no handle");
        }
        if (g->h && nv.Name) nv.Name(g->h, g->name, sizeof g->name);
        if (g->h && nv.Uuid) nv.Uuid(g->h, g->uuid, sizeof g->uuid);
        unsigned cur = 0, pend = 0;
        if (g->h && nv.MigMode && nv.MigMode(g->h, &cur, &pend) == NVML_SUCCESS)
            g->mig = cur == NVML_DEVICE_MIG_ENABLE;
        unsigned limit = 0; /* the bound the report holds power to */
        g->limit_mw = g->h && nv.Limit && nv.Limit(g->h, &limit) == NVML_SUCCESS && limit
                          ? (int64_t)limit
                          : -1;
        es.ngpu++;
    }
    char drv[80] = "";
    if (nv.DriverVersion) nv.DriverVersion(drv, sizeof drv);
    if (seen > count)
        snprintf(why, n, "NVML%s%s, %u GPUs, %d read", drv[0] ? " driver " : "", drv, seen,
                 es.ngpu);
    else
        snprintf(why, n, "NVML%s%s, %d GPU%s", drv[0] ? " driver " : "", drv, es.ngpu,
                 es.ngpu == 1 ? "" : "s");
    return 0;
}

/* The NVML device of CUDA ordinal k, from CUDA_VISIBLE_DEVICES (indexes or UUIDs) or, unset,
 * the same index (CUDA_DEVICE_ORDER=PCI_BUS_ID order; see docs/energy.md). */
static int nv_map(int k)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (!vis || !*vis) return k < es.ngpu ? k : -2;
    const char *p = vis;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return -2;
    char item[96];
    size_t len = strcspn(p, ",");
    if (len >= sizeof item) return -2;
    memcpy(item, p, len);
    item[len] = 0;
    if (item[0] >= '0' && item[0] <= '9') {
        int idx = atoi(item);
        return idx < es.ngpu ? idx : -2;
    }
    for (int i = 0; i < es.ngpu; i++) /* "GPU-xxxx": the full UUID or a unique prefix */
        if (es.gpu[i].uuid[0] && strncmp(es.gpu[i].uuid, item, len) == 0) return i;
    return -2;
}

static int64_t nv_u(nvmlReturn_t rc, unsigned v)
{
    return rc == NVML_SUCCESS ? (int64_t)v : -1;
}

static void nv_read(int i, int kind, struct ip_energy_reading *r)
{
    struct gpu *g = &es.gpu[i];
    memset(r, 0xff, sizeof *r);
    r->gpu = i;
    r->kind = kind;
    unsigned long long e = 0, reasons = 0;
    unsigned v = 0;
    nvmlReturn_t rc;
    if (nv.Energy && g->energy_ok >= 0) {
        rc = nv.Energy(g->h, &e);
        if (rc == NVML_SUCCESS) r->energy_mj = (int64_t)e;
        if (kind == IP_ENERGY_START) g->energy_ok = rc == NVML_SUCCESS ? 1 : -1;
        if (rc != NVML_SUCCESS && kind == IP_ENERGY_START) {
            const char *hint = nv_hint(rc);
            snprintf(g->status, sizeof g->status, "no energy counter: %s (%d)%s%s%s", nv_err(rc),
                     rc, *hint ? ", " : "", hint, nv.Power ? "; from power" : "");
        }
    } else if (!nv.Energy && kind == IP_ENERGY_START) {
        g->energy_ok = -1;
        snprintf(g->status, sizeof g->status,
                 "no energy counter: nvmlDeviceGetTotalEnergyConsumption not in this NVML"
                 " (driver too old); from power");
    }
    if (nv.Power) {
        rc = nv.Power(g->h, &v);
        r->power_mw = nv_u(rc, v);
        if (rc == NVML_ERROR_NO_PERMISSION && kind == IP_ENERGY_START && !g->status[0])
            snprintf(g->status, sizeof g->status, "power: permission denied");
    }
    if (nv.Clock) {
        rc = nv.Clock(g->h, NVML_CLOCK_SM, &v);
        r->sm_mhz = nv_u(rc, v);
        rc = nv.Clock(g->h, NVML_CLOCK_MEM, &v);
        r->mem_mhz = nv_u(rc, v);
    }
    if (nv.Temp) {
        rc = nv.Temp(g->h, NVML_TEMPERATURE_GPU, &v);
        r->temp_c = nv_u(rc, v);
    }
    if (nv.Reasons) {
        rc = nv.Reasons(g->h, &reasons);
        r->reasons = rc == NVML_SUCCESS ? (int64_t)reasons : -1;
    }
    r->ts = ip_clock_now();
    if (kind == IP_ENERGY_START && g->mig && !g->status[0])
        snprintf(g->status, sizeof g->status,
                 "MIG mode: figures are the whole GPU's, shared with its other instances");
    es.facts.readings++;
}

/* ---- when NVML is loaded (the block at the top says why) ----------------------------------
 * A thread that wants NVML (our start, the Python bridge) asks, wakes the writer and waits for it
 * (at most IP_NVML_WAIT_MS): the library is loaded and initialised on the writer thread, every
 * signal blocked (threads NVML starts inherit that mask), and the asking thread goes on to CUDA
 * only once it is done. A start inside a dlopen (a library's constructor; the boot thread could
 * not take the loader's lock) asks for nothing: the writer could not load a library until that
 * dlopen returned, after which the program's CUDA may run. */
enum {
    NV_NONE,
    NV_WANTED,    /* asked for, the writer not begun */
    NV_LOADING,   /* the writer is in nv_start */
    NV_READY,     /* loaded before CUDA: read the GPUs */
    NV_FAILED,    /* no NVML, or it refused (nv_why) */
    NV_TOO_LATE,  /* CUDA started first: never */
    NV_MISSED,    /* a start inside a dlopen, or no writer came: never */
    NV_ABANDONED, /* the asker stopped waiting during the load (IP_NVML_WAIT_MS) */
    NV_SLOW,      /* ... and the load ended after that: NVML is up but never read */
    NV_OFF,       /* INFPROF_NVML=off, or a forked child */
};
#define IP_NVML_WAIT_MS 10000
static _Atomic uint32_t nv_state;
static char nv_why[160]; /* nv_start's words, published with NV_READY or NV_FAILED */

static int nv_cuda_lib(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    static const char *const libs[] = {"libcuda.so", "libcudart.so", "libtorch_cuda.so",
                                       "libc10_cuda.so"};
    for (size_t i = 0; base && i < sizeof libs / sizeof libs[0]; i++)
        if (strncmp(base, libs[i], strlen(libs[i])) == 0) return 1;
    return 0;
}

/* A CUDA library is mapped in the process now. */
static int nv_cuda_libs_loaded(void)
{
    return dl_iterate_phdr(nv_cuda_lib, NULL) != 0;
}

static int nv_cuda_began(void)
{
    return atomic_load(&ip_watch_cuda_started) || ip_watch_devices();
}

static void nv_publish(uint32_t state)
{
    atomic_store(&nv_state, state);
    ip_futex_wake(&nv_state);
}

/* Writer thread, at each tick: the load asked for, unless CUDA has started meanwhile. */
static void nv_load_here(void)
{
    uint32_t expect = NV_WANTED;
    if (!atomic_compare_exchange_strong(&nv_state, &expect, NV_LOADING)) return;
    if (nv_cuda_began()) {
        nv_publish(NV_TOO_LATE);
        return;
    }
    int ok = nv_start(nv_why, sizeof nv_why) == 0;
    if (!ok) es.ngpu = 0;
    /* The asker gave up meanwhile and went on, to CUDA perhaps: no reading, ever. */
    expect = NV_LOADING;
    if (!atomic_compare_exchange_strong(&nv_state, &expect, ok ? NV_READY : NV_FAILED))
        atomic_store(&nv_state, NV_SLOW);
    ip_futex_wake(&nv_state);
}

/* Any thread but the writer: asks for NVML now and waits until it is loaded (or failed). */
static void nv_load_request(void)
{
    uint32_t expect = NV_NONE;
    if (nv_cuda_began()) {
        atomic_compare_exchange_strong(&nv_state, &expect, NV_TOO_LATE);
        return;
    }
    if (!atomic_compare_exchange_strong(&nv_state, &expect, NV_WANTED)) return;
    ip_writer_wake(); /* brings back a writer that left for a fork (Python 3.12+) */
    uint64_t asked = ip_clock_now();
    for (;;) {
        uint32_t st = atomic_load(&nv_state);
        if (st != NV_WANTED && st != NV_LOADING) return;
        if (ip_clock_now() - asked >= IP_NVML_WAIT_MS * 1000000ull) {
            /* No writer came (gone, parked), or NVML's start hangs or crawls: the program goes
             * on, and NVML is never read. */
            expect = st;
            if (atomic_compare_exchange_strong(&nv_state, &expect,
                                               st == NV_WANTED ? NV_MISSED : NV_ABANDONED))
                return;
            continue;
        }
        ip_futex_wait(&nv_state, st, 20);
    }
}

/* ip_watch_gpu_soon (INFPROF_NVML=auto): a Python program imported torch; a CUDA build of it
 * has its CUDA libraries mapped now. */
static void nv_gpu_soon(void)
{
    if (atomic_load(&nv_state) == NV_NONE && nv_cuda_libs_loaded()) nv_load_request();
}

static int nv_ready(void)
{
    return atomic_load(&nv_state) == NV_READY;
}

/* The GPUs the process used, mapped once each as the writer notes them. */
static void nv_update_map(void)
{
    if (!nv_ready()) return;
    uint64_t used = ip_watch_devices() & ~es.mapped_mask;
    while (used) {
        int k = __builtin_ctzll(used);
        used &= used - 1;
        es.mapped_mask |= 1ull << k;
        int i = nv_map(k);
        es.cuda_map[k] = i;
        if (i >= 0 && es.gpu[i].cuda < 0) es.gpu[i].cuda = k;
    }
}

/* The GPUs (all of them, or those the process used) and, with cpu, the CPU. */
static void read_all(int kind, int every_gpu, int cpu)
{
    struct ip_energy_reading r;
    for (int i = 0; nv_ready() && i < es.ngpu; i++) {
        if (!es.gpu[i].h || (!every_gpu && es.gpu[i].cuda < 0)) continue;
        nv_read(i, kind, &r);
        ip_energy_push(&ip_energy_q, &r);
    }
    if (cpu && es.cpu_ok) {
        ip_energy_cpu_read(&r);
        r.kind = kind;
        ip_energy_push(&ip_energy_q, &r);
        es.facts.readings++;
    }
}

/* The process uses CUDA: every GPU is read once, if NVML was loaded before; else the reason. */
static int gpu_wanted(void)
{
    return ip_watch_devices() != 0 || atomic_load(&ip_watch_cuda_started);
}

/* Why the GPUs are not read, for a state other than NV_READY (and NV_WANTED, NV_LOADING). */
static void gpu_not_read(uint32_t state, char *why, size_t n)
{
    switch (state) {
    case NV_FAILED:
        snprintf(why, n, "%s", nv_why);
        break;
    case NV_OFF:
        snprintf(why, n, "not read: INFPROF_NVML=off");
        break;
    case NV_MISSED:
        snprintf(why, n,
                 "not read: NVML could not be loaded before CUDA (infprof started inside a"
                 " library's load, or its writer thread did not come: docs/energy.md)");
        break;
    case NV_ABANDONED:
    case NV_SLOW:
        snprintf(why, n, "not read: NVML's start outlasted %d s, after which CUDA may have begun",
                 IP_NVML_WAIT_MS / 1000);
        break;
    default:
        snprintf(why, n,
                 "not read: CUDA started before NVML was loaded (loading it then can hang the"
                 " program; INFPROF_NVML=start loads it at start: docs/energy.md)");
        break;
    }
}

/* 1 once the GPU side is settled (read from now on, or not and why), 0 while NVML is loading. */
static int gpu_settle(char *why, size_t n)
{
    uint32_t expect = NV_NONE;
    atomic_compare_exchange_strong(&nv_state, &expect, NV_TOO_LATE);
    uint32_t state = atomic_load(&nv_state);
    if (state == NV_WANTED || state == NV_LOADING) return 0;
    if (state != NV_READY) {
        gpu_not_read(state, why, n);
        return 1;
    }
    snprintf(why, n, "%s", nv_why);
    nv_update_map();
    read_all(IP_ENERGY_START, 1, 0);
    return 1;
}

/* The GPU side of a process that has used no GPU (yet). */
static void gpu_unused(char *why, size_t n)
{
    uint32_t state = atomic_load(&nv_state);
    if (state == NV_READY)
        snprintf(why, n, "%s; the process used no GPU", nv_why);
    else if (state == NV_NONE || state == NV_TOO_LATE || state == NV_WANTED || state == NV_LOADING)
        snprintf(why, n, "not loaded: the process used no GPU");
    else
        gpu_not_read(state, why, n);
}

static void sampler_status(const char *gpu_why, const char *cpu_why)
{
    snprintf(es.facts.gpu_status, sizeof es.facts.gpu_status, "%s", gpu_why);
    snprintf(es.facts.cpu_status, sizeof es.facts.cpu_status, "%s", cpu_why);
    /* "on" where something is read: a GPU the process used, or the CPU. */
    int on = (es.gpu_settled && nv_ready() && es.ngpu) || es.cpu_ok;
    /* The period only where something is read ("off: every 100 ms" read as a contradiction). */
    if (on)
        ip_collector_status(IP_COLLECTOR_ENERGY, "on", "every %lld ms; GPU: %s; CPU: %s",
                            (long long)ip_cfg_group_int(&ip_nvml_cfg, IP_NVML_CFG_ENERGY_MS),
                            gpu_why, cpu_why);
    else
        ip_collector_status(IP_COLLECTOR_ENERGY, "off", "GPU: %s; CPU: %s", gpu_why, cpu_why);
}

/* The writer thread calls this at every wake (collector.h, tick): the sampler has no thread of its
 * own. A reading is due every INFPROF_ENERGY_MS, and at a phase change (at most one per
 * IP_ENERGY_MIN_GAP_NS); returns when the next one is due. */
static uint64_t energy_tick(uint64_t now, int final)
{
    if (!atomic_load(&es.running) || atomic_load(&es.done)) return 0;
    nv_load_here();
    struct timespec c0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    if (!es.ticked) {
        es.ticked = 1;
        es.facts.tid = (int)syscall(SYS_gettid);
        gpu_unused(es.gpu_why, sizeof es.gpu_why);
        sampler_status(es.gpu_why, es.cpu_why);
        if (es.cpu_ok) read_all(IP_ENERGY_START, 0, 1);
        es.next = now + es.period;
        es.seen = atomic_load(&ip_watch_phase);
    }
    if (!es.gpu_settled && gpu_wanted() && gpu_settle(es.gpu_why, sizeof es.gpu_why)) {
        es.gpu_settled = 1;
        sampler_status(es.gpu_why, es.cpu_why);
    }
    uint32_t phase = atomic_load(&ip_watch_phase);
    if (final) {
        if (!es.gpu_settled) gpu_unused(es.gpu_why, sizeof es.gpu_why);
        nv_update_map();
        read_all(IP_ENERGY_END, 0, 1);
        sampler_status(es.gpu_why, es.cpu_why);
        atomic_store(&es.done, 1);
    } else if (phase != es.seen && now - es.last >= IP_ENERGY_MIN_GAP_NS) {
        es.seen = phase;
        nv_update_map();
        read_all(IP_ENERGY_PHASE, 0, 1);
        es.last = now;
    } else if (now >= es.next) {
        nv_update_map();
        read_all(IP_ENERGY_PERIODIC, 0, 1);
        es.last = now;
        es.next = es.next + es.period > now ? es.next + es.period : now + es.period;
    }
    struct timespec c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    es.facts.cpu_ns += (int64_t)(c1.tv_sec - c0.tv_sec) * 1000000000 + (c1.tv_nsec - c0.tv_nsec);
    /* Nothing to read (no GPU used yet, no CPU counters): no timed wake-ups and no wake on
     * phase changes; the first CUDA use wakes the writer (ip_watch_cuda_init). */
    int reading = (es.gpu_settled && nv_ready() && es.ngpu) || es.cpu_ok;
    atomic_store(&ip_watch_wants_edges, reading);
    if (final || !reading) return 0;
    /* A phase change seen too soon after the last reading: read at the end of the gap. */
    if (phase != es.seen && es.last + IP_ENERGY_MIN_GAP_NS < es.next)
        return es.last + IP_ENERGY_MIN_GAP_NS;
    return es.next;
}

/* ---- the collector -------------------------------------------------------------------------- */

static void energy_start(void)
{
    memset(&es, 0, sizeof es);
    for (int k = 0; k < 64; k++) es.cuda_map[k] = -1;
    if (ip_cfg_group_int(&ip_nvml_cfg, IP_NVML_CFG_ENERGY_MS) == 0) {
        ip_collector_status(IP_COLLECTOR_ENERGY, "off", "INFPROF_ENERGY_MS=0");
        return;
    }
    es.period = (uint64_t)ip_cfg_group_int(&ip_nvml_cfg, IP_NVML_CFG_ENERGY_MS) * 1000000ull;
    /* The CPU's files now, before the program runs (nvml_cpu.c). */
    es.cpu_ok = ip_energy_cpu_open(ip_cfg_group_str(&ip_nvml_cfg, IP_NVML_CFG_SYSFS), es.cpu_why,
                                   sizeof es.cpu_why);
    atomic_store(&es.running, 1);
    ip_writer_wake(); /* the first reading, now */
    /* NVML before the program runs, where it will use CUDA (the block at the top). */
    int when = ip_cfg_group_int(&ip_nvml_cfg, IP_NVML_CFG_NVML); /* auto, start, off */
    if (when == 2)
        atomic_store(&nv_state, NV_OFF);
    else if (ip_lifecycle_started_in_loader())
        atomic_store(&nv_state, NV_MISSED); /* the block above nv_state says why */
    else if (when == 1 || nv_cuda_libs_loaded())
        nv_load_request();
    else
        atomic_store(&ip_watch_gpu_soon_fn, nv_gpu_soon);
}

/* Normal exit: the end reading is the writer's last tick; the files are closed after it. */
static void energy_stop(void) {}

/* The parent's: the child reads nothing (its parent's file has the GPUs). */
static void energy_atfork_child(void)
{
    ip_energy_cpu_forget();
    atomic_store(&es.running, 0);
    es.ngpu = 0;
    es.facts.tid = 0; /* no sampler here: no energy metadata in the child's file */
    /* Nor NVML: the child's `import torch` must not wait for a writer that never loads it. */
    atomic_store(&ip_watch_gpu_soon_fn, NULL);
    atomic_store(&nv_state, NV_OFF);
    ip_collector_status(IP_COLLECTOR_ENERGY, "off", "forked child (the parent reads the GPUs)");
}

int ip_energy_gpu_infos(struct ip_energy_gpu_info *out, int max)
{
    if (!atomic_load(&es.done) && atomic_load(&es.running)) return 0; /* still sampling */
    ip_energy_cpu_close(); /* after the end reading (the writer's last tick) */
    int n = 0;
    for (int i = 0; i < es.ngpu && n < max; i++) {
        const struct gpu *g = &es.gpu[i];
        struct ip_energy_gpu_info *o = &out[n++];
        o->nvml_index = i;
        o->cuda = g->cuda;
        o->mig = g->mig;
        o->power_limit_mw = g->limit_mw;
        snprintf(o->name, sizeof o->name, "%s", g->name);
        snprintf(o->uuid, sizeof o->uuid, "%s", g->uuid);
        snprintf(o->status, sizeof o->status, "%s", g->status);
    }
    return n;
}

void ip_energy_facts(struct ip_energy_facts *f)
{
    *f = es.facts;
}

extern const char ip_schema_nvml[]; /* collectors/nvml.sql, embedded at build time */

const struct ip_collector ip_collector_energy = {
    .name = "energy",
    .title = "Energy",
    .settings = &ip_nvml_cfg,
    .schema = ip_schema_nvml,
    .start = energy_start,
    .stop = energy_stop,
    .tick = energy_tick,
    .atfork_child = energy_atfork_child,
    .prepare = ip_energy_prepare,
    .flush = ip_energy_flush,
    .finish = ip_energy_finish,
};
