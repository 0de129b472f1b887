/*
 * advice_input.c: the advice rule input_bound (docs/advice.md): a series whose iterations wait
 * on the host between them, input preparation, data loading or post-processing, for a large
 * share of its wall time while the GPU idles through it (report/run/between.c). On a run with no
 * kernels recorded (a CPU model) the time between is the host's alone and the rule says so. The
 * part spent waiting for a DataLoader (input_waits) is named.
 */
#include "advice.h"
#include "../run/detect.h"
#include "../run/requests.h"

#include <stdio.h>
#include <string.h>

#define INPUT_MIN_GAPS  4      /* gaps measured */
#define INPUT_SHARE_PCT 20.0   /* of the series' wall time spent between iterations */
#define INPUT_MIN_NS    100000 /* p50 gap: shorter is the loop's own overhead */
#define INPUT_IDLE_PCT  50.0   /* of the time between with no kernel of the phase running */

/* What the run says of a GPU: 1 kernels were recorded, 0 none although CUPTI was on or CUDA was
 * never initialised (a CPU model), -1 unknown (CUPTI passive or off by a setting). */
static int run_gpu(const struct run_phases *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i].kernels > 0) return 1;
    if (!strncmp(p->cupti_status, "on", 2) || strstr(p->cupti_status, "did not initialise CUDA"))
        return 0;
    return -1;
}

/* The series is served from several threads at once (report/run/requests.c): a server's. */
static int served(const struct advice_ctx *c, int series)
{
    const struct run_requests *r = run_requests(c->db, c->p);
    for (int i = 0; i < r->n; i++)
        if (r->v[i].series == series) return 1;
    return 0;
}

static void run_input_bound(const struct advice_ctx *c, const struct phase_info *unused,
                            struct advice_list *l)
{
    (void)unused;
    const struct run_phases *p = c->p;
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        const struct phase_info *ph = &p->v[s->phase];
        double share = series_between_pct(s);
        if (s->gaps < INPUT_MIN_GAPS || !series_between_waits(s, INPUT_SHARE_PCT, INPUT_MIN_NS))
            continue;
        if (served(c, i)) continue; /* a server's threads wait for requests, not for input */
        int gpu = s->gap_gpu_busy >= 0;
        double idle = gpu ? advice_pct(s->gap_total - s->gap_gpu_busy, s->gap_total) : -1;
        if (gpu && idle < INPUT_IDLE_PCT) continue;
        struct advice *a = advice_add(l, "input_bound", ph);
        if (!a) return;
        char b1[32], b2[32], b3[32], name[400], data[96] = "";
        advice_series_name(p, s, name, sizeof name);
        if (s->gap_data > 0)
            snprintf(data, sizeof data,
                     ", %s of it (%.0f%%) waiting for the DataLoader's next batch",
                     advice_ns_text(b3, sizeof b3, (double)s->gap_data),
                     advice_pct(s->gap_data, s->gap_total));
        snprintf(a->finding, sizeof a->finding,
                 "%s spent %.0f%% of its wall time between iterations (%s after each on"
                 " average, %s in all over %lld gaps%s)%s",
                 name, share, advice_ns_text(b1, sizeof b1, (double)s->gap_total / (double)s->gaps),
                 advice_ns_text(b2, sizeof b2, (double)s->gap_total), (long long)s->gaps, data,
                 gpu ? ", the GPU idle through most of it"
                     : "; no GPU work was recorded: the host's own time outside the model");
        if (s->gap_p50 < INPUT_MIN_NS) {
            char b4[32];
            advice_append(a->finding, sizeof a->finding,
                          "; most gaps were short (p50 %s): the time is in the long ones",
                          advice_ns_text(b4, sizeof b4, (double)s->gap_p50));
        }
        if (gpu) advice_append(a->finding, sizeof a->finding, " (%.0f%% idle)", idle);
        /* A host-detected iteration runs from its forward's first allocation to its last: the
         * forward's own work before the first (Python, a gc pass every 25th call: 22% of a
         * fresh-eyes check's loop) is between iterations too, and no loader fixes that. */
        if (ph->detected.period && ph->detected.from != DETECT_KERNELS)
            advice_append(a->finding, sizeof a->finding,
                          " (the iterations were detected, each from its forward's first %s to"
                          " its last: the forward's own host work before or after those, Python"
                          " code or garbage collection in it, is counted here too; a mark around"
                          " the forward tells them apart)",
                          ph->detected.from == DETECT_OPERATORS ? "operator" : "allocation");
        advice_append(a->finding, sizeof a->finding, ".");
        if (s->gap_data >= 0) advice_ev_int(a, "data_loading_ns", s->gap_data);
        advice_ev_text(a, "series", s->name);
        advice_ev_int(a, "gaps", s->gaps);
        advice_ev_int(a, "between_p50_ns", s->gap_p50);
        advice_ev_int(a, "between_total_ns", s->gap_total);
        advice_ev_num(a, "between_pct", share);
        if (gpu) advice_ev_num(a, "gpu_idle_between_pct", idle);
        a->saving_ns = s->gap_total;
        /* GPU advice only where a GPU is used (or may be: CUPTI not recording). */
        int on_gpu = gpu ? 1 : run_gpu(p);
        if (on_gpu == 1)
            snprintf(a->try_, sizeof a->try_,
                     "prepare the next input while the model runs: DataLoader workers"
                     " (num_workers > 0, or more of them where it has some) and"
                     " pin_memory=True, copies with non_blocking=True, post-processing"
                     " off the critical path (a second thread or stream); profile the host code"
                     " between iterations first");
        else
            snprintf(a->try_, sizeof a->try_,
                     "prepare the next input while the model runs: DataLoader workers"
                     " (num_workers > 0, or more of them where it has some: batches made in"
                     " worker processes), post-processing off the critical"
                     " path (a second thread); profile the host code between iterations first%s",
                     on_gpu < 0 ? " (with a GPU: pin_memory=True and non_blocking=True copies)"
                                : "");
    }
}

const struct advice_rule advice_rule_input_bound = {
    "input_bound", 40, ADVICE_AFTER, run_input_bound,
    "a series spent at least 20% of its wall time between iterations (at least 4 gaps of p50"
    " 100 us or more, or with 20% of its wall time in the gaps past their median, gaps of 10 us"
    " and 4 times their median on average: waits that come in bursts) with the GPU idle through"
    " at least half of it; not a series served from several threads at once (a server waits for"
    " requests)"};
