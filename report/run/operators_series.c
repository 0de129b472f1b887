/*
 * operators_series.c: each series' PyTorch operators (operators_series.h): per series (a phase's
 * configuration: its mark name, batch and settings) and operator name, the calls and self time
 * per iteration, over the series' steady iterations whose operators were recorded (every one
 * with INFPROF_OPERATORS=1; the captured ones when sampled). What compare matches series by, so
 * that a configuration's operators are compared with the same configuration's. The self time per
 * iteration is the phase table's estimate made over the series' iterations (operators_sampled.c):
 * each iteration's held to the series' cut, the lowest and highest 2% (one each from 10 on), then
 * weighed by stratum; the plain mean once read a capture's 1,015 us preempted call into one
 * operator where the phase table, from the same captures, did not (a fresh-eyes check).
 */
#include "operators_series.h"
#include "operators.h"
#include "operators_model.h"
#include "operators_iters.h"
#include "operators_strata.h"
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct by_id {
    int64_t id; /* first: rstats_cmp_i64 orders by it */
    int series;
};

/* The series of each counted iteration with an id (steady, or set apart for its capture). */
static size_t series_of_iterations(const struct run_phases *p, struct by_id **out)
{
    struct by_id *v = malloc((p->niters ? p->niters : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->id > 0 && x->series >= 0 && (x->steady || x->captured))
            v[n++] = (struct by_id){x->id, x->series};
    }
    qsort(v, n, sizeof *v, rstats_cmp_i64);
    *out = v;
    return n;
}

/* The operator calls and self time per name and iteration, by name id: the sampled run's from
 * the run model's sums (operators_iters.h), phases merged; else every call's, read here. */
struct ser_row {
    int64_t name_id, iter, calls, self;
    const char *name; /* NULL: its value is NULL */
};

/* One iteration's self time of the current name, its series and its weight. */
struct ser_val {
    int series;
    double self, w;
};

static int cmp_ser_val(const void *a, const void *b)
{
    const struct ser_val *x = a, *y = b;
    if (x->series != y->series) return x->series < y->series ? -1 : 1;
    return (x->self > y->self) - (x->self < y->self);
}

/* Series s's self time of a name, summed weighed with each iteration's held to the cut: its
 * values v (sorted, nv of them, the iterations it ran in) and `zeros` iterations it did not run
 * in, of weight wz together. Where its phase has one stratum (every weight 1), the phase table's
 * trimmed mean instead (the cut's ends left out, not held): the sum that mean times n gives. */
static double held_sum(const struct ser_val *v, size_t nv, int64_t zeros, double wz, int one)
{
    size_t n = nv + (size_t)(zeros > 0 ? zeros : 0);
    size_t k = op_trim_count(n);
    /* The k-th lowest and highest of the zeros and v together. */
    size_t z = (size_t)(zeros > 0 ? zeros : 0);
    if (one) { /* v[i] is the (z + i)-th of them: the ones from k to n - k - 1 kept */
        double kept = 0;
        for (size_t i = 0; i < nv; i++)
            if (z + i >= k && z + i < n - k) kept += v[i].self;
        return n > 2 * k ? kept * (double)n / (double)(n - 2 * k) : 0;
    }
    double lo = k < z ? 0 : nv ? v[k - z < nv ? k - z : nv - 1].self : 0;
    double hi = n - 1 - k < z ? 0 : nv ? v[n - 1 - k - z].self : 0;
    double sum = (lo > 0 ? lo : 0) * wz;
    for (size_t i = 0; i < nv; i++)
        sum += v[i].w * (v[i].self < lo ? lo : v[i].self > hi ? hi : v[i].self);
    return sum;
}

/* Phase id `phase` has one stratum (or none: a fixed rate, an older database). */
static int one_stratum(const struct op_strata *st, int phase)
{
    int n = 0;
    for (int e = 0; e < st->n; e++) n += st->v[e].phase == phase;
    return n <= 1;
}

static int cmp_ser_row(const void *a, const void *b)
{
    const struct ser_row *x = a, *y = b;
    if (x->name_id != y->name_id) return x->name_id < y->name_id ? -1 : 1;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

static struct ser_row *rows_load(sqlite3 *db, const struct run_phases *p, int sampled, size_t *n)
{
    struct ser_row *v = NULL;
    size_t cap = 0;
    *n = 0;
    if (sampled) {
        const struct op_iters *x = op_iters_get(db, p);
        if (!x || !x->n) return NULL;
        if (!(v = malloc(x->n * sizeof *v))) cli_fail("out of memory");
        for (size_t i = 0; i < x->n; i++)
            if (x->v[i].named)
                v[(*n)++] = (struct ser_row){x->v[i].name_id, x->v[i].iter, x->v[i].calls,
                                             x->v[i].self, op_iters_name(x, x->v[i].name_id)};
        if (*n) qsort(v, *n, sizeof *v, cmp_ser_row);
        /* One row per name and iteration, as GROUP BY name_id, iter gave them. */
        size_t m = 0;
        for (size_t i = 0; i < *n; i++) {
            if (m && v[m - 1].name_id == v[i].name_id && v[m - 1].iter == v[i].iter) {
                v[m - 1].calls += v[i].calls, v[m - 1].self += v[i].self;
                continue;
            }
            v[m++] = v[i];
        }
        *n = m;
        return v;
    }
    const char *sql = pool_printf("SELECT o.name_id, s.value, o.iter, sum(o.calls), sum(o.self)"
                                  " FROM %s o JOIN strings s ON s.id = o.name_id"
                                  " WHERE o.iter > 0 GROUP BY o.name_id, o.iter ORDER BY o.name_id",
                                  iterations_operator_calls(db));
    sqlite3_stmt *st = db_prepare(db, sql);
    int64_t last = 0;
    while (db_step(st)) {
        if (*n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof *v)))
            cli_fail("out of memory");
        struct ser_row *r = &v[(*n)++];
        r->name_id = sqlite3_column_int64(st, 0);
        r->iter = sqlite3_column_int64(st, 2);
        r->calls = sqlite3_column_int64(st, 3);
        r->self = sqlite3_column_int64(st, 4);
        r->name = NULL;
        if (*n == 1 || r->name_id != last) { /* a name's first row owns its copy */
            const unsigned char *t = sqlite3_column_text(st, 1);
            if (t && !(r->name = strdup((const char *)t))) cli_fail("out of memory");
        } else {
            r->name = v[*n - 2].name;
        }
        last = r->name_id;
    }
    sqlite3_finalize(st);
    return v;
}

static void rows_free(struct ser_row *v, size_t n, int sampled)
{
    for (size_t i = 0; !sampled && i < n; i++)
        if (i == 0 || v[i].name_id != v[i - 1].name_id) free((char *)v[i].name);
    free(v);
}

/* A captured iteration's weight by its series' phase. */
static double series_weight(const struct op_strata *st, const struct run_phases *p, int s,
                            int64_t iter)
{
    return st->multi ? op_strata_weight(st, p->v[p->series.v[s].phase].id, iter) : 1;
}

/* The factor the phase table held phase id `phase`'s operators to its iterations' own time by
 * (operators_sampled.c), 1 none: the series' figures are the same estimate. */
static double phase_held(const struct run_operators *r, int phase)
{
    for (int k = 0; r && k < r->nphases; k++)
        if (r->phases[k].phase == phase && r->phases[k].capped && r->phases[k].held > 0)
            return r->phases[k].held;
    return 1;
}

size_t operators_by_series(struct sqlite3 *db, const struct run_phases *p,
                           struct op_series_row **out)
{
    *out = NULL;
    if (!db_has_table(db, "torch_operators") || !p->series.v || !p->series.n) return 0;
    int sampled = !db_operators_every_call(db) && db_has_table(db, "torch_operator_windows");
    const struct run_operators *ops = sampled ? run_operators(db, p) : NULL;
    struct by_id *ids;
    size_t nids = series_of_iterations(p, &ids);
    int ns = p->series.n;
    int64_t *iters = calloc((size_t)ns, sizeof *iters);
    /* Weighed by the captures' strata (operators_strata.h): 1 each where a phase has one. */
    double *witers = calloc((size_t)ns, sizeof *witers), *calls = calloc((size_t)ns, sizeof *calls);
    double *self = calloc((size_t)ns, sizeof *self);
    char *seen = calloc(nids ? nids : 1, 1);
    if (!iters || !witers || !calls || !self || !seen) cli_fail("out of memory");
    struct op_strata st = {0};
    if (sampled) op_strata_load(db, p, &st);
    int64_t *per = calloc((size_t)ns * (size_t)(st.n ? st.n : 1), sizeof *per);
    if (!per) cli_fail("out of memory");
    size_t nrows;
    struct ser_row *rows = rows_load(db, p, sampled, &nrows);
    /* Two passes over the rows: first the iterations each series has operators in (the
     * denominator), then each name's sums. */
    for (size_t i = 0; i < nrows; i++) {
        struct by_id key = {rows[i].iter, 0};
        struct by_id *x = nids ? bsearch(&key, ids, nids, sizeof *ids, rstats_cmp_i64) : NULL;
        if (x && !seen[x - ids]) {
            seen[x - ids] = 1, iters[x->series]++;
            int e = st.multi
                        ? op_strata_of(&st, p->v[p->series.v[x->series].phase].id, rows[i].iter)
                        : -1;
            if (e >= 0)
                per[(size_t)x->series * (size_t)st.n + (size_t)e]++;
            else
                witers[x->series] += 1;
        }
    }
    /* Stratum by stratum, as the phase's weights are summed (operators_strata.h). */
    for (int s = 0; s < ns && st.multi; s++)
        for (int e = 0; e < st.n; e++)
            witers[s] += (double)per[(size_t)s * (size_t)st.n + (size_t)e] * st.v[e].weight;
    size_t n = 0, cap = 0, nval = 0;
    struct op_series_row *v = NULL;
    struct ser_val *val = malloc((nrows ? nrows : 1) * sizeof *val);
    int64_t *ran = calloc((size_t)ns, sizeof *ran);
    double *wran = calloc((size_t)ns, sizeof *wran);
    if (!val || !ran || !wran) cli_fail("out of memory");
    int64_t name_id = -1;
    const char *name = "";
    for (size_t i = 0;; i++) {
        int more = i < nrows;
        int64_t id = more ? rows[i].name_id : -2;
        if (id != name_id && name_id != -1) { /* a name's rows are done: one row per series */
            /* Sampled: held to the cut, as the phase table's; every call: the plain sums, as
             * its (operators.c). */
            if (nval) qsort(val, nval, sizeof *val, cmp_ser_val);
            for (size_t a = 0, b; a < nval; a = b) {
                int s = val[a].series;
                for (b = a; b < nval && val[b].series == s; b++) {
                }
                self[s] = 0;
                if (sampled)
                    self[s] = held_sum(val + a, b - a, iters[s] - ran[s], witers[s] - wran[s],
                                       one_stratum(&st, p->v[p->series.v[s].phase].id));
                else
                    for (size_t q = a; q < b; q++) self[s] += val[q].w * val[q].self;
            }
            for (int s = 0; s < ns; s++) {
                if (!calls[s] || !iters[s]) continue;
                if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v)))
                    cli_fail("out of memory");
                struct op_series_row *r = &v[n++];
                r->series = s;
                r->phase = p->v[p->series.v[s].phase].id;
                snprintf(r->name, sizeof r->name, "%s", name);
                r->iterations = iters[s];
                r->calls_per_iter = calls[s] / witers[s];
                r->self_per_iter = self[s] / witers[s] * phase_held(ops, r->phase);
            }
            memset(calls, 0, (size_t)ns * sizeof *calls);
            memset(self, 0, (size_t)ns * sizeof *self);
            memset(ran, 0, (size_t)ns * sizeof *ran);
            memset(wran, 0, (size_t)ns * sizeof *wran);
            nval = 0;
        }
        if (!more) break;
        if (id != name_id) {
            name = rows[i].name ? rows[i].name : "?";
            name_id = id;
        }
        struct by_id key = {rows[i].iter, 0};
        struct by_id *x = nids ? bsearch(&key, ids, nids, sizeof *ids, rstats_cmp_i64) : NULL;
        if (!x) continue; /* warm-up, or no series */
        double w = series_weight(&st, p, x->series, rows[i].iter);
        calls[x->series] += w * (double)rows[i].calls;
        /* Rows of one name are one iteration each (its calls summed), in iteration order. */
        if (nval && val[nval - 1].series == x->series && i > 0 && rows[i - 1].name_id == id &&
            rows[i - 1].iter == rows[i].iter)
            val[nval - 1].self += (double)rows[i].self;
        else
            val[nval++] = (struct ser_val){x->series, (double)rows[i].self, w}, ran[x->series]++,
            wran[x->series] += w;
    }
    rows_free(rows, nrows, sampled);
    op_strata_free(&st);
    free(ids), free(iters), free(witers), free(per), free(calls), free(self), free(seen);
    free(val), free(ran), free(wran);
    *out = v;
    return n;
}
