/*
 * torch_memfold.c: the allocator's reports folded per forward iteration (INFPROF_MEMORY_FOLD,
 * docs/libtorch.md "Tensor memory", issue 49).
 *
 * A small eager model reports to the allocator about twice per operator: a 20-layer MLP at batch 1
 * makes 80 reports a forward, 1.6 M rows in 20,000 forwards (64 MB a 2.3 s run, a quarter of the
 * writer's CPU on the core beside the program's: about 6% of its wall time on two CPUs). Every
 * figure the report makes of them is a highest or lowest total over a time window (a phase's, a
 * series', an iteration's, a timeline bucket's), or a count, sum or largest of allocations in one.
 * So inside an outermost iteration (a Python module call, a TorchScript or AOTInductor call, an
 * NVTX push/pop range or record_function scope that marks one: the windows those figures are made
 * of are whole iterations, never parts of one; iteration.h's observer, memfold_edge; not an NVTX
 * start/end range, which may end on another thread, ip_self.iter_loose) each report updates
 * a fold of the thread's, one per device kind (CPU, and the last other device), instead of a ring
 * record: its lowest, highest, lowest after the highest and last totals (each with its report's
 * time and reserved bytes), the highest reserved, its reports, allocations, bytes allocated and
 * three largest allocations, and the operator at its highest. A fold ends at the iteration's end,
 * at a change of the thread's phase (as it changes: torch_state.h's observer) or device, before a
 * report it cannot take (a shared-memory block's, which the writer adds to the CPU total), after
 * IP_MEMFOLD_MAX reports, at the thread's exit, at the finish on the finishing thread and at
 * _exit outside our hooks: one ring record (outside a report, one that must not be lost: it
 * stands for many reports), and the writer's rows (torch_ingest.c). A forked child drops its
 * parent's reports of the fold it inherits; its own are rows until an iteration of its own begins.
 *
 * A fold also ends IP_MEMFOLD_SPAN_NS after its first report (at the next report): a level inside
 * a fold is known only at its points, and a timeline bucket, or a sum over processes, would hold
 * a fold's highest until its next point; a long forward (a TorchScript ResNet's 190 ms) is written
 * in folds of 1 ms at most.
 *
 * Each thread's folds live in a slot of a static table (claimed at its first forward, released
 * at its exit; no slot left: its reports stay rows), under a sequence count, so that the finish
 * writes every thread's open folds, not only its own: a daemon thread inside its forward at
 * sys.exit, a server's inference thread at SIGTERM. A fold that cannot be written is counted
 * as dropped, one per report.
 *
 * Iterations whose operators are captured (INFPROF_OPERATORS=sampled) keep one row per report, so
 * the detail at a peak (its operator) stays where it was. What is exact stays exact: each
 * figure's window is made of whole iterations or of phases, and a fold never straddles its own
 * thread's iteration or phase edges. The one thing a fold cannot give is a level inside it when
 * another thread's phase edge falls there (two threads allocating on one device at once).
 */
#include "registry.h"
#include "torch_config.h"
#include "torch_internal.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/iteration.h"
#include "../profiler/opname.h"
#include "../profiler/process.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define IP_MEMFOLD_MAX     4096    /* reports a fold at most: a long one is written in parts */
#define IP_MEMFOLD_SPAN_NS 1000000 /* and its first report at most this long ago */
#define IP_MEMFOLD_THREADS 256     /* threads folding at once; past that, rows */

struct memfold {
    uint32_t reports, allocs;
    uint32_t phase, op;
    int8_t type, index;
    uint64_t start, end, lo_ts, hi_ts, after_ts, rmax_ts; /* first and last reports', ... */
    int64_t lo, lo_res, hi, hi_res, after, after_res, rmax_alloc, rmax, last, last_res;
    int64_t first_before;
    int64_t alloc_bytes, largest[3];
};

/* One thread's folds. owner: its tid, 0 free. seq: odd while its owner changes s (the finish
 * reads another thread's under it). */
struct memfold_slot {
    _Atomic uint32_t owner;
    _Atomic uint32_t seq;
    uint32_t iter;
    struct memfold s[2]; /* [0] the CPU's, [1] the last other device's */
};

static struct memfold_slot mf_slots[IP_MEMFOLD_THREADS];
_Thread_local uint8_t ip_torch_memfold_on __attribute__((tls_model("initial-exec")));
static _Thread_local struct memfold_slot *mf_me __attribute__((tls_model("initial-exec")));

static _Atomic uint64_t mf_reports, mf_folds;
static _Atomic int mf_wanted = -1; /* INFPROF_MEMORY_FOLD, read once */
static _Atomic int mf_finished;    /* the finish wrote every thread's open folds */

static inline void slot_open(struct memfold_slot *m)
{
    atomic_store_explicit(&m->seq, atomic_load_explicit(&m->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static inline void slot_close(struct memfold_slot *m)
{
    atomic_store_explicit(&m->seq, atomic_load_explicit(&m->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Writes fold f (not empty; a copy, or its owner's own under slot_open) as one ring record of the
 * calling thread's, as thread tid's. critical: as an event that must not be lost (it stands for
 * many reports), where waiting for room is allowed (not under the CUDA caching allocator's
 * mutex, where a CUDA report's own flush runs). */
static void memfold_write(const struct memfold *f, uint32_t iter, uint32_t tid, int critical)
{
    struct ip_ring *r;
    struct ip_ev_torch_memory_fold *e =
        critical ? ip_ring_begin_critical(sizeof *e, &r) : ip_ring_begin(sizeof *e, &r);
    if (!e) {
        if (f->reports > 1) ip_ring_note_dropped(f->reports - 1); /* the record: one already */
        return;
    }
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_MEMORY_FOLD), sizeof *e,
                          f->phase};
    e->start = f->start, e->end = f->end;
    e->lo_ts = f->lo_ts, e->hi_ts = f->hi_ts, e->after_ts = f->after_ts;
    e->rmax_ts = f->rmax_ts;
    e->lo = f->lo, e->lo_res = f->lo_res, e->hi = f->hi, e->hi_res = f->hi_res;
    e->after = f->after, e->after_res = f->after_res;
    e->rmax_alloc = f->rmax_alloc, e->rmax = f->rmax;
    e->last = f->last, e->last_res = f->last_res, e->first_before = f->first_before;
    e->alloc_bytes = f->alloc_bytes;
    memcpy(e->largest, f->largest, sizeof e->largest);
    e->reports = f->reports, e->allocs = f->allocs;
    e->iter = iter, e->op = f->op;
    e->device_type = f->type, e->device_index = f->index;
    e->tid = tid;
    memset(e->pad, 0, sizeof e->pad);
    ip_ring_commit(r, sizeof *e);
    atomic_fetch_add_explicit(&mf_reports, f->reports, memory_order_relaxed);
    atomic_fetch_add_explicit(&mf_folds, 1, memory_order_relaxed);
}

/* The calling thread's fold f written and emptied (under slot_open by the caller). */
static void memfold_flush(struct memfold_slot *m, struct memfold *f, int critical)
{
    memfold_write(f, m->iter, 0, critical);
    f->reports = 0;
}

int ip_torch_memfold_add(int64_t bytes, int64_t allocated, int64_t reserved, int8_t type,
                         int8_t index)
{
    struct memfold_slot *m = mf_me;
    if (!m) return 0;
    struct memfold *f = &m->s[type != 0];
    int crit = type == 0; /* a CPU report is a safe point; a CUDA one runs under its mutex */
    slot_open(m);
    /* A shared-memory block's report (the CPU with a total of 0): a row, in order with the CPU
     * allocator's totals (torch_ingest.c adds it to them). */
    if (type == 0 && allocated == 0) {
        if (f->reports) memfold_flush(m, f, crit);
        slot_close(m);
        return 0;
    }
    uint64_t now = ip_clock_now(); /* each report's: a level is stated at its report's time */
    if (f->reports && (f->type != type || f->index != index || f->phase != ip_self.phase ||
                       now - f->start >= IP_MEMFOLD_SPAN_NS))
        memfold_flush(m, f, crit);
    if (!f->reports) {
        f->type = type, f->index = index, f->phase = ip_self.phase;
        f->start = f->lo_ts = f->hi_ts = f->after_ts = f->rmax_ts = now;
        f->lo = f->hi = f->after = f->rmax_alloc = allocated;
        f->lo_res = f->hi_res = f->after_res = f->rmax = reserved;
        f->first_before = allocated - bytes;
        f->alloc_bytes = 0;
        f->largest[0] = f->largest[1] = f->largest[2] = 0;
        f->allocs = 0;
        f->op = ip_self.op_rf ? ip_thread_op() : 0;
    } else {
        if (allocated > f->hi) {
            f->hi = f->after = allocated, f->hi_res = f->after_res = reserved;
            f->hi_ts = f->after_ts = now;
            f->op = ip_self.op_rf ? ip_thread_op() : 0;
        } else if (allocated < f->after) {
            f->after = allocated, f->after_res = reserved, f->after_ts = now;
        }
        if (allocated < f->lo) f->lo = allocated, f->lo_res = reserved, f->lo_ts = now;
        if (reserved > f->rmax) f->rmax = reserved, f->rmax_alloc = allocated, f->rmax_ts = now;
    }
    f->end = now;
    f->last = allocated, f->last_res = reserved;
    f->reports++;
    if (bytes > 0) {
        f->allocs++;
        f->alloc_bytes += bytes;
        int64_t *t = f->largest;
        if (bytes > t[2]) {
            if (bytes > t[0])
                t[2] = t[1], t[1] = t[0], t[0] = bytes;
            else if (bytes > t[1])
                t[2] = t[1], t[1] = bytes;
            else
                t[2] = bytes;
        }
    }
    /* Bounded: a forward that raised stays open on PyTorch 1.13 until its module's next call,
     * and every report of the thread meanwhile comes here. */
    if (f->reports >= IP_MEMFOLD_MAX) memfold_flush(m, f, crit);
    slot_close(m);
    return 1;
}

/* The calling thread's slot, claimed on first use; NULL: none left (its reports stay rows). */
static struct memfold_slot *slot_mine(void)
{
    if (mf_me) return mf_me;
    uint32_t tid = ip_thread_tid();
    for (int i = 0; i < IP_MEMFOLD_THREADS; i++) {
        uint32_t free_ = 0;
        if (atomic_load_explicit(&mf_slots[i].owner, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&mf_slots[i].owner, &free_, tid)) {
            mf_me = &mf_slots[i];
            mf_me->iter = 0;
            mf_me->s[0].reports = mf_me->s[1].reports = 0;
            return mf_me;
        }
    }
    return NULL;
}

static void memfold_begin(uint32_t id)
{
    int want = atomic_load_explicit(&mf_wanted, memory_order_relaxed);
    if (want < 0) {
        want = ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_MEMORY_FOLD) != 0;
        atomic_store_explicit(&mf_wanted, want, memory_order_relaxed);
    }
    /* Not one that may end on another thread (an NVTX start/end range): its fold would stay
     * open on this one, and every later report of the thread go to an iteration that ended. */
    if (!want || ip_iter_current() != id || ip_self.iter_loose || ip_torch_ops_captured(id)) return;
    struct memfold_slot *m = slot_mine();
    if (!m || m->iter) return;
    m->iter = id;
    ip_torch_memfold_on = 1;
}

/* The calling thread's open folds written (critical: outside a report). */
static void flush_mine(struct memfold_slot *m)
{
    slot_open(m);
    for (int k = 0; k < 2; k++)
        if (m->s[k].reports) memfold_flush(m, &m->s[k], 1);
    m->iter = 0;
    slot_close(m);
}

static void memfold_end(uint32_t id)
{
    struct memfold_slot *m = mf_me;
    if (!id || !m || m->iter != id) return;
    ip_torch_memfold_on = 0;
    /* Inside a hook of ours or not (a Python module call's end is not): the guard, so that the
     * ring is ours to append to. Its reports were made while recording: written even where a
     * window closed since; after the finish (which wrote every open fold) there are none. */
    int entered = ip_hook_enter();
    if (atomic_load(&mf_finished)) {
        m->s[0].reports = m->s[1].reports = 0; /* written by the finish */
    } else if (m->s[0].reports || m->s[1].reports) {
        if (ip_active()) {
            flush_mine(m);
        } else {
            ip_ring_note_dropped(m->s[0].reports + m->s[1].reports);
            m->s[0].reports = m->s[1].reports = 0;
        }
    }
    m->iter = 0;
    if (entered) ip_hook_leave();
}

/* The thread's phase changed (torch_state.h's observer): a fold of another phase is written. */
static void memfold_phase(void)
{
    struct memfold_slot *m = mf_me;
    if (!m) return;
    slot_open(m);
    for (int k = 0; k < 2; k++)
        if (m->s[k].reports && m->s[k].phase != ip_self.phase) memfold_flush(m, &m->s[k], 1);
    slot_close(m);
}

/* The thread exits (torch_state.h's observer): its folds are written, its slot freed. */
static void memfold_thread_exit(void)
{
    struct memfold_slot *m = mf_me;
    if (!m) return;
    ip_torch_memfold_on = 0;
    if (ip_active() && !atomic_load(&mf_finished)) flush_mine(m);
    m->s[0].reports = m->s[1].reports = 0;
    m->iter = 0;
    mf_me = NULL;
    atomic_store_explicit(&m->owner, 0, memory_order_release);
}

/* Another thread's slot copied under its sequence count; 0 when it is being changed (its owner
 * stopped inside a report: the finish does not wait for it, or a signal handler interrupted the
 * calling thread's own). */
static int slot_copy(struct memfold_slot *m, struct memfold *out, uint32_t *iter)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t a = atomic_load_explicit(&m->seq, memory_order_acquire);
        if (a & 1) continue;
        memcpy(out, m->s, sizeof m->s);
        *iter = m->iter;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&m->seq, memory_order_relaxed) == a) return 1;
    }
    return 0;
}

void ip_torch_memfold_finish_all(void)
{
    ip_torch_memfold_on = 0;
    if (atomic_exchange(&mf_finished, 1)) return;
    for (int i = 0; i < IP_MEMFOLD_THREADS; i++) {
        struct memfold_slot *m = &mf_slots[i];
        uint32_t owner = atomic_load_explicit(&m->owner, memory_order_acquire);
        if (!owner) continue;
        struct memfold f[2];
        uint32_t iter;
        if (!slot_copy(m, f, &iter)) {
            ip_ring_note_dropped(m->s[0].reports + m->s[1].reports); /* a count, read racily */
            continue;
        }
        for (int k = 0; k < 2; k++)
            if (f[k].reports) memfold_write(&f[k], iter, m == mf_me ? 0 : owner, 1);
        if (m == mf_me) m->s[0].reports = m->s[1].reports = 0, m->iter = 0;
        /* Another thread's: it records no more (the run is finishing), and mf_finished tells
         * its iteration's end that these are written. */
    }
}

/* An outermost iteration begins or ends on this thread, whatever marks it (a Python module call,
 * a TorchScript or AOTInductor call, an NVTX range or a record_function scope that is an
 * iteration): iteration.h's one observer. The operators' capture is decided first (a captured
 * iteration's reports stay rows), then the fold begins, or ends and is written. */
static void memfold_edge(uint32_t id, int begin)
{
    ip_torch_ops_edge(id, begin);
    if (begin)
        memfold_begin(id);
    else
        memfold_end(id);
}

void ip_torch_memfold_arm(void)
{
    ip_torch_state_observe(memfold_phase, memfold_thread_exit);
    ip_iter_observe(memfold_edge);
}

void ip_torch_memfold_atfork_child(void)
{
    /* The parent's reports before the fork are its own to write; the child's are rows, as in a
     * process without iterations (its inherited one never ends here: its work is told apart by
     * the report from its reports, report/run/detect.c). The other threads are gone. */
    for (int i = 0; i < IP_MEMFOLD_THREADS; i++) {
        mf_slots[i].s[0].reports = mf_slots[i].s[1].reports = 0;
        mf_slots[i].iter = 0;
        atomic_store(&mf_slots[i].seq, 0);
        atomic_store(&mf_slots[i].owner, 0);
    }
    mf_me = NULL;
    ip_torch_memfold_on = 0;
    atomic_store(&mf_finished, 0);
    atomic_store(&mf_reports, 0);
    atomic_store(&mf_folds, 0);
}

void ip_torch_memfold_counts(uint64_t *reports, uint64_t *folds)
{
    *reports = atomic_load(&mf_reports);
    *folds = atomic_load(&mf_folds);
}
