/*
 * render_csv.c: the CSV rendering: every table under a "# key" line, or one tidy table (--section)
 * or one file per table (--csv-dir), exact values.
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

static void csv_cell(FILE *out, const struct col *col, const struct cell *c, enum name_style names)
{
    if (c->null) return;
    if (render_is_left(col->type)) {
        char *name = col->type == COL_KERNEL ? name_data(c->s, names) : NULL;
        const char *text = name ? name : c->s;
        size_t cap = 4 * strlen(text) + 8; /* an escape is at most 4 bytes a byte: no cut */
        char *buf = malloc(cap);
        if (!buf) cli_fail("out of memory");
        fmt_escape(buf, cap, text);
        free(name);
        fputc('"', out);
        /* A spreadsheet evaluates a cell that starts with = + - @ (a name such as "=cmd|..."
         * from the program): it is kept as text, OWASP's rule (a leading '). */
        if (strchr("=+-@", buf[0]) && buf[0]) fputc('\'', out);
        for (const char *p = buf; *p; p++) {
            if (*p == '"') fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
        free(buf);
    } else if (col->type == COL_PCT || col->type == COL_RATE || col->type == COL_RATIO) {
        fprintf(out, "%.9g", c->d);
    } else {
        fprintf(out, "%lld", (long long)c->i);
    }
}

/* One table as CSV; tidy (header and rows only, what pandas.read_csv reads) or, in the
 * all-sections document, headed by "# key" and followed by a blank line. */
static void render_csv(FILE *out, const struct table *t, int tidy, enum name_style names)
{
    int idx[TABLE_MAX_COLS], nv = render_visible(t, 1, idx);
    if (!tidy) fprintf(out, "# %s\n", t->key);
    for (int k = 0; k < nv; k++) fprintf(out, "%s%s", k ? "," : "", t->cols[idx[k]].key);
    fputc('\n', out);
    int64_t rows = table_rows(t);
    for (int64_t r = 0; r < rows; r++) {
        const struct cell *row = table_row_cells(t, r);
        for (int k = 0; k < nv; k++) {
            if (k) fputc(',', out);
            csv_cell(out, &t->cols[idx[k]], &row[idx[k]], names);
        }
        fputc('\n', out);
    }
    if (!tidy) fputc('\n', out);
}

/* --csv-dir: DIR/<key>.csv for each table, never over an existing file. */
static void render_csv_dir(struct table **tables, int n, const char *dir, enum name_style names)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        cli_fail("cannot create directory %s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        if (!tables[i]->key) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.csv", dir, tables[i]->key);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            cli_fail("cannot write %s: %s%s", path, strerror(errno),
                     errno == EEXIST ? " (it is kept: give an empty directory)" : "");
        FILE *f = fdopen(fd, "w");
        if (!f) cli_fail("cannot write %s: %s", path, strerror(errno));
        render_csv(f, tables[i], 1, names);
        if (fclose(f) != 0) cli_fail("writing %s failed: %s", path, strerror(errno));
    }
}

static void csv_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    if (o->csv_dir) {
        render_csv_dir(tables, n, o->csv_dir, o->names);
        return;
    }
    for (int i = 0; i < n; i++)
        if (tables[i]->key) render_csv(out, tables[i], o->section != NULL, o->names);
}

const struct output_format out_csv = {"csv", NULL, OUT_CSV, csv_document, NULL};
