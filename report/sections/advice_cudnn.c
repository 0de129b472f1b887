/*
 * advice_cudnn.c: the advice rules cudnn_search_repeats and cudnn_benchmark_off (docs/report.md,
 * "Advice"): cuDNN still searching algorithms after warm-up (the shapes change), or never
 * searching at all with fixed shapes (benchmark mode off). At most one of the two fires.
 */
#include "advice.h"

#include <stdio.h>

/* which: 0 cudnn_search_repeats, 1 cudnn_benchmark_off (only where the first did not fire). */
static void rule_cudnn(const struct cudnn_findings *f, int which, struct advice_list *l)
{
    char b1[32];
    if (f->researched || f->late_shapes) {
        if (which != 0) return;
        struct advice *a = advice_add(l, "cudnn_search_repeats", NULL);
        if (!a) return;
        snprintf(a->finding, sizeof a->finding,
                 "cuDNN kept searching convolution algorithms after warm-up: %lld %s after"
                 " it (%s), %d %s searched again after use, %d new %s: the input shapes change.",
                 (long long)f->late,
                 advice_plural(f->late, "search or plan build", "searches or plan builds"),
                 advice_ns_text(b1, sizeof b1, (double)f->late_ns), f->researched,
                 advice_plural(f->researched, "shape", "shapes"), f->late_shapes,
                 advice_plural(f->late_shapes, "shape", "shapes"));
        advice_ev_int(a, "searches", f->searches);
        advice_ev_int(a, "search_ns", f->search_ns);
        advice_ev_int(a, "plan_builds", f->builds);
        advice_ev_int(a, "plan_build_ns", f->build_ns);
        advice_ev_int(a, "late_searches", f->late);
        advice_ev_int(a, "late_search_ns", f->late_ns);
        advice_ev_int(a, "researched_shapes", f->researched);
        advice_ev_int(a, "late_shapes", f->late_shapes);
        a->saving_ns = f->late_ns;
        snprintf(a->try_, sizeof a->try_,
                 "keep input shapes fixed (pad or bucket batch and image sizes); if they must"
                 " vary, turn benchmark mode off: at::globalContext().setBenchmarkCuDNN(false)"
                 " (torch.backends.cudnn.benchmark = False)");
    } else if (which == 1 && f->conv_computes && !f->searches && f->max_plans <= 1) {
        struct advice *a = advice_add(l, "cudnn_benchmark_off", NULL);
        if (!a) return;
        snprintf(a->finding, sizeof a->finding,
                 "cuDNN ran %lld %s with algorithms chosen by heuristics (%lld heuristic %s,"
                 " %s) and never searched for the fastest: benchmark mode is off.",
                 (long long)f->conv_computes,
                 advice_plural(f->conv_computes, "convolution", "convolutions"),
                 (long long)f->heuristics, advice_plural(f->heuristics, "query", "queries"),
                 f->max_plans ? "one execution plan per shape" : "no execution plan built");
        advice_ev_int(a, "conv_executions", f->conv_computes);
        advice_ev_int(a, "searches", f->searches);
        advice_ev_int(a, "heuristic_queries", f->heuristics);
        advice_ev_int(a, "max_plans_per_shape", f->max_plans);
        snprintf(a->try_, sizeof a->try_,
                 "with fixed input shapes, turn benchmark mode on:"
                 " at::globalContext().setBenchmarkCuDNN(true) (torch.backends.cudnn.benchmark"
                 " = True): the first call of a shape searches, later calls run the fastest");
    }
}

static void run_search_repeats(const struct advice_ctx *c, const struct phase_info *ph,
                               struct advice_list *l)
{
    (void)ph;
    rule_cudnn(c->f, 0, l);
}

static void run_benchmark_off(const struct advice_ctx *c, const struct phase_info *ph,
                              struct advice_list *l)
{
    (void)ph;
    rule_cudnn(c->f, 1, l);
}

const struct advice_rule advice_rule_cudnn_search = {
    "cudnn_search_repeats", 70, ADVICE_AFTER, run_search_repeats,
    "cuDNN searched algorithms again for a shape it had used, or for a new shape after warm-up"};
const struct advice_rule advice_rule_cudnn_benchmark = {
    "cudnn_benchmark_off", 100, ADVICE_AFTER, run_benchmark_off,
    "cuDNN ran convolutions and never searched, and no shape came after warm-up"};
