/*
 * operators.c: per phase and operator name, the calls, self and total CPU time, calls per
 * iteration and share of the phase's operator time, from torch_operators (operators.h). Self
 * time sums to the time spent in operators, so shares add to 100 per phase.
 */
#include "operators.h"
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void operators_load(sqlite3 *db, struct run_operators *r)
{
    memset(r, 0, sizeof *r);
    if (!db_has_table(db, "torch_operators")) return;
    r->present = 1;
    sqlite3_stmt *st = db_prepare(
        db, "WITH ph AS (SELECT phase, sum(self) AS self FROM torch_operators GROUP BY phase),"
            " it AS (SELECT phase, count(*) AS n FROM iterations GROUP BY phase)"
            " SELECT o.phase, s.value, count(*), sum(o.self), sum(o.dur),"
            " sum(o.iter > 0), coalesce(it.n, 0), ph.self"
            " FROM torch_operators o JOIN strings s ON s.id = o.name_id"
            " JOIN ph ON ph.phase = o.phase LEFT JOIN it ON it.phase = o.phase"
            " GROUP BY o.phase, o.name_id ORDER BY o.phase, sum(o.self) DESC");
    size_t cap = 0;
    while (db_step(st)) {
        if ((size_t)r->n == cap && !(r->v = realloc(r->v, (cap = cap ? cap * 2 : 64) *
                                                               sizeof *r->v)))
            cli_fail("out of memory");
        struct op_figure *f = &r->v[r->n++];
        f->phase = sqlite3_column_int(st, 0);
        const unsigned char *name = sqlite3_column_text(st, 1);
        snprintf(f->name, sizeof f->name, "%s", name ? (const char *)name : "?");
        f->calls = sqlite3_column_int64(st, 2);
        f->self_ns = sqlite3_column_int64(st, 3);
        f->total_ns = sqlite3_column_int64(st, 4);
        int64_t in_iter = sqlite3_column_int64(st, 5), iters = sqlite3_column_int64(st, 6);
        f->calls_per_iter = iters > 0 ? (double)in_iter / (double)iters : -1;
        int64_t phase_self = sqlite3_column_int64(st, 7);
        f->self_share = phase_self > 0 ? 100.0 * (double)f->self_ns / (double)phase_self : 0;
    }
    sqlite3_finalize(st);
}

void operators_free(struct run_operators *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}
