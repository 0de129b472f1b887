/*
 * operators_series.c: each series' PyTorch operators (operators_series.h): per series (a phase's
 * configuration: its mark name, batch and settings) and operator name, the calls and self time
 * per iteration, over the series' steady iterations whose operators were recorded (every one
 * with INFPROF_OPERATORS=1; the captured ones when sampled). What compare matches series by, so
 * that a configuration's operators are compared with the same configuration's.
 */
#include "operators_series.h"
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct by_id {
    int64_t id; /* first: run_cmp_i64 orders by it */
    int series;
};

/* The series of each counted iteration with an id (steady, or set apart for its capture). */
static size_t series_of_iterations(const struct run_phases *p, struct by_id **out)
{
    struct by_id *v = malloc((p->niters ? p->niters : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->id > 0 && x->series >= 0 && (x->steady || x->captured))
            v[n++] = (struct by_id){x->id, x->series};
    }
    qsort(v, n, sizeof *v, run_cmp_i64);
    *out = v;
    return n;
}

size_t operators_by_series(struct sqlite3 *db, const struct run_phases *p,
                           struct op_series_row **out)
{
    *out = NULL;
    if (!db_has_table(db, "torch_operators") || !p->series.v || !p->series.n) return 0;
    int sampled = !db_operators_every_call(db) && db_has_table(db, "torch_operator_windows");
    struct by_id *ids;
    size_t nids = series_of_iterations(p, &ids);
    int ns = p->series.n;
    int64_t *iters = calloc((size_t)ns, sizeof *iters), *calls = calloc((size_t)ns, sizeof *calls);
    int64_t *self = calloc((size_t)ns, sizeof *self);
    char *seen = calloc(nids ? nids : 1, 1);
    if (!iters || !calls || !self || !seen) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(
        db, sampled ? "SELECT o.name_id, s.value, o.iter, count(*), sum(o.self) FROM"
                      " torch_operators o JOIN strings s ON s.id = o.name_id WHERE o.iter IN"
                      " (SELECT iter FROM torch_operator_windows) GROUP BY o.name_id, o.iter"
                      " ORDER BY o.name_id"
                    : "SELECT o.name_id, s.value, o.iter, count(*), sum(o.self) FROM"
                      " torch_operators o JOIN strings s ON s.id = o.name_id WHERE o.iter > 0"
                      " GROUP BY o.name_id, o.iter ORDER BY o.name_id");
    /* Two passes over one statement: first the iterations each series has operators in (the
     * denominator), then each name's sums. */
    while (db_step(st)) {
        struct by_id key = {sqlite3_column_int64(st, 2), 0};
        struct by_id *x = nids ? bsearch(&key, ids, nids, sizeof *ids, run_cmp_i64) : NULL;
        if (x && !seen[x - ids]) seen[x - ids] = 1, iters[x->series]++;
    }
    sqlite3_reset(st);
    size_t n = 0, cap = 0;
    struct op_series_row *v = NULL;
    int more = 1;
    int64_t name_id = -1;
    char name[64] = "";
    while (more) {
        more = db_step(st);
        int64_t id = more ? sqlite3_column_int64(st, 0) : -2;
        if (id != name_id && name_id != -1) { /* a name's rows are done: one row per series */
            for (int s = 0; s < ns; s++) {
                if (!calls[s] || !iters[s]) continue;
                if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v)))
                    cli_fail("out of memory");
                struct op_series_row *r = &v[n++];
                r->series = s;
                r->phase = p->v[p->series.v[s].phase].id;
                snprintf(r->name, sizeof r->name, "%s", name);
                r->iterations = iters[s];
                r->calls_per_iter = (double)calls[s] / (double)iters[s];
                r->self_per_iter = (double)self[s] / (double)iters[s];
            }
            memset(calls, 0, (size_t)ns * sizeof *calls);
            memset(self, 0, (size_t)ns * sizeof *self);
        }
        if (!more) break;
        if (id != name_id) {
            const unsigned char *t = sqlite3_column_text(st, 1);
            snprintf(name, sizeof name, "%s", t ? (const char *)t : "?");
            name_id = id;
        }
        struct by_id key = {sqlite3_column_int64(st, 2), 0};
        struct by_id *x = nids ? bsearch(&key, ids, nids, sizeof *ids, run_cmp_i64) : NULL;
        if (!x) continue; /* warm-up, or no series */
        calls[x->series] += sqlite3_column_int64(st, 3);
        self[x->series] += sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    free(ids), free(iters), free(calls), free(self), free(seen);
    *out = v;
    return n;
}
