/*
 * html_compare.c: the charts of `infprof compare --format html`, drawn (svg.c) from compare's
 * data tables: each series' (else phase's) speed-up from the base run to the new one and its
 * loop rate, with their 95% bands and verdicts; then the two runs side by side, base above new
 * with the change beside each pair: each series' p50 and p95 latency, each phase's peak tensor
 * memory per device, and the kernels and operators whose time changed most.
 */
#include "html_charts.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIRS_MAX 24 /* pairs drawn in one chart */

/* A duration as fmt_ns writes it ("25.66ms", "990.00us", "1.20s", "500ns"), in ns; NAN none. */
static double ns_of(const char *s, const char **end)
{
    char *e;
    double x = strtod(s, &e);
    if (e == s) return NAN;
    double unit = !strncmp(e, "ns", 2)   ? 1
                  : !strncmp(e, "us", 2) ? 1e3
                  : !strncmp(e, "ms", 2) ? 1e6
                  : *e == 's'            ? 1e9
                                         : NAN;
    while (*e && *e != ' ') e++;
    *end = e;
    return x * unit;
}

/* Several runs a side (run_p50s_base, run_p50s_new): each run's ring, its median against the
 * base runs' geometric mean (a base run's above 1 when it ran faster than its side's centre);
 * the runs left out are drawn too (they are what was seen). */
static void runs_of(const struct table *d, int r, struct band_row *v)
{
    const char *sb = html_txt(d, r, "run_p50s_base"), *sn = html_txt(d, r, "run_p50s_new");
    const char *bf = html_txt(d, r, "band_from");
    if (!sb[0] || !sn[0] || strcmp(bf, "runs")) return;
    double base[BAND_RUNS], lsum = 0;
    int nb = 0;
    for (const char *s = sb, *e; *s && nb < BAND_RUNS; s = *e ? e + 1 : e) {
        double x = ns_of(s, &e);
        if (isnan(x) || x <= 0) return;
        if (!strncmp(e, " (left out)", 11)) e += 11;
        base[nb++] = x, lsum += log(x);
    }
    if (!nb) return;
    double centre = exp(lsum / nb);
    for (int i = 0; i < nb && v->nruns < BAND_RUNS; i++) v->runs[v->nruns++] = centre / base[i];
    for (const char *s = sn, *e; *s && v->nruns < BAND_RUNS; s = *e ? e + 1 : e) {
        double x = ns_of(s, &e);
        if (isnan(x) || x <= 0) return;
        if (!strncmp(e, " (left out)", 11)) e += 11;
        v->runs[v->nruns++] = centre / x;
    }
}

/* compare: each series' (else phase's) speed-up from the base run to the new one. */
static void chart_compare(FILE *out, struct table **t, int n)
{
    struct band_row v[32];
    memset(v, 0, sizeof v);
    int k = 0;
    static const char *const kinds[] = {"series", "phases"};
    for (int q = 0; q < 2 && !k; q++) {
        const struct table *d = table_by_key(t, n, kinds[q]);
        for (int r = 0; d && r < d->nrows && k < 32; r++) {
            double lat = html_num(d, r, "latency_p50_ns_ratio");
            if (isnan(lat) || lat <= 0) continue;
            if (q == 0)
                snprintf(v[k].name, sizeof v[k].name, "%s %s", html_txt(d, r, "Phase"),
                         html_txt(d, r, "series"));
            else
                snprintf(v[k].name, sizeof v[k].name, "%s", html_txt(d, r, "label"));
            double sp = html_num(d, r, "speedup"); /* the verdict's point: the runs' centre */
            v[k].r = !isnan(sp) && sp > 0 ? sp : 1 / lat;
            v[k].lo = html_num(d, r, "speedup_lo"), v[k].hi = html_num(d, r, "speedup_hi");
            if (isnan(v[k].hi)) v[k].lo = NAN;
            v[k].verdict = html_txt(d, r, "verdict");
            runs_of(d, r, &v[k]);
            k++;
        }
    }
    if (!k)
        svg_none(out, "chart-compare", "Speed-up, new run against base",
                 "no chart: no series or phase has iterations in both runs");
    else {
        int runs = 0;
        for (int i = 0; i < k; i++) runs |= v[i].nruns > 0;
        html_forest(out, "chart-compare", "Speed-up, new run against base, with its 95% band", v, k,
                    runs ? "speed-up: the base runs' median latency over the new runs' (log scale;"
                           " above 1 faster); rings: each run against the base runs' centre"
                         : "speed-up: the base run's p50 latency over the new run's (log scale;"
                           " above 1 faster)");
    }
    /* The loop rate beside it: what each series delivered, waits for data included. */
    const struct table *d = table_by_key(t, n, "series");
    memset(v, 0, sizeof v);
    k = 0;
    for (int r = 0; d && r < d->nrows && k < 32; r++) {
        double x = html_num(d, r, "delivered_per_s_ratio");
        if (isnan(x) || x <= 0) continue;
        snprintf(v[k].name, sizeof v[k].name, "%s %s", html_txt(d, r, "Phase"),
                 html_txt(d, r, "series"));
        v[k].r = x;
        v[k].lo = html_num(d, r, "delivered_speedup_lo");
        v[k].hi = html_num(d, r, "delivered_speedup_hi");
        if (isnan(v[k].hi)) v[k].lo = NAN;
        v[k].verdict = html_txt(d, r, "delivered_verdict");
        k++;
    }
    if (!k) {
        svg_none(out, "chart-compare-loop", "Loop rate, new run against base",
                 "no chart: no series has a loop rate in both runs (two steady iterations or"
                 " more each)");
        return;
    }
    html_forest(out, "chart-compare-loop",
                "Loop rate (waits for data included), new run against base, with its 95% band", v,
                k, "the new run's loop rate over the base run's (log scale; above 1 faster)");
}

/* ---- side by side -------------------------------------------------------------------------- */

struct pair {
    char name[160];
    double base, new_; /* NAN: not in that run */
    char tag[8];       /* " #a3f1" of the full name: two labels alike are told apart by it */
};

/* Each pair as two bars, base (grey) above new (blue), and the change at the right. */
static void pairs(FILE *out, const char *id, const char *title, const struct pair *v, int n,
                  enum svg_unit u, const char *xname)
{
    double hi = 0, lo = INFINITY;
    for (int i = 0; i < n; i++) {
        if (!isnan(v[i].base)) hi = fmax(hi, v[i].base);
        if (!isnan(v[i].new_)) hi = fmax(hi, v[i].new_);
        if (v[i].base > 0) lo = fmin(lo, v[i].base);
        if (v[i].new_ > 0) lo = fmin(lo, v[i].new_);
    }
    struct svg_plot p;
    svg_begin(&p, out, id, title, CHART_W, 84 + 30 * n);
    p.left = 330, p.right = CHART_W - 90;
    p.x.lo = 0, p.x.hi = hi > 0 ? hi : 1, p.y.lo = n, p.y.hi = 0;
    /* Values more than 10x apart (one 390 ms p95 beside 5 ms p50s): a log scale, or the one
     * flattens every other bar. Bars then start at the axis' low end. */
    int logx = hi > 0 && lo < INFINITY && hi / lo > 10;
    if (logx) {
        p.x.log = 1, p.x.lo = lo / 1.5, p.x.hi = hi * 1.2;
    } else {
        svg_nice(&p.x.lo, &p.x.hi);
        if (u == SVG_BYTES) p.x.hi = svg_bytes_ceil(hi > 0 ? hi : 1);
    }
    double x0 = p.x.lo;
    svg_legend_room(&p, 2);
    svg_axes(&p, u, logx ? pool_printf("%s (log scale)", xname) : xname, SVG_NUM, "");
    svg_legend(&p, 0, -1, "base run");
    svg_legend(&p, 1, 0, "new run");
    char text[TEXT_MAX] = "", a[32], b[32], change[32];
    for (int i = 0; i < n; i++) {
        const struct pair *q = &v[i];
        char tip[240];
        if (!isnan(q->base)) {
            svg_label(a, sizeof a, q->base, u);
            snprintf(tip, sizeof tip, "%s, base: %s", q->name, a);
            svg_rect(&p, x0, i + 0.1, q->base, i + 0.48, "#bbbbbb", tip);
        } else {
            snprintf(a, sizeof a, "not run");
        }
        if (!isnan(q->new_)) {
            svg_label(b, sizeof b, q->new_, u);
            snprintf(tip, sizeof tip, "%s, new: %s", q->name, b);
            svg_rect(&p, x0, i + 0.52, q->new_, i + 0.9, svg_colour[0], tip);
        } else {
            snprintf(b, sizeof b, "not run");
        }
        if (!isnan(q->base) && !isnan(q->new_) && q->base > 0)
            snprintf(change, sizeof change, "%+.1f%%", 100 * (q->new_ - q->base) / q->base);
        else
            snprintf(change, sizeof change, isnan(q->base) ? "new" : "gone");
        html_row_label(&p, x0, i + 0.5, q->name);
        svg_text(&p, p.x.hi, i + 0.5, "start", change);
        html_add(text, "%s%s: %s -> %s (%s)", i ? "; " : "", q->name, a, b, change);
    }
    svg_end(&p, text);
}

/* The pairs of a compare table: its column's _base and _new, the name from the match columns. */
static int pairs_of(const struct table *d, const char *col, const char *what, struct pair *v, int k,
                    int max, const char *name1, const char *name2, enum name_style names)
{
    char cb[96], cn[96];
    snprintf(cb, sizeof cb, "%s_base", col), snprintf(cn, sizeof cn, "%s_new", col);
    for (int r = 0; d && r < d->nrows && k < max; r++) {
        double x = html_num(d, r, cb), y = html_num(d, r, cn);
        if (!(fmax(isnan(x) ? 0 : x, isnan(y) ? 0 : y) > 0)) continue; /* nothing either side */
        const char *a = html_txt(d, r, name1);
        char full[CELL_MAX] = "", cut[128];
        int c = name2 ? table_col_index(d, name2) : -1; /* as the text shows it: demangled */
        if (c >= 0)
            render_cell_text(&d->cols[c], &d->cells[r * d->ncols + c], names, full, sizeof full);
        const char *b = full;
        render_label_fit(cut, sizeof cut, b, 40);
        render_name_tag(full, v[k].tag, sizeof v[k].tag);
        snprintf(v[k].name, sizeof v[k].name, "%s%s%s%s%s",
                 strchr(a, '|') ? html_phase_short(a) : a, b[0] ? " " : "", cut, what[0] ? " " : "",
                 what);
        v[k].base = x, v[k].new_ = y;
        k++;
    }
    return k;
}

static void chart_latency(FILE *out, struct table **t, int n)
{
    struct pair v[PAIRS_MAX];
    const struct table *d = table_by_key(t, n, "series");
    int k = 0;
    for (int r = 0; d && r < d->nrows && k + 2 <= PAIRS_MAX; r++) {
        for (int q = 0; q < 2; q++) {
            const char *col = q ? "latency_p95_ns" : "latency_p50_ns";
            char cb[64], cn[64];
            snprintf(cb, sizeof cb, "%s_base", col), snprintf(cn, sizeof cn, "%s_new", col);
            double x = html_num(d, r, cb), y = html_num(d, r, cn);
            if (isnan(x) && isnan(y)) continue;
            snprintf(v[k].name, sizeof v[k].name, "%s %s %s",
                     html_phase_short(html_txt(d, r, "phase")), html_txt(d, r, "series"),
                     q ? "p95" : "p50");
            v[k].tag[0] = 0; /* series names are distinct */
            v[k].base = x, v[k].new_ = y;
            k++;
        }
    }
    if (!k) {
        svg_none(out, "chart-compare-latency", "Latency, base and new",
                 "no chart: no series has steady iterations in either run");
        return;
    }
    pairs(out, "chart-compare-latency", "Latency per series, base and new (p50 and p95)", v, k,
          SVG_NS, "latency");
}

static void chart_memory(FILE *out, struct table **t, int n)
{
    struct pair v[PAIRS_MAX];
    const struct table *d = table_by_key(t, n, "memory");
    int k =
        pairs_of(d, "peak_allocated_bytes", "", v, 0, PAIRS_MAX, "label", "device", NAMES_SHORT);
    if (!k) {
        svg_none(out, "chart-compare-memory", "Peak tensor memory, base and new",
                 "no chart: no allocator report in either run (libtorch's hooks off, or no"
                 " tensor allocated)");
        return;
    }
    html_untie(v, sizeof *v, k, offsetof(struct pair, name), sizeof v->name,
               offsetof(struct pair, tag));
    pairs(out, "chart-compare-memory", "Peak tensor memory per phase and device, base and new", v,
          k, SVG_BYTES, "peak allocated");
}

static double change_of(const struct pair *q)
{
    return fabs((isnan(q->new_) ? 0 : q->new_) - (isnan(q->base) ? 0 : q->base));
}

static int by_change(const void *a, const void *b)
{
    double x = change_of(a), y = change_of(b);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The rows whose time changed most, in either direction (added or gone included). */
static void chart_changed(FILE *out, struct table **t, int n, const char *key, const char *col,
                          const char *name, const char *id, const char *title, const char *none,
                          enum name_style names)
{
    const struct table *d = table_by_key(t, n, key);
    int rows = d ? d->nrows : 0, per_phase = d && table_col_index(d, "phase") >= 0;
    struct pair *v = malloc((size_t)(rows ? rows : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    int k = pairs_of(d, col, "", v, 0, rows, per_phase ? "phase" : "", name, names);
    if (!k) {
        svg_none(out, id, title, none);
        free(v);
        return;
    }
    qsort(v, (size_t)k, sizeof *v, by_change);
    if (k > 12) k = 12;
    html_untie(v, sizeof *v, k, offsetof(struct pair, name), sizeof v->name,
               offsetof(struct pair, tag));
    char t2[200];
    snprintf(t2, sizeof t2, "%s, base and new (the %d that changed most)", title, k);
    pairs(out, id, t2, v, k, SVG_NS, "time");
    free(v);
}

void html_charts_compare(FILE *out, struct table **t, int n, enum name_style names)
{
    chart_compare(out, t, n);
    chart_latency(out, t, n);
    chart_memory(out, t, n);
    chart_changed(out, t, n, "kernels", "total_ns", "name", "chart-compare-kernels",
                  "CUDA kernels by GPU time",
                  "no chart: no CUDA kernel in either run (a CPU run, or CUDA activity off)",
                  names);
    chart_changed(out, t, n, "operators", "self_cpu_ns", "operator", "chart-compare-operators",
                  "PyTorch operators by self CPU time",
                  "no chart: no operator in either run (INFPROF_OPERATORS=1 records every call)",
                  names);
}
