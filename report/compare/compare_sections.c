/*
 * compare_sections.c: the sections `infprof compare` matches, in the report's order
 * (report/sections/registry.c): each by its descriptor's spec and text view (series, memory,
 * energy, memory operations, CUDA API, NVTX: sections.h), and three here, whose views depend on
 * the options or on both runs: phases by label (throughput and latency with new/base ratios, GPU
 * time, peak memory, the pooled-series note), kernels by name (and phase; --phase) and the
 * operators (compare_operators.c). The data tables carry every figure (compare_diff.c); text
 * views pick what fits in 100 columns.
 */
#include "compare.h"

#include <stdio.h>
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

static const struct diff_fig kernel_figs[] = {
    {"total_ns", 1, 0}, {"instances", 1, 0}, {"time_pct", 1, 0}, {"avg_ns", 0, 0},
    {"med_ns", 0, 0},   {"min_ns", 0, 0},    {"max_ns", 0, 0},   {"stddev_ns", 0, 0},
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
    struct table *d = t[k++] = compare_verdicts(diff(&phases_spec, b, n, 0), "phases", b, n, NULL);
    static const struct view_col ph1[] = {{"Phase", NULL},
                                          {"Change", NULL},
                                          {"latency_p50_ns_base", "p50 base"},
                                          {"latency_p50_ns_new", "p50 new"},
                                          {"latency_p50_ns_delta", "Delta"},
                                          {"latency_p50_ns_ratio", "Latency"},
                                          {"throughput_per_s_ratio", "Throughput"},
                                          {"verdict", "Verdict"}};
    static const struct view_col ph2[] = {{"Phase", NULL},
                                          {"gpu_time_ns_base", "GPU base"},
                                          {"gpu_time_ns_new", "GPU new"},
                                          {"gpu_time_ns_delta", "GPU delta"},
                                          {"gpu_time_ns_pct", "Delta%"},
                                          {"peak_allocated_bytes_base", "Peak base"},
                                          {"peak_allocated_bytes_new", "Peak new"},
                                          {"peak_allocated_bytes_pct", "Peak delta%"}};
    t[k++] = VIEW(d, "Phases: latency and throughput, new / base (above 1.00x: more)", ph1, 1);
    char pooled[1024];
    pooled_phases(b, n, pooled, sizeof pooled);
    if (!d->nrows)
        t[k - 1]->note = "no libtorch phase was seen in either run";
    else if (pooled[0])
        t[k - 1]->note =
            pool_printf("pooling several configurations: %s; no ratio: their p50s mix them"
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

/* A section compared by its descriptor: the matched rows and their text view. */
static int compare_generic(const struct section_compare *sc, struct compare_side *b,
                           struct compare_side *n, const struct report_opts *o,
                           const struct series_renames *series_rn, struct table **t)
{
    struct table *d;
    struct series_renames rn = {0};
    int by_series = 0; /* rows matched by series too (operators per series) */
    for (int i = 0; i < 3 && sc->spec.match[i]; i++)
        by_series |= !strcmp(sc->spec.match[i], "series");
    if (sc->verdicts) { /* series: matched across a setting that renamed them, with verdicts */
        const struct table *sb = side_table(b, sc->spec.key);
        struct table *sn = series_match_renames(sb, side_table(n, sc->spec.key), &rn);
        d = compare_verdicts(diff_section(&sc->spec, sb, sn, sc->top ? o->top : 0), sc->spec.key, b,
                             n, &rn);
        table_free(sn);
    } else if (by_series && series_rn->n) {
        /* The series as the Series table matched them: a renamed series' rows (its operators)
         * under the base run's name, not all removed and all added. */
        struct table *sn = series_renamed(side_table(n, sc->spec.key), series_rn);
        d = diff_section(&sc->spec, side_table(b, sc->spec.key), sn, sc->top ? o->top : 0);
        table_free(sn);
        rn = *series_rn;
    } else {
        d = diff(&sc->spec, b, n, sc->top ? o->top : 0);
    }
    t[0] = d;
    int nc = 0;
    while (nc < (int)(sizeof sc->cols / sizeof sc->cols[0]) && sc->cols[nc].name) nc++;
    t[1] = view(d, sc->title, sc->cols, nc, sc->always);
    if (!d->nrows && sc->empty_note) t[1]->note = sc->empty_note;
    int k = 2;
    if (sc->title2) {
        int n2 = 0;
        while (n2 < (int)(sizeof sc->cols2 / sizeof sc->cols2[0]) && sc->cols2[n2].name) n2++;
        t[k++] = view(d, sc->title2, sc->cols2, n2, sc->always);
    }
    for (int i = 0; i < rn.n; i++) {
        char ph[64];
        snprintf(ph, sizeof ph, "%s", rn.phase[i]);
        t[1]->note =
            pool_printf("%s%s%s: '%s' (base) matched to '%s' (new), each the only"
                        " series of its phase without a partner by name",
                        t[1]->note ? t[1]->note : "", t[1]->note ? "; " : "", pool_escaped(ph, 40),
                        pool_escaped(rn.base[i], 60), pool_escaped(rn.new[i], 60));
    }
    return k;
}

int compare_sections(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                     const char *phase, struct table **t, int max)
{
    int k = 0;
    /* The series renamed by a setting, once, for every section matched by series. */
    struct series_renames rn = {0};
    table_free(series_match_renames(side_table(b, "series"), side_table(n, "series"), &rn));
    /* The report's sections in its order: three by hand here, the others by descriptor. */
    for (int i = 0; i < report_section_count; i++) {
        const struct report_section *s = report_sections[i];
        if (max - k < SECTION_MAX_TABLES)
            cli_fail("internal: more compare tables than COMPARE_OUT_TABLES hold, at section %s",
                     s->key);
        if (!strcmp(s->key, "phases"))
            k += compare_phase_tables(b, n, t + k);
        else if (!strcmp(s->key, "kernels"))
            k += compare_kernel_tables(b, n, o, phase, t + k);
        else if (!strcmp(s->key, "operators"))
            k += compare_operators(b, n, o, t + k);
        else if (s->compare)
            k += compare_generic(s->compare, b, n, o, &rn, t + k);
    }
    return k;
}
