/*
 * svg.h: the few drawing primitives the HTML report's charts need (svg.c), written as inline SVG
 * into the page: a chart frame with its title, description and text equivalent, linear and log
 * axes with round ticks, and marks. No library: a chart is a few hundred bytes of markup per
 * series, and the page stays one offline file.
 */
#ifndef INFPROF_SVG_H
#define INFPROF_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Colours of series, in order (colour-blind safe: Okabe-Ito). */
#define SVG_COLOURS 8
extern const char *const svg_colour[SVG_COLOURS];
/* A mark's colour apart from the series' (svg_point): a slow iteration's ring. */
#define SVG_ALERT (-2)

/* A scale from data to pixels. */
struct svg_scale {
    double lo, hi; /* data range */
    double a, b;   /* pixel range: a at lo, b at hi */
    int log;       /* log10 scale (lo, hi > 0) */
};
double svg_at(const struct svg_scale *s, double v);
/* A range widened to round ends (lo may stay 0). */
void svg_nice(double *lo, double *hi);
/* v rounded up to a round number of bytes (a power-of-two step: ticks of 64 MiB, 1 GiB). */
double svg_bytes_ceil(double v);

/* The kinds of tick labels. */
enum svg_unit { SVG_NUM, SVG_NS, SVG_PCT, SVG_RATIO, SVG_BYTES };
void svg_label(char *out, size_t n, double v, enum svg_unit u);

/* The plot area inside a chart of w x h: margins for the axes' labels. */
struct svg_plot {
    FILE *out;
    int w, h;
    double left, right, top, bottom;
    struct svg_scale x, y;
};

/* <figure id=...><figcaption>...; the SVG with its <title> and <desc>. */
void svg_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, int w, int h);
/* The figure's end: the text equivalent of what the chart shows, under it. */
void svg_end(struct svg_plot *p, const char *text);
/* A figure with no chart: why there is none (in place of empty axes). */
void svg_none(FILE *out, const char *id, const char *title, const char *why);
/* The axes: ticks and grid on both, the units and the names. */
void svg_axes(struct svg_plot *p, enum svg_unit xu, const char *xname, enum svg_unit yu,
              const char *yname);
/* Marks at data coordinates. shape: 0 dot, 1 ring (hollow), 2 square. */
void svg_point(struct svg_plot *p, double x, double y, int colour, int shape, const char *tip);
void svg_line(struct svg_plot *p, double x0, double y0, double x1, double y1, int colour,
              double width, int dashed);
void svg_rect(struct svg_plot *p, double x0, double y0, double x1, double y1, const char *fill,
              const char *tip);
/* A line through n points (a level over time). */
void svg_polyline(struct svg_plot *p, const double *x, const double *y, int n, int colour);
void svg_text(struct svg_plot *p, double x, double y, const char *anchor, const char *s);
/* Text at the left of `room` pixels, wrapped at spaces into lines that fit them (about 6.2 px a
 * character at the page's 11 px), centred on y; a word longer than a line goes on over the next
 * (cut on a character). A label is never clipped by the chart's edge. Returns the lines. */
int svg_text_wrapped(struct svg_plot *p, double x, double y, double room, const char *s);
/* The lines svg_text_wrapped would take for s in room pixels. */
int svg_text_lines(const char *s, double room);
/* A legend above the plot, in rows of SVG_LEGEND_COLUMNS: room for n entries (before
 * svg_axes), then the k-th entry (colour < 0: grey, a base run's). */
#define SVG_LEGEND_COLUMNS 4
void svg_legend_room(struct svg_plot *p, int n);
void svg_legend(struct svg_plot *p, int k, int colour, const char *name);

/* Text for HTML: &, <, >, " escaped, control characters shown as \xNN. */
void html_text(FILE *out, const char *s);

#endif
