/*
 * operators_iters.c: a sampled run's operator sums per phase, operator and capture-window
 * iteration (operators_iters.h). One scan of the writer's sums (or, in a database from before
 * them, of torch_operators: db_operator_calls), summed in a hash table here: SQLite's GROUP BY
 * over the same rows sorted them once per figure that read them (four statements, 1.4 s of the
 * 5 s report of the H200 fixture's 363 k operator calls).
 */
#include "operators_iters.h"
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    int64_t iter, name_id;
    int phase;
    uint32_t row; /* index in v + 1; 0 empty */
};

static uint64_t key_hash(int phase, int64_t name_id, int64_t iter)
{
    uint64_t h = (uint64_t)iter * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)name_id * 0xc2b2ae3d27d4eb4full + (uint64_t)(uint32_t)phase;
    return h ^ (h >> 31);
}

struct agg {
    struct op_iters *x;
    size_t cap;
    struct slot *t;
    size_t tcap;
};

static void agg_rehash(struct agg *a)
{
    size_t cap = a->tcap ? a->tcap * 2 : 4096;
    struct slot *t = calloc(cap, sizeof *t);
    if (!t) cli_fail("out of memory");
    for (size_t i = 0; i < a->tcap; i++) {
        if (!a->t[i].row) continue;
        size_t j = key_hash(a->t[i].phase, a->t[i].name_id, a->t[i].iter) & (cap - 1);
        while (t[j].row) j = (j + 1) & (cap - 1);
        t[j] = a->t[i];
    }
    free(a->t);
    a->t = t;
    a->tcap = cap;
}

static struct op_iter_sum *agg_row(struct agg *a, int phase, int64_t name_id, int64_t iter)
{
    if ((a->x->n + 1) * 2 > a->tcap) agg_rehash(a);
    size_t j = key_hash(phase, name_id, iter) & (a->tcap - 1);
    for (; a->t[j].row; j = (j + 1) & (a->tcap - 1)) {
        struct slot *s = &a->t[j];
        if (s->iter == iter && s->name_id == name_id && s->phase == phase)
            return &a->x->v[s->row - 1];
    }
    if (a->x->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 1024;
        if (!(a->x->v = realloc(a->x->v, a->cap * sizeof *a->x->v))) cli_fail("out of memory");
    }
    struct op_iter_sum *r = &a->x->v[a->x->n++];
    memset(r, 0, sizeof *r);
    r->phase = phase, r->name_id = name_id, r->iter = iter;
    a->t[j] = (struct slot){iter, name_id, phase, (uint32_t)a->x->n};
    return r;
}

static int cmp_sum(const void *a, const void *b)
{
    const struct op_iter_sum *x = a, *y = b;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    if (x->name_id != y->name_id) return x->name_id < y->name_id ? -1 : 1;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

/* The names the rows use. A row whose name the strings table lacks is kept, unnamed: the
 * statements it replaces that joined the names left it out, the phase's sums did not. */
static void names_load(sqlite3 *db, struct op_iters *x)
{
    size_t cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT id, value FROM strings");
    while (db_step(st)) {
        if (x->nnames == cap &&
            !(x->names = realloc(x->names, (cap = cap ? cap * 2 : 256) * sizeof *x->names)))
            cli_fail("out of memory");
        const unsigned char *t = sqlite3_column_text(st, 1);
        struct op_iter_name *n = &x->names[x->nnames++];
        n->id = sqlite3_column_int64(st, 0);
        n->value = t ? strdup((const char *)t) : NULL;
        if (t && !n->value) cli_fail("out of memory");
    }
    sqlite3_finalize(st);
    if (x->nnames) qsort(x->names, x->nnames, sizeof *x->names, rstats_cmp_i64);
}

static const struct op_iter_name *name_find(const struct op_iters *x, int64_t id)
{
    return x->nnames ? bsearch(&id, x->names, x->nnames, sizeof *x->names, rstats_cmp_i64) : NULL;
}

const char *op_iters_name(const struct op_iters *x, int64_t name_id)
{
    const struct op_iter_name *n = name_find(x, name_id);
    return n ? n->value : NULL;
}

static void load(sqlite3 *db, struct op_iters *x)
{
    size_t nw = (size_t)db_int(
               db, pool_printf("SELECT count(*) FROM %s", iterations_operator_windows(db)), 0),
           mw = 0;
    int64_t *w = malloc((nw ? nw : 1) * sizeof *w);
    if (!w) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, pool_printf("SELECT iter FROM %s WHERE iter IS NOT NULL",
                                                  iterations_operator_windows(db)));
    while (mw < nw && db_step(st)) w[mw++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    rstats_sort_i64(w, mw);
    /* NOT IN over a set holding NULL is never true: no call counts as outside then. */
    int null_window = mw < nw;
    names_load(db, x);
    struct agg a = {x, 0, NULL, 0};
    st = db_prepare(db, pool_printf("SELECT phase, name_id, iter, calls, self, dur FROM %s",
                                    iterations_operator_calls(db)));
    while (db_step(st)) {
        int64_t calls = sqlite3_column_int64(st, 3);
        if (sqlite3_column_type(st, 2) == SQLITE_NULL) { /* NOT IN an empty set is true */
            x->outside += nw == 0 ? calls : 0;
            continue;
        }
        int64_t iter = sqlite3_column_int64(st, 2);
        if (iter == -1) { /* a moved mark's own thread (iterations_operator_calls) */
            x->moved += calls;
            continue;
        }
        if (!mw || !bsearch(&iter, w, mw, sizeof *w, rstats_cmp_i64)) {
            x->outside += !null_window ? calls : 0;
            continue;
        }
        int null_name = sqlite3_column_type(st, 1) == SQLITE_NULL;
        int64_t name_id = null_name ? INT64_MIN : sqlite3_column_int64(st, 1);
        struct op_iter_sum *r = agg_row(&a, sqlite3_column_int(st, 0), name_id, iter);
        r->named = !null_name && name_find(x, name_id);
        r->calls += calls;
        r->self += sqlite3_column_int64(st, 4);
        r->dur += sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
    free(a.t);
    free(w);
    if (x->n) qsort(x->v, x->n, sizeof *x->v, cmp_sum);
}

static void op_iters_drop(void *x)
{
    op_iters_free(x);
}

const struct run_model run_model_op_iters = {"op_iters", op_iters_drop, 1};

const struct op_iters *op_iters_get(sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_op_iters);
    if (*slot) return *slot;
    if (!db_has_table(db, "torch_operators") || !db_has_table(db, "torch_operator_windows"))
        return NULL;
    struct op_iters *x = calloc(1, sizeof *x);
    if (!x) cli_fail("out of memory");
    load(db, x);
    *slot = x;
    return x;
}

void op_iters_free(struct op_iters *x)
{
    if (!x) return;
    for (size_t i = 0; i < x->nnames; i++) free(x->names[i].value);
    free(x->names);
    free(x->v);
    free(x);
}
