/*
 * html_charts.h: what the HTML report's chart files share (render layer only): reading a data
 * table's cells, the chart's text equivalent, a row's name beside a plot (html_cells.c).
 * html_charts.c draws the speed-ups, the iterations and the sweep; html_bars.c the charts over
 * time and the bars; html_compare.c compare's; render_html.c puts them on the page in that
 * order.
 */
#ifndef INFPROF_HTML_CHARTS_H
#define INFPROF_HTML_CHARTS_H

#include "render_impl.h"
#include "svg.h"

#define CHART_W  960  /* a chart's width, px */
#define TEXT_MAX 4096 /* a chart's text equivalent */

/* A cell as a number (NAN: null or no such column) and as text ("" none). */
double html_num(const struct table *t, int r, const char *col);
const char *html_txt(const struct table *t, int r, const char *col);
/* "inference_mode | autocast bf16" -> "inference/bf16", as the text report writes it short. */
const char *html_phase_short(const char *label);
/* Appends to a text equivalent, never past TEXT_MAX. */
void html_add(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The phase of this full label lost events: its figures are suspect (the phases table). */
int html_suspect(struct table **t, int n, const char *label);
/* A row's name left of the plot, cut to the room there. */
void html_row_label(struct svg_plot *p, double x, double y, const char *name);
/* Labels that came out alike (names cut the same way) get their full name's tag (" #a3f1",
 * render_name_tag): n items of `size` bytes from `v`, each with its label at name_off (name_cap
 * bytes) and its tag at tag_off; a tag of "" is never added. */
void html_untie(void *v, size_t size, int n, size_t name_off, size_t name_cap, size_t tag_off);

/* A row of a forest plot: a ratio with its band and its verdict. */
#define BAND_RUNS 16
struct band_row {
    char name[160];
    double r, lo, hi; /* ratio; band, NAN none */
    const char *verdict;
    int nruns;              /* compare with several runs a side: one ring per run (0 none) */
    double runs[BAND_RUNS]; /* each run's ratio against the base side's centre */
};
/* Ratios with their 95% bands on a log axis around 1 (html_charts.c). */
void html_forest(FILE *out, const char *id, const char *title, struct band_row *v, int n,
                 const char *xname);

/* html_charts.c: the speed-ups, the iterations and the sweep. */
void html_charts_runs(FILE *out, struct table **t, int n);
/* html_compare.c: compare's speed-ups, and the two runs side by side with their deltas. */
void html_charts_compare(FILE *out, struct table **t, int n, enum name_style names);
/* html_bars.c: the charts over time, then the bars. */
void html_charts_over_time(FILE *out, struct table **t, int n);
void html_charts_bars(FILE *out, struct table **t, int n, enum name_style names);

#endif
