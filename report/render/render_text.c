/*
 * render_text.c: the text rendering: columns aligned in 100 characters, human units, long names
 * shortened in the middle, notes wrapped; an object table as "Title  value" lines.
 */
#include "render_impl.h"
#include "../base/cli.h"
#include "../base/json.h"
#include "../base/names.h"
#include "../base/table.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Print s from column `at` on, wrapped at spaces to end before column `width`; continuation
 * lines start at column `at`. Nothing is cut: a word longer than the room goes on a line of
 * its own. Ends with a newline. */
static void print_wrapped(FILE *out, const char *s, int at, int width)
{
    int room = width - at;
    if (room < 16) room = 16; /* (a column that begins past 84: a line of 100 still) */
    for (;;) {
        int len = (int)strlen(s);
        if (len <= room) {
            fprintf(out, "%s\n", s);
            return;
        }
        int cut = room;
        while (cut > 0 && s[cut] != ' ') cut--;
        if (cut == 0) { /* one long word: up to the next space */
            cut = room;
            while (s[cut] && s[cut] != ' ') cut++;
        }
        fprintf(out, "%.*s\n", cut, s);
        s += cut;
        while (*s == ' ') s++;
        if (!*s) return; /* a long last word: its line ended, no indent left hanging */
        fprintf(out, "%*s", at, "");
    }
}

static void render_text_object(FILE *out, const struct table *t, const struct render_opts *o)
{
    char buf[CELL_MAX];
    int idx[TABLE_MAX_COLS], nv = render_visible(t, 0, idx), w = 0;
    for (int k = 0; k < nv; k++)
        if ((int)strlen(t->cols[idx[k]].title) > w) w = (int)strlen(t->cols[idx[k]].title);
    for (int k = 0; t->nrows && k < nv; k++) {
        const struct cell *cell = &t->cells[idx[k]];
        if (cell->null) continue;
        render_cell_text(&t->cols[idx[k]], cell, o->names, buf, sizeof buf);
        /* Warnings stand out on a terminal (yellow); everything else stays plain. Long values
         * wrap under themselves, never cut. */
        int warn = o->color && t->cols[idx[k]].key && !strcmp(t->cols[idx[k]].key, "warnings");
        fprintf(out, "  %-*s  %s", w, t->cols[idx[k]].title, warn ? "\033[33m" : "");
        if (o->wide)
            fprintf(out, "%s\n", buf);
        else
            print_wrapped(out, buf, w + 4, o->width);
        if (warn) fputs("\033[0m", out);
    }
}

static void render_text(FILE *out, const struct table *t, const struct render_opts *o)
{
    const char *bold = o->color ? "\033[1m" : "", *plain = o->color ? "\033[0m" : "";
    char title[CELL_MAX];
    fmt_escape(title, sizeof title, t->title); /* titles may quote a phase label or range */
    fprintf(out, "%s%s%s\n", bold, title, plain);
    if (t->object) {
        render_text_object(out, t, o);
    } else if (!t->nrows) {
        fprintf(out, "  (none)\n");
    } else {
        int width[TABLE_MAX_COLS], idx[TABLE_MAX_COLS], nv = render_visible(t, 0, idx);
        char buf[CELL_MAX];
        for (int k = 0; k < nv; k++) width[k] = render_disp_width(t->cols[idx[k]].title);
        for (int r = 0; r < t->nrows; r++)
            for (int k = 0; k < nv; k++) {
                render_cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], o->names, buf,
                                 sizeof buf);
                if (render_disp_width(buf) > width[k]) width[k] = render_disp_width(buf);
            }
        /* Names take what the other columns leave of the width. */
        int used = 2;
        for (int k = 0; k < nv; k++)
            if (!render_is_name(t->cols[idx[k]].type)) used += width[k] + 2;
        for (int k = 0; k < nv; k++)
            if (render_is_name(t->cols[idx[k]].type) && !o->wide) {
                int room = o->width - used;
                if (room < 16) room = 16;
                if (width[k] > room) width[k] = room;
            }
        int *clash = calloc((size_t)(t->nrows * nv) + 1, sizeof *clash);
        if (!clash) cli_fail("out of memory");
        for (int k = 0; k < nv; k++)
            if (render_is_name(t->cols[idx[k]].type))
                render_name_clashes(t, idx[k], o->wide ? -1 : width[k], o->names,
                                    clash + k * t->nrows);
        for (int r = -1; r < t->nrows; r++) {
            fputs("  ", out);
            int at = 2;
            for (int k = 0; k < nv; k++) {
                const struct col *col = &t->cols[idx[k]];
                if (r < 0)
                    snprintf(buf, sizeof buf, "%s", col->title);
                else
                    render_cell_text(col, &t->cells[r * t->ncols + idx[k]], o->names, buf,
                                     sizeof buf);
                if (r >= 0 && clash[k * t->nrows + r] >= 2) {
                    if (!o->wide)
                        render_shorten_share(buf, width[k],
                                             render_shares[clash[k * t->nrows + r] - 2]);
                } else if (r >= 0 && clash[k * t->nrows + r]) {
                    char tag[16];
                    render_name_tag(t->cells[r * t->ncols + idx[k]].s, tag, sizeof tag);
                    if (!o->wide) render_shorten(buf, width[k] - render_disp_width(tag));
                    strcat(buf, tag);
                } else if (render_is_name(col->type) && !o->wide) {
                    render_shorten(buf, width[k]);
                }
                int last = k + 1 == nv;
                if (last && render_is_left(col->type)) {
                    if (o->wide)
                        fprintf(out, "%s\n", buf);
                    else
                        print_wrapped(out, buf, at, o->width);
                } else {
                    render_print_padded(out, buf, width[k], !render_is_left(col->type),
                                        last ? "\n" : "  ");
                }
                at += width[k] + 2;
            }
        }
        free(clash);
    }
    if (t->note) {
        fputs("  ", out);
        print_wrapped(out, t->note, 2, o->width);
    }
    fputc('\n', out);
}

static void text_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    for (int i = 0; i < n; i++)
        if (render_shown(tables[i], o)) render_text(out, tables[i], o);
}

const struct output_format out_text = {"text", NULL, OUT_TEXT, text_document, NULL};
