/*
 * iteration.c: iteration ids and the calling thread's current iteration (app side), and table
 * iterations with each iteration's GPU completion (writer side), iteration.h.
 */
#include "iteration.h"
#include "attrib.h"
#include "clock.h"
#include "collector.h"
#include "phase.h"
#include "process.h"
#include "ring.h"
#include "store.h"
#include "thread.h"
#include "window.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static _Atomic uint32_t iter_next = 1;
static _Atomic(ip_iter_edge_fn) edge_fn;

void ip_iter_observe(ip_iter_edge_fn fn)
{
    atomic_store(&edge_fn, fn);
}

static void iter_edge(uint32_t id, int begin)
{
    ip_iter_edge_fn fn = atomic_load_explicit(&edge_fn, memory_order_relaxed);
    if (fn && (!begin || ip_recording())) fn(id, begin); /* a capture open ends */
}

/* The calling thread's CPU time and context switches, at each edge of an outermost iteration:
 * what the Slow iterations section needs to tell a thread that was preempted or waiting from one
 * that computed. One system call, getrusage, whose CPU time is the scheduler's account as of its
 * last update (a tick, 1-4 ms, or a switch): an iteration's CPU time is exact in sums and means,
 * coarse alone where it is shorter than a few ticks. Not the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID): reading it brings the account up to date, and on a kernel with EEVDF
 * (6.6 on) that also preempts a thread that has used its slice, there and then: on a loaded CPU
 * every edge became a preemption of 4 ms, the program's "iteration tight" read 72% time between
 * iterations against its own timer's 1%, and the program itself was preempted where it would not
 * have been (tests/torch/test_series.py, test_time_between_iterations). -1: not readable. */
static void thread_cpu(int64_t *cpu, int64_t *vcsw, int64_t *ivcsw)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru)) {
        *cpu = *vcsw = *ivcsw = -1;
        ip_self.iter_read_flt = ip_self.iter_read_mflt = ip_self.iter_read_sys = -1;
        return;
    }
    *cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    *vcsw = ru.ru_nvcsw, *ivcsw = ru.ru_nivcsw;
    /* The same reading's page faults and system time: a forward whose allocator hands memory
     * back to the system and takes it again pays a fault a page (a conv net's 0.5 ms forward
     * took 1.1 ms so, in half its runs, without us as with us). */
    ip_self.iter_read_flt = ru.ru_minflt, ip_self.iter_read_mflt = ru.ru_majflt;
    ip_self.iter_read_sys = (int64_t)ru.ru_stime.tv_sec * 1000000000 + ru.ru_stime.tv_usec * 1000;
}

/* An iteration that begins within ITER_CHAIN_NS of its thread's last end starts from that end's
 * reading instead of one of its own: a loop's tight iterations make one system call each, not two
 * (0.36 us of a 110 us forward on this VM, issue 49). The reading then spans the gap before the
 * iteration too; its CPU time is scaled to the iteration's share of that span (exact for a thread
 * that computes through both, off by at most the gap otherwise, under the tick the account moves
 * by; but a catch-up of the account the program brings about in the gap, by reading its own CPU
 * clock there, lands in this iteration: up to a tick, where before it was counted nowhere), its
 * switches kept whole: one in a gap this short is rare (a preemption or a wait that blocks makes
 * the gap longer, and the next begin reads its own). */
#define ITER_CHAIN_NS 20000

static void cpu_begin(void)
{
    uint64_t now = ip_clock_now();
    ip_self.iter_t0 = now;
    if (ip_self.iter_cpu_at && now >= ip_self.iter_cpu_at &&
        now - ip_self.iter_cpu_at < ITER_CHAIN_NS) {
        ip_self.iter_cpu0 = ip_self.iter_cpu_last, ip_self.iter_vcsw0 = ip_self.iter_vcsw_last,
        ip_self.iter_ivcsw0 = ip_self.iter_ivcsw_last;
        ip_self.iter_flt0 = ip_self.iter_flt_last, ip_self.iter_mflt0 = ip_self.iter_mflt_last,
        ip_self.iter_sys0 = ip_self.iter_sys_last;
        ip_self.iter_cpu_from = ip_self.iter_cpu_at;
        ip_self.iter_gap_cpu = ip_self.iter_gap_vcsw = ip_self.iter_gap_ivcsw = -1; /* spanned */
    } else {
        thread_cpu(&ip_self.iter_cpu0, &ip_self.iter_vcsw0, &ip_self.iter_ivcsw0);
        ip_self.iter_flt0 = ip_self.iter_read_flt, ip_self.iter_mflt0 = ip_self.iter_read_mflt,
        ip_self.iter_sys0 = ip_self.iter_read_sys;
        ip_self.iter_cpu_from = now;
        /* The gap since the thread's last iteration, for the report (report/run/itercpu.c): how
         * far the account moved in it, and whether the thread left the CPU there. */
        int known = ip_self.iter_cpu_at && ip_self.iter_cpu0 >= 0 && ip_self.iter_vcsw0 >= 0 &&
                    ip_self.iter_vcsw_last >= 0 && ip_self.iter_ivcsw0 >= 0 &&
                    ip_self.iter_ivcsw_last >= 0;
        ip_self.iter_gap_cpu = known ? ip_self.iter_cpu0 - ip_self.iter_cpu_last : -1;
        ip_self.iter_gap_vcsw = known ? ip_self.iter_vcsw0 - ip_self.iter_vcsw_last : -1;
        ip_self.iter_gap_ivcsw = known ? ip_self.iter_ivcsw0 - ip_self.iter_ivcsw_last : -1;
    }
}

static uint32_t iter_begin(int loose)
{
    uint32_t id = atomic_fetch_add_explicit(&iter_next, 1, memory_order_relaxed);
    if (!ip_self.iter) {
        ip_self.iter = id;
        ip_self.iter_loose = (uint8_t)loose;
        ip_attrib_changed();
        atomic_fetch_add_explicit(&ip_iters_open, 1, memory_order_relaxed);
        if (ip_recording())
            cpu_begin();
        else
            ip_self.iter_cpu0 = -1; /* outside every window: nothing read, nothing sent */
        iter_edge(id, 1);
    }
    return id;
}

uint32_t ip_iter_begin(void)
{
    return iter_begin(0);
}

uint32_t ip_iter_begin_loose(void)
{
    return iter_begin(1);
}

void ip_iter_end(uint32_t id)
{
    if (id && ip_self.iter == id) {
        ip_self.iter = 0;
        ip_attrib_changed();
        atomic_fetch_sub_explicit(&ip_iters_open, 1, memory_order_relaxed);
        iter_edge(id, 0);
        ip_self.iter_cpu_at = 0;
        if (!ip_recording() || ip_self.iter_cpu0 < 0) return;
        int64_t cpu, v, iv;
        thread_cpu(&cpu, &v, &iv);
        if (cpu < 0) return;
        uint64_t now = ip_clock_now();
        ip_self.iter_cpu_last = cpu, ip_self.iter_vcsw_last = v, ip_self.iter_ivcsw_last = iv;
        ip_self.iter_flt_last = ip_self.iter_read_flt,
        ip_self.iter_mflt_last = ip_self.iter_read_mflt,
        ip_self.iter_sys_last = ip_self.iter_read_sys;
        ip_self.iter_cpu_at = now;
        int64_t d = cpu - ip_self.iter_cpu0;
        uint64_t from = ip_self.iter_cpu_from, t0 = ip_self.iter_t0;
        if (from < t0 && t0 <= now && d > 0) /* chained: the iteration's share of the span */
            d = (int64_t)((double)d * (double)(now - t0) / (double)(now - from));
        struct ip_ring *r;
        struct ip_ev_iter_cpu *e = ip_ring_begin(sizeof *e, &r);
        if (!e) return;
        e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_ITER_CPU), sizeof *e, id};
        e->cpu_ns = d;
        e->voluntary = v >= 0 && ip_self.iter_vcsw0 >= 0 ? v - ip_self.iter_vcsw0 : -1;
        e->involuntary = iv >= 0 && ip_self.iter_ivcsw0 >= 0 ? iv - ip_self.iter_ivcsw0 : -1;
        int gap = ip_self.iter_gap_cpu >= 0;
        e->gap_cpu_ns = gap ? ip_self.iter_gap_cpu : -1;
        e->gap_voluntary = gap ? ip_self.iter_gap_vcsw : -1;
        e->gap_involuntary = gap ? ip_self.iter_gap_ivcsw : -1;
        /* Faults and system time whole over the reading (a chained one's gap included, as its
         * switches): a few microseconds of gap hold none to speak of. */
        int flt = ip_self.iter_flt0 >= 0 && ip_self.iter_read_flt >= 0;
        e->minflt = flt ? ip_self.iter_read_flt - ip_self.iter_flt0 : -1;
        e->majflt = flt ? ip_self.iter_read_mflt - ip_self.iter_mflt0 : -1;
        e->sys_ns = flt ? ip_self.iter_read_sys - ip_self.iter_sys0 : -1;
        ip_ring_commit(r, sizeof *e);
    }
}

uint32_t ip_iter_current(void)
{
    return ip_self.iter;
}

int64_t ip_iter_batch_in(const char *name)
{
    const char *b = name ? strstr(name, "batch=") : NULL;
    long v = b ? strtol(b + 6, NULL, 10) : 0;
    return v > 0 ? v : 0;
}

/* ---- writer side -------------------------------------------------------------------------- */

struct iter_gpu {
    uint64_t end;
    uint32_t items;
};

static struct {
    struct ip_batch *rows, *cpu;
    struct iter_gpu *gpu; /* indexed by id */
    size_t cap;
} it;

void ip_iter_prepare(struct ip_store *s)
{
    free(it.gpu); /* a forked child's writer starts from the parent's copy */
    memset(&it, 0, sizeof it);
    it.rows = ip_batch_open(s, "iterations", 11);
    it.cpu = ip_batch_open(s, "iteration_cpu", 10);
}

void ip_iter_cpu_ingest(const struct ip_ev *ev)
{
    const struct ip_ev_iter_cpu *e = (const struct ip_ev_iter_cpu *)ev;
    int64_t *row = ip_batch_row(it.cpu);
    row[0] = e->h.aux;
    row[1] = e->cpu_ns;
    row[2] = e->voluntary < 0 ? IP_NULL : e->voluntary;
    row[3] = e->involuntary < 0 ? IP_NULL : e->involuntary;
    row[4] = e->gap_cpu_ns < 0 ? IP_NULL : e->gap_cpu_ns;
    row[5] = e->gap_voluntary < 0 ? IP_NULL : e->gap_voluntary;
    row[6] = e->gap_involuntary < 0 ? IP_NULL : e->gap_involuntary;
    row[7] = e->minflt < 0 ? IP_NULL : e->minflt;
    row[8] = e->majflt < 0 ? IP_NULL : e->majflt;
    row[9] = e->sys_ns < 0 ? IP_NULL : e->sys_ns;
}

void ip_iter_row(struct ip_store *s, uint32_t id, uint32_t tid, uint64_t start, uint64_t end,
                 int source, int64_t batch, int64_t nvtx, int64_t label_id)
{
    int64_t *row = ip_batch_row(it.rows);
    row[0] = id ? (int64_t)id : IP_NULL;
    row[1] = tid;
    row[2] = ip_phase_dominant(tid, start, end);
    row[3] = ip_store_rel(s, start);
    row[4] = (int64_t)(end - start);
    row[5] = source;
    row[6] = batch;
    row[7] = nvtx;
    row[8] = IP_NULL; /* gpu_end, gpu_items: at the end of the run */
    row[9] = IP_NULL;
    row[10] = label_id;
}

void ip_iter_gpu_work(uint32_t id, uint64_t end)
{
    if (!id) return;
    if (id >= it.cap) {
        size_t cap = it.cap ? it.cap : 1024;
        while (cap <= id) cap *= 2;
        struct iter_gpu *g = realloc(it.gpu, cap * sizeof *g);
        if (!g) return;
        memset(g + it.cap, 0, (cap - it.cap) * sizeof *g);
        it.gpu = g;
        it.cap = cap;
    }
    if (end > it.gpu[id].end) it.gpu[id].end = end;
    it.gpu[id].items++;
}

void ip_iter_finish(struct ip_store *s)
{
    ip_batch_flush(it.rows);
    struct sqlite3_stmt *st =
        ip_store_prepare(s, "UPDATE iterations SET gpu_end = ?, gpu_items = ? WHERE id = ?");
    if (!st) return;
    for (size_t id = 1; id < it.cap; id++) {
        if (!it.gpu[id].items) continue;
        sqlite3_bind_int64(st, 1, ip_store_rel(s, it.gpu[id].end));
        sqlite3_bind_int64(st, 2, it.gpu[id].items);
        sqlite3_bind_int64(st, 3, (int64_t)id);
        ip_store_step(s, st);
    }
}
