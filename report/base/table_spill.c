/*
 * table_spill.c: a table's rows on disk. A report of a thousand processes folds each process's
 * rows into one table per section (JSON and CSV carry them all); held in memory those take
 * hundreds of megabytes. table_spill moves the rows built so far to a temporary file in $TMPDIR
 * (else /tmp), unlinked at once (gone with the process, never a file of the user's), and the
 * renderers read them back in order. Each cell: its null flag, then int64 and double as stored,
 * then a text's length and bytes (length -1: no text).
 */
#include "cli.h"
#include "table.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct table_spill {
    FILE *f;
    int64_t rows;     /* on disk, before the rows in cells */
    int64_t next;     /* the row the file's read position is at (-1: writing) */
    struct cell *row; /* the last row read back */
    int ncols;
};

static void spill_put(FILE *f, const void *p, size_t n)
{
    if (fwrite(p, 1, n, f) != n)
        cli_fail("cannot write a report's rows to a temporary file: %s (TMPDIR: a directory with"
                 " room)",
                 strerror(errno));
}

static void spill_get(FILE *f, void *p, size_t n)
{
    if (fread(p, 1, n, f) != n) cli_fail("cannot read back a temporary file");
}

/* A file in $TMPDIR (tmpfile(3) takes /tmp whatever TMPDIR says), unlinked at once. */
static FILE *spill_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || dir[0] != '/') dir = "/tmp";
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/infprof-rows-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        cli_fail("cannot make a temporary file in %s for a report's rows: %s (set TMPDIR to a"
                 " writable directory)",
                 dir, strerror(errno));
    unlink(path);
    FILE *f = fdopen(fd, "w+");
    if (!f) cli_fail("out of memory");
    return f;
}

void table_spill(struct table *t)
{
    if (!t->nrows) return;
    struct table_spill *s = t->spill;
    if (!s) {
        if (!(s = t->spill = calloc(1, sizeof *s))) cli_fail("out of memory");
        s->f = spill_file();
        s->next = -1;
        s->ncols = t->ncols;
    }
    if (s->next >= 0 && fseek(s->f, 0, SEEK_END) != 0) cli_fail("cannot seek a temporary file");
    s->next = -1;
    for (int64_t i = 0; i < (int64_t)t->nrows * t->ncols; i++) {
        struct cell *c = &t->cells[i];
        unsigned char null = (unsigned char)c->null;
        int64_t len = c->s ? (int64_t)strlen(c->s) : -1;
        spill_put(s->f, &null, 1);
        spill_put(s->f, &c->i, sizeof c->i);
        spill_put(s->f, &c->d, sizeof c->d);
        spill_put(s->f, &len, sizeof len);
        if (len > 0) spill_put(s->f, c->s, (size_t)len);
        free(c->s);
    }
    s->rows += t->nrows;
    t->nrows = 0;
}

int64_t table_rows(const struct table *t)
{
    return (t->spill ? t->spill->rows : 0) + t->nrows;
}

static void row_clear(struct table_spill *s)
{
    for (int c = 0; s->row && c < s->ncols; c++) {
        free(s->row[c].s);
        s->row[c].s = NULL;
    }
}

const struct cell *table_row_cells(const struct table *t, int64_t r)
{
    struct table_spill *s = t->spill;
    if (!s || r >= s->rows) return t->cells + (r - (s ? s->rows : 0)) * t->ncols;
    if (!s->row && !(s->row = calloc((size_t)s->ncols, sizeof *s->row))) cli_fail("out of memory");
    if (s->next < 0 || r < s->next) { /* from the start: written since, or read again */
        if (fseek(s->f, 0, SEEK_SET) != 0) cli_fail("cannot seek a temporary file");
        s->next = 0;
    }
    for (; s->next <= r; s->next++) {
        row_clear(s);
        for (int c = 0; c < s->ncols; c++) {
            struct cell *x = &s->row[c];
            unsigned char null;
            int64_t len;
            spill_get(s->f, &null, 1);
            spill_get(s->f, &x->i, sizeof x->i);
            spill_get(s->f, &x->d, sizeof x->d);
            spill_get(s->f, &len, sizeof len);
            x->null = null;
            if (len < 0) continue;
            if (!(x->s = malloc((size_t)len + 1))) cli_fail("out of memory");
            if (len) spill_get(s->f, x->s, (size_t)len);
            x->s[len] = 0;
        }
    }
    return s->row;
}

void table_spill_free(struct table *t)
{
    struct table_spill *s = t->spill;
    if (!s) return;
    row_clear(s);
    free(s->row);
    fclose(s->f);
    free(s);
    t->spill = NULL;
}
