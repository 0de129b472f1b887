/*
 * nvtx.c: the run model's NVTX ranges and the GPU time inside them (nvtx.h): the ranges grouped
 * by name and style from nvtx_ranges, then each launching range's kernels (kernel_rows.nvtx, or
 * the launch's API record in older databases) rolled up its parent chain.
 */
#include "nvtx.h"
#include "../../profiler/map.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* While loading: the groups with every duration kept (exact medians), and the maps from ranges
 * to their group and parent. */
struct range_groups {
    struct nvtx_group *g;
    struct ip_stats *st; /* per group */
    int n, cap;
    struct ip_map by_key;   /* hash(name, kind), probed on collision -> group index + 1 */
    struct ip_map range_of; /* range id -> group index + 1 */
    struct ip_map parent;   /* range id -> parent range id */
};

static uint64_t key_of(const char *name, int kind)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h | 1;
}

static int group_of(struct range_groups *v, const char *name, int kind)
{
    /* Linear probing over keys: a collision moves to the next key value. */
    for (uint64_t k = key_of(name, kind);; k += 2) {
        uint64_t *slot = ip_map_put(&v->by_key, k);
        if (!slot) cli_fail("out of memory");
        if (*slot) {
            struct nvtx_group *g = &v->g[*slot - 1];
            if (g->kind == kind && !strcmp(g->name, name)) return (int)*slot - 1;
            continue;
        }
        if (v->n == v->cap) {
            v->cap = v->cap ? v->cap * 2 : 64;
            v->g = realloc(v->g, (size_t)v->cap * sizeof *v->g);
            v->st = realloc(v->st, (size_t)v->cap * sizeof *v->st);
            if (!v->g || !v->st) cli_fail("out of memory");
        }
        struct nvtx_group *g = &v->g[v->n];
        memset(g, 0, sizeof *g);
        if (!(g->name = strdup(name))) cli_fail("out of memory");
        g->kind = kind;
        ip_stats_init(&v->st[v->n], 0);
        *slot = (uint64_t)++v->n;
        return v->n - 1;
    }
}

static void load_ranges(struct sqlite3 *db, struct range_groups *v)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT r.id, r.parent, r.kind, r.end - r.start,"
                                      " coalesce(ds.value || '/', '') || coalesce(s.value,"
                                      " '(unnamed)') FROM nvtx_ranges r LEFT JOIN strings s ON"
                                      " s.id = r.text_id LEFT JOIN nvtx_domains d ON d.id ="
                                      " r.domain LEFT JOIN strings ds ON ds.id = d.name_id"
                                      " WHERE r.kind IN (1, 2) AND r.end IS NOT NULL");
    while (db_step(st)) {
        int g = group_of(v, (const char *)sqlite3_column_text(st, 4), sqlite3_column_int(st, 2));
        ip_stats_add(&v->st[g], sqlite3_column_int64(st, 3));
        uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
        uint64_t *slot = ip_map_put(&v->range_of, id);
        if (slot) *slot = (uint64_t)g + 1;
        if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
            uint64_t *par = ip_map_put(&v->parent, id);
            if (par) *par = (uint64_t)sqlite3_column_int64(st, 1);
        }
    }
    sqlite3_finalize(st);
}

/* GPU time of kernels by innermost range, rolled up the parent chain once per group. */
static void load_gpu(struct sqlite3 *db, struct range_groups *v)
{
    /* Schema 3 keeps each kernel's launching range in kernel_rows.nvtx; older databases had it
     * only in the API records of its launch (when they were kept). */
    sqlite3_stmt *st =
        db_prepare(db, db_has_column(db, "kernel_rows", "nvtx")
                           ? "SELECT nvtx, count(*), sum(dur) FROM kernel_rows WHERE nvtx IS NOT"
                             " NULL GROUP BY nvtx"
                           : "SELECT a.nvtx, count(*), sum(k.dur) FROM kernels k JOIN cuda_api a"
                             " ON a.corr = k.corr WHERE a.nvtx IS NOT NULL GROUP BY a.nvtx");
    while (db_step(st)) {
        uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
        int64_t n = sqlite3_column_int64(st, 1), ns = sqlite3_column_int64(st, 2);
        int seen[64], nseen = 0;
        for (int depth = 0; id && depth < 256; depth++) {
            uint64_t *g = ip_map_get(&v->range_of, id);
            if (g) {
                int idx = (int)*g - 1, dup = 0;
                for (int k = 0; k < nseen; k++) dup |= seen[k] == idx;
                if (!dup) {
                    v->g[idx].kernels += n;
                    v->g[idx].gpu_ns += ns;
                    if (nseen < 64) seen[nseen++] = idx;
                }
            }
            uint64_t *par = ip_map_get(&v->parent, id);
            id = par ? *par : 0;
        }
    }
    sqlite3_finalize(st);
}

static int cmp_group(const void *a, const void *b)
{
    const struct nvtx_group *x = a, *y = b;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    return strcmp(x->name, y->name);
}

/* The kernels of the run, and those with a launching range (kernel_rows.nvtx, else the API
 * record's), for the note of a run that lost events. */
static void count_ranged(struct sqlite3 *db, struct nvtx_run *r)
{
    r->kernels_all = db_int(db, "SELECT count(*) FROM kernel_rows", 0);
    r->kernels_ranged = db_int(db,
                               db_has_column(db, "kernel_rows", "nvtx")
                                   ? "SELECT count(*) FROM kernel_rows WHERE nvtx IS NOT NULL"
                                   : "SELECT count(*) FROM kernel_rows k JOIN cuda_api a ON"
                                     " a.corr = k.corr WHERE a.nvtx IS NOT NULL",
                               0);
}

static void nvtx_load(struct sqlite3 *db, const struct run_phases *p, struct nvtx_run *r)
{
    memset(r, 0, sizeof *r);
    struct range_groups v;
    memset(&v, 0, sizeof v);
    load_ranges(db, &v);
    r->has_kernels = db_int(db, "SELECT EXISTS (SELECT 1 FROM kernel_rows)", 0) != 0;
    if (v.n && r->has_kernels) load_gpu(db, &v);
    for (int i = 0; i < v.n; i++) {
        struct nvtx_group *g = &v.g[i];
        g->count = (int64_t)v.st[i].count;
        g->total = v.st[i].total;
        g->min = v.st[i].min;
        g->max = v.st[i].max;
        g->med = ip_stats_median(&v.st[i], NULL);
        g->stddev = ip_stats_stddev(&v.st[i]);
        ip_stats_free(&v.st[i]);
    }
    if (v.n) qsort(v.g, (size_t)v.n, sizeof *v.g, cmp_group);
    r->v = v.g;
    r->n = v.n;
    r->kernels_all = r->kernels_ranged = -1;
    if (p->lost[RUN_LOST_EVENTS] > 0 && v.n) count_ranged(db, r);
    free(v.st);
    ip_map_free(&v.by_key);
    ip_map_free(&v.range_of);
    ip_map_free(&v.parent);
}

/* Kept to the end: a report of several processes reads no NVTX ranges after its sections. */
const struct run_model run_model_nvtx = {"nvtx", NULL, 0};

const struct nvtx_run *run_nvtx(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_nvtx);
    if (!*slot) {
        struct nvtx_run *r = malloc(sizeof *r);
        if (!r) cli_fail("out of memory");
        nvtx_load(db, p, r);
        *slot = r;
    }
    return *slot;
}
