/*
 * advice_rules.c: the Advice section's rules (advice.h). Each looks for one known waste in the
 * run's own figures and appends a finding only when its evidence passes the threshold that
 * docs/report.md states.
 */
#include "advice.h"
#include "../base/json.h"
#include "sections.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* ---- evidence from kernel names ----------------------------------------------------------- */

static void names_add(struct names *k, const char *name, int64_t count, int64_t total, int64_t min,
                      int64_t max)
{
    char low[1024];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] + 32 : name[n]);
    low[n] = 0;
    enum opclass op;
    classify_kernel(name, NULL, &op);
    if (advice_has(low, "backward") || advice_has(low, "dgrad") || advice_has(low, "wgrad") ||
        advice_has(low, "bn_bw"))
        k->backward += count;
    else if (op == OP_GEMM || op == OP_CONV || op == OP_ATTENTION)
        k->forward += count;
    if (op == OP_LAYOUT) k->layout += count, k->layout_ns += total;
    if (op == OP_DROPOUT) k->dropout += count, k->dropout_ns += total;
    /* Statistics over the batch are computed in training mode only (ATen, cuDNN legacy). */
    if (advice_has(low, "batch_norm_collect_statistics") || advice_has(low, "bn_fw_tr"))
        k->bn_train += count, k->bn_train_ns += total;
    if (max < SHORT_NS)
        k->under_10us += count;
    else if (min >= SHORT_NS && max < 10 * SHORT_NS)
        k->to_100us += count;
    else if (min >= 10 * SHORT_NS)
        k->over_100us += count;
    else
        k->mixed += count;
}

static void names_load(sqlite3 *db, const struct run_phases *p, struct names *out)
{
    memset(out, 0, sizeof *out * REPORT_MAX_PHASES);
    int summary = db_int(db, "SELECT count(*) FROM kernel_summary", 0) > 0;
    sqlite3_stmt *st = db_prepare(
        db, summary ? "SELECT k.phase, s.value, k.count, k.total, k.min, k.max FROM"
                      " kernel_summary k JOIN strings s ON s.id = k.name_id WHERE k.phase >= 0"
                    : "SELECT k.phase, s.value, count(*), sum(k.dur), min(k.dur), max(k.dur)"
                      " FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1, 2");
    while (db_step(st)) {
        int id = sqlite3_column_int(st, 0);
        for (int i = 0; i < p->n; i++)
            if (p->v[i].id == id && sqlite3_column_text(st, 1))
                names_add(&out[i], (const char *)sqlite3_column_text(st, 1),
                          sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                          sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
    }
    sqlite3_finalize(st);
}

/* ---- rules -------------------------------------------------------------------------------- */

/* "now 2" when the run set the variable (meta config.NAME), else "default 16". */
static const char *setting(sqlite3 *db, const char *name, const char *fallback, char *out, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "config.%s", name);
    char *v = db_meta_text(db, key);
    snprintf(out, n, "%s %s", v ? "now" : "default", v ? v : fallback);
    free(v);
    return out;
}

static void rule_dropped(sqlite3 *db, struct advice_list *l)
{
    static const struct {
        const char *key, *one, *many;
    } counters[] = {
        {"dropped_events", "host event dropped", "host events dropped"},
        {"cupti_dropped_records", "CUPTI record dropped", "CUPTI records dropped"},
        {"cupti_buffers_refused", "CUPTI buffer request refused (the pool was empty)",
         "CUPTI buffer requests refused (the pool was empty)"},
        {"cupti_buffer_errors", "CUPTI buffer not read to the end",
         "CUPTI buffers not read to the end"},
        {"cupti_records_not_stored", "CUPTI record not stored", "CUPTI records not stored"},
        {"write_errors", "database write failed", "database writes failed"},
    };
    int64_t v[6] = {0}, any = 0;
    for (int i = 0; i < 6; i++) db_meta_int(db, counters[i].key, &v[i]), any |= v[i];
    if (!any) return;
    struct advice *a = advice_add(l, "records_dropped", NULL);
    if (!a) return;
    snprintf(a->finding, sizeof a->finding, "Records were lost:");
    for (int i = 0; i < 6; i++) {
        if (v[i])
            advice_append(a->finding, sizeof a->finding, " %lld %s,", (long long)v[i],
                          advice_plural(v[i], counters[i].one, counters[i].many));
        advice_ev_int(a, counters[i].key, v[i]);
    }
    advice_append(a->finding, sizeof a->finding,
                  " so the figures of this report undercount the run.");
    char s1[48], s2[48], s3[48];
    if (v[0]) {
        char where[256];
        drops_where(db, where, sizeof where);
        if (where[0])
            advice_append(a->finding, sizeof a->finding, " Events were dropped %s.", where);
        advice_append(a->try_, sizeof a->try_,
                      "raise INFPROF_BUFFER_MB (%s) or INFPROF_BUFFER_WAIT_MS; ",
                      setting(db, "INFPROF_BUFFER_MB", "256", s1, sizeof s1));
    }
    if (v[1] || v[2])
        advice_append(a->try_, sizeof a->try_,
                      "raise INFPROF_CUPTI_BUFFERS (%s) or INFPROF_CUPTI_BUFFER_KB (%s); ",
                      setting(db, "INFPROF_CUPTI_BUFFERS", "16", s2, sizeof s2),
                      setting(db, "INFPROF_CUPTI_BUFFER_KB", "4096", s3, sizeof s3));
    if (v[3])
        advice_append(a->try_, sizeof a->try_,
                      "run again (no setting recovers a buffer CUPTI could not read); ");
    if (v[4] || v[5])
        advice_append(a->try_, sizeof a->try_,
                      "write the database (INFPROF_OUTPUT) to a disk with free space; ");
    a->try_[strlen(a->try_) - 2] = 0;
}

/* The no_grad or inference_mode phase to hold a grad phase against: the lowest p50 latency,
 * the same autocast preferred; without iterations, the lowest peak memory. */
static const struct phase_info *best_no_grad(const struct run_phases *p, const struct phase_info *g)
{
    const struct phase_info *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++)
        for (int i = 0; i < p->n; i++) {
            const struct phase_info *c = &p->v[i];
            if (!strcmp(c->grad_mode, "grad") || (!pass && strcmp(c->autocast, g->autocast)))
                continue;
            if (!best)
                best = c;
            else if (c->iterations && (!best->iterations || c->lat_p50 < best->lat_p50))
                best = c;
            else if (!c->iterations && !best->iterations && c->has_memory &&
                     c->peak_alloc < best->peak_alloc)
                best = c;
        }
    return best;
}

static void rule_grad_mode(const struct run_phases *p, const struct phase_info *g,
                           const struct names *k, struct advice_list *l)
{
    /* "No backward kernel" is evidence only where kernels were recorded: without CUDA activity
     * a training loop would look the same. */
    if (strcmp(g->grad_mode, "grad") || k->backward || !g->has_kernels || !g->kernels) return;
    const struct phase_info *n = best_no_grad(p, g);
    /* Evidence of inference: iterations in grad mode, or forward work also done without grad. */
    if (!g->iterations && !(k->forward && n)) return;
    struct advice *a = advice_add(l, "grad_mode_in_inference", g);
    if (!a) return;
    char gs[32], ns[32], b1[32], b2[32], b3[32];
    phase_short_label(g, gs, sizeof gs);
    if (g->iterations)
        snprintf(a->finding, sizeof a->finding,
                 "%s ran %lld %s with autograd recording and no backward kernel", gs,
                 (long long)g->iterations, advice_plural(g->iterations, "iteration", "iterations"));
    else
        snprintf(a->finding, sizeof a->finding,
                 "%s launched %lld GEMM, convolution or attention %s with autograd"
                 " recording and no backward kernel",
                 gs, (long long)k->forward, advice_plural(k->forward, "kernel", "kernels"));
    advice_ev_int(a, "iterations", g->iterations);
    advice_ev_int(a, "forward_kernels", k->forward);
    advice_ev_int(a, "backward_kernels", k->backward);
    if (!n) {
        advice_append(a->finding, sizeof a->finding,
                      "; no no_grad or inference_mode phase ran to"
                      " compare with.");
    } else {
        phase_short_label(n, ns, sizeof ns);
        advice_ev_text(a, "compared_with", n->label);
        const char *sep = ":";
        if (g->iterations && n->iterations && n->lat_p50 > 0) {
            advice_append(a->finding, sizeof a->finding,
                          "%s p50 latency %s against %s in %s (%.2fx)", sep,
                          advice_ns_text(b1, sizeof b1, (double)g->lat_p50),
                          advice_ns_text(b2, sizeof b2, (double)n->lat_p50), ns,
                          (double)g->lat_p50 / (double)n->lat_p50);
            advice_ev_int(a, "latency_p50_ns", g->lat_p50);
            advice_ev_int(a, "compared_latency_p50_ns", n->lat_p50);
            advice_ev_num(a, "latency_ratio", (double)g->lat_p50 / (double)n->lat_p50);
            if (g->lat_p50 > n->lat_p50) a->saving_ns = (g->lat_p50 - n->lat_p50) * g->iterations;
            sep = ",";
        }
        if (g->has_memory && n->has_memory) {
            advice_append(a->finding, sizeof a->finding, "%s peak tensor memory %s against %s%s%s",
                          sep, advice_bytes_text(b1, sizeof b1, (double)g->peak_alloc),
                          advice_bytes_text(b2, sizeof b2, (double)n->peak_alloc),
                          *sep == ':' ? " in " : "", *sep == ':' ? ns : "");
            if (g->peak_alloc > n->peak_alloc) {
                advice_append(
                    a->finding, sizeof a->finding, " (%s more)",
                    advice_bytes_text(b3, sizeof b3, (double)(g->peak_alloc - n->peak_alloc)));
                a->saving_bytes = g->peak_alloc - n->peak_alloc;
            }
            advice_ev_int(a, "peak_allocated_bytes", g->peak_alloc);
            advice_ev_int(a, "compared_peak_allocated_bytes", n->peak_alloc);
            advice_ev_int(a, "peak_allocated_more_bytes", g->peak_alloc - n->peak_alloc);
            sep = ",";
        }
        advice_append(a->finding, sizeof a->finding, "%s",
                      *sep == ':' ? " (no figure to compare)." : ".");
    }
    snprintf(a->try_, sizeof a->try_,
             "run inference under a c10::InferenceMode guard or torch::NoGradGuard"
             " (torch.inference_mode() in Python)");
}

static void rule_train_mode(const struct phase_info *ph, const struct names *k,
                            const struct cudnn_findings *f, struct advice_list *l)
{
    if (!strcmp(ph->grad_mode, "grad")) return;
    int64_t calls = ph->id >= 0 && ph->id < REPORT_MAX_PHASES ? f->bn_train_by_phase[ph->id] : 0;
    if (!calls && !k->bn_train && !k->dropout) return;
    struct advice *a = advice_add(l, "train_mode_in_inference", ph);
    if (!a) return;
    char s[32], b1[32], b2[32];
    phase_short_label(ph, s, sizeof s);
    snprintf(a->finding, sizeof a->finding, "%s ran training-mode layers without grad:", s);
    const char *sep = "";
    if (calls || k->bn_train) {
        advice_append(a->finding, sizeof a->finding,
                      " batch-norm computing batch statistics (%lld cuDNN training %s, %lld"
                      " statistics %s, %s)",
                      (long long)calls, advice_plural(calls, "call", "calls"),
                      (long long)k->bn_train, advice_plural(k->bn_train, "kernel", "kernels"),
                      advice_ns_text(b1, sizeof b1, (double)k->bn_train_ns));
        sep = " and";
    }
    if (k->dropout) {
        advice_append(a->finding, sizeof a->finding, "%s %lld dropout %s (%s)", sep,
                      (long long)k->dropout, advice_plural(k->dropout, "kernel", "kernels"),
                      advice_ns_text(b2, sizeof b2, (double)k->dropout_ns));
        a->saving_ns = k->dropout_ns;
    }
    advice_append(a->finding, sizeof a->finding, ": the model is in train() mode.");
    advice_ev_int(a, "cudnn_bn_training_calls", calls);
    advice_ev_int(a, "bn_statistics_kernels", k->bn_train);
    advice_ev_int(a, "bn_statistics_kernel_ns", k->bn_train_ns);
    advice_ev_int(a, "dropout_kernels", k->dropout);
    advice_ev_int(a, "dropout_kernel_ns", k->dropout_ns);
    snprintf(a->try_, sizeof a->try_,
             "call module.eval() before inference (torch::jit::Module::eval(),"
             " torch::nn::Module::eval())");
}

static void rule_autocast(sqlite3 *db, const struct phase_info *ph, struct advice_list *l)
{
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
    sqlite3_stmt *st = db_prepare(db, "SELECT max(cuda_autocast) FROM phase_spans WHERE phase = ?");
    sqlite3_bind_int(st, 1, ph->id);
    int cuda = db_step(st) && sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
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

static void rule_layout(const struct phase_info *ph, const struct names *k, struct advice_list *l)
{
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

static void rule_launch_bound(const struct phase_info *ph, const struct names *k,
                              struct advice_list *l)
{
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

static void rule_cudnn(const struct cudnn_findings *f, struct advice_list *l)
{
    char b1[32];
    if (f->researched || f->late_shapes) {
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
    } else if (f->conv_computes && !f->searches && f->max_plans <= 1) {
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

/* The run's iterations as sorted, merged intervals; 0 when there are none. */
static int iteration_windows_load(sqlite3 *db, int64_t (**out)[2])
{
    int64_t(*v)[2] = NULL;
    int n = 0, cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, start + dur FROM iterations ORDER BY start");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (n && s <= v[n - 1][1]) {
            if (e > v[n - 1][1]) v[n - 1][1] = e;
            continue;
        }
        if (n == cap && !(v = realloc(v, sizeof *v * (size_t)(cap = cap ? cap * 2 : 64))))
            cli_fail("out of memory");
        v[n][0] = s, v[n][1] = e;
        n++;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

static int inside(int64_t (*v)[2], int n, int64_t t)
{
    int lo = 0, hi = n; /* the first interval that ends after t */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid][1] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo][0] <= t;
}

static void rule_pageable(sqlite3 *db, struct advice_list *l)
{
    /* Copies of the steady state only: loading weights once from pageable memory is the norm.
     * With iterations recorded, only copies that start inside one count. The host side of a
     * copy: the source of HtoD, HtoA, HtoH; the destination of DtoH, AtoH
     * (CUpti_ActivityMemcpyKind); 1 is CUPTI's pageable memory kind. */
    int64_t(*iv)[2];
    int niv = iteration_windows_load(db, &iv);
    sqlite3_stmt *st =
        db_prepare(db, "SELECT start, bytes, dur, copy_kind FROM memcpy WHERE (copy_kind IN"
                       " (1, 3, 9) AND src_kind = 1) OR (copy_kind IN (2, 4) AND dst_kind = 1)");
    int64_t v[6] = {0}; /* copies, bytes, ns, to the device, from it, outside iterations */
    while (db_step(st)) {
        if (niv && !inside(iv, niv, sqlite3_column_int64(st, 0))) {
            v[5]++;
            continue;
        }
        int kind = sqlite3_column_int(st, 3);
        v[0]++;
        v[1] += sqlite3_column_int64(st, 1);
        v[2] += sqlite3_column_int64(st, 2);
        v[3] += kind == 1 || kind == 3;
        v[4] += kind == 2 || kind == 4;
    }
    sqlite3_finalize(st);
    free(iv);
    int64_t busy =
        db_has_table(db, "phase_gpu") ? db_int(db, "SELECT sum(busy_ns) FROM phase_gpu", 0) : 0;
    if (busy <= 0)
        busy = db_int(db,
                      "SELECT (SELECT coalesce(sum(dur), 0) FROM kernels) +"
                      " (SELECT coalesce(sum(dur), 0) FROM memcpy)",
                      0);
    if (!v[0] || v[2] * 100 < PAGEABLE_PCT_MIN * busy) return;
    struct advice *a = advice_add(l, "pageable_copies", NULL);
    if (!a) return;
    char b1[32], b2[32], b3[32];
    snprintf(a->finding, sizeof a->finding,
             "%lld %s%s (%lld to the GPU, %lld from it; %s, %s) went through pageable host"
             " memory, %.1f%% of the GPU's busy time (%s): each is staged through a driver"
             " buffer and blocks the calling thread.",
             (long long)v[0], advice_plural(v[0], "copy", "copies"),
             niv ? " during iterations" : "", (long long)v[3], (long long)v[4],
             advice_bytes_text(b1, sizeof b1, (double)v[1]),
             advice_ns_text(b2, sizeof b2, (double)v[2]), advice_pct(v[2], busy),
             advice_ns_text(b3, sizeof b3, (double)busy));
    advice_ev_int(a, "copies", v[0]);
    advice_ev_int(a, "to_device", v[3]);
    advice_ev_int(a, "from_device", v[4]);
    advice_ev_int(a, "bytes", v[1]);
    advice_ev_int(a, "copy_ns", v[2]);
    advice_ev_int(a, "copies_outside_iterations", v[5]);
    advice_ev_int(a, "gpu_busy_ns", busy);
    advice_ev_num(a, "copy_pct_of_busy", advice_pct(v[2], busy));
    snprintf(a->try_, sizeof a->try_,
             "pin the host tensors (tensor.pin_memory(), or"
             " at::TensorOptions().pinned_memory(true)) and copy with non_blocking=true");
}

/* cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD, ...: every copy function without "Async". */
static int sync_copy(const char *name)
{
    return (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) &&
           !advice_has(name, "Async");
}

static void rule_sync_copies(sqlite3 *db, struct advice_list *l)
{
    /* Calls: the API records' count, or at the default settings (no API records, count 0) the
     * calls the issue callback saw issue a copy (launches); host time only from API records. */
    int summary = db_int(db, "SELECT count(*) FROM api_summary", 0) > 0;
    sqlite3_stmt *st = db_prepare(
        db, summary ? "SELECT s.value, max(coalesce(a.count, 0), coalesce(a.launches, 0)),"
                      " CASE WHEN a.count > 0 THEN a.total END FROM api_summary a JOIN strings s"
                      " ON s.id = a.name_id ORDER BY 2 DESC, s.value"
                    : "SELECT s.value, count(*), sum(a.dur) FROM cuda_api a JOIN strings s"
                      " ON s.id = a.name_id GROUP BY a.name_id ORDER BY 2 DESC, 1");
    char by[512] = "", names[256] = "";
    int64_t calls = 0, total = 0;
    int more = 0, timed = 0;
    while (db_step(st)) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || !sync_copy(name)) continue;
        int64_t n = sqlite3_column_int64(st, 1);
        calls += n;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) timed = 1;
        total += sqlite3_column_int64(st, 2);
        size_t len;
        char *q = json_quote(name, strlen(name), &len);
        if (!q) cli_fail("out of memory");
        /* A name too long for the room is left out of both lists: "calls" still counts it. */
        if (strlen(by) + len + 32 < sizeof by && strlen(names) + strlen(name) + 40 < sizeof names) {
            advice_append(by, sizeof by, "%s%s: %lld", by[0] ? ", " : "", q, (long long)n);
            advice_append(names, sizeof names, "%s%s %lld", names[0] ? ", " : "", name,
                          (long long)n);
        } else {
            more = 1;
        }
        free(q);
    }
    sqlite3_finalize(st);
    if (calls < SYNC_COPIES_MIN) return;
    if (more) advice_append(names, sizeof names, "%s...", names[0] ? ", " : "");
    struct advice *a = advice_add(l, "synchronous_copies", NULL);
    if (!a) return;
    char b1[32];
    char host[96];
    if (timed)
        snprintf(host, sizeof host, "%s of host time in all",
                 advice_ns_text(b1, sizeof b1, (double)total));
    else
        snprintf(host, sizeof host,
                 "their host time was not recorded (INFPROF_CUDA_API=1 records it)");
    snprintf(a->finding, sizeof a->finding,
             "The program called synchronous copy functions %lld times (%s), %s: each returns only"
             " once the copy, and the GPU work queued before it, is done.",
             (long long)calls, names, host);
    advice_ev_int(a, "calls", calls);
    if (timed)
        advice_ev_int(a, "host_ns", total);
    else
        advice_append(a->evidence, sizeof a->evidence, ", \"host_ns\": null");
    advice_append(a->evidence, sizeof a->evidence, ", \"by_function\": {%s}", by);
    snprintf(a->try_, sizeof a->try_,
             "copy with cudaMemcpyAsync on the work's stream from pinned memory"
             " (tensor.to(device, /*non_blocking=*/true)) and synchronise once per iteration");
}

void advice_find(sqlite3 *db, const struct run_phases *p, struct advice_list *l)
{
    /* A DataLoader worker makes batches: what it lost is said, no inference rule applies. */
    if (p->dataloader_worker) {
        rule_dropped(db, l);
        return;
    }
    struct names k[REPORT_MAX_PHASES];
    names_load(db, p, k);
    struct cudnn_findings f;
    cudnn_findings_load(db, p, &f);
    rule_dropped(db, l);
    for (int i = 0; i < p->n; i++) {
        rule_grad_mode(p, &p->v[i], &k[i], l);
        rule_train_mode(&p->v[i], &k[i], &f, l);
        rule_autocast(db, &p->v[i], l);
        rule_layout(&p->v[i], &k[i], l);
        rule_launch_bound(&p->v[i], &k[i], l);
    }
    rule_input_bound(p, l);
    rule_cudnn(&f, l);
    rule_pageable(db, l);
    rule_sync_copies(db, l);
    /* A finding about a phase whose figures lost events says so (suspect.c). */
    for (int i = 0; i < l->n; i++) {
        struct advice *a = &l->v[i];
        if (!a->phase || !a->phase->suspect) continue;
        advice_append(a->finding, sizeof a->finding, " Suspect: %s (events were lost).",
                      a->phase->suspect_why);
        advice_ev_text(a, "suspect", a->phase->suspect_why);
    }
}
