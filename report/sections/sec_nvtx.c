/*
 * sec_nvtx.c: the program's NVTX ranges: CPU time per range name (nsys nvtx_sum) and the GPU
 * time of the work launched inside each range, nested ranges included (nsys nvtx_gpu_proj_sum).
 * A kernel belongs to the innermost push/pop range of the thread that launched it; its GPU time
 * counts once for that range and once for each enclosing range of another name.
 */
#include "sections.h"
#include "../../profiler/map.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct nvtx_group {
    char *name; /* "domain/text" or "text" */
    int kind;   /* 1 push/pop, 2 start/end */
    struct ip_stats st;
    int64_t kernels, gpu_ns;
};

struct nvtx_view {
    struct nvtx_group *g;
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

static int group_of(struct nvtx_view *v, const char *name, int kind)
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
        if (v->n == v->cap &&
            !(v->g = realloc(v->g, (size_t)(v->cap = v->cap ? v->cap * 2 : 64) * sizeof *v->g)))
            cli_fail("out of memory");
        struct nvtx_group *g = &v->g[v->n];
        memset(g, 0, sizeof *g);
        g->name = strdup(name);
        g->kind = kind;
        ip_stats_init(&g->st, 0);
        *slot = (uint64_t)++v->n;
        return v->n - 1;
    }
}

static void load_ranges(struct sqlite3 *db, struct nvtx_view *v)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT r.id, r.parent, r.kind, r.end - r.start,"
                                      " coalesce(ds.value || '/', '') || coalesce(s.value,"
                                      " '(unnamed)') FROM nvtx_ranges r LEFT JOIN strings s ON"
                                      " s.id = r.text_id LEFT JOIN nvtx_domains d ON d.id ="
                                      " r.domain LEFT JOIN strings ds ON ds.id = d.name_id"
                                      " WHERE r.kind IN (1, 2) AND r.end IS NOT NULL");
    while (db_step(st)) {
        int g = group_of(v, (const char *)sqlite3_column_text(st, 4), sqlite3_column_int(st, 2));
        ip_stats_add(&v->g[g].st, sqlite3_column_int64(st, 3));
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
static void load_gpu(struct sqlite3 *db, struct nvtx_view *v)
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
    if (x->st.total != y->st.total)
        return (x->st.total < y->st.total) - (x->st.total > y->st.total);
    return strcmp(x->name, y->name);
}

struct table *section_nvtx(struct sqlite3 *db, const struct report_opts *o)
{
    struct table *t = table_new("nvtx", "NVTX ranges (CPU time; GPU time of the work launched"
                                        " inside)");
    static const struct stat_cols stat = {"instances", "Instances", 0, 0, 0, 0};
    table_stat_cols(t, &stat);
    table_col(t, "style", NULL, COL_TEXT);
    table_col(t, "gpu_kernels", "Kernels", COL_INT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    table_col(t, "range", "Range", COL_NAME);
    struct nvtx_view v;
    memset(&v, 0, sizeof v);
    load_ranges(db, &v);
    int cuda = db_int(db, "SELECT EXISTS (SELECT 1 FROM kernel_rows)", 0);
    if (v.n && cuda) load_gpu(db, &v);
    if (v.n) qsort(v.g, (size_t)v.n, sizeof *v.g, cmp_group);
    double all = 0;
    for (int i = 0; i < v.n; i++) all += (double)v.g[i].st.total;
    int shown = o->top && o->top < v.n ? o->top : v.n;
    for (int i = 0; i < v.n; i++) {
        struct nvtx_group *g = &v.g[i];
        if (i < shown) {
            int exact;
            table_row(t);
            struct stat_cells s = {1,
                                   all,
                                   g->st.total,
                                   (int64_t)g->st.count,
                                   ip_stats_median(&g->st, &exact),
                                   g->st.min,
                                   g->st.max,
                                   ip_stats_stddev(&g->st)};
            table_set_stats(t, 0, &s);
            table_set_text(t, 8, g->kind == 1 ? "PushPop" : "StartEnd");
            if (cuda) {
                table_set_int(t, 9, g->kernels);
                table_set_int(t, 10, g->gpu_ns);
            }
            table_set_text(t, 11, g->name);
        }
        ip_stats_free(&g->st);
        free(g->name);
    }
    static char note[400];
    note[0] = 0;
    if (shown < v.n)
        snprintf(note, sizeof note, "%d more range names not shown (--top 0 shows all)",
                 v.n - shown);
    /* A run that lost events may have lost range pushes and pops and launch records: the GPU
     * projection then undercounts, and says so (issue 25: the ResNet-50 fixture's
     * inference/fp16 range, 2,185 kernels where its time span holds 14,060). */
    int64_t dropped = 0;
    db_meta_int(db, "dropped_events", &dropped);
    if (dropped > 0 && v.n) {
        int64_t all = db_int(db, "SELECT count(*) FROM kernel_rows", 0);
        int64_t in = db_int(db,
                            db_has_column(db, "kernel_rows", "nvtx")
                                ? "SELECT count(*) FROM kernel_rows WHERE nvtx IS NOT NULL"
                                : "SELECT count(*) FROM kernel_rows k JOIN cuda_api a ON a.corr ="
                                  " k.corr WHERE a.nvtx IS NOT NULL",
                            0);
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len,
                 "%sGPU kernels and time may undercount: the run lost %lld events (range pushes,"
                 " pops or launch records among them); %lld of %lld kernels have a launching"
                 " range",
                 len ? ". " : "", (long long)dropped, (long long)in, (long long)all);
    }
    t->note = note[0] ? note : NULL;
    free(v.g);
    ip_map_free(&v.by_key);
    ip_map_free(&v.range_of);
    ip_map_free(&v.parent);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int nvtx_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_nvtx(c->db, c->o);
    return 1;
}

static const struct section_compare nvtx_compare = {
    .spec = {.key = "nvtx",
             .match = {"range", "style"},
             .figs = {{"total_ns", 1, 0},
                      {"instances", 1, 0},
                      {"avg_ns", 0, 0},
                      {"med_ns", 0, 0},
                      {"gpu_kernels", 1, 0},
                      {"gpu_time_ns", 1, 0}},
             .sort = "total_ns",
             .what = "range names"},
    .title = "NVTX ranges (CPU time)",
    .cols = {{"total_ns_base", "Base"},
             {"total_ns_new", "New"},
             {"total_ns_delta", "Delta"},
             {"total_ns_pct", "Delta%"},
             {"gpu_time_ns_base", "GPU base"},
             {"gpu_time_ns_new", "GPU new"},
             {"Change", NULL},
             {"range", "Range"}},
    .top = 1,
};

const struct report_section sec_nvtx = {
    .key = "nvtx", .build = nvtx_build, .shown_empty = 0, .compare = &nvtx_compare};
