/*
 * sec_operator_series.c: the PyTorch operators of each series (report/run/operators_series.c):
 * calls and self time per iteration, by series and operator, the largest first (top --top per
 * series in text, all in JSON and CSV). Compare matches them by phase, series and operator: the
 * operator deltas of one configuration against the same configuration's.
 */
#include "sections.h"
#include "../run/operators.h"
#include "../run/operators_series.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static int cmp_row(const void *a, const void *b)
{
    const struct op_series_row *x = a, *y = b;
    if (x->series != y->series) return x->series - y->series;
    return (x->self_per_iter < y->self_per_iter) - (x->self_per_iter > y->self_per_iter);
}

/* operator_series_table's columns, in the order it declares them (asserted there). */
enum {
    OO_PHASE,
    OO_SHORT,
    OO_SERIES,
    OO_OPERATOR,
    OO_RECORDED_ITERATIONS,
    OO_CALLS_PER_ITERATION,
    OO_SELF_PER_ITERATION_NS,
    OO_NCOLS
};

static struct table *operator_series_table(const struct section_ctx *c)
{
    const struct run_phases *p = c->p;
    struct table *t = table_new("operator_series", "PyTorch operators per series (per iteration)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "operator", "Operator", COL_NAME);
    /* The iterations its figures are over: every steady one where every call was recorded,
     * else the captured ones ("Iters 16" beside the Series table's "Iters 103, Captured 16"
     * read as a third count: named for what it is). */
    table_col(t, "recorded_iterations", "Recorded", COL_INT);
    table_col(t, "calls_per_iteration", "Calls/it", COL_RATIO);
    table_col(t, "self_per_iteration_ns", "Self/it", COL_NS);
    assert(t->ncols == OO_NCOLS);
    struct op_series_row *v;
    size_t n = operators_by_series(c->db, p, &v);
    if (n) qsort(v, n, sizeof *v, cmp_row);
    /* Series none of whose iterations was captured (operators sampled): not in the table, and
     * said, for their phase's figures scale the other series' captures over theirs too (a
     * fresh-eyes check: batch 32's 16 iterations, captured none, read batch 1's operators). */
    char missed[512] = "";
    size_t o = 0;
    int nmissed = 0;
    for (int i = 0; n && run_operators(c->db, p)->sampled && i < p->series.n; i++) {
        const struct series_info *se = &p->series.v[i];
        int has = 0;
        for (size_t k = 0; k < n && !has; k++) has = v[k].series == i;
        if (has || !se->nsteady) continue;
        char ph[40];
        phase_short_label(&p->v[se->phase], ph, sizeof ph);
        if (nmissed++ < 4 && o + 120 < sizeof missed)
            o += (size_t)snprintf(
                missed + o, sizeof missed - o, "%s%s %s, %zu steady iterations", o ? "; " : "", ph,
                pool_escaped(se->name[0] ? se->name : "(unnamed)", 60), se->nsteady);
    }
    int shown = 0, last = -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i].series != last) shown = 0, last = v[i].series;
        if (c->o->top > 0 && shown++ >= c->o->top) continue;
        const struct series_info *se = &p->series.v[v[i].series];
        table_row(t);
        phase_cells(t, &p->v[se->phase], OO_PHASE, OO_SHORT);
        table_set_text(t, OO_SERIES, se->name[0] ? se->name : "(unnamed)");
        table_set_text(t, OO_OPERATOR, v[i].name);
        table_set_int(t, OO_RECORDED_ITERATIONS, v[i].iterations);
        table_set_num(t, OO_CALLS_PER_ITERATION, v[i].calls_per_iter);
        table_set_num(t, OO_SELF_PER_ITERATION_NS, v[i].self_per_iter);
    }
    free(v);
    if (t->nrows)
        t->note = pool_printf(
            "per iteration: means over each series' steady iterations whose operators were"
            " recorded (Recorded: every steady one, or with operators sampled the captured"
            " ones)%s%s%s%s",
            nmissed ? "; no iteration captured, not in this table: " : "", missed,
            nmissed > 4 ? pool_printf(" and %d more", nmissed - 4) : "",
            nmissed ? " (their phase's operator figures scale the other series' captures over"
                      " them; INFPROF_OPERATORS=1 records every call)"
                    : "");
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

/* By phase, series and operator: a configuration's operators against the same configuration's,
 * per iteration (runs of different lengths, or sampled ones, compare so). */
static const struct section_compare operator_series_compare = {
    .spec = {.key = "operator_series",
             .match = {"phase", "series", "operator"},
             .show = {"Phase"},
             .figs = {{"self_per_iteration_ns", 1, 1}, {"calls_per_iteration", 1, 0}},
             .sort = "self_per_iteration_ns",
             .group = "series",
             .what = "operators"},
    .title = "PyTorch operators per series, by change in self time per iteration",
    .cols = {{"Phase", NULL},
             {"series", "Series"},
             {"self_per_iteration_ns_base", "Base/it"},
             {"self_per_iteration_ns_new", "New/it"},
             {"self_per_iteration_ns_delta", "Delta"},
             {"calls_per_iteration_new", "Calls/it"}, /* the new run's, as the report shows it */
             {"Change", NULL},
             {"operator", "Operator"}},
    .top = 1,
};

const struct report_section sec_operator_series = {.key = "operator_series",
                                                   .table = operator_series_table,
                                                   .shown_empty = 0,
                                                   .compare = &operator_series_compare};
