/*
 * compare_diff.c: one section of two runs side by side (compare.h). Rows are matched on the
 * spec's columns (a phase by its label, a kernel by its name, and phase with --by-phase); rows on
 * one side only are "added" or "removed", as in HTA's trace diff and uftrace's report --diff. For
 * each figure: base, new, delta (new - base), the change in % of base, and new / base where a
 * ratio is what people quote (throughput, latency). Rows are ordered by the absolute change of
 * the figure that matters (GPU time for kernels), within each group (phase) when there is one.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pair {
    int b, n;         /* row in base / new, -1: absent */
    int group, order; /* order: the base run's, then the new run's rows it lacks */
    double change;
    const char *key;
};

struct keyed {
    char *key;
    int row;
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->row - y->row;
}

/* The identity of a row: its match cells, each prefixed by its length (program strings may hold
 * any byte, so no separator would be safe). */
static char *row_key(const struct table *t, int r, const int *cols, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) {
        const struct cell *c = &t->cells[r * t->ncols + cols[i]];
        len += (c->s ? strlen(c->s) : 24) + 24;
    }
    char *k = malloc(len);
    if (!k) cli_fail("out of memory");
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        const struct cell *c = &t->cells[r * t->ncols + cols[i]];
        char num[24] = "";
        if (!c->null && !c->s) snprintf(num, sizeof num, "%lld", (long long)c->i);
        const char *s = c->s ? c->s : num;
        o += (size_t)snprintf(k + o, len - o, "%zu:%s", strlen(s), s);
    }
    k[o] = 0;
    return k;
}

static struct keyed *keyed_rows(const struct table *t, const struct diff_spec *s)
{
    int cols[3], n = 0;
    for (; n < 3 && s->match[n]; n++)
        if ((cols[n] = table_col_index(t, s->match[n])) < 0)
            cli_fail("internal: section %s has no column %s", s->key, s->match[n]);
    struct keyed *v = calloc((size_t)t->nrows + 1, sizeof *v);
    if (!v) cli_fail("out of memory");
    for (int r = 0; r < t->nrows; r++) v[r] = (struct keyed){row_key(t, r, cols, n), r};
    qsort(v, (size_t)t->nrows, sizeof *v, cmp_keyed);
    return v;
}

static int is_integer(enum col_type t)
{
    return t == COL_INT || t == COL_NS || t == COL_BYTES;
}

/* Delta of one figure for a pair, or 0 when there is none; *ok says whether there is one. */
static double figure_delta(const struct table *b, const struct table *n, const struct pair *p,
                           const struct diff_fig *f, int64_t *di, int *ok)
{
    const struct cell *cb = p->b >= 0 ? table_cell(b, p->b, f->key) : NULL;
    const struct cell *cn = p->n >= 0 ? table_cell(n, p->n, f->key) : NULL;
    static const struct cell zero = {0, 0, 0, NULL};
    /* A row on one side only: for totals and counts the other side had none of it. */
    if (f->additive && p->b < 0) cb = &zero;
    if (f->additive && p->n < 0) cn = &zero;
    *ok = cb && cn && !cb->null && !cn->null;
    if (!*ok) return 0;
    *di = cn->i - cb->i; /* the difference of the exact values JSON prints */
    return cn->d - cb->d;
}

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->group != y->group) return x->group - y->group;
    if (x->change != y->change) return x->change < y->change ? 1 : -1;
    return x->order - y->order;
}

/* Groups in the order the base run lists them, then those only the new run has. */
static int group_rank(const struct table *b, const struct table *n, const struct pair *p,
                      const char *group)
{
    if (!group) return 0;
    const struct cell *mine = p->b >= 0 ? table_cell(b, p->b, group) : table_cell(n, p->n, group);
    const char *want = mine && mine->s ? mine->s : "";
    for (int r = 0; r < b->nrows; r++) {
        const struct cell *c = table_cell(b, r, group);
        if (!strcmp(c && c->s ? c->s : "", want)) return r;
    }
    for (int r = 0; r < n->nrows; r++) {
        const struct cell *c = table_cell(n, r, group);
        if (!strcmp(c && c->s ? c->s : "", want)) return b->nrows + r;
    }
    return b->nrows + n->nrows;
}

static struct pair *match_rows(const struct diff_spec *s, const struct table *b,
                               const struct table *n, int *count)
{
    struct keyed *kb = keyed_rows(b, s), *kn = keyed_rows(n, s);
    struct pair *v = calloc((size_t)(b->nrows + n->nrows) + 1, sizeof *v);
    if (!v) cli_fail("out of memory");
    int i = 0, j = 0, k = 0;
    while (i < b->nrows || j < n->nrows) {
        int c = i == b->nrows ? 1 : j == n->nrows ? -1 : strcmp(kb[i].key, kn[j].key);
        struct pair *p = &v[k++];
        p->b = c <= 0 ? kb[i].row : -1;
        p->n = c >= 0 ? kn[j].row : -1;
        p->key = c <= 0 ? kb[i].key : kn[j].key;
        if (c == 0) free(kn[j].key); /* the pair keeps base's copy */
        i += c <= 0;
        j += c >= 0;
    }
    for (int r = 0; r < k; r++) {
        struct pair *p = &v[r];
        p->group = group_rank(b, n, p, s->group);
        p->order = p->b >= 0 ? p->b : b->nrows + p->n;
        for (const struct diff_fig *f = s->figs; f->key && s->sort; f++) {
            if (strcmp(f->key, s->sort)) continue;
            int ok;
            int64_t di;
            double d = figure_delta(b, n, p, f, &di, &ok);
            p->change = ok ? fabs(d) : 0;
        }
    }
    qsort(v, (size_t)k, sizeof *v, cmp_pair);
    *count = k;
    free(kb); /* the keys themselves now belong to the pairs */
    free(kn);
    return v;
}

static void set_exact(struct table *t, int col, int64_t i, double d)
{
    struct cell *c = &t->cells[(t->nrows - 1) * t->ncols + col];
    c->null = 0;
    c->i = i;
    c->d = d;
}

static void columns(struct table *t, const struct diff_spec *s, const struct table *b)
{
    for (int i = 0; i < 3 && s->match[i]; i++) {
        const struct col *c = &b->cols[table_col_index(b, s->match[i])];
        table_col(t, c->key, c->title, c->type);
    }
    for (int i = 0; i < 3 && s->show[i]; i++) {
        int c = table_col_index(b, s->show[i]);
        if (c >= 0) table_col(t, b->cols[c].key, b->cols[c].title, b->cols[c].type);
    }
    table_col(t, "status", NULL, COL_TEXT);
    table_col(t, NULL, "Change", COL_TEXT);
    for (const struct diff_fig *f = s->figs; f->key; f++) {
        int c = table_col_index(b, f->key);
        if (c < 0) cli_fail("internal: section %s has no column %s", s->key, f->key);
        enum col_type type = b->cols[c].type;
        table_col(t, pool_printf("%s_base", f->key), NULL, type);
        table_col(t, pool_printf("%s_new", f->key), NULL, type);
        table_col(t, pool_printf("%s_delta", f->key), NULL, type);
        table_col(t, pool_printf("%s_pct", f->key), NULL, COL_PCT);
        if (f->ratio) table_col(t, pool_printf("%s_ratio", f->key), NULL, COL_RATIO);
    }
}

static void row(struct table *t, const struct diff_spec *s, const struct table *b,
                const struct table *n, const struct pair *p)
{
    table_row(t);
    const struct table *has = p->b >= 0 ? b : n;
    int hr = p->b >= 0 ? p->b : p->n, c = 0;
    for (int i = 0; i < 3 && s->match[i]; i++, c++)
        table_copy_cell(t, c, has, hr, table_col_index(has, s->match[i]));
    for (int i = 0; i < 3 && s->show[i]; i++) {
        int sc = table_col_index(has, s->show[i]);
        if (sc < 0) continue;
        table_copy_cell(t, c++, has, hr, sc);
    }
    table_set_text(t, c++, p->b < 0 ? "added" : p->n < 0 ? "removed" : "both");
    table_set_text(t, c++, p->b < 0 ? "added" : p->n < 0 ? "removed" : "");
    for (const struct diff_fig *f = s->figs; f->key; f++) {
        int bc = table_col_index(b, f->key), nc = table_col_index(n, f->key);
        if (p->b >= 0) table_copy_cell(t, c, b, p->b, bc);
        if (p->n >= 0) table_copy_cell(t, c + 1, n, p->n, nc);
        int ok;
        int64_t di = 0;
        double d = figure_delta(b, n, p, f, &di, &ok);
        const struct cell *cb = p->b >= 0 ? &b->cells[p->b * b->ncols + bc] : NULL;
        const struct cell *cn = p->n >= 0 ? &n->cells[p->n * n->ncols + nc] : NULL;
        if (ok) {
            if (is_integer(t->cols[c + 2].type))
                set_exact(t, c + 2, di, d);
            else
                table_set_num(t, c + 2, d);
            if (cb && !cb->null && cb->d != 0) table_set_num(t, c + 3, 100.0 * d / cb->d);
        }
        if (f->ratio && cb && cn && !cb->null && !cn->null && cb->d != 0)
            table_set_num(t, c + 4, cn->d / cb->d);
        c += f->ratio ? 5 : 4;
    }
}

struct table *diff_section(const struct diff_spec *s, const struct table *base,
                           const struct table *new, int top)
{
    struct table *t = table_new(s->key, NULL);
    columns(t, s, base);
    int n;
    struct pair *v = match_rows(s, base, new, &n);
    int hidden = 0;
    for (int i = 0; i < n; i++) {
        int rank = 0;
        for (int j = i - 1; j >= 0 && v[j].group == v[i].group; j--) rank++;
        if (top && rank >= top) {
            hidden++;
            continue;
        }
        row(t, s, base, new, &v[i]);
    }
    if (hidden)
        t->note = pool_printf("%d more %s not shown (--top 0 shows all)", hidden,
                              s->what ? s->what : "rows");
    for (int i = 0; i < n; i++) free((char *)v[i].key);
    free(v);
    return t;
}

struct table *side_table(struct compare_side *s, const char *key)
{
    struct table *t = table_by_key(s->t, s->n, key);
    if (!t) cli_fail("internal: no section %s in %s", key, s->path);
    return t;
}
