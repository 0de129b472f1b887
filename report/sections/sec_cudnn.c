/*
 * sec_cudnn.c: the report's cuDNN section (sections.h): the run model's cuDNN figures
 * (run/cudnn_run.h) as four tables:
 *  - calls per operation kind, API function and phase: count, errors, host time (total, avg,
 *    p95) and the GPU time of the kernels the calls launched;
 *  - execution plans: what each is, how often it ran, its host and GPU time;
 *  - the precision mix of each phase's cuDNN work;
 *  - findings only this collector sees: batch-norm training during no_grad/inference_mode,
 *    convolution algorithm search (benchmark mode) and whether it recurs.
 * GPU time is null (not 0) when no call of a row could be linked to its kernels (no CUPTI).
 */
#include "sections.h"
#include "../run/cudnn_run.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[CUDNN_OP_COUNT] = {
    NULL,     "conv_fwd",  "bn_inference", "bn_training",  "attention",
    "matmul", "pointwise", "other",        "unclassified",
};

static const char *dtype_name(int dt)
{
    static const char *const names[] = {
        "fp32",     "fp64", "fp16",  "int8",   "int32",    "int8x4",   "uint8",    "uint8x4",
        "int8x32",  "bf16", "int64", "bool",   "fp8_e4m3", "fp8_e5m2", "fp8_fast", "fp8_e8m0",
        "fp4_e2m1", "int4", "uint4", "uint32", "cfp32",    "cfp64",
    };
    return dt >= 0 && dt < (int)(sizeof names / sizeof *names) ? names[dt] : "other";
}

/* "cudnnBatchNormalizationForwardTrainingEx" -> "BNFwdTrainingEx": text keeps to 100 columns. */
static const char *fn_short(const char *fn)
{
    static const struct {
        const char *full, *brief;
    } map[] = {
        {"cudnnConvolutionForward", "ConvFwd"},
        {"cudnnConvolutionBiasActivationForward", "ConvBiasActFwd"},
        {"cudnnBatchNormalizationForwardInference", "BNFwdInference"},
        {"cudnnBatchNormalizationForwardTraining", "BNFwdTraining"},
        {"cudnnBatchNormalizationForwardTrainingEx", "BNFwdTrainingEx"},
        {"cudnnFindConvolutionForwardAlgorithm", "FindConvAlgo"},
        {"cudnnFindConvolutionForwardAlgorithmEx", "FindConvAlgoEx"},
        {"cudnnGetConvolutionForwardAlgorithm_v7", "GetConvAlgo_v7"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(fn, map[i].full)) return map[i].brief;
    return strncmp(fn, "cudnn", 5) ? fn : fn + 5;
}

static const char *phase_label(const struct run_phases *p, int id)
{
    const struct phase_info *ph = id > 0 ? phase_by_id(p, id) : NULL;
    return ph ? ph->label : "none";
}

/* "no_grad/off", as the phase table prints it. */
static void phase_short(const struct run_phases *p, int id, char *out, size_t n)
{
    const struct phase_info *ph = id > 0 ? phase_by_id(p, id) : NULL;
    if (ph)
        phase_short_label(ph, out, n);
    else
        snprintf(out, n, "none");
}

/* calls_table's columns, in the order it declares them (asserted there). */
enum {
    CC_OP_KIND,
    CC_FUNCTION,
    CC_FUNCTION_SHORT,
    CC_PHASE,
    CC_SHORT,
    CC_CALLS,
    CC_ERRORS,
    CC_HOST_TOTAL_NS,
    CC_HOST_AVG_NS,
    CC_HOST_P95_NS,
    CC_GPU_TIME_NS,
    CC_KERNELS,
    CC_NCOLS
};

/* ---- tables ------------------------------------------------------------------------------- */

static struct table *calls_table(const struct run_phases *p, const struct cudnn_run *r)
{
    struct table *t = table_new("cudnn", "cuDNN calls (per operation, function and phase)");
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "function", NULL, COL_TEXT);
    table_col(t, NULL, "Function", COL_NAME);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "errors", "Err", COL_INT);
    table_col(t, "host_total_ns", "Host", COL_NS);
    table_col(t, "host_avg_ns", "Avg", COL_NS);
    table_col(t, "host_p95_ns", "p95", COL_NS);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "kernels", NULL, COL_INT);
    assert(t->ncols == CC_NCOLS);
    char buf[64];
    for (int i = 0; i < r->nby_call; i++) {
        const struct cudnn_group *x = &r->by_call[i];
        const char *fn = r->fns[x->key[1]];
        table_row(t);
        if (x->key[0]) table_set_text(t, CC_OP_KIND, op_names[x->key[0]]);
        table_set_text(t, CC_FUNCTION, fn);
        table_set_text(t, CC_FUNCTION_SHORT, fn_short(fn));
        table_set_text(t, CC_PHASE, phase_label(p, (int)x->key[2]));
        phase_short(p, (int)x->key[2], buf, sizeof buf);
        table_set_text(t, CC_SHORT, buf);
        table_set_int(t, CC_CALLS, x->calls);
        table_set_int(t, CC_ERRORS, x->errors);
        table_set_int(t, CC_HOST_TOTAL_NS, x->host_total);
        table_set_num(t, CC_HOST_AVG_NS, x->host_avg);
        table_set_int(t, CC_HOST_P95_NS, x->host_p95);
        if (x->linked)
            table_set_int(t, CC_GPU_TIME_NS, x->gpu), table_set_int(t, CC_KERNELS, x->kernels);
    }
    if (!r->n)
        t->note = "no cuDNN call was recorded (the program does not use cuDNN, or INFPROF_CUDNN=0)";
    else if (!r->linked)
        t->note = "GPU: no call could be linked to its kernels (CUPTI was not recording)";
    return t;
}

/* plans_table's columns, in the order it declares them (asserted there). */
enum {
    CP_PLAN,
    CP_OP_KIND,
    CP_DTYPE,
    CP_EXECUTES,
    CP_HOST_TOTAL_NS,
    CP_GPU_TIME_NS,
    CP_KERNELS,
    CP_SOURCE,
    CP_FIRST_NS,
    CP_DETAIL,
    CP_NCOLS
};

static struct table *plans_table(const struct cudnn_run *r, const struct report_opts *o)
{
    struct table *t = table_new("cudnn_plans", "cuDNN execution plans");
    table_col(t, "plan", "Plan", COL_INT);
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "dtype", "Type", COL_TEXT);
    table_col(t, "executes", "Runs", COL_INT);
    table_col(t, "host_total_ns", "Host", COL_NS);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "kernels", NULL, COL_INT);
    table_col(t, "source", NULL, COL_TEXT);
    table_col(t, "first_ns", NULL, COL_NS);
    table_col(t, "detail", "Nodes", COL_NAME);
    assert(t->ncols == CP_NCOLS);
    /* No cuDNN call: the table stays, empty (a fixed shape). */
    int shown = o->top && o->top < r->nby_plan ? o->top : r->nby_plan;
    static const char *const sources[] = {"none", "build", "read"};
    for (int i = 0; i < shown; i++) {
        const struct cudnn_group *x = &r->by_plan[i];
        const struct cudnn_plan *row = x->plan_row >= 0 ? &r->plans[x->plan_row] : NULL;
        table_row(t);
        table_set_int(t, CP_PLAN, x->key[0]);
        table_set_int(t, CP_EXECUTES, x->calls);
        table_set_int(t, CP_HOST_TOTAL_NS, x->host_total);
        if (x->linked)
            table_set_int(t, CP_GPU_TIME_NS, x->gpu), table_set_int(t, CP_KERNELS, x->kernels);
        if (!row) continue;
        if (row->op > 0 && row->op < CUDNN_OP_COUNT)
            table_set_text(t, CP_OP_KIND, op_names[row->op]);
        if (row->dtype >= 0) table_set_text(t, CP_DTYPE, dtype_name(row->dtype));
        table_set_text(t, CP_SOURCE,
                       sources[row->source >= 0 && row->source < 3 ? row->source : 0]);
        table_set_int(t, CP_FIRST_NS, row->first_ns);
        table_set_text(t, CP_DETAIL, row->detail);
    }
    static char note[96];
    if (shown < r->nby_plan) {
        snprintf(note, sizeof note, "%d more plans not shown (--top 0 shows all)",
                 r->nby_plan - shown);
        t->note = note;
    }
    return t;
}

/* precision_table's columns, in the order it declares them (asserted there). */
enum {
    CX_PHASE,
    CX_SHORT,
    CX_OP_KIND,
    CX_DTYPE,
    CX_CALLS,
    CX_GPU_TIME_NS,
    CX_GPU_PCT_OF_PHASE,
    CX_NCOLS
};

static struct table *precision_table(const struct run_phases *p, const struct cudnn_run *r)
{
    struct table *t = table_new("cudnn_precision", "cuDNN precision by phase");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "dtype", "Type", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "gpu_pct_of_phase", "GPU% of phase", COL_PCT);
    assert(t->ncols == CX_NCOLS);
    char buf[64];
    for (int i = 0; i < r->nprecision; i++) {
        const struct cudnn_group *x = &r->precision[i];
        table_row(t);
        table_set_text(t, CX_PHASE, phase_label(p, (int)x->key[0]));
        phase_short(p, (int)x->key[0], buf, sizeof buf);
        table_set_text(t, CX_SHORT, buf);
        table_set_text(t, CX_OP_KIND, op_names[x->key[1]]);
        table_set_text(t, CX_DTYPE, x->key[2] >= 0 ? dtype_name((int)x->key[2]) : "unknown");
        table_set_int(t, CX_CALLS, x->calls);
        if (x->linked) table_set_int(t, CX_GPU_TIME_NS, x->gpu);
        if (x->gpu_pct >= 0) table_set_num(t, CX_GPU_PCT_OF_PHASE, x->gpu_pct);
    }
    return t;
}

static struct table *findings_table(const struct cudnn_findings *f)
{
    struct table *t = table_new("cudnn_findings", "cuDNN findings");
    t->object = 1;
    static const struct {
        const char *key, *title;
        enum col_type type;
    } cols[] = {
        {"bn_training_at_inference", "BN training in no_grad/inference", COL_INT},
        {"algorithm_searches", "Algorithm searches (find)", COL_INT},
        {"algorithm_search_ns", "Search time", COL_NS},
        {"searched_shapes", "Shapes searched", COL_INT},
        {"heuristic_queries", "Heuristic queries (v7)", COL_INT},
        {"plan_builds", "Plans built", COL_INT},
        {"plan_build_ns", "Plan build time", COL_NS},
        {"plan_shapes", "Shapes with plans", COL_INT},
        {"max_plans_per_shape", "Plans per shape (max)", COL_INT},
        {"researched_shapes", "Shapes searched again after use", COL_INT},
        {"warm_up_end_ns", NULL, COL_NS},
        {"late_searches", "Searches after warm-up", COL_INT},
        {"late_shapes", "New shapes after warm-up", COL_INT},
        {"bn_training_finding", "Model in train() mode?", COL_TEXT},
        {"search_finding", "Benchmark mode", COL_TEXT},
        {"recurrence_finding", "Changing shapes", COL_TEXT},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        table_col(t, cols[i].key, cols[i].title, cols[i].type);
    table_row(t);
    int64_t v[] = {f->bn_train, f->searches, f->search_ns,   f->searched,  f->heuristics,
                   f->builds,   f->build_ns, f->plan_shapes, f->max_plans, f->researched,
                   f->warm_end, f->late,     f->late_shapes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (i != 10 || f->warm_end != INT64_MAX) table_set_int(t, (int)i, v[i]); /* 10: warm-up */
    char text[128], a[32];
    if (f->bn_train) {
        snprintf(text, sizeof text, "%lld batch-norm training calls at inference",
                 (long long)f->bn_train);
        table_set_text(t, 13, text);
    }
    if (f->searches || f->max_plans > 1) {
        fmt_ns(a, sizeof a, (double)(f->search_ns + f->build_ns));
        snprintf(text, sizeof text, "%lld searches, %lld plans for %d shapes, %s",
                 (long long)f->searches, (long long)f->builds, f->searched + f->plan_shapes, a);
        table_set_text(t, 14, text);
    }
    if (f->researched || f->late_shapes) {
        snprintf(text, sizeof text, "%d shapes searched again, %d new after warm-up", f->researched,
                 f->late_shapes);
        table_set_text(t, 15, text);
    }
    return t;
}

int section_cudnn(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                  struct table **out, int max)
{
    const struct cudnn_run *r = run_cudnn(db, p);
    int n = 0;
    if (n < max) out[n++] = calls_table(p, r);
    /* Every table whether or not cuDNN ran: JSON keys and CSV files do not depend on the run
     * (empty lists, a null findings object). */
    if (n < max) out[n++] = plans_table(r, o);
    if (n < max) out[n++] = precision_table(p, r);
    if (n < max) {
        out[n++] = findings_table(&r->findings);
        if (!r->n) out[n - 1]->nrows = 0;
    }
    return n;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int cudnn_build(const struct section_ctx *c, struct table **out, int max)
{
    return section_cudnn(c->db, c->p, c->o, out, max);
}

const struct report_section sec_cudnn = {
    .key = "cudnn", .build = cudnn_build, .shown_empty = 0, .compare = NULL};
