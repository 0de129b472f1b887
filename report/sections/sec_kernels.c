/*
 * sec_kernels.c: the kernel summary in Nsight Systems' cuda_gpu_kern_sum columns (Time %, Total,
 * Instances, Avg, Med, Min, Max, StdDev, Name), over all phases, per phase (--by-phase), for one
 * phase (--phase) or for the work launched inside NVTX ranges of one name (--nvtx, nested ranges
 * included). The end-of-run summary answers the first three; the rows answer the NVTX filter and
 * runs that did not finish (exact medians then).
 */
#include "sections.h"
#include "../../profiler/glob.h"
#include "../../profiler/map.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct kernel_row {
    char *name;
    int phase; /* -1: all phases */
    int64_t count, total, min, max, med;
    double stddev;
};

struct kernel_rows {
    struct kernel_row *v;
    int n, cap;
};

/* name: malloc'ed (db_text_whole), owned by the row from here. */
static struct kernel_row *row_add(struct kernel_rows *r, char *name, int phase)
{
    if (r->n == r->cap &&
        !(r->v = realloc(r->v, (size_t)(r->cap = r->cap ? r->cap * 2 : 64) * sizeof *r->v)))
        cli_fail("out of memory");
    struct kernel_row *k = &r->v[r->n++];
    memset(k, 0, sizeof *k);
    k->name = name;
    k->phase = phase;
    return k;
}

static int cmp_kernel(const void *a, const void *b)
{
    const struct kernel_row *x = a, *y = b;
    if (x->phase != y->phase) return x->phase - y->phase;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    return strcmp(x->name, y->name);
}

static void from_summary(struct sqlite3 *db, struct kernel_rows *r, int by_phase, int phase)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT s.value, k.phase, k.count, k.total, k.min, k.max,"
                                      " k.med, k.stddev FROM kernel_summary k JOIN strings s ON"
                                      " s.id = k.name_id WHERE (?1 AND k.phase >= 0 AND"
                                      " (?2 < 0 OR k.phase = ?2)) OR (NOT ?1 AND k.phase = ?2)");
    sqlite3_bind_int(st, 1, by_phase);
    sqlite3_bind_int(st, 2, phase);
    while (db_step(st)) {
        struct kernel_row *k = row_add(r, db_text_whole(st, 0),
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

static void from_rows(struct sqlite3 *db, struct kernel_rows *r, int by_phase, int phase,
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
        struct kernel_row *k = &r->v[i];
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

struct table *section_kernels(struct sqlite3 *db, const struct run_phases *p,
                              const struct report_opts *o)
{
    int phase = -1;
    static char title[160];
    if (o->phase) {
        const struct phase_info *ph = &p->v[phases_find(p, o->phase, "--phase")];
        phase = ph->id;
        snprintf(title, sizeof title, "CUDA kernels of phase %s", ph->label);
    } else {
        snprintf(title, sizeof title, "CUDA kernels (%s)", o->by_phase ? "by phase" : "all phases");
    }
    if (o->nvtx)
        snprintf(title + strlen(title), sizeof title - strlen(title),
                 ", launched inside NVTX ranges '%.*s'", (int)fmt_utf8_cut(o->nvtx, 40), o->nvtx);
    struct table *t = table_new("kernels", title);
    if (o->by_phase) table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "phase", NULL, COL_TEXT);
    /* Min and standard deviation in JSON and CSV (nsys's columns); text keeps the room for
     * names people can read. */
    static const struct stat_cols stat = {"instances", "Instances", 0, 0, 1, 0};
    table_stat_cols(t, &stat);
    table_col(t, "name", "Name", COL_KERNEL);
    struct kernel_rows r = {0};
    int summary = db_int(db, "SELECT count(*) FROM kernel_summary", 0) > 0;
    if (summary && !o->nvtx)
        from_summary(db, &r, o->by_phase, phase);
    else
        from_rows(db, &r, o->by_phase, phase, o->nvtx);
    if (r.n) qsort(r.v, (size_t)r.n, sizeof *r.v, cmp_kernel);
    int base = o->by_phase ? 1 : 0, shown = 0, hidden = 0;
    for (int i = 0; i < r.n; i++) {
        struct kernel_row *k = &r.v[i];
        /* Time % is within the phase (by phase) or within what the filter kept. */
        double all = 0;
        for (int j = 0; j < r.n; j++)
            if (r.v[j].phase == k->phase) all += (double)r.v[j].total;
        int rank = 0;
        for (int j = i - 1; j >= 0 && r.v[j].phase == k->phase; j--) rank++;
        if (o->top && rank >= o->top) {
            hidden++;
            continue;
        }
        const struct phase_info *ph = phase_by_id(p, k->phase);
        table_row(t);
        if (ph) {
            char s[64];
            phase_short_label(ph, s, sizeof s);
            if (o->by_phase) table_set_text(t, 0, s);
            table_set_text(t, base, ph->label);
        } else if (o->by_phase) {
            table_set_text(t, 0, "none");
            table_set_text(t, base, "none");
        }
        struct stat_cells s = {1, all, k->total, k->count, k->med, k->min, k->max, k->stddev};
        table_set_text(t, table_set_stats(t, base + 1, &s), k->name);
        shown++;
    }
    static char note[128];
    if (hidden) {
        snprintf(note, sizeof note, "%d more kernel names not shown (--top 0 shows all)", hidden);
        t->note = note;
    }
    for (int i = 0; i < r.n; i++) free(r.v[i].name);
    free(r.v);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int kernels_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_kernels(c->db, c->p, c->o);
    return 1;
}

/* Compared by report/compare itself (by name, or by phase and name; --phase). */
const struct report_section sec_kernels = {
    .key = "kernels", .build = kernels_build, .shown_empty = 1, .compare = NULL};
