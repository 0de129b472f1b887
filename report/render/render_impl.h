/*
 * render_impl.h: what the output formats' files share inside the render layer: their
 * descriptors' registry (formats.c) and the helpers of the text and Markdown renderings
 * (render_cells.c).
 */
#ifndef INFPROF_RENDER_IMPL_H
#define INFPROF_RENDER_IMPL_H

#include "render.h"

#include <stddef.h>
#include <stdio.h>

#define CELL_MAX 4096

/* The formats, in the order `--format`'s message names them (formats.c). */
extern const struct output_format *const output_formats[];
extern const int output_format_count;

/* The table is shown in text and Markdown: the one --section asked for, or titled and not an
 * empty optional one. */
int render_shown(const struct table *t, const struct render_opts *o);

/* render_cells.c */
void render_cell_text(const struct col *col, const struct cell *c, enum name_style names, char *out,
                      size_t n);
int render_is_left(enum col_type t);
int render_is_name(enum col_type t);
int render_disp_width(const char *s);
/* s cut in its middle to w columns ("head...tail", at a word's edge where one is near);
 * _share: the head takes head_pct of the room. */
void render_shorten(char *s, int w);
/* --columns (render_columns.c): the document `in` (n tables) into `out`, each section named in
 * o->columns its data table with the columns picked only (made[]: the new tables, for the caller
 * to free) and its text views left out; returns the tables in out. Exits 2 on an unknown
 * section or column, naming those there are. */
int render_columns(struct table **in, int n, const struct render_opts *o, struct table **out,
                   struct table **made);
/* s into out (n bytes), cut as render_shorten cuts a text column (at a word's edge, the middle
 * elided, on a character) to w columns: a chart's label. No hash: where two labels come out
 * alike, the chart tells them apart (html_bars.c untie). */
void render_label_fit(char *out, size_t n, const char *s, int w);
void render_shorten_share(char *s, int w, int head_pct);
void render_print_padded(FILE *out, const char *s, int w, int right, const char *tail);
/* Distinct names stay distinct on screen: rows of name column `c` whose shown text (shortened
 * to w, w < 0: not shortened) equals another row's while their names differ. need[r]: 0 none;
 * 2 + s: cut with render_shares[s] of the room for the head instead (the first share that
 * leaves no two alike); 1: none did, a tag (a short hash of the name: the same kernel has the
 * same tag in every table). */
#define RENDER_SHARES 4
extern const int render_shares[RENDER_SHARES];
void render_name_clashes(const struct table *t, int c, int w, enum name_style names, int *need);
void render_name_tag(const char *s, char *out, size_t n);
int render_visible(const struct table *t, int data, int *idx);

#endif
