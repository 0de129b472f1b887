/*
 * sec_phases.c: the phase comparison, the table the inference guides print with illustrative
 * numbers and infprof prints measured: per phase (grad mode x autocast) iterations, throughput,
 * latency, kernels, GPU time, peak memory and the measured precision mix; against a baseline
 * phase the speed-up with its 95% band and verdict, and the memory saved; the warm-up of each
 * phase apart; inference_mode against no_grad at each autocast setting. Its first-screen lines
 * are in sec_phases_lines.c. Definitions: docs/report.md.
 */
#include "sections.h"
#include "../run/detect.h"
#include "../../profiler/phase.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {"cpu": 123, "cuda:0": 456} */
static void device_json(const struct run_devices *d, const int64_t *v, uint32_t held, char *out,
                        size_t n, int reserved)
{
    size_t o = (size_t)snprintf(out, n, "{");
    for (int k = 0; k < d->n && o + 48 < n; k++) {
        char name[32];
        device_name(d->type[k], d->index[k], name, sizeof name);
        /* The CPU allocator keeps no reserve, and a device no thread of the phase allocates on
         * has no peak in it: null, not 0. */
        if ((reserved && d->type[k] == 0) || !(held & (1u << k)))
            o += (size_t)snprintf(out + o, n - o, "%s\"%s\": null", k ? ", " : "", name);
        else
            o += (size_t)snprintf(out + o, n - o, "%s\"%s\": %lld", k ? ", " : "", name,
                                  (long long)v[k]);
    }
    snprintf(out + o, n - o, "}");
}

static int64_t model_ns(const struct phase_info *ph)
{
    int64_t w = 0;
    for (int prec = 0; prec < PREC_COUNT; prec++)
        w += ph->mix[OP_GEMM][prec] + ph->mix[OP_CONV][prec];
    return w;
}

int phase_ran_model(const struct run_phases *p, const struct phase_info *ph)
{
    if (ph->transient) return 0;
    if (ph->nsteady > 0) return 1;
    if (ph->iterations) return 0;
    int64_t most = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->v[i].nsteady > 0) return 0; /* others have iterations, this one none */
        int64_t w = model_ns(&p->v[i]);
        if (w > most) most = w;
    }
    return most > 0 && model_ns(ph) * 10 >= most;
}

/* The phase every other is held against: --baseline, else the first phase that ran the model
 * (phase_ran_model), grad/off when it did. Never a phase that only loaded the model. */
const struct phase_info *baseline_of(const struct run_phases *p, const char *want)
{
    if (want) return &p->v[phases_find(p, want, "--baseline")];
    const struct phase_info *first = NULL;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!phase_ran_model(p, ph)) continue;
        if (ph->id == 1 + 3 * IP_GRAD + IP_AUTOCAST_OFF) return ph; /* phase.h's fixed ids */
        if (!first) first = ph;
    }
    if (first) return first;
    for (int i = 0; i < p->n; i++)
        if (!p->v[i].transient) return &p->v[i];
    return p->n ? &p->v[0] : NULL;
}

/* Steady-state iterations per second: the inverse of their mean latency. */
static double throughput(const struct phase_info *ph)
{
    return ph->nsteady && ph->lat_mean > 0 ? 1e9 / (double)ph->lat_mean : 0;
}

/* The operations autocast is meant to move: the Precision column and precision_mix are theirs. */
static int compute_op(int op)
{
    return op == OP_GEMM || op == OP_CONV || op == OP_ATTENTION;
}

static int64_t kernel_ns(const struct phase_info *ph, enum precision *top)
{
    int64_t total = 0, best = -1;
    for (int prec = 0; prec < PREC_COUNT; prec++) {
        int64_t sum = 0;
        for (int op = 0; op < OP_COUNT; op++)
            if (compute_op(op)) sum += ph->mix[op][prec];
        total += sum;
        if (top && sum > best) best = sum, *top = (enum precision)prec;
    }
    return total;
}

/* "bf16 82% fp32 18%": the classes with at least 1% of the phase's kernel time. */
static void mix_text(const struct phase_info *ph, char *out, size_t n)
{
    int64_t total = kernel_ns(ph, NULL);
    size_t o = 0;
    out[0] = 0;
    if (!total) return;
    int used[PREC_COUNT] = {0};
    for (int round = 0; round < 2; round++) {
        int best = -1;
        int64_t best_ns = 0;
        for (int prec = 0; prec < PREC_COUNT; prec++) {
            int64_t sum = 0;
            for (int op = 0; op < OP_COUNT; op++)
                if (compute_op(op)) sum += ph->mix[op][prec];
            if (!used[prec] && sum > best_ns) best = prec, best_ns = sum;
        }
        if (best < 0 || best_ns * 100 < total) break;
        used[best] = 1;
        o += (size_t)snprintf(out + o, n - o, "%s%s %.0f%%", o ? " " : "",
                              precision_name((enum precision)best),
                              100.0 * (double)best_ns / (double)total);
    }
}

/* {"bf16": 82, "fp32": 18}: percentages, as every share in the report */
static void mix_json(const struct phase_info *ph, char *out, size_t n)
{
    int64_t total = kernel_ns(ph, NULL);
    size_t o = (size_t)snprintf(out, n, "{");
    for (int prec = 0; total && prec < PREC_COUNT; prec++) {
        int64_t sum = 0;
        for (int op = 0; op < OP_COUNT; op++)
            if (compute_op(op)) sum += ph->mix[op][prec];
        if (sum)
            o += (size_t)snprintf(out + o, n - o, "%s\"%s\": %.6g", o > 1 ? ", " : "",
                                  precision_name((enum precision)prec),
                                  100.0 * (double)sum / (double)total);
    }
    snprintf(out + o, n - o, "}");
}

enum {
    C_SHORT,
    C_LABEL,
    C_GRAD,
    C_AUTOCAST,
    C_START,
    C_END,
    C_WALL,
    C_TRANSIENT,
    C_ITERS,
    C_STEADY,
    C_WARM,
    C_WARM_NS,
    C_WARM_CAUSE,
    C_BASIS,
    C_SOURCE,
    C_TPUT,
    C_ITEMS,
    C_P50,
    C_P95,
    C_P99,
    C_MEAN,
    C_HOST_P50,
    C_ALL_P50,
    C_KERNELS,
    C_GPU,
    C_BUSY,
    C_BUSY_PCT,
    C_ST_KERNELS,
    C_ST_GPU,
    C_ST_BUSY,
    C_ST_WINDOW,
    C_ST_BUSY_PCT,
    C_BUSY_TEXT,
    C_DEVICE,
    C_ALLOC,
    C_RSRVD,
    C_ALLOC_DEV,
    C_RSRVD_DEV,
    C_MIX_TEXT,
    C_MIX,
    C_TPUT_RATIO,
    C_RATIO_LO,
    C_RATIO_HI,
    C_VERDICT,
    C_BAND,
    C_LAT_RATIO,
    C_SAVED,
    C_SAVED_PCT,
    C_BASE,
    C_SUSPECT,
    C_CAPTURED,
    C_SERIES,
    C_SHIFT_BEFORE,
    C_SHIFT_AFTER,
    C_COUNT
};

static void phase_columns(struct table *t)
{
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    table_col(t, "grad_mode", NULL, COL_TEXT);
    table_col(t, "autocast", NULL, COL_TEXT);
    table_col(t, "start_ns", NULL, COL_NS);
    table_col(t, "end_ns", NULL, COL_NS);
    table_col(t, "wall_ns", NULL, COL_NS);
    table_col(t, "transient", NULL, COL_INT);
    table_col(t, "iterations", NULL, COL_INT);
    table_col(t, "steady_iterations", "Iters", COL_INT);
    table_col(t, "warmup_iterations", "Warm-up", COL_INT);
    table_col(t, "warmup_ns", "Time", COL_NS);
    table_col(t, "warmup_cause", "Likely cause", COL_TEXT);
    table_col(t, "latency_basis", NULL, COL_TEXT);
    table_col(t, "iteration_source", NULL, COL_TEXT);
    table_col(t, "throughput_per_s", "Iter/s", COL_RATE);
    table_col(t, "items_per_s", NULL, COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "latency_p99_ns", NULL, COL_NS);
    table_col(t, "latency_mean_ns", NULL, COL_NS);
    table_col(t, "host_p50_ns", "Host p50", COL_NS);
    table_col(t, "latency_all_p50_ns", NULL, COL_NS);
    table_col(t, "kernels", "Kernels", COL_INT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    table_col(t, "gpu_busy_ns", NULL, COL_NS);
    table_col(t, "gpu_busy_pct", NULL, COL_PCT);
    /* Over the steady iterations only (report/run/steady.c); text's GPU busy% is theirs. */
    table_col(t, "steady_kernels", NULL, COL_INT);
    table_col(t, "steady_gpu_time_ns", NULL, COL_NS);
    table_col(t, "steady_gpu_busy_ns", NULL, COL_NS);
    table_col(t, "steady_window_ns", NULL, COL_NS);
    table_col(t, "steady_gpu_busy_pct", NULL, COL_PCT);
    table_col(t, NULL, "GPU busy%", COL_PCT);
    table_col(t, "memory_device", "Device", COL_TEXT);
    table_col(t, "peak_allocated_bytes", "Peak alloc", COL_BYTES);
    table_col(t, "peak_reserved_bytes", "Peak rsrvd", COL_BYTES);
    table_col(t, "peak_allocated_by_device", NULL, COL_JSON);
    table_col(t, "peak_reserved_by_device", NULL, COL_JSON);
    table_col(t, NULL, "Precision", COL_TEXT);
    table_col(t, "precision_mix", NULL, COL_JSON);
    table_col(t, "throughput_ratio", "Speed-up", COL_RATIO);
    table_col(t, "throughput_ratio_low", "95% low", COL_RATIO);
    table_col(t, "throughput_ratio_high", "95% high", COL_RATIO);
    table_col(t, "verdict", "Verdict", COL_TEXT);
    table_col(t, NULL, "95% band", COL_TEXT);
    table_col(t, "latency_p50_ratio", NULL, COL_RATIO);
    table_col(t, "peak_allocated_saved_bytes", "Memory saved", COL_BYTES);
    table_col(t, "peak_allocated_saved_pct", "Saved %", COL_PCT);
    table_col(t, "baseline", NULL, COL_TEXT);
    table_col(t, "suspect", NULL, COL_TEXT); /* why its figures lost events (suspect.c), or null */
    /* Those whose operators were captured (sampled), apart from the latencies and from
     * steady_iterations: iterations = warm-up + steady + captured in every output (the series
     * table's captured_iterations, summed). */
    table_col(t, "captured_iterations", "Captured", COL_INT);
    /* Its series: 2 or more, its p50 is of several configurations, none's (the Summary says "no
     * p50 of its own"; the Series table has each): a script reads that here (a fresh-eyes check
     * read a p50 of 61.95 ms beside series of 65.57 and 1.97 ms). */
    table_col(t, "series_count", NULL, COL_INT);
    /* Its steady iterations shifted level mid-run (iterations.c): the medians before and after,
     * null where they did not. A verdict beside it stands only past the shift's ratio (the
     * Summary names the shift; a script reads it here). */
    table_col(t, "shift_before_ns", NULL, COL_NS);
    table_col(t, "shift_after_ns", NULL, COL_NS);
}

/* x's and y's one series each ran other batch sizes (series_batches_differ): batch 32 against
 * batch 8 read "0.26x, slower" beside a Summary that compared them per item. */
static int batches_differ(const struct run_phases *p, const struct phase_info *x,
                          const struct phase_info *y)
{
    return series_batches_differ(phase_only_series(p, x), phase_only_series(p, y));
}

/* Each phase's one series ran another model (series_models_differ), or both phases' detected
 * forwards did other work (phases_work_differs): no ratio, no saving. */
static int models_differ(const struct run_phases *p, const struct phase_info *x,
                         const struct phase_info *y)
{
    return series_models_differ(phase_only_series(p, x), phase_only_series(p, y)) ||
           phases_work_differs(x, y);
}

/* Speed-up of `ph` against `base` (median latencies) with its 95% band and verdict, into the
 * columns from `c_ratio` on (ratio, low, high, verdict, band as text). */
static void phase_speedup(struct table *t, int c_ratio, const struct run_phases *p,
                          const struct phase_info *ph, const struct phase_info *base)
{
    if (!ph->nsteady || !base->nsteady || ph->lat_p50 <= 0) return;
    if (ph != base && batches_differ(p, ph, base)) {
        table_set_text(t, c_ratio + 3,
                       pool_printf("no verdict: batch %lld vs %lld",
                                   (long long)phase_only_series(p, ph)->batch,
                                   (long long)phase_only_series(p, base)->batch));
        return;
    }
    if (ph != base && models_differ(p, ph, base)) {
        table_set_text(t, c_ratio + 3,
                       phases_work_differs(ph, base)
                           ? pool_printf("no verdict: other work (%d vs %d a forward)",
                                         ph->detected.unit_len, base->detected.unit_len)
                           : pool_printf("no verdict: model %s vs %s",
                                         series_model_text(phase_only_series(p, ph)),
                                         series_model_text(phase_only_series(p, base))));
        return;
    }
    const struct phase_info *pooled = ph == base          ? NULL
                                      : ph->nseries > 1   ? ph
                                      : base->nseries > 1 ? base
                                                          : NULL;
    if (!pooled) table_set_num(t, c_ratio, (double)base->lat_p50 / (double)ph->lat_p50);
    if (ph == base) {
        table_set_text(t, c_ratio + 3, "baseline");
        return;
    }
    /* What the Summary withholds, the tables withhold too: a phase that pools several series has
     * a p50 of none of them (no ratio: "no verdict: inference/fp16 pools 2" series), one whose
     * iterations shifted level mid-run a p50 of both levels (a ratio, no band, no verdict,
     * unless the band is past the shift's ratio: phases_band_outlasts). */
    const struct phase_info *sh = phases_shifted(ph, base);
    double lo, hi;
    int band = phases_pair_band(ph, base, phases_apart(ph, base), &lo, &hi);
    if (pooled || (sh && band != 1)) {
        char why[96], l[32];
        phase_short_label(pooled ? pooled : sh, l, sizeof l);
        if (pooled)
            snprintf(why, sizeof why, "no verdict: %s pools %d", l, pooled->nseries);
        else
            snprintf(why, sizeof why, "no verdict: %s shifted", l);
        table_set_text(t, c_ratio + 3, why);
        return;
    }
    if (!band) {
        table_set_text(t, c_ratio + 3, "too few to tell");
        return;
    }
    table_set_num(t, c_ratio + 1, lo);
    table_set_num(t, c_ratio + 2, hi);
    char bw[48];
    snprintf(bw, sizeof bw, hi - lo < 0.02 ? "%.3f-%.3fx" : "%.2f-%.2fx", lo, hi);
    table_set_text(t, c_ratio + 4, bw);
    table_set_text(
        t, c_ratio + 3,
        verdict_word(iterations_verdict(lo, hi, (double)base->lat_p50 / (double)ph->lat_p50)));
}

static void phase_row(struct table *t, const struct run_phases *p, const struct phase_info *ph,
                      const struct phase_info *base, const struct run_devices *devices)
{
    char buf[1024];
    table_row(t);
    phase_short_label(ph, buf, sizeof buf);
    if (ph->suspect) strcat(buf, " !");
    table_set_text(t, C_SHORT, buf);
    table_set_text(t, C_LABEL, ph->label);
    if (ph->suspect) table_set_text(t, C_SUSPECT, ph->suspect_why);
    table_set_text(t, C_GRAD, ph->grad_mode);
    table_set_text(t, C_AUTOCAST, ph->autocast);
    table_set_int(t, C_START, ph->start);
    table_set_int(t, C_END, ph->end);
    table_set_int(t, C_WALL, ph->wall);
    table_set_int(t, C_TRANSIENT, ph->transient);
    if (ph->has_iterations) {
        table_set_int(t, C_ITERS, ph->iterations);
        /* The steady iterations; the captured ones apart (C_CAPTURED), in the latencies as
         * series_captured_as counts them. */
        table_set_int(t, C_STEADY, (int64_t)ph->nsteady);
        table_set_int(t, C_WARM, ph->warmup);
        table_set_int(t, C_CAPTURED, ph->captured_apart);
        table_set_int(t, C_SERIES, ph->nseries);
        if (ph->shift_before) {
            table_set_int(t, C_SHIFT_BEFORE, ph->shift_before);
            table_set_int(t, C_SHIFT_AFTER, ph->shift_after);
        }
        if (ph->warmup) {
            table_set_int(t, C_WARM_NS, ph->warmup_ns);
            table_set_text(t, C_WARM_CAUSE,
                           ph->warmup_cause[0] ? ph->warmup_cause : "not visible in the data");
        }
        if (ph->iterations) {
            static const char *const from[] = {
                [DETECT_ALLOCATIONS] = "detected from the allocations",
                [DETECT_KERNELS] = "detected from the kernel sequence",
                [DETECT_OPERATORS] = "detected from the operator sequence"};
            table_set_text(t, C_BASIS,
                           ph->detected.from == DETECT_KERNELS       ? "gpu kernels"
                           : ph->gpu_latency && !ph->detected.period ? "gpu completion"
                                                                     : "host");
            table_set_text(t, C_SOURCE,
                           ph->detected.period                       ? from[ph->detected.from]
                           : ph->module_iterations == ph->iterations ? "python module calls"
                                                                     : "marked");
            table_set_int(t, C_ALL_P50, ph->lat_all_p50);
        }
        if (ph->nsteady) {
            table_set_num(t, C_TPUT, throughput(ph));
            if (ph->items)
                table_set_num(t, C_ITEMS, (double)ph->items / (double)ph->nsteady * throughput(ph));
            table_set_int(t, C_P50, ph->lat_p50);
            table_set_int(t, C_P95, ph->lat_p95);
            table_set_int(t, C_P99, ph->lat_p99);
            table_set_int(t, C_MEAN, ph->lat_mean);
            table_set_int(t, C_HOST_P50, ph->host_p50);
        }
    }
    if (ph->has_kernels) {
        table_set_int(t, C_KERNELS, ph->kernels);
        table_set_int(t, C_GPU, ph->gpu_time);
        mix_text(ph, buf, sizeof buf);
        if (buf[0]) table_set_text(t, C_MIX_TEXT, buf);
        mix_json(ph, buf, sizeof buf);
        table_set_text(t, C_MIX, buf);
    }
    if (ph->has_busy) {
        table_set_int(t, C_BUSY, ph->gpu_busy);
        if (ph->wall > 0)
            table_set_num(t, C_BUSY_PCT, 100.0 * (double)ph->gpu_busy / (double)ph->wall);
    }
    if (ph->has_steady_gpu) {
        table_set_int(t, C_ST_KERNELS, ph->steady_kernels);
        table_set_int(t, C_ST_GPU, ph->steady_gpu_time);
        table_set_int(t, C_ST_BUSY, ph->steady_gpu_busy);
        table_set_int(t, C_ST_WINDOW, ph->steady_window);
        if (ph->steady_window > 0) {
            double pct = 100.0 * (double)ph->steady_gpu_busy / (double)ph->steady_window;
            table_set_num(t, C_ST_BUSY_PCT, pct);
            table_set_num(t, C_BUSY_TEXT, pct);
        }
    } else if (ph->has_busy && ph->wall > 0 && !ph->iterations) {
        /* No iteration: the whole phase is the only window (the note says so). */
        table_set_num(t, C_BUSY_TEXT, 100.0 * (double)ph->gpu_busy / (double)ph->wall);
    }
    int k = run_memory_device(devices);
    if (ph->has_memory && k >= 0) {
        device_name(devices->type[k], devices->index[k], buf, sizeof buf);
        table_set_text(t, C_DEVICE, buf);
        if (ph->mem_dev >= 0) table_set_int(t, C_ALLOC, ph->dev_peak_alloc[k]);
        device_json(devices, ph->dev_peak_alloc, ph->dev_held, buf, sizeof buf, 0);
        table_set_text(t, C_ALLOC_DEV, buf);
        if (ph->has_reserved) {
            if (ph->mem_dev >= 0) table_set_int(t, C_RSRVD, ph->dev_peak_reserved[k]);
            device_json(devices, ph->dev_peak_reserved, ph->dev_held, buf, sizeof buf, 1);
            table_set_text(t, C_RSRVD_DEV, buf);
        }
    }
    if (!base) return;
    table_set_text(t, C_BASE, base->label);
    phase_speedup(t, C_TPUT_RATIO, p, ph, base);
    if (ph->nsteady && base->nsteady && base->lat_p50 > 0)
        table_set_num(t, C_LAT_RATIO, (double)ph->lat_p50 / (double)base->lat_p50);
    /* Memory saved by a phase that ran the model: setting it up saves nothing worth saying. */
    int64_t saved;
    double pct;
    /* Another batch holds other tensors: no saving to speak of. */
    if (phase_ran_model(p, ph) && !batches_differ(p, ph, base) && !models_differ(p, ph, base) &&
        memory_saving(base, ph, &saved, &pct)) {
        table_set_int(t, C_SAVED, saved);
        table_set_num(t, C_SAVED_PCT, pct);
    }
}

/* A view of `data` showing only the given columns in text (the data table carries them all). */
static struct table *text_view(const struct table *data, const char *title, const int *cols, int n)
{
    struct table *v = table_new(NULL, title);
    for (int k = 0; k < n; k++) {
        const struct col *c = &data->cols[cols[k]];
        table_col(v, NULL, c->title ? c->title : c->key, c->type);
    }
    for (int r = 0; r < data->nrows; r++) {
        table_row(v);
        for (int k = 0; k < n; k++) {
            const struct cell *c = &data->cells[r * data->ncols + cols[k]];
            if (c->null) continue;
            if (c->s)
                table_set_text(v, k, c->s);
            else if (data->cols[cols[k]].type == COL_INT || data->cols[cols[k]].type == COL_NS ||
                     data->cols[cols[k]].type == COL_BYTES)
                table_set_int(v, k, c->i);
            else
                table_set_num(v, k, c->d);
        }
    }
    return v;
}

/* A phase the text folds into the set-up line: no iteration in it while other phases have some
 * (building or loading the model, the context managers' set-up). */
static int set_up(const struct run_phases *p, const struct phase_info *ph)
{
    if (ph->transient || ph->iterations) return 0;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].iterations) return 1;
    return 0;
}

/* Rows of `data` (one per phase of p, in order) for a text view: every phase but the transient
 * ones and, when fold, the set-up ones. */
static struct table *phase_view(const struct run_phases *p, const struct table *data,
                                const char *title, const int *cols, int n, int fold)
{
    struct table *v = text_view(data, title, cols, n);
    int keep = 0;
    for (int r = 0; r < data->nrows; r++) {
        const struct cell *c = &data->cells[r * data->ncols + C_TRANSIENT];
        if (!c->null && c->i) continue;
        if (fold && r < p->n && set_up(p, &p->v[r])) continue;
        if (keep != r)
            memcpy(&v->cells[keep * v->ncols], &v->cells[r * v->ncols],
                   (size_t)v->ncols * sizeof *v->cells);
        keep++;
    }
    v->nrows = keep;
    return v;
}

/* inference_vs_no_grad's columns, in the order it declares them (asserted there). */
enum {
    IV_AUTOCAST,
    IV_SPEEDUP,
    IV_SPEEDUP_LOW,
    IV_SPEEDUP_HIGH,
    IV_VERDICT,
    IV_BAND,
    IV_PEAK_ALLOCATED_SAVED_BYTES,
    IV_NCOLS
};

const char *verdict_word(enum verdict v)
{
    static const char *const words[] = {[VERDICT_SAME] = "same (within 1%)",
                                        [VERDICT_FASTER] = "faster",
                                        [VERDICT_SLOWER] = "slower",
                                        [VERDICT_UNCLEAR] = "no clear difference"};
    return words[v];
}

/* inference_mode against no_grad at each autocast setting where both ran. */
static struct table *inference_vs_no_grad(const struct run_phases *p)
{
    struct table *t = table_new("inference_vs_no_grad", "inference_mode against no_grad");
    table_col(t, "autocast", "Autocast", COL_TEXT);
    table_col(t, "speedup", "Speed-up", COL_RATIO);
    table_col(t, "speedup_low", "95% low", COL_RATIO);
    table_col(t, "speedup_high", "95% high", COL_RATIO);
    table_col(t, "verdict", "Verdict", COL_TEXT);
    table_col(t, NULL, "95% band", COL_TEXT);
    table_col(t, "peak_allocated_saved_bytes", "Memory saved", COL_BYTES);
    assert(t->ncols == IV_NCOLS);
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *inf = &p->v[i];
        if (strcmp(inf->grad_mode, "inference_mode") || !inf->nsteady) continue;
        const struct phase_info *ng = phase_twin(p, inf, "no_grad");
        if (!ng) continue;
        table_row(t);
        table_set_text(t, IV_AUTOCAST, inf->autocast);
        phase_speedup(t, IV_SPEEDUP, p, inf, ng); /* speed-up, band, verdict: in that order */
        int64_t saved;                            /* the phase table's figure (memory.c) */
        double pct;
        if (!batches_differ(p, inf, ng) && !models_differ(p, inf, ng) &&
            memory_saving(ng, inf, &saved, &pct))
            table_set_int(t, IV_PEAK_ALLOCATED_SAVED_BYTES, saved);
    }
    return t; /* empty when no pair ran: JSON [] all the same (a fixed shape) */
}

/* The overview's note: how latency is measured (or how to mark iterations), why a "-", each
 * phase's detected iterations and pooled series, the set-up phases folded away, the suspect
 * ones. A static buffer, "" none. */
/* Words appended inside the note's closing parenthesis (its last character); nothing where the
 * note does not end with one or has no room. */
static void note_inside(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_inside(char *note, size_t size, const char *fmt, ...)
{
    size_t len = strlen(note);
    if (len < 2 || len >= size || note[len - 1] != ')') return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + len - 1, size - len + 1, fmt, ap);
    va_end(ap);
    len = strlen(note);
    if (len + 1 < size) note[len] = ')', note[len + 1] = 0;
}

/* Appended to note: per phase, iterations found without a mark (with how well they matched, and
 * that they may hold input preparation), and a row that pools several configurations. */
static void detected_note(const struct run_phases *p, char *note, size_t size)
{
    /* Per phase: iterations found without a mark (with how well they matched), and a row
     * that pools several configurations (each has its own figures in Series). */
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        char label[32];
        phase_short_label(ph, label, sizeof label);
        size_t len = strlen(note);
        if (ph->detected.period)
            len += (size_t)snprintf(
                note + len, size - len,
                ph->detected.from == DETECT_KERNELS
                    ? "%s%s: iterations detected from the kernel sequence (no mark; %d kernels a"
                      " period, %d periods matched exactly; GPU time, first kernel's start to last"
                      " one's end)"
                : ph->detected.from == DETECT_OPERATORS
                    ? "%s%s: iterations detected from the operator sequence (no mark; %d outermost"
                      " operators a period, %d periods matched exactly; host time)"
                : ph->detected.by_level
                    ? "%s%s: iterations detected from the allocator's reports (no mark; cut where"
                      " the allocated total came back to its level, no period repeating: %d"
                      " reports a forward, %d forwards of that order of allocations and frees, the"
                      " others another order (another path at other sizes, or another model);"
                      " host time)"
                : ph->detected.sizes_vary
                    ? "%s%s: iterations detected from the allocator's reports (no mark; %d reports"
                      " a period, %d periods matched in their order of allocations and frees, each"
                      " the first one's at other sizes: another batch or input length; host time)"
                    : "%s%s: iterations detected from the allocator's reports (no mark; %d reports"
                      " a period, %d periods matched exactly; host time)",
                len ? ". " : "", label, ph->detected.period, ph->detected.repeats);
        /* Several threads' forwards (a server's workers): each counted, or said not to be. */
        if (ph->detected.period && ph->detected.threads > 1)
            note_inside(note, size,
                        "; on %d threads, every thread's forwards counted, a loop of its own where"
                        " its forward differs",
                        ph->detected.threads);
        int missed = ph->detected.threads_missed;
        if (ph->detected.period && missed > 0)
            note_inside(note, size,
                        "; %d other thread%s with as many allocator reports repeat%s no forward"
                        " found here: %s forwards are not counted",
                        missed, missed > 1 ? "s" : "", missed > 1 ? "" : "s",
                        missed > 1 ? "their" : "its");
        /* A period of several forwards (every 5th request larger): each its own iteration. */
        if (ph->detected.period && ph->detected.pieces > 1 &&
            ph->detected.pieces > ph->detected.alike)
            note_inside(note, size,
                        "; where the reports repeat only every %d, that holds %d iterations, cut"
                        " where a forward repeats: %d alike, %d other",
                        ph->detected.split_period, ph->detected.pieces, ph->detected.alike,
                        ph->detected.pieces - ph->detected.alike);
        else if (ph->detected.period && ph->detected.pieces > 1)
            note_inside(note, size,
                        "; where the reports repeat only every %d, that holds %d iterations, cut"
                        " where a forward repeats, and reports that are no forward between them"
                        " (a DataLoader's set-up, say)",
                        ph->detected.split_period, ph->detected.pieces);
        len = strlen(note);
        if (ph->detected.nloops > 1 && len < size)
            len += (size_t)snprintf(note + len, size - len,
                                    ", in %d loops of their own, each a series (loop 1 to loop %d:"
                                    " another batch size or model; the period above is loop 1's)",
                                    ph->detected.nloops, ph->detected.nloops);
        else if (ph->nseries > 1 && len < size)
            snprintf(
                note + len, size - len,
                "%s%s pools %d series (other marks, models, batch sizes or settings): each one's"
                " figures are in the Series table",
                len ? ". " : "", label, ph->nseries);
        len = strlen(note);
        /* Host-detected iterations are the loop's repeating work: preparation inside it too. */
        if (ph->detected.period && ph->detected.from != DETECT_KERNELS && len < size)
            snprintf(note + len, size - len,
                     ". %s: a detected iteration may include input preparation and"
                     " post-processing that repeat with it (a DataLoader's transforms and collate,"
                     " an argmax or softmax of the output): mark the forward to leave them out",
                     label);
    }
}

/* gpu: how latency was timed: 0 on the host, 1 to GPU completion, 2 on the GPU from the kernel
 * sequence (detected), 3 from the kernel sequence in some phases and on the host in others. */
static const char *overview_note(const struct run_phases *p, int iters, int gpu, int transient)
{
    static char note[2048];
    char folded[256] = "";
    for (int i = 0, o = 0; i < p->n && o + 40 < (int)sizeof folded; i++)
        if (p->v[i].transient) {
            char s[48];
            phase_short_label(&p->v[i], s, sizeof s);
            o += snprintf(folded + o, sizeof folded - (size_t)o, "%s%s", o ? ", " : "", s);
        }
    const char *how =
        p->dataloader_worker
            ? "a DataLoader worker: it makes batches, and has no iterations of its"
              " own (its main process's report has the model's)"
            : "no iteration was seen, so no latency or throughput: no phase repeats the"
              " same work (its kernels, operators, allocations: a loop whose forwards differ"
              " in more than their sizes, whose allocated total never comes back (results"
              " kept), or no loop); mark each forward call"
              " with an NVTX range named 'iteration' (Python:"
              " torch.cuda.nvtx.range_push('iteration') and range_pop(), or"
              " torch.profiler.record_function('iteration'); C++: RECORD_USER_SCOPE(\"iteration\") "
              "or nvtxRangePushA), or give"
              " your own range's name in INFPROF_ITERATION_RANGE; TorchScript calls count"
              " on their own";
    snprintf(note, sizeof note, "%s%s%s",
             !p->n      ? ""
             : !iters   ? how
             : gpu == 1 ? "Iters to GPU busy%: steady state, warm-up apart (Kernels and GPU time:"
                          " the whole phase); latency to GPU completion (host call returned and"
                          " its GPU work done)"
             : gpu == 2 ? "Iters to GPU busy%: steady state, warm-up apart (Kernels and GPU time:"
                          " the whole phase); latency is GPU time, first kernel's start to last"
                          " one's end (iterations found in the kernel sequence)"
             : gpu == 3 ? "Iters to GPU busy%: steady state, warm-up apart (Kernels and GPU time:"
                          " the whole phase); latency is GPU time where iterations were found in"
                          " the kernel sequence (first kernel's start to last one's end), host"
                          " time elsewhere (no GPU work tied to the iterations)"
                        : "Iters to GPU busy%: steady state, warm-up apart (Kernels and GPU time:"
                          " the whole phase); latency is host time (no GPU work tied to the"
                          " iterations)",
             transient ? "; phases under 1 ms with nothing in them are not shown: " : "", folded);
    /* Every "-" says why. */
    int kernels = 0, no_compute = 0;
    for (int i = 0; i < p->n; i++) {
        kernels |= p->v[i].has_kernels;
        no_compute += p->v[i].has_kernels && !p->v[i].transient && !kernel_ns(&p->v[i], NULL);
    }
    if (p->n && !kernels) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len,
                 "%sKernels, GPU time, GPU busy%% and Precision are '-': no CUDA activity was"
                 " recorded (CUPTI %s)",
                 len ? ". " : "", p->cupti_status[0] ? p->cupti_status : "off");
    } else if (no_compute) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len,
                 "%sPrecision '-': no GEMM, convolution or attention kernel in that phase",
                 len ? ". " : "");
    }
    detected_note(p, note, sizeof note);
    int64_t apart = phases_captured_apart(p);
    if (apart) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len,
                 "%sCaptured: %lld iterations whose every operator call was recorded (sampled"
                 " operators: slower for it), left out of Iters; in the latencies each counts"
                 " at its time over what a capture adds (captures fall unevenly over a run);"
                 " Iters, Captured and Warm-up together are every iteration",
                 len ? ". " : "", (long long)apart);
    }
    /* The set-up line: the phases folded away, each with what it holds. */
    for (int i = 0, first = 1; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        size_t len = strlen(note);
        if (!set_up(p, ph) || len + 120 > sizeof note) continue;
        char label[32], what[96] = "", b[32];
        phase_short_label(ph, label, sizeof label);
        if (ph->has_memory && ph->mem_dev >= 0) {
            fmt_bytes(b, sizeof b, (double)ph->peak_alloc);
            snprintf(what, sizeof what, "peak %s", b);
        }
        if (ph->has_kernels) {
            size_t o = strlen(what);
            fmt_ns(b, sizeof b, (double)ph->gpu_time);
            snprintf(what + o, sizeof what - o, "%s%lld kernels, %s GPU", o ? ", " : "",
                     (long long)ph->kernels, b);
        }
        snprintf(note + len, sizeof note - len, "%s%s%s%s%s",
                 first ? (len ? ". Set-up, no iterations (not shown): "
                              : "Set-up, no iterations"
                                " (not shown): ")
                       : ", ",
                 label, what[0] ? " (" : "", what, what[0] ? ")" : "");
        first = 0;
    }
    for (int i = 0, first = 1; i < p->n; i++) {
        size_t len = strlen(note);
        if (!p->v[i].suspect || len + 260 > sizeof note) continue;
        phase_short_label(&p->v[i], folded, sizeof folded);
        snprintf(note + len, sizeof note - len, "%s%s: %s",
                 first ? ". ! suspect, lost events: " : "; ", folded, p->v[i].suspect_why);
        first = 0;
    }
    return note;
}

/* The warm-up view: the phases with warm-up iterations only. */
static struct table *warmup_view(const struct run_phases *p, struct table *t)
{
    static const int warmup[] = {C_SHORT, C_WARM, C_WARM_NS, C_WARM_CAUSE};
    struct table *w = phase_view(p, t, "Warm-up (left out of every figure above and below)", warmup,
                                 (int)(sizeof warmup / sizeof *warmup), 0);
    int keep = 0;
    for (int r = 0; r < w->nrows; r++) {
        const struct cell *c = &w->cells[r * w->ncols + 1];
        if (c->null || !c->i) continue;
        if (keep != r)
            memcpy(&w->cells[keep * w->ncols], &w->cells[r * w->ncols],
                   (size_t)w->ncols * sizeof *w->cells);
        keep++;
    }
    w->nrows = keep;
    w->note = "warm-up: the leading iterations slower than the phase's steady state"
              " (median + max(5 MAD, 10%) of its second half); --warmup N overrides";
    return w;
}

int section_phases(const struct run_phases *p, const struct report_opts *o, struct table **out)
{
    const struct phase_info *base = baseline_of(p, o->baseline);
    struct table *t = table_new("phases", NULL);
    phase_columns(t);
    int transient = 0, warm = 0, gpu = 0, iters = 0, kernel_found = 0, host = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        phase_row(t, p, ph, base, &p->devices);
        transient += ph->transient;
        warm += ph->warmup > 0;
        gpu |= ph->gpu_latency;
        iters |= ph->iterations > 0;
        /* Iterations found in the kernel sequence are timed on the GPU, the others (marked
         * without GPU work tied to them, found in operators or allocations) on the host. */
        if (ph->iterations > 0 && !ph->gpu_latency) {
            if (ph->detected.period && ph->detected.from == DETECT_KERNELS)
                kernel_found = 1;
            else
                host = 1;
        }
    }
    if (!gpu && kernel_found) gpu = host ? 3 : 2;
    /* Captured in text where a phase has any: Iters + Captured + Warm-up are its iterations. */
    int64_t apart = phases_captured_apart(p);
    int overview[10], nov = 0;
    overview[nov++] = C_SHORT, overview[nov++] = C_STEADY;
    if (apart) overview[nov++] = C_CAPTURED;
    static const int rest[] = {C_TPUT, C_P50, C_P95, C_KERNELS, C_GPU, C_BUSY_TEXT, C_MIX_TEXT};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++) overview[nov++] = rest[i];
    static const int against[] = {C_SHORT, C_TPUT_RATIO, C_BAND,     C_VERDICT,
                                  C_ALLOC, C_SAVED,      C_SAVED_PCT};
    int n = 0;
    out[n++] = t;
    struct table *v1 = phase_view(p, t, "Phases (grad mode / autocast)", overview, nov, 1);
    const char *note = overview_note(p, iters, gpu, transient);
    v1->note = note[0] ? note : NULL;
    if (!p->n)
        v1->note = "no libtorch phase was seen (the program does not use libtorch, or"
                   " INFPROF_TORCH=0)";
    out[n++] = v1;
    if (warm) out[n++] = warmup_view(p, t);
    int shown = 0;
    for (int i = 0; i < p->n; i++) shown += !p->v[i].transient && !set_up(p, &p->v[i]);
    if (shown >= 2) {
        static char title[160];
        char b[64] = "";
        if (base) phase_short_label(base, b, sizeof b);
        snprintf(title, sizeof title,
                 "Phases against %s (speed-up: its p50 latency over the"
                 " phase's; 95%% band)",
                 base ? b : "a baseline");
        struct table *v =
            phase_view(p, t, title, against, (int)(sizeof against / sizeof *against), 1);
        int setup = 0;
        for (int i = 0; i < p->n; i++)
            setup += !p->v[i].transient && !set_up(p, &p->v[i]) && p->v[i].has_memory &&
                     !phase_ran_model(p, &p->v[i]);
        if (setup)
            v->note = "Speed-up and Memory saved '-': no steady iterations in that phase (the model"
                      " set up, or forwards unlike each other that no mark names: the note above"
                      " says how to mark them)";
        /* A saving withheld: the phase began holding what was made between them. */
        for (int i = 0; base && i < p->n; i++) {
            const struct phase_info *ph = &p->v[i];
            int shown = ph != base && !ph->transient && !set_up(p, ph) && phase_ran_model(p, ph) &&
                        !batches_differ(p, ph, base);
            int64_t moved = shown ? memory_entry_moved(base, ph) : 0;
            if (!moved) continue;
            char a[64], x[32];
            phase_short_label(ph, a, sizeof a);
            fmt_bytes(x, sizeof x, (double)(moved < 0 ? -moved : moved));
            v->note = pool_printf("%s%sMemory saved '-' for %s: %s %s stayed held after its peak"
                                  " than after %s's (tensors made between them and kept: no cost"
                                  " or saving of its setting)",
                                  v->note ? v->note : "", v->note ? "; " : "", a, x,
                                  moved > 0 ? "more" : "less", b);
            break;
        }
        out[n++] = v;
    }
    /* JSON and CSV carry it in every run (a fixed shape); text where a pair ran. */
    struct table *iv = inference_vs_no_grad(p);
    static const int iv_cols[] = {IV_AUTOCAST, IV_SPEEDUP, IV_BAND, IV_VERDICT,
                                  IV_PEAK_ALLOCATED_SAVED_BYTES};
    out[n++] = iv;
    if (iv->nrows && shown >= 2)
        out[n++] = text_view(iv, iv->title, iv_cols, (int)(sizeof iv_cols / sizeof *iv_cols));
    iv->title = NULL;
    return n;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int phases_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    return section_phases(c->p, c->o, out);
}

/* Compared by report/compare itself (two views, the pooled-series note). */
/* Its first-screen lines (sec_phases_lines.c). */
extern const struct summary_line *const phases_summary[];

const struct report_section sec_phases = {.summary = phases_summary,
                                          .key = "phases",
                                          .build = phases_build,
                                          .shown_empty = 1,
                                          .compare = NULL};
