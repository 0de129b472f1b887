/*
 * table.c: the report's table model (table.h): columns with a type, rows of cells that are null
 * until set. Rendering is render.c's.
 */
#include "cli.h"
#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct table *table_new(const char *key, const char *title)
{
    struct table *t = calloc(1, sizeof *t);
    if (!t) cli_fail("out of memory");
    t->key = key;
    t->title = title;
    return t;
}

void table_col(struct table *t, const char *key, const char *title, enum col_type type)
{
    if (t->ncols == (int)(sizeof t->cols / sizeof t->cols[0]))
        cli_fail("internal: too many columns");
    t->cols[t->ncols++] = (struct col){key, title, type};
}

void table_row(struct table *t)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = realloc(t->cells, sizeof *t->cells * (size_t)t->cap * (size_t)t->ncols);
        if (!t->cells) cli_fail("out of memory");
    }
    struct cell *row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
    for (int c = 0; c < t->ncols; c++) row[c] = (struct cell){1, 0, 0, NULL};
    t->nrows++;
}

static struct cell *cell_at(struct table *t, int col)
{
    return t->cells + (size_t)(t->nrows - 1) * (size_t)t->ncols + col;
}

void table_set_int(struct table *t, int col, int64_t v)
{
    struct cell *c = cell_at(t, col);
    c->null = 0;
    c->i = v;
    c->d = (double)v;
}

void table_set_num(struct table *t, int col, double v)
{
    struct cell *c = cell_at(t, col);
    if (isnan(v) || isinf(v)) return;
    c->null = 0;
    c->d = v;
    c->i = (int64_t)llround(v);
}

void table_set_text(struct table *t, int col, const char *s)
{
    struct cell *c = cell_at(t, col);
    if (!s) return;
    free(c->s);
    c->s = strdup(s);
    c->null = 0;
}

void table_free(struct table *t)
{
    if (!t) return;
    table_spill_free(t);
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i].s);
    free(t->cells);
    free(t);
}
