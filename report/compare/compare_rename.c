/*
 * compare_rename.c: series that a setting renamed between two runs. A series' name is its mark's
 * text and the settings that tell it apart ("fp32", then "fp32 cudnn.benchmark=on" once the
 * program turned that on), so a changed setting renames a configuration. Where, in one phase,
 * exactly one series of each run has no partner by name, they are the same configuration: the new
 * run's is matched to the base run's under the base run's name, and compare says so (the new
 * name in `new_series`, and a note under the view).
 */
#include "compare.h"

#include <string.h>

static int has_series(const struct table *t, const char *phase, const char *name)
{
    for (int r = 0; r < t->nrows; r++) {
        const struct cell *p = table_cell(t, r, "phase"), *s = table_cell(t, r, "series");
        if (p && p->s && s && s->s && !strcmp(p->s, phase) && !strcmp(s->s, name)) return 1;
    }
    return 0;
}

/* The one row of t in phase without a partner by name in other, or -1 (none, or several). */
static int lone(const struct table *t, const struct table *other, const char *phase)
{
    int found = -1;
    for (int r = 0; r < t->nrows; r++) {
        const struct cell *p = table_cell(t, r, "phase"), *s = table_cell(t, r, "series");
        if (!p || !p->s || !s || !s->s || strcmp(p->s, phase) || has_series(other, phase, s->s))
            continue;
        if (found >= 0) return -1;
        found = r;
    }
    return found;
}

struct table *series_match_renames(const struct table *base, const struct table *new,
                                   struct series_renames *rn)
{
    rn->n = 0;
    for (int r = 0; r < base->nrows && rn->n < SERIES_RENAMES_MAX; r++) {
        const struct cell *p = table_cell(base, r, "phase");
        if (!p || !p->s) continue;
        int first = 1; /* each phase once */
        for (int q = 0; q < r; q++) {
            const struct cell *pq = table_cell(base, q, "phase");
            if (pq && pq->s && !strcmp(pq->s, p->s)) first = 0;
        }
        int b = first ? lone(base, new, p->s) : -1, n = b >= 0 ? lone(new, base, p->s) : -1;
        if (b < 0 || n < 0) continue;
        rn->phase[rn->n] = p->s;
        rn->base[rn->n] = table_cell(base, b, "series")->s;
        rn->new[rn->n] = table_cell(new, n, "series")->s;
        rn->row[rn->n++] = n;
    }
    /* A copy of new with those rows under the base run's names. */
    struct table *t = table_new(new->key, new->title);
    for (int c = 0; c < new->ncols; c++)
        table_col(t, new->cols[c].key, new->cols[c].title, new->cols[c].type);
    int sc = table_col_index(new, "series");
    for (int r = 0; r < new->nrows; r++) {
        table_row(t);
        for (int c = 0; c < new->ncols; c++) table_copy_cell(t, c, new, r, c);
        for (int i = 0; i < rn->n; i++)
            if (rn->row[i] == r && sc >= 0) table_set_text(t, sc, rn->base[i]);
    }
    return t;
}

const char *series_renamed_to(const struct series_renames *rn, const char *phase, const char *name)
{
    for (int i = 0; rn && i < rn->n; i++)
        if (!strcmp(rn->phase[i], phase) && !strcmp(rn->base[i], name)) return rn->new[i];
    return NULL;
}

struct table *series_renamed(const struct table *new, const struct series_renames *rn)
{
    struct table *t = table_new(new->key, new->title);
    for (int c = 0; c < new->ncols; c++)
        table_col(t, new->cols[c].key, new->cols[c].title, new->cols[c].type);
    int sc = table_col_index(new, "series"), pc = table_col_index(new, "phase");
    for (int r = 0; r < new->nrows; r++) {
        table_row(t);
        for (int c = 0; c < new->ncols; c++) table_copy_cell(t, c, new, r, c);
        const struct cell *p = pc >= 0 ? table_cell(new, r, "phase") : NULL;
        const struct cell *s = sc >= 0 ? table_cell(new, r, "series") : NULL;
        for (int i = 0; p && p->s && s && s->s && i < rn->n; i++)
            if (!strcmp(rn->phase[i], p->s) && !strcmp(rn->new[i], s->s)) {
                table_set_text(t, sc, rn->base[i]);
                break;
            }
    }
    return t;
}
