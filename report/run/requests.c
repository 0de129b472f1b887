/*
 * requests.c: the series served from several threads at once (requests.h): concurrency by a
 * sweep over each series' iterations' starts and ends, and the handling threads' time off the
 * CPU from iteration_cpu (each iteration's thread CPU time, read at its edges: itercpu.h).
 */
#include "requests.h"
#include "itercpu.h"
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

const struct run_model run_model_requests = {"requests", free, 0};

const struct run_requests *run_requests(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_requests);
    if (*slot) return *slot;
    struct run_requests *r = calloc(1, sizeof *r);
    if (!r) cli_fail("out of memory");
    *slot = r;
    const struct iter_cpus *cpu = NULL;
    /* Each series' threads, counted whole (a ThreadingHTTPServer's 200, one a connection, once
     * read "64" with no word of a cap). */
    int64_t *tids = malloc((p->niters ? p->niters : 1) * sizeof *tids);
    if (!tids) cli_fail("out of memory");
    for (int s = 0; s < p->series.n && r->n < REPORT_MAX_SERIES; s++) {
        size_t n = 0;
        int ntid = 0;
        for (size_t i = 0; i < p->niters; i++)
            if (p->iters[i].series == s) tids[n++] = p->iters[i].tid;
        rstats_sort_i64(tids, n);
        for (size_t i = 0; i < n; i++) ntid += !i || tids[i] != tids[i - 1];
        if (ntid < 2 || n < 2) continue; /* one thread: a loop, not a server */
        if (!cpu) cpu = iter_cpus_get(db, p);
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
            const struct iter_cpu *c = it->id ? iter_cpus_find(cpu, it->id) : NULL;
            if (c) {
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
    return r;
}
