/*
 * compare_operators.c: the operator deltas of `infprof compare`: the PyTorch operators
 * (section `operators`, report/run/operators.c) matched by phase and name, sorted within each
 * phase by the change in self CPU time, with calls, calls per iteration and GPU time beside it.
 * Self time per iteration too (JSON, CSV): runs of different lengths, or sampled ones whose
 * totals are estimates, compare by it. Without operators in either run the section is empty
 * and says so.
 */
#include "compare.h"

#include <string.h>

static const struct diff_spec ops_spec = {
    .key = "operators",
    .match = {"phase", "operator"},
    .show = {"Phase"},
    .figs = {{"self_cpu_ns", 1, 0},
             {"calls", 1, 0},
             {"calls_per_iteration", 0, 0},
             {"total_cpu_ns", 1, 0},
             {"gpu_ns", 1, 0},
             {"self_per_iteration_ns", 1, 1}},
    .sort = "self_cpu_ns",
    .group = "phase",
    .what = "operator names",
};

int compare_operators(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                      struct table **t)
{
    struct table *d =
        diff_section(&ops_spec, side_table(b, "operators"), side_table(n, "operators"), o->top);
    static const struct view_col cols[] = {{"Phase", NULL},
                                           {"self_cpu_ns_base", "Self base"},
                                           {"self_cpu_ns_new", "Self new"},
                                           {"self_cpu_ns_delta", "Delta"},
                                           {"calls_per_iteration_base", "Base/it"},
                                           {"calls_per_iteration_new", "New/it"},
                                           {"gpu_ns_delta", "GPU delta"},
                                           {"Change", NULL},
                                           {"operator", "Operator"}};
    /* GPU delta in text only where an operator's GPU time moved (a CPU run's column of 0ns
     * pushed the names past 100 columns). */
    int gpu = 0;
    for (int r = 0; r < d->nrows; r++) {
        const struct cell *g = table_cell(d, r, "gpu_ns_delta");
        gpu |= g && !g->null && g->i != 0;
    }
    struct view_col shown[sizeof cols / sizeof *cols];
    int nshown = 0;
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        if (gpu || strcmp(cols[i].name, "gpu_ns_delta")) shown[nshown++] = cols[i];
    struct table *v = table_view(d, "PyTorch operators, by change in self CPU time", shown, nshown);
    if (!d->nrows)
        v->note = "no operator in either run (INFPROF_OPERATORS=1 records every call)";
    else
        v->note = pool_printf("%s%sBase/it, New/it: calls per iteration in each run; Delta: self"
                              " CPU time, new less base",
                              d->note ? d->note : "", d->note ? ". " : "");
    t[0] = d;
    t[1] = v;
    return 2;
}
