/*
 * sec_requests.c: the Requests section (report/run/requests.c; docs/windows.md): each series
 * served from several threads at once, as a server's requests: threads, requests, requests/s,
 * latency p50 and p95 (the series'), concurrency (mean and most in flight), the handlers' CPU
 * time p50 and the share of their time off the CPU (waiting: the GIL, a lock, I/O).
 */
#include "sections.h"
#include "../run/requests.h"

#include <assert.h>

/* requests_build's columns, in the order it declares them (asserted there). */
enum {
    RQ_PHASE,
    RQ_SHORT,
    RQ_SERIES,
    RQ_THREADS,
    RQ_REQUESTS,
    RQ_REQUESTS_PER_S,
    RQ_LATENCY_P50_NS,
    RQ_LATENCY_P95_NS,
    RQ_MEAN_CONCURRENCY,
    RQ_MAX_CONCURRENCY,
    RQ_CPU_MEAN_NS,
    RQ_WAITING_PCT,
    RQ_NCOLS
};

static int requests_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    const struct run_requests *r = run_requests(c->db, c->p);
    struct table *t =
        table_new("requests", "Requests (series served from several threads at once)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "threads", "Threads", COL_INT);
    table_col(t, "requests", "Requests", COL_INT);
    table_col(t, "requests_per_s", "Req/s", COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "mean_concurrency", "In flight", COL_RATIO);
    table_col(t, "max_concurrency", "Most", COL_INT);
    table_col(t, "cpu_mean_ns", "CPU/req", COL_NS);
    table_col(t, "waiting_pct", "Waiting", COL_PCT);
    assert(t->ncols == RQ_NCOLS);
    for (int i = 0; i < r->n; i++) {
        const struct series_requests *q = &r->v[i];
        const struct series_info *se = &c->p->series.v[q->series];
        table_row(t);
        phase_cells(t, &c->p->v[se->phase], RQ_PHASE, RQ_SHORT);
        table_set_text(t, RQ_SERIES, se->name[0] ? se->name : "(unnamed)");
        table_set_int(t, RQ_THREADS, q->threads);
        table_set_int(t, RQ_REQUESTS, q->requests);
        table_set_num(t, RQ_REQUESTS_PER_S, q->per_s);
        if (se->nsteady)
            table_set_int(t, RQ_LATENCY_P50_NS, se->lat_p50),
                table_set_int(t, RQ_LATENCY_P95_NS, se->lat_p95);
        table_set_num(t, RQ_MEAN_CONCURRENCY, q->mean_concurrency);
        table_set_int(t, RQ_MAX_CONCURRENCY, q->max_concurrency);
        if (q->cpu_mean_ns >= 0) table_set_int(t, RQ_CPU_MEAN_NS, (int64_t)q->cpu_mean_ns);
        if (q->waiting_pct >= 0) table_set_num(t, RQ_WAITING_PCT, q->waiting_pct);
    }
    /* A request here is the series' iteration, a forward: a server that batches what waits
     * serves several of its own requests in one (a fresh-eyes check's 710 requests read 651), and
     * their wait in its queue is no part of these latencies. */
    t->note = "Requests: the series' iterations (forwards), each as the handling threads served"
              " it; a forward that batched several of the program's requests counts once, and"
              " their wait in its queue is not in p50 or p95 (its own timer has that). Req/s:"
              " requests over the series' span, first start to last end; In flight: their"
              " summed time over that span; Waiting: the share of their time the handling"
              " threads were off the CPU (the GIL, a lock, I/O), switched out; CPU/req: a"
              " request's mean time on the CPU, its time less that; p50, p95: the series'"
              " (warm-up apart)";
    out[0] = t;
    return 1;
}

const struct report_section sec_requests = {
    .key = "requests", .build = requests_build, .shown_empty = 0};
