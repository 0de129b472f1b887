/*
 * operators_sampled.c: the operator figures of a run that sampled whole iterations
 * (INFPROF_OPERATORS=sampled, the default; operators.h). Only the operators of the captured
 * iterations that are steady (warm-up apart, as every figure of the report) are read; each
 * phase's totals are the observed ones times its counted iterations over its captured steady
 * ones (calls, times, kernels).
 * Self time per iteration (each operator's, and the phase's operator time) is a trimmed mean of
 * the per-iteration sums over the captured iterations (an iteration where the operator did not
 * run counts 0): the highest and lowest 2% (at least one each from 10 iterations on) left out.
 * A mean over iterations moves with the rare ones a loaded machine preempts (one addmm of 1.8 ms
 * among 58 us ones in tests/torch/test_operators_sampled.py's program), which a sample of a
 * quarter of them holds or misses: with the plain mean a 99% interval held 76-89% of exact
 * capture's figures, with the trimmed one 95-96%. Its 99% error is Tukey and McLaughlin's
 * (the winsorized variance), for a sample drawn without replacement from the phase's steady
 * iterations (the finite-population correction: 0 where every one was captured), at Student's t
 * for its captures (from 2026-11-30: 3.17 standard errors for 11 captures, where the normal's 2.58
 * had been used whatever their number). It is the error of sampling this run's iterations: another
 * run of the program may sit elsewhere (a heap laid out otherwise; a fresh-eyes check's 11
 * captures within 1.2% of each other, their run 6% under another's).
 * Where a phase's captures fall in several strata (operators_strata.h) the cut is the whole
 * phase's, each capture held to it (winsorized), then each stratum's mean and spread weighed: cut
 * stratum by stratum, a stratum of under 10 captures kept its outliers whole (a fresh-eyes check:
 * one capture's 1,015 us in _transformer_encoder_layer_fwd, weighed for hundreds of iterations,
 * read 107 us +-236% for that operator, and held every other one to the iterations' time, aten::mm
 * 70.9 us where every capture ran 97-101).
 */
#include "operators_model.h"
#include "operators_iters.h"
#include "operators_strata.h"
#include "kernrows.h"
#include "run.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A zeroed figure at the end of r->v (operators.c's reader appends with it too). */
struct op_figure *operators_add(struct run_operators *r)
{
    if (r->n == r->cap &&
        !(r->v = realloc(r->v, (size_t)(r->cap = r->cap ? r->cap * 2 : 64) * sizeof *r->v)))
        cli_fail("out of memory");
    struct op_figure *f = &r->v[r->n++];
    memset(f, 0, sizeof *f);
    f->err_pct = f->self_per_iter = f->total_per_iter = f->calls_per_iter = -1;
    return f;
}

/* The captured steady iterations in id order, each with its phase id. */
struct cap_iter {
    int64_t id; /* first: bsearch compares it alone */
    int phase;
};
struct captured {
    struct cap_iter *v;
    size_t n;
    int nph, phase[REPORT_MAX_PHASES];                           /* phase ids */
    int64_t taken[REPORT_MAX_PHASES], steady[REPORT_MAX_PHASES]; /* captured, all steady */
    struct op_strata st; /* the captures' strata (operators_strata.h) */
};

static void captured_load(sqlite3 *db, const struct run_phases *p, struct captured *c)
{
    memset(c, 0, sizeof *c);
    size_t n = (size_t)db_int(
        db, pool_printf("SELECT count(*) FROM %s", iterations_operator_windows(db)), 0);
    int64_t *w = malloc((n ? n : 1) * sizeof *w);
    c->v = malloc((n ? n : 1) * sizeof *c->v);
    if (!w || !c->v) cli_fail("out of memory");
    size_t m = 0;
    sqlite3_stmt *st =
        db_prepare(db, pool_printf("SELECT iter FROM %s", iterations_operator_windows(db)));
    while (m < n && db_step(st)) w[m++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    rstats_sort_i64(w, m);
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->id <= 0 || !(x->steady || x->captured) || c->n >= m ||
            !bsearch(&x->id, w, m, sizeof *w, rstats_cmp_i64))
            continue;
        c->v[c->n++] = (struct cap_iter){x->id, p->v[x->phase].id};
    }
    free(w);
    /* The run model keeps them phase by phase: in id order for bsearch. */
    qsort(c->v, c->n, sizeof *c->v, rstats_cmp_i64);
    for (int k = 0; k < p->n && c->nph < REPORT_MAX_PHASES; k++) {
        c->phase[c->nph] = p->v[k].id;
        /* The population sampled: the steady iterations, the captured ones set apart too. */
        c->steady[c->nph] = (int64_t)p->v[k].nsteady + p->v[k].captured_apart;
        for (size_t i = 0; i < c->n; i++) c->taken[c->nph] += c->v[i].phase == p->v[k].id;
        c->nph++;
    }
    op_strata_load(db, p, &c->st);
}

/* Phase id -> its index in c's per-phase counts, -1 none. */
static int captured_phase(const struct captured *c, int phase)
{
    for (int k = 0; k < c->nph; k++)
        if (c->phase[k] == phase) return k;
    return -1;
}

static int captured_has(const struct captured *c, int64_t id)
{
    return c->n && bsearch(&id, c->v, c->n, sizeof *c->v, rstats_cmp_i64) != NULL;
}

static void captured_free(struct captured *c)
{
    free(c->v);
    op_strata_free(&c->st);
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

/* Kernels launched with an operator innermost, in the captured steady iterations: summed by
 * phase and operator, then added to that operator's figure. */
struct gpu_sum {
    int phase;
    uint32_t op;
    int64_t dur;
    double w; /* its iteration's weight (operators_strata.h) */
};

static int cmp_gpu_sum(const void *a, const void *b)
{
    const struct gpu_sum *x = a, *y = b;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op);
}

static void sampled_gpu(sqlite3 *db, const struct run_phases *p, const struct captured *c,
                        struct run_operators *r)
{
    if (!db_has_column(db, "kernel_rows", "op")) return;
    r->gpu = 1;
    const struct kern_rows *kr = kern_rows_get(db, p);
    const struct op_iters *x = op_iters_get(db, p);
    struct gpu_sum *v = malloc((kr->n ? kr->n : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < kr->n; i++) {
        const struct kern_row *k = &kr->v[i];
        if (k->sig < 0 || !k->op || k->iter == KROW_NO_ITER || !captured_has(c, k->iter)) continue;
        int phase = krow_phase(kr, k);
        v[n++] = (struct gpu_sum){phase, k->op, k->dur, op_strata_weight(&c->st, phase, k->iter)};
    }
    if (n) qsort(v, n, sizeof *v, cmp_gpu_sum);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double kernels = 0, dur = 0; /* weighed by stratum (1 each with one) */
        for (; j < n && v[j].phase == v[i].phase && v[j].op == v[i].op; j++)
            kernels += v[j].w, dur += v[j].w * (double)v[j].dur;
        struct op_figure *f = x ? fig_find(r, v[i].phase, op_iters_name(x, v[i].op)) : NULL;
        if (f) f->kernels += llround(kernels), f->gpu_ns += llround(dur);
        i = j;
    }
    free(v);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The trimmed mean of v's m values padded with zeros to n (the captured iterations where it did
 * not run), and its 99% error in % of it (-1 unknown), sampled from big_n iterations. v is
 * sorted in place (room for n). */
static double trimmed_se(double *v, size_t m, size_t n, int64_t big_n, double *se_out)
{
    *se_out = -1;
    if (!n) return -1; /* below 5 iterations no error is given: a spread of 4 says little */
    for (size_t i = m; i < n; i++) v[i] = 0;
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t k = op_trim_count(n);
    double sum = 0, wsum = 0, wsq = 0;
    for (size_t i = k; i < n - k; i++) sum += v[i];
    double mean = sum / (double)(n - 2 * k);
    for (size_t i = 0; i < n; i++) { /* winsorized: the trimmed ends held at the cut */
        double x = i < k ? v[k] : i >= n - k ? v[n - k - 1] : v[i];
        wsum += x, wsq += x * x;
    }
    if (n >= 5) {
        double wmean = wsum / (double)n;
        double var = (wsq - (double)n * wmean * wmean) / (double)(n - 1);
        double fpc = big_n > 1 && big_n >= (int64_t)n
                         ? (double)(big_n - (int64_t)n) / (double)(big_n - 1)
                         : 1;
        *se_out = sqrt((var > 0 ? var : 0) / (double)n * fpc) / (1 - 2 * (double)k / (double)n);
    }
    return mean;
}

static double trimmed(double *v, size_t m, size_t n, int64_t big_n, double *err_pct)
{
    double se, mean = trimmed_se(v, m, n, big_n, &se);
    *err_pct = se >= 0 && mean > 0 ? 100 * rstats_t995((double)n - 1) * se / mean : -1;
    return mean;
}

/* The winsorized mean and spread of v (n values, held to [lo, hi]): the mean, and the standard
 * error of it sampled from big_n (-1 under 5 values). */
static double winsorized_se(const double *v, size_t n, double lo, double hi, int64_t big_n,
                            double *se_out)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i] < lo ? lo : v[i] > hi ? hi : v[i];
        sum += x, sq += x * x;
    }
    double mean = n ? sum / (double)n : 0;
    *se_out = -1;
    if (n >= 5) {
        double var = (sq - (double)n * mean * mean) / (double)(n - 1);
        double fpc = big_n > 1 && big_n >= (int64_t)n
                         ? (double)(big_n - (int64_t)n) / (double)(big_n - 1)
                         : 1;
        *se_out = sqrt((var > 0 ? var : 0) / (double)n * fpc);
    }
    return mean;
}

/* The same for phase id `phase` (c's index k) whose values v (m of them, of iterations ids, in
 * id order; room for n) were taken from its n captured iterations: with one stratum, trimmed()
 * itself; else every capture held to the phase's cut (the lowest and highest 2%, at least one
 * each from 10 captures on, as trimmed()), and each stratum's winsorized mean weighed by the
 * iterations it stands for, its error theirs together (a stratified sample: the variances weighed
 * by the squared shares), at t for the captures less the strata. A stratum of under 5 captures,
 * whose own spread says little, takes the others' per capture (pooled). */
static double strat_trimmed(const struct captured *c, int k, int phase, const int64_t *ids,
                            double *v, size_t m, size_t n, double *err_pct)
{
    int first = -1, last = -1;
    for (int e = 0; e < c->st.n; e++)
        if (c->st.v[e].phase == phase) last = e, first = first < 0 ? e : first;
    if (first < 0 || first == last) return trimmed(v, m, n, c->steady[k], err_pct);
    int ns = last - first + 1;
    double mean = 0, var = 0, pooled = 0, *one = malloc((n > m ? n : m ? m : 1) * sizeof *one);
    double *se = malloc((size_t)ns * sizeof *se), *all = malloc((n > m ? n
                                                                 : m   ? m
                                                                       : 1) *
                                                                sizeof *all);
    if (!one || !se || !all) cli_fail("out of memory");
    /* The phase's cut: its captures' values, those where the operator did not run 0. */
    size_t na = 0;
    for (size_t j = 0; j < m; j++) all[na++] = v[j];
    while (na < n) all[na++] = 0;
    qsort(all, na, sizeof *all, cmp_dbl);
    size_t cut = op_trim_count(na);
    double lo = na ? all[cut] : 0, hi = na ? all[na - cut - 1] : 0;
    free(all);
    int64_t pooled_n = 0, taken = 0;
    size_t i = 0;
    for (int e = first; e <= last; e++) {
        const struct op_stratum *x = &c->st.v[e];
        size_t mine = 0;
        for (; i < m && ids[i] <= x->last; i++) one[mine++] = v[i];
        size_t ne = (size_t)x->taken > mine ? (size_t)x->taken : mine;
        for (size_t j = mine; j < ne; j++) one[j] = 0;
        taken += (int64_t)ne;
        double me = winsorized_se(one, ne, lo, hi, x->pop, &se[e - first]);
        if (me < 0) me = 0; /* no capture: nothing to weigh (not expected: each has one) */
        mean += x->share * me;
        if (se[e - first] >= 0) /* its variance per capture (se^2 ne), for the small strata */
            pooled += se[e - first] * se[e - first] * (double)ne * (double)ne,
                pooled_n += (int64_t)ne;
    }
    int known = 1;
    for (int e = first; e <= last; e++) {
        const struct op_stratum *x = &c->st.v[e];
        double s = se[e - first];
        if (s < 0 && pooled_n && x->taken) s = sqrt(pooled / (double)pooled_n / (double)x->taken);
        if (s < 0) known = 0;
        var += x->share * x->share * (s > 0 ? s * s : 0);
    }
    free(one), free(se);
    *err_pct = known && mean > 0 ? 100 * rstats_t995((double)(taken - ns)) * sqrt(var) / mean : -1;
    return mean;
}

void operators_sampled_rows(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    struct captured c;
    captured_load(db, p, &c);
    size_t cap = 0;
    double *vals = NULL, *tots = NULL; /* the current operator's per-iteration self, total */
    int64_t *ids = NULL;               /* their iterations */
    double wcalls = 0, wself = 0, wdur = 0; /* its sums, weighed by stratum (operators_strata.h) */
    size_t m = 0;
    const struct op_iters *x = op_iters_get(db, p);
    struct op_figure *f = NULL;
    int last_phase = -1;
    int64_t last_name = -1;
    for (size_t i = 0;; i++) {
        int more = x && i < x->n;
        const struct op_iter_sum *o = more ? &x->v[i] : NULL;
        if (more && (!o->named || !captured_has(&c, o->iter))) continue;
        int phase = more ? o->phase : -1;
        int64_t name_id = more ? o->name_id : -1;
        if (f && (!more || phase != last_phase || name_id != last_name)) {
            int k = captured_phase(&c, f->phase);
            size_t n = k >= 0 ? (size_t)c.taken[k] : 0;
            if (n > cap && (!(vals = realloc(vals, n * sizeof *vals)) ||
                            !(tots = realloc(tots, n * sizeof *tots)) ||
                            !(ids = realloc(ids, (cap = n) * sizeof *ids))))
                cli_fail("out of memory");
            if (k >= 0 && n >= m) {
                double unused;
                f->self_per_iter = strat_trimmed(&c, k, f->phase, ids, vals, m, n, &f->err_pct);
                f->total_per_iter = strat_trimmed(&c, k, f->phase, ids, tots, m, n, &unused);
            }
            f->calls = f->calls_in_iter = llround(wcalls);
            /* Per iteration from the weighed sum itself, as the series' (operators_series.c). */
            if (c.st.multi && k >= 0) f->calls_per_iter = wcalls / op_strata_wsum(&c.st, f->phase);
            f->self_ns = llround(wself), f->total_ns = llround(wdur);
            wcalls = wself = wdur = 0;
            m = 0;
            f = NULL;
        }
        if (!more) break;
        if (!f) {
            f = operators_add(r);
            f->phase = phase;
            const char *name = op_iters_name(x, name_id);
            snprintf(f->name, sizeof f->name, "%s", name ? name : "?");
            last_phase = phase, last_name = name_id;
        }
        double w = op_strata_weight(&c.st, phase, o->iter);
        wcalls += w * (double)o->calls, wself += w * (double)o->self, wdur += w * (double)o->dur;
        if (m == cap) {
            cap = cap ? cap * 2 : 64;
            if (!(vals = realloc(vals, cap * sizeof *vals)) ||
                !(tots = realloc(tots, cap * sizeof *tots)) ||
                !(ids = realloc(ids, cap * sizeof *ids)))
                cli_fail("out of memory");
        }
        ids[m] = o->iter;
        tots[m] = (double)o->dur;
        vals[m++] = (double)o->self;
    }
    free(vals), free(tots), free(ids);
    if (r->n) qsort(r->v, (size_t)r->n, sizeof *r->v, cmp_fig);
    for (int i = 0; i < r->n;) { /* shares of the phase's operator self time */
        int j = i;
        int64_t sum = 0;
        while (j < r->n && r->v[j].phase == r->v[i].phase) sum += r->v[j++].self_ns;
        for (; i < j; i++)
            r->v[i].self_share = sum > 0 ? 100.0 * (double)r->v[i].self_ns / (double)sum : 0;
    }
    sampled_gpu(db, p, &c, r);
    captured_free(&c);
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
        if (ph->captured > 0 && f->calls_per_iter < 0)
            f->calls_per_iter = (double)f->calls_in_iter / (double)ph->captured;
        f->calls = scaled(f->calls, x), f->calls_in_iter = scaled(f->calls_in_iter, x);
        /* Times from the trimmed means, so that a rare preempted call in one captured
         * iteration (times 4) does not rank an operator first; else scaled. */
        f->self_ns = f->self_per_iter >= 0 ? llround(f->self_per_iter * (double)ph->iterations)
                                           : scaled(f->self_ns, x);
        f->total_ns = f->total_per_iter >= 0 ? llround(f->total_per_iter * (double)ph->iterations)
                                             : scaled(f->total_ns, x);
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

struct ph_iter {
    int phase;
    int64_t iter, self;
};

static int cmp_ph_iter(const void *a, const void *b)
{
    const struct ph_iter *x = a, *y = b;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

void operators_sampled_finish(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    struct captured c;
    captured_load(db, p, &c);
    /* The phase's operator self time per captured iteration, trimmed as each operator's. */
    size_t n = c.n ? c.n : 1;
    double *vals = malloc(n * sizeof *vals);
    int *ph_of = malloc(n * sizeof *ph_of);
    int64_t *id_of = malloc(n * sizeof *id_of), *one_id = malloc(n * sizeof *one_id);
    if (!vals || !ph_of || !id_of || !one_id) cli_fail("out of memory");
    size_t m = 0;
    /* Each captured iteration's operator self time, by phase and iteration. */
    const struct op_iters *x = op_iters_get(db, p);
    struct ph_iter *pi = malloc((x && x->n ? x->n : 1) * sizeof *pi);
    if (!pi) cli_fail("out of memory");
    size_t npi = 0;
    for (size_t i = 0; x && i < x->n; i++)
        if (captured_has(&c, x->v[i].iter))
            pi[npi++] = (struct ph_iter){x->v[i].phase, x->v[i].iter, x->v[i].self};
    if (npi) qsort(pi, npi, sizeof *pi, cmp_ph_iter);
    for (size_t i = 0; i < npi && m < n;) {
        size_t j = i;
        int64_t self = 0;
        for (; j < npi && pi[j].phase == pi[i].phase && pi[j].iter == pi[i].iter; j++)
            self += pi[j].self;
        ph_of[m] = pi[i].phase;
        id_of[m] = pi[i].iter;
        vals[m++] = (double)self;
        i = j;
    }
    free(pi);
    double *one = malloc(n * sizeof *one);
    if (!one) cli_fail("out of memory");
    for (int k = 0; k < r->nphases; k++) {
        struct op_phase *ph = &r->phases[k];
        int x = captured_phase(&c, ph->phase);
        ph->captured = x >= 0 ? c.taken[x] : 0;
        size_t mine = 0;
        for (size_t i = 0; i < m; i++)
            if (ph_of[i] == ph->phase) one_id[mine] = id_of[i], one[mine++] = vals[i];
        if (x >= 0 && (size_t)c.taken[x] >= mine && (size_t)c.taken[x] <= n)
            strat_trimmed(&c, x, ph->phase, one_id, one, mine, (size_t)c.taken[x], &ph->err_pct);
        phase_scale(r, ph);
    }
    free(vals), free(ph_of), free(one), free(id_of), free(one_id);
    captured_free(&c);
    /* Ranked and shared by the trimmed times; the phase's sums from them. */
    if (r->n) qsort(r->v, (size_t)r->n, sizeof *r->v, cmp_fig);
    for (int k = 0; k < r->nphases; k++) {
        struct op_phase *ph = &r->phases[k];
        int64_t self = 0, cast = 0;
        ph->held = 1;
        for (int i = 0; i < r->n; i++)
            if (r->v[i].phase == ph->phase) {
                self += r->v[i].self_ns;
                if (!strcmp(r->v[i].name, "aten::_to_copy")) cast += r->v[i].total_ns;
            }
        /* A physical bound: the operators of an iteration run on its thread, inside it, so
         * their self time is at most the iterations' own (a heavy-tailed sample once put 5.73 s
         * of operators in a phase of 4.78 s). Past it, every figure of the phase is held to it
         * in proportion, and the tables say so. */
        int64_t wall = 0;
        for (size_t i = 0; i < p->niters; i++)
            if (p->v[p->iters[i].phase].id == ph->phase) wall += p->iters[i].host;
        if (wall > 0 && self > wall) {
            double k = (double)wall / (double)self;
            for (int i = 0; i < r->n; i++) {
                struct op_figure *f = &r->v[i];
                if (f->phase != ph->phase) continue;
                f->self_ns = scaled(f->self_ns, k), f->total_ns = scaled(f->total_ns, k);
                if (f->self_per_iter >= 0) f->self_per_iter *= k;
                if (f->total_per_iter >= 0) f->total_per_iter *= k;
            }
            self = wall, cast = scaled(cast, k), ph->capped = 1, ph->held = k;
        }
        ph->self_ns = self, ph->cast_ns = cast;
        for (int i = 0; i < r->n; i++)
            if (r->v[i].phase == ph->phase)
                r->v[i].self_share = self > 0 ? 100.0 * (double)r->v[i].self_ns / (double)self : 0;
    }
}
