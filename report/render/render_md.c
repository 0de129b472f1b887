/*
 * render_md.c: the Markdown rendering, for pasting into issues: a heading and a pipe table per
 * table.
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

static void md_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
}

static void render_md(FILE *out, const struct table *t)
{
    char buf[CELL_MAX];
    int idx[TABLE_MAX_COLS], nv = render_visible(t, 0, idx);
    char title[CELL_MAX];
    fmt_escape(title, sizeof title, t->title);
    fprintf(out, "## %s\n\n", title);
    if (t->object) {
        fputs("| | |\n|---|---|\n", out);
        for (int k = 0; t->nrows && k < nv; k++) {
            const struct cell *cell = &t->cells[idx[k]];
            if (cell->null) continue;
            render_cell_text(&t->cols[idx[k]], cell, buf, sizeof buf);
            fprintf(out, "| %s | ", t->cols[idx[k]].title);
            md_text(out, buf);
            fputs(" |\n", out);
        }
    } else {
        for (int k = 0; k < nv; k++) fprintf(out, "| %s ", t->cols[idx[k]].title);
        fputs("|\n", out);
        for (int k = 0; k < nv; k++)
            fputs(render_is_left(t->cols[idx[k]].type) ? "|---" : "|---:", out);
        fputs("|\n", out);
        for (int r = 0; r < t->nrows; r++) {
            for (int k = 0; k < nv; k++) {
                render_cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], buf,
                                 sizeof buf);
                fputs("| ", out);
                md_text(out, buf);
                fputc(' ', out);
            }
            fputs("|\n", out);
        }
    }
    if (t->note) fprintf(out, "\n%s\n", t->note);
    fputc('\n', out);
}

static void md_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    for (int i = 0; i < n; i++)
        if (render_shown(tables[i], o)) render_md(out, tables[i]);
}

const struct output_format out_md = {"md", "markdown", OUT_MD, md_document, NULL};
