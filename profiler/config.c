/*
 * config.c: the configuration table and its parser. Shared by the preloaded library (which reads
 * the environment once, in its constructor) and the `infprof` CLI (which prints the table).
 */
#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
const struct ip_cfg_entry ip_cfg_table[IP_CFG_COUNT] = {
    [IP_CFG_ENABLE] = {"INFPROF_ENABLE", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Master switch: 0 leaves the program completely alone."},
    [IP_CFG_MODE] = {"INFPROF_MODE", IP_CFG_ENUM, "default", 0, 0, "default|full",
        "'default' records what the report needs at the least cost (docs/performance.md);"
        " 'full' adds every CUDA API call (INFPROF_CUDA_API=1) and an NVTX range per cuDNN call"
        " (INFPROF_CUDNN_NVTX=1), unless those are set themselves."},
    [IP_CFG_OUTPUT] = {"INFPROF_OUTPUT", IP_CFG_STR, "", 0, 0, NULL,
        "Database path; %p pid, %h host, %% a percent sign. Unset: infprof.db, then infprof-2.db,"
        " ... An existing file is never overwritten (a warning and a fresh name instead)."},
    [IP_CFG_LOG] = {"INFPROF_LOG", IP_CFG_INT, "1", 0, 3, NULL,
        "Messages on stderr: 0 none, 1 warnings (default), 2 info, 3 debug."},
    [IP_CFG_FORK] = {"INFPROF_FORK", IP_CFG_ENUM, "child", 0, 0, "child|off",
        "A forked child: 'child' profiles it into its own file (NAME-PID.db, created on its first"
        " event), 'off' stops profiling in the child. It never writes the parent's database."},
    [IP_CFG_FOLLOW_EXEC] = {"INFPROF_FOLLOW_EXEC", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Programs the profiled process executes are profiled too, each into NAME-PID.db."},
    [IP_CFG_BUFFER_MB] = {"INFPROF_BUFFER_MB", IP_CFG_INT, "256", 4, 4096, NULL,
        "Memory for every thread's event buffers together, MiB. A thread's buffer starts at"
        " 16 KiB and grows while the writer is behind; pages are used only as they fill."},
    [IP_CFG_BUFFER_WAIT_MS] = {"INFPROF_BUFFER_WAIT_MS", IP_CFG_INT, "100", 0, 10000, NULL,
        "When the buffers are full, a thread waits for the writer while it drains; an event is"
        " dropped (counted by phase, shown) only once the writer has been silent this long, ms,"
        " or after ten times this in all. 0: never wait."},
    [IP_CFG_FLUSH_MS] = {"INFPROF_FLUSH_MS", IP_CFG_INT, "100", 1, 1000, NULL,
        "Writer period, ms: how often buffers are drained (the database is committed at least"
        " every second)."},
    [IP_CFG_FINISH_TIMEOUT_MS] = {"INFPROF_FINISH_TIMEOUT_MS", IP_CFG_INT, "10000", 100,
        600000, NULL, "Longest wait at exit for the last events to be written, ms (100 ms at most"
        " on a fatal signal: the process dies on time, the database keeps its last commit)."},
    [IP_CFG_DISK_RESERVE_MB] = {"INFPROF_DISK_RESERVE_MB", IP_CFG_INT, "256", 0, 1 << 20, NULL,
        "Free space, MiB, that infprof leaves on the disk of its database for the program: it"
        " does not start below twice this, and stops recording (counted, shown) below it."},
    [IP_CFG_CUPTI] = {"INFPROF_CUPTI", IP_CFG_BOOL, "1", 0, 1, NULL,
        "CUDA activity through CUPTI. 0 is passive mode: no CUPTI (leave it to Nsight or"
        " torch.profiler); interposers and NVTX keep working."},
    [IP_CFG_CUPTI_PATH] = {"INFPROF_CUPTI_PATH", IP_CFG_STR, "", 0, 0, NULL,
        "libcupti to load; unset: libcupti.so.13 from the loader path or the CUDA install."},
    [IP_CFG_CUPTI_BUFFER_KB] = {"INFPROF_CUPTI_BUFFER_KB", IP_CFG_INT, "4096", 64, 262144, NULL,
        "Size of one CUPTI activity buffer, KiB."},
    [IP_CFG_CUPTI_BUFFERS] = {"INFPROF_CUPTI_BUFFERS", IP_CFG_INT, "16", 2, 4096, NULL,
        "CUPTI buffers in the pool, allocated once at start; none free means records are dropped"
        " (counted)."},
    [IP_CFG_CUPTI_FLUSH_MS] = {"INFPROF_CUPTI_FLUSH_MS", IP_CFG_INT, "500", 0, 60000, NULL,
        "CUPTI flush period, ms (0: CUPTI's own policy)."},
    [IP_CFG_CUDA_API] = {"INFPROF_CUDA_API", IP_CFG_BOOL, "0", 0, 1, NULL,
        "Record every CUDA runtime and driver API call: host time per call in the API summary"
        " (1 with INFPROF_MODE=full). Launches, copies and their latency are recorded either"
        " way."},
    [IP_CFG_CUPTI_CALLBACKS] = {"INFPROF_CUPTI_CALLBACKS", IP_CFG_BOOL, "1", 0, 1, NULL,
        "The launch callbacks that tie every kernel and copy to its thread, phase, iteration and"
        " cuDNN call. 0 only to measure what they cost: kernels are then unattributed."},
    [IP_CFG_ATTRIBUTION] = {"INFPROF_ATTRIBUTION", IP_CFG_ENUM, "callbacks", 0, 0,
        "callbacks|records",
        "How a kernel or copy finds the thread, phase, iteration and cuDNN call that issued it."
        " 'callbacks': a CUPTI callback on every launch, on the launching thread. 'records': no"
        " callback; CUPTI's API records of the issuing calls only, matched to each thread's"
        " history by time on the writer side (docs/cupti.md). Its cost on a GPU is not yet"
        " measured (docs/performance.md)."},
    [IP_CFG_TORCH] = {"INFPROF_TORCH", IP_CFG_BOOL, "1", 0, 1, NULL,
        "libtorch awareness: phases, tensor memory, iterations."},
    [IP_CFG_CPU_MEMORY] = {"INFPROF_CPU_MEMORY", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Also record CPU tensor memory (turns on c10::memoryProfilingEnabled: a mutex and a hash"
        " insert per CPU allocation)."},
    [IP_CFG_POLL] = {"INFPROF_POLL", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Confirm the grad mode by polling libtorch's getters at each kernel launch and iteration."},
    [IP_CFG_ITERATION_RANGE] = {"INFPROF_ITERATION_RANGE", IP_CFG_STR, "iteration*", 0, 0, NULL,
        "Glob (* and ?) for NVTX ranges and record_function scopes that mark one iteration;"
        " 'batch=N' in the name gives the batch size. Empty: none."},
    [IP_CFG_RECORD_FUNCTION] = {"INFPROF_RECORD_FUNCTION", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Take libtorch's user scopes (torch.profiler.record_function, RECORD_USER_SCOPE) named"
        " like INFPROF_ITERATION_RANGE, and scripted modules' forward called from Python, as"
        " iterations: RecordFunction callbacks on those two scope kinds only."},
    [IP_CFG_BATCH] = {"INFPROF_BATCH", IP_CFG_INT, "0", 0, 1000000000, NULL,
        "Items per iteration, for items/s (0: unknown, unless the range text says batch=N)."},
    [IP_CFG_NVTX] = {"INFPROF_NVTX", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Capture the program's own NVTX ranges (chained: a tool injected before us still gets"
        " them)."},
    [IP_CFG_NVTX_EMIT] = {"INFPROF_NVTX_EMIT", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Emit one NVTX range per phase in domain 'infprof' (seen by Nsight Systems)."},
    [IP_CFG_CUDNN] = {"INFPROF_CUDNN", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Record cuDNN calls (interposition)."},
    [IP_CFG_CUDNN_NVTX] = {"INFPROF_CUDNN_NVTX", IP_CFG_BOOL, "0", 0, 1, NULL,
        "Wrap each cuDNN call in an NVTX range in domain 'infprof', named after the operation,"
        " for Nsight Systems (1 with INFPROF_MODE=full)."},
    [IP_CFG_PYTHON] = {"INFPROF_PYTHON", IP_CFG_BOOL, "1", 0, 1, NULL,
        "In a Python process, the outermost nn.Module call is an iteration and a DataLoader's"
        " __next__ the wait for data: PyTorch's global module hooks, installed by our"
        " sitecustomize (PYTHONPATH, restored at once) when the program imports torch."},
    [IP_CFG_OPERATORS] = {"INFPROF_OPERATORS", IP_CFG_BOOL, "0", 0, 1, NULL,
        "Record every PyTorch operator call (RecordFunction scope FUNCTION: name, thread, start,"
        " end, depth, self time), table torch_operators. Opt-in: about 0.6 us per operator call (libtorch"
        " leaves its fast path; about 4% of the CPU sample's bf16 iteration; docs/performance.md)."},
    [IP_CFG_ENERGY_MS] = {"INFPROF_ENERGY_MS", IP_CFG_INT, "20", 0, 10000, NULL,
        "Energy, power, clocks and throttle reasons of the GPUs the process uses (NVML) and of the"
        " CPU (RAPL, cpufreq), read every this many ms by a thread of ours, and at every phase"
        " change, start and end (docs/energy.md). 0: off."},
    [IP_CFG_NVML] = {"INFPROF_NVML", IP_CFG_ENUM, "auto", 0, 0, "auto|start|off",
        "When NVML (GPU energy) is loaded; never once CUDA has started, which hung the program's"
        " next cuBLAS start on an H100 (docs/energy.md). auto: at start in a process that has a"
        " CUDA library loaded (libcudart, libcuda, libtorch_cuda), or when Python imports a CUDA"
        " build of torch; start: at start in every process; off: never (no GPU energy)."},
    [IP_CFG_NVML_PATH] = {"INFPROF_NVML_PATH", IP_CFG_STR, "", 0, 0, NULL,
        "libnvidia-ml to load; unset: libnvidia-ml.so.1 from the loader path (the driver's)."},
    [IP_CFG_ENERGY_SYSFS] = {"INFPROF_ENERGY_SYSFS", IP_CFG_STR, "/sys", 0, 0, NULL,
        "Where the CPU's RAPL counters (class/powercap) and cpufreq files are read (tests)."},
};
/* clang-format on */

static int64_t cfg_num[IP_CFG_COUNT];
static const char *cfg_text[IP_CFG_COUNT];
static unsigned char cfg_present[IP_CFG_COUNT];

static int parse_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (unsigned i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

static int parse_enum(const char *choices, const char *s, int64_t *out)
{
    size_t len = strlen(s);
    int64_t index = 0;
    for (const char *p = choices; *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncasecmp(p, s, n) == 0) return *out = index, 0;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

int ip_cfg_parse(enum ip_cfg_id id, const char *text, int64_t *num_out)
{
    const struct ip_cfg_entry *e = &ip_cfg_table[id];
    int64_t v = 0;
    switch (e->type) {
    case IP_CFG_BOOL:
        if (parse_bool(text, &v) != 0) return -1;
        break;
    case IP_CFG_ENUM:
        if (parse_enum(e->choices, text, &v) != 0) return -1;
        break;
    case IP_CFG_INT: {
        char *end;
        errno = 0;
        long long n = strtoll(text, &end, 10);
        if (errno || end == text || *end || n < e->min || n > e->max) return -1;
        v = n;
        break;
    }
    case IP_CFG_STR:
        break;
    }
    if (num_out) *num_out = v;
    return 0;
}

static void cfg_warn_bad(const struct ip_cfg_entry *e, const char *value)
{
    switch (e->type) {
    case IP_CFG_BOOL:
        ip_warn("%s='%.64s' is not 0 or 1; using the default %s", e->name, value, e->dflt);
        break;
    case IP_CFG_INT:
        ip_warn("%s='%.64s' is not a whole number in %lld..%lld; using the default %s", e->name,
                value, (long long)e->min, (long long)e->max, e->dflt);
        break;
    case IP_CFG_ENUM:
        ip_warn("%s='%.64s' is not one of %s; using the default %s", e->name, value, e->choices,
                e->dflt);
        break;
    case IP_CFG_STR:
        break;
    }
}

void ip_cfg_load(void)
{
    /* INFPROF_LOG first, so that warnings about the others honour it. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < IP_CFG_COUNT; i++) {
            if ((pass == 0) != (i == IP_CFG_LOG)) continue;
            const struct ip_cfg_entry *e = &ip_cfg_table[i];
            const char *value = getenv(e->name);
            cfg_present[i] = value != NULL;
            cfg_text[i] = value ? value : e->dflt;
            ip_cfg_parse((enum ip_cfg_id)i, e->dflt, &cfg_num[i]);
            if (value && e->type != IP_CFG_STR &&
                ip_cfg_parse((enum ip_cfg_id)i, value, &cfg_num[i]) != 0) {
                cfg_warn_bad(e, value);
                cfg_text[i] = e->dflt;
            }
        }
        if (pass == 0) ip_log_set_level((int)cfg_num[IP_CFG_LOG]);
    }
    /* Full mode: the costlier records too, unless the program's environment says otherwise. */
    static const enum ip_cfg_id full[] = {IP_CFG_CUDA_API, IP_CFG_CUDNN_NVTX};
    if (cfg_num[IP_CFG_MODE] == 1)
        for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
            if (!cfg_present[full[i]]) cfg_num[full[i]] = 1, cfg_text[full[i]] = "1";
}

int64_t ip_cfg_int(enum ip_cfg_id id)
{
    return cfg_num[id];
}

const char *ip_cfg_str(enum ip_cfg_id id)
{
    return cfg_text[id] ? cfg_text[id] : ip_cfg_table[id].dflt;
}

int ip_cfg_is_set(enum ip_cfg_id id)
{
    return cfg_present[id];
}
