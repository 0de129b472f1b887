/*
 * requests.c: the series served from several threads at once (requests.h): concurrency by a
 * sweep over each series' iterations' starts and ends, and the handling threads' time off the
 * CPU from iteration_cpu (each iteration's thread CPU time, read at its edges).
 */
#include "requests.h"
#include "windows.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct edge {
    int64_t t;
    int d; /* +1 start, -1 end */
};

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
    return x->d - y->d; /* an end before a start at the same moment */
}

/* Each iteration id's thread CPU time, sorted by id (NULL: no table). */
struct cpu_row {
    int64_t id, cpu, vcsw, ivcsw;
};

static int cmp_row(const void *a, const void *b)
{
    int64_t x = ((const struct cpu_row *)a)->id, y = ((const struct cpu_row *)b)->id;
    return (x > y) - (x < y);
}

static struct cpu_row *cpu_rows(sqlite3 *db, size_t *n)
{
    *n = 0;
    if (!db_has_table(db, "iteration_cpu")) return NULL;
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM iteration_cpu", 0);
    struct cpu_row *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, "SELECT id, cpu_ns, voluntary, involuntary FROM"
                                      " iteration_cpu ORDER BY id");
    while (db_step(st) && *n < cap)
        v[(*n)++] = (struct cpu_row){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                     sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
    sqlite3_finalize(st);
    return v;
}

const struct run_model run_model_requests = {"requests", free, 0};

const struct run_requests *run_requests(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_requests);
    if (*slot) return *slot;
    struct run_requests *r = calloc(1, sizeof *r);
    if (!r) cli_fail("out of memory");
    *slot = r;
    size_t ncpu = 0;
    struct cpu_row *cpu = NULL;
    /* Each series' threads, counted whole (a ThreadingHTTPServer's 200, one a connection, once
     * read "64" with no word of a cap). */
    int64_t *tids = malloc((p->niters ? p->niters : 1) * sizeof *tids);
    if (!tids) cli_fail("out of memory");
    for (int s = 0; s < p->series.n && r->n < REPORT_MAX_SERIES; s++) {
        size_t n = 0;
        int ntid = 0;
        for (size_t i = 0; i < p->niters; i++)
            if (p->iters[i].series == s) tids[n++] = p->iters[i].tid;
        qsort(tids, n, sizeof *tids, rstats_cmp_i64);
        for (size_t i = 0; i < n; i++) ntid += !i || tids[i] != tids[i - 1];
        if (ntid < 2 || n < 2) continue; /* one thread: a loop, not a server */
        if (!cpu && !ncpu) cpu = cpu_rows(db, &ncpu);
        struct edge *e = malloc(2 * n * sizeof *e);
        if (!e) cli_fail("out of memory");
        size_t k = 0, nc = 0;
        int64_t first = INT64_MAX, last = 0;
        double busy = 0, off = 0, on = 0;
        for (size_t i = 0; i < p->niters; i++) {
            const struct run_iter *it = &p->iters[i];
            if (it->series != s) continue;
            e[k++] = (struct edge){it->start, 1};
            e[k++] = (struct edge){it->start + it->host, -1};
            first = it->start < first ? it->start : first;
            last = it->start + it->host > last ? it->start + it->host : last;
            busy += (double)it->host;
            struct cpu_row key = {it->id, 0, 0, 0}, *c;
            if (cpu && it->id && (c = bsearch(&key, cpu, ncpu, sizeof *cpu, cmp_row))) {
                double o = run_off_cpu((double)it->host, (double)c->cpu, (double)c->vcsw,
                                       (double)c->ivcsw);
                nc++;
                on += (double)it->host - o, off += o;
            }
        }
        qsort(e, k, sizeof *e, cmp_edge);
        int cur = 0, most = 0;
        for (size_t i = 0; i < k; i++) {
            cur += e[i].d;
            if (cur > most) most = cur;
        }
        struct series_requests *q = &r->v[r->n++];
        q->series = s, q->threads = ntid, q->requests = (int64_t)n, q->max_concurrency = most;
        /* Over the time recorded: the windows' part of the span, when the run had windows. */
        double span = last > first ? (double)(last - first) : 0;
        struct interval *wv;
        size_t nw = run_window_spans(db, &wv);
        if (nw) {
            span = 0;
            for (size_t j = 0; j < nw; j++) {
                int64_t a = wv[j].start > first ? wv[j].start : first;
                int64_t b = wv[j].end < last ? wv[j].end : last;
                if (b > a) span += (double)(b - a);
            }
        }
        free(wv);
        q->per_s = span > 0 ? (double)n / span * 1e9 : 0;
        q->mean_concurrency = span > 0 ? busy / span : 0;
        q->waiting_pct = nc && on + off > 0 ? 100 * off / (on + off) : -1;
        /* A mean, not a p50: each request's CPU time is its host time less its time off the CPU
         * (run_off_cpu), coarse alone: the scheduler's account at its edges is a tick behind. */
        q->cpu_mean_ns = nc ? on / (double)nc : -1;
        free(e);
    }
    free(tids);
    free(cpu);
    return r;
}
