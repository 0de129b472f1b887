/*
 * render_md.c: the Markdown rendering, for pasting into issues: a heading and a pipe table per
 * table.
 */
#include "render_impl.h"
#include "../base/cli.h"
#include "../base/json.h"
#include "../base/names.h"
#include "../base/table.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Markdown never renders a program's string as markup (issue 54: names turned into emphasis,
 * live links, remote images and raw HTML in cmark-gfm). What Markdown would read is escaped with
 * a backslash: \ ` * _ [ ] < > ! ~ & |, a leading #, the ':' of "://" and the '.' of "www."
 * (GFM's autolinks). An e-mail address is linked by GFM whatever is escaped in it: a cell that
 * holds one is a code span, whose content is literal (a table's | is \| in it too). */
static int md_email(const char *s)
{
    for (const char *c = strchr(s, '@'); c; c = strchr(c + 1, '@'))
        if (c > s && isalnum((unsigned char)c[-1]) && isalnum((unsigned char)c[1])) return 1;
    return 0;
}

static void md_escaped(FILE *out, const char *s)
{
    for (const char *c = s; *c; c++) {
        /* An underscore between two letters or digits never makes emphasis: left as it is
         * (grad_mode_in_inference, INFPROF_CUDNN). */
        int intraword =
            *c == '_' && c > s && isalnum((unsigned char)c[-1]) && isalnum((unsigned char)c[1]);
        if ((strchr("\\`*_[]<>!~&|", *c) && !intraword) || (*c == '#' && c == s) ||
            (*c == ':' && !strncmp(c + 1, "//", 2)) ||
            (*c == '.' && c - s >= 3 && !strncasecmp(c - 3, "www", 3)))
            fputc('\\', out);
        fputc(*c, out);
    }
}

static void md_text(FILE *out, const char *s)
{
    if (!md_email(s)) {
        md_escaped(out, s);
        return;
    }
    size_t run = 0, longest = 0, len = strlen(s);
    for (const char *c = s; *c; c++) {
        run = *c == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    /* A fence longer than any run of backticks inside; a space each side where the content
     * starts or ends with a backtick or a space (CommonMark strips one of each). */
    int pad = len && (s[0] == '`' || s[len - 1] == '`' || (s[0] == ' ' && s[len - 1] == ' '));
    for (size_t i = 0; i <= longest; i++) fputc('`', out);
    if (pad) fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
    if (pad) fputc(' ', out);
    for (size_t i = 0; i <= longest; i++) fputc('`', out);
}

static void render_md(FILE *out, const struct table *t, enum name_style names)
{
    char buf[CELL_MAX];
    int idx[TABLE_MAX_COLS], nv = render_visible(t, 0, idx);
    char title[CELL_MAX];
    fmt_escape(title, sizeof title, t->title);
    fputs("## ", out);
    md_escaped(out, title);
    fputs("\n\n", out);
    if (t->object) {
        fputs("| | |\n|---|---|\n", out);
        for (int k = 0; t->nrows && k < nv; k++) {
            const struct cell *cell = &t->cells[idx[k]];
            if (cell->null) continue;
            render_cell_text(&t->cols[idx[k]], cell, names, buf, sizeof buf);
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
                render_cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], names, buf,
                                 sizeof buf);
                fputs("| ", out);
                md_text(out, buf);
                fputc(' ', out);
            }
            fputs("|\n", out);
        }
    }
    if (t->note) {
        char note[4 * CELL_MAX];
        fmt_escape(note, sizeof note, t->note);
        fputc('\n', out);
        md_escaped(out, note);
        fputc('\n', out);
    }
    fputc('\n', out);
}

static void md_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    for (int i = 0; i < n; i++)
        if (render_shown(tables[i], o)) render_md(out, tables[i], o->names);
}

const struct output_format out_md = {"md", "markdown", OUT_MD, md_document, NULL};
