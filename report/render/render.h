/*
 * render.h: the outputs, a layer above the sections: a document made of tables (base/table.h)
 * rendered as text, JSON, CSV or Markdown (render.c), and the options the commands set for it
 * (defaults.c). A new output format is a case here and in render.c; nothing below knows it.
 */
#ifndef INFPROF_RENDER_H
#define INFPROF_RENDER_H

#include "../sections/sections.h"

#include <stdio.h>

struct render_opts {
    enum out_format format;
    int wide;            /* do not shorten names */
    int color;           /* ANSI colour (text on a terminal, NO_COLOR unset) */
    int width;           /* text width, 100 */
    const char *section; /* only the table with this key (CSV: one tidy table, no "# key" line) */
    const char *csv_dir; /* CSV: one tidy file per table, DIR/<key>.csv */
};

/* Render a document made of tables. JSON: one object with a member per table. */
void render(FILE *out, struct table **tables, int n, const struct render_opts *o);
/* "text", "json", "csv", "md" (or "markdown"); exits 2 on anything else. */
enum out_format parse_format(const char *s);
/* --top's default for the format, and colour on a terminal. */
void report_defaults(struct report_opts *o, struct render_opts *ro);

#endif
