/*
 * kernrows.c: kernel_rows and launch_sigs read once (kernrows.h): 40 bytes a kernel held in
 * memory, against a scan of the table (and its join) per figure.
 */
#include "kernrows.h"
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct decode_ctx {
    const struct kern_rows *k;
    int dense; /* signature ids 1, 2, 3...: found by their id at once */
};

/* One kernel (db_scan: on a reader thread, reading the signatures only). */
static void decode(sqlite3_stmt *st, void *row, void *ctx)
{
    const struct decode_ctx *c = ctx;
    const struct kern_rows *k = c->k;
    struct kern_row *r = row;
    r->start = sqlite3_column_int64(st, 0);
    r->dur = sqlite3_column_int64(st, 1);
    r->iter =
        sqlite3_column_type(st, 2) == SQLITE_NULL ? KROW_NO_ITER : sqlite3_column_int64(st, 2);
    r->corr = (uint32_t)sqlite3_column_int64(st, 3);
    r->op = (uint32_t)sqlite3_column_int64(st, 5);
    int64_t sig = sqlite3_column_int64(st, 4);
    r->sig = -1;
    if (sqlite3_column_type(st, 4) == SQLITE_NULL) return;
    if (c->dense) {
        if (sig >= 1 && sig <= (int64_t)k->nsigs) r->sig = (int32_t)(sig - 1);
    } else {
        const struct ksig *g =
            k->nsigs ? bsearch(&sig, k->sigs, k->nsigs, sizeof *k->sigs, rstats_cmp_i64) : NULL;
        if (g) r->sig = (int32_t)(g - k->sigs);
    }
}

static void load(sqlite3 *db, struct kern_rows *k)
{
    if (!db_has_table(db, "kernel_rows")) return;
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM launch_sigs", 0);
    if (cap && !(k->sigs = malloc(cap * sizeof *k->sigs))) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, "SELECT id, name_id, phase FROM launch_sigs");
    while (k->nsigs < cap && db_step(st))
        k->sigs[k->nsigs++] = (struct ksig){sqlite3_column_int64(st, 0),
                                            sqlite3_column_int64(st, 1), sqlite3_column_int(st, 2)};
    sqlite3_finalize(st);
    if (k->nsigs) qsort(k->sigs, k->nsigs, sizeof *k->sigs, rstats_cmp_i64);
    struct decode_ctx c = {k, 1};
    for (size_t i = 0; i < k->nsigs && c.dense; i++) c.dense = k->sigs[i].id == (int64_t)i + 1;
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT start, dur, %s, corr, sig, %s FROM kernel_rows WHERE rowid BETWEEN ?1 AND ?2",
             db_has_column(db, "kernel_rows", "iter") ? "iter" : "NULL",
             db_has_column(db, "kernel_rows", "op") ? "op" : "NULL");
    k->v = db_scan(db, "kernel_rows", sql, sizeof *k->v, decode, &c, &k->n);
}

static void kern_rows_drop(void *k)
{
    kern_rows_free(k);
}

const struct run_model run_model_kern_rows = {"kern_rows", kern_rows_drop, 1};

const struct kern_rows *kern_rows_get(sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_kern_rows);
    if (!*slot) {
        struct kern_rows *k = calloc(1, sizeof *k);
        if (!k) cli_fail("out of memory");
        load(db, k);
        *slot = k;
    }
    return *slot;
}

void kern_rows_free(struct kern_rows *k)
{
    if (k) free(k->v), free(k->sigs);
    free(k);
}
