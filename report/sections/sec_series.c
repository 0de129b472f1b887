/*
 * sec_series.c: the Series section (figures from report/run/iterations.c): each configuration a
 * run tried, a phase and the mark's name ("iteration batch=8", "iteration int8"), with its own
 * iterations, warm-up and latency; then, where series of one phase differ in batch size, the
 * batch sweep: items/s and latency per batch, and what each step up gains in throughput against
 * what it costs in latency (docs/report.md, "Series").
 */
#include "sections.h"
#include "../run/energy.h"

#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Any phase with more than one series, or a series with a name: else the phase table says it
 * all and this section stays empty. */
static int series_worth_showing(const struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++)
        if (p->series.v[i].name[0] || p->v[p->series.v[i].phase].nseries > 1) return 1;
    return 0;
}

/* The Series table's columns, in the order series_table declares them. */
enum {
    S_PHASE,
    S_SHORT,
    S_SERIES,
    S_BATCH,
    S_ITERS,
    S_STEADY,
    S_WARM,
    S_WARM_NS,
    S_CAPTURED,
    S_TPUT,
    S_ITEMS,
    S_P50,
    S_P95,
    S_P99,
    S_MEAN,
    S_START,
    S_END,
    S_GAP_P50,
    S_GAP_PCT,
    S_PEAK,
    S_KERNELS,
    S_GPU,
    S_KPI,
    S_GPI,
    S_MODEL,
    S_LOOP,
    S_UNIT,
    S_EDEV,
    S_JPI,
    S_MJ,
    S_SETTINGS,
    S_CPU,
    S_OFFCPU,
    S_FAULTS,
    S_SYS,
    S_FAULTS_P50,
    S_AGAINST,
    S_SPEEDUP,
    S_SPEEDUP_LO,
    S_SPEEDUP_HI,
    S_VERDICT,
    S_NCOLS
};

/* Energy per iteration and per item on the run's energy device (energy.c), JSON and CSV: what
 * compare holds two configurations' energy to. */
static void series_energy(struct sqlite3 *db, const struct run_phases *p,
                          const struct series_info *s, struct table *t)
{
    double j, mj;
    const char *device;
    energy_series_figures(db, p, s, &j, &mj, &device);
    if (j < 0) return;
    table_set_text(t, S_EDEV, device);
    table_set_num(t, S_JPI, j);
    if (mj >= 0) table_set_num(t, S_MJ, mj);
}

/* The Series line's pair on its fastest configuration's row (series_pair_verdict): the slowest
 * one's name, the speed-up, its band and verdict as the phases table words them. */
static void pair_cells(struct table *t, const struct run_phases *p, const struct series_info *s)
{
    struct series_pick k;
    if (!series_pick(p, s->phase, &k) || k.fast != s) return;
    struct pair_verdict pv;
    series_pair_verdict(k.fast, k.slow, &pv);
    table_set_text(t, S_AGAINST, k.slow->name[0] ? k.slow->name : "(unnamed)");
    table_set_num(t, S_SPEEDUP, pv.ratio);
    if (pv.has_band) {
        table_set_num(t, S_SPEEDUP_LO, pv.lo);
        table_set_num(t, S_SPEEDUP_HI, pv.hi);
    }
    table_set_text(t, S_VERDICT,
                   pv.withheld   ? "no verdict: shifted level mid-run"
                   : pv.has_band ? verdict_word(pv.v)
                                 : "too few to tell");
}

static struct table *series_table(struct sqlite3 *db, const struct run_phases *p)
{
    struct table *t = table_new("series", "Series (a phase, the iteration mark's name and the"
                                          " settings that changed)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "batch", NULL, COL_INT); /* batch and items/s: the batch sweep's, in text */
    /* Every iteration of the series: warm-up + steady + captured. */
    table_col(t, "iterations", NULL, COL_INT);
    table_col(t, "steady_iterations", "Iters", COL_INT);
    table_col(t, "warmup_iterations", "Warm-up", COL_INT);
    table_col(t, "warmup_ns", NULL, COL_NS);
    /* Those whose operators were captured (sampled): in the loop's rate, apart from the
     * latencies and from steady_iterations. Iterations = warm-up + steady + captured in every
     * output, and the latencies are over the steady ones (the HTML captions say it in these
     * words). In text where a series has any. */
    int64_t apart = 0;
    for (int i = 0; i < p->series.n; i++) apart += p->series.v[i].captured_apart;
    table_col(t, "captured_iterations", apart ? "Captured" : NULL, COL_INT);
    /* Iter/s, items/s, batch and p99 in JSON/CSV only: the text table leaves the room to the
     * series' names (the batch sweep shows batch and items/s). */
    table_col(t, "throughput_per_s", NULL, COL_RATE);
    table_col(t, "items_per_s", NULL, COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "latency_p99_ns", NULL, COL_NS);
    table_col(t, "latency_mean_ns", NULL, COL_NS);
    table_col(t, "start_ns", NULL, COL_NS);
    table_col(t, "end_ns", NULL, COL_NS);
    table_col(t, "between_p50_ns", NULL, COL_NS);
    table_col(t, "between_pct", NULL, COL_PCT);
    /* Peak alloc in text only where the series' peaks differ (by more than 5%): else the
     * phase's memory table says it and the room goes to the names. */
    int64_t plo = INT64_MAX, phi = -1;
    for (int i = 0; i < p->series.n; i++) {
        int64_t x = p->series.v[i].peak_alloc;
        if (x < 0) continue;
        plo = x < plo ? x : plo, phi = x > phi ? x : phi;
    }
    table_col(t, "peak_allocated_bytes", phi > 0 && phi > plo + plo / 20 ? "Peak alloc" : NULL,
              COL_BYTES);
    table_col(t, "steady_kernels", NULL, COL_INT);
    table_col(t, "steady_gpu_time_ns", NULL, COL_NS);
    /* Kernels/it in text only when some series has kernels (a CPU run leaves the room to the
     * names). */
    int kernels = 0;
    for (int i = 0; i < p->series.n; i++) kernels |= p->series.v[i].kernels >= 0;
    table_col(t, "kernels_per_iteration", kernels ? "Kernels/it" : NULL, COL_RATE);
    table_col(t, "gpu_time_per_iteration_ns", NULL, COL_NS);
    /* Two rates, named apart (series.c): the model's, 1 / mean latency, and what the loop
     * delivered over its wall time, waits for data included. */
    table_col(t, "model_rate_per_s", "Model rate", COL_RATE);
    table_col(t, "delivered_per_s", "Loop rate", COL_RATE);
    table_col(t, "rate_unit", "Unit", COL_TEXT);
    table_col(t, "energy_device", NULL, COL_TEXT);
    table_col(t, "j_per_iteration", NULL, COL_RATE);
    table_col(t, "mj_per_item", NULL, COL_RATE);
    /* The settings that changed between iterations, as this series ran them: in its name only
     * where they tell it apart from another series of the same name and batch. */
    table_col(t, "settings", NULL, COL_TEXT);
    /* Per steady iteration (means), on the CPU and off it (series_cpu.c): what compare splits a
     * change of latency into. */
    table_col(t, "cpu_per_iteration_ns", NULL, COL_NS);
    table_col(t, "off_cpu_per_iteration_ns", NULL, COL_NS);
    /* Page faults and system time per steady iteration (series_cpu.c): memory handed back to
     * the system and taken again every forward (the advice rule page_faults). */
    table_col(t, "faults_per_iteration", NULL, COL_RATE);
    table_col(t, "sys_per_iteration_ns", NULL, COL_NS);
    /* Page faults of the steady iterations near the p50 (series_cpu.c): what the Summary's
     * inference_mode line holds against the other mode's. */
    table_col(t, "faults_at_p50", NULL, COL_RATE);
    /* The Series line's pair as data (series_pair_verdict), on the fastest configuration's row:
     * the slowest one's name, the speed-up (its p50 over this one's), the band and verdict. */
    table_col(t, "speedup_against", NULL, COL_TEXT);
    table_col(t, "speedup", NULL, COL_RATIO);
    table_col(t, "speedup_low", NULL, COL_RATIO);
    table_col(t, "speedup_high", NULL, COL_RATIO);
    table_col(t, "verdict", NULL, COL_TEXT);
    /* Every series in JSON and CSV (the Between rows name them); in text only where a phase has
     * more than one or a mark has a name: else the phase table says it all. */
    t->quiet = !series_worth_showing(p);
    assert(t->ncols == S_NCOLS);
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        table_row(t);
        phase_cells(t, &p->v[s->phase], S_PHASE, S_SHORT);
        table_set_text(t, S_SERIES, s->name[0] ? s->name : "(unnamed)");
        if (s->batch > 0) table_set_int(t, S_BATCH, s->batch);
        table_set_int(t, S_STEADY, (int64_t)s->nsteady); /* as the phase's: the captured apart */
        table_set_int(t, S_WARM, s->warmup);
        table_set_int(t, S_ITERS, (int64_t)s->warmup + s->nsteady + s->captured_apart);
        table_set_int(t, S_WARM_NS, s->warmup_ns);
        if (s->nsteady && s->lat_mean > 0) table_set_num(t, S_TPUT, 1e9 / (double)s->lat_mean);
        if (series_items_per_s(s) > 0) table_set_num(t, S_ITEMS, series_items_per_s(s));
        if (s->nsteady) {
            table_set_int(t, S_P50, s->lat_p50);
            table_set_int(t, S_P95, s->lat_p95);
            table_set_int(t, S_P99, s->lat_p99);
            table_set_int(t, S_MEAN, s->lat_mean);
        }
        table_set_int(t, S_START, s->start);
        table_set_int(t, S_END, s->end);
        if (s->gaps) {
            table_set_int(t, S_GAP_P50, s->gap_p50);
            table_set_num(t, S_GAP_PCT, series_between_pct(s));
        }
        if (s->peak_alloc >= 0) table_set_int(t, S_PEAK, s->peak_alloc);
        if (s->kernels >= 0) {
            table_set_int(t, S_KERNELS, s->kernels);
            table_set_int(t, S_GPU, s->gpu_time);
            if (s->nsteady) {
                table_set_num(t, S_KPI, (double)s->kernels / (double)s->nsteady);
                table_set_int(t, S_GPI, s->gpu_time / (int64_t)s->nsteady);
            }
        }
        int items;
        double loop = series_delivered_per_s(s, &items);
        double model = items                           ? series_items_per_s(s)
                       : s->nsteady && s->lat_mean > 0 ? 1e9 / (double)s->lat_mean
                                                       : 0;
        if (model > 0) table_set_num(t, S_MODEL, model);
        if (loop > 0) table_set_num(t, S_LOOP, loop);
        if (model > 0 || loop > 0) table_set_text(t, S_UNIT, items ? "items/s" : "iter/s");
        series_energy(db, p, s, t);
        table_set_int(t, S_CAPTURED, s->captured_apart);
        if (s->settings && s->settings[0]) table_set_text(t, S_SETTINGS, s->settings);
        if (s->cpu_mean >= 0) table_set_int(t, S_CPU, s->cpu_mean);
        if (s->off_cpu_mean >= 0) table_set_int(t, S_OFFCPU, s->off_cpu_mean);
        if (s->faults_mean >= 0) table_set_num(t, S_FAULTS, s->faults_mean);
        if (s->sys_mean >= 0) table_set_int(t, S_SYS, s->sys_mean);
        if (s->faults_at_p50 >= 0) table_set_num(t, S_FAULTS_P50, s->faults_at_p50);
        pair_cells(t, p, s);
    }
    t->note = "warm-up is judged within each series: a slower second configuration is a series"
              " of its own, never the first one's warm-up. Model rate: 1 / mean latency, what the"
              " model alone could do; Loop rate: what the loop delivered, over the wall time of"
              " its steady iterations, the waits between them included";
    if (apart)
        t->note = pool_printf("%s. Captured: iterations whose every operator call was recorded"
                              " (sampled operators: slower for it), in the loop rate, left out of"
                              " Iters; in the latencies each counts at its time over what a capture"
                              " adds (captures fall unevenly over a run); Iters, Captured and"
                              " Warm-up together are every iteration",
                              t->note);
    for (int i = 0; i < p->series.n; i++) {
        int items;
        const struct series_info *s = &p->series.v[i];
        double loop = series_delivered_per_s(s, &items);
        double model = items             ? series_items_per_s(s)
                       : s->lat_mean > 0 ? 1e9 / (double)s->lat_mean
                                         : 0;
        if (model > 0 && loop > 1.05 * model) {
            t->note = pool_printf("%s. A loop rate above the model rate: iterations overlapped"
                                  " (the model run from several threads at once)",
                                  t->note);
            break;
        }
    }
    if (p->series.left_out)
        t->note = pool_printf("%s. %lld iterations of further series are left out of this table"
                              " (the report holds %d series; their phase's row counts them)",
                              t->note, (long long)p->series.left_out, REPORT_MAX_SERIES);
    return t;
}

/* Names in natural order: digits compared as numbers ("width=128" before "width=1024"). */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y) return x < y ? -1 : 1;
            a = ea, b = eb;
            continue;
        }
        if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
        a++, b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

/* sweep_table's columns, in the order it declares them (asserted there). */
enum {
    SW_PHASE,
    SW_SHORT,
    SW_SERIES,
    SW_BATCH,
    SW_ITEMS_PER_S,
    SW_LATENCY_P50_NS,
    SW_LATENCY_P95_NS,
    SW_THROUGHPUT_GAIN,
    SW_LATENCY_COST,
    SW_NCOLS
};

/* By phase, then what the series are besides their batch size (series.c), then batch. */
static int by_phase_batch(const void *a, const void *b)
{
    const struct series_info *x = *(const struct series_info *const *)a;
    const struct series_info *y = *(const struct series_info *const *)b;
    if (x->phase != y->phase) return x->phase - y->phase;
    int c = natural_cmp(x->rest, y->rest);
    if (c) return c;
    return (x->batch > y->batch) - (x->batch < y->batch);
}

static struct table *sweep_table(const struct run_phases *p)
{
    struct table *t = table_new("batch_sweep", "Batch sweep (series of a phase by batch size)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "batch", "Batch", COL_INT);
    table_col(t, "items_per_s", "Items/s", COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "throughput_gain", "Items/s x", COL_RATIO);
    table_col(t, "latency_cost", "p50 x", COL_RATIO);
    assert(t->ncols == SW_NCOLS);
    const struct series_info *v[REPORT_MAX_SERIES];
    int n = 0;
    for (int i = 0; i < p->series.n; i++)
        if (p->series.v[i].batch > 0 && p->series.v[i].nsteady) v[n++] = &p->series.v[i];
    qsort(v, (size_t)n, sizeof *v, by_phase_batch);
    for (int a = 0; a < n;) {
        int b = a, batches = 0;
        while (b < n && v[b]->phase == v[a]->phase && !strcmp(v[b]->rest, v[a]->rest)) {
            batches += b == a || v[b]->batch != v[b - 1]->batch;
            b++;
        }
        for (int k = a; batches > 1 && k < b; k++) {
            table_row(t);
            phase_cells(t, &p->v[v[k]->phase], SW_PHASE, SW_SHORT);
            table_set_text(t, SW_SERIES, v[k]->name[0] ? v[k]->name : "(unnamed)");
            table_set_int(t, SW_BATCH, v[k]->batch);
            if (series_items_per_s(v[k]) > 0)
                table_set_num(t, SW_ITEMS_PER_S, series_items_per_s(v[k]));
            table_set_int(t, SW_LATENCY_P50_NS, v[k]->lat_p50);
            table_set_int(t, SW_LATENCY_P95_NS, v[k]->lat_p95);
            /* Against the next smaller batch: what the step buys and what it costs. */
            if (k > a && series_items_per_s(v[k - 1]) > 0 && v[k - 1]->lat_p50 > 0) {
                table_set_num(t, SW_THROUGHPUT_GAIN,
                              series_items_per_s(v[k]) / series_items_per_s(v[k - 1]));
                table_set_num(t, SW_LATENCY_COST,
                              (double)v[k]->lat_p50 / (double)v[k - 1]->lat_p50);
            }
        }
        a = b;
    }
    t->note = "series that differ only in batch size (the rest of their names alike), each"
              " group by batch. Items/s x and p50 x: against the next smaller batch of the group;"
              " a step pays where its throughput gain outweighs the latency it adds";
    return t;
}

/* between_table's columns, in the order it declares them (asserted there). */
enum {
    BT_PHASE,
    BT_SHORT,
    BT_SERIES,
    BT_GAPS,
    BT_THREADS,
    BT_BETWEEN_P50_NS,
    BT_BETWEEN_TOTAL_NS,
    BT_BETWEEN_PCT,
    BT_GPU_IDLE_BETWEEN_NS,
    BT_GPU_IDLE_BETWEEN_PCT,
    BT_DATA_LOADING_NS,
    BT_OTHER_HOST_NS,
    BT_NCOLS
};

/* Between iterations: every series whose iterations had any time between them (between.c);
 * shown in text where some series spent BETWEEN_SHOWN_PCT of its wall time there, in gaps of
 * p50 BETWEEN_SHOWN_NS or more, or in long gaps among short ones (series_between_waits: a
 * Python loop's own few microseconds are not input work, even around a tiny model). */
#define BETWEEN_SHOWN_PCT 5.0
#define BETWEEN_SHOWN_NS  50000

static struct table *between_table(const struct run_phases *p)
{
    struct table *t = table_new("between", "Between iterations (host time from the end of one"
                                           " steady iteration to the next)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "gaps", "Gaps", COL_INT);
    table_col(t, "between_threads", NULL, COL_INT); /* the threads they are on */
    table_col(t, "between_p50_ns", "p50", COL_NS);
    table_col(t, "between_total_ns", "Total", COL_NS);
    table_col(t, "between_pct", "Wall %", COL_PCT);
    table_col(t, "gpu_idle_between_ns", "GPU idle", COL_NS);
    table_col(t, "gpu_idle_between_pct", "Idle %", COL_PCT);
    /* The DataLoader's share in text only where the run has one (input_waits). */
    int data = 0;
    for (int i = 0; i < p->series.n; i++) data |= p->series.v[i].gap_data >= 0;
    table_col(t, "data_loading_ns", data ? "DataLoader" : NULL, COL_NS);
    table_col(t, "other_host_ns", data ? "Other" : NULL, COL_NS);
    assert(t->ncols == BT_NCOLS);
    int shown = 0;
    const struct series_info *most = NULL; /* the most time between, on several threads */
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        if (!s->gaps) continue;
        table_row(t);
        phase_cells(t, &p->v[s->phase], BT_PHASE, BT_SHORT);
        table_set_text(t, BT_SERIES, s->name[0] ? s->name : "(unnamed)");
        table_set_int(t, BT_GAPS, s->gaps);
        table_set_int(t, BT_THREADS, s->gap_threads);
        if (s->gap_threads > 1 && (!most || s->gap_total > most->gap_total)) most = s;
        table_set_int(t, BT_BETWEEN_P50_NS, s->gap_p50);
        table_set_int(t, BT_BETWEEN_TOTAL_NS, s->gap_total);
        table_set_num(t, BT_BETWEEN_PCT, series_between_pct(s));
        if (s->gap_gpu_busy >= 0 && s->gap_total > 0) {
            table_set_int(t, BT_GPU_IDLE_BETWEEN_NS, s->gap_total - s->gap_gpu_busy);
            table_set_num(t, BT_GPU_IDLE_BETWEEN_PCT,
                          100.0 * (double)(s->gap_total - s->gap_gpu_busy) / (double)s->gap_total);
        }
        if (s->gap_data >= 0) {
            table_set_int(t, BT_DATA_LOADING_NS, s->gap_data);
            table_set_int(t, BT_OTHER_HOST_NS, s->gap_total - s->gap_data);
        }
        shown |= series_between_waits(s, BETWEEN_SHOWN_PCT, BETWEEN_SHOWN_NS);
    }
    t->quiet = !shown;
    t->note = data ? "Wall %: of the series' steady iterations and the time after them; GPU idle:"
                     " the part of that time no kernel of the phase ran ('-': no kernels"
                     " recorded); DataLoader: the part spent waiting for a DataLoader's next"
                     " batch, Other: the rest (input preparation, host post-processing)"
                   : "Wall %: of the series' steady iterations and the time after them; GPU idle:"
                     " the part of that time no kernel of the phase ran ('-': no kernels"
                     " recorded). Input preparation, data loading, host post-processing and a"
                     " server's wait for requests show here";
    /* A pool's workers wait side by side: their gaps summed passed the run's wall time (18.8 s
     * in a 12.2 s server run, a fresh-eyes check), said so where it can be. */
    if (most)
        t->note = pool_printf("%s. Total: every thread's gaps summed (%s: %d threads, waiting side"
                              " by side, so its Total may pass the run's wall time)",
                              t->note, most->name[0] ? most->name : "(unnamed)", most->gap_threads);
    return t;
}

/* iterations_table's columns, in the order it declares them (asserted there). */
enum {
    IT_PHASE,
    IT_SHORT,
    IT_SERIES,
    IT_ID,
    IT_START_NS,
    IT_HOST_NS,
    IT_LATENCY_NS,
    IT_BATCH,
    IT_STEADY,
    IT_SOURCE,
    IT_CAPTURED,
    IT_NCOLS
};

/* Every iteration the report counts, where it begins and ends and how it was found (JSON and
 * CSV; text only with --section iterations): a detected one can be checked against the code.
 * rows 0: its columns alone, where no output reads its rows (report_opts.quiet_rows_unread). */
static struct table *iterations_table(const struct run_phases *p, int rows)
{
    struct table *t = table_new("iterations", "Iterations (each one the report counts)");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    table_col(t, "id", "Id", COL_INT);
    table_col(t, "start_ns", "Start", COL_NS);
    table_col(t, "host_ns", "Host", COL_NS);
    table_col(t, "latency_ns", "Latency", COL_NS);
    table_col(t, "batch", "Batch", COL_INT);
    table_col(t, "steady", "Steady", COL_INT);
    table_col(t, "source", "Source", COL_TEXT);
    table_col(t, "captured", "Captured", COL_INT); /* its operators recorded, set apart */
    assert(t->ncols == IT_NCOLS);
    for (size_t k = 0; rows && k < p->niters; k++) {
        const struct run_iter *x = &p->iters[k];
        table_row(t);
        phase_cells(t, &p->v[x->phase], IT_PHASE, IT_SHORT);
        if (x->series >= 0) {
            const char *name = p->series.v[x->series].name;
            table_set_text(t, IT_SERIES, name[0] ? name : "(unnamed)");
        }
        if (x->id) table_set_int(t, IT_ID, x->id);
        table_set_int(t, IT_START_NS, x->start);
        table_set_int(t, IT_HOST_NS, x->host);
        table_set_int(t, IT_LATENCY_NS, x->lat);
        if (x->batch >= 0) table_set_int(t, IT_BATCH, x->batch);
        table_set_int(t, IT_STEADY, x->steady);
        table_set_text(t, IT_SOURCE, iterations_source_name(p, x));
        table_set_int(t, IT_CAPTURED, x->captured);
    }
    t->quiet = 1;
    t->note = "Id: iterations.id in the database (none: detected by the report); Start: ns since"
              " the run began; a mark wins over the module calls inside it; Captured: its every"
              " operator call was recorded, which made it slower, so it is left out of the"
              " latencies (Steady 0) though the phase's steady iterations count it";
    return t;
}

int section_series(struct sqlite3 *db, const struct run_phases *p, int quiet_rows,
                   struct table **out)
{
    out[0] = series_table(db, p);
    out[1] = sweep_table(p);
    out[2] = between_table(p);
    out[3] = iterations_table(p, quiet_rows);
    return 4;
}

/* A pair's verdict (struct pair_verdict) after its ratio: ", no verdict: X shifted ..." where a
 * shift withholds it; ", the same within 1%", ", no clear difference", or ", faster (95%: a-bx,
 * one run)" (better NULL: " (95%: ...)" alone, a rate's); ", more than X's shift ..." beside a
 * verdict a shift did not withhold; "" without a band. Returns what it wrote. */
static size_t pair_words(const struct pair_verdict *pv, const char *better, const char *worse,
                         char *out, size_t n)
{
    if (!n) return 0;
    out[0] = 0;
    char name[48] = "", u[32] = "", t[32] = "";
    if (pv->shifted) {
        fmt_label_cut(name, sizeof name, pv->shifted->name[0] ? pv->shifted->name : "(unnamed)",
                      40);
        fmt_ns(u, sizeof u, (double)pv->shift_before);
        fmt_ns(t, sizeof t, (double)pv->shift_after);
    }
    const char *word = pv->v == VERDICT_FASTER ? better : worse;
    int w = 0;
    if (pv->withheld)
        w = snprintf(out, n, ", no verdict: %s shifted %s -> %s mid-run", name, u, t);
    else if (pv->has_band) {
        w = pv->v == VERDICT_SAME ? snprintf(out, n, ", the same within 1%%")
            : pv->v == VERDICT_UNCLEAR
                ? snprintf(out, n, ", no clear difference")
                : snprintf(out, n, "%s%s (95%%: %.2f-%.2fx, one run)", word ? ", " : "",
                           word ? word : "", pv->lo, pv->hi);
        int m = pv->shifted && w >= 0 && (size_t)w < n
                    ? snprintf(out + w, n - (size_t)w, ", more than %s's shift %s -> %s mid-run",
                               name, u, t)
                    : 0;
        if (m > 0) w += m;
    }
    return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

/* ", no clear difference" or ", faster (95%: 1.37-1.52x, one run)": what the band of fast's
 * steady latencies against slow's says (series_pair_verdict), as the Fastest phase line says it
 * (the Series line; the inference_mode line per series);
 * ", no verdict: b shifted 520us -> 601us mid-run" where either shifted level by as much as the
 * difference (", faster (95%: 30.10-41.20x, one run), more than b's shift 800us -> 973us
 * mid-run" where not); "" where either has too few iterations for a band. Returns what it
 * wrote. */
size_t series_pair_words(const struct series_info *fast, const struct series_info *slow, char *out,
                         size_t n)
{
    struct pair_verdict pv;
    series_pair_verdict(fast, slow, &pv);
    return pair_words(&pv, "faster", "slower", out, n);
}

/* The Series line: per phase with several configurations (series.c picks them), the fastest
 * configuration at one batch size against the slowest, then the batch that gives the most
 * items/s against the smallest batch of the same configuration, and against the batch with the
 * most after it, each with its band where it has one (does the best batch pay?). */
static void series_line(const struct run_phases *p, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n && o + 300 < n; i++) {
        struct series_pick k;
        if (!series_pick(p, i, &k)) continue;
        char label[32], x[32], y[32];
        phase_short_label(&p->v[i], label, sizeof label);
        o += (size_t)snprintf(buf + o, n - o, "%s%s: ", o ? "; " : "", label);
        if (k.fast) {
            fmt_ns(x, sizeof x, (double)k.fast->lat_p50);
            fmt_ns(y, sizeof y, (double)k.slow->lat_p50);
            char fast[48], slow[48]; /* long names cut on a character, kept apart */
            fmt_label_cut(fast, sizeof fast, k.fast->name[0] ? k.fast->name : "(unnamed)", 40);
            fmt_label_cut(slow, sizeof slow, k.slow->name[0] ? k.slow->name : "(unnamed)", 40);
            double r = (double)k.slow->lat_p50 / (double)k.fast->lat_p50;
            o += (size_t)snprintf(buf + o, n - o, "%s fastest, p50 %s: %.2fx %s (%s)", fast, x, r,
                                  slow, y);
            /* With the band and verdict of every speed-up (band.c): a 1% difference read as the
             * answer to "is int8 worth it" (a fresh-eyes check: 80.73 against 81.65 ms). */
            if (o < n) o += series_pair_words(k.fast, k.slow, buf + o, n - o);
        }
        if (k.most && o + 300 < n) {
            fmt_ns(x, sizeof x, (double)k.most->lat_p50);
            struct pair_verdict rv;
            char w[96] = "";
            if (k.next) series_rate_verdict(k.most, k.next, &rv);
            if (k.next == k.small) pair_words(&rv, NULL, "fewer", w, sizeof w);
            o +=
                (size_t)snprintf(buf + o, n - o,
                                 "%s%s%sbatch %lld gives the most items/s, %.2fx batch %lld's%s, at"
                                 " %.2fx its p50 (%s)",
                                 k.fast ? "; " : "", k.most->rest, k.most->rest[0] ? ": " : "",
                                 (long long)k.most->batch, k.items_ratio, (long long)k.small->batch,
                                 w, (double)k.most->lat_p50 / (double)k.small->lat_p50, x);
            if (k.next && k.next != k.small && o < n) {
                pair_words(&rv, NULL, "fewer", w, sizeof w);
                o += (size_t)snprintf(buf + o, n - o, "; %.2fx batch %lld's%s", rv.ratio,
                                      (long long)k.next->batch, w);
            }
        }
    }
}

static void fill_series(const struct section_ctx *c, struct summary_out *so)
{
    char buf[1024];
    series_line(c->p, buf, sizeof buf);
    summary_set(so, buf);
}

static const struct summary_line line_series = {
    .key = "series", .title = "Series", .rank = 20, .fill = fill_series};
static const struct summary_line *const series_summary[] = {&line_series, NULL};

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int series_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    return section_series(c->db, c->p, !c->o->quiet_rows_unread, out);
}

/* By phase and name (the mark's text and the settings that changed), so one configuration is
 * compared with itself; a series one run lacks is listed, not dropped. */
static const struct section_compare series_compare = {
    .spec = {.key = "series",
             .match = {"phase", "series"},
             .show = {"Phase"},
             .figs = {{"steady_iterations", 1, 0},
                      {"throughput_per_s", 0, 1},
                      {"items_per_s", 0, 1},
                      {"latency_p50_ns", 0, 1},
                      {"latency_p95_ns", 0, 1},
                      {"between_pct", 0, 0},
                      {"between_p50_ns", 0, 0},
                      {"peak_allocated_bytes", 0, 0},
                      {"delivered_per_s", 0, 1},
                      {"mj_per_item", 0, 1},
                      {"batch", 0, 0},
                      {"cpu_per_iteration_ns", 0, 0},
                      {"off_cpu_per_iteration_ns", 0, 0},
                      {"gpu_time_per_iteration_ns", 0, 0}},
             .what = "series"},
    .title = "Series: latency and throughput, new / base (matched by phase and name)",
    .cols = {{"Phase", NULL},
             {"series", "Series"},
             {"Change", NULL},
             {"latency_p50_ns_base", "p50 base"},
             {"latency_p50_ns_new", "p50 new"},
             {"latency_p50_ns_delta", "Delta"},
             {"latency_p50_ns_ratio", "Latency"},
             {"verdict", "Verdict"}},
    .verdicts = 1,
    .title2 = "Series: loop rate, waits for data included, new / base",
    .cols2 = {{"Phase", NULL},
              {"series", "Series"},
              {"between_p50_ns_base", "Between base"},
              {"between_p50_ns_new", "Between new"},
              {"delivered_per_s_ratio", "Loop rate"},
              {"delivered_verdict", "Verdict"}},
};

const struct report_section sec_series = {.summary = series_summary,
                                          .key = "series",
                                          .build = series_build,
                                          .shown_empty = 0,
                                          .compare = &series_compare};
