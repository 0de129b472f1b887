/*
 * svg.c: the HTML report's drawing primitives (svg.h): scales with round ticks, axes, marks and
 * the figure around each chart. Coordinates are written with one decimal: a page of thousands of
 * points stays small.
 */
#include "svg.h"
#include "../base/table.h"
#include "render_impl.h"

#include <math.h>
#include <string.h>

const char *const svg_colour[SVG_COLOURS] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#000000", "#F0E442"};

void html_text(FILE *out, const char *s)
{
    char esc[8192];
    fmt_escape(esc, sizeof esc, s ? s : "");
    for (const char *c = esc; *c; c++) {
        if (*c == '&')
            fputs("&amp;", out);
        else if (*c == '<')
            fputs("&lt;", out);
        else if (*c == '>')
            fputs("&gt;", out);
        else if (*c == '"')
            fputs("&quot;", out);
        else
            fputc(*c, out);
    }
}

double svg_at(const struct svg_scale *s, double v)
{
    double lo = s->lo, hi = s->hi;
    if (s->log) {
        v = log10(v > 0 ? v : lo), lo = log10(lo), hi = log10(hi);
    }
    if (hi == lo) return (s->a + s->b) / 2; /* hi < lo: a scale drawn downwards (rows) */
    return s->a + (v - lo) / (hi - lo) * (s->b - s->a);
}

/* A round step of bytes near range / 5: a power of two (64 MiB, 128 MiB, 1 GiB). */
static double bytes_step(double range)
{
    return pow(2, ceil(log2(range / 5 > 1 ? range / 5 : 1)));
}

double svg_bytes_ceil(double v)
{
    double st = bytes_step(v);
    return ceil(v / st) * st;
}

/* A round step near range / 5: 1, 2 or 5 times a power of ten. */
static double step_of(double range)
{
    double raw = range / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

void svg_nice(double *lo, double *hi)
{
    if (!(*hi > *lo)) {
        double d = *lo ? fabs(*lo) * 0.1 : 1;
        *lo -= d, *hi += d;
    }
    double st = step_of(*hi - *lo);
    *lo = floor(*lo / st) * st;
    *hi = ceil(*hi / st) * st;
}

void svg_label(char *out, size_t n, double v, enum svg_unit u)
{
    switch (u) {
    case SVG_NS:
        fmt_ns(out, n, v);
        break;
    case SVG_BYTES:
        fmt_bytes(out, n, v);
        break;
    case SVG_PCT:
        snprintf(out, n, "%.3g%%", v);
        break;
    case SVG_RATIO:
        snprintf(out, n, "%.3gx", v);
        break;
    case SVG_NUM:
        snprintf(out, n, "%.4g", v);
        break;
    }
}

void svg_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, int w, int h)
{
    memset(p, 0, sizeof *p);
    p->out = out, p->w = w, p->h = h;
    p->left = 78, p->right = w - 16, p->top = 14, p->bottom = h - 42;
    fprintf(out, "<figure id=\"%s\"><figcaption>", id);
    html_text(out, title);
    fprintf(out,
            "</figcaption>\n<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\""
            " aria-labelledby=\"%s-t\"><title id=\"%s-t\">",
            w, h, w, h, id, id);
    html_text(out, title);
    fputs("</title>\n", out);
}

void svg_end(struct svg_plot *p, const char *text)
{
    fputs("</svg>\n<p class=\"alt\">", p->out);
    html_text(p->out, text);
    fputs("</p></figure>\n", p->out);
}

void svg_none(FILE *out, const char *id, const char *title, const char *why)
{
    fprintf(out, "<figure id=\"%s\" class=\"none\"><figcaption>", id);
    html_text(out, title);
    fputs("</figcaption><p class=\"why\">", out);
    html_text(out, why);
    fputs("</p></figure>\n", out);
}

/* One tick: its grid line across the plot and its label beside the axis. */
static void tick(struct svg_plot *p, const struct svg_scale *s, int vertical, double v,
                 enum svg_unit u)
{
    char lab[48];
    double at = svg_at(s, v);
    svg_label(lab, sizeof lab, v, u);
    if (vertical)
        fprintf(p->out,
                "<line class=\"g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                p->left, p->right, at, at, p->left - 4, at + 4, lab);
    else /* a label at the plot's right edge ends there (centred, its end was cut off) */
        fprintf(p->out,
                "<line class=\"g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
                at, at, p->top, p->bottom, at, p->bottom + 14,
                at > p->right - 30 ? "end" : "middle", lab);
}

/* Ticks at round values: powers of ten on a log scale that spans 20x or more, else round
 * steps (powers of two for bytes). */
static void ticks(struct svg_plot *p, const struct svg_scale *s, int vertical, enum svg_unit u)
{
    if (s->log && s->hi / s->lo >= 20) {
        for (double v = pow(10, floor(log10(s->lo))); v <= s->hi * 1.0001; v *= 10)
            if (v >= s->lo * 0.9999) tick(p, s, vertical, v, u);
        return;
    }
    double st = u == SVG_BYTES ? bytes_step(s->hi - s->lo) : step_of(s->hi - s->lo);
    for (double v = ceil(s->lo / st) * st; v <= s->hi + st * 1e-6; v += st)
        tick(p, s, vertical, fabs(v) < st * 1e-6 ? 0 : v, u);
}

void svg_axes(struct svg_plot *p, enum svg_unit xu, const char *xname, enum svg_unit yu,
              const char *yname)
{
    p->x.a = p->left, p->x.b = p->right;
    p->y.a = p->bottom, p->y.b = p->top;
    ticks(p, &p->x, 0, xu);
    ticks(p, &p->y, 1, yu);
    fprintf(p->out,
            "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            p->left, p->top, p->right - p->left, p->bottom - p->top);
    fprintf(p->out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", (p->left + p->right) / 2,
            p->h - 6);
    html_text(p->out, xname);
    fprintf(p->out,
            "</text><text transform=\"translate(12 %.1f) rotate(-90)\""
            " text-anchor=\"middle\">",
            (p->top + p->bottom) / 2);
    html_text(p->out, yname);
    fputs("</text>\n", p->out);
}

void svg_point(struct svg_plot *p, double x, double y, int colour, int shape, const char *tip)
{
    double cx = svg_at(&p->x, x), cy = svg_at(&p->y, y);
    const char *c = colour == SVG_ALERT ? "#e0002a" : svg_colour[colour % SVG_COLOURS];
    if (shape == 2)
        fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"5\" height=\"5\" fill=\"%s\"",
                cx - 2.5, cy - 2.5, c);
    else
        fprintf(p->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" %s=\"%s\"%s", cx, cy,
                colour == SVG_ALERT ? "5.5" : "2.6", shape ? "stroke" : "fill", c,
                shape ? " fill=\"none\"" : "");
    if (tip) {
        fputs("><title>", p->out);
        html_text(p->out, tip);
        fputs(shape == 2 ? "</title></rect>\n" : "</title></circle>\n", p->out);
    } else {
        fputs("/>\n", p->out);
    }
}

void svg_line(struct svg_plot *p, double x0, double y0, double x1, double y1, int colour,
              double width, int dashed)
{
    fprintf(p->out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
            " stroke-width=\"%.1f\"%s/>\n",
            svg_at(&p->x, x0), svg_at(&p->y, y0), svg_at(&p->x, x1), svg_at(&p->y, y1),
            colour < 0 ? "#888" : svg_colour[colour % SVG_COLOURS], width,
            dashed ? " stroke-dasharray=\"4 3\"" : "");
}

void svg_rect(struct svg_plot *p, double x0, double y0, double x1, double y1, const char *fill,
              const char *tip)
{
    double ax = svg_at(&p->x, x0), bx = svg_at(&p->x, x1);
    double ay = svg_at(&p->y, y0), by = svg_at(&p->y, y1);
    fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
            fmin(ax, bx), fmin(ay, by), fabs(bx - ax), fabs(by - ay), fill);
    if (tip) {
        fputs("><title>", p->out);
        html_text(p->out, tip);
        fputs("</title></rect>\n", p->out);
    } else {
        fputs("/>\n", p->out);
    }
}

void svg_polyline(struct svg_plot *p, const double *x, const double *y, int n, int colour)
{
    fputs("<polyline fill=\"none\" stroke-width=\"1.4\" stroke=\"", p->out);
    fputs(svg_colour[colour % SVG_COLOURS], p->out);
    fputs("\" points=\"", p->out);
    for (int i = 0; i < n; i++)
        fprintf(p->out, "%s%.1f,%.1f", i ? " " : "", svg_at(&p->x, x[i]), svg_at(&p->y, y[i]));
    fputs("\"/>\n", p->out);
}

void svg_text(struct svg_plot *p, double x, double y, const char *anchor, const char *s)
{
    fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", svg_at(&p->x, x),
            svg_at(&p->y, y), anchor);
    html_text(p->out, s);
    fputs("</text>\n", p->out);
}

/* The next line of s that fits `chars` (at a space where one is), its length; *next after it. */
static size_t wrap_line(const char *s, size_t chars, const char **next)
{
    size_t len = strlen(s);
    if (len <= chars) {
        *next = s + len;
        return len;
    }
    size_t cut = chars;
    while (cut > 0 && s[cut] != ' ') cut--;
    if (cut == 0) cut = fmt_utf8_cut(s, chars); /* one long word: cut on a character */
    *next = s + cut;
    while (**next == ' ') (*next)++;
    return cut;
}

int svg_text_lines(const char *s, double room)
{
    size_t chars = room > 62 ? (size_t)(room / 6.2) : 10;
    int n = 0;
    for (const char *at = s; at && *at; n++) wrap_line(at, chars, &at);
    return n ? n : 1;
}

int svg_text_wrapped(struct svg_plot *p, double x, double y, double room, const char *s)
{
    size_t chars = room > 62 ? (size_t)(room / 6.2) : 10;
    int n = svg_text_lines(s, room);
    fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">", svg_at(&p->x, x),
            svg_at(&p->y, y) - 6.0 * (n - 1));
    const char *at = s;
    for (int i = 0; i < n && *at; i++) {
        const char *next;
        size_t len = wrap_line(at, chars, &next);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), at);
        fprintf(p->out, "<tspan x=\"%.1f\"%s>", svg_at(&p->x, x), i ? " dy=\"12\"" : "");
        html_text(p->out, line);
        fputs("</tspan>", p->out);
        at = next;
    }
    fputs("</text>\n", p->out);
    return n;
}

void svg_legend_room(struct svg_plot *p, int n)
{
    p->top = 16 + 14 * ((n + SVG_LEGEND_COLUMNS - 1) / SVG_LEGEND_COLUMNS);
}

void svg_legend(struct svg_plot *p, int k, int colour, const char *name)
{
    double w = (p->right - p->left) / SVG_LEGEND_COLUMNS;
    double x = p->left + w * (k % SVG_LEGEND_COLUMNS), y = 12 + 14 * (k / SVG_LEGEND_COLUMNS);
    char cut[256];
    render_label_fit(cut, sizeof cut, name, (int)(w / 6.5));
    fprintf(p->out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
            "<text x=\"%.1f\" y=\"%.1f\">",
            x, y - 9, colour < 0 ? "#bbbbbb" : svg_colour[colour % SVG_COLOURS], x + 14, y);
    html_text(p->out, cut);
    fputs("<title>", p->out);
    html_text(p->out, name);
    fputs("</title></text>\n", p->out);
}
