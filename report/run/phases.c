/*
 * phases.c: the per-phase figures of a run, computed from one database (run.h):
 * wall time, kernels and GPU time, peak tensor memory per device and all devices together, and
 * iterations (count, throughput, latency percentiles). Anything not measured stays unknown
 * (has_* = 0) and is printed as null, never as 0.
 *
 * Peak memory follows torch.cuda.max_memory_allocated(): for each phase, the highest
 * "allocated" total the allocator reported while any thread was in that phase, counting what
 * was already live when the phase began.
 */
#include "run.h"
#include "memrows.h"
#include "windows.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The phase being loaded with this id (phase_by_id, writable). */
static struct phase_info *loading(struct run_phases *p, int id)
{
    return (struct phase_info *)phase_by_id(p, id);
}

static void push_interval(struct interval **v, size_t *n, size_t *cap, int64_t s, int64_t e)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *v = realloc(*v, *cap * sizeof **v);
        if (!*v) cli_fail("out of memory");
    }
    (*v)[(*n)++] = (struct interval){s, e};
}

static void load_spans(sqlite3 *db, struct run_phases *p, int64_t duration)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT id, grad_mode, autocast, label FROM phases"
                                      " ORDER BY id");
    while (db_step(st) && p->n < REPORT_MAX_PHASES) {
        struct phase_info *ph = &p->v[p->n++];
        memset(ph, 0, sizeof *ph);
        ph->id = sqlite3_column_int(st, 0);
        snprintf(ph->grad_mode, sizeof ph->grad_mode, "%s", sqlite3_column_text(st, 1));
        snprintf(ph->autocast, sizeof ph->autocast, "%s", sqlite3_column_text(st, 2));
        snprintf(ph->label, sizeof ph->label, "%s", sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    /* Start, end and wall time: the union of each phase's spans (threads may overlap). */
    struct interval *iv = NULL;
    size_t cap = 0;
    int cuda_ac = db_has_column(db, "phase_spans", "cuda_autocast");
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        st = db_prepare(db, cuda_ac ? "SELECT start, coalesce(end, ?), cuda_autocast FROM"
                                      " phase_spans WHERE phase = ?"
                                    : "SELECT start, coalesce(end, ?), 0 FROM phase_spans"
                                      " WHERE phase = ?");
        sqlite3_bind_int64(st, 1, duration);
        sqlite3_bind_int(st, 2, ph->id);
        size_t n = 0;
        while (db_step(st)) {
            push_interval(&iv, &n, &cap, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
            ph->cuda_autocast |= sqlite3_column_int(st, 2) != 0;
        }
        sqlite3_finalize(st);
        ph->wall = union_length(iv, n);
        ph->start = n ? iv[0].start : 0;
        for (size_t k = 0; k < n; k++)
            if (iv[k].end > ph->end) ph->end = iv[k].end;
    }
    free(iv);
}

static void load_kernels(sqlite3 *db, struct run_phases *p)
{
    int summary = db_int(db, "SELECT count(*) FROM kernel_summary", 0) > 0;
    int any = summary || db_int(db, "SELECT EXISTS (SELECT 1 FROM kernel_rows)", 0);
    char *cupti = db_meta_text(db, "collector.cupti");
    int measured = any || (cupti && strncmp(cupti, "on", 2) == 0);
    free(cupti);
    for (int i = 0; i < p->n; i++) p->v[i].has_kernels = measured;
    if (!any) return;
    sqlite3_stmt *st = db_prepare(db, summary ? "SELECT phase, sum(count), sum(total) FROM"
                                                " kernel_summary WHERE phase >= 0 GROUP BY phase"
                                              : "SELECT phase, count(*), sum(dur) FROM kernels"
                                                " GROUP BY phase");
    while (db_step(st)) {
        struct phase_info *ph = loading(p, sqlite3_column_int(st, 0));
        if (!ph) continue;
        ph->kernels = sqlite3_column_int64(st, 1);
        ph->gpu_time = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
}

/* ---- peak memory: a sweep over span boundaries and allocator reports in time order ---------
 *
 * A phase holds a device's memory while a thread that works on that device is in it: one that
 * allocates there, or runs iterations (a model's thread, whatever it allocates). Its peak there
 * is the highest total of that device then, what it held on entering included. A thread that
 * does neither does not make its phase hold that device's memory (a DataLoader's pin-memory
 * thread sits in grad/off, the default, for as long as it runs, allocating only on the CPU: its
 * spans made the main thread's inference_mode allocations grad/off's peak on the H200 fixture,
 * 863.6 MiB where grad/off's own loop reached 683.0). */

struct sweep_item {
    int64_t ts;
    int order; /* 0 span start, 2 span end: starts and ends are inclusive (reports come between) */
    int phase;
    uint32_t tid;
};

static int cmp_sweep(const void *a, const void *b)
{
    const struct sweep_item *x = a, *y = b;
    if (x->ts != y->ts) return (x->ts > y->ts) - (x->ts < y->ts);
    return x->order - y->order;
}

static void peak_update(struct phase_info *ph, int k, int64_t alloc, int64_t res)
{
    if (alloc > ph->dev_peak_alloc[k]) {
        ph->dev_peak_alloc[k] = alloc;
        ph->dev_reserved_at_peak[k] = res;
        ph->dev_span_floor[k] = alloc; /* what stays held after it, from here */
        ph->span_peaked |= 1u << k;
    }
    if (res > ph->dev_peak_reserved[k]) ph->dev_peak_reserved[k] = res;
}

/* The device index of a report, its device added on first sight (-1: past REPORT_MAX_DEVICES). */
static int device_of(struct run_devices *d, const struct mem_row *r)
{
    int k = 0;
    while (k < d->n && (d->type[k] != r->type || d->index[k] != r->index)) k++;
    if (k == d->n) {
        if (d->n == REPORT_MAX_DEVICES) return -1;
        d->type[k] = r->type;
        d->index[k] = r->index;
        d->n++;
    }
    return k;
}

/* The threads that work on each device (a few: a list each; list REPORT_MAX_DEVICES: the
 * threads that run iterations, which work on every device). */
struct reporters {
    uint32_t *tid[REPORT_MAX_DEVICES + 1];
    size_t n[REPORT_MAX_DEVICES + 1], cap[REPORT_MAX_DEVICES + 1];
};

static int listed(const struct reporters *w, int k, uint32_t tid)
{
    for (size_t i = 0; i < w->n[k]; i++)
        if (w->tid[k][i] == tid) return 1;
    return 0;
}

static int reports_on(const struct reporters *w, int k, uint32_t tid)
{
    return listed(w, k, tid) || listed(w, REPORT_MAX_DEVICES, tid);
}

static void reporters_add(struct reporters *w, int k, uint32_t tid)
{
    if (w->n[k] && w->tid[k][w->n[k] - 1] == tid) return; /* the common case: the same again */
    if (listed(w, k, tid)) return;
    if (w->n[k] == w->cap[k] &&
        !(w->tid[k] =
              realloc(w->tid[k], (w->cap[k] = w->cap[k] ? 2 * w->cap[k] : 8) * sizeof *w->tid[k])))
        cli_fail("out of memory");
    w->tid[k][w->n[k]++] = tid;
}

/* n allocations of `bytes` in all on device k for phase ph; the largest among them: big[0..nbig)
 * (0: none). */
static void allocs_add(struct phase_info *ph, int k, int64_t n, int64_t bytes, const int64_t *big,
                       int nbig)
{
    ph->dev_allocs[k] += n;
    ph->dev_alloc_bytes[k] += bytes;
    int64_t *top = ph->dev_largest[k];
    for (int b = 0; b < nbig; b++)
        for (int j = 0; j < 3; j++)
            if (big[b] > top[j]) {
                memmove(top + j + 1, top + j, (size_t)(2 - j) * sizeof *top);
                top[j] = big[b];
                break;
            }
}

static void load_memory(sqlite3 *db, struct run_phases *p, int64_t duration)
{
    const struct mem_rows *m = mem_rows_get(db, p);
    size_t nmem = m->n;
    size_t nspan = (size_t)db_int(db, "SELECT count(*) FROM phase_spans", 0);
    for (int i = 0; i < p->n; i++) p->v[i].has_memory = nmem > 0;
    /* Reserved memory is a caching-allocator notion: the CPU allocator reports none. */
    for (int i = 0; i < p->n; i++) p->v[i].has_reserved = m->gpu;
    if (!nmem) return;
    /* Devices in order of first report, and which threads report on each; allocations counted
     * for the phase of the thread that made them. */
    struct run_devices *d = &p->devices;
    struct reporters w = {0};
    sqlite3_stmt *st;
    if (db_has_table(db, "iterations")) {
        st = db_prepare(db, "SELECT DISTINCT tid FROM iterations");
        while (db_step(st))
            reporters_add(&w, REPORT_MAX_DEVICES, (uint32_t)sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
    }
    for (size_t r = 0; r < nmem; r++) {
        const struct mem_row *x = &m->v[r];
        int k = device_of(d, x);
        if (k < 0) continue;
        reporters_add(&w, k, x->tid);
        struct phase_info *owner = loading(p, x->phase);
        if (owner && x->bytes > 0) allocs_add(owner, k, 1, x->bytes, &x->bytes, 1);
    }
    /* Reports folded by the writer: their allocations (their levels are rows above). */
    for (size_t f = 0; f < m->nfolds; f++) {
        const struct mem_fold *x = &m->folds[f];
        struct mem_row dev = {.type = x->type, .index = x->index};
        int k = device_of(d, &dev);
        if (k < 0) continue;
        reporters_add(&w, k, x->tid);
        struct phase_info *owner = loading(p, x->phase);
        if (owner && x->allocs > 0) allocs_add(owner, k, x->allocs, x->alloc_bytes, x->largest, 3);
    }
    /* The spans' starts and ends, sorted; the reports are in time order already (memrows.h):
     * the sweep merges the two (it copied and sorted every report with them before: a tenth of
     * the H200 fixture's report). */
    struct sweep_item *v = malloc((2 * nspan + 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    st = db_prepare(db, "SELECT phase, start, coalesce(end, ?), tid FROM phase_spans");
    sqlite3_bind_int64(st, 1, duration);
    while (db_step(st) && n + 2 <= 2 * nspan) {
        int ph = sqlite3_column_int(st, 0);
        uint32_t tid = (uint32_t)sqlite3_column_int64(st, 3);
        v[n++] = (struct sweep_item){sqlite3_column_int64(st, 1), 0, ph, tid};
        v[n++] = (struct sweep_item){sqlite3_column_int64(st, 2), 2, ph, tid};
    }
    sqlite3_finalize(st);
    qsort(v, n, sizeof *v, cmp_sweep);
    int64_t alloc[REPORT_MAX_DEVICES] = {0}, res[REPORT_MAX_DEVICES] = {0};
    /* Threads of reporters on device k in phase j (by its place in p->v). */
    int active[REPORT_MAX_PHASES][REPORT_MAX_DEVICES] = {{0}};
    size_t i = 0, r = 0;
    while (i < n || r < nmem) {
        /* A report goes before a span end at its time, after a span start (cmp_sweep). */
        int report = r < nmem &&
                     (i == n || m->v[r].ts < v[i].ts || (m->v[r].ts == v[i].ts && v[i].order == 2));
        if (report) {
            const struct mem_row *x = &m->v[r++];
            int k = device_of(d, x);
            if (k < 0) continue;
            alloc[k] = x->allocated;
            res[k] = x->reserved < 0 ? 0 : x->reserved;
            for (int j = 0; j < p->n; j++) {
                if (!active[j][k]) continue;
                struct phase_info *q = &p->v[j];
                peak_update(q, k, alloc[k], res[k]);
                if (alloc[k] < q->dev_span_floor[k]) q->dev_span_floor[k] = alloc[k];
            }
            continue;
        }
        const struct sweep_item *e = &v[i++];
        struct phase_info *ph = loading(p, e->phase);
        if (!ph) continue;
        int j = (int)(ph - p->v);
        for (int k = 0; k < d->n; k++) {
            if (!reports_on(&w, k, e->tid)) continue;
            if (e->order == 0) {
                if (!active[j][k]++) ph->span_peaked &= ~(1u << k); /* a stretch begins */
                ph->dev_held |= 1u << k;
                peak_update(ph, k, alloc[k], res[k]);
            } else if (active[j][k] && !--active[j][k] && (ph->span_peaked & (1u << k))) {
                ph->dev_entry_alloc[k] = ph->dev_span_floor[k]; /* what stayed held after */
            }
        }
    }
    free(v);
    for (int k = 0; k <= REPORT_MAX_DEVICES; k++) free(w.tid[k]);
}

/* Union of each phase's iteration intervals (host calls) of the iterations the report counts
 * (p->iters: marks, module calls, detected ones): the window the launch-bound and pageable-copy
 * advice look at. */
static void load_iteration_window(struct run_phases *p)
{
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        if (!ph->iterations) continue;
        struct interval *iv = NULL;
        size_t n = 0, cap = 0;
        for (size_t k = 0; k < p->niters; k++)
            if (p->iters[k].phase == i)
                push_interval(&iv, &n, &cap, p->iters[k].start,
                              p->iters[k].start + p->iters[k].host);
        ph->busy = union_length(iv, n);
        free(iv);
    }
}

/* A phase with nothing in it but a moment (the set-up between two context managers): no
 * iteration, no kernel, under a millisecond. */
static void mark_transient(struct run_phases *p)
{
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        ph->transient = p->n > 1 && !ph->iterations && !ph->kernels && ph->wall < 1000000;
    }
}

static void load_busy(sqlite3 *db, struct run_phases *p)
{
    if (!db_has_table(db, "phase_gpu")) return;
    sqlite3_stmt *st = db_prepare(db, "SELECT phase, busy_ns FROM phase_gpu");
    while (db_step(st)) {
        struct phase_info *ph = loading(p, sqlite3_column_int(st, 0));
        if (!ph) continue;
        ph->has_busy = 1;
        ph->gpu_busy = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
}

/* Kernel time by phase, operation class and compute type, from the names. */
static void load_mix(sqlite3 *db, struct run_phases *p)
{
    int summary = db_int(db, "SELECT count(*) FROM kernel_summary", 0) > 0;
    sqlite3_stmt *st = db_prepare(db, summary ? "SELECT k.phase, s.value, k.total FROM"
                                                " kernel_summary k JOIN strings s ON s.id ="
                                                " k.name_id WHERE k.phase >= 0"
                                              : "SELECT k.phase, s.value, sum(k.dur) FROM kernels"
                                                " k JOIN launch_sigs g ON g.id = k.sig JOIN"
                                                " strings s ON s.id = g.name_id GROUP BY 1, 2");
    while (db_step(st)) {
        struct phase_info *ph = loading(p, sqlite3_column_int(st, 0));
        if (!ph) continue;
        enum precision prec;
        enum opclass op;
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (!name) name = "";
        classify_kernel(name, &prec, &op);
        ph->mix[op][prec] += sqlite3_column_int64(st, 2);
        if (classify_is_triton(name) && (op == OP_GEMM || op == OP_CONV || op == OP_ATTENTION))
            ph->triton_compute_ns += sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
}

const struct phase_info *phase_twin(const struct run_phases *p, const struct phase_info *ph,
                                    const char *grad_mode)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].grad_mode, grad_mode) && !strcmp(p->v[i].autocast, ph->autocast) &&
            p->v[i].nsteady)
            return &p->v[i];
    return NULL;
}

int phases_match(const struct run_phases *p, const char *want)
{
    for (int i = 0; i < p->n; i++) {
        char s[64];
        phase_short_label(&p->v[i], s, sizeof s);
        if (!strcmp(p->v[i].label, want) || !strcmp(s, want) ||
            (!strncmp(want, "inference_mode/", 15) && !strcmp(s + 10, want + 15)))
            return i;
    }
    return -1;
}

int phases_find(const struct run_phases *p, const char *want, const char *option)
{
    int i = phases_match(p, want);
    if (i >= 0) return i;
    char known[512] = "";
    for (int i = 0; i < p->n; i++) {
        char s[64];
        phase_short_label(&p->v[i], s, sizeof s);
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s'%s'", i ? ", " : "", s);
    }
    cli_fail("%s '%s' is not a phase of this run (it has %s)", option, want, p->n ? known : "none");
}

void phases_load(sqlite3 *db, struct run_phases *p, const struct run_options *o)
{
    summaries_complete(db); /* an unfinished run: its kernel summary, computed once */
    memset(p, 0, sizeof *p);
    p->opts = o ? *o : RUN_OPTIONS_DEFAULT;
    if (p->opts.window) run_window_resolve(db, &p->opts);
    if (!(p->lazy = calloc(1, sizeof *p->lazy))) cli_fail("out of memory");
    if (!(p->series.v = calloc(REPORT_MAX_SERIES, sizeof *p->series.v)) ||
        !(p->v = calloc(REPORT_MAX_PHASES, sizeof *p->v)))
        cli_fail("out of memory");
    int64_t duration = 0;
    db_meta_int(db, "duration_ns", &duration);
    if (!duration) duration = db_int(db, "SELECT max(coalesce(end, start)) FROM phase_spans", 0);
    load_spans(db, p, duration);
    load_kernels(db, p);
    load_busy(db, p);
    load_mix(db, p);
    load_memory(db, p, duration);
    phases_memory_peaks(p);
    iterations_load(db, p);
    load_iteration_window(p);
    mark_transient(p);
    phases_steady_gpu(db, p);
    series_between_gpu(db, p);
    series_between_data(db, p);
    series_figures(db, p);
    series_mark_mixed_peaks(p);
    series_cpu(db, p);
    series_heap_faults(db, p);
    phases_warmup_off_cpu(db, p);
    series_loop_walls(p);
    phases_suspect(db, p);
    char *py = db_meta_text(db, "python_module_hooks");
    p->dataloader_worker = py && !strncmp(py, "worker", 6);
    snprintf(p->py_hooks_off, sizeof p->py_hooks_off, "%s",
             py && !strncmp(py, "off: ", 5) ? py + 5 : "");
    free(py);
    db_meta_int(db, "python_module_calls_unseen", &p->py_unseen);
    db_meta_int(db, "torch_marks_dropped", &p->marks_dropped);
    db_meta_int(db, "python_module_calls_open_at_end", &p->py_open_at_end);
    db_meta_int(db, "python_threads_watched_late", &p->py_late_n);
    db_meta_int(db, "python_threads_watched_late_ns", &p->py_late_ns);
    char *why = db_meta_text(db, "end_reason");
    snprintf(p->end_reason, sizeof p->end_reason, "%s", why ? why : "");
    free(why);
    for (int k = 0; k < RUN_LOST_COUNT; k++) db_meta_int(db, run_lost_key(k), &p->lost[k]);
    char *cupti = db_meta_text(db, "collector.cupti");
    snprintf(p->cupti_status, sizeof p->cupti_status, "%s", cupti ? cupti : "");
    free(cupti);
    run_check(p);
}

const char *run_lost_key(int which)
{
    static const char *const keys[RUN_LOST_COUNT] = {
        "dropped_events",      "cupti_dropped_records",    "cupti_buffers_refused",
        "cupti_buffer_errors", "cupti_records_not_stored", "write_errors",
        "rows_not_written"};
    return which >= 0 && which < RUN_LOST_COUNT ? keys[which] : "";
}

const char *phase_resolve(const struct run_phases *const *runs, int n, const char *want)
{
    static struct run_phases all; /* large: not on the stack */
    static struct phase_info v[REPORT_MAX_PHASES];
    memset(&all, 0, sizeof all);
    memset(v, 0, sizeof v);
    all.v = v;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < runs[r]->n && all.n < REPORT_MAX_PHASES; i++) {
            int seen = 0;
            for (int j = 0; j < all.n; j++) seen |= !strcmp(all.v[j].label, runs[r]->v[i].label);
            if (!seen) all.v[all.n++] = runs[r]->v[i];
        }
    return pool_printf("%s", all.v[phases_find(&all, want, "--phase")].label);
}
