/*
 * compare_sections.c: which sections `infprof compare` matches, on what, and how text shows them:
 * phases by label (throughput and latency with new/base ratios, GPU time, peak memory), series
 * by phase and name (the same figures per configuration), memory
 * by phase and device, energy by phase and device (J/iter, items/J, power, clocks), kernels by name
 * (and phase), CUDA API functions, memory operations and
 * NVTX ranges by name, each ordered by the absolute change of its time. The data tables carry
 * every figure (compare_diff.c); text views pick what fits in 100 columns.
 */
#include "compare.h"

#include <string.h>

/* Figures: {column, additive (a missing row counts as 0), ratio}. */
static const struct diff_spec phases_spec = {
    .key = "phases",
    .match = {"label"},
    .show = {"Phase"},
    .figs = {{"iterations", 1, 0},
             {"throughput_per_s", 0, 1},
             {"latency_p50_ns", 0, 1},
             {"latency_p95_ns", 0, 1},
             {"latency_p99_ns", 0, 0},
             {"kernels", 1, 0},
             {"gpu_time_ns", 1, 0},
             {"peak_allocated_bytes", 0, 0}},
    .what = "phases",
};

/* Series (sec_series.c): by phase and name (the mark's text and the settings that changed), so
 * one configuration is compared with itself; a series one run lacks is listed, not dropped. */
static const struct diff_spec series_spec = {
    .key = "series",
    .match = {"phase", "series"},
    .show = {"Phase"},
    .figs = {{"steady_iterations", 1, 0},
             {"throughput_per_s", 0, 1},
             {"items_per_s", 0, 1},
             {"latency_p50_ns", 0, 1},
             {"latency_p95_ns", 0, 1},
             {"between_pct", 0, 0}},
    .what = "series",
};

static const struct diff_spec memory_spec = {
    .key = "memory",
    .match = {"label", "device"},
    .show = {"Phase"},
    .figs = {{"peak_allocated_bytes", 0, 0},
             {"peak_reserved_bytes", 0, 0},
             {"reserved_minus_allocated_at_peak_bytes", 0, 0},
             {"allocations", 1, 0},
             {"allocated_bytes", 1, 0},
             {"largest_bytes", 0, 0}},
    .what = "rows",
};

/* Energy (sec_energy.c): per phase and device; the energy ratio beside the throughput one. */
static const struct diff_spec energy_spec = {
    .key = "energy",
    .match = {"phase", "device"},
    .figs = {{"j_per_iteration", 0, 1},
             {"items_per_j", 0, 1},
             {"avg_power_w", 0, 1},
             {"sm_clock_mhz", 0, 0},
             {"throttled_pct", 0, 0}},
    .what = "rows",
};

static const struct diff_fig kernel_figs[] = {
    {"total_ns", 1, 0}, {"instances", 1, 0}, {"time_pct", 1, 0}, {"avg_ns", 0, 0},
    {"med_ns", 0, 0},   {"min_ns", 0, 0},    {"max_ns", 0, 0},   {"stddev_ns", 0, 0},
};

static const struct diff_spec api_spec = {
    .key = "cuda_api",
    .match = {"name"},
    .figs = {{"total_ns", 1, 0},
             {"calls", 1, 0},
             {"avg_ns", 0, 0},
             {"med_ns", 0, 0},
             {"max_ns", 0, 0},
             {"errors", 1, 0},
             {"latency_med_ns", 0, 0}},
    .sort = "total_ns",
    .what = "API functions",
};

static const struct diff_spec memops_time_spec = {
    .key = "memory_ops_time",
    .match = {"operation", "host_memory"},
    .show = {"Operation"},
    .figs =
        {{"total_ns", 1, 0}, {"count", 1, 0}, {"avg_ns", 0, 0}, {"med_ns", 0, 0}, {"max_ns", 0, 0}},
    .sort = "total_ns",
    .what = "operations",
};

static const struct diff_spec memops_size_spec = {
    .key = "memory_ops_size",
    .match = {"operation", "host_memory"},
    .show = {"Operation"},
    .figs = {{"total_bytes", 1, 0},
             {"count", 1, 0},
             {"avg_bytes", 0, 0},
             {"med_bytes", 0, 0},
             {"max_bytes", 0, 0}},
    .sort = "total_bytes",
    .what = "operations",
};

static const struct diff_spec nvtx_spec = {
    .key = "nvtx",
    .match = {"range", "style"},
    .figs = {{"total_ns", 1, 0},
             {"instances", 1, 0},
             {"avg_ns", 0, 0},
             {"med_ns", 0, 0},
             {"gpu_kernels", 1, 0},
             {"gpu_time_ns", 1, 0}},
    .sort = "total_ns",
    .what = "range names",
};

static struct table *diff(const struct diff_spec *s, struct compare_side *b, struct compare_side *n,
                          int top)
{
    return diff_section(s, side_table(b, s->key), side_table(n, s->key), top);
}

/* One text view; an empty one stays out of text unless `always`. */
static struct table *view(const struct table *d, const char *title, const struct view_col *c,
                          int nc, int always)
{
    struct table *v = table_view(d, title, c, nc);
    v->optional = !always;
    return v;
}

#define VIEW(d, title, cols, always) view(d, title, cols, (int)(sizeof cols / sizeof *cols), always)

/* The phases that pool several series in either run ("a (base), b (new)"), for the Phases view's
 * note: their ratios mix configurations. */
static void pooled_phases(struct compare_side *b, struct compare_side *n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    struct compare_side *sides[2] = {b, n};
    for (int k = 0; k < 2; k++) {
        const struct table *t = side_table(sides[k], "series");
        for (int r = 0; r < t->nrows; r++) {
            const struct cell *c = table_cell(t, r, "Phase"), *prev; /* the short label */
            if (!c || !c->s) continue;
            int count = 0, first = 1;
            for (int q = 0; q < t->nrows; q++) {
                prev = table_cell(t, q, "Phase");
                if (prev && prev->s && !strcmp(prev->s, c->s)) {
                    count++;
                    if (q < r) first = 0;
                }
            }
            if (count > 1 && first && len + 80 < cap)
                len += (size_t)snprintf(out + len, cap - len, "%s%s in the %s run (%d series)",
                                        len ? ", " : "", c->s, k ? "new" : "base", count);
        }
    }
}

/* The phases, two views of one diff (throughput and latency; GPU time and memory). */
static int compare_phase_tables(struct compare_side *b, struct compare_side *n, struct table **t)
{
    int k = 0;
    struct table *d = t[k++] = diff(&phases_spec, b, n, 0);
    static const struct view_col ph1[] = {{"Phase", NULL},
                                          {"Change", NULL},
                                          {"throughput_per_s_base", "Iter/s base"},
                                          {"throughput_per_s_new", "Iter/s new"},
                                          {"throughput_per_s_ratio", "Throughput"},
                                          {"latency_p50_ns_base", "p50 base"},
                                          {"latency_p50_ns_new", "p50 new"},
                                          {"latency_p50_ns_ratio", "Latency"}};
    static const struct view_col ph2[] = {{"Phase", NULL},
                                          {"gpu_time_ns_base", "GPU base"},
                                          {"gpu_time_ns_new", "GPU new"},
                                          {"gpu_time_ns_delta", "GPU delta"},
                                          {"gpu_time_ns_pct", "Delta%"},
                                          {"peak_allocated_bytes_base", "Peak base"},
                                          {"peak_allocated_bytes_new", "Peak new"},
                                          {"peak_allocated_bytes_pct", "Peak delta%"}};
    t[k++] = VIEW(d, "Phases: throughput and latency, new / base (above 1.00x: more)", ph1, 1);
    char pooled[1024];
    pooled_phases(b, n, pooled, sizeof pooled);
    if (!d->nrows)
        t[k - 1]->note = "no libtorch phase was seen in either run";
    else if (pooled[0])
        t[k - 1]->note = pool_printf("pooling several configurations: %s; their ratios mix them"
                                     " (the Series table below compares each one)",
                                     pooled);
    t[k++] = VIEW(d, "Phases: GPU time and peak tensor memory", ph2, 0);

    return k;
}

/* The kernels: by name, or by phase and name; --phase keeps one phase's rows on both sides. */
static int compare_kernel_tables(struct compare_side *b, struct compare_side *n,
                                 const struct report_opts *o, const char *phase, struct table **t)
{
    int k = 0;
    /* Kernels: by name, or by phase and name; --phase keeps one phase's rows on both sides. */
    struct diff_spec ks = {
        .key = "kernels", .match = {"name"}, .sort = "total_ns", .what = "kernel names"};
    memcpy(ks.figs, kernel_figs, sizeof kernel_figs);
    if (o->by_phase && !phase) {
        ks.match[0] = "phase", ks.match[1] = "name";
        ks.show[0] = "Phase";
        ks.group = "phase";
    }
    struct table *kb = side_table(b, "kernels"), *kn = side_table(n, "kernels");
    if (phase) {
        kb = table_where(kb, "phase", phase);
        kn = table_where(kn, "phase", phase);
    }
    struct table *d = t[k++] = diff_section(&ks, kb, kn, o->top);
    if (phase) table_free(kb), table_free(kn);
    static const struct view_col kcols[] = {{"total_ns_base", "GPU base"},
                                            {"total_ns_new", "GPU new"},
                                            {"total_ns_delta", "Delta"},
                                            {"total_ns_pct", "Delta%"},
                                            {"instances_base", "Calls base"},
                                            {"instances_new", "Calls new"},
                                            {"Change", NULL},
                                            {"name", "Name"}};
    static const struct view_col kphase[] = {{"Phase", NULL},
                                             {"total_ns_base", "GPU base"},
                                             {"total_ns_new", "GPU new"},
                                             {"total_ns_delta", "Delta"},
                                             {"total_ns_pct", "Delta%"},
                                             {"Change", NULL},
                                             {"name", "Name"}};
    const char *title = phase ? pool_printf("CUDA kernels of phase %s, by change in GPU time",
                                            pool_escaped(phase, 40))
                        : o->by_phase ? "CUDA kernels by phase, by change in GPU time"
                                      : "CUDA kernels, by change in GPU time";
    if (o->nvtx)
        title = pool_printf("%s, inside NVTX ranges '%s'", title, pool_escaped(o->nvtx, 30));
    if (o->by_phase && !phase)
        t[k++] = VIEW(d, title, kphase, 1);
    else
        t[k++] = VIEW(d, title, kcols, 1);

    return k;
}

int compare_sections(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                     const char *phase, struct table **t)
{
    int k = 0;
    k += compare_phase_tables(b, n, t + k);
    struct table *d;

    d = t[k++] = diff(&series_spec, b, n, 0);
    static const struct view_col se[] = {{"Phase", NULL},
                                         {"series", "Series"},
                                         {"Change", NULL},
                                         {"latency_p50_ns_base", "p50 base"},
                                         {"latency_p50_ns_new", "p50 new"},
                                         {"latency_p50_ns_ratio", "Latency"},
                                         {"throughput_per_s_ratio", "Throughput"}};
    t[k++] =
        VIEW(d, "Series: latency and throughput, new / base (matched by phase and name)", se, 0);

    d = t[k++] = diff(&memory_spec, b, n, 0);
    static const struct view_col mem[] = {{"Phase", NULL},
                                          {"device", "Device"},
                                          {"Change", NULL},
                                          {"peak_allocated_bytes_base", "Peak base"},
                                          {"peak_allocated_bytes_new", "Peak new"},
                                          {"peak_allocated_bytes_delta", "Delta"},
                                          {"peak_allocated_bytes_pct", "Delta%"}};
    t[k++] = VIEW(d, "Tensor memory by phase and device: peak allocated", mem, 0);

    d = t[k++] = diff(&energy_spec, b, n, 0);
    static const struct view_col en[] = {{"phase", "Phase"},
                                         {"device", "Device"},
                                         {"j_per_iteration_base", "J/iter base"},
                                         {"j_per_iteration_new", "J/iter new"},
                                         {"j_per_iteration_ratio", "Energy"},
                                         {"avg_power_w_ratio", "Power"},
                                         {"sm_clock_mhz_base", "SM base"},
                                         {"sm_clock_mhz_new", "SM new"}};
    t[k++] =
        VIEW(d, "Energy per iteration by phase and device, new / base (below 1.00x: less)", en, 0);

    k += compare_kernel_tables(b, n, o, phase, t + k);

    d = t[k++] = diff(&api_spec, b, n, o->top);
    static const struct view_col api[] = {{"total_ns_base", "Base"},
                                          {"total_ns_new", "New"},
                                          {"total_ns_delta", "Delta"},
                                          {"total_ns_pct", "Delta%"},
                                          {"calls_base", "Calls base"},
                                          {"calls_new", "Calls new"},
                                          {"Change", NULL},
                                          {"name", "Name"}};
    t[k++] = VIEW(d, "CUDA API calls (host time)", api, 0);

    static const struct view_col ops[] = {{"Operation", NULL},        {"total_ns_base", "Base"},
                                          {"total_ns_new", "New"},    {"total_ns_delta", "Delta"},
                                          {"total_ns_pct", "Delta%"}, {"count_base", "Count base"},
                                          {"count_new", "Count new"}, {"Change", NULL}};
    d = t[k++] = diff(&memops_time_spec, b, n, o->top);
    t[k++] = VIEW(d, "CUDA memory operations by time", ops, 0);
    static const struct view_col size[] = {
        {"Operation", NULL},           {"total_bytes_base", "Base"},
        {"total_bytes_new", "New"},    {"total_bytes_delta", "Delta"},
        {"total_bytes_pct", "Delta%"}, {"Change", NULL}};
    d = t[k++] = diff(&memops_size_spec, b, n, o->top);
    t[k++] = VIEW(d, "CUDA memory operations by size", size, 0);

    d = t[k++] = diff(&nvtx_spec, b, n, o->top);
    static const struct view_col nv[] = {{"total_ns_base", "Base"},
                                         {"total_ns_new", "New"},
                                         {"total_ns_delta", "Delta"},
                                         {"total_ns_pct", "Delta%"},
                                         {"gpu_time_ns_base", "GPU base"},
                                         {"gpu_time_ns_new", "GPU new"},
                                         {"Change", NULL},
                                         {"range", "Range"}};
    t[k++] = VIEW(d, "NVTX ranges (CPU time)", nv, 0);
    k += compare_operators(b, n, o, t + k);
    return k;
}
