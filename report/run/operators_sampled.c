/*
 * operators_sampled.c: the operator figures of a run that sampled whole iterations
 * (INFPROF_OPERATORS=sampled, the default; operators.h). Only the operators of the captured
 * iterations that are steady (warm-up apart, as every figure of the report) are read; each
 * phase's figures are the observed ones times its counted iterations over its captured steady
 * ones (calls, times, kernels; calls and self time per iteration are their means over the
 * captured iterations). Each operator's self time per iteration, and the phase's operator time,
 * has a 99% error from the spread of the per-iteration sums over the captured iterations (an
 * iteration where the operator did not run counts 0): a sample drawn without replacement from
 * the phase's steady iterations, so the finite-population correction makes it 0 where every one
 * was captured. 99%, not 95%: per-iteration times are skewed (a preempted iteration is rare and
 * long), a sample that missed those underestimates both the mean and its spread, and a 95%
 * interval held 85% of exact capture's figures in tests/torch/test_operators_sampled.py.
 */
#include "operators.h"
#include "run.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The captured steady iterations in id order, each with its phase id. */
struct cap_iter {
    int64_t id; /* first: bsearch compares it alone */
    int phase;
};
struct captured {
    struct cap_iter *v;
    size_t n;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void captured_load(sqlite3 *db, const struct run_phases *p, struct captured *c)
{
    memset(c, 0, sizeof *c);
    size_t n = (size_t)db_int(db, "SELECT count(*) FROM torch_operator_windows", 0);
    int64_t *w = malloc((n ? n : 1) * sizeof *w);
    c->v = malloc((n ? n : 1) * sizeof *c->v);
    if (!w || !c->v) cli_fail("out of memory");
    size_t m = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT iter FROM torch_operator_windows");
    while (m < n && db_step(st)) w[m++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    qsort(w, m, sizeof *w, cmp_i64);
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->id <= 0 || !x->steady || c->n >= m || !bsearch(&x->id, w, m, sizeof *w, cmp_i64))
            continue;
        c->v[c->n++] = (struct cap_iter){x->id, p->v[x->phase].id};
    }
    free(w);
    /* The run model keeps them phase by phase: in id order for bsearch. */
    qsort(c->v, c->n, sizeof *c->v, cmp_i64);
}

static int captured_has(const struct captured *c, int64_t id)
{
    return c->n && bsearch(&id, c->v, c->n, sizeof *c->v, cmp_i64) != NULL;
}

static void captured_free(struct captured *c)
{
    free(c->v);
}

static int cmp_fig(const void *a, const void *b)
{
    const struct op_figure *x = a, *y = b;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    return x->self_ns > y->self_ns ? -1 : x->self_ns < y->self_ns;
}

static struct op_figure *fig_find(struct run_operators *r, int phase, const char *name)
{
    for (int i = 0; name && i < r->n; i++)
        if (r->v[i].phase == phase && !strcmp(r->v[i].name, name)) return &r->v[i];
    return NULL;
}

/* Kernels launched with an operator innermost, in the captured steady iterations. */
static void sampled_gpu(sqlite3 *db, const struct captured *c, struct run_operators *r)
{
    if (!db_has_column(db, "kernel_rows", "op")) return;
    r->gpu = 1;
    sqlite3_stmt *st = db_prepare(
        db, "SELECT g.phase, s.value, k.iter, count(*), sum(k.dur) FROM kernel_rows k"
            " JOIN launch_sigs g ON g.id = k.sig JOIN strings s ON s.id = k.op"
            " WHERE k.op IS NOT NULL AND k.iter IN (SELECT iter FROM torch_operator_windows)"
            " GROUP BY g.phase, k.op, k.iter ORDER BY g.phase, k.op");
    struct op_figure *f = NULL;
    int last_phase = -1;
    while (db_step(st)) {
        if (!captured_has(c, sqlite3_column_int64(st, 2))) continue;
        int phase = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (phase != last_phase || !f || !name || strcmp(f->name, name)) {
            f = fig_find(r, phase, name);
            last_phase = phase;
        }
        if (!f) continue;
        f->kernels += sqlite3_column_int64(st, 3);
        f->gpu_ns += sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
}

void operators_sampled_rows(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    struct captured c;
    captured_load(db, p, &c);
    sqlite3_stmt *st = db_prepare(
        db, "SELECT o.phase, o.name_id, s.value, o.iter, count(*), sum(o.self), sum(o.dur)"
            " FROM torch_operators o JOIN strings s ON s.id = o.name_id"
            " WHERE o.iter IN (SELECT iter FROM torch_operator_windows)"
            " GROUP BY o.phase, o.name_id, o.iter ORDER BY o.phase, o.name_id");
    struct op_figure *f = NULL;
    int last_phase = -1;
    int64_t last_name = -1;
    while (db_step(st)) {
        if (!captured_has(&c, sqlite3_column_int64(st, 3))) continue;
        int phase = sqlite3_column_int(st, 0);
        int64_t name_id = sqlite3_column_int64(st, 1);
        if (!f || phase != last_phase || name_id != last_name) {
            f = operators_add(r);
            f->phase = phase;
            const unsigned char *name = sqlite3_column_text(st, 2);
            snprintf(f->name, sizeof f->name, "%s", name ? (const char *)name : "?");
            last_phase = phase, last_name = name_id;
        }
        int64_t calls = sqlite3_column_int64(st, 4), self = sqlite3_column_int64(st, 5);
        f->calls += calls, f->calls_in_iter += calls;
        f->self_ns += self, f->total_ns += sqlite3_column_int64(st, 6);
        f->self_sq += (double)self * (double)self;
    }
    sqlite3_finalize(st);
    if (r->n) qsort(r->v, (size_t)r->n, sizeof *r->v, cmp_fig);
    for (int i = 0; i < r->n;) { /* shares of the phase's operator self time */
        int j = i;
        int64_t sum = 0;
        while (j < r->n && r->v[j].phase == r->v[i].phase) sum += r->v[j++].self_ns;
        for (; i < j; i++)
            r->v[i].self_share = sum > 0 ? 100.0 * (double)r->v[i].self_ns / (double)sum : 0;
    }
    sampled_gpu(db, &c, r);
    captured_free(&c);
}

/* The 99% error of a mean over n of big_n iterations, % of it; -1 unknown. */
static double err95(double sum, double sumsq, int64_t n, int64_t big_n)
{
    if (n < 2 || sum <= 0) return -1;
    double mean = sum / (double)n, var = (sumsq - (double)n * mean * mean) / (double)(n - 1);
    double fpc = big_n > 1 && big_n >= n ? (double)(big_n - n) / (double)(big_n - 1) : 1;
    return 100 * 2.576 * sqrt((var > 0 ? var : 0) / (double)n * fpc) / mean;
}

static int64_t scaled(int64_t v, double k)
{
    return (int64_t)llround((double)v * k);
}

/* The phase's figures from its captured iterations' to all of its iterations. */
static void phase_scale(struct run_operators *r, struct op_phase *ph)
{
    double x =
        ph->captured > 0 && ph->iterations > 0 ? (double)ph->iterations / (double)ph->captured : 1;
    for (int i = 0; i < r->n; i++) {
        struct op_figure *f = &r->v[i];
        if (f->phase != ph->phase) continue;
        if (ph->captured > 0) {
            f->calls_per_iter = (double)f->calls_in_iter / (double)ph->captured;
            f->self_per_iter = (double)f->self_ns / (double)ph->captured;
        }
        f->calls = scaled(f->calls, x), f->calls_in_iter = scaled(f->calls_in_iter, x);
        f->self_ns = scaled(f->self_ns, x), f->total_ns = scaled(f->total_ns, x);
        f->kernels = scaled(f->kernels, x), f->gpu_ns = scaled(f->gpu_ns, x);
    }
    ph->calls = scaled(ph->calls, x), ph->calls_in_iter = scaled(ph->calls_in_iter, x);
    ph->self_ns = scaled(ph->self_ns, x);
    ph->casts = scaled(ph->casts, x), ph->casts_in_iter = scaled(ph->casts_in_iter, x);
    ph->cast_ns = scaled(ph->cast_ns, x);
    ph->int8_ns = scaled(ph->int8_ns, x), ph->float_ns = scaled(ph->float_ns, x);
    ph->kernels = scaled(ph->kernels, x), ph->gpu_ns = scaled(ph->gpu_ns, x);
    ph->dropout_train = scaled(ph->dropout_train, x), ph->bn_train = scaled(ph->bn_train, x);
}

void operators_sampled_finish(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    struct captured c;
    captured_load(db, p, &c);
    int np = r->nphases;
    double *sum = calloc((size_t)np + 1, sizeof *sum), *sq = calloc((size_t)np + 1, sizeof *sq);
    int64_t *steady = calloc((size_t)np + 1, sizeof *steady);
    if (!sum || !sq || !steady) cli_fail("out of memory");
    for (int k = 0; k < np; k++) {
        for (size_t i = 0; i < c.n; i++)
            r->phases[k].captured += c.v[i].phase == r->phases[k].phase;
        for (size_t i = 0; i < p->niters; i++)
            steady[k] += p->iters[i].steady && p->v[p->iters[i].phase].id == r->phases[k].phase;
    }
    /* The phase's operator self time per captured iteration. */
    sqlite3_stmt *st = db_prepare(db, "SELECT o.phase, o.iter, sum(o.self) FROM torch_operators o"
                                      " WHERE o.iter IN (SELECT iter FROM torch_operator_windows)"
                                      " GROUP BY o.phase, o.iter");
    while (db_step(st)) {
        if (!captured_has(&c, sqlite3_column_int64(st, 1))) continue;
        for (int k = 0; k < np; k++)
            if (r->phases[k].phase == sqlite3_column_int(st, 0)) {
                double v = (double)sqlite3_column_int64(st, 2);
                sum[k] += v, sq[k] += v * v;
            }
    }
    sqlite3_finalize(st);
    for (int k = 0; k < np; k++) {
        struct op_phase *ph = &r->phases[k];
        ph->err_pct = err95(sum[k], sq[k], ph->captured, steady[k]);
        for (int i = 0; i < r->n; i++)
            if (r->v[i].phase == ph->phase)
                r->v[i].err_pct =
                    err95((double)r->v[i].self_ns, r->v[i].self_sq, ph->captured, steady[k]);
        phase_scale(r, ph);
    }
    free(sum), free(sq), free(steady);
    captured_free(&c);
}
