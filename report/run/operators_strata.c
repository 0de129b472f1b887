/*
 * operators_strata.c: the strata of a sampled operator capture. The collector chooses a phase's
 * captured iterations at a mean gap that grows through the run (collectors/torch_ops.c: 1 in 4
 * at first, then the budget's gap, doubled past each 256 captures at one gap), and each window
 * row says the gap it was chosen at (`every`). Each run of captures at one gap is a stratum: it
 * stands for the phase's counted iterations from the stratum before's last capture to its own
 * last one (the phase's last stratum to its end), every one of which it sampled alike. A figure
 * per iteration is then the strata's means weighed by the iterations they stand for, and a sum
 * each stratum's scaled by its own (pop / taken): a model that doubled its layers halfway reads
 * the mean of its two halves, where weighing every capture alike read its first seconds (the
 * early captures are four to a hundred times denser than the late ones).
 * Every stratum stands alone, however few its captures: merged into a neighbour sampled at
 * another gap, its iterations would be weighed at that one's (a short last stratum, at the
 * run's longest gap, merged into the one before read a model that changed mid-run 10-33% low in a
 * fresh-eyes check). One stratum in a phase: every weight is 1, and the figures are computed
 * exactly as before strata (a database without `every`, a fixed rate).
 */
#include "operators_strata.h"
#include "run.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct cap {
    int64_t id, every;
    int phase; /* phase id */
};

static int cmp_cap(const void *a, const void *b)
{
    const struct cap *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The run's counted iteration ids of phase index k, in id order. */
static size_t counted_ids(const struct run_phases *p, int k, int64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->phase == k && x->id > 0 && (x->steady || x->captured)) out[n++] = x->id;
    }
    rstats_sort_i64(out, n);
    return n;
}

static void push(struct op_strata *s, size_t *cap, struct op_stratum st)
{
    if ((size_t)s->n == *cap &&
        !(s->v = realloc(s->v, (*cap = *cap ? *cap * 2 : 16) * sizeof *s->v)))
        cli_fail("out of memory");
    s->v[s->n++] = st;
}

void op_strata_load(sqlite3 *db, const struct run_phases *p, struct op_strata *s)
{
    memset(s, 0, sizeof *s);
    if (!db_has_table(db, "torch_operator_windows") ||
        !db_has_column(db, "torch_operator_windows", "every"))
        return;
    size_t nw = (size_t)db_int(
               db, pool_printf("SELECT count(*) FROM %s", iterations_operator_windows(db)), 0),
           m = 0;
    if (!nw) return;
    struct cap *w = malloc(nw * sizeof *w);
    int64_t *ids = malloc((p->niters ? p->niters : 1) * sizeof *ids);
    if (!w || !ids) cli_fail("out of memory");
    sqlite3_stmt *st =
        db_prepare(db, pool_printf("SELECT iter, every FROM %s WHERE iter IS NOT NULL AND"
                                   " every > 0",
                                   iterations_operator_windows(db)));
    while (m < nw && db_step(st))
        w[m] = (struct cap){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), 0}, m++;
    sqlite3_finalize(st);
    qsort(w, m, sizeof *w, cmp_cap);
    size_t cap = 0;
    for (int k = 0; k < p->n; k++) {
        size_t nid = counted_ids(p, k, ids);
        /* This phase's captures: the windows whose iteration is one of its counted ones. */
        int first = s->n;
        int64_t taken = 0, prev_every = -1;
        for (size_t i = 0, j = 0; i < m && j < nid;) {
            if (w[i].id < ids[j]) {
                i++;
                continue;
            }
            if (w[i].id > ids[j]) {
                j++;
                continue;
            }
            if (w[i].every != prev_every) { /* a new run of one gap */
                push(s, &cap, (struct op_stratum){p->v[k].id, w[i].id, 0, 0, 0, 1});
                prev_every = w[i].every;
            }
            s->v[s->n - 1].last = w[i].id;
            s->v[s->n - 1].taken++;
            taken++;
            i++, j++;
        }
        if (s->n == first) continue;
        s->v[s->n - 1].last = INT64_MAX;
        /* Each stratum's counted iterations: those after the one before's last capture. */
        int64_t total = 0;
        for (size_t j = 0, e = (size_t)first; j < nid; j++) {
            while (ids[j] > s->v[e].last) e++;
            s->v[e].pop++, total++;
        }
        for (int e = first; e < s->n; e++) {
            struct op_stratum *x = &s->v[e];
            x->share = total ? (double)x->pop / (double)total : 0;
            x->weight = x->taken && total && taken
                            ? ((double)x->pop / (double)x->taken) / ((double)total / (double)taken)
                            : 1;
        }
        if (s->n - first > 1) s->multi = 1;
    }
    free(w), free(ids);
}

double op_strata_wsum(const struct op_strata *s, int phase)
{
    double w = 0;
    for (int e = 0; e < s->n; e++)
        if (s->v[e].phase == phase) w += (double)s->v[e].taken * s->v[e].weight;
    return w;
}

int op_strata_of(const struct op_strata *s, int phase, int64_t id)
{
    for (int e = 0; e < s->n; e++)
        if (s->v[e].phase == phase && id <= s->v[e].last) return e;
    return -1;
}

double op_strata_weight(const struct op_strata *s, int phase, int64_t id)
{
    if (!s->multi) return 1;
    int e = op_strata_of(s, phase, id);
    return e >= 0 ? s->v[e].weight : 1;
}

size_t op_trim_count(size_t n)
{
    return n >= 10 ? (size_t)((double)n * 0.02) + 1 : 0;
}

void op_strata_free(struct op_strata *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
