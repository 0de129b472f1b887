/*
 * advice_gpu.c: the advice rules layout_conversions and launch_bound (docs/report.md, "Advice"):
 * GPU time spent converting tensor layouts around convolutions, and a GPU idle between short
 * kernels the host cannot launch fast enough.
 */
#include "advice.h"

#include <stdio.h>
#include <string.h>

/* Thresholds, as docs/report.md states them. */
#define BUSY_PCT_MAX   50  /* launch_bound: GPU busy below this share of the window */
#define LAUNCH_MIN     100 /* launch_bound: kernels in the phase, at least */
#define SHORT_PCT_MIN  50  /* launch_bound: launches of short kernels, at least */
#define LAYOUT_PCT_MIN 5   /* layout_conversions: share of the phase's convolution time */
#define LAYOUT_MIN     2   /* layout_conversions: conversion kernels, at least */

static void rule_layout(const struct advice_ctx *c, const struct phase_info *ph,
                        struct advice_list *l)
{
    const struct names *k = &c->k[ph - c->p->v];
    int64_t conv = 0;
    for (int prec = 0; prec < PREC_COUNT; prec++) conv += ph->mix[OP_CONV][prec];
    if (!conv || k->layout < LAYOUT_MIN || k->layout_ns * 100 < LAYOUT_PCT_MIN * conv) return;
    struct advice *a = advice_add(l, "layout_conversions", ph);
    if (!a) return;
    char s[32], b1[32], b2[32];
    phase_short_label(ph, s, sizeof s);
    snprintf(a->finding, sizeof a->finding,
             "%s spent %s in %lld NCHW/NHWC conversion kernels, %.1f%% of its convolution time"
             " (%s): the tensors' memory format is not the one the convolutions run in.",
             s, advice_ns_text(b1, sizeof b1, (double)k->layout_ns), (long long)k->layout,
             advice_pct(k->layout_ns, conv), advice_ns_text(b2, sizeof b2, (double)conv));
    advice_ev_int(a, "conversion_kernels", k->layout);
    advice_ev_int(a, "conversion_ns", k->layout_ns);
    advice_ev_int(a, "conv_ns", conv);
    advice_ev_num(a, "conversion_pct_of_conv", advice_pct(k->layout_ns, conv));
    a->saving_ns = k->layout_ns;
    snprintf(a->try_, sizeof a->try_,
             "use channels_last for the model and its inputs:"
             " x.contiguous(at::MemoryFormat::ChannelsLast) (model.to(memory_format="
             "torch.channels_last) in Python)");
}

static void rule_launch_bound(const struct advice_ctx *c, const struct phase_info *ph,
                              struct advice_list *l)
{
    const struct names *k = &c->k[ph - c->p->v];
    /* The window: the phase's iterations when it has some (a phase also holds model loading and
     * other idle host work), else its wall time. Its GPU work may spill out of the iterations:
     * that overstates the busy share, so the rule errs towards staying quiet. */
    int64_t window = ph->iterations ? ph->busy : ph->wall, busy = ph->gpu_busy;
    /* The steady iterations when there are some (steady.c): the warm-up apart, the work of
     * the iterations inside their windows, the figure the phase table's GPU busy% shows. */
    int steady = ph->has_steady_gpu && ph->steady_window > 0;
    if (steady) window = ph->steady_window, busy = ph->steady_gpu_busy;
    if (!ph->has_busy || window <= 0 || ph->kernels < LAUNCH_MIN) return;
    if (busy * 100 >= BUSY_PCT_MAX * window) return;
    if (k->under_10us * 100 < SHORT_PCT_MIN * ph->kernels) return;
    struct advice *a = advice_add(l, "launch_bound", ph);
    if (!a) return;
    char s[32], b1[32], b2[32];
    phase_short_label(ph, s, sizeof s);
    double avg = (double)ph->gpu_time / (double)ph->kernels;
    snprintf(a->finding, sizeof a->finding,
             "%s kept the GPU busy %.1f%% of its %s%s; %lld of its %lld kernels (%.1f%%) ran under"
             " 10us every time (average kernel %s): launching, not GPU work, sets the pace.",
             s, advice_pct(busy, window), advice_ns_text(b1, sizeof b1, (double)window),
             steady           ? " of steady iterations"
             : ph->iterations ? " of iterations"
                              : "",
             (long long)k->under_10us, (long long)ph->kernels,
             advice_pct(k->under_10us, ph->kernels), advice_ns_text(b2, sizeof b2, avg));
    advice_ev_text(a, "window",
                   steady           ? "steady iterations"
                   : ph->iterations ? "iterations"
                                    : "phase");
    advice_ev_int(a, "window_ns", window);
    advice_ev_int(a, "gpu_busy_ns", busy);
    advice_ev_num(a, "gpu_busy_pct", advice_pct(busy, window));
    advice_ev_int(a, "kernels", ph->kernels);
    advice_ev_int(a, "kernel_ns", ph->gpu_time);
    advice_ev_num(a, "avg_kernel_ns", avg);
    advice_ev_int(a, "kernels_under_10us", k->under_10us);
    advice_ev_num(a, "kernels_under_10us_pct", advice_pct(k->under_10us, ph->kernels));
    advice_ev_int(a, "kernels_10us_to_100us", k->to_100us);
    advice_ev_int(a, "kernels_over_100us", k->over_100us);
    advice_ev_int(a, "kernels_mixed", k->mixed);
    snprintf(a->try_, sizeof a->try_,
             "replay the steady-state step as a CUDA graph (at::cuda::CUDAGraph) or compile it"
             " ahead of time (AOTInductor; torch.compile mode=\"reduce-overhead\"); a larger"
             " batch also helps");
}

const struct advice_rule advice_rule_layout = {
    "layout_conversions", 60, ADVICE_PHASE, rule_layout,
    "a phase ran at least 2 NCHW/NHWC conversion kernels taking at least 5% of its convolution "
    "time"};
const struct advice_rule advice_rule_launch_bound = {
    "launch_bound", 50, ADVICE_PHASE, rule_launch_bound,
    "a phase of at least 100 kernels kept the GPU busy under 50% of its window, at least 50% of "
    "its launches of kernels always under 10 us"};
