/*
 * between.c: what happens between a series' iterations (docs/report.md, "Between iterations").
 * iterations.c measures, per series, the host time from the end of each steady iteration to the
 * start of its thread's next one (input preparation, data loading, post-processing on the host);
 * here, how much of that time the GPU was busy with the phase's kernels, so the rest is GPU time
 * lost waiting for the host (the seeds' "fix data loading first"); and how much of it the program
 * waited for a DataLoader's next batch (input_waits, schema 5), the rest being its other host work.
 */
#include "run.h"
#include "kernrows.h"

#include <sqlite3.h>
#include <stdlib.h>

/* Index of the gap holding t in v (sorted by start, disjoint), or -1. */
static long gap_of(const struct interval *v, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && t < v[lo - 1].end ? (long)lo - 1 : -1;
}

static int cmp_start(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* The running highest end of the gaps (pm[i]: of g[0..i]), so that the first gap ending after
 * a time is found by bisection (a walk from the first gap took a fifth of a report's time). */
static int64_t *ends_max(const struct interval *g, size_t ng)
{
    int64_t *pm = malloc((ng ? ng : 1) * sizeof *pm);
    if (!pm) cli_fail("out of memory");
    for (size_t i = 0; i < ng; i++) pm[i] = i && pm[i - 1] > g[i].end ? pm[i - 1] : g[i].end;
    return pm;
}

/* The part of [s, e] inside the gaps, as intervals appended to *out (pm: ends_max of g). */
static void clip(const struct interval *g, const int64_t *pm, size_t ng, int64_t s, int64_t e,
                 struct interval **out, size_t *n, size_t *cap)
{
    long k = gap_of(g, ng, s);
    size_t i = k >= 0 ? (size_t)k : 0;
    if (k < 0) { /* the first gap that ends after s */
        size_t hi = ng;
        while (i < hi) {
            size_t mid = (i + hi) / 2;
            if (pm[mid] <= s)
                i = mid + 1;
            else
                hi = mid;
        }
    }
    for (; i < ng && g[i].start < e; i++) {
        int64_t a = s > g[i].start ? s : g[i].start, b = e < g[i].end ? e : g[i].end;
        if (a >= b) continue;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 1024;
            if (!(*out = realloc(*out, *cap * sizeof **out))) cli_fail("out of memory");
        }
        (*out)[(*n)++] = (struct interval){a, b};
    }
}

void series_between_gpu(struct sqlite3 *db, struct run_phases *p)
{
    if (!db_has_table(db, "kernel_rows")) return;
    for (int i = 0; i < p->series.n; i++) {
        struct series_info *se = &p->series.v[i];
        const struct phase_info *ph = &p->v[se->phase];
        /* Only where the phase's kernel rows were kept (steady.c): else unknown, not idle. */
        if (!se->gaps || !ph->has_kernels || !ph->has_steady_gpu) continue;
        qsort(se->gapv, (size_t)se->gaps, sizeof *se->gapv, cmp_start);
        int64_t *pm = ends_max(se->gapv, (size_t)se->gaps);
        struct interval *v = NULL;
        size_t n = 0, cap = 0;
        const struct kern_rows *kr = kern_rows_get(db, p);
        int64_t hi = se->gapv[se->gaps - 1].end, lo = se->gapv[0].start;
        for (size_t j = 0; j < kr->n; j++) {
            const struct kern_row *x = &kr->v[j];
            if (x->sig < 0 || krow_phase(kr, x) != ph->id || x->start >= hi ||
                x->start + x->dur <= lo)
                continue;
            clip(se->gapv, pm, (size_t)se->gaps, x->start, x->start + x->dur, &v, &n, &cap);
        }
        se->gap_gpu_busy = union_length(v, n);
        free(v), free(pm);
    }
}

void series_between_data(struct sqlite3 *db, struct run_phases *p)
{
    /* No wait recorded: no DataLoader in this run (or a database before schema 5), unknown. */
    int have = db_has_table(db, "input_waits") &&
               db_int(db, "SELECT count(*) FROM (SELECT 1 FROM input_waits LIMIT 1)", 0) > 0;
    for (int i = 0; i < p->series.n; i++) {
        struct series_info *se = &p->series.v[i];
        se->gap_data = have ? 0 : -1;
        if (!have || !se->gaps) continue;
        qsort(se->gapv, (size_t)se->gaps, sizeof *se->gapv, cmp_start);
        int64_t *pm = ends_max(se->gapv, (size_t)se->gaps);
        struct interval *v = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st = db_prepare(db, "SELECT start, dur FROM input_waits"
                                          " WHERE start < ? AND start + dur > ?");
        sqlite3_bind_int64(st, 1, se->gapv[se->gaps - 1].end);
        sqlite3_bind_int64(st, 2, se->gapv[0].start);
        while (db_step(st)) {
            int64_t s0 = sqlite3_column_int64(st, 0);
            clip(se->gapv, pm, (size_t)se->gaps, s0, s0 + sqlite3_column_int64(st, 1), &v, &n,
                 &cap);
        }
        sqlite3_finalize(st);
        se->gap_data = union_length(v, n);
        free(v), free(pm);
    }
}

double series_between_pct(const struct series_info *s)
{
    if (!s->gaps || s->gap_total + s->gap_host <= 0) return -1;
    return 100.0 * (double)s->gap_total / (double)(s->gap_total + s->gap_host);
}

double series_between_long_pct(const struct series_info *s)
{
    if (!s->gaps || s->gap_total + s->gap_host <= 0) return -1;
    double over = (double)s->gap_total - (double)s->gaps * (double)s->gap_p50;
    return over > 0 ? 100.0 * over / (double)(s->gap_total + s->gap_host) : 0;
}

int series_between_waits(const struct series_info *s, double pct, int64_t ns)
{
    if (s->gaps <= 0 || series_between_pct(s) < pct) return 0;
    if (s->gap_p50 >= ns) return 1; /* most gaps are long */
    /* Bursts: the time past the median is the share asked (a loop's own overhead is in the
     * median, not past it), in gaps long on average against the median and against a tenth of
     * ns (a 9 us model waiting 400 us before every 10th forward, 80% of its wall time, was
     * missed with ns itself as the floor: a fresh-eyes check). */
    double mean = (double)s->gap_total / (double)s->gaps;
    return mean >= (double)ns / 10 && mean >= 4.0 * (double)s->gap_p50 &&
           series_between_long_pct(s) >= pct;
}
