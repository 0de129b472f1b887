/*
 * html_bars.c: the HTML report's charts over time (tensor memory, GPU busy, CPU cores busy, power
 * and clocks, with the phases as bands) and its bars (time between iterations, precision mix, top
 * kernels and operators, power per phase), drawn (svg.c) from the report's data tables.
 */
#include "html_charts.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ENERGY                                                                                  \
    "no chart: no energy was recorded (no NVML, no RAPL counter readable, or"                      \
    " INFPROF_ENERGY_MS=0: the run header says which)"

/* ---- over time: tensor memory, GPU busy, power, with the phases as bands ----------------------
 */

/* The phases' spans behind a chart over time (first every band, then the names over them, one
 * where there is room: never over another). */
struct band {
    double s, e;
    int phase; /* row in the phases table: its colour */
};

struct at {
    double s;
    int q; /* row in the iterations table */
};

static int by_start(const void *a, const void *b)
{
    double x = ((const struct at *)a)->s, y = ((const struct at *)b)->s;
    return (x > y) - (x < y);
}

static void phase_bands(struct svg_plot *p, struct table **t, int n)
{
    /* Each stretch of consecutive iterations of one phase, first start to last end: a phase's
     * spans cover its set-up too, and a phase that comes back is two bands (one band from its
     * first iteration to its last once covered the other phase's loop between them). */
    const struct table *ph = table_by_key(t, n, "phases"), *it = table_by_key(t, n, "iterations");
    if (!ph || !it || !it->nrows) return;
    struct at *order = malloc((size_t)it->nrows * sizeof *order);
    struct band *v = malloc((size_t)it->nrows * sizeof *v);
    if (!order || !v) cli_fail("out of memory");
    for (int q = 0; q < it->nrows; q++) order[q] = (struct at){html_num(it, q, "start_ns"), q};
    qsort(order, (size_t)it->nrows, sizeof *order, by_start);
    int nb = 0;
    for (int k = 0; k < it->nrows; k++) {
        int q = order[k].q, r = 0;
        while (r < ph->nrows && strcmp(html_txt(it, q, "phase"), html_txt(ph, r, "label"))) r++;
        if (r == ph->nrows) continue;
        double s = html_num(it, q, "start_ns"), e = s + html_num(it, q, "latency_ns");
        if (nb && v[nb - 1].phase == r)
            v[nb - 1].e = fmax(v[nb - 1].e, e);
        else
            v[nb++] = (struct band){s, e, r};
    }
    for (int pass = 0; pass < 2; pass++) {
        double free_from = 0;
        for (int b = 0; b < nb; b++) {
            if (!(v[b].e > v[b].s)) continue;
            const char *name = html_phase_short(html_txt(ph, v[b].phase, "label"));
            if (!pass) {
                svg_rect(p, v[b].s, p->y.lo, v[b].e, p->y.hi,
                         v[b].phase % 2 ? "#f3f3f3" : "#e9eef5", name);
                continue;
            }
            double at = svg_at(&p->x, v[b].s) + 3, w = 6.5 * (double)strlen(name);
            if (at < free_from || at + w >= p->right) continue;
            fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\">", at, p->top + 11);
            html_text(p->out, name);
            fputs("</text>\n", p->out);
            free_from = at + w + 6;
        }
    }
    free(order), free(v);
}

/* A chart over time: a timeline table's rows, device by device, as lines. */
struct over_time {
    const char *key, *value; /* the table, the column drawn */
    const char *name1;       /* the first column's legend after the device's, NULL none */
    const char *value2;      /* a second column drawn for each device, NULL none */
    const char *name2;       /* its legend ("infprof's writer") */
    enum svg_unit u;
    const char *id, *title, *yname;
    int mark_peak; /* 1: its peak marked, 2: with the Summary's phase */
    const char *none;
};

static void chart_over_time(FILE *out, struct table **t, int n, const struct over_time *c)
{
    const struct table *d = table_by_key(t, n, c->key);
    if (!d || !d->nrows) {
        svg_none(out, c->id, c->title, c->none);
        return;
    }
    double *x = malloc((size_t)d->nrows * sizeof *x), *y = malloc((size_t)d->nrows * sizeof *y);
    if (!x || !y) cli_fail("out of memory");
    double t1 = 0, y1 = 0, peak = -1, peak_t = 0;
    for (int r = 0; r < d->nrows; r++) {
        double v = html_num(d, r, c->value), v2 = c->value2 ? html_num(d, r, c->value2) : NAN;
        t1 = fmax(t1, html_num(d, r, "t_ns")), y1 = fmax(y1, v);
        if (!isnan(v2)) y1 = fmax(y1, v2);
        if (v > peak) peak = v, peak_t = html_num(d, r, "t_ns");
    }
    struct svg_plot p;
    svg_begin(&p, out, c->id, c->title, CHART_W, 300);
    p.x.lo = 0, p.x.hi = t1 > 0 ? t1 : 1, p.y.lo = 0, p.y.hi = y1 > 0 ? y1 * 1.1 : 1;
    svg_nice(&p.y.lo, &p.y.hi);
    if (c->u == SVG_BYTES) p.y.hi = svg_bytes_ceil(y1 > 0 ? y1 * 1.1 : 1);
    if (c->u == SVG_PCT) p.y.hi = 100;
    int devices = 0;
    for (int r = 0; r < d->nrows; r++)
        devices += !r || strcmp(html_txt(d, r, "device"), html_txt(d, r - 1, "device"));
    svg_legend_room(&p, devices * (c->value2 ? 2 : 1));
    p.x.a = p.left, p.x.b = p.right, p.y.a = p.bottom, p.y.b = p.top;
    phase_bands(&p, t, n);
    svg_axes(&p, SVG_NS,
             "time since the run's start (bands: each phase's iterations, stretch by stretch)",
             c->u, c->yname);
    char text[TEXT_MAX] = "", a[32], b[32];
    for (int r = 0, k = 0; r < d->nrows; k++) {
        int first = r, m = 0;
        double top = 0, top2 = -1;
        while (r < d->nrows && !strcmp(html_txt(d, r, "device"), html_txt(d, first, "device"))) {
            x[m] = html_num(d, r, "t_ns"), y[m] = html_num(d, r, c->value), top = fmax(top, y[m]);
            m++, r++;
        }
        int colour = c->value2 ? 2 * k : k;
        char name[96];
        snprintf(name, sizeof name, "%s%s%s", html_txt(d, first, "device"), c->name1 ? ", " : "",
                 c->name1 ? c->name1 : "");
        svg_legend(&p, colour, colour, name);
        svg_polyline(&p, x, y, m, colour);
        svg_label(a, sizeof a, top, c->u);
        html_add(text, "%s%s: highest %s%s%s", k ? "; " : "", name, a, c->u == SVG_NUM ? " " : "",
                 c->u == SVG_NUM ? c->yname : "");
        if (!c->value2) continue;
        for (int q = 0; q < m; q++) {
            y[q] = html_num(d, first + q, c->value2);
            if (isnan(y[q])) y[q] = 0;
            top2 = fmax(top2, y[q]);
        }
        snprintf(name, sizeof name, "%s, %s", html_txt(d, first, "device"), c->name2);
        svg_legend(&p, colour + 1, colour + 1, name);
        svg_polyline(&p, x, y, m, colour + 1);
        svg_label(b, sizeof b, top2, c->u);
        html_add(text, "; %s: highest %s%s%s", name, b, c->u == SVG_NUM ? " " : "",
                 c->u == SVG_NUM ? c->yname : "");
    }
    if (c->mark_peak) {
        svg_label(a, sizeof a, peak, c->u);
        fmt_ns(b, sizeof b, peak_t);
        /* Memory's peak is the Summary's: named with the phase that set it. */
        const struct table *sum = table_by_key(t, n, "summary");
        const char *in = c->mark_peak == 2 && sum ? html_txt(sum, 0, "peak_phase") : "";
        char mark[160];
        snprintf(mark, sizeof mark, "peak %s%s%s at %s", a, in[0] ? " in " : "",
                 in[0] ? html_phase_short(in) : "", b);
        svg_point(&p, peak_t, peak, 6, 1, mark);
        svg_text(&p, peak_t, peak, peak_t > t1 / 2 ? "end" : "start", mark);
        html_add(text, "; the highest, %s", mark);
    }
    svg_end(&p, text);
    free(x);
    free(y);
}

/* ---- bars --------------------------------------------------------------------------------------
 */

struct bar {
    char name[160];
    double v, part; /* the bar, and a part of it drawn darker (NAN none) */
    int colour;     /* its colour (svg_colour), -1 the default */
    char tag[8];    /* " #a3f1" of the full name: two labels alike are told apart by it */
};

static void bars(FILE *out, const char *id, const char *title, struct bar *v, int n,
                 enum svg_unit u, const char *xname, const char *what)
{
    double hi = 0;
    for (int i = 0; i < n; i++) hi = fmax(hi, v[i].v);
    struct svg_plot p;
    svg_begin(&p, out, id, title, CHART_W, 60 + 22 * n);
    p.left = 330;
    p.x.lo = 0, p.x.hi = hi > 0 ? hi : 1, p.y.lo = n, p.y.hi = 0;
    svg_nice(&p.x.lo, &p.x.hi);
    svg_axes(&p, u, xname, SVG_NUM, "");
    char text[TEXT_MAX] = "", a[32];
    for (int i = 0; i < n; i++) {
        svg_label(a, sizeof a, v[i].v, u);
        const char *fill = v[i].colour >= 0 ? svg_colour[v[i].colour % SVG_COLOURS] : "#9ecae1";
        svg_rect(&p, 0, i + 0.15, v[i].v, i + 0.85, fill, v[i].name);
        if (!isnan(v[i].part)) svg_rect(&p, 0, i + 0.15, v[i].part, i + 0.85, "#3182bd", NULL);
        html_row_label(&p, 0, i + 0.5, v[i].name);
        html_add(text, "%s%s: %s", i ? "; " : "", v[i].name, a);
    }
    if (what) html_add(text, " (%s)", what);
    svg_end(&p, text);
}

static int by_value(const void *a, const void *b)
{
    double x = ((const struct bar *)a)->v, y = ((const struct bar *)b)->v;
    return x < y ? 1 : x > y ? -1 : 0;
}

#define TOP_ALL   12 /* bars of a chart over the whole run */
#define TOP_PHASE 6  /* bars of each phase */
#define TOP_BARS  72 /* in all: the first 12 phases' (every grad mode x autocast setting) */

/* The top entries of a table by one column (kernels by GPU time, operators by self time): each
 * phase's TOP_PHASE, in the phase's colour, where the rows are per phase (the page asks for the
 * kernels per phase; operators always are), else the whole run's TOP_ALL. */
static void chart_top(FILE *out, struct table **t, int n, const char *key, const char *name,
                      const char *col, const char *id, const char *title, const char *none,
                      enum name_style names)
{
    const struct table *d = table_by_key(t, n, key);
    struct bar v[TOP_BARS];
    const char *phases[TOP_BARS / TOP_PHASE];
    int k = 0, nph = 0, start = 0, per_phase = 0;
    for (int r = 0; d && r < d->nrows; r++) per_phase |= html_txt(d, r, "phase")[0] != 0;
    int c = d ? table_col_index(d, name) : -1; /* as the text shows it: demangled, shortened */
    for (int r = 0; d && c >= 0 && r < d->nrows; r++) {
        double x = html_num(d, r, col);
        if (isnan(x) || x <= 0) continue;
        const char *ph = html_txt(d, r, "phase");
        int q = 0;
        while (q < nph && strcmp(phases[q], ph)) q++;
        if (q == nph) {
            if (per_phase ? nph == TOP_BARS / TOP_PHASE : nph == 1) continue;
            phases[nph++] = ph, start = k;
        } else if (q != nph - 1) {
            continue; /* the rows come phase after phase */
        }
        struct bar b = {.v = x, .part = NAN, .colour = per_phase ? q : -1};
        char full[CELL_MAX], cut[128];
        render_cell_text(&d->cols[c], &d->cells[r * d->ncols + c], names, full, sizeof full);
        render_label_fit(cut, sizeof cut, full, per_phase ? 34 : 46);
        snprintf(b.name, sizeof b.name, "%s%s%s", per_phase ? html_phase_short(ph) : "",
                 per_phase ? ": " : "", cut);
        render_name_tag(html_txt(d, r, name), b.tag, sizeof b.tag);
        int room = per_phase ? TOP_PHASE : TOP_ALL;
        if (k - start < room) {
            v[k++] = b;
        } else if (x > v[k - 1].v) {
            v[k - 1] = b;
        } else {
            continue;
        }
        qsort(v + start, (size_t)(k - start), sizeof *v, by_value);
    }
    if (!k) {
        svg_none(out, id, title, none);
        return;
    }
    html_untie(v, sizeof *v, k, offsetof(struct bar, name), sizeof v->name,
               offsetof(struct bar, tag));
    char t2[200];
    int more = 0; /* phases past the first TOP_BARS / TOP_PHASE */
    for (int r = 0; per_phase && d && r < d->nrows; r++) {
        int q = 0;
        while (q < nph && strcmp(phases[q], html_txt(d, r, "phase"))) q++;
        more += q == nph && (!r || strcmp(html_txt(d, r, "phase"), html_txt(d, r - 1, "phase")));
    }
    snprintf(t2, sizeof t2, "%s (top %d%s%s)", title, per_phase ? TOP_PHASE : TOP_ALL,
             per_phase ? " of each phase" : "",
             more ? pool_printf("; the first %d phases, %d more in the table", nph, more) : "");
    bars(out, id, t2, v, k, SVG_NS, "time", NULL);
}

static void chart_precision(FILE *out, struct table **t, int n)
{
    static const char *const types[] = {"fp32", "tf32", "fp16",  "bf16",
                                        "fp8",  "int8", "other", "unknown"};
    const struct table *d = table_by_key(t, n, "precision");
    if (!d || !d->nrows) {
        svg_none(out, "chart-precision", "Precision mix per phase",
                 "no chart: no GEMM or convolution kernel was recorded (a CPU run, or CUDA"
                 " activity off)");
        return;
    }
    struct svg_plot p;
    svg_begin(&p, out, "chart-precision",
              "Precision mix: share of kernel time by type (all: every kernel of the phase; gemm,"
              " conv: those)",
              CHART_W, 100 + 22 * d->nrows);
    p.left = 330;
    p.x.lo = 0, p.x.hi = 100, p.y.lo = d->nrows, p.y.hi = 0;
    svg_legend_room(&p, 8);
    svg_axes(&p, SVG_PCT, "share of the kernel time", SVG_NUM, "");
    for (int k = 0; k < 8; k++) svg_legend(&p, k, k, types[k]);
    char text[TEXT_MAX] = "", name[200];
    for (int r = 0; r < d->nrows; r++) {
        double at = 0;
        snprintf(name, sizeof name, "%s %s", html_phase_short(html_txt(d, r, "label")),
                 html_txt(d, r, "operation"));
        html_add(text, "%s%s:", r ? "; " : "", name);
        for (int k = 0; k < 8; k++) {
            double s = html_num(d, r, types[k]);
            if (isnan(s) || s <= 0) continue;
            char tip[240];
            snprintf(tip, sizeof tip, "%s: %s %.1f%%", name, types[k], s);
            svg_rect(&p, at, r + 0.15, at + s, r + 0.85, svg_colour[k], tip);
            at += s;
            html_add(text, " %s %.0f%%", types[k], s);
        }
        html_row_label(&p, 0, r + 0.5, name);
    }
    svg_end(&p, text);
}

static void chart_between(FILE *out, struct table **t, int n)
{
    const struct table *d = table_by_key(t, n, "between");
    struct bar v[24];
    int k = 0;
    for (int r = 0; d && r < d->nrows && k < 24; r++) {
        double pct = html_num(d, r, "between_pct"), data = html_num(d, r, "data_loading_ns");
        double total = html_num(d, r, "between_total_ns");
        if (isnan(pct)) continue;
        snprintf(v[k].name, sizeof v[k].name, "%s %s%s", html_phase_short(html_txt(d, r, "phase")),
                 html_txt(d, r, "series"),
                 html_suspect(t, n, html_txt(d, r, "phase")) ? " (suspect)" : "");
        v[k].v = pct, v[k].colour = -1;
        v[k].part = !isnan(data) && total > 0 ? pct * data / total : NAN;
        k++;
    }
    if (!k) {
        svg_none(out, "chart-between", "Time between iterations",
                 "no chart: no series has two steady iterations in a row to measure between");
        return;
    }
    bars(out, "chart-between",
         "Time between iterations, share of each series' wall time (dark: waiting for data)", v, k,
         SVG_PCT, "share of the series' wall time spent between iterations", NULL);
}

static void chart_energy(FILE *out, struct table **t, int n)
{
    const struct table *d = table_by_key(t, n, "energy");
    struct bar v[24];
    int k = 0;
    for (int r = 0; d && r < d->nrows && k < 24; r++) {
        double w = html_num(d, r, "avg_power_w");
        if (isnan(w)) continue;
        snprintf(v[k].name, sizeof v[k].name, "%s on %s", html_phase_short(html_txt(d, r, "phase")),
                 html_txt(d, r, "device"));
        v[k].v = w, v[k].part = NAN, v[k].colour = -1;
        k++;
    }
    if (!k) {
        svg_none(out, "chart-energy", "Power per phase", NO_ENERGY);
        return;
    }
    bars(out, "chart-energy", "Average power per phase and device (W)", v, k, SVG_NUM, "watts",
         "the Energy table has joules per iteration and per item");
}

static const struct over_time over_time[] = {
    {"memory_timeline", "allocated_bytes", NULL, NULL, NULL, SVG_BYTES, "chart-memory",
     "Tensor memory over time (allocated; the highest in each moment)", "allocated", 2,
     "no chart: no allocator report was recorded (libtorch's hooks off, or no tensor"
     " allocated)"},
    {"gpu_timeline", "busy_pct", NULL, NULL, NULL, SVG_PCT, "chart-gpu",
     "GPU busy over time (kernel time in each moment)", "busy", 0,
     "no chart: no CUDA kernel was recorded (a CPU run, or CUDA activity off)"},
    {"cpu_timeline", "program_cores", "the program", "infprof_cores", "infprof's writer", SVG_NUM,
     "chart-cpu",
     "CPU time over time: cores kept busy (the program's CPU time, every thread, over the wall"
     " time; infprof's own apart)",
     "cores", 0,
     "no chart: no CPU time was read (INFPROF_CPU_MS=0, or a database from before infprof read"
     " it)"},
    /* Two figures of power, named apart: this one between the counter's moves (report/run/
     * energy.c), the Energy table's Peak W from NVML's power readings (540 W here beside 443 W
     * there on the H200 fixture, each right of what it is). */
    {"power_timeline", "watts", NULL, NULL, NULL, SVG_NUM, "chart-power",
     "Power over time (W: the energy counter's change between its moves, about 0.1 s apart on"
     " recent GPUs; the Energy table's Peak W is NVML's power reading, which the driver averages"
     " over up to 1 s)",
     "watts", 1, NO_ENERGY},
    {"clock_timeline", "sm_clock_mhz", NULL, NULL, NULL, SVG_NUM, "chart-clock",
     "Clocks over time (GPU: SM clock; CPU: cpufreq's mean; MHz)", "MHz", 0,
     "no chart: no clock was read (the energy sampler reads them: no NVML, no cpufreq readable,"
     " or INFPROF_ENERGY_MS=0: the run header says which)"},
};

void html_charts_over_time(FILE *out, struct table **t, int n)
{
    for (size_t i = 0; i < sizeof over_time / sizeof *over_time; i++)
        chart_over_time(out, t, n, &over_time[i]);
}

void html_charts_bars(FILE *out, struct table **t, int n, enum name_style names)
{
    chart_between(out, t, n);
    chart_precision(out, t, n);
    chart_top(out, t, n, "kernels", "name", "total_ns", "chart-kernels", "CUDA kernels by GPU time",
              "no chart: no CUDA kernel was recorded (a CPU run, or CUDA activity off)", names);
    chart_top(out, t, n, "operators", "operator", "self_cpu_ns", "chart-operators",
              "PyTorch operators by self time (on the calling thread)",
              "no chart: no operator was recorded (INFPROF_OPERATORS=1 records every call)", names);
    chart_energy(out, t, n);
}
