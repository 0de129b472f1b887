/*
 * torch_scope.c: the torch collector's iteration events (app side): the one event every
 * iteration it sees becomes (a TorchScript or AOTInductor call from torch.c, a scope from here),
 * and iterations from the program's record_function scopes, for Python
 * programs that mark their steps for torch.profiler but give no NVTX range: a scope named like
 * INFPROF_ITERATION_RANGE (torch.profiler.record_function("iteration"), C++ RECORD_USER_SCOPE)
 * is one iteration, source 3 in table iterations, exactly like an NVTX range of that name.
 *
 * libtorch calls its RecordFunction callbacks only for the scopes they ask for: ours asks for
 * user scopes alone, so operators (scope FUNCTION) keep libtorch's fast path, where the list of
 * callbacks for their scope is empty. It is registered once, at a safe point after main began
 * (every library loaded at start is initialised), with at::addGlobalCallback; never removed.
 *
 * The callback is a C struct laid out as at::RecordFunctionCallback, the same in 1.13 and 2.x
 * (tests/progs/torch_modes.cpp checks it against the headers it is built with). The start
 * callback returns std::unique_ptr<ObserverContext>, which has a destructor, so it comes back
 * through a hidden pointer: written null (no context).
 */
#include "registry.h"
#include "torch_internal.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/glob.h"
#include "../profiler/iteration.h"
#include "../profiler/log.h"
#include "../profiler/phase.h"
#include "../profiler/process.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- the iteration event ---------------------------------------------------------------- */

void ip_torch_iteration_emit(uint32_t iter, uint64_t start, uint64_t end, uint64_t nvtx,
                             int64_t batch, uint32_t source)
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
    e->pad = 0;
    ip_ring_commit(r, sizeof *e);
}

/* ---- record_function scopes -------------------------------------------------------------- */

#define SYM_ADD_GLOBAL "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE"
#define SYM_NAME       "_ZNK2at14RecordFunction4nameEv"

enum { RF_SCOPE_USER = 7, RF_NUM_SCOPES = 10 }; /* at::RecordScope */

struct rf_callback {
    void **(*start)(void **ret, const void *rf);
    void (*end)(const void *rf, void *ctx);
    double sampling_prob;
    bool scopes[RF_NUM_SCOPES];
    bool needs_inputs, needs_outputs, needs_ids;
};
_Static_assert(sizeof(struct rf_callback) == 40, "at::RecordFunctionCallback is 40 bytes");

static const char *(*rf_name)(const void *rf);
static _Atomic int armed; /* 0 not yet, 1 done (registered or not) */

/* The scopes open on this thread that are iterations, innermost last. */
#define SCOPE_MAX 8
struct open_scope {
    const void *rf;
    uint32_t iter;
    uint64_t start, nvtx;
    int64_t batch;
};
static __thread struct {
    uint32_t n;
    struct open_scope v[SCOPE_MAX];
} scopes __attribute__((tls_model("initial-exec")));

static void **scope_start(void **ret, const void *rf)
{
    *ret = NULL;
    if (!ip_recording() || !ip_hook_enter()) return ret;
    const char *pattern = ip_cfg_str(IP_CFG_ITERATION_RANGE);
    const char *name = rf_name(rf);
    if (name && scopes.n < SCOPE_MAX && ip_glob_match(pattern, name)) {
        ip_phase_emit();
        uint32_t d = ip_self.nvtx_depth;
        struct open_scope *o = &scopes.v[scopes.n++];
        o->rf = rf;
        o->nvtx = d && d <= IP_NVTX_STACK_MAX ? ip_self.nvtx_stack[d - 1] : 0;
        o->batch = ip_iter_batch_in(name);
        o->iter = ip_iter_begin();
        o->start = ip_clock_now();
    }
    ip_hook_leave();
    return ret;
}

/* A scope ends on the thread that began it (an async one elsewhere: not ours, ignored). */
static void scope_end(const void *rf, void *ctx)
{
    (void)ctx;
    uint64_t end = ip_clock_now();
    uint32_t i = scopes.n;
    while (i > 0 && scopes.v[i - 1].rf != rf) i--;
    if (!i) return;
    struct open_scope o = scopes.v[i - 1];
    scopes.n = i - 1; /* scopes opened inside it and left open are dropped with it */
    ip_iter_end(o.iter);
    if (!ip_recording() || !ip_hook_enter()) return;
    ip_torch_iteration_emit(o.iter, o.start, end, o.nvtx, o.batch, 3);
    ip_hook_leave();
}

void ip_torch_scope_arm(void)
{
    if (atomic_load_explicit(&armed, memory_order_relaxed) || !ip_process_in_main()) return;
    if (atomic_exchange(&armed, 1)) return;
    if (!ip_cfg_int(IP_CFG_RECORD_FUNCTION) || !ip_cfg_str(IP_CFG_ITERATION_RANGE)[0]) return;
    uint64_t (*add)(struct rf_callback) =
        (uint64_t(*)(struct rf_callback))ip_torch_symbol(SYM_ADD_GLOBAL);
    rf_name = (const char *(*)(const void *))ip_torch_symbol(SYM_NAME);
    if (!add || !rf_name) {
        ip_info("record_function scopes: at::addGlobalCallback not found, not used");
        return;
    }
    struct rf_callback cb = {scope_start, scope_end, 1.0, {0}, false, false, false};
    cb.scopes[RF_SCOPE_USER] = true;
    add(cb);
    ip_torch_seen(IP_TORCH_SCOPES);
}
