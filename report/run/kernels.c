/*
 * kernels.c: the run model's kernel figures by name (kernels.h): the Kernels section's rows from
 * the end-of-run summary (kernel_summary) or from the kernel rows themselves (an NVTX filter, a
 * run without a summary), and each phase's kernel names for the advice rules.
 */
#include "kernels.h"
#include "../../profiler/glob.h"
#include "../../profiler/map.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* name: malloc'ed (db_text_whole), owned by the row from here. */
static struct kernels_row *row_add(struct kernels_list *r, char *name, int phase)
{
    if (r->n == r->cap &&
        !(r->v = realloc(r->v, (size_t)(r->cap = r->cap ? r->cap * 2 : 64) * sizeof *r->v)))
        cli_fail("out of memory");
    struct kernels_row *k = &r->v[r->n++];
    memset(k, 0, sizeof *k);
    k->name = name;
    k->phase = phase;
    return k;
}

static int cmp_kernel(const void *a, const void *b)
{
    const struct kernels_row *x = a, *y = b;
    if (x->phase != y->phase) return x->phase - y->phase;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    return strcmp(x->name, y->name);
}

static void from_summary(struct sqlite3 *db, struct kernels_list *r, int by_phase, int phase)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT s.value, k.phase, k.count, k.total, k.min, k.max,"
                                      " k.med, k.stddev FROM kernel_summary k JOIN strings s ON"
                                      " s.id = k.name_id WHERE (?1 AND k.phase >= 0 AND"
                                      " (?2 < 0 OR k.phase = ?2)) OR (NOT ?1 AND k.phase = ?2)");
    sqlite3_bind_int(st, 1, by_phase);
    sqlite3_bind_int(st, 2, phase);
    while (db_step(st)) {
        struct kernels_row *k = row_add(r, db_text_whole(st, 0),
                                        by_phase || phase >= 0 ? sqlite3_column_int(st, 1) : -1);
        k->count = sqlite3_column_int64(st, 2);
        k->total = sqlite3_column_int64(st, 3);
        k->min = sqlite3_column_int64(st, 4);
        k->max = sqlite3_column_int64(st, 5);
        k->med = sqlite3_column_int64(st, 6);
        k->stddev = sqlite3_column_double(st, 7);
    }
    sqlite3_finalize(st);
}

/* The ids of NVTX ranges named like `glob`, and of every range nested in one. */
static void ranges_inside(struct sqlite3 *db, const char *glob, struct ip_map *set)
{
    struct ip_map parent = {0};
    sqlite3_stmt *st = db_prepare(db, "SELECT r.id, r.parent, coalesce(s.value, '') FROM"
                                      " nvtx_ranges r LEFT JOIN strings s ON s.id = r.text_id"
                                      " WHERE r.kind = 1");
    while (db_step(st)) {
        uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
        if (ip_glob_match(glob, (const char *)sqlite3_column_text(st, 2))) *ip_map_put(set, id) = 1;
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            *ip_map_put(&parent, id) = (uint64_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    /* A range is inside when an ancestor matched: walk each chain once. */
    for (size_t i = 0; i < parent.cap; i++) {
        uint64_t id = parent.keys[i];
        if (!id || ip_map_get(set, id)) continue;
        for (uint64_t up = parent.vals[i], depth = 0; up && depth < 256; depth++) {
            if (ip_map_get(set, up)) {
                *ip_map_put(set, id) = 1;
                break;
            }
            uint64_t *next = ip_map_get(&parent, up);
            up = next ? *next : 0;
        }
    }
    ip_map_free(&parent);
}

static void from_rows(struct sqlite3 *db, struct kernels_list *r, int by_phase, int phase,
                      const char *nvtx)
{
    struct ip_map inside = {0}, index = {0};
    if (nvtx) ranges_inside(db, nvtx, &inside);
    /* The launching range: kernel_rows.nvtx (schema 3), else the launch's API record. */
    const char *sql =
        !nvtx ? "SELECT g.name_id, s.value, g.phase, k.dur, NULL FROM kernel_rows k JOIN"
                " launch_sigs g ON g.id = k.sig JOIN strings s ON s.id = g.name_id"
        : db_has_column(db, "kernel_rows", "nvtx")
            ? "SELECT g.name_id, s.value, g.phase, k.dur, k.nvtx FROM kernel_rows k JOIN"
              " launch_sigs g ON g.id = k.sig JOIN strings s ON s.id = g.name_id WHERE k.nvtx IS"
              " NOT NULL"
            : "SELECT g.name_id, s.value, g.phase, k.dur, a.nvtx FROM kernel_rows k JOIN"
              " launch_sigs g ON g.id = k.sig JOIN strings s ON s.id = g.name_id JOIN cuda_api a"
              " ON a.corr = k.corr WHERE a.nvtx IS NOT NULL";
    sqlite3_stmt *st = db_prepare(db, sql);
    struct ip_stats *stats = NULL;
    int cap = 0;
    while (db_step(st)) {
        int ph = sqlite3_column_int(st, 2);
        if (phase >= 0 && ph != phase) continue; /* --phase, with --by-phase too */
        if (nvtx && !ip_map_get(&inside, (uint64_t)sqlite3_column_int64(st, 4))) continue;
        int key_phase = by_phase || phase >= 0 ? ph : -1;
        uint64_t key = (uint64_t)sqlite3_column_int64(st, 0) << 8 | (uint64_t)(key_phase + 1);
        uint64_t *slot = ip_map_put(&index, key);
        if (!slot) cli_fail("out of memory");
        if (!*slot) {
            row_add(r, db_text_whole(st, 1), key_phase);
            if (r->n > cap && !(stats = realloc(stats, (size_t)(cap = r->cap) * sizeof *stats)))
                cli_fail("out of memory");
            ip_stats_init(&stats[r->n - 1], 0);
            *slot = (uint64_t)r->n;
        }
        ip_stats_add(&stats[*slot - 1], sqlite3_column_int64(st, 3));
    }
    sqlite3_finalize(st);
    for (int i = 0; i < r->n; i++) {
        struct kernels_row *k = &r->v[i];
        k->count = (int64_t)stats[i].count;
        k->total = stats[i].total;
        k->min = stats[i].min;
        k->max = stats[i].max;
        k->med = ip_stats_median(&stats[i], NULL);
        k->stddev = ip_stats_stddev(&stats[i]);
        ip_stats_free(&stats[i]);
    }
    free(stats);
    ip_map_free(&inside);
    ip_map_free(&index);
}

static int has_summary(struct sqlite3 *db)
{
    return db_int(db, "SELECT count(*) FROM kernel_summary", 0) > 0;
}

void kernels_load(struct sqlite3 *db, int by_phase, int phase, const char *nvtx,
                  struct kernels_list *out)
{
    memset(out, 0, sizeof *out);
    /* The summary has no launching range: a glob needs the rows. */
    if (has_summary(db) && !nvtx)
        from_summary(db, out, by_phase, phase);
    else
        from_rows(db, out, by_phase, phase, nvtx);
    if (out->n) qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_kernel);
}

void kernels_list_free(struct kernels_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i].name);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- kernel names per phase (the lazy part) ---------------------------------------------- */

static void name_add(struct kernels_names *l, size_t *cap, const char *name, sqlite3_stmt *st)
{
    if (l->n == *cap && !(l->v = realloc(l->v, (*cap = *cap ? *cap * 2 : 64) * sizeof *l->v)))
        cli_fail("out of memory");
    struct kernels_name *k = &l->v[l->n++];
    if (!(k->name = strdup(name))) cli_fail("out of memory");
    k->count = sqlite3_column_int64(st, 2);
    k->total = sqlite3_column_int64(st, 3);
    k->min = sqlite3_column_int64(st, 4);
    k->max = sqlite3_column_int64(st, 5);
}

static void names_load(struct sqlite3 *db, const struct run_phases *p, struct kernels_run *r)
{
    memset(r, 0, sizeof *r);
    size_t cap[REPORT_MAX_PHASES] = {0};
    sqlite3_stmt *st = db_prepare(
        db, has_summary(db)
                ? "SELECT k.phase, s.value, k.count, k.total, k.min, k.max FROM"
                  " kernel_summary k JOIN strings s ON s.id = k.name_id WHERE k.phase >= 0"
                : "SELECT k.phase, s.value, count(*), sum(k.dur), min(k.dur), max(k.dur)"
                  " FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1, 2");
    while (db_step(st)) {
        int id = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        for (int i = 0; i < p->n; i++)
            if (p->v[i].id == id && name) name_add(&r->phase[i], &cap[i], name, st);
    }
    sqlite3_finalize(st);
}

static void kernels_drop(void *r)
{
    struct kernels_run *k = r;
    for (int i = 0; i < REPORT_MAX_PHASES; i++) {
        for (size_t j = 0; j < k->phase[i].n; j++) free(k->phase[i].v[j].name);
        free(k->phase[i].v);
    }
    free(k);
}

const struct run_model run_model_kernels = {"kernels", kernels_drop, 0};

const struct kernels_run *run_kernels(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_kernels);
    if (!*slot) {
        struct kernels_run *r = malloc(sizeof *r);
        if (!r) cli_fail("out of memory");
        names_load(db, p, r);
        *slot = r;
    }
    return *slot;
}
