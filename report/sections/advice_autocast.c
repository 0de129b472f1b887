/*
 * advice_autocast.c: the advice rule autocast_fp32_compute (docs/report.md, "Advice"): an autocast
 * phase whose GEMM and convolution kernels still ran mostly in fp32 or tf32, autocast not doing
 * what the program asked of it. Ranked with the settings that make answers wrong, before speed.
 */
#include "advice.h"

#include <stdio.h>
#include <string.h>

/* Thresholds, as docs/report.md states them. */
#define FP32_PCT_MIN 50 /* autocast_fp32_compute: fp32/tf32 share above this */

static void rule_autocast(const struct advice_ctx *c, const struct phase_info *ph,
                          struct advice_list *l)
{
    (void)c;
    if (!strcmp(ph->autocast, "off")) return;
    int64_t by[PREC_COUNT] = {0}, known = 0;
    for (int prec = 0; prec < PREC_COUNT; prec++)
        by[prec] = ph->mix[OP_GEMM][prec] + ph->mix[OP_CONV][prec];
    for (int prec = 0; prec < PREC_COUNT; prec++)
        if (prec != PREC_UNKNOWN) known += by[prec];
    int64_t fp32 = by[PREC_FP32] + by[PREC_TF32];
    if (!known || fp32 * 100 <= FP32_PCT_MIN * known) return;
    struct advice *a = advice_add(l, "autocast_fp32_compute", ph);
    if (!a) return;
    int cuda = ph->cuda_autocast;
    char s[32], b1[32], b2[32];
    phase_short_label(ph, s, sizeof s);
    snprintf(a->finding, sizeof a->finding,
             "%s has autocast %s on, yet %.1f%% of its GEMM and convolution time with a known"
             " type (%s of %s) ran in fp32 or tf32%s",
             s, ph->autocast, advice_pct(fp32, known), advice_ns_text(b1, sizeof b1, (double)fp32),
             advice_ns_text(b2, sizeof b2, (double)known),
             cuda ? "." : ": autocast is on for the CPU only, not for CUDA.");
    advice_ev_text(a, "autocast", ph->autocast);
    advice_ev_int(a, "cuda_autocast", cuda);
    advice_ev_int(a, "fp32_ns", by[PREC_FP32]);
    advice_ev_int(a, "tf32_ns", by[PREC_TF32]);
    advice_ev_int(a, "fp16_ns", by[PREC_FP16]);
    advice_ev_int(a, "bf16_ns", by[PREC_BF16]);
    advice_ev_int(a, "known_ns", known);
    advice_ev_int(a, "unknown_ns", by[PREC_UNKNOWN]);
    advice_ev_num(a, "fp32_share_pct", advice_pct(fp32, known));
    if (!cuda)
        snprintf(a->try_, sizeof a->try_,
                 "enable autocast for CUDA: at::autocast::set_autocast_enabled(at::kCUDA, true)"
                 " (set_enabled(true) before 2.4; torch.autocast(\"cuda\") in Python)");
    else
        snprintf(a->try_, sizeof a->try_,
                 "find the ops autocast leaves in fp32 (custom ops, explicit .to(at::kFloat),"
                 " a model traced in fp32) and cast their inputs, or convert the model with"
                 " .to(at::k%s)",
                 strcmp(ph->autocast, "bf16") ? "Half" : "BFloat16");
}

const struct advice_rule advice_rule_autocast = {"autocast_fp32_compute", 35, ADVICE_PHASE,
                                                 rule_autocast,
                                                 "an autocast phase ran over 50% of its GEMM and "
                                                 "convolution time of known type in fp32 or tf32"};
