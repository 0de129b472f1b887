/*
 * render.h: the outputs, a layer above the sections: a document made of tables (base/table.h)
 * rendered in an output format (render.c), and the options the commands set for it
 * (defaults.c). Each format is a descriptor in a file of its own (render_text.c, render_json.c,
 * render_csv.c, render_md.c, render_html.c), listed in formats.c; nothing below this layer knows
 * them.
 */
#ifndef INFPROF_RENDER_H
#define INFPROF_RENDER_H

#include "../base/names.h"
#include "../sections/sections.h"

#include <stdio.h>

struct render_opts;

#define RENDER_COLUMN_SPECS 16

/* An output format. */
struct output_format {
    const char *name, *alias; /* what --format accepts ("md", "markdown"); alias NULL none */
    /* The views the sections build for it (advice: wrapped text, Markdown rows); a new format
     * takes the nearest of the four. */
    enum out_format views;
    /* Writes the document: every table (one with --section). */
    void (*document)(FILE *out, struct table **tables, int n, const struct render_opts *o);
    /* The report's options it sets before the sections build (the page: kernels per phase, as
     * --by-phase); NULL none. */
    void (*defaults)(struct report_opts *o);
};

struct render_opts {
    enum out_format format;          /* the views asked for */
    const struct output_format *out; /* the format; NULL: the one of `format`'s views */
    int wide;                        /* do not shorten names */
    enum name_style names;           /* --names (names.h): NAMES_SHORT by default */
    int color;                       /* ANSI colour (text on a terminal, NO_COLOR unset) */
    int width;                       /* text width (render_text_width) */
    const char *section; /* only the table with this key (CSV: one tidy table, no "# key" line) */
    const char *csv_dir; /* CSV: one tidy file per table, DIR/<key>.csv */
    /* --columns SECTION=COL,...: the columns picked for a section (render_columns.c). */
    const char *columns[RENDER_COLUMN_SPECS];
    int ncolumns;
};

/* The width text takes: COLUMNS when set (a positive number, held to 40-1000: a 30-column
 * COLUMNS gives 40, not 100), else the terminal's when stdout is one,
 * else 100 (a file, a pipe: the same text wherever it is read). Names take what the other
 * columns leave of it (a 160-column terminal showed aten::cudnn_convolution as
 * "ate...tion #0b67" at a fixed 100). */
int render_text_width(void);

/* Render a document made of tables. JSON: one object with a member per table. */
void render(FILE *out, struct table **tables, int n, const struct render_opts *o);
/* The format --format names ("text", "json", "csv", "md" or "markdown"); exits 2 on anything
 * else, naming the formats there are. */
const struct output_format *parse_format(const char *s);
/* The formats' names: "text, json, csv or md" (sep ", ", last " or "), or with sep "|" and
 * last "|" "text|json|csv|md". */
const char *output_format_names(const char *sep, const char *last);
/* The format whose views are these. */
const struct output_format *output_format_of(enum out_format views);
/* --top's default for the format, and colour on a terminal. */
void report_defaults(struct report_opts *o, struct render_opts *ro);

#endif
