/*
 * summaries.c: the end-of-run kernel summary for a run that never reached its end (killed, or
 * still running). The writer fills kernel_summary when the run finishes; without it every section
 * would aggregate millions of rows on its own. Here the rows are read once, aggregated in memory
 * (exact medians: every duration is kept), and written to a TEMP table of the same name, which
 * SQLite resolves before the file's own table: the sections read it unchanged, and the file is
 * not modified.
 */
#include "run.h"
#include "../../profiler/map.h"
#include "../../profiler/phase.h"
#include "../../profiler/stats.h"
#include "../../profiler/stats_row.h"

#include <sqlite3.h>
#include <stdlib.h>

struct summary_key {
    int64_t name_id;
    int phase;
    struct ip_stats st;
};

static void summary_insert(sqlite3_stmt *ins, int64_t name_id, int phase, struct ip_stats *st)
{
    ip_stats_bind_summary(ins, name_id, phase, st);
    if (db_step(ins) != 0) cli_fail("internal: summary insert returned a row");
    sqlite3_reset(ins);
}

static int cmp_name(const void *a, const void *b)
{
    const struct summary_key *x = a, *y = b;
    if (x->name_id != y->name_id) return (x->name_id > y->name_id) - (x->name_id < y->name_id);
    return x->phase - y->phase;
}

void summaries_complete(sqlite3 *db)
{
    if (db_int(db, "SELECT EXISTS (SELECT 1 FROM main.kernel_summary)", 0) ||
        !db_int(db, "SELECT EXISTS (SELECT 1 FROM kernel_rows)", 0))
        return;
    struct ip_map index = {0};
    struct summary_key *v = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT g.name_id, g.phase, k.dur FROM kernel_rows k JOIN"
                                      " launch_sigs g ON g.id = k.sig");
    while (db_step(st)) {
        int64_t name_id = sqlite3_column_int64(st, 0);
        int phase = sqlite3_column_int(st, 1);
        uint64_t *slot = ip_map_put(&index, (uint64_t)name_id << 8 | (uint64_t)(phase + 1));
        if (!slot) cli_fail("out of memory");
        if (!*slot) {
            if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v)))
                cli_fail("out of memory");
            v[n].name_id = name_id;
            v[n].phase = phase;
            ip_stats_init(&v[n].st, 0);
            *slot = ++n;
        }
        ip_stats_add(&v[*slot - 1].st, sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
    ip_map_free(&index);
    char *err = NULL;
    if (sqlite3_exec(db,
                     "CREATE TEMP TABLE kernel_summary AS SELECT * FROM main.kernel_summary"
                     " WHERE 0",
                     NULL, NULL, &err) != SQLITE_OK)
        cli_fail("cannot summarise the kernels of an unfinished run: %s", err);
    sqlite3_stmt *ins =
        db_prepare(db, "INSERT INTO temp.kernel_summary VALUES (?,?,?,?,?,?,?,?,?)");
    if (n) qsort(v, n, sizeof *v, cmp_name);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        struct ip_stats *parts[IP_PHASE_COUNT + 1];
        int np = 0;
        for (; j < n && v[j].name_id == v[i].name_id; j++) {
            if (np <= IP_PHASE_COUNT) parts[np++] = &v[j].st;
            summary_insert(ins, v[j].name_id, v[j].phase, &v[j].st);
        }
        /* Every value was kept, so the merge keeps them all: the all-phases median is exact. A
         * name seen in one phase needs no merge. */
        if (np == 1) {
            summary_insert(ins, v[i].name_id, -1, parts[0]);
        } else {
            struct ip_stats all;
            ip_stats_init(&all, 0);
            ip_stats_merge(&all, parts, np);
            summary_insert(ins, v[i].name_id, -1, &all);
            ip_stats_free(&all);
        }
        for (size_t k = i; k < j; k++) ip_stats_free(&v[k].st);
        i = j;
    }
    sqlite3_finalize(ins);
    free(v);
}
