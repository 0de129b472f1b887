/*
 * sec_operators.c: the Operators section: per phase, the PyTorch operators by self CPU time
 * (figures from report/run/operators.c), with calls, calls per iteration and total time. Top
 * --top per phase in text (all in JSON/CSV with --top 0).
 */
#include "sections.h"
#include "../run/operators.h"

#include <string.h>

struct table *section_operators(struct sqlite3 *db, const struct run_phases *p,
                                const struct report_opts *o)
{
    struct table *t = table_new("operators", "PyTorch operators by phase (self CPU time)");
    table_col(t, "phase", "Phase", COL_TEXT);
    table_col(t, "operator", "Operator", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "calls_per_iteration", "Calls/iter", COL_RATIO);
    table_col(t, "self_cpu_ns", "Self CPU", COL_NS);
    table_col(t, "self_share_pct", "Self %", COL_PCT);
    table_col(t, "total_cpu_ns", "Total CPU", COL_NS);
    struct run_operators r;
    operators_load(db, &r);
    int shown = 0, last = -1;
    for (int i = 0; i < r.n; i++) {
        const struct op_figure *f = &r.v[i];
        if (f->phase != last) shown = 0, last = f->phase;
        if (o->top > 0 && shown++ >= o->top) continue;
        const char *label = "(no phase)";
        for (int k = 0; k < p->n; k++)
            if (p->v[k].id == f->phase) label = p->v[k].label;
        table_row(t);
        table_set_text(t, 0, label);
        table_set_text(t, 1, f->name);
        table_set_int(t, 2, f->calls);
        if (f->calls_per_iter >= 0) table_set_num(t, 3, f->calls_per_iter);
        table_set_int(t, 4, f->self_ns);
        table_set_num(t, 5, f->self_share);
        table_set_int(t, 6, f->total_ns);
    }
    if (!r.present)
        t->note = "no operator table (a database older than schema 4)";
    else if (!r.n)
        t->note = "no operator recorded (INFPROF_OPERATORS=1 records them)";
    operators_free(&r);
    return t;
}
