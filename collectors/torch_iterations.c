/*
 * torch_iterations.c: the iterations the libtorch collector sees (app side), and their one event.
 *
 *  - Calls: an outermost TorchScript Method::operator() or AOTInductor run (hooked in torch.c)
 *    is an iteration of its thread, source 1 or 4; nested calls are not counted.
 *  - record_function scopes: a user scope named like INFPROF_ITERATION_RANGE
 *    (torch.profiler.record_function("iteration"), C++ RECORD_USER_SCOPE) is an iteration,
 *    source 3, exactly like an NVTX range of that name: for Python programs that mark their steps
 *    for torch.profiler but give no NVTX range.
 *  - DataLoader: the user scope a DataLoader opens around each __next__ is the loop's wait for
 *    data (an input-wait event, table input_waits), not an iteration.
 *  - TorchScript from Python: calling a scripted module from Python never goes through
 *    Method::operator(); libtorch opens a TorchScript-function scope named after the method
 *    instead. The outermost "forward" of a thread, outside any hooked call, is an iteration,
 *    source 1 (a call that raises counts too: a scope cannot tell). Other names are left out:
 *    compiling a module runs functions of its own ("defaults"). Inside torch.jit.trace (its
 *    check calls, torch_python.c) and inside a Python module call that is an iteration
 *    (jit_depth), none is.
 *
 * libtorch calls its RecordFunction callbacks only for the scopes they ask for: ours ask for user
 * scopes, and in a Python process TorchScript-function scopes, alone, so operators (scope FUNCTION)
 * keep libtorch's fast path, where the list of callbacks for their scope is empty. They are
 * registered once, at a safe point after main began (every library loaded at start is initialised),
 * with at::addGlobalCallback; never removed.
 *
 * A callback is a C struct laid out as at::RecordFunctionCallback, the same in 1.13 and 2.x
 * (tests/progs/torch_modes.cpp checks it against the headers it is built with). The start
 * callback returns std::unique_ptr<ObserverContext>, which has a destructor, so it comes back
 * through a hidden pointer: written null (no context).
 */
#include "torch_config.h"
#include "registry.h"
#include "torch_internal.h"
#include "../profiler/label.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/glob.h"
#include "../profiler/iteration.h"
#include "../profiler/log.h"
#include "../profiler/phase.h"
#include "../profiler/process.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- the iteration event ------------------------------------------------------------------ */

void ip_torch_iter_emit(uint32_t iter, uint64_t start, uint64_t end, uint64_t nvtx, int64_t batch,
                        uint32_t source, const char *label)
{
    struct ip_ring *r;
    struct ip_ev_torch_iteration *e = ip_ring_begin_critical(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_ITERATION), sizeof *e, iter};
    e->start = start;
    e->end = end;
    e->nvtx = nvtx;
    e->batch = batch;
    e->source = source;
    /* Cut on a character, with a hash of the whole name where cut: two long scope names that
     * differ only at their end stay two series (profiler/label.h). */
    size_t full = label ? strnlen(label, 1 << 16) : 0;
    e->len = (uint32_t)ip_label_cut(e->label, sizeof e->label, label ? label : "", full);
    ip_ring_commit(r, sizeof *e);
}

uint32_t ip_torch_iter_open(uint64_t *start, uint64_t *nvtx)
{
    ip_phase_emit();
    *nvtx = ip_thread_nvtx_top();
    uint32_t id = ip_iter_begin();
    *start = ip_clock_now();
    return id;
}

/* ---- calls (TorchScript, AOTInductor) ----------------------------------------------------- */

struct ip_torch_call ip_torch_call_begin(uint32_t seen, uint8_t source)
{
    struct ip_torch_call c = {0, 0, 0, 0, 0, source};
    ip_torch_seen(seen);
    if (!ip_torch_enter()) return c;
    uint8_t depth = ip_self.jit_depth;
    if (depth < UINT8_MAX) {
        ip_self.jit_depth = (uint8_t)(depth + 1);
        c.depth = depth ? 1 : 2;
    }
    if (c.depth == 2) {
        if (ip_torch_ready(1)) ip_torch_scope_arm();
        if (ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_POLL) && ip_torch_ready(1))
            ip_torch_poll(IP_POLL_SAFE);
        c.iter = ip_torch_iter_open(&c.start, &c.nvtx); /* its reports folded */
    }
    ip_hook_leave();
    return c;
}

void ip_torch_call_end(struct ip_torch_call *c)
{
    if (!c->depth) return;
    ip_self.jit_depth--;
    if (c->depth != 2) return;
    ip_iter_end(c->iter); /* its fold written */
    if (!c->returned) return;
    uint64_t end = ip_clock_now();
    if (!ip_recording_noted() || !ip_hook_enter()) return; /* after the finish: counted */
    ip_torch_iter_emit(c->iter, c->start, end, c->nvtx, 0, c->source, NULL);
    ip_hook_leave();
}

/* ---- record_function scopes --------------------------------------------------------------- */

static const char *(*rf_name)(const void *rf);
static _Atomic int armed; /* 0 not yet, 1 done (registered or not) */

/* The scopes open on this thread that are iterations, innermost last. */
#define SCOPE_MAX 16
struct open_scope {
    const void *rf;
    uint32_t iter;
    uint8_t source;
    uint64_t start, nvtx;
    int64_t batch;
};
static __thread struct {
    uint32_t n;
    struct open_scope v[SCOPE_MAX];
} scopes __attribute__((tls_model("initial-exec")));
/* Marks not recorded: a thread had SCOPE_MAX open (asyncio's requests, each marked around an
 * await, overlap on one thread), and a new one was not kept (giving up the oldest instead lost
 * 453 of 480 requests 16 at a time: each one given up could not end). */
static _Atomic uint64_t scopes_dropped;

uint64_t ip_torch_marks_dropped(void)
{
    return atomic_load_explicit(&scopes_dropped, memory_order_relaxed);
}

/* source: the iterations table's, or SOURCE_INPUT: a DataLoader's wait for data. */
#define SOURCE_INPUT 100
static void scope_open(const void *rf, uint8_t source, int64_t batch)
{
    if (scopes.n == SCOPE_MAX) {
        if (source != SOURCE_INPUT)
            atomic_fetch_add_explicit(&scopes_dropped, 1, memory_order_relaxed);
        return;
    }
    struct open_scope *o = &scopes.v[scopes.n++];
    o->rf = rf;
    o->source = source;
    o->batch = batch;
    if (source == SOURCE_INPUT) {
        o->iter = 0;
        o->nvtx = 0;
        o->start = ip_clock_now();
        return;
    }
    o->iter = ip_torch_iter_open(&o->start, &o->nvtx);
}

/* The scope torch.utils.data's DataLoader opens around each __next__ (every version from 1.x to
 * 2.x: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"): the loop's wait for
 * data, whether the batch is made here or by worker processes. */
static const char input_scope[] = "enumerate(DataLoader)#";

/* Nesting of torch.jit.trace on this thread (ip_torch_setup). */
static __thread uint8_t setup_depth __attribute__((tls_model("initial-exec")));

void ip_torch_setup(int on)
{
    if (on && setup_depth < UINT8_MAX)
        setup_depth++;
    else if (!on && setup_depth)
        setup_depth--;
}

int ip_torch_in_setup(void)
{
    return setup_depth != 0;
}

int ip_torch_in_input_wait(void)
{
    for (uint32_t i = 0; i < scopes.n; i++)
        if (scopes.v[i].source == SOURCE_INPUT) return 1;
    return 0;
}

static void input_wait_emit(uint64_t start, uint64_t end)
{
    struct ip_ring *r;
    struct ip_ev_torch_input_wait *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_INPUT_WAIT), sizeof *e,
                          ip_self.phase};
    e->start = start;
    e->end = end;
    ip_ring_commit(r, sizeof *e);
}

static void **user_start(void **ret, const void *rf)
{
    *ret = NULL;
    if (!ip_recording() || !ip_hook_enter()) return ret;
    const char *name = rf_name(rf);
    const char *mark = ip_cfg_str(IP_CFG_ITERATION_RANGE);
    if (name && !strncmp(name, input_scope, sizeof input_scope - 1))
        scope_open(rf, SOURCE_INPUT, 0);
    else if (name && mark[0] && ip_glob_match(mark, name))
        scope_open(rf, 3, ip_iter_batch_in(name));
    ip_hook_leave();
    return ret;
}

/* The outermost TorchScript "forward" of the thread, outside any hooked call (which owns the
 * iteration) and any other such scope; jit_depth keeps the calls it makes from counting. */
static void **script_start(void **ret, const void *rf)
{
    *ret = NULL;
    if (ip_self.jit_depth || setup_depth || !ip_recording() || !ip_hook_enter()) return ret;
    const char *name = rf_name(rf);
    if (name && !strcmp(name, "forward") && scopes.n < SCOPE_MAX) {
        if (ip_torch_ready(0) && ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_POLL))
            ip_torch_poll(IP_POLL_SAFE);
        ip_self.jit_depth = 1;
        scope_open(rf, 1, 0);
    }
    ip_hook_leave();
    return ret;
}

/* A scope ends on the thread that began it (an async one elsewhere: not ours, ignored). Only it
 * leaves the thread's list: scopes need not nest (asyncio's requests, each marked around an
 * await, overlap on one thread; dropping those opened after it lost 299 of 400). */
static void scope_end(const void *rf, void *ctx)
{
    (void)ctx;
    uint64_t end = ip_clock_now();
    uint32_t i = scopes.n;
    while (i > 0 && scopes.v[i - 1].rf != rf) i--;
    if (!i) return;
    struct open_scope o = scopes.v[i - 1];
    if (i < scopes.n) memmove(&scopes.v[i - 1], &scopes.v[i], (scopes.n - i) * sizeof scopes.v[0]);
    scopes.n--;
    if (o.source == SOURCE_INPUT) {
        if (!ip_recording() || !ip_hook_enter()) return;
        input_wait_emit(o.start, end);
        ip_hook_leave();
        return;
    }
    if (o.source == 1) ip_self.jit_depth = 0;
    ip_iter_end(o.iter);
    if (!ip_recording_noted() || !ip_hook_enter()) return; /* after the finish: counted */
    ip_torch_iter_emit(o.iter, o.start, end, o.nvtx, o.batch, o.source,
                       o.source == 3 ? rf_name(rf) : NULL);
    ip_hook_leave();
}

void ip_torch_scope_arm(void)
{
    if (atomic_load_explicit(&armed, memory_order_relaxed) || !ip_process_in_main()) return;
    if (atomic_exchange(&armed, 1)) return;
    ip_torch_ops_arm();
    if (!ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_RECORD_FUNCTION)) return;
    uint64_t (*add)(struct rf_callback) =
        (uint64_t(*)(struct rf_callback))ip_torch_symbol(SYM_ADD_GLOBAL);
    rf_name = (const char *(*)(const void *))ip_torch_symbol(SYM_NAME);
    if (!add || !rf_name) {
        ip_info("record_function scopes: at::addGlobalCallback not found, not used");
        return;
    }
    /* Only Python calls scripted modules without Method::operator(): a C++ program's TorchScript
     * calls are hooked and need no callback on every TorchScript function. */
    if (dlsym(RTLD_DEFAULT, "Py_IsInitialized")) {
        struct rf_callback script = {script_start, scope_end, 1.0, {0}, false, false, false};
        script.scopes[RF_SCOPE_TORCHSCRIPT] = true;
        add(script);
    }
    /* User scopes: the program's marks, and in Python the DataLoader's wait. */
    if (ip_cfg_str(IP_CFG_ITERATION_RANGE)[0] || dlsym(RTLD_DEFAULT, "Py_IsInitialized")) {
        struct rf_callback user = {user_start, scope_end, 1.0, {0}, false, false, false};
        user.scopes[RF_SCOPE_USER] = true;
        add(user);
    }
    ip_torch_seen(IP_TORCH_SCOPES);
}
