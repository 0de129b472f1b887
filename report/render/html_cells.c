/*
 * html_cells.c: what the HTML report's chart files share (html_charts.h): a data table's cells
 * as numbers and text, a phase's short label, a chart's text equivalent, a row's name beside a
 * plot.
 */
#include "html_charts.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double html_num(const struct table *t, int r, const char *col)
{
    const struct cell *c = table_cell(t, r, col);
    return !c || c->null ? NAN : c->s ? atof(c->s) : c->d != 0 ? c->d : (double)c->i;
}

const char *html_txt(const struct table *t, int r, const char *col)
{
    const struct cell *c = table_cell(t, r, col);
    return c && !c->null && c->s ? c->s : "";
}

/* A phase's label as the text report writes it short: "inference_mode | autocast bf16" ->
 * "inference/bf16" (a chart's room is for the series' own name). */
const char *html_phase_short(const char *label)
{
    const char *bar = strstr(label, " | autocast ");
    if (!bar) return label;
    int grad = (int)(bar - label);
    const char *mode = !strncmp(label, "inference_mode", 14) ? "inference" : NULL;
    return pool_printf("%.*s/%s", mode ? (int)strlen(mode) : grad, mode ? mode : label, bar + 12);
}

/* "a; b; c" into a text equivalent, never past its end. */
void html_add(char *out, const char *fmt, ...)
{
    size_t len = strlen(out);
    if (len + 200 > TEXT_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, TEXT_MAX - len, fmt, ap);
    va_end(ap);
}

/* A row's name left of the plot, cut to the room there (the whole name in its tooltip). */
void html_row_label(struct svg_plot *p, double x, double y, const char *name)
{
    char cut[512];
    render_label_fit(cut, sizeof cut, name, (int)((p->left - 10) / 6.2));
    svg_text(p, x, y, "end", cut);
}

/* Item i's field at offset off, of items `size` bytes apart. */
static char *field(char *base, size_t size, int i, size_t off)
{
    return base + (size_t)i * size + off;
}

void html_untie(void *v, size_t size, int n, size_t name_off, size_t name_cap, size_t tag_off)
{
    for (int i = 0; i < n; i++) {
        char *a = field(v, size, i, name_off), *ta = field(v, size, i, tag_off);
        int tie = 0;
        for (int j = i + 1; j < n; j++) {
            char *b = field(v, size, j, name_off), *tb = field(v, size, j, tag_off);
            if (strcmp(a, b) || !strcmp(ta, tb)) continue;
            tie = 1;
            size_t len = strlen(b);
            snprintf(b + len, name_cap - len, "%s", tb);
        }
        size_t len = strlen(a);
        if (tie) snprintf(a + len, name_cap - len, "%s", ta);
    }
}

/* A phase whose figures lost events (the phases table's suspect column). */
int html_suspect(struct table **t, int n, const char *label)
{
    const struct table *ph = table_by_key(t, n, "phases");
    for (int r = 0; ph && r < ph->nrows; r++)
        if (!strcmp(html_txt(ph, r, "label"), label)) return html_num(ph, r, "suspect") > 0;
    return 0;
}
