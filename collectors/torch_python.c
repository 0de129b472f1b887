/*
 * torch_python.c: the libtorch collector's Python bridge (docs/python.md). A Python program
 * marks no iteration; its outermost nn.Module call is one. collectors/python/ holds the Python
 * half: a sitecustomize that, once the program imports torch, installs PyTorch's global module
 * hooks (collectors/python/_infprof_hooks.py) and calls the functions below (through ctypes, or
 * begin and end as the builtins infprof_py_builtin makes).
 *
 *  - init (constructor time): in a Python interpreter (Py_IsInitialized is in the process) with
 *    INFPROF_PYTHON on, our Python directory goes first on PYTHONPATH; the program's own value is
 *    kept in INFPROF_PYTHONPATH_WAS ("-" unset, "+value") and the sitecustomize puts it back at
 *    once, then runs the program's own sitecustomize. Under -S, -I or -E (read from the command
 *    line) nothing could take it back off: it is never put there, and the metadata says why.
 *  - infprof_py_begin / infprof_py_end: a module call that is an iteration, source 5, labelled
 *    with the series name the Python side gives (the module's class, "#2" for a second instance)
 *    and its batch. Calls inside it (TorchScript scopes) are not iterations of their own.
 *  - infprof_py_setup: the thread is inside torch.jit.trace; its check calls are set-up.
 *  - infprof_py_state: what the Python side did (installed, or why not; a DataLoader worker;
 *    an error of ours), for the run metadata (python_module_hooks). Its first call, as the hooks
 *    install right after `import torch`, is when NVML is loaded if torch's CUDA libraries are
 *    mapped: before CUDA starts (collectors/nvml.c says why). A Python process whose
 *    sitecustomize never took INFPROF_PYTHONPATH_WAS out ran without it: the metadata says so.
 *  - infprof_py_unseen: a module call begun before its thread was watched (not timed, counted).
 *  - infprof_py_threads: the Python side watches every thread from now on (a second thread
 *    called a model while the hooks were armed). Until then, another Python thread's torch work
 *    while the one watched thread's forward is open (the hooks disarmed: that thread's module
 *    calls go unseen) is caught by the allocator's reports (ip_torch_py_other), and the watched
 *    forward's end (infprof_py_end returns 1) has the Python side watch every thread.
 *  - infprof_py_builtin: begin and end as Python builtins (no ctypes crossing per call).
 *
 * Every entry fails open: before the pipeline runs, or with the torch collector off, it returns.
 */
#include "torch_config.h"
#include "registry.h"
#include "torch_internal.h"
#include "torch_pyapi.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/fdguard.h"
#include "../profiler/iteration.h"
#include "../profiler/log.h"
#include "../profiler/phase.h"
#include "../profiler/process.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"
#include "../profiler/watch.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IP_EXPORT __attribute__((visibility("default")))

/* 0 not a Python process (or INFPROF_PYTHON=0), 1 PYTHONPATH set, the Python side not heard from
 * yet, then the state it reported (PY_*). */
enum {
    PY_NONE,
    PY_WAITING,
    PY_SITE,
    PY_HOOKED,
    PY_NO_HOOKS,
    PY_NO_DIR,
    PY_WORKER,
    PY_FLAGS,
    PY_BROKEN
};
static _Atomic int py_state;
/* Module calls that began before their thread was watched (not timed), and iterations open now
 * (begun, not ended: one that raised before PyTorch 2.1, or the program ended inside it). */
static _Atomic uint64_t py_unseen;
static _Atomic int64_t py_open;
/* Another Python thread's torch work while the watched thread's forward was open: when it was
 * first seen (0 none pending), and what was told (times, and the time until every thread was
 * watched). py_all: every thread is watched, nothing to catch. */
_Atomic uint32_t ip_torch_py_solo;
static _Atomic uint64_t py_other_since, py_late_n, py_late_ns;
static _Atomic int py_all;
static __thread int8_t py_kind __attribute__((tls_model("initial-exec"))); /* 1 Python, -1 not */

/* Our Python directory: <libdir>/../share/infprof/python (an install and the build tree alike). */
static int python_dir(char *out, size_t n)
{
    Dl_info info;
    if (!dladdr((void *)python_dir, &info) || !info.dli_fname) return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash) return 0;
    int len = snprintf(out, n, "%.*s/../share/infprof/python", (int)(slash - info.dli_fname),
                       info.dli_fname);
    if (len < 0 || (size_t)len >= n) return 0;
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/sitecustomize.py", out);
    return access(probe, R_OK) == 0;
}

/* The interpreter's own options (before the script, -c or -m) hold -S, -I or -E: no site to run
 * our sitecustomize, or PYTHONPATH ignored, so nothing would take our directory back off the path
 * and the environment: it is never put there. */
static int python_flags_forbid(void)
{
    char buf[4096];
    ssize_t n = ip_fdguard_read_own("/proc/self/cmdline", buf, sizeof buf);
    if (n <= 0) return 0;
    const char *arg = buf, *end = buf + n;
    arg += strlen(arg) + 1; /* the interpreter */
    for (; arg < end; arg += strlen(arg) + 1) {
        if (arg[0] != '-' || !arg[1] || !strcmp(arg, "--")) return 0; /* the script, stdin */
        if (arg[1] == '-') {                                          /* --long options */
            if (!strcmp(arg, "--check-hash-based-pycs")) arg += strlen(arg) + 1;
            continue;
        }
        for (const char *c = arg + 1; *c; c++) {
            if (*c == 'S' || *c == 'I' || *c == 'E') return 1;
            if (*c == 'c' || *c == 'm') return 0; /* the program follows */
            if (*c == 'W' || *c == 'X') {         /* their value: the rest, or the next one */
                if (!c[1]) arg += strlen(arg) + 1;
                break;
            }
        }
    }
    return 0;
}

void ip_torch_python_init(void)
{
    if (!ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_PYTHON) ||
        !dlsym(RTLD_DEFAULT, "Py_IsInitialized"))
        return;
    if (python_flags_forbid()) {
        atomic_store(&py_state, PY_FLAGS);
        return;
    }
    char dir[4096];
    if (!python_dir(dir, sizeof dir)) {
        atomic_store(&py_state, PY_NO_DIR);
        ip_info("python: our sitecustomize.py was not found beside the library; module calls are"
                " not iterations");
        return;
    }
    const char *was = getenv("PYTHONPATH");
    size_t need = strlen(dir) + (was ? strlen(was) : 0) + 2;
    char *path = malloc(need), *keep = malloc((was ? strlen(was) : 0) + 2);
    if (!path || !keep) {
        free(path);
        free(keep);
        return;
    }
    snprintf(path, need, "%s%s%s", dir, was && was[0] ? ":" : "", was ? was : "");
    snprintf(keep, (was ? strlen(was) : 0) + 2, "%s%s", was ? "+" : "-", was ? was : "");
    if (setenv("INFPROF_PYTHONPATH_WAS", keep, 1) == 0 && setenv("PYTHONPATH", path, 1) == 0)
        atomic_store(&py_state, PY_WAITING);
    free(path);
    free(keep);
}

const char *ip_torch_python_status(void)
{
    switch (atomic_load(&py_state)) {
    case PY_WAITING:
        /* The sitecustomize takes INFPROF_PYTHONPATH_WAS out of the environment first thing
         * (imports nothing to tell us more): still there, it never ran. */
        if (!getenv("INFPROF_PYTHONPATH_WAS")) return "waiting: torch was never imported";
        return "off: our sitecustomize never ran (python -S, -I or -E, or PYTHONPATH replaced):"
               " module calls are not iterations, detection is used instead";
    case PY_SITE:
        return "waiting: torch was never imported";
    case PY_HOOKED:
        return "on: the outermost nn.Module call is an iteration";
    case PY_NO_HOOKS:
        return "off: this torch has no global module hooks; detection is used instead";
    case PY_NO_DIR:
        return "off: our sitecustomize.py was not found beside the library";
    case PY_WORKER:
        return "worker: a DataLoader worker process, it makes batches (no iterations)";
    case PY_BROKEN:
        return "off: an error inside our module hooks took them out (fail open); iterations"
               " until then are kept";
    case PY_FLAGS:
        return "off: python ran with -S, -I or -E (no site, or PYTHONPATH ignored), so our"
               " sitecustomize could not run: module calls are not iterations, detection is used"
               " instead";
    default:
        return "";
    }
}

/* ---- the bridge (under the GIL) ------------------------------------------------------------- */

/* The module calls open on this thread that are iterations (the Python side opens one at a
 * time; a few more are room to spare). */
#define PY_OPEN_MAX 4
static __thread struct {
    uint32_t n;
    struct {
        uint32_t iter;
        uint64_t start, nvtx;
    } v[PY_OPEN_MAX];
} py __attribute__((tls_model("initial-exec")));

IP_EXPORT int infprof_py_state(int state);
int infprof_py_state(int state)
{
    /* 0: the hooks are being installed, torch just imported: a CUDA build of it has its CUDA
     * libraries mapped, and NVML must be loaded before CUDA starts (nvml.c). */
    if (state == 0) ip_watch_gpu_soon();
    if ((state == PY_WORKER || state == PY_BROKEN || (state >= PY_SITE && state <= PY_NO_HOOKS)) &&
        atomic_load(&py_state) != PY_NONE)
        atomic_store(&py_state, state);
    return (atomic_load_explicit(&ip_torch_found, memory_order_relaxed) & IP_TORCH_ON) != 0;
}

/* A module call that may be an iteration begins on this thread: 1 it is one (the Python side
 * then ends it with infprof_py_end), 0 it is not: inside torch.jit.trace, while a DataLoader
 * makes a batch (a transform of the dataset's), not recording, or no room. */
IP_EXPORT int infprof_py_begin(void);
int infprof_py_begin(void)
{
    if (ip_torch_in_setup() || py.n >= PY_OPEN_MAX || ip_torch_in_input_wait() ||
        !ip_torch_enter_active())
        return 0;
    if (ip_torch_ready(1)) {
        ip_torch_scope_arm();
        if (ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_POLL)) ip_torch_poll(IP_POLL_SAFE);
    }
    if (ip_self.jit_depth < UINT8_MAX) ip_self.jit_depth++; /* its TorchScript is inside it */
    uint32_t k = py.n++;
    if (!k && !atomic_load_explicit(&py_all, memory_order_relaxed))
        atomic_store_explicit(&ip_torch_py_solo, ip_thread_tid(), memory_order_release);
    py.v[k].iter = ip_torch_iter_open(&py.v[k].start, &py.v[k].nvtx); /* its reports folded */
    atomic_fetch_add_explicit(&py_open, 1, memory_order_relaxed);
    ip_hook_leave();
    return 1;
}

IP_EXPORT void infprof_py_unseen(void);
void infprof_py_unseen(void)
{
    atomic_fetch_add_explicit(&py_unseen, 1, memory_order_relaxed);
}

void ip_torch_python_counts(uint64_t *unseen, int64_t *open)
{
    *unseen = atomic_load(&py_unseen);
    *open = atomic_load(&py_open);
}

/* A thread that is not the watched one did torch work while the watched thread's forward was
 * open: noted once (its time), when it is a Python thread (the interpreter's thread state for
 * it; libtorch's own pool threads have none, and call no module). Lock-free: an allocator's
 * report calls it, a CUDA one under the allocator's mutex. */
void ip_torch_py_other(void)
{
    uint32_t solo = atomic_load_explicit(&ip_torch_py_solo, memory_order_acquire);
    if (!solo || solo == ip_thread_tid() || atomic_load_explicit(&py_all, memory_order_relaxed) ||
        atomic_load_explicit(&py_other_since, memory_order_relaxed))
        return;
    if (!py_kind) /* looked up before the watched thread's first forward began (the builtins) */
        py_kind = !ip_py.gil_this || ip_py.gil_this() ? 1 : -1;
    if (py_kind < 0) return;
    uint64_t none = 0;
    atomic_compare_exchange_strong(&py_other_since, &none, ip_clock_now() | 1);
}

/* A forked child's database starts empty: its counts are its own (the forking thread's open
 * calls go on in it; the other threads' are not there). */
void ip_torch_python_atfork_child(void)
{
    atomic_store(&ip_torch_py_solo, 0);
    atomic_store(&py_other_since, 0);
    atomic_store(&py_late_n, 0);
    atomic_store(&py_late_ns, 0);
    atomic_store(&py_unseen, 0);
    atomic_store(&py_open, (int64_t)py.n);
}

/* Every thread is watched from now on: another Python thread's work told while the watched
 * thread's forward ran is counted, with the time its calls went unseen (to `now`), whichever
 * way the watching began (that forward's end, or the Python side seeing a second thread call a
 * model: the same model from a third thread during it, 2026-11-29). 1: one was told. */
static int py_watch_all(uint64_t now)
{
    atomic_store(&py_all, 1);
    atomic_store(&ip_torch_py_solo, 0);
    uint64_t since = atomic_exchange(&py_other_since, 0) & ~1ull;
    if (!since) return 0;
    atomic_fetch_add(&py_late_n, 1);
    atomic_fetch_add(&py_late_ns, now > since ? now - since : 0);
    return 1;
}

IP_EXPORT void infprof_py_threads(void);
void infprof_py_threads(void)
{
    if (!atomic_load(&py_all)) py_watch_all(ip_clock_now());
}

void ip_torch_python_late(uint64_t *n, uint64_t *ns)
{
    *n = atomic_load(&py_late_n);
    *ns = atomic_load(&py_late_ns);
}

/* The innermost open module call ended. label: the series' name; batch: the leading dimension of
 * its first tensor argument, 0 unknown; ok: 0 when it raised (not an iteration). Returns 1 when
 * this was the watched thread's outermost call and another Python thread did torch work while it
 * ran: the Python side is to watch every thread from now on (counted here: py_watch_all). */
IP_EXPORT int infprof_py_end(const char *label, long long batch, int ok);
int infprof_py_end(const char *label, long long batch, int ok)
{
    uint64_t end = ip_clock_now();
    if (!py.n) return 0;
    uint32_t k = --py.n;
    int late = 0;
    if (!k) {
        uint32_t me = ip_thread_tid();
        atomic_compare_exchange_strong(&ip_torch_py_solo, &me, 0);
        late = !atomic_load(&py_all) && atomic_load(&py_other_since) && py_watch_all(end);
    }
    atomic_fetch_sub_explicit(&py_open, 1, memory_order_relaxed);
    if (ip_self.jit_depth) ip_self.jit_depth--;
    ip_iter_end(py.v[k].iter); /* its fold written */
    if (!ok) return late;
    if (!ip_recording_noted() || !ip_hook_enter()) return late; /* after the finish: counted */
    ip_torch_iter_emit(py.v[k].iter, py.v[k].start, end, py.v[k].nvtx, batch > 0 ? batch : 0, 5,
                       label);
    ip_hook_leave();
    return late;
}

/* Python's garbage collector starts (start 1) or stops (0) a collection of this generation on
 * this thread (gc.callbacks): a pause of IP_GC_MIN_NS or more becomes a gc_pauses row, shorter
 * ones are counted. */
static _Thread_local uint64_t gc_start __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t gc_short_n, gc_short_ns;

IP_EXPORT void infprof_py_gc(int start, int generation);
void infprof_py_gc(int start, int generation)
{
    uint64_t now = ip_clock_now();
    if (start) {
        gc_start = now;
        return;
    }
    uint64_t from = gc_start;
    gc_start = 0;
    if (!from || now < from || !ip_recording()) return;
    if (now - from < IP_GC_MIN_NS) {
        atomic_fetch_add_explicit(&gc_short_n, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&gc_short_ns, now - from, memory_order_relaxed);
        return;
    }
    if (!ip_hook_enter()) return;
    struct ip_ring *r;
    struct ip_ev_torch_gc *e = ip_ring_begin(sizeof *e, &r);
    if (e) {
        e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_GC), sizeof *e,
                              ip_self.phase};
        e->start = from, e->end = now, e->generation = generation, e->pad = 0;
        ip_ring_commit(r, sizeof *e);
    }
    ip_hook_leave();
}

void ip_torch_gc_counts(uint64_t *short_n, uint64_t *short_ns)
{
    *short_n = atomic_load(&gc_short_n);
    *short_ns = atomic_load(&gc_short_ns);
}

IP_EXPORT void infprof_py_setup(int on);
void infprof_py_setup(int on)
{
    ip_torch_setup(on);
}

/* ---- the same two calls as Python builtins --------------------------------------------------
 * A ctypes call costs about 0.4 us on a small VM, twice per forward. The library can instead
 * hand Python two builtin functions of its own (CPython's C API, looked up in the process: the
 * interpreter exports it), whose calls cost what any builtin's do. PyMethodDef's layout and the
 * calling conventions used (METH_NOARGS, METH_FASTCALL) are CPython's stable ABI (3.10+; the
 * same in 3.7-3.9). Missing anything, NULL: the Python side keeps ctypes. Under the GIL. */
static PyO *builtins[2];

static PyO *pyc_begin(PyO *self, PyO *unused)
{
    (void)self;
    (void)unused;
    return ip_py.bool_from(infprof_py_begin());
}

/* end(label: bytes, batch: int, ok: bool) -> bool: watch every thread from now on */
static PyO *pyc_end(PyO *self, PyO *const *args, intptr_t nargs)
{
    (void)self;
    if (nargs == 3) {
        const char *label = ip_py.bytes(args[0]);
        long long batch = ip_py.as_ll(args[1]), ok = ip_py.as_ll(args[2]);
        if (!label || batch == -1 || ok == -1) ip_py.clear(); /* not ours to raise */
        return ip_py.bool_from(infprof_py_end(label ? label : "", batch, ok > 0));
    }
    ip_py.incref(ip_py.none);
    return ip_py.none;
}

static struct ip_py_method_def pyc_defs[2] = {
    {"infprof_begin", (void *)pyc_begin, IP_PY_METH_NOARGS, NULL},
    {"infprof_end", (void *)pyc_end, IP_PY_METH_FASTCALL, NULL},
};

/* Builtin `which` (0 begin, 1 end), a borrowed reference the library keeps; NULL none. Call it
 * with the GIL held (ctypes.PyDLL). */
IP_EXPORT void *infprof_py_builtin(int which);
void *infprof_py_builtin(int which)
{
    if (which < 0 || which > 1) return NULL;
    if (!builtins[0]) {
        if (!ip_py_resolve()) return NULL;
        PyO *b = ip_py.new_fn(&pyc_defs[0], NULL, NULL),
            *e = ip_py.new_fn(&pyc_defs[1], NULL, NULL);
        if (!b || !e) {
            ip_py.clear();
            return NULL; /* a reference leaked at most, once */
        }
        builtins[1] = e;
        builtins[0] = b;
    }
    return builtins[which];
}
