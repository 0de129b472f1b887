/*
 * cupti.c: the CUPTI collector, app side.
 *
 * The constructor points CUDA_INJECTION64_PATH at this library; the driver calls our
 * InitializeInjection during cuInit, before any context exists. There we dlopen libcupti,
 * subscribe (or go passive when another tool holds CUPTI), register our clock and the buffer
 * callbacks, enable the activity kinds and the issue callbacks, and register an atexit handler
 * that runs before CUDA's own teardown and flushes CUPTI.
 *
 * Every API call that issues GPU work gets a callback on the issuing thread (the thread's phase
 * and NVTX range, keyed by correlation id). Buffers come from a pool allocated once
 * (cupti_pool.c); the writer turns them into rows (cupti_ingest.c). No lock of ours is ever held
 * across a CUPTI call.
 */
#include "cuda_libs.h"
#include "cupti_config.h"
#include "registry.h"
#include "cupti_internal.h"
#include "../profiler/attrib.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/lifecycle.h"
#include "../profiler/watch.h"
#include "../profiler/log.h"
#include "../profiler/phase.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"
#include "../profiler/opname.h"
#include "../profiler/writer.h"

#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IP_EXPORT __attribute__((visibility("default")))

struct ip_cupti_api ip_cupti;
int64_t ip_cupti_clock_offset;
_Atomic int ip_cupti_by_records;
struct ip_cupti_facts ip_cupti_facts;

static CUpti_SubscriberHandle cupti_subscriber;
static _Atomic int cupti_active;  /* subscribed and enabled */
static _Atomic int cupti_stopped; /* flushed at exit */
static _Atomic int cupti_injected;
static int cupti_chosen; /* the constructor made us CUDA's injection library */
static char cupti_self_path[PATH_MAX];

int ip_cupti_active(void)
{
    return atomic_load_explicit(&cupti_active, memory_order_relaxed) &&
           !atomic_load_explicit(&cupti_stopped, memory_order_relaxed);
}

/* ---- checking of vendor calls ------------------------------------------------------------- */

static const char *cupti_result_text(CUptiResult r)
{
    const char *s = NULL;
    if (ip_cupti.GetResultString && ip_cupti.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

static CUptiResult cupti_check(CUptiResult r, const char *call, int line)
{
    if (r != CUPTI_SUCCESS)
        ip_debug("%s failed (cupti.c:%d): %s (%d)", call, line, cupti_result_text(r), (int)r);
    return r;
}

#define CUPTI_CALL(fn, ...)                                                                        \
    (ip_cupti.fn ? cupti_check(ip_cupti.fn(__VA_ARGS__), "cupti" #fn, __LINE__)                    \
                 : CUPTI_ERROR_NOT_INITIALIZED)

/* ---- issue callbacks ---------------------------------------------------------------------- */

/* Runtime API nesting depth of this thread: a driver call made inside a runtime call we already
 * saw is the same work, not a second issue. */
static __thread uint32_t cupti_rt_depth __attribute__((tls_model("initial-exec")));

/* Which API calls get the callback, by name prefix over CUPTI's callback ids: every call that
 * issues GPU work or memory, so that every record's correlation id finds the issuing thread's
 * phase without waiting for (or needing) the API record. launch: kernel and graph launches. */
static const struct {
    uint8_t domain, launch;
    const char *prefix;
} cupti_issue_calls[] = {
    /* clang-format off */
    {1, 1, "cudaLaunch"},          {1, 1, "cudaGraphLaunch"},     {1, 0, "cudaMemcpy"},
    {1, 0, "cudaMemset"},          {1, 0, "cudaMalloc"},          {1, 0, "cudaFree"},
    {1, 0, "cudaHostAlloc"},       {1, 0, "cudaMemPrefetch"},     {1, 0, "cudaMemPool"},
    {1, 0, "cudaDeviceSynchronize"}, {1, 0, "cudaStreamSynchronize"},
    {1, 0, "cudaEventSynchronize"},  {1, 0, "cudaStreamWaitEvent"},
    {2, 1, "cuLaunch"},            {2, 1, "cuGraphLaunch"},       {2, 0, "cuMemcpy"},
    {2, 0, "cuMemset"},            {2, 0, "cuMemAlloc"},          {2, 0, "cuMemFree"},
    {2, 0, "cuMemHostAlloc"},      {2, 0, "cuMemCreate"},         {2, 0, "cuMemRelease"},
    {2, 0, "cuMemMap"},            {2, 0, "cuMemUnmap"},          {2, 0, "cuMemPool"},
    {2, 0, "cuMemPrefetch"},       {2, 0, "cuCtxSynchronize"},    {2, 0, "cuStreamSynchronize"},
    {2, 0, "cuEventSynchronize"},  {2, 0, "cuStreamWaitEvent"},
    /* clang-format on */
};

#define CUPTI_CBID_MAX 1024
static uint8_t cupti_launch_bits[2][CUPTI_CBID_MAX / 8];

static int cupti_is_launch(int domain, uint32_t cbid)
{
    return cbid < CUPTI_CBID_MAX && (cupti_launch_bits[domain - 1][cbid / 8] >> (cbid % 8)) & 1;
}

void ip_cupti_note_issue(uint32_t corr, uint8_t domain, uint32_t cbid, uint64_t ts, int launch)
{
    if (!ip_recording() || !ip_hook_enter()) return;
    if (launch && ip_phase_poller) ip_phase_poller(IP_POLL_LAUNCH);
    struct ip_ring *r;
    struct ip_ev_launch *e = ip_ring_begin(sizeof *e, &r);
    if (e) {
        e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CUPTI, IP_EV_CUPTI_LAUNCH), sizeof *e, corr};
        e->nvtx = ip_thread_nvtx_top();
        e->ts = ts;
        e->cbid = (uint16_t)cbid;
        e->domain = domain;
        e->phase = ip_self.phase;
        e->iter = ip_self.iter;
        e->cudnn = ip_self.cudnn_call;
        e->op = ip_self.op_rf ? ip_thread_op() : 0;
        e->pad = 0;
        ip_ring_commit(r, sizeof *e);
    }
    if (launch) ip_phase_emit();
    ip_hook_leave();
}

static void CUPTIAPI cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cb->callbackSite == CUPTI_API_EXIT) {
            if (cupti_rt_depth) cupti_rt_depth--;
            return;
        }
        if (cupti_rt_depth++) return;
    } else if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_ENTER ||
               cupti_rt_depth) {
        return;
    }
    int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 1 : 2;
    ip_cupti_note_issue(cb->correlationId, (uint8_t)d, cbid, ip_clock_now(),
                        cupti_is_launch(d, cbid));
}

/* Enable, for every call that issues GPU work, its callback (records 0) or its API activity
 * record (records 1, INFPROF_ATTRIBUTION=records); returns how many were enabled. */
static int cupti_enable_issue_calls(int records)
{
    static const uint32_t sizes[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
    static const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    CUPTI_CB_DOMAIN_DRIVER_API};
    int enabled = 0;
    for (int d = 1; d <= 2; d++) {
        for (uint32_t cbid = 1; cbid < sizes[d - 1] && cbid < CUPTI_CBID_MAX; cbid++) {
            const char *name = ip_cupti_api_name(d, cbid);
            for (size_t i = 0; i < sizeof cupti_issue_calls / sizeof *cupti_issue_calls; i++) {
                const char *prefix = cupti_issue_calls[i].prefix;
                if (cupti_issue_calls[i].domain != d || strncmp(name, prefix, strlen(prefix)))
                    continue;
                if (cupti_issue_calls[i].launch)
                    cupti_launch_bits[d - 1][cbid / 8] |= (uint8_t)(1u << (cbid % 8));
                CUptiResult r;
                if (!records)
                    r = CUPTI_CALL(EnableCallback, 1, cupti_subscriber, domains[d - 1], cbid);
                else if (d == 1)
                    r = CUPTI_CALL(ActivityEnableRuntimeApi, cbid, 1);
                else
                    r = CUPTI_CALL(ActivityEnableDriverApi, cbid, 1);
                enabled += r == CUPTI_SUCCESS;
                break;
            }
        }
    }
    return enabled;
}

/* ---- loading ------------------------------------------------------------------------------ */

/* libcupti: the configured file; else where the process's own CUDA came from (pip's nvidia
 * packages, torch's RUNPATH: cuda_libs.c), before the loader's path and the toolkit's folders.
 * `where` says which file and why, for the run header. */
static void *cupti_open_library(char *where, size_t n)
{
    const char *configured = ip_cfg_group_str(&ip_cupti_cfg, IP_CUPTI_CFG_PATH);
    if (configured && *configured) {
        void *h = dlopen(configured, RTLD_NOW | RTLD_LOCAL);
        /* an explicit path that fails is not replaced silently */
        snprintf(where, n, "%s", h ? configured : dlerror());
        return h;
    }
    static const char *const pip[] = {"cu13", "cuda_cupti", NULL};
    static struct cuda_lib_candidate own[8]; /* 33 KB: not on the calling thread's stack (once) */
    int nown = ip_cuda_lib_candidates("libcupti.so.13", pip, own, 8);
    for (int i = 0; i < nown; i++) {
        void *h = dlopen(own[i].path, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(where, n, "%s (%s)", own[i].path, own[i].how);
            return h;
        }
    }
    const char *cuda_home = getenv("CUDA_HOME");
    char home_path[PATH_MAX] = "";
    if (cuda_home)
        snprintf(home_path, sizeof home_path, "%s/extras/CUPTI/lib64/libcupti.so.13", cuda_home);
    const char *candidates[] = {
        "libcupti.so.13",
        home_path[0] ? home_path : NULL,
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so.13",
    };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i]) continue;
        void *h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(where, n, "%s", candidates[i]);
            return h;
        }
    }
    snprintf(where, n, "libcupti.so.13 not found (set INFPROF_CUPTI_PATH)");
    return NULL;
}

static int cupti_resolve(void *h)
{
#define RESOLVE(field, sym) ip_cupti.field = (__typeof__(ip_cupti.field))dlsym(h, sym)
    RESOLVE(GetVersion, "cuptiGetVersion");
    RESOLVE(GetResultString, "cuptiGetResultString");
    RESOLVE(Subscribe, "cuptiSubscribe");
    RESOLVE(Subscribe_v2, "cuptiSubscribe_v2");
    RESOLVE(Unsubscribe, "cuptiUnsubscribe");
    RESOLVE(EnableCallback, "cuptiEnableCallback");
    RESOLVE(SetThreadIdType, "cuptiSetThreadIdType");
    RESOLVE(ActivityEnable, "cuptiActivityEnable");
    RESOLVE(ActivityDisable, "cuptiActivityDisable");
    RESOLVE(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    RESOLVE(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
    RESOLVE(ActivityFlushAll, "cuptiActivityFlushAll");
    RESOLVE(ActivityFlushPeriod, "cuptiActivityFlushPeriod");
    RESOLVE(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    RESOLVE(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    RESOLVE(GetTimestamp, "cuptiGetTimestamp");
    RESOLVE(ActivityPushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
    RESOLVE(ActivityPopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
    RESOLVE(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
    RESOLVE(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
#undef RESOLVE
    if (ip_cupti.Subscribe && ip_cupti.ActivityEnable && ip_cupti.ActivityRegisterCallbacks &&
        ip_cupti.ActivityFlushAll && ip_cupti.ActivityGetNextRecord && ip_cupti.EnableCallback)
        return 0;
    memset(&ip_cupti, 0, sizeof ip_cupti); /* nothing of a wrong library is ever called */
    return -1;
}

static uint64_t CUPTIAPI cupti_timestamp(void)
{
    return ip_clock_now();
}

static void cupti_collector_stop(void);

static void cupti_atexit(void)
{
    if (ip_process_owns()) cupti_collector_stop();
}

/* Subscribe; on failure say why (once, on stderr when another tool holds CUPTI). */
static int cupti_subscribe(void)
{
    char holder[256] = "";
    CUptiResult r;
    if (ip_cupti.Subscribe_v2) {
        CUpti_SubscriberParams params;
        memset(&params, 0, sizeof params);
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "infprof";
        params.oldSubscriberName = holder;
        params.oldSubscriberSize = sizeof holder;
        r = CUPTI_CALL(Subscribe_v2, &cupti_subscriber, cupti_on_callback, NULL, &params);
    } else {
        r = CUPTI_CALL(Subscribe, &cupti_subscriber, cupti_on_callback, NULL);
    }
    if (r == CUPTI_SUCCESS) return 0;
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        holder[sizeof holder - 1] = 0;
        char who[320];
        ip_cupti_name_holder(holder, who, sizeof who);
        ip_warn("CUPTI is already in use by %s: CUDA activity is not recorded (passive mode);"
                " phases, memory, cuDNN and NVTX still are",
                who);
        ip_collector_status(IP_COLLECTOR_CUPTI, "passive", "CUPTI already in use by %s", who);
    } else {
        ip_collector_status(IP_COLLECTOR_CUPTI, "off", "cuptiSubscribe failed: %s (%d)",
                            cupti_result_text(r), (int)r);
    }
    return -1;
}

/* Activity kinds besides CONCURRENT_KERNEL. GRAPH_TRACE is left off on purpose: it reports a
 * graph launch as one record *instead of* its nodes, and we want every graph kernel with its
 * node id (graph launches are derived from their nodes, cupti_summary.c). */
static const struct {
    CUpti_ActivityKind kind;
    const char *name;
    int api; /* only with INFPROF_CUDA_API=1 */
} cupti_kinds[] = {
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", 0},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2", 0},
    {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL", 0},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", 0},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 1},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 1},
};

static int cupti_enable(char *missing, size_t n)
{
    /* CONCURRENT_KERNEL first and early (enabling it after modules load has hung for seconds);
     * never KIND_KERNEL, which serialises kernels. */
    CUptiResult r = CUPTI_CALL(ActivityEnable, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        ip_collector_status(IP_COLLECTOR_CUPTI, "off", "enabling CONCURRENT_KERNEL failed: %s (%d)",
                            cupti_result_text(r), (int)r);
        return -1;
    }
    size_t o = 0;
    missing[0] = 0;
    for (size_t i = 0; i < sizeof cupti_kinds / sizeof cupti_kinds[0]; i++) {
        if (cupti_kinds[i].api && !ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_CUDA_API)) continue;
        if (CUPTI_CALL(ActivityEnable, cupti_kinds[i].kind) != CUPTI_SUCCESS && o + 32 < n)
            o += (size_t)snprintf(missing + o, n - o, "%s%s", o ? "," : "", cupti_kinds[i].name);
    }
    /* Attribution: API records of the issuing calls, where asked and this CUPTI can enable them
     * call by call (else the callbacks); after the kinds, which would override them. */
    int records = ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ATTRIBUTION) == 1;
    if (records && (!ip_cupti.ActivityEnableRuntimeApi || !ip_cupti.ActivityEnableDriverApi)) {
        records = 0;
        ip_warn("INFPROF_ATTRIBUTION=records: this CUPTI cannot enable API records call by call;"
                " using the launch callbacks");
    }
    if (records) {
        atomic_store(&ip_cupti_by_records, 1);
        if (cupti_enable_issue_calls(1) == 0 && o + 32 < n)
            o += (size_t)snprintf(missing + o, n - o, "%sissue API records", o ? "," : "");
    } else if (ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_CALLBACKS) &&
               cupti_enable_issue_calls(0) == 0 && o + 32 < n) {
        o += (size_t)snprintf(missing + o, n - o, "%sissue callbacks", o ? "," : "");
    }
    return 0;
}

/* Undo a partial start: nothing of ours stays registered with CUPTI. */
static void cupti_abandon(void)
{
    CUPTI_CALL(ActivityDisable, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CUPTI_CALL(Unsubscribe, cupti_subscriber);
}

/* Start CUPTI. Called by the CUDA driver through InitializeInjection (or by a test driving the
 * stub libcupti). Returns 0 when active. */
static int cupti_start_injected(void)
{
    if (atomic_exchange(&cupti_injected, 1)) return atomic_load(&cupti_active) ? 0 : -1;
    /* Passive (INFPROF_CUPTI=0, another tool's injection): whoever calls us, CUPTI is not ours. */
    if (!ip_active() || !ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ON) || !cupti_chosen)
        return -1;
    char where[PATH_MAX];
    void *h = cupti_open_library(where, sizeof where);
    if (!h || cupti_resolve(h) != 0) {
        ip_collector_status(IP_COLLECTOR_CUPTI, "off", "cannot load CUPTI: %s",
                            h ? "libcupti lacks the activity API" : where);
        return -1;
    }
    if (ip_cupti.GetVersion) CUPTI_CALL(GetVersion, &ip_cupti_facts.cupti_version);
    if (cupti_subscribe() != 0) return -1;
    if (ip_cupti_pool_init((size_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_BUFFER_KB) * 1024,
                           (uint32_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_BUFFERS)) != 0) {
        ip_collector_status(IP_COLLECTOR_CUPTI, "off", "cannot allocate the buffer pool");
        CUPTI_CALL(Unsubscribe, cupti_subscriber);
        return -1;
    }
    CUPTI_CALL(SetThreadIdType, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    /* One clock: CUPTI stamps with ours (before any kind is enabled, as CUPTI asks). Without the
     * callback, an offset is calibrated once and subtracted from every CUPTI timestamp. */
    const char *clock = "infprof";
    if (CUPTI_CALL(ActivityRegisterTimestampCallback, cupti_timestamp) != CUPTI_SUCCESS) {
        uint64_t cupti_ts = 0, before = ip_clock_now();
        CUptiResult r = CUPTI_CALL(GetTimestamp, &cupti_ts);
        uint64_t after = ip_clock_now();
        if (r == CUPTI_SUCCESS && cupti_ts) {
            ip_cupti_clock_offset = (int64_t)(cupti_ts - (before + after) / 2);
            clock = "calibrated";
        } else {
            clock = "CUPTI's own, not calibrated";
        }
    }
    if (CUPTI_CALL(ActivityRegisterCallbacks, ip_cupti_buffer_requested,
                   ip_cupti_buffer_completed) != CUPTI_SUCCESS) {
        ip_collector_status(IP_COLLECTOR_CUPTI, "off", "cannot register the buffer callbacks");
        CUPTI_CALL(Unsubscribe, cupti_subscriber);
        return -1;
    }
    if (ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_FLUSH_MS))
        CUPTI_CALL(ActivityFlushPeriod,
                   (uint32_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_FLUSH_MS));
    char missing[256];
    if (cupti_enable(missing, sizeof missing) != 0) {
        cupti_abandon();
        return -1;
    }
    atomic_store(&cupti_active, 1);
    /* Registered now, after CUDA's runtime registered its own teardown: runs before it. */
    atexit(cupti_atexit);
    ip_collector_status(IP_COLLECTOR_CUPTI, "on", "%s (clock %s%s%s)", where, clock,
                        missing[0] ? "; not available: " : "", missing);
    return 0;
}

IP_EXPORT int InitializeInjection(void)
{
    ip_watch_cuda_init(); /* the energy sampler reads the GPUs now (never loads NVML from now on) */
    cupti_start_injected();
    return 1; /* the driver goes on either way */
}

/* ---- device facts (at stop, while CUDA is still up) --------------------------------------- */

static void cupti_gather_facts(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!cuda) return;
    CUresult (*get_count)(int *) = (CUresult(*)(int *))dlsym(cuda, "cuDeviceGetCount");
    CUresult (*get_name)(char *, int, CUdevice) =
        (CUresult(*)(char *, int, CUdevice))dlsym(cuda, "cuDeviceGetName");
    CUresult (*get_attr)(int *, CUdevice_attribute, CUdevice) =
        (CUresult(*)(int *, CUdevice_attribute, CUdevice))dlsym(cuda, "cuDeviceGetAttribute");
    CUresult (*get_mem)(size_t *, CUdevice) =
        (CUresult(*)(size_t *, CUdevice))dlsym(cuda, "cuDeviceTotalMem_v2");
    CUresult (*get_uuid)(CUuuid *, CUdevice) =
        (CUresult(*)(CUuuid *, CUdevice))dlsym(cuda, "cuDeviceGetUuid_v2");
    CUresult (*drv_version)(int *) = (CUresult(*)(int *))dlsym(cuda, "cuDriverGetVersion");
    if (drv_version) drv_version(&ip_cupti_facts.driver_version);
    const char *rt_libs[] = {"libcudart.so.13", "libcudart.so.12", NULL};
    int (*rt_version)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
    for (int i = 0; !rt_version && rt_libs[i]; i++) {
        void *rt = dlopen(rt_libs[i], RTLD_NOW | RTLD_NOLOAD);
        if (rt) rt_version = (int (*)(int *))dlsym(rt, "cudaRuntimeGetVersion");
    }
    if (rt_version) rt_version(&ip_cupti_facts.runtime_version);
    int n = 0;
    if (!get_count || get_count(&n) != CUDA_SUCCESS) return;
    if (n > IP_CUPTI_MAX_DEVICES) n = IP_CUPTI_MAX_DEVICES;
    for (int d = 0; d < n; d++) {
        struct ip_cupti_device *dev = &ip_cupti_facts.dev[d];
        int v = 0;
        size_t mem = 0;
        dev->id = d;
        if (get_name) get_name(dev->name, sizeof dev->name, d);
        if (get_mem && get_mem(&mem, d) == CUDA_SUCCESS) dev->memory = (int64_t)mem;
#define ATTR(field, a) dev->field = get_attr && get_attr(&v, a, d) == CUDA_SUCCESS ? v : -1
        ATTR(sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        ATTR(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        ATTR(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        ATTR(clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
        ATTR(mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
        ATTR(bus_width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
#undef ATTR
        CUuuid u;
        if (get_uuid && get_uuid(&u, d) == CUDA_SUCCESS)
            ip_cupti_uuid_text(&u, dev->uuid, sizeof dev->uuid);
    }
    ip_cupti_facts.ndevices = n;
}

/* ---- the collector ------------------------------------------------------------------------ */

static void cupti_init(void)
{
    if (!ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ON)) {
        ip_collector_status(IP_COLLECTOR_CUPTI, "passive", "INFPROF_CUPTI=0");
        return;
    }
    /* Before any hook runs: every change of a thread's state is then in the writer's history. */
    ip_attrib_by_time = ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ATTRIBUTION) == 1;
    if (ip_lifecycle_library_path(cupti_self_path, sizeof cupti_self_path) != 0) {
        /* Linked into a program (tests, benchmarks): CUPTI is driven by the replay path. */
        cupti_self_path[0] = 0;
        return;
    }
    const char *current = getenv("CUDA_INJECTION64_PATH");
    char current_real[PATH_MAX];
    if (current && *current &&
        !(realpath(current, current_real) && strcmp(current_real, cupti_self_path) == 0)) {
        /* Nsight Systems, Nsight Compute and compute-sanitizer inject themselves this way: they
         * own CUPTI, we stay out of their way and say so once. */
        const char *tool = ip_cupti_holder_tool(current);
        ip_warn("CUDA_INJECTION64_PATH names another tool (%s%s%.160s): CUDA activity is not"
                " recorded (passive mode); phases, memory, cuDNN and NVTX still are",
                tool ? tool : "", tool ? ", " : "", current);
        ip_collector_status(IP_COLLECTOR_CUPTI, "passive",
                            "another CUDA injection library is set (CUDA_INJECTION64_PATH=%.120s)",
                            current);
        return;
    }
    setenv("CUDA_INJECTION64_PATH", cupti_self_path, 1);
    cupti_chosen = 1;
    ip_collector_status(IP_COLLECTOR_CUPTI, "off", "the program did not initialise CUDA");
}

/* Hand over everything CUPTI still holds, while CUDA is up. No lock of ours is held here:
 * CUPTI calls the buffer callbacks under its own lock, from this thread or its worker. */
static void cupti_stop(void)
{
    if (!atomic_load(&cupti_active) || atomic_exchange(&cupti_stopped, 1)) return;
    CUPTI_CALL(ActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* Records lost while no buffer was free are counted on CUPTI's global queue, which a
     * completion callback may not have read since. */
    size_t dropped = 0;
    if (CUPTI_CALL(ActivityGetNumDroppedRecords, NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
        ip_cupti_pool_add_dropped(dropped);
    cupti_gather_facts();
    ip_writer_wake();
}

static void cupti_note_no_driver(void)
{
    /* Why CUDA collection stayed off, in one quiet line of metadata. Not when passive: that
     * status already says why (under Nsight the driver is loaded and never calls us). */
    if (atomic_load(&cupti_injected) || !cupti_chosen) return;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *runtime = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!runtime) runtime = dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD);
    if (driver)
        ip_collector_status(IP_COLLECTOR_CUPTI, "off",
                            "the CUDA driver is loaded but never"
                            " called InitializeInjection");
    else if (runtime)
        ip_collector_status(IP_COLLECTOR_CUPTI, "off",
                            "no CUDA driver (libcuda.so.1 not"
                            " found): CUDA calls fail");
}

static void cupti_collector_stop(void)
{
    cupti_stop();
    cupti_note_no_driver();
}

static void cupti_snapshot(void)
{
    ip_cupti_pool_snapshot();
}

static void cupti_atfork_child(void)
{
    if (atomic_load(&cupti_active))
        ip_collector_status(IP_COLLECTOR_CUPTI, "off",
                            "forked child (CUDA does not survive"
                            " fork)");
    atomic_store(&cupti_active, 0);
    atomic_store(&cupti_stopped, 1);
    ip_cupti_pool_atfork_child();
}

extern const char ip_schema_cupti[]; /* collectors/cupti.sql, embedded at build time */

const struct ip_collector ip_collector_cupti = {
    .name = "cupti",
    .title = "CUPTI",
    .settings = &ip_cupti_cfg,
    .schema = ip_schema_cupti,
    .init = cupti_init,
    .stop = cupti_collector_stop,
    .atfork_child = cupti_atfork_child,
    .snapshot = cupti_snapshot,
    .prepare = ip_cupti_ingest_prepare,
    .ingest = ip_cupti_ingest_launch,
    .flush = ip_cupti_ingest_flush,
    .finish = ip_cupti_ingest_finish,
};
