/*
 * torch_ops.c: PyTorch operator calls (docs/libtorch.md "Operators"). A second RecordFunction
 * callback, on scope FUNCTION (every dispatcher operator: aten::*, quantized::*, those TorchScript
 * runs), keeps a bounded per-thread stack of open operators and, when one ends, appends one
 * fixed-size event to the thread's ring: its name (copied, cut at IP_OP_NAME_MAX - 1 bytes),
 * start, end, self time (its time less its children's, as torch.profiler's self CPU time),
 * nesting depth, phase and outermost iteration. Nothing is allocated or locked per operator
 * beyond the ring append. Deeper than IP_OP_STACK operators are counted (meta
 * torch_operator_overflow), never written. The innermost open operator is kept in
 * ip_self.op_rf, so kernels, copies, memsets and cuDNN calls carry it (opname.h). An operator
 * that ends on another thread than it began on (async) is not on that thread's stack: ignored.
 *
 * INFPROF_OPERATORS=sampled (the default) registers no global callback (libtorch keeps its fast
 * path: no RecordFunction at all) but, for one outermost iteration in INFPROF_OPERATORS_EVERY,
 * the same callback as a thread-local one of the iteration's thread (at::addThreadLocalCallback
 * at its start, at::removeCallback at its end; other threads never see it: a global callback
 * switched on and off once slowed and recorded their iterations too). Iterations are chosen at
 * their start (profiler/iteration.h's observer) per phase: the second iteration of a phase, then
 * at random gaps of 1 to 2N-1 (a mean of N, never in step with a loop's own period). Once a phase
 * has had OP_SETTLE captures, N grows past INFPROF_OPERATORS_EVERY where the captures cost more
 * than INFPROF_OPERATORS_BUDGET percent of its time: the phase's captured and uncaptured
 * iterations are timed as they end (a moving mean of each), a capture adds f = captured /
 * uncaptured - 1 of an iteration, so a mean gap of f / budget holds the cost to the budget (a
 * tiny-op MLP whose captures ran 21% slower: 1 in 84, then 1 in 128 in strata; a GPU model's
 * 5%: 1 in 20). The budget is 0.25% since 2026-11-30: at 1% the 20-layer MLP of
 * bench/mlp_cost.py spent 0.7-2.1% of a 3,300-forward run in its captures (noisy early timings
 * set the first stratum's gap at 1 in 8 to 1 in 32), 0.1-0.3% at 0.25. The
 * gap is chosen from iterations already ended, never from the one it picks. Such an
 * iteration's operators are all recorded (whole trees: exact self times, counts and kernels),
 * and one torch_operator_windows row says which iteration it was; the report scales per
 * iteration. INFPROF_OPERATORS=1 records every call.
 *
 * Writer side: one torch_operators row per call, one torch_operator_windows row per capture, and
 * the calls' sums for the report (torch_opsum.c).
 */
#include "torch_config.h"
#include "registry.h"
#include "torch_internal.h"
#include "../profiler/label.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/attrib.h"
#include "../profiler/iteration.h"
#include "../profiler/log.h"
#include "../profiler/opname.h"
#include "../profiler/process.h"
#include "../profiler/ring.h"
#include "../profiler/store.h"
#include "../profiler/thread.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static const char *(*op_name)(const void *rf);
static _Atomic uint64_t op_overflow; /* operators deeper than IP_OP_STACK, not recorded */

/* The sampled capture (INFPROF_OPERATORS=sampled). */
#define OP_KEYS 64 /* phases told apart when choosing iterations; others share the last */
static uint64_t (*cb_add_tl)(struct rf_callback);
static void (*cb_remove)(uint64_t);
static uint32_t op_every;  /* INFPROF_OPERATORS_EVERY */
static uint32_t op_budget; /* INFPROF_OPERATORS_BUDGET, thousandths of a percent; 0 fixed rate */
static uint32_t op_stratum;          /* INFPROF_OPERATORS_STRATUM: captures at one gap (op_mean) */
#define OP_SETTLE  8   /* a phase's captures at 1 in op_every before the budget spaces them */
#define OP_GAP_MAX 256 /* the budget's mean gap at most (the strata's may grow past it) */
#define OP_REGAP   8   /* captures into a stratum before the need may end it early */
static _Atomic uint64_t op_windows; /* captures begun */
static _Atomic uint64_t op_spaced;  /* of those, chosen at a mean gap the budget made longer */
static _Atomic int op_armed;        /* the callback (or the sampled capture) is in place */
static __thread struct {
    uint32_t iter;   /* the thread's captured iteration, 0 none */
    uint32_t key;    /* its phase's op_keys slot */
    uint64_t start;  /* when its capture began */
    uint64_t handle; /* its thread-local callback */
    uint32_t every;  /* the mean gap it was chosen at */
    uint32_t plain, plain_key; /* the thread's uncaptured iteration being timed, 0 none */
    uint64_t plain_start;
} cap __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t op_rand = 0x9E3779B97F4A7C15ull;

/* The gaps' draws start from the process and the moment (splitmix64 of both), so that two runs of
 * one program capture different iterations: a second fresh-eyes check found half of 20 runs
 * reading the very same figures, the same schedule drawn each time, so that repeating a run did
 * not average its sampling error away. A forked child draws its own. INFPROF_OPERATORS_SEED=N
 * draws from N alone, the same schedule in every run (and a forked child its parent's). */
static uint64_t op_seed_n; /* INFPROF_OPERATORS_SEED */

static void op_seed(void)
{
    uint64_t z =
        op_seed_n ? op_seed_n : ip_clock_now() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    atomic_store_explicit(&op_rand, z ? z : 0x9E3779B97F4A7C15ull, memory_order_relaxed);
}
static struct {
    _Atomic uint32_t seen, next; /* outermost iterations begun in the phase; the next captured */
    _Atomic uint32_t captures;   /* captures begun in the phase */
    _Atomic uint32_t gap_mean;   /* the mean of the gap drawn at its last capture */
    _Atomic uint32_t gap;        /* the budget's stratum's gap, 0 none yet (op_mean) */
    _Atomic uint32_t at_level;   /* captures made in it */
    _Atomic uint64_t plain_ns, cap_ns; /* moving means of its uncaptured and captured iterations */
} op_keys[OP_KEYS];

struct open_op {
    const void *rf;
    uint64_t start, child; /* child: total time of the operators it called */
    uint32_t id;           /* its name id (opname.h) once looked up, 0 not yet */
};
static __thread struct {
    uint32_t n;    /* entries in v */
    uint32_t deep; /* operators open past the stack's bound */
    struct open_op v[IP_OP_STACK];
} ops __attribute__((tls_model("initial-exec")));

/* The innermost operator changed: GPU work launched from now on carries the new one (the launch
 * reads ip_self.op_rf), and in records mode the writer's history learns of it. */
static void op_innermost(void)
{
    if (ops.n) {
        ip_self.op_rf = ops.v[ops.n - 1].rf;
        ip_self.op_id = ops.v[ops.n - 1].id;
    } else {
        ip_self.op_rf = NULL;
        ip_self.op_id = 0;
    }
    if (ip_attrib_by_time && ip_hook_enter()) {
        ip_attrib_changed();
        ip_hook_leave();
    }
}

static void **op_start(void **ret, const void *rf)
{
    *ret = NULL;
    if (!ip_recording()) return ret;
    if (ops.n >= IP_OP_STACK || ops.deep) {
        ops.deep++;
        atomic_fetch_add_explicit(&op_overflow, 1, memory_order_relaxed);
        return ret;
    }
    if (ops.n) ops.v[ops.n - 1].id = ip_self.op_id; /* keep what a launch looked up */
    struct open_op *o = &ops.v[ops.n++];
    o->rf = rf;
    o->child = 0;
    o->id = 0;
    op_innermost();
    o->start = ip_clock_now();
    return ret;
}

static void op_end(const void *rf, void *ctx)
{
    (void)ctx;
    uint64_t end = ip_clock_now();
    if (ops.deep) { /* operators end in the reverse order they began on their thread */
        ops.deep--;
        return;
    }
    uint32_t i = ops.n;
    while (i > 0 && ops.v[i - 1].rf != rf) i--;
    if (!i) return; /* began before recording, or on another thread */
    struct open_op o = ops.v[i - 1];
    ops.n = i - 1; /* operators opened inside it and left open are dropped with it */
    op_innermost();
    uint64_t total = end - o.start;
    if (ops.n) ops.v[ops.n - 1].child += total;
    if (!ip_recording() || !ip_hook_enter()) return;
    const char *name = op_name(rf);
    struct ip_ring *r;
    struct ip_ev_torch_op *e = name ? ip_ring_begin(sizeof *e, &r) : NULL;
    if (e) {
        e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_OP), sizeof *e,
                              ip_self.phase};
        e->start = o.start;
        e->end = end;
        e->self = o.child < total ? total - o.child : 0;
        e->iter = ip_iter_current();
        e->depth = (uint16_t)ops.n;
        /* Cut on a character, with a hash of the whole where cut (profiler/label.h). */
        e->len = (uint16_t)ip_label_cut(e->name, sizeof e->name, name, strnlen(name, 4096));
        ip_ring_commit(r, sizeof *e);
    }
    ip_hook_leave();
}

/* The next gap between captured iterations: 1 to 2N-1, uniform (a mean of N). */
static uint32_t op_gap(uint32_t mean)
{
    uint64_t x = atomic_load_explicit(&op_rand, memory_order_relaxed);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64; threads racing share a draw */
    atomic_store_explicit(&op_rand, x, memory_order_relaxed);
    return mean <= 1 ? 1 : 1 + (uint32_t)(x % (2 * mean - 1));
}

/* The mean gap the budget asks for phase slot k now (above): op_every at least. */
static uint32_t op_need(uint32_t k)
{
    uint64_t plain = atomic_load_explicit(&op_keys[k].plain_ns, memory_order_relaxed);
    uint64_t capd = atomic_load_explicit(&op_keys[k].cap_ns, memory_order_relaxed);
    if (!plain || capd <= plain) return op_every;
    double n = (double)(capd - plain) / (double)plain * 100000.0 / op_budget;
    if (n <= op_every) return op_every;
    return n >= OP_GAP_MAX ? OP_GAP_MAX : (uint32_t)(n + 0.5);
}

/* The mean gap for phase slot k's next capture: op_every for its first OP_SETTLE captures (and
 * always at a fixed rate). Then captures come in strata of INFPROF_OPERATORS_STRATUM (256), each
 * at one gap chosen as it begins: twice the stratum before's, or the budget's need if that is
 * more (rounded up to op_every times a power of two); the first, the need alone. A run's captures
 * then grow with the logarithm of its length, not with it (a 20-layer MLP's 100,000 forwards:
 * about 1,000 captures, not 4,853), and the report weighs each stratum by the iterations it
 * stands for: a model that changes mid-run is read over the whole run, not its first seconds (the
 * cap tried on 2026-11-29, session 14, weighed every capture alike). The gap never shrinks and
 * grows by one doubling a stratum once the need is met (a need recomputed at each stratum and
 * added to the doublings jumped from 1 in 32 to 1 in 4,096 and left a run's second half
 * uncaptured), and is held through a stratum (the need's moving means are noisy: followed capture
 * by capture, the gap went up and down in strata of a few captures), unless the need passes
 * twice the gap once OP_REGAP captures of the stratum are in: a new stratum begins there at the
 * need (a first stratum set at 1 in 4 from a noisy start held 1 in 4 for 1,024 iterations, 2% of
 * a page-faulting conv net's time at a budget of 0.25%, a fresh-eyes check).
 * INFPROF_OPERATORS_STRATUM=0: the budget's need throughout, as before, every capture weighed alike
 * (`every` 0). Threads racing may lose an update: it is a schedule, not a count. */
static uint32_t op_mean(uint32_t k)
{
    if (!op_budget || atomic_load_explicit(&op_keys[k].captures, memory_order_relaxed) < OP_SETTLE)
        return op_every;
    if (!op_stratum) return op_need(k);
    uint32_t at = atomic_load_explicit(&op_keys[k].at_level, memory_order_relaxed);
    uint32_t gap = atomic_load_explicit(&op_keys[k].gap, memory_order_relaxed);
    uint64_t early = gap && at >= OP_REGAP && at < op_stratum ? op_need(k) : 0;
    if (!gap || at >= op_stratum || early > 2 * (uint64_t)gap) { /* a stratum begins */
        uint64_t need = early ? early : op_need(k), g = op_every;
        while (g < need) g <<= 1;
        if (gap && 2 * (uint64_t)gap > g) g = 2 * (uint64_t)gap;
        gap = g < (1u << 30) ? (uint32_t)g : 1u << 30;
        atomic_store_explicit(&op_keys[k].gap, gap, memory_order_relaxed);
        at = 0;
    }
    atomic_store_explicit(&op_keys[k].at_level, at + 1, memory_order_relaxed);
    return gap;
}

/* A moving mean (weight 1/2^shift for the newest), its first value as it is. Threads racing may
 * lose an update: a mean, not a count. */
static void op_mean_add(_Atomic uint64_t *m, uint64_t v, int shift)
{
    uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
    uint64_t nv = old ? old - (old >> shift) + (v >> shift) : v;
    atomic_store_explicit(m, nv ? nv : 1, memory_order_relaxed);
}

/* Sampling armed: iteration edges reach op_edge (ip_torch_ops_edge). */
static _Atomic int op_edges;

/* An outermost iteration begins or ends on this thread (iteration.h's observer, through
 * torch_memfold.c's, which folds the reports of an iteration this leaves uncaptured). A forked
 * child keeps its forking thread's capture (its libtorch thread-local callbacks and ours): the
 * iteration ends there as it would have. */
static void op_edge(uint32_t id, int begin)
{
    if (!begin) {
        if (cap.iter != id) {
            if (cap.plain == id && op_budget) {
                op_mean_add(&op_keys[cap.plain_key].plain_ns, ip_clock_now() - cap.plain_start, 4);
                cap.plain = 0;
            }
            return;
        }
        cb_remove(cap.handle); /* operators begun from now on: not called */
        uint64_t end = ip_clock_now();
        cap.iter = 0;
        if (op_budget) op_mean_add(&op_keys[cap.key].cap_ns, end - cap.start, 2);
        /* Inside a hook of ours already (an NVTX range's pop ends the iteration): its guard
         * holds, and the ring is free to append to (no event is half written). */
        int entered = ip_hook_enter();
        struct ip_ring *r;
        struct ip_ev_torch_op_window *e = ip_ring_begin(sizeof *e, &r);
        if (e) {
            e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_OP_WINDOW), sizeof *e,
                                  ip_self.phase};
            e->start = cap.start;
            e->end = end;
            e->iter = id;
            e->every = cap.every;
            ip_ring_commit(r, sizeof *e);
        }
        if (entered) ip_hook_leave();
        return;
    }
    if (cap.iter) return; /* outermost: only after a capture this thread left open (a fork) */
    uint32_t k = ip_self.phase < OP_KEYS ? ip_self.phase : OP_KEYS - 1;
    uint32_t seen = atomic_fetch_add_explicit(&op_keys[k].seen, 1, memory_order_relaxed);
    if (seen == 0) { /* the phase's second iteration is always taken */
        atomic_store_explicit(&op_keys[k].next, 1, memory_order_relaxed);
        atomic_store_explicit(&op_keys[k].gap_mean, 1, memory_order_relaxed);
    }
    if (seen == 0 || seen < atomic_load_explicit(&op_keys[k].next, memory_order_relaxed)) {
        if (op_budget && seen) { /* timed for the budget's mean (not the first: a warm-up) */
            cap.plain = id;
            cap.plain_key = k;
            cap.plain_start = ip_clock_now();
        }
        return;
    }
    uint32_t mean = op_mean(k);
    cap.every = atomic_exchange_explicit(&op_keys[k].gap_mean, mean, memory_order_relaxed);
    if (op_budget && !op_stratum) cap.every = 0; /* every capture weighed alike */
    atomic_store_explicit(&op_keys[k].next, seen + op_gap(mean), memory_order_relaxed);
    if (mean > op_every) atomic_fetch_add_explicit(&op_spaced, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&op_keys[k].captures, 1, memory_order_relaxed);
    struct rf_callback cb = {op_start, op_end, 1.0, {0}, false, false, false};
    cb.scopes[RF_SCOPE_FUNCTION] = true;
    cap.plain = 0;
    cap.key = k;
    cap.start = ip_clock_now();
    cap.handle = cb_add_tl(cb);
    cap.iter = id;
    atomic_fetch_add_explicit(&op_windows, 1, memory_order_relaxed);
}

int ip_torch_ops_captured(uint32_t id)
{
    return id && cap.iter == id;
}

void ip_torch_ops_edge(uint32_t id, int begin)
{
    if (atomic_load_explicit(&op_edges, memory_order_relaxed)) op_edge(id, begin);
}

void ip_torch_ops_arm(void)
{
    int mode = (int)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS);
    if (mode == IP_OPERATORS_OFF) return;
    uint64_t (*add)(struct rf_callback) =
        (uint64_t(*)(struct rf_callback))ip_torch_symbol(SYM_ADD_GLOBAL);
    op_name = (const char *(*)(const void *))ip_torch_symbol(SYM_NAME);
    if (!add || !op_name) {
        ip_info("operators: at::addGlobalCallback not found, not recorded");
        return;
    }
    ip_opname_source(op_name);
    if (mode == IP_OPERATORS_SAMPLED) {
        cb_add_tl = (uint64_t(*)(struct rf_callback))ip_torch_symbol(SYM_ADD_TL);
        cb_remove = (void (*)(uint64_t))ip_torch_symbol(SYM_REMOVE);
        if (!cb_add_tl || !cb_remove) {
            ip_info("operators: at::addThreadLocalCallback not found, not sampled"
                    " (INFPROF_OPERATORS=1 records every call)");
            return;
        }
        op_every = (uint32_t)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_EVERY);
        /* A rate the user set is kept, unless a budget is set too. */
        op_budget = (uint32_t)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_BUDGET);
        op_stratum = (uint32_t)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_STRATUM);
        op_seed_n = (uint64_t)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_SEED);
        op_seed();
        if (op_stratum && op_stratum < 8) op_stratum = 8; /* the report's least stratum */
        if (ip_cfg_group_is_set(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_EVERY) &&
            !ip_cfg_group_is_set(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS_BUDGET))
            op_budget = 0;
        atomic_store(&op_edges, 1);
    } else {
        struct rf_callback cb = {op_start, op_end, 1.0, {0}, false, false, false};
        cb.scopes[RF_SCOPE_FUNCTION] = true;
        add(cb);
    }
    atomic_store(&op_armed, 1);
    ip_torch_seen(IP_TORCH_OPERATORS);
}

/* A forked child (a DataLoader worker): its database counts its own captures, not the parent's
 * before the fork (a worker's report said "39 captured" with no capture in it). */
void ip_torch_ops_atfork_child(void)
{
    atomic_store(&op_windows, 0);
    atomic_store(&op_spaced, 0);
    atomic_store(&op_overflow, 0);
    if (!op_seed_n) op_seed();
}

/* ---- writer side -------------------------------------------------------------------------- */

static struct ip_batch *op_rows, *win_rows;

void ip_torch_ops_prepare(struct ip_store *s)
{
    op_rows = ip_batch_open(s, "torch_operators", 8);
    win_rows = ip_batch_open(s, "torch_operator_windows", 6);
    ip_torch_opsum_prepare(s);
}

void ip_torch_ops_window_ingest(struct ip_store *s, uint32_t tid,
                                const struct ip_ev_torch_op_window *e)
{
    if (!win_rows) return;
    int64_t *row = ip_batch_row(win_rows);
    row[0] = ip_store_rel(s, e->start);
    row[1] = (int64_t)(e->end - e->start);
    row[2] = e->iter;
    row[3] = tid;
    row[4] = e->h.aux;
    row[5] = e->every;
}

void ip_torch_ops_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev_torch_op *e)
{
    if (!op_rows) return;
    int64_t *row = ip_batch_row(op_rows);
    row[0] = ip_store_rel(s, e->start);
    row[1] = (int64_t)(e->end - e->start);
    row[2] = (int64_t)e->self;
    row[3] = tid;
    row[4] = e->h.aux;
    row[5] = e->iter;
    row[6] = e->depth;
    row[7] = ip_store_intern(s, e->name, e->len < IP_OP_NAME_MAX ? e->len : IP_OP_NAME_MAX - 1);
    ip_torch_opsum_add(e->h.aux, row[7], e->iter, row[2], row[1]);
}

void ip_torch_ops_finish(struct ip_store *s)
{
    int mode = (int)ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_OPERATORS);
    if (mode != IP_OPERATORS_OFF && atomic_load(&op_armed)) {
        /* How the operators were recorded (where libtorch was there to record them): every
         * call, or whole iterations sampled. */
        ip_store_meta_text(s, "torch_operators_mode", mode == IP_OPERATORS_ALL ? "all" : "sampled");
        if (mode == IP_OPERATORS_SAMPLED) {
            ip_store_meta_int(s, "torch_operators_every", op_every);
            ip_store_meta_int(s, "torch_operator_windows", (int64_t)atomic_load(&op_windows));
            ip_store_meta_int(s, "torch_operators_budget_milli", op_budget);
            ip_store_meta_int(s, "torch_operators_stratum", op_budget ? op_stratum : 0);
            ip_store_meta_int(s, "torch_operator_windows_spaced", (int64_t)atomic_load(&op_spaced));
        }
        ip_store_meta_int(s, "torch_operator_overflow", (int64_t)atomic_load(&op_overflow));
        ip_store_meta_int(s, "torch_operator_names_overflow", (int64_t)ip_opname_overflow());
    }
    /* The calls' last rows first: a write that fails there leaves the sums without their meta
     * (the report then reads the calls), never a meta counting calls with no row. */
    ip_batch_flush(op_rows);
    ip_torch_opsum_finish(s);
}
