/*
 * sec_operators.c: the Operators section (figures from report/run/operators.c): per phase, the
 * operators together (calls and casts per iteration, operator precision), then the PyTorch
 * operators by self CPU time with calls, calls per iteration and total time (top --top per phase
 * in text, all in JSON/CSV with --top 0), with the GPU time of the kernels each launched
 * (innermost operator at the launch) and kernels per call; empty on databases whose kernel rows
 * do not carry the operator.
 */
#include "sections.h"
#include "../run/operators.h"

#include <assert.h>
#include <string.h>

/* No operator: the setting, or a process that never marked an iteration while sampling. */
static const char NO_OPERATOR[] =
    "no operator recorded (INFPROF_OPERATORS=sampled records those of 1 iteration in 4, where"
    " the process runs iterations: a Python module call, a TorchScript call, a mark;"
    " INFPROF_OPERATORS=1 records every call)";

/* phase_table's columns, in the order it declares them (asserted there). */
enum {
    OP_PHASE,
    OP_SHORT,
    OP_CALLS,
    OP_CALLS_PER_ITERATION,
    OP_SELF_CPU_NS,
    OP_CASTS,
    OP_CASTS_PER_ITERATION,
    OP_CAST_NS,
    OP_PRECISION,
    OP_KERNELS,
    OP_GPU_NS,
    OP_SUSPECT,
    OP_MEMORY_PEAK_OPERATOR,
    OP_RECORDED,
    OP_SELF_ERROR_PCT,
    OP_NCOLS
};

/* Whether any operator launched GPU work: else the GPU columns stay out of text. */
static int any_gpu(const struct run_operators *r)
{
    for (int i = 0; i < r->nphases; i++)
        if (r->phases[i].kernels) return 1;
    return 0;
}

static struct table *phase_table(const struct run_phases *p, const struct run_operators *r)
{
    int gpu = any_gpu(r);
    struct table *t = table_new("operator_phases", "PyTorch operators per phase");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "calls_per_iteration", "Calls/it", COL_RATIO);
    table_col(t, "self_cpu_ns", "Op CPU", COL_NS);
    table_col(t, "casts", NULL, COL_INT);
    table_col(t, "casts_per_iteration", "Casts/it", COL_RATIO);
    table_col(t, "cast_ns", "Cast time", COL_NS);
    table_col(t, "precision", "Precision", COL_TEXT);
    table_col(t, "kernels", gpu ? "Kernels" : NULL, COL_INT);
    table_col(t, "gpu_ns", gpu ? "Op GPU" : NULL, COL_NS);
    table_col(t, "suspect", r->overflow > 0 ? "Suspect" : NULL, COL_TEXT);
    table_col(t, "memory_peak_operator", "At memory peak", COL_NAME);
    table_col(t, "recorded", r->sampled ? "Recorded" : NULL, COL_TEXT);
    table_col(t, "self_error_pct", r->sampled ? "Op CPU ±%" : NULL, COL_PCT);
    assert(t->ncols == OP_NCOLS);
    for (int i = 0; i < r->nphases; i++) {
        const struct op_phase *ph = &r->phases[i];
        table_row(t);
        phase_cells(t, phase_by_id(p, ph->phase), 0, 1);
        table_set_int(t, OP_CALLS, ph->calls);
        if (ph->iterations)
            table_set_num(t, OP_CALLS_PER_ITERATION,
                          (double)ph->calls_in_iter / (double)ph->iterations);
        table_set_int(t, OP_SELF_CPU_NS, ph->self_ns);
        table_set_int(t, OP_CASTS, ph->casts);
        if (ph->iterations)
            table_set_num(t, OP_CASTS_PER_ITERATION,
                          (double)ph->casts_in_iter / (double)ph->iterations);
        table_set_int(t, OP_CAST_NS, ph->cast_ns);
        if (ph->int8_ns || ph->float_ns)
            table_set_text(t, OP_PRECISION, ph->int8 ? "int8" : "float");
        if (r->gpu)
            table_set_int(t, OP_KERNELS, ph->kernels), table_set_int(t, OP_GPU_NS, ph->gpu_ns);
        if (r->overflow > 0) table_set_text(t, OP_SUSPECT, "nested past 64");
        if (ph->peak_op[0]) table_set_text(t, OP_MEMORY_PEAK_OPERATOR, ph->peak_op);
        table_set_text(t, OP_RECORDED, operators_mode_text(r, ph));
        if (ph->err_pct >= 0) table_set_num(t, OP_SELF_ERROR_PCT, ph->err_pct);
    }
    char capped[256] = "";
    for (int i = 0, o = 0; i < r->nphases && o + 40 < (int)sizeof capped; i++) {
        const struct phase_info *ph = phase_by_id(p, r->phases[i].phase);
        char l[32];
        if (!r->phases[i].capped || !ph) continue;
        phase_short_label(ph, l, sizeof l);
        o += snprintf(capped + o, sizeof capped - (size_t)o, "%s%s", o ? ", " : "", l);
    }
    if (!r->nphases)
        t->note = NO_OPERATOR;
    else if (r->sampled)
        t->note = pool_printf(
            "estimated: every operator call of %s was recorded (the Recorded"
            " ones, INFPROF_OPERATORS=sampled), counts and times scaled to all; ±: 99%% sampling"
            " error of the time per iteration; INFPROF_OPERATORS=1 records every call%s%s%s",
            operators_rate_text(r),
            r->overflow > 0 ? pool_printf("; suspect: %lld calls nested deeper than 64 not"
                                          " recorded",
                                          (long long)r->overflow)
                            : "",
            capped[0] ? "; held to its iterations' own time (the captured ones ran long, the"
                        " scaled estimate past it): "
                      : "",
            capped);
    else if (r->overflow > 0)
        t->note =
            pool_printf("suspect: %lld operator calls nested deeper than 64 were not recorded;"
                        " the self times of the operators around them are too high",
                        (long long)r->overflow);
    else
        t->note = "per iteration: of the iterations the program marked (iterations detected"
                  " without a mark carry no operator, '-')";
    /* "Precision float" in a bf16 phase read as autocast doing nothing (a fresh-eyes check). */
    if (r->nphases)
        t->note = pool_printf("%s; Precision: int8 where quantized operators did most of the GEMM"
                              " and convolution work, else 'float' (fp32, bf16 and fp16 alike: the"
                              " operators' dtypes are not recorded)",
                              t->note);
    return t;
}

/* section_operators's columns, in the order it declares them (asserted there). */
enum {
    OS_PHASE,
    OS_SHORT,
    OS_OPERATOR,
    OS_CALLS,
    OS_CALLS_PER_ITERATION,
    OS_SELF_CPU_NS,
    OS_SELF_SHARE_PCT,
    OS_TOTAL_CPU_NS,
    OS_GPU_NS,
    OS_KERNELS_PER_CALL,
    OS_SELF_PER_ITERATION_NS,
    OS_SELF_ERROR_PCT,
    OS_NCOLS
};

int section_operators(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                      struct table **out)
{
    struct table *t = table_new("operators", "PyTorch operators by phase (self CPU time)");
    const struct run_operators *r = run_operators(db, p);
    int gpu = any_gpu(r);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "operator", "Operator", COL_NAME);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "calls_per_iteration", "Calls/it", COL_RATIO);
    table_col(t, "self_cpu_ns", "Self CPU", COL_NS);
    table_col(t, "self_share_pct", "Self %", COL_PCT);
    table_col(t, "total_cpu_ns", "Total CPU", COL_NS);
    table_col(t, "gpu_ns", gpu ? "GPU" : NULL, COL_NS);
    table_col(t, "kernels_per_call", gpu ? "Kernels/call" : NULL, COL_RATIO);
    table_col(t, "self_per_iteration_ns", "Self/it", COL_NS);
    table_col(t, "self_error_pct", r->sampled ? "±%" : NULL, COL_PCT);
    assert(t->ncols == OS_NCOLS);
    int shown = 0, last = -1;
    for (int i = 0; i < r->n; i++) {
        const struct op_figure *f = &r->v[i];
        if (f->phase != last) shown = 0, last = f->phase;
        if (o->top > 0 && shown++ >= o->top) continue;
        table_row(t);
        phase_cells(t, phase_by_id(p, f->phase), 0, 1);
        table_set_text(t, OS_OPERATOR, f->name);
        table_set_int(t, OS_CALLS, f->calls);
        if (f->calls_per_iter >= 0) table_set_num(t, OS_CALLS_PER_ITERATION, f->calls_per_iter);
        table_set_int(t, OS_SELF_CPU_NS, f->self_ns);
        table_set_num(t, OS_SELF_SHARE_PCT, f->self_share);
        table_set_int(t, OS_TOTAL_CPU_NS, f->total_ns);
        if (r->gpu) table_set_int(t, OS_GPU_NS, f->gpu_ns);
        if (r->gpu && f->calls)
            table_set_num(t, OS_KERNELS_PER_CALL, (double)f->kernels / (double)f->calls);
        if (f->self_per_iter >= 0) table_set_num(t, OS_SELF_PER_ITERATION_NS, f->self_per_iter);
        if (f->err_pct >= 0) table_set_num(t, OS_SELF_ERROR_PCT, f->err_pct);
    }
    if (!r->present)
        t->note = "no operator table (a database older than schema 4)";
    else if (!r->n)
        t->note = NO_OPERATOR;
    else if (r->sampled)
        t->note = pool_printf(
            "estimated from the iterations whose every operator call was recorded (%s);"
            " Self/it: per iteration, the highest and lowest 2%% left out; ±: its 99%% sampling"
            " error%s%s",
            operators_rate_text(r),
            r->uncounted ? pool_printf("; %lld calls recorded outside any captured iteration (one"
                                       " the program ended inside, a forked child's) left out",
                                       (long long)r->uncounted)
                         : "",
            r->moved ? pool_printf("; %lld calls of the threads that marked requests whose model"
                                   " ran on another thread, inside those marks, left out (a"
                                   " request's operators are its model's)",
                                   (long long)r->moved)
                     : "");
    out[0] = phase_table(p, r);
    out[1] = t;
    return 2;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int operators_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    return section_operators(c->db, c->p, c->o, out);
}

/* Compared by report/compare itself (its notes depend on both runs). */
const struct report_section sec_operators = {
    .key = "operators", .build = operators_build, .shown_empty = 0, .compare = NULL};
