/*
 * html_charts.c: the HTML report's charts, drawn (svg.c) from the same data tables every format
 * renders: the speed-up of each phase against the baseline with its 95% band, every iteration's
 * latency over time, the latency distribution, the batch sweep; for compare, each series' and
 * phase's speed-up between the runs (html_bars.c draws the rest). Each chart has its text
 * equivalent under it, and where there is no data it says why instead of drawing empty axes.
 */
#include "html_charts.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_SLOTS 8   /* series drawn apart (colours, legend); more share the last colour */
#define DIST_MAX    12  /* latency distributions drawn, one chart a series */
#define BUCKETS     480 /* an iteration chart draws at most this many marks per series */

/* ---- speed-ups with their bands (the report's phases, compare's series and phases) ----------- */

void html_forest(FILE *out, const char *id, const char *title, struct band_row *v, int n,
                 const char *xname)
{
    double lo = 1, hi = 1;
    for (int i = 0; i < n; i++) {
        double a = isnan(v[i].lo) ? v[i].r : v[i].lo, b = isnan(v[i].hi) ? v[i].r : v[i].hi;
        lo = fmin(lo, a), hi = fmax(hi, b);
        for (int j = 0; j < v[i].nruns; j++)
            lo = fmin(lo, v[i].runs[j]), hi = fmax(hi, v[i].runs[j]);
    }
    /* The verdicts wrapped in the room right of the plot (compare's "no verdict: the new run's
     * iterations s" was clipped at the chart's edge): rows as tall as the longest needs. */
    const double room = 190;
    int lines = 1;
    for (int i = 0; i < n; i++)
        if (v[i].verdict && svg_text_lines(v[i].verdict, room) > lines)
            lines = svg_text_lines(v[i].verdict, room);
    double rowh = lines <= 2 ? 26 : 12 * lines + 4;
    struct svg_plot p;
    svg_begin(&p, out, id, title, CHART_W, 60 + (int)(rowh * n));
    p.left = 280, p.right = CHART_W - 200;
    p.x.lo = lo / 1.08, p.x.hi = hi * 1.08, p.x.log = 1;
    p.y.lo = n, p.y.hi = 0;
    svg_axes(&p, SVG_RATIO, xname, SVG_NUM, "");
    svg_line(&p, 1, 0, 1, n, -1, 1, 1);
    char text[TEXT_MAX] = "", a[32], b[32];
    for (int i = 0; i < n; i++) {
        double y = i + 0.5;
        if (!isnan(v[i].lo)) svg_line(&p, v[i].lo, y, v[i].hi, y, i % SVG_COLOURS, 3, 0);
        for (int j = 0; j < v[i].nruns; j++) /* each run, hollow, under the point */
            svg_point(&p, v[i].runs[j], y, i % SVG_COLOURS, 1, v[i].name);
        svg_point(&p, v[i].r, y, i % SVG_COLOURS, 0, v[i].name);
        html_row_label(&p, p.x.lo, y, v[i].name);
        svg_text_wrapped(&p, p.x.hi, y, room, v[i].verdict ? v[i].verdict : "");
        snprintf(a, sizeof a, "%.2fx", v[i].r);
        if (isnan(v[i].lo))
            b[0] = 0;
        else
            snprintf(b, sizeof b, " (95%%: %.2f-%.2fx)", v[i].lo, v[i].hi);
        html_add(text, "%s%s: %s%s, %s", i ? "; " : "", v[i].name, a, b, v[i].verdict);
    }
    svg_end(&p, text);
}

static void chart_speedup(FILE *out, struct table **t, int n)
{
    const struct table *ph = table_by_key(t, n, "phases");
    struct band_row v[32];
    memset(v, 0, sizeof v);
    int k = 0, pooled = 0;
    for (int r = 0; ph && r < ph->nrows && k < 32; r++) {
        double x = html_num(ph, r, "throughput_ratio");
        const char *why = html_txt(ph, r, "verdict");
        if (isnan(x)) { /* a phase pooling several series has no ratio (sec_phases.c) */
            pooled += why && !strncmp(why, "no verdict", 10);
            continue;
        }
        snprintf(v[k].name, sizeof v[k].name, "%s%s", html_phase_short(html_txt(ph, r, "label")),
                 html_num(ph, r, "suspect") > 0 ? " (suspect)" : "");
        v[k].r = x, v[k].lo = html_num(ph, r, "throughput_ratio_low");
        v[k].hi = html_num(ph, r, "throughput_ratio_high");
        if (isnan(v[k].hi)) v[k].lo = NAN;
        v[k].verdict = html_txt(ph, r, "verdict");
        k++;
    }
    if (k < 2) {
        svg_none(out, "chart-speedup", "Speed-up against the baseline phase",
                 pooled ? "no chart: the phases pool several series each, so their p50 is of"
                          " none of them (the Series table compares the series)"
                 : k    ? "no chart: one phase ran the model, nothing to hold against it"
                        : "no chart: no phase has steady iterations to hold against a baseline"
                          " (the phase table's note says why)");
        return;
    }
    html_forest(out, "chart-speedup", "Speed-up against the baseline phase, with its 95% band", v,
                k,
                "speed-up: the baseline's p50 latency over the phase's (log scale; 1 = the same)");
}

/* ---- iterations over time and their distribution --------------------------------------------- */

struct group {
    char name[200]; /* "inference/off CNN batch=8", "(suspect)" marked */
    const char *phase, *series;
    int *rows, n; /* its rows of the iterations table, in time order */
};

/* The iterations' series, each with all its rows (two series called in turn interleave). */
static int groups_of(struct table **t, int nt, const struct table *it, struct group *g, int max)
{
    int k = 0;
    for (int r = 0; r < it->nrows; r++) {
        const char *ph = html_txt(it, r, "phase"), *se = html_txt(it, r, "series");
        int q = 0;
        while (q < k && (strcmp(g[q].phase, ph) || strcmp(g[q].series, se))) q++;
        if (q == k) {
            if (k == max) continue;
            g[k].phase = ph, g[k].series = se, g[k].n = 0;
            g[k].rows = malloc((size_t)it->nrows * sizeof *g[k].rows);
            if (!g[k].rows) cli_fail("out of memory");
            /* A phase's one series without a name is the phase's. */
            int unnamed = !se[0] || !strcmp(se, "(unnamed)");
            /* Cut as a text column is, on a character and at a word's edge, the tail kept (a
             * long label's hash is there): a title once ended in half a UTF-8 character. */
            const char *whole =
                pool_printf("%s%s%s%s", html_phase_short(ph), unnamed ? "" : " ", unnamed ? "" : se,
                            html_suspect(t, nt, ph) ? " (suspect)" : "");
            render_label_fit(g[k].name, sizeof g[k].name, whole, 100);
            k++;
        }
        g[q].rows[g[q].n++] = r;
    }
    return k;
}

/* The series' own figures, as the Series table has them (one computation for every output). */
static int series_row(struct table **t, int n, const struct group *g)
{
    const struct table *s = table_by_key(t, n, "series");
    for (int r = 0; s && r < s->nrows; r++)
        if (!strcmp(html_txt(s, r, "phase"), g->phase) &&
            !strcmp(html_txt(s, r, "series"), g->series))
            return r;
    return -1;
}

/* A series' iterations in the Series table's words and numbers (one count in every output):
 * "381 iterations: 5 warm-up, 282 steady, 94 captured (apart from the latencies)". */
static const char *series_counts(const struct table *st, int sr, int n)
{
    double steady = sr >= 0 ? html_num(st, sr, "steady_iterations") : NAN;
    double warm = sr >= 0 ? html_num(st, sr, "warmup_iterations") : NAN;
    double capt = sr >= 0 ? html_num(st, sr, "captured_iterations") : NAN;
    if (isnan(steady) || isnan(warm)) return pool_printf("%d iterations", n);
    if (isnan(capt)) capt = 0;
    const char *c = capt > 0 ? pool_printf(", %.0f captured (apart from the latencies)", capt) : "";
    return pool_printf("%.0f iterations: %.0f warm-up, %.0f steady%s", steady + warm + capt, warm,
                       steady, c);
}

static void chart_latency(FILE *out, struct table **t, int nt, const struct table *it,
                          const struct group *g, int ng)
{
    double t0 = INFINITY, t1 = 0, y0 = INFINITY, y1 = 0;
    for (int r = 0; r < it->nrows; r++) {
        double s = html_num(it, r, "start_ns"), l = html_num(it, r, "latency_ns");
        if (isnan(s) || isnan(l)) continue;
        t0 = fmin(t0, s), t1 = fmax(t1, s), y1 = fmax(y1, l);
        if (l > 0) y0 = fmin(y0, l);
    }
    struct svg_plot p;
    svg_begin(&p, out, "chart-latency", "Latency of every iteration over time", CHART_W, 340);
    p.x.lo = t0, p.x.hi = t1, p.y.lo = 0, p.y.hi = y1;
    /* A first iteration 100x the rest (loading, compiling) would flatten them: log scale. */
    if (y0 > 0 && y1 / y0 > 20)
        p.y.log = 1, p.y.lo = y0 / 1.2, p.y.hi = y1 * 1.2;
    else
        svg_nice(&p.y.lo, &p.y.hi);
    svg_legend_room(&p, ng < CHART_SLOTS ? ng : CHART_SLOTS);
    svg_axes(&p, SVG_NS,
             "time since the run's start (warm-up: rings; found without a mark: squares; slow: red"
             " rings)",
             SVG_NS, p.y.log ? "latency (log scale)" : "latency");
    const struct table *st = table_by_key(t, nt, "series");
    char text[TEXT_MAX] = "", a[32];
    for (int k = 0; k < ng; k++) {
        int c = k < CHART_SLOTS ? k : CHART_SLOTS - 1;
        /* Past the colours, the last is shared: its legend says by how many. */
        if (k < CHART_SLOTS)
            svg_legend(&p, k, c,
                       k == CHART_SLOTS - 1 && ng > CHART_SLOTS
                           ? pool_printf("%s +%d more", g[k].name, ng - k - 1)
                           : g[k].name);
        /* Many iterations: per bucket of them, their range as a line and its middle as a dot. */
        int step = g[k].n > BUCKETS ? (g[k].n + BUCKETS - 1) / BUCKETS : 1;
        for (int i = 0; i < g[k].n; i += step) {
            int m = i + step < g[k].n ? step : g[k].n - i, r = g[k].rows[i];
            double lo = INFINITY, hi = 0, s = html_num(it, r, "start_ns");
            for (int q = i; q < i + m; q++) {
                double l = html_num(it, g[k].rows[q], "latency_ns");
                lo = fmin(lo, l), hi = fmax(hi, l);
            }
            int steady = html_num(it, r, "steady") > 0;
            int shape = !steady ? 1 : strstr(html_txt(it, r, "source"), "detected") ? 2 : 0;
            if (m > 1) svg_line(&p, s, lo, s, hi, c, 1, 0);
            svg_point(&p, s, m > 1 ? (lo + hi) / 2 : lo, c, shape, NULL);
        }
        /* The slow ones (the Slow iterations section's), ringed in red. */
        const struct table *slow = table_by_key(t, nt, "slow_iterations");
        int nslow = 0;
        for (int r = 0; slow && r < slow->nrows; r++) {
            const char *ss = html_txt(slow, r, "series");
            if (strcmp(html_txt(slow, r, "phase"), g[k].phase) ||
                (strcmp(ss, g[k].series) && !(!g[k].series[0] && !strcmp(ss, "(unnamed)"))))
                continue;
            char tip[96], b[32];
            fmt_ns(b, sizeof b, html_num(slow, r, "latency_ns"));
            snprintf(tip, sizeof tip, "slow: #%.0f, %s", html_num(slow, r, "index"), b);
            svg_point(&p, html_num(slow, r, "start_ns"), html_num(slow, r, "latency_ns"), SVG_ALERT,
                      1, tip);
            nslow++;
        }
        int sr = series_row(t, nt, &g[k]);
        double p50 = sr >= 0 ? html_num(st, sr, "latency_p50_ns") : NAN;
        if (isnan(p50))
            snprintf(a, sizeof a, "-");
        else
            fmt_ns(a, sizeof a, p50);
        html_add(text, "%s%s: %s, p50 %s", k ? "; " : "", g[k].name, series_counts(st, sr, g[k].n),
                 a);
        if (nslow) html_add(text, ", %d slow (ringed in red: Slow iterations)", nslow);
    }
    svg_end(&p, text);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void chart_distribution(FILE *out, struct table **t, int nt, const struct table *it,
                               const struct group *g, int ng)
{
    const struct table *st = table_by_key(t, nt, "series");
    for (int k = 0; k < ng && k < DIST_MAX; k++) {
        double *v = malloc((size_t)g[k].n * sizeof *v);
        if (!v) cli_fail("out of memory");
        int m = 0;
        for (int i = 0; i < g[k].n; i++)
            if (html_num(it, g[k].rows[i], "steady") > 0)
                v[m++] = html_num(it, g[k].rows[i], "latency_ns");
        char id[32], title[sizeof g[k].name + 64];
        snprintf(id, sizeof id, "chart-dist-%d", k);
        snprintf(title, sizeof title, "Latency distribution, %.*s (steady iterations)",
                 (int)fmt_utf8_cut(g[k].name, sizeof g[k].name - 1), g[k].name);
        if (m < 3) {
            svg_none(out, id, title, "no chart: fewer than three steady iterations");
            free(v);
            continue;
        }
        qsort(v, (size_t)m, sizeof *v, cmp_double);
        double lo = v[0], hi = v[m - 1];
        if (hi - lo < lo * 0.02) /* (nearly) all alike: a range around them to see it */
            lo *= 0.95, hi = hi * 1.05 + 1;
        int bins[40] = {0}, top = 0;
        for (int i = 0; i < m; i++) {
            int b = (int)((v[i] - lo) / (hi - lo) * 40);
            bins[b > 39 ? 39 : b]++;
        }
        for (int b = 0; b < 40; b++) top = bins[b] > top ? bins[b] : top;
        struct svg_plot p;
        svg_begin(&p, out, id, title, CHART_W, 200);
        p.x.lo = lo, p.x.hi = hi, p.y.lo = 0, p.y.hi = top;
        svg_nice(&p.y.lo, &p.y.hi);
        svg_axes(&p, SVG_NS, "latency", SVG_NUM, "iterations");
        for (int b = 0; b < 40; b++)
            if (bins[b])
                svg_rect(&p, lo + (hi - lo) * b / 40, 0, lo + (hi - lo) * (b + 1) / 40, bins[b],
                         svg_colour[k % SVG_COLOURS], NULL);
        /* The percentiles the Series table gives: one computation for every output. */
        int sr = series_row(t, nt, &g[k]);
        char p50[32] = "-", p95[32] = "-", p99[32] = "-", text[400];
        if (sr >= 0) {
            fmt_ns(p50, sizeof p50, html_num(st, sr, "latency_p50_ns"));
            fmt_ns(p95, sizeof p95, html_num(st, sr, "latency_p95_ns"));
            fmt_ns(p99, sizeof p99, html_num(st, sr, "latency_p99_ns"));
        }
        /* The Series table's counts: the steady ones in the latencies, the captured apart. */
        double capt = sr >= 0 ? html_num(st, sr, "captured_iterations") : NAN;
        if (!isnan(capt) && capt > 0)
            snprintf(text, sizeof text,
                     "%d steady iterations (%.0f captured, apart): p50 %s, p95 %s, p99 %s", m, capt,
                     p50, p95, p99);
        else
            snprintf(text, sizeof text, "%d steady iterations: p50 %s, p95 %s, p99 %s", m, p50, p95,
                     p99);
        svg_end(&p, text);
        free(v);
    }
    if (ng > DIST_MAX)
        svg_none(out, "chart-dist-more", "Latency distribution of the other series",
                 pool_printf("no chart: %d series past the first %d; the Series table has their"
                             " percentiles",
                             ng - DIST_MAX, DIST_MAX));
}

static void chart_iterations(FILE *out, struct table **t, int n)
{
    const struct table *it = table_by_key(t, n, "iterations");
    struct group g[64];
    int ng = it ? groups_of(t, n, it, g, 64) : 0;
    if (!ng) {
        svg_none(out, "chart-latency", "Latency of every iteration over time",
                 "no chart: no iteration was found (no mark, and none detected: the phase"
                 " table's note says why)");
        return;
    }
    chart_latency(out, t, n, it, g, ng);
    chart_distribution(out, t, n, it, g, ng);
    for (int k = 0; k < ng; k++) free(g[k].rows);
}

/* ---- the batch sweep: items/s against p50 latency, one point per batch ------------------------
 */

static void chart_sweep(FILE *out, struct table **t, int n)
{
    const struct table *d = table_by_key(t, n, "batch_sweep");
    if (!d || d->nrows < 2) {
        svg_none(out, "chart-sweep", "Batch sweep: items/s against p50 latency",
                 "no chart: no configuration ran at two batch sizes or more (or the batch was"
                 " not known: a mark's 'batch=N', INFPROF_BATCH, or the Python input's first"
                 " dimension gives it)");
        return;
    }
    double x0 = INFINITY, x1 = 0, y1 = 0;
    for (int r = 0; r < d->nrows; r++) {
        x0 = fmin(x0, html_num(d, r, "latency_p50_ns")),
        x1 = fmax(x1, html_num(d, r, "latency_p50_ns"));
        y1 = fmax(y1, html_num(d, r, "items_per_s"));
    }
    struct svg_plot p;
    svg_begin(&p, out, "chart-sweep", "Batch sweep: items/s against p50 latency", CHART_W, 340);
    p.x.lo = x0 / 1.3, p.x.hi = x1 * 1.3, p.x.log = x1 / x0 > 8;
    if (!p.x.log) p.x.lo = 0, svg_nice(&p.x.lo, &p.x.hi);
    p.y.lo = 0, p.y.hi = y1 * 1.15;
    svg_nice(&p.y.lo, &p.y.hi);
    /* One configuration per phase and name less its batch: the table lists each together. */
    char text[TEXT_MAX] = "", group[400] = "", prev_group[400] = "", tip[200], a[32];
    int colour = -1;
    double px = NAN, py = NAN;
    int groups = 0;
    for (int r = 0; r < d->nrows; r++)
        groups += r == 0 || strcmp(html_txt(d, r, "phase"), html_txt(d, r - 1, "phase"));
    svg_legend_room(&p, groups);
    svg_axes(&p, SVG_NS, p.x.log ? "p50 latency (log scale)" : "p50 latency", SVG_NUM, "items/s");
    for (int r = 0; r < d->nrows; r++) {
        snprintf(group, sizeof group, "%s", html_phase_short(html_txt(d, r, "phase")));
        if (strcmp(group, prev_group)) {
            colour++, px = py = NAN;
            svg_legend(&p, colour, colour, group);
            snprintf(prev_group, sizeof prev_group, "%s", group);
        }
        double x = html_num(d, r, "latency_p50_ns"), y = html_num(d, r, "items_per_s");
        long long b = (long long)html_num(d, r, "batch");
        if (!isnan(px)) svg_line(&p, px, py, x, y, colour, 1.2, 0);
        fmt_ns(a, sizeof a, x);
        snprintf(tip, sizeof tip, "%s batch %lld: %.0f items/s at p50 %s", html_txt(d, r, "series"),
                 b, y, a);
        svg_point(&p, x, y, colour, 0, tip);
        char lab[32];
        snprintf(lab, sizeof lab, "%lld", b);
        svg_text(&p, x, y, "start", lab);
        html_add(text, "%s%s", r ? "; " : "", tip);
        px = x, py = y;
    }
    svg_end(&p, text);
}

void html_charts_runs(FILE *out, struct table **t, int n)
{
    chart_speedup(out, t, n);
    chart_iterations(out, t, n);
    chart_sweep(out, t, n);
}
