/*
 * iterations.c: per phase, what one iteration costs the user (docs/report.md, "Iterations").
 *
 * Latency is to GPU completion: an iteration ends when its host call has returned and the last
 * GPU work launched inside it has finished. The end of that work comes, best first, from the
 * iteration's own row (iterations.gpu_end, written when the run finished), from the kernels
 * that carry its id (kernel_rows.iter: a run that did not finish), or, for databases of
 * schema 1, from the CUDA API records: each kernel, copy and memset belongs to the iteration in
 * which its thread made the launching call. Without any of them the host time is all there is,
 * and the report says so.
 *
 * A phase without explicit iterations gets those detect.c finds in its allocator reports (host
 * time only: the reports are the host's).
 *
 * Warm-up: the leading iterations of a phase slower than its steady state, where the steady
 * state is the second half of its iterations: slower than median + max(5 x 1.4826 x MAD, 10% of
 * the median). They are shown apart, with what the data says caused them, and left out of every
 * steady-state figure. `--warmup N` takes the first N of each phase instead.
 */
#include "operators_iters.h"
#include "run.h"
#include "windows.h"
#include "detect.h"
#include "cudnn_run.h"
#include "memrows.h"
#include "../../profiler/stats.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The outlier rule's constants for warm-up (rstats.h): an iteration is warm-up while it is over
 * the steady median by more than WARMUP_SIGMAS robust deviations and WARMUP_SHARE of the median
 * (the median itself with fewer than 8 iterations). */
#define WARMUP_SIGMAS    5
#define WARMUP_SHARE     0.10
#define WARMUP_SHARE_FEW 1.0
/* A warm-up of WARMUP_LONG iterations or more, then WARMUP_CALM at the steady level, then a run
 * of iterations as slow as it, a quarter of its length at least: the leading ones were a level
 * of the machine's, not warm-up (a long run's bursts of noise make short runs of slow ones, and
 * a real warm-up of a few iterations, or of a few dozen that settle by degrees, stays). */
#define WARMUP_LONG 64
#define WARMUP_CALM 16

struct iter {
    int64_t id, tid, start, host, gpu_end, items;
    int64_t kernels; /* GPU work launched inside it, -1 unknown */
    int phase;
    int64_t batch; /* -1 unknown */
    int64_t label; /* the mark's name (strings id), 0 none */
    int64_t model; /* the model it ran (a module call's label, the one a mark held: strings
                      id), -1 unknown, -2 several, -3 none (a mark that held no module call in a
                      run whose module calls were seen) */
    int setting;   /* the varying settings it ran with (settings.c: 1 + combo index), 0 none */
    int source;    /* iterations.source: 5 a Python module call, 0 detected */
    int series;    /* its series (run_series index), -1 none */
    int64_t gap;   /* host time to its thread's next iteration of its series, -1 none */
    int captured;  /* its every operator call was recorded (sampled operators) */
    int64_t calls; /* a captured one's operator calls (capture_calls, once read; -1 none) */
};

struct iters {
    struct iter *v;
    size_t n;
    sqlite3 *db;                /* where capture_calls reads them, */
    const struct run_phases *p; /* (op_iters_get) */
    int calls_loaded; /* once, for the first series whose captures read slower */
};

static int cmp_tid_start(const void *a, const void *b)
{
    const struct iter *x = a, *y = b;
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->start > y->start) - (x->start < y->start);
}

static int cmp_start(const void *a, const void *b)
{
    const struct iter *x = *(struct iter *const *)a, *y = *(struct iter *const *)b;
    return (x->start > y->start) - (x->start < y->start);
}

/* The iteration of thread `tid` whose host call holds `ts` (v sorted by tid, start), or NULL. */
static struct iter *iter_at(struct iters *it, int64_t tid, int64_t ts)
{
    size_t lo = 0, hi = it->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        struct iter *m = &it->v[mid];
        if (m->tid < tid || (m->tid == tid && m->start <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NULL;
    struct iter *c = &it->v[lo - 1];
    return c->tid == tid && ts <= c->start + c->host ? c : NULL;
}

static void note_work(struct iter *x, int64_t end)
{
    if (!x) return;
    if (end > x->gpu_end) x->gpu_end = end;
    x->kernels = x->kernels < 0 ? 1 : x->kernels + 1;
}

/* Schema 1: each record's launching call (cuda_api) gives its thread and time. */
static int gpu_from_api(sqlite3 *db, struct iters *it)
{
    if (!db_int(db, "SELECT EXISTS (SELECT 1 FROM cuda_api)", 0)) return 0;
    static const char *const sql[] = {
        "SELECT a.tid, a.start, k.start + k.dur FROM kernel_rows k JOIN cuda_api a USING (corr)",
        "SELECT a.tid, a.start, m.start + m.dur FROM memcpy m JOIN cuda_api a ON a.corr = m.corr",
        "SELECT a.tid, a.start, m.start + m.dur FROM memset m JOIN cuda_api a ON a.corr = m.corr",
    };
    int any = 0;
    for (size_t q = 0; q < sizeof sql / sizeof *sql; q++) {
        sqlite3_stmt *st = db_prepare(db, sql[q]);
        while (db_step(st)) {
            struct iter *x = iter_at(it, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
            note_work(x, sqlite3_column_int64(st, 2));
            any |= x != NULL;
        }
        sqlite3_finalize(st);
    }
    return any;
}

static int cmp_id(const void *a, const void *b)
{
    const struct iter *x = *(struct iter *const *)a, *y = *(struct iter *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Schema 2, a run that did not finish: the kernels that carry the iteration's id. */
static int gpu_from_ids(sqlite3 *db, struct iters *it)
{
    if (!db_has_column(db, "kernel_rows", "iter")) return 0;
    struct iter **byid = malloc((it->n ? it->n : 1) * sizeof *byid);
    if (!byid) cli_fail("out of memory");
    int sorted = 1; /* one thread's, or threads one after another: no sort to make */
    for (size_t i = 0; i < it->n; i++) {
        byid[i] = &it->v[i];
        sorted &= !i || cmp_id(&byid[i - 1], &byid[i]) <= 0;
    }
    if (!sorted) qsort(byid, it->n, sizeof *byid, cmp_id);
    sqlite3_stmt *st = db_prepare(db, "SELECT iter, max(start + dur), count(*) FROM kernel_rows"
                                      " WHERE iter IS NOT NULL GROUP BY iter");
    int any = 0;
    while (db_step(st)) {
        struct iter key = {.id = sqlite3_column_int64(st, 0)}, *kp = &key;
        struct iter **x = bsearch(&kp, byid, it->n, sizeof *byid, cmp_id);
        if (!x) continue;
        (*x)->gpu_end = sqlite3_column_int64(st, 1);
        (*x)->kernels = sqlite3_column_int64(st, 2);
        any = 1;
    }
    sqlite3_finalize(st);
    free(byid);
    return any;
}

/* An iteration inside another of its thread (a TorchScript call in an NVTX or record_function
 * iteration range) is part of it: the outermost is the iteration, as it owns the GPU work launched
 * inside (profiler/iteration.h). But for marks of one name: an event loop's requests, each
 * marked around an await, overlap on its thread, and one that began and ended inside another is
 * a request of its own (16 at a time read 115 of 480). v sorted by tid, start. */
static void drop_nested(struct iters *it)
{
    size_t w = 0;
    for (size_t k = 0; k < it->n; k++) {
        const struct iter *o = w ? &it->v[w - 1] : NULL, *x = &it->v[k];
        int alike = o && (x->source == 2 || x->source == 3) && x->source == o->source &&
                    x->label == o->label && x->label > 0;
        if (o && !alike && o->tid == x->tid && x->start + x->host <= o->start + o->host) continue;
        it->v[w++] = *x;
    }
    it->n = w;
}

/* The iterations whose every operator call was recorded (INFPROF_OPERATORS=sampled): the
 * operator callback made them slower (+45% on a tiny-op CPU model, a few % on real ones), so
 * their latencies are kept out of every latency figure where enough others remain
 * (group_warmup). */
static void mark_captured(sqlite3 *db, struct iters *it)
{
    if (!db_has_table(db, "torch_operator_windows")) return;
    size_t n = (size_t)db_int(db, "SELECT count(*) FROM torch_operator_windows", 0), m = 0;
    if (!n) return;
    int64_t *w = malloc(n * sizeof *w);
    if (!w) cli_fail("out of memory");
    sqlite3_stmt *st =
        db_prepare(db, pool_printf("SELECT iter FROM %s", iterations_operator_windows(db)));
    while (m < n && db_step(st)) w[m++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    rstats_sort_i64(w, m);
    for (size_t k = 0; k < it->n; k++)
        it->v[k].captured =
            it->v[k].id > 0 && bsearch(&it->v[k].id, w, m, sizeof *w, rstats_cmp_i64);
    /* A request whose model ran on another thread, under half of its calls captured, ran about
     * as fast as the rest: not set apart (a decode server's 20 calls a request, 2 captured, read
     * "Iters 15, Captured 184"); its operators are still read, weighed (marks.c). */
    if (iterations_moved(db)) {
        m = 0;
        st = db_prepare(db, "SELECT mark FROM temp.mark_weights WHERE w > 2 ORDER BY mark");
        while (m < n && db_step(st)) w[m++] = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        for (size_t k = 0; k < it->n && m; k++)
            if (it->v[k].captured && bsearch(&it->v[k].id, w, m, sizeof *w, rstats_cmp_i64))
                it->v[k].captured = 0;
    }
    free(w);
}

/* Each captured iteration's operator calls (struct iter.calls), once: summed from the run's
 * operators per capture-window iteration (operators_iters.c), which the operator figures read
 * anyway. A GROUP BY of its own over the calls sorted them again: 104 ms of the H200 fixture's
 * 1.0 s report, 2.0 s of its 10x copy's 10.5 s. Only where a capture's cost is to be bounded
 * (group_warmup). */
static void capture_calls(struct iters *it)
{
    if (it->calls_loaded) return;
    it->calls_loaded = 1;
    for (size_t k = 0; k < it->n; k++) it->v[k].calls = -1;
    if (!it->db || !it->p) return;
    const struct op_iters *x = op_iters_get(it->db, it->p);
    if (!x) return;
    size_t n = 0;
    for (size_t k = 0; k < it->n; k++) n += it->v[k].captured;
    if (!n) return;
    int64_t(*c)[2] = malloc(n * sizeof *c); /* captured ids, their calls */
    if (!c) cli_fail("out of memory");
    size_t m = 0;
    for (size_t k = 0; k < it->n; k++)
        if (it->v[k].captured) c[m][0] = it->v[k].id, c[m++][1] = -1;
    qsort(c, m, sizeof *c, rstats_cmp_i64);
    for (size_t j = 0; j < x->n; j++) {
        int64_t(*hit)[2] = bsearch(&x->v[j].iter, c, m, sizeof *c, rstats_cmp_i64);
        if (hit) (*hit)[1] = ((*hit)[1] < 0 ? 0 : (*hit)[1]) + x->v[j].calls;
    }
    for (size_t k = 0; k < it->n; k++) {
        if (!it->v[k].captured) continue;
        int64_t(*hit)[2] = bsearch(&it->v[k].id, c, m, sizeof *c, rstats_cmp_i64);
        it->v[k].calls = hit ? (*hit)[1] : -1;
    }
    free(c);
}

static int cmp_iter_id(const void *a, const void *b)
{
    const struct iter *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Each mark's model: the one whose module calls it held (temp.mark_models, marks.c). */
static void marks_models(sqlite3 *db, struct iters *it)
{
    qsort(it->v, it->n, sizeof *it->v, cmp_iter_id);
    sqlite3_stmt *st = db_prepare(db, "SELECT mark, count(*), min(label) FROM temp.mark_models"
                                      " GROUP BY mark");
    while (db_step(st)) {
        struct iter key = {.id = sqlite3_column_int64(st, 0)};
        struct iter *x = bsearch(&key, it->v, it->n, sizeof *it->v, cmp_iter_id);
        if (x && x->source != 5)
            x->model = sqlite3_column_int64(st, 1) > 1 ? -2 : sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
}

static void load_all(sqlite3 *db, const struct run_options *o, struct iters *it, int *gpu_known)
{
    int v2 = db_has_column(db, "iterations", "gpu_end");
    int v4 = db_has_column(db, "iterations", "label_id");
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM iterations", 0);
    it->v = calloc(cap ? cap : 1, sizeof *it->v);
    if (!it->v) cli_fail("out of memory");
    /* A mark wins over the module calls it holds (iterations_counted). */
    int marked = strcmp(iterations_counted(db), "1") != 0;
    int64_t *inside = NULL;
    size_t ninside = 0;
    if (marked) {
        ninside = (size_t)db_int(db, "SELECT count(*) FROM temp.modules_in_marks", 0);
        inside = malloc((ninside ? ninside : 1) * sizeof *inside);
        if (!inside) cli_fail("out of memory");
        sqlite3_stmt *mi = db_prepare(db, "SELECT id FROM temp.modules_in_marks ORDER BY id");
        size_t q = 0;
        while (q < ninside && db_step(mi)) inside[q++] = sqlite3_column_int64(mi, 0);
        sqlite3_finalize(mi);
        ninside = q;
    }
    /* A server's request marked on its front thread is in its worker's phase (marks.c). */
    sqlite3_stmt *st = db_prepare(
        db, pool_printf(v4   ? "SELECT id, tid, %s, start, dur, batch, gpu_end, gpu_items,"
                               " label_id, source FROM iterations"
                        : v2 ? "SELECT id, tid, %s, start, dur, batch, gpu_end, gpu_items, NULL,"
                               " source FROM iterations"
                             : "SELECT rowid, tid, %s, start, dur, batch, NULL, NULL, NULL,"
                               " source FROM iterations",
                        iterations_phase(db)));
    int have_end = 0, w_n, modules = 0;
    int64_t w_start = 0, w_end = 0;
    int window = run_window_only(o, &w_start, &w_end, &w_n);
    while (db_step(st) && it->n < cap) {
        struct iter *x = &it->v[it->n++];
        x->id = sqlite3_column_int64(st, 0);
        x->tid = sqlite3_column_int64(st, 1);
        x->phase = sqlite3_column_int(st, 2);
        x->start = sqlite3_column_int64(st, 3);
        x->host = sqlite3_column_int64(st, 4);
        x->batch = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
        x->gpu_end = sqlite3_column_type(st, 6) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 6);
        x->kernels = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
        x->label = sqlite3_column_int64(st, 8);
        x->source = sqlite3_column_int(st, 9);
        x->series = -1;
        x->model = x->source == 5 && x->label > 0 ? x->label : -1;
        modules |= x->source == 5;
        if (marked && x->source == 5 &&
            bsearch(&x->id, inside, ninside, sizeof *inside, rstats_cmp_i64)) {
            it->n--;
            continue;
        }
        if (window && (x->start < w_start || x->start + x->host > w_end)) { /* --window N */
            it->n--;
            continue;
        }
        have_end |= x->gpu_end != 0;
    }
    sqlite3_finalize(st);
    free(inside);
    if (marked) marks_models(db, it);
    for (size_t k = 0; modules && k < it->n; k++)
        if ((it->v[k].source == 2 || it->v[k].source == 3) && it->v[k].model == -1)
            it->v[k].model = -3;
    qsort(it->v, it->n, sizeof *it->v, cmp_tid_start);
    drop_nested(it);
    mark_captured(db, it);
    if (!have_end && it->n) have_end = v2 ? gpu_from_ids(db, it) : gpu_from_api(db, it);
    *gpu_known = have_end;
}

size_t iterations_warmup(int fixed, const int64_t *lat, size_t n)
{
    if (fixed >= 0) return (size_t)fixed < n ? (size_t)fixed : n;
    if (n < 4) return 0;
    size_t half = n / 2, m = n - half;
    int64_t *tail = malloc(m * sizeof *tail);
    if (!tail) cli_fail("out of memory");
    memcpy(tail, lat + half, m * sizeof *tail);
    int64_t med = rstats_median(tail, m);
    double sigma = RSTATS_SIGMA_PER_MAD * (double)rstats_mad(tail, m, med);
    free(tail);
    /* Under 8 iterations the tail's spread says little (a loaded machine stretches any of them
     * by tens of percent): only an iteration twice the steady one is taken for warm-up. */
    double share = n < 8 ? WARMUP_SHARE_FEW : WARMUP_SHARE;
    size_t k = 0;
    while (k < half && rstats_above((double)lat[k], (double)med, sigma, WARMUP_SIGMAS, share)) k++;
    /* The same slowness again later, as a run of iterations after a stretch at the steady
     * level: the machine's speed moved (a fresh-eyes check's loop ran 425, 353, then 418 us in
     * blocks of hundreds, and the first 493 of 1,020 were taken for warm-up, its p50 354 us
     * where the program's own was 424). Then only what is twice the steady median is warm-up (a
     * first call's loading). A warm-up that settles by degrees, slow ones among the first fast
     * ones (the H200 ResNet's first 50), has no such stretch before them. */
    size_t run = 0, calm = 0, longest = 0;
    int settled = 0;
    for (size_t i = k; k >= WARMUP_LONG && share < WARMUP_SHARE_FEW && i < n; i++) {
        int slow = rstats_above((double)lat[i], (double)med, sigma, WARMUP_SIGMAS, share);
        run = slow ? run + 1 : 0, calm = slow ? 0 : calm + 1;
        settled |= calm >= WARMUP_CALM;
        if (settled) longest = run > longest ? run : longest;
    }
    if (k >= WARMUP_LONG && 4 * longest >= k) {
        k = 0;
        while (k < half &&
               rstats_above((double)lat[k], (double)med, sigma, WARMUP_SIGMAS, WARMUP_SHARE_FEW))
            k++;
    }
    return k;
}

/* How much more the caching allocator reserved inside the warm-up iterations iv[0..niv) (time
 * order) than it held before the first: the highest reservation in them less the last one
 * before (0 when none is known). */
static int64_t reserved_growth(const struct mem_rows *m, const int64_t (*iv)[2], size_t niv)
{
    int64_t top = -1, before = 0, before_ts = 0, a = niv ? iv[0][0] : 0;
    int found = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct mem_row *r = &m->v[i];
        if (!r->type) continue;
        for (size_t k = 0; k < niv && r->reserved > top; k++)
            if (r->ts >= iv[k][0] && r->ts <= iv[k][1]) top = r->reserved;
        if (r->ts < a && (!found || r->ts > before_ts)) /* the first of a tie, as LIMIT 1 */
            found = 1, before_ts = r->ts, before = r->reserved;
    }
    return top < 0 ? 0 : top - (before < 0 ? 0 : before);
}

/* What the phase's warm-up iterations iv[0..niv) (start, end; time order) show, in words ("" when
 * nothing does): only what happened inside them. The window from the first to the last once
 * counted other series' work run between them (an H200 run's bf16 warm-up of 3 iterations,
 * 328.54 ms, read "23196 cuDNN calls, 1.907s": another loop's autotuning). */
static void warmup_cause(const struct cudnn_searches *sc, const struct mem_rows *m,
                         const struct phase_info *ph, const int64_t (*iv)[2], size_t niv,
                         int64_t extra_kernels, int64_t steady_kernels, char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    int64_t calls = 0, dur = 0;
    for (size_t k = 0; k < niv; k++) {
        size_t lo = 0, hi = sc->n;
        while (lo < hi) { /* the first call at its start or after */
            size_t mid = (lo + hi) / 2;
            if (sc->v[mid].start < iv[k][0])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < sc->n && sc->v[i].start <= iv[k][1]; i++)
            calls++, dur += sc->v[i].dur;
    }
    if (calls > 0) {
        char t[32];
        fmt_ns(t, sizeof t, (double)dur);
        o += (size_t)snprintf(out + o, n - o,
                              "cuDNN algorithm search and plan builds (%lld"
                              " calls, %s)",
                              (long long)calls, t);
    }
    int64_t grown = reserved_growth(m, iv, niv);
    if (grown > 0 && o + 64 < n) {
        char t[32];
        fmt_bytes(t, sizeof t, (double)grown);
        o += (size_t)snprintf(out + o, n - o, "%sthe caching allocator reserving %s more",
                              o ? "; " : "", t);
    }
    if (extra_kernels > 2 && extra_kernels * 10 >= steady_kernels && o + 64 < n)
        snprintf(out + o, n - o, "%s%lld more kernels per iteration than later%s", o ? "; " : "",
                 (long long)extra_kernels,
                 strcmp(ph->autocast, "off") ? " (autocast casting the weights)" : "");
}

/* A series' name: the mark's text beyond its leading "iteration" and the separators after it
 * ("iteration batch=8 int8" -> "batch=8 int8"; "iteration" -> ""), then the settings that tell
 * it apart ("batch=8 cudnn.benchmark=on"). A Python module's class name (source 5) is a name,
 * never a mark: kept whole (classes iteration_Net and Net were one series "Net" to compare). */
static void series_name(sqlite3 *db, int64_t label, int source, const char *settings, char *out,
                        size_t n)
{
    char name[352] = "";
    if (label < 0) /* a loop detected without a mark (add_detected) */
        snprintf(name, sizeof name, "loop %lld", (long long)-label);
    if (label > 0) {
        sqlite3_stmt *st = db_prepare(db, "SELECT value FROM strings WHERE id = ?");
        sqlite3_bind_int64(st, 1, label);
        if (db_step(st)) {
            const char *v = (const char *)sqlite3_column_text(st, 0);
            /* "iteration" and the separators after it, when a separator (or the end) follows:
             * "iterations plural" keeps its name. */
            static const char sep[] = " :_-/=|";
            if (v && source != 5 && !strncmp(v, "iteration", 9) && (!v[9] || strchr(sep, v[9]))) {
                v += 9;
                while (*v && strchr(sep, *v)) v++;
            }
            fmt_label_cut(name, sizeof name, v ? v : "", 255);
        }
        sqlite3_finalize(st);
    }
    size_t o = strlen(name);
    snprintf(name + o, sizeof name - o, "%s%.*s", o && settings[0] ? " " : "",
             (int)fmt_utf8_cut(settings, 95), settings);
    size_t len = strlen(name) < n ? strlen(name) : n - 1;
    memcpy(out, name, len);
    out[len] = 0;
}

/* What captured iteration `it` counts for in the latency figures (series_captured_as, by its
 * series). Captures are no even sample of a run: the first come at 1 in 4, then spaced by what a
 * capture was measured to cost, so they come densest where the run was quietest. Leaving them out
 * weighed a run's later, busier stretches more: a server whose first requests came one at a time
 * read a p50 18% over its own log's (4.97 against 4.22 ms, 35 of its 50 captures among its first
 * 100 requests); standing a steady neighbour in for each took back a third of it (its latencies
 * alternate request by request); its own time, less the capture's cost, takes back all of it. */
static int64_t captured_as(struct iter *it, int64_t lat, const struct run_phases *p)
{
    int s = it->series;
    return series_captured_as(s >= 0 && s < p->series.n ? &p->series.v[s] : NULL, lat);
}

/* The figures of iterations mine[0..n) (time order) whose warm[] flags are set apart (1 warm-up,
 * 2 captured: in the latency figures at captured_as, not in the count of steady iterations nor
 * their items). */
static void steady_figures(const struct run_phases *p, struct iter **mine, const int64_t *lat,
                           const int64_t *host, const char *warm, size_t n, int64_t *p50,
                           int64_t *p95, int64_t *p99, int64_t *mean, int64_t *host_p50,
                           int64_t *items, size_t *nsteady)
{
    struct ip_stats st;
    ip_stats_init(&st, 0);
    int64_t sum = 0, count = 0, weighed = 0, it = 0, batched = 1;
    int64_t *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) cli_fail("out of memory");
    for (size_t k = 0; k < n; k++) {
        if (warm[k] == 1) continue;
        int64_t x = warm[k] == 2 ? captured_as(mine[k], lat[k], p) : lat[k];
        ip_stats_add(&st, x);
        sum += x;
        h[weighed++] = warm[k] == 2 ? captured_as(mine[k], host[k], p) : host[k];
        if (warm[k]) continue; /* captured: its figures only */
        count++;
        if (mine[k]->batch < 0)
            batched = 0;
        else
            it += mine[k]->batch;
    }
    *nsteady = (size_t)count;
    if (count) {
        ip_stats_median(&st, NULL);
        *p50 = ip_stats_percentile(&st, 50);
        *p95 = ip_stats_percentile(&st, 95);
        *p99 = ip_stats_percentile(&st, 99);
        *mean = sum / weighed;
        *host_p50 = rstats_p50(h, (size_t)weighed); /* the rule of lat_p50 (issue 25) */
        *items = batched ? it : 0;
    }
    ip_stats_free(&st);
    free(h);
}

/* The recording windows (windows.h), when the run had some (n 0: it recorded all along): a gap
 * from one to another, over time nothing was recorded in, is no time between iterations. */
struct spans {
    struct interval *v;
    size_t n;
};

static int one_window(const struct spans *w, int64_t a, int64_t b)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].start <= a && b <= w->v[i].end) return 1;
    return !w->n;
}

/* The time between the steady iterations mine[0..n) of series se and their next ones. */
static void series_gaps(struct series_info *se, struct iter **mine, const char *warm, size_t n,
                        const struct spans *w)
{
    se->gap_gpu_busy = -1;
    se->gapv = malloc((n ? n : 1) * sizeof *se->gapv);
    int64_t *g = malloc((n ? n : 1) * sizeof *g), *tids = NULL;
    if (!se->gapv || !g) cli_fail("out of memory");
    for (size_t k = 0; k < n; k++) {
        if (warm[k] == 1 || mine[k]->gap < 0) continue; /* a captured one's gap is as any */
        int64_t end = mine[k]->start + mine[k]->host;
        if (!one_window(w, end, end + mine[k]->gap)) continue;
        int t = 0; /* its thread among those seen (a pool's few) */
        while (t < se->gap_threads && tids[t] != mine[k]->tid) t++;
        if (t == se->gap_threads) {
            if (!(tids = realloc(tids, (size_t)(t + 1) * sizeof *tids))) cli_fail("out of memory");
            tids[se->gap_threads++] = mine[k]->tid;
        }
        se->gapv[se->gaps] = (struct interval){end, end + mine[k]->gap};
        g[se->gaps++] = mine[k]->gap;
        se->gap_total += mine[k]->gap;
        se->gap_host += mine[k]->host;
    }
    if (se->gaps) se->gap_p50 = rstats_p50(g, (size_t)se->gaps);
    free(g);
    free(tids);
}

/* A captured operator call's cost at most: 269 ns measured (CPU, docs/performance.md), about
 * 4 us on the H200. */
#define CAPTURE_CALL_NS_MAX 10000.0

/* A series' warm-up and its captured iterations (gw: 1 warm-up, 2 captured in the steady state:
 * set apart from the latency figures, counted as neither), members m[0..n) in time order with
 * latencies lat. The capture made its iterations slower by a factor the series shows (the
 * median of each captured latency over each uncaptured one around it, at most what its calls
 * could cost); warm-up is judged on the latencies with the captured ones divided by it (the
 * second iteration of a phase is always captured: undivided, a steady one would read as warm-up,
 * and a warm one would be lost among the others). Fewer than 4 others or 2 captured
 * (INFPROF_OPERATORS_EVERY=1, a short series): the captured ones count as any. Else they are always
 * apart, slower or not (one meaning of "captured" in every output: a run once showed 26 captured
 * iterations in the latencies and 11 apart, the ones found slower); the factor is at least 1.
 * Returns the warm-up count. */
static size_t group_warmup(struct iters *it, int fixed, struct iter **m, const int64_t *lat,
                           size_t n, char *gw, double *fout, int *capped)
{
    memset(gw, 0, n);
    *fout = 1;
    *capped = 0;
    size_t taken = 0;
    for (size_t k = 0; k < n; k++) taken += m[k]->captured != 0;
    size_t others = n - taken;
    if (others < 4 || taken < 2) {
        size_t w = iterations_warmup(fixed, lat, n);
        memset(gw, 1, w);
        return w;
    }
    /* Each captured iteration against each of the uncaptured ones around it (two each side at
     * most): a stretch the machine was busy slows them all alike, so captures that fell into one
     * by chance are not taken for the capture's cost (the global medians once read 17 captures
     * in noise bursts as 1.17x slower). The factor: the median of those ratios (x1e6), one per
     * pair: against the median of the four, every 2nd forward slow (3 and 12 ms in turn) read
     * each captured one against 7.5 ms, and five of seven captures falling on 12 ms ones made
     * "ran up to 60% slower" of a capture that cost nothing (a fresh-eyes check). */
    int64_t *a = malloc(4 * n * sizeof *a);
    if (!a) cli_fail("out of memory");
    size_t na = 0;
    for (size_t k = 0; k < n; k++) {
        if (!m[k]->captured) continue;
        for (size_t j = k, got = 0; j-- > 0 && got < 2;)
            if (!m[j]->captured && lat[j] > 0)
                a[na++] = (int64_t)(1e6 * (double)lat[k] / (double)lat[j]), got++;
        for (size_t j = k + 1, got = 0; j < n && got < 2; j++)
            if (!m[j]->captured && lat[j] > 0)
                a[na++] = (int64_t)(1e6 * (double)lat[k] / (double)lat[j]), got++;
    }
    double ratio = na ? (double)rstats_median(a, na) / 1e6 : 1;
    double f = ratio > 1 ? ratio : 1;
    /* At most what recording its calls could cost: CAPTURE_CALL_NS_MAX each, the captured ones'
     * median calls over the others' median latency. Captures that fell on the slow ones of a
     * series slow every 2nd iteration, between fast ones, read 4x (one call in 3 ms; in 1 run of
     * 14, by base code and this alike, and then every captured one counted at a quarter). */
    if (f > 1) {
        capture_calls(it);
        na = 0;
        for (size_t k = 0; k < n; k++)
            if (m[k]->captured) a[na++] = m[k]->calls;
        int64_t calls = rstats_median(a, na);
        na = 0;
        for (size_t k = 0; k < n; k++)
            if (!m[k]->captured) a[na++] = lat[k];
        int64_t typical = rstats_median(a, na);
        double most = 1 + (double)calls * CAPTURE_CALL_NS_MAX / (double)typical;
        if (calls >= 0 && typical > 0 && f > most) f = most, *capped = 1; /* calls < 0: none */
    }
    *fout = f;
    for (size_t k = 0; k < n; k++) a[k] = m[k]->captured ? (int64_t)((double)lat[k] / f) : lat[k];
    size_t w = iterations_warmup(fixed, a, n);
    free(a);
    for (size_t k = 0; k < n; k++) gw[k] = k < w ? 1 : m[k]->captured ? 2 : 0;
    return w;
}

/* The phase's series (one per distinct mark name, in order of first appearance), each with its
 * own warm-up: a second model slower than the first is a series, never the first's warm-up. */
/* A model called at several batch sizes under one name (Python module calls, one NVTX name):
 * a series per batch, whose p50 is one workload's, not a mix (a CNN at batch 8, 32 and 16 once
 * made one series whose p50 was none of theirs, and compare read its 1.8x regression as no
 * change). key[k]: the batch iteration k is grouped by, -1 where its name ran one batch size
 * (the rare ones joining it), SERIES_BATCH_MIXED the rare ones together. A batch with fewer than 3
 * iterations (a DataLoader's last, shorter batch) joins the name's most common batch where such
 * iterations are at most 2; more (a server batching what waits: sizes 3, 4 and 7 in "batch=1",
 * five of which made its p99: fresh-eyes checks) make a series of their own, "batch=mixed". */
#define SERIES_BATCH_MIN   3
#define SERIES_BATCH_MIXED (-3)
#define SERIES_BATCH_SIZES 16
static void batch_keys(struct iter **mine, size_t n, int64_t *key)
{
    for (size_t k = 0; k < n; k++) key[k] = -2;
    for (size_t k = 0; k < n; k++) {
        if (key[k] != -2) continue; /* its name and setting done */
        int64_t b[SERIES_BATCH_SIZES], cnt[SERIES_BATCH_SIZES] = {0}, rare = 0, all = 0;
        int nb = 0;
        for (size_t j = k; j < n; j++) {
            if (mine[j]->label != mine[k]->label || mine[j]->setting != mine[k]->setting) continue;
            all++;
            if (mine[j]->batch < 0) continue;
            int q = 0;
            while (q < nb && b[q] != mine[j]->batch) q++;
            if (q == nb && nb < SERIES_BATCH_SIZES) b[nb++] = mine[j]->batch;
            if (q < nb) cnt[q]++;
        }
        int real = 0, common = 0;
        int64_t sized = 0;
        for (int q = 0; q < nb; q++) {
            real += cnt[q] >= SERIES_BATCH_MIN;
            rare += cnt[q] < SERIES_BATCH_MIN ? cnt[q] : 0;
            sized += cnt[q];
            if (cnt[q] > cnt[common]) common = q;
        }
        rare += all - sized; /* no batch known, or past the sizes counted */
        int join = rare <= 2;
        for (size_t j = k; j < n; j++) {
            if (mine[j]->label != mine[k]->label || mine[j]->setting != mine[k]->setting) continue;
            int q = 0;
            while (q < nb && b[q] != mine[j]->batch) q++;
            key[j] = !real || (real == 1 && join)           ? -1
                     : q < nb && cnt[q] >= SERIES_BATCH_MIN ? b[q]
                     : join                                 ? b[common]
                                                            : SERIES_BATCH_MIXED;
        }
    }
}

static void phase_series(sqlite3 *db, struct run_phases *p, struct iters *it, int pi,
                         struct iter **mine, const int64_t *lat, const int64_t *host, char *warm,
                         size_t n, const struct spans *win)
{
    int64_t labels[REPORT_MAX_SERIES], batches[REPORT_MAX_SERIES];
    int settings[REPORT_MAX_SERIES], nl = 0;
    int64_t *key = malloc((n ? n : 1) * sizeof *key);
    if (!key) cli_fail("out of memory");
    batch_keys(mine, n, key);
    for (size_t k = 0; k < n; k++) {
        int g = 0;
        while (g < nl && (labels[g] != mine[k]->label || settings[g] != mine[k]->setting ||
                          batches[g] != key[k]))
            g++;
        if (g == nl && nl < REPORT_MAX_SERIES) {
            labels[nl] = mine[k]->label;
            batches[nl] = key[k];
            settings[nl++] = mine[k]->setting;
        } else if (g == nl) {
            p->series.left_out++; /* a series past the cap: the phase row still counts it */
        }
    }
    struct iter **gm = malloc(n * sizeof *gm);
    int64_t *gl = malloc(n * sizeof *gl), *gh = malloc(n * sizeof *gh);
    size_t *at = malloc(n * sizeof *at);
    char *gw = malloc(n);
    if (!gm || !gl || !gh || !at || !gw) cli_fail("out of memory");
    for (int g = 0; g < nl; g++) {
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if (mine[k]->label == labels[g] && mine[k]->setting == settings[g] &&
                key[k] == batches[g]) {
                /* past REPORT_MAX_SERIES names: in none */
                gm[m] = mine[k];
                gl[m] = lat[k];
                gh[m] = host[k];
                at[m++] = k;
            }
        double capture_f = 1;
        int capped = 0;
        size_t w = group_warmup(it, p->opts.warmup_given ? p->opts.warmup : -1, gm, gl, m, gw,
                                &capture_f, &capped);
        for (size_t k = 0; k < m; k++) warm[at[k]] = gw[k];
        if (p->series.n >= REPORT_MAX_SERIES) {
            p->series.left_out += (int64_t)m;
            continue;
        }
        for (size_t k = 0; k < m; k++) gm[k]->series = p->series.n;
        struct series_info *se = &p->series.v[p->series.n++];
        memset(se, 0, sizeof *se);
        se->phase = pi;
        /* A setting names a series only where it tells it apart from another of the same name
         * and batch in the phase (one loop that turned cudnn.benchmark on once put
         * "cudnn.benchmark=off" in every other series' name); the series keeps it all the same. */
        int apart = 0;
        for (int h = 0; h < nl; h++)
            apart |= h != g && labels[h] == labels[g] && batches[h] == batches[g] &&
                     settings[h] != settings[g];
        se->settings = settings[g] ? p->settings.combo[settings[g] - 1] : "";
        series_name(db, labels[g], m ? gm[0]->source : 0, apart ? se->settings : "", se->name,
                    sizeof se->name);
        /* Its model: the one its iterations ran; none where every one of them is a mark that
         * held no module call. "A #2" is a model of its own: two nn.Sequential of other sizes
         * read "0.06x no_grad, slower" (a fresh-eyes check), where a deepcopy under one mode
         * beside the original under the other is not compared. */
        int64_t model = -1;
        int none = 0;
        for (size_t k = 0; k < m; k++) {
            int64_t g = gm[k]->model;
            if (g == -3)
                none = 1;
            else if (g == -2 || (g > 0 && model > 0 && model != g))
                model = -2;
            else if (g > 0 && model == -1)
                model = g;
        }
        if (model > 0) series_name(db, model, 5, "", se->model, sizeof se->model);
        se->model_none = model == -1 && none;
        size_t len = strlen(se->name);
        if (batches[g] >= 0 && !strstr(se->name, "batch="))
            snprintf(se->name + len, sizeof se->name - len, "%sbatch=%lld", len ? " " : "",
                     (long long)batches[g]);
        else if (batches[g] == SERIES_BATCH_MIXED && !strstr(se->name, "batch="))
            snprintf(se->name + len, sizeof se->name - len, "%sbatch=mixed", len ? " " : "");
        se->iterations = (int64_t)m;
        se->warmup = (int64_t)w;
        se->capture_f = capture_f;
        se->capture_capped = capped;
        se->batch = m ? gm[0]->batch : -1;
        for (size_t k = 0; k < m; k++) {
            if (gm[k]->batch != se->batch) se->batch = -1;
            if (gw[k] == 1) se->warmup_ns += gl[k];
            se->captured_apart += gw[k] == 2;
        }
        if (batches[g] >= 0) se->batch = batches[g]; /* a short last batch joined it */
        se->start = m ? gm[0]->start : 0;
        se->end = m ? gm[m - 1]->start + gl[m - 1] : 0;
        steady_figures(p, gm, gl, gh, gw, m, &se->lat_p50, &se->lat_p95, &se->lat_p99,
                       &se->lat_mean, &se->host_p50, &se->items, &se->nsteady);
        series_gaps(se, gm, gw, m, win);
        se->its = malloc((m ? m : 1) * sizeof *se->its);
        if (!se->its) cli_fail("out of memory");
        for (size_t k = 0; k < m; k++)
            se->its[k] = (struct series_iter){gm[k]->id, gm[k]->start, gm[k]->start + gl[k],
                                              !gw[k],    gw[k] == 2,   gm[k]->tid};
        se->nits = m;
        for (size_t k = 0; k < m && se->ntids <= SERIES_TIDS; k++) {
            int j = 0;
            while (j < se->ntids && se->tids[j] != gm[k]->tid) j++;
            if (j < se->ntids) continue;
            if (se->ntids < SERIES_TIDS) se->tids[se->ntids] = gm[k]->tid;
            se->ntids++;
        }
    }
    free(gm);
    free(gl);
    free(gh);
    free(at);
    free(gw);
    free(key);
}

/* A level shift in steady latencies (time order): the split, among 19 candidates between a
 * quarter and three quarters of the way, whose two medians differ most; a shift when they differ
 * by more than 15%, by more than 4 times the spread (MAD) of each side (the slower side's
 * scaled to the faster one's level where one is 1.5 times the other), and two thirds of
 * each side lie on its own side of their midpoint. 1 and the two medians when there is one. Catches
 * a machine that changed speed in the middle of a phase, which a bootstrap band over the pooled
 * iterations would read as confident. */
int iterations_level_shift(const int64_t *v, size_t n, int64_t *before, int64_t *after)
{
    if (n < 12) return 0;
    int64_t *buf = malloc(n * sizeof *buf);
    if (!buf) cli_fail("out of memory");
    int found = 0;
    double best = 0;
    for (int c = 1; c < 20; c++) {
        size_t k = n / 4 + (n / 2) * (size_t)c / 20;
        if (k < 6 || n - k < 6) continue;
        memcpy(buf, v, k * sizeof *buf);
        int64_t m1 = rstats_median(buf, k);
        memcpy(buf, v + k, (n - k) * sizeof *buf);
        int64_t m2 = rstats_median(buf, n - k);
        int64_t lo = m1 < m2 ? m1 : m2, diff = llabs(m1 - m2);
        if (lo <= 0 || (double)diff <= 0.15 * (double)lo) continue; /* no spread needed */
        memcpy(buf, v, k * sizeof *buf);
        int64_t d1 = rstats_mad(buf, k, m1);
        memcpy(buf, v + k, (n - k) * sizeof *buf);
        int64_t d2 = rstats_mad(buf, n - k, m2);
        /* Past 4 times each side's spread; where one level is 1.5 times the other or more, the
         * slower side's spread taken at the faster one's level: a stretch under load spreads as
         * it slows (a second fresh-eyes check: 16.5 ms, MAD 0.7, then 35 ms, MAD 5.3, under
         * busy loops, was no shift by 4 times each as measured, and read "0.36x, slower"). A
         * drift of 15% keeps the spread as measured (the H100 conv net's grad/off, 557 then
         * 485 us, its first stretch's MAD about 21: none, as before). */
        int64_t dfast = m1 < m2 ? d1 : d2, dslow = m1 < m2 ? d2 : d1;
        double dslow_at =
            2 * diff >= lo ? (double)dslow * (double)lo / (double)(lo + diff) : (double)dslow;
        if (diff <= 4 * dfast || (double)diff <= 4 * dslow_at) continue;
        /* Two levels, not two mixes of the same two: two thirds of each side on its own side of
         * the midpoint. A forward slow every 2nd iteration (0.2 and 2.2 ms, half and half) gave
         * each half a median of either level by a few iterations' chance and a spread of 0, and
         * read "shifted 2.19ms -> 227us mid-run" (a fresh-eyes check); a split a few iterations
         * off a real shift (the H100 conv net's, 10 of 19) keeps 67-70% on each side. */
        double mid = ((double)m1 + (double)m2) / 2;
        size_t own1 = 0, own2 = 0;
        for (size_t q = 0; q < k; q++) own1 += ((double)v[q] < mid) == (m1 < m2);
        for (size_t q = k; q < n; q++) own2 += ((double)v[q] > mid) == (m1 < m2);
        if (3 * own1 < 2 * k || 3 * own2 < 2 * (n - k)) continue;
        if ((double)diff / (double)lo > best) {
            best = (double)diff / (double)lo;
            *before = m1;
            *after = m2;
            found = 1;
        }
    }
    free(buf);
    return found;
}

const struct phase_info *phases_shifted(const struct phase_info *a, const struct phase_info *b)
{
    if (a && a->shift_before) return a;
    if (b && b->shift_before) return b;
    return NULL;
}

int phases_band_outlasts(const struct phase_info *a, const struct phase_info *b, double lo,
                         double hi, int apart)
{
    for (int k = 0; k < 2; k++) {
        const struct phase_info *p = k ? b : a;
        if (p && p->shift_before &&
            !iterations_band_outlasts_shift(lo, hi, p->shift_before, p->shift_after, apart))
            return 0;
    }
    return 1;
}

int phases_apart(const struct phase_info *a, const struct phase_info *b)
{
    return !(a->start < b->end && b->start < a->end);
}

int phases_pair_band(const struct phase_info *a, const struct phase_info *b, int apart, double *lo,
                     double *hi)
{
    if (!iterations_band(a->counted_lat, a->ncounted, b->counted_lat, b->ncounted, lo, hi))
        return 0;
    return phases_band_outlasts(a, b, *lo, *hi, apart) ? 1 : -1;
}

size_t phases_overlap(const struct phase_info *fast, const struct phase_info *slow)
{
    if (!fast || !slow || !fast->nsteady || !slow->nsteady ||
        (double)slow->lat_p50 <= 1.15 * (double)fast->lat_p50)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < fast->nsteady; i++)
        k += (double)fast->steady[i] >= 0.9 * (double)slow->lat_p50;
    return k >= 2 && k * 10 >= fast->nsteady ? k : 0;
}

/* A loop's median iteration time (tmp: room for its durations). */
static int64_t loop_median(const struct detected *d, int l, int64_t *tmp)
{
    size_t m = 0;
    for (size_t k = 0; k < d->n; k++)
        if (d->loop[k] == l) tmp[m++] = d->end[k] - d->start[k];
    return m ? rstats_median(tmp, m) : 0;
}

/* Iterations detected in a run recorded in windows: --window N keeps those inside it (as it
 * does marks); and the recording's gaps cut a loop's sequence, so loops that each lie in a
 * window of their own, at one pace (medians within 1.25x), are one loop found again. Loops are
 * numbered again in time order; one left: no loop of its own. */
static void detected_in_windows(sqlite3 *db, const struct run_options *o, struct detected *d)
{
    int64_t ws = 0, we = 0;
    int wn;
    if (run_window_only(o, &ws, &we, &wn)) {
        size_t o = 0;
        for (size_t k = 0; k < d->n; k++)
            if (d->start[k] >= ws && d->end[k] <= we) {
                d->start[o] = d->start[k], d->end[o] = d->end[k], d->loop[o] = d->loop[k];
                if (d->tids) d->tids[o] = d->tids[k];
                o++;
            }
        d->n = o;
    }
    struct interval *w = NULL;
    size_t nw = d->info.nloops > 1 ? run_window_spans(db, &w) : 0;
    int win[256], same = nw > 1;
    for (int l = 0; l < d->info.nloops; l++) win[l] = -2; /* -2: no iteration left */
    for (size_t k = 0; k < d->n; k++) {
        int in = -1;
        for (size_t i = 0; i < nw; i++)
            if (d->start[k] >= w[i].start && d->end[k] <= w[i].end) in = (int)i;
        int *x = &win[d->loop[k]];
        *x = *x == -2 ? in : *x == in ? in : -1;
    }
    free(w);
    int64_t *tmp = malloc((d->n ? d->n : 1) * sizeof *tmp), lo = INT64_MAX, hi = 0;
    if (!tmp) cli_fail("out of memory");
    for (int l = 0; l < d->info.nloops && same; l++) {
        if (win[l] == -2) continue;
        for (int m = 0; m < l; m++) same &= win[m] == -2 || win[m] != win[l];
        same &= win[l] >= 0;
        int64_t med = loop_median(d, l, tmp);
        lo = med < lo ? med : lo, hi = med > hi ? med : hi;
    }
    free(tmp);
    if (same && hi > 0 && (double)hi <= 1.25 * (double)lo)
        for (size_t k = 0; k < d->n; k++) d->loop[k] = 0;
    int map[256], n = 0;
    for (int l = 0; l < 256; l++) map[l] = -1;
    for (size_t k = 0; k < d->n; k++) {
        if (map[d->loop[k]] < 0) map[d->loop[k]] = n++;
        d->loop[k] = (unsigned char)map[d->loop[k]];
    }
    d->info.nloops = n ? n : 1;
}

/* Phases without an explicit iteration: the iterations detect.c finds in them, appended. */
static int add_detected(sqlite3 *db, struct run_phases *p, struct iters *it)
{
    /* A DataLoader worker makes batches: no loop in it is a model's iteration (a worker's
     * report found 19 in its collate, a "fastest phase" of 71 ms, beside its header's "makes
     * batches (no iterations)"). */
    char *hooks = db_meta_text(db, "python_module_hooks");
    int worker = hooks && !strncmp(hooks, "worker:", 7);
    free(hooks);
    if (worker) return 0;
    struct detected *d = calloc(1, sizeof *d);
    if (!d) cli_fail("out of memory");
    int any = 0;
    /* Python module calls counted as iterations: they are the program's iterations, and a phase
     * without any has none (a loop of input preparation in grad mode around a no_grad predict
     * function). A Python program without torch.nn (no module call) is searched as any other. */
    int modules = 0;
    for (size_t k = 0; k < it->n && !modules; k++) modules = it->v[k].source == 5;
    /* Nor when the program marks its iterations (an NVTX range, a record_function scope): it
     * said what an iteration is, and a phase it did not mark has none (the grad-mode part of a
     * marked iteration whose forward enters inference_mode inside it is no loop of its own). */
    for (size_t k = 0; k < it->n && !modules; k++)
        modules = it->v[k].source == 2 || it->v[k].source == 3;
    for (int i = 0; i < p->n && !modules; i++) {
        struct phase_info *ph = &p->v[i];
        int marked = 0;
        for (size_t k = 0; k < it->n && !marked; k++) marked = it->v[k].phase == ph->id;
        if (marked || !detect_iterations(db, p->opts.detect, ph->id, d)) continue;
        detected_in_windows(db, &p->opts, d);
        if (!d->n) continue; /* none inside the window asked for */
        struct iter *v = realloc(it->v, (it->n + d->n) * sizeof *v);
        if (!v) cli_fail("out of memory");
        it->v = v;
        for (size_t k = 0; k < d->n; k++) {
            struct iter *x = &it->v[it->n++];
            memset(x, 0, sizeof *x);
            x->tid = d->tids ? d->tids[k] : d->tid; /* a server's workers: each its own */
            x->phase = ph->id;
            x->start = d->start[k];
            x->host = d->end[k] - d->start[k];
            x->kernels = -1;
            x->batch = -1;
            x->series = -1;
            /* Loops of their own (another batch size, another model): a series each. */
            if (d->info.nloops > 1) x->label = -(int64_t)d->loop[k] - 1;
        }
        ph->detected = d->info;
        any = 1;
    }
    detected_free(d);
    free(d);
    if (any) qsort(it->v, it->n, sizeof *it->v, cmp_tid_start);
    return any;
}

/* The settings each iteration ran with (settings.c), in time order. */
static void label_settings(sqlite3 *db, struct run_phases *p, struct iters *it)
{
    size_t n = it->n;
    struct iter **v = malloc((n ? n : 1) * sizeof *v);
    int64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    int *combo = malloc((n ? n : 1) * sizeof *combo);
    if (!v || !a || !b || !combo) cli_fail("out of memory");
    int sorted = 1; /* as a stable sort leaves them: no sort to make */
    for (size_t k = 0; k < n; k++) {
        v[k] = &it->v[k];
        sorted &= !k || cmp_start(&v[k - 1], &v[k]) <= 0;
    }
    if (!sorted) qsort(v, n, sizeof *v, cmp_start);
    for (size_t k = 0; k < n; k++) {
        a[k] = v[k]->start;
        b[k] = v[k]->start + v[k]->host;
    }
    settings_of_iterations(db, a, b, n, combo, &p->settings);
    for (size_t k = 0; k < n; k++) v[k]->setting = combo[k];
    free(v);
    free(a);
    free(b);
    free(combo);
}

/* Each iteration's time to the next one of its thread when that one is of the same phase and
 * series (a change of configuration in between is set-up, not input). v sorted by tid, start. */
static void gaps_after(struct iters *it)
{
    for (size_t k = 0; k < it->n; k++) {
        struct iter *x = &it->v[k], *y = k + 1 < it->n ? &it->v[k + 1] : NULL;
        x->gap = -1;
        if (!y || y->tid != x->tid || y->phase != x->phase || y->label != x->label ||
            y->setting != x->setting)
            continue;
        int64_t g = y->start - (x->start + x->host);
        if (g >= 0) x->gap = g;
    }
}

void iterations_load(sqlite3 *db, struct run_phases *p)
{
    int64_t total =
        db_has_table(db, "iterations") ? db_int(db, "SELECT count(*) FROM iterations", 0) : 0;
    struct iters it = {.db = db, .p = p};
    int gpu_known = 0;
    struct spans win = {0};
    win.n = run_window_spans(db, &win.v);
    if (total) load_all(db, &p->opts, &it, &gpu_known);
    if (add_detected(db, p, &it)) total = 1;
    label_settings(db, p, &it);
    gaps_after(&it);
    for (int i = 0; i < p->n; i++) p->v[i].has_iterations = total > 0;
    if (!total) {
        free(it.v);
        free(win.v);
        return;
    }
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        ph->gpu_latency = gpu_known;
        size_t n = 0;
        for (size_t k = 0; k < it.n; k++) n += it.v[k].phase == ph->id;
        if (!n) continue;
        struct iter **mine = malloc(n * sizeof *mine);
        int64_t *lat = malloc(n * sizeof *lat), *host = malloc(n * sizeof *host);
        char *warm = calloc(n, 1);
        if (!mine || !lat || !host || !warm) cli_fail("out of memory");
        n = 0;
        for (size_t k = 0; k < it.n; k++)
            if (it.v[k].phase == ph->id) mine[n++] = &it.v[k];
        /* In time order (threads interleave). */
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && mine[b - 1]->start > mine[b]->start; b--) {
                struct iter *t = mine[b];
                mine[b] = mine[b - 1];
                mine[b - 1] = t;
            }
        for (size_t k = 0; k < n; k++) {
            int64_t end = mine[k]->start + mine[k]->host;
            if (mine[k]->gpu_end > end) end = mine[k]->gpu_end;
            lat[k] = end - mine[k]->start;
            host[k] = mine[k]->host;
        }
        /* Warm-up is judged within each series (series.c's rule: a phase and a mark name). */
        int first_series = p->series.n;
        phase_series(db, p, &it, i, mine, lat, host, warm, n, &win);
        ph->nseries = p->series.n - first_series;
        int64_t *all = malloc(n * sizeof *all);
        if (!all) cli_fail("out of memory");
        memcpy(all, lat, n * sizeof *lat);
        ph->lat_all_p50 = rstats_p50(all, n);
        free(all);
        size_t w = 0, apart = 0; /* warm-up; and captured ones set apart (group_warmup) */
        for (size_t k = 0; k < n; k++) w += warm[k] == 1, apart += warm[k] == 2;
        ph->iterations = (int64_t)n;
        ph->warmup = (int64_t)w;
        ph->captured_apart = (int64_t)apart;
        for (size_t k = 0; k < n; k++) ph->module_iterations += mine[k]->source == 5;
        for (size_t k = 0; k < n; k++)
            if (warm[k] == 1) ph->warmup_ns += lat[k];
        size_t s = n - w - apart;
        ph->steady = malloc((s ? s : 1) * sizeof *ph->steady);
        ph->steady_start = malloc((s ? s : 1) * sizeof *ph->steady_start);
        ph->steady_batch = malloc((s ? s : 1) * sizeof *ph->steady_batch);
        if (!ph->steady || !ph->steady_start || !ph->steady_batch) cli_fail("out of memory");
        ph->counted_lat = malloc((s + apart ? s + apart : 1) * sizeof *ph->counted_lat);
        if (!ph->counted_lat) cli_fail("out of memory");
        ph->ncounted = 0;
        for (size_t k = 0, j = 0; k < n; k++) {
            if (warm[k] != 1)
                ph->counted_lat[ph->ncounted++] =
                    warm[k] == 2 ? captured_as(mine[k], lat[k], p) : lat[k];
            if (warm[k]) continue;
            ph->steady[j] = lat[k];
            ph->steady_start[j] = mine[k]->start;
            ph->steady_batch[j++] = mine[k]->batch;
        }
        steady_figures(p, mine, lat, host, warm, n, &ph->lat_p50, &ph->lat_p95, &ph->lat_p99,
                       &ph->lat_mean, &ph->host_p50, &ph->items, &ph->nsteady);
        struct run_iter *ri = realloc(p->iters, (p->niters + n) * sizeof *ri);
        if (!ri) cli_fail("out of memory");
        p->iters = ri;
        for (size_t k = 0; k < n; k++)
            p->iters[p->niters++] = (struct run_iter){mine[k]->id,
                                                      mine[k]->tid,
                                                      mine[k]->start,
                                                      mine[k]->host,
                                                      lat[k],
                                                      mine[k]->batch,
                                                      i,
                                                      mine[k]->series,
                                                      mine[k]->source,
                                                      !warm[k],
                                                      warm[k] == 2};
        /* One series per phase: a shift between series is the program's doing, not a shift. */
        if (ph->nseries <= 1 &&
            !iterations_level_shift(ph->steady, ph->nsteady, &ph->shift_before, &ph->shift_after))
            ph->shift_before = ph->shift_after = 0;
        if (w) {
            /* The warm-up iterations, and their extra kernels. */
            int64_t(*iv)[2] = malloc(n * sizeof *iv), extra = -1, steady_k = 0;
            size_t niv = 0;
            if (!iv) cli_fail("out of memory");
            for (size_t k = 0; k < n; k++)
                if (warm[k] == 1)
                    iv[niv][0] = mine[k]->start, iv[niv++][1] = mine[k]->start + lat[k];
            if (mine[0]->kernels >= 0 && s) {
                int64_t *kc = malloc(s * sizeof *kc), sum = 0;
                if (!kc) cli_fail("out of memory");
                for (size_t k = 0, j = 0; k < n; k++)
                    if (!warm[k]) kc[j++] = mine[k]->kernels;
                steady_k = rstats_median(kc, s);
                free(kc);
                for (size_t k = 0; k < n; k++)
                    if (warm[k] == 1) sum += mine[k]->kernels;
                extra = sum / (int64_t)w - steady_k;
            }
            warmup_cause(cudnn_searches_get(db, p), mem_rows_get(db, p), ph,
                         (const int64_t(*)[2])iv, niv, extra, steady_k, ph->warmup_cause,
                         sizeof ph->warmup_cause);
            free(iv);
        }
        free(mine);
        free(lat);
        free(host);
        free(warm);
    }
    free(it.v);
    free(win.v);
}

/* ---- verdicts ------------------------------------------------------------------------------ */

/* Two loops of one run are two stretches of the machine's time, as two runs are: a loop under
 * no_grad then one under inference_mode read "1.01x, faster", "0.99x, slower" and "no clear
 * difference" in three runs of a C++ program whose own timer, without us, read 0.992-0.997 (a
 * fresh-eyes check, 2026-11-30), where compare, with its floor, read no change. One rule for
 * both: compare's. A median ratio of 1.00 with a band of 0.07-13.98x (the H200's autotuning
 * series, six slow iterations of 42) is no "same". */
enum verdict iterations_verdict(double lo, double hi, double r)
{
    if (lo > RUN_NOISE_FLOOR) return VERDICT_FASTER;
    if (hi < 1 / RUN_NOISE_FLOOR) return VERDICT_SLOWER;
    if (r >= 1 / 1.01 && r <= 1.01 && lo >= 1 / RUN_NOISE_FLOOR && hi <= RUN_NOISE_FLOOR)
        return VERDICT_SAME;
    return VERDICT_UNCLEAR;
}

/* A shift's two levels are each a machine's pace; the band over both reads one pace that never
 * ran. But a difference past the shift's own ratio is there at either level: int8 at 800us
 * then 973us against fp32's 31ms read "no verdict" beside 37.98x (CI, 2026-11-30). Where the two
 * sets ran one after the other (apart), the shift says the machine's pace moved by its ratio
 * while one ran, and it may have moved as much again between them: the band must clear the
 * ratio squared (a second fresh-eyes check: no_grad at 9.16 then 16.44 ms, inference_mode under
 * heavier load at 49.7 ms, read "0.28x, slower" past a shift of 1.8x; alone, 0.97x). */
int iterations_band_outlasts_shift(double lo, double hi, int64_t x, int64_t y, int apart)
{
    if (x <= 0 || y <= 0) return 0;
    double s = x > y ? (double)x / (double)y : (double)y / (double)x;
    if (apart) s *= s;
    return lo > s * RUN_NOISE_FLOOR || hi * s * RUN_NOISE_FLOOR < 1;
}

/* ---- every iteration, for tables and traces ------------------------------------------------ */

const char *iterations_source_text(int source)
{
    static const char *const names[] = {"detected",        "torchscript call",
                                        "nvtx range",      "record_function scope",
                                        "aotinductor run", "python module call"};
    return source >= 0 && source <= 5 ? names[source] : "other";
}

const char *iterations_source_name(const struct run_phases *p, const struct run_iter *x)
{
    if (x->source == 0) {
        int from = p->v[x->phase].detected.from;
        return from == DETECT_KERNELS     ? "detected from the kernel sequence"
               : from == DETECT_OPERATORS ? "detected from the operator sequence"
                                          : "detected from the allocations";
    }
    return iterations_source_text(x->source);
}

static void exec_or_fail(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        cli_fail("cannot list the iterations for the trace: %s", err ? err : "?");
}

void iterations_shadow(sqlite3 *db, const struct run_phases *p)
{
    if (!db_has_table(db, "iterations") && !p->niters) return;
    exec_or_fail(db, "DROP TABLE IF EXISTS temp.iterations");
    exec_or_fail(db, "CREATE TEMP TABLE iterations (id INTEGER PRIMARY KEY, tid INTEGER,"
                     " phase INTEGER, start INTEGER, dur INTEGER, source INTEGER, batch INTEGER,"
                     " nvtx INTEGER, gpu_end INTEGER, gpu_items INTEGER, label_id INTEGER,"
                     " series INTEGER, name TEXT)");
    exec_or_fail(db, "BEGIN");
    sqlite3_stmt *st = db_prepare(db, "INSERT INTO temp.iterations (id, tid, phase, start, dur,"
                                      " source, batch, series, name)"
                                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    /* Detected iterations take ids past the database's. */
    int64_t next = 1;
    for (size_t k = 0; k < p->niters; k++)
        if (p->iters[k].id >= next) next = p->iters[k].id + 1;
    for (size_t k = 0; k < p->niters; k++) {
        const struct run_iter *x = &p->iters[k];
        sqlite3_bind_int64(st, 1, x->id ? x->id : next++);
        sqlite3_bind_int64(st, 2, x->tid);
        sqlite3_bind_int(st, 3, p->v[x->phase].id);
        sqlite3_bind_int64(st, 4, x->start);
        sqlite3_bind_int64(st, 5, x->host);
        sqlite3_bind_int(st, 6, x->source);
        if (x->batch >= 0)
            sqlite3_bind_int64(st, 7, x->batch);
        else
            sqlite3_bind_null(st, 7);
        const char *name = x->series >= 0 ? p->series.v[x->series].name : "";
        sqlite3_bind_int(st, 8, x->series);
        if (name[0])
            sqlite3_bind_text(st, 9, name, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 9);
        db_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    exec_or_fail(db, "COMMIT");
}
