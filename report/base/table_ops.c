/*
 * table_ops.c: what `infprof compare` and reports over several databases need beyond the
 * table model of table.c: finding columns by name, copying cells between tables, text views of a
 * data table, and a pool for the strings generated tables point to (column keys such as
 * "total_ns_delta", titles naming a file or a process), freed once at the end of the command.
 */
#include "cli.h"
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char **pool;
static size_t npool, poolcap;

static const char *pool_keep(char *s)
{
    if (!s) cli_fail("out of memory");
    if (npool == poolcap) {
        poolcap = poolcap ? poolcap * 2 : 64;
        pool = realloc(pool, poolcap * sizeof *pool);
        if (!pool) cli_fail("out of memory");
    }
    pool[npool++] = s;
    return s;
}

const char *pool_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!s) cli_fail("out of memory");
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    va_end(ap);
    return pool_keep(s);
}

const char *pool_escaped(const char *s, size_t max)
{
    char buf[1024];
    fmt_escape(buf, sizeof buf, s);
    /* Titles are printed as they are: keep them on one text line (cut in the middle). */
    size_t len = strlen(buf);
    if (max >= 8 && len > max) {
        size_t head = (max - 3) / 2, tail = max - 3 - head;
        memmove(buf + head + 3, buf + len - tail, tail + 1);
        memcpy(buf + head, "...", 3);
    }
    return pool_keep(strdup(buf));
}

void pool_free(void)
{
    for (size_t i = 0; i < npool; i++) free(pool[i]);
    free(pool);
    pool = NULL;
    npool = poolcap = 0;
}

int table_col_index(const struct table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (t->cols[c].key && !strcmp(t->cols[c].key, name)) return c;
    for (int c = 0; c < t->ncols; c++)
        if (!t->cols[c].key && t->cols[c].title && !strcmp(t->cols[c].title, name)) return c;
    return -1;
}

const struct cell *table_cell(const struct table *t, int r, const char *name)
{
    int c = table_col_index(t, name);
    return c < 0 || r < 0 || r >= t->nrows ? NULL : &t->cells[r * t->ncols + c];
}

void table_copy_cell(struct table *dst, int dc, const struct table *src, int64_t r, int sc)
{
    const struct cell *s = &table_row_cells(src, r)[sc];
    if (s->null) return;
    struct cell *d = &dst->cells[(dst->nrows - 1) * dst->ncols + dc];
    free(d->s);
    *d = *s;
    /* Both the exact value (d) and the rounded one (i) travel: text and JSON keep agreeing. */
    if (s->s && !(d->s = strdup(s->s))) cli_fail("out of memory");
}

void table_clear_cell(struct table *t, int r, int c)
{
    if (r < 0 || r >= t->nrows || c < 0 || c >= t->ncols) return;
    struct cell *x = &t->cells[r * t->ncols + c];
    free(x->s);
    *x = (struct cell){.null = 1};
}

struct table *table_where(const struct table *t, const char *col, const char *value)
{
    struct table *w = table_new(t->key, t->title);
    w->object = t->object;
    w->optional = t->optional;
    w->quiet = t->quiet;
    w->note = t->note;
    for (int c = 0; c < t->ncols; c++)
        table_col(w, t->cols[c].key, t->cols[c].title, t->cols[c].type);
    for (int r = 0; r < t->nrows; r++) {
        const struct cell *c = table_cell(t, r, col);
        if (!c || !c->s || strcmp(c->s, value)) continue;
        table_row(w);
        for (int k = 0; k < t->ncols; k++) table_copy_cell(w, k, t, r, k);
    }
    return w;
}

struct table *table_by_key(struct table **t, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (t[i]->key && !strcmp(t[i]->key, key)) return t[i];
    return NULL;
}

struct table *table_view(const struct table *data, const char *title, const struct view_col *c,
                         int n)
{
    struct table *v = table_new(NULL, title);
    int src[40], k = 0;
    for (int i = 0; i < n; i++) {
        int col = table_col_index(data, c[i].name);
        if (col < 0) continue; /* a figure this data table does not have */
        src[k++] = col;
        const struct col *dc = &data->cols[col];
        table_col(v, NULL, c[i].title ? c[i].title : dc->title ? dc->title : dc->key, dc->type);
    }
    for (int r = 0; r < data->nrows; r++) {
        table_row(v);
        for (int i = 0; i < k; i++) table_copy_cell(v, i, data, r, src[i]);
    }
    v->note = data->note;
    return v;
}
