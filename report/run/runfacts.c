/*
 * runfacts.c: the run's own facts (runfacts.h), read from the meta, devices, event_drops and
 * iterations tables once.
 */
#include "runfacts.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_meta(const void *a, const void *b)
{
    return strcmp(((const struct runfacts_meta *)a)->key, ((const struct runfacts_meta *)b)->key);
}

static void load_meta(sqlite3 *db, struct runfacts *r)
{
    int64_t rows = db_int(db, "SELECT count(*) FROM meta", 0);
    r->meta = calloc(rows > 0 ? (size_t)rows : 1, sizeof *r->meta);
    if (!r->meta) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, "SELECT key, value FROM meta");
    while (db_step(st) && r->n < rows) {
        struct runfacts_meta *m = &r->meta[r->n];
        if (!sqlite3_column_text(st, 0)) continue;
        m->key = strdup((const char *)sqlite3_column_text(st, 0));
        int type = sqlite3_column_type(st, 1);
        if (type != SQLITE_NULL) m->text = strdup((const char *)sqlite3_column_text(st, 1));
        m->is_int = type == SQLITE_INTEGER;
        m->value = sqlite3_column_int64(st, 1);
        if (!m->key || (type != SQLITE_NULL && !m->text)) cli_fail("out of memory");
        r->n++;
    }
    sqlite3_finalize(st);
    qsort(r->meta, (size_t)r->n, sizeof *r->meta, cmp_meta);
}

static void load_gpus(sqlite3 *db, struct runfacts *r)
{
    char *out = r->gpus;
    size_t n = sizeof r->gpus, o = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT id, name, cc_major, cc_minor, sm_count,"
                                      " global_memory_bytes FROM devices ORDER BY id");
    while (db_step(st) && o + 64 < n) {
        char mem[32];
        fmt_bytes(mem, sizeof mem, (double)sqlite3_column_int64(st, 5));
        o += (size_t)snprintf(out + o, n - o, "%s%d: %s (sm_%d%d, %d SMs, %s)", o ? "; " : "",
                              sqlite3_column_int(st, 0), sqlite3_column_text(st, 1),
                              sqlite3_column_int(st, 2), sqlite3_column_int(st, 3),
                              sqlite3_column_int(st, 4), mem);
    }
    sqlite3_finalize(st);
}

/* Where events were dropped, by phase, and how many iterations a drop fell in. */
static void load_drops(sqlite3 *db, struct runfacts *r)
{
    char *out = r->drops;
    size_t n = sizeof r->drops, o = 0;
    if (!db_has_table(db, "event_drops")) return;
    sqlite3_stmt *st = db_prepare(
        db, "SELECT coalesce(CASE p.grad_mode WHEN 'inference_mode' THEN 'inference' ELSE"
            " p.grad_mode END || '/' || p.autocast, 'no phase'), sum(d.count) FROM event_drops d"
            " LEFT JOIN phases p ON p.id = d.phase GROUP BY d.phase ORDER BY 2 DESC");
    while (db_step(st) && o + 48 < n)
        o += (size_t)snprintf(out + o, n - o, "%s%s %lld", o ? ", " : "in ",
                              sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM iterations i WHERE %s AND EXISTS (SELECT 1 FROM"
             " event_drops d WHERE d.tid = i.tid AND d.first <= i.start + i.dur"
             " AND d.last >= i.start)",
             iterations_counted(db));
    int64_t iters = db_int(db, sql, 0);
    if (iters && o + 48 < n)
        snprintf(out + o, n - o, "; up to %lld %s touched", (long long)iters,
                 iters == 1 ? "iteration" : "iterations");
}

static void load_missing(sqlite3 *db, struct runfacts *r)
{
    static const char *const tables[] = {
        "phases",      "phase_spans", "iterations",    "kernel_rows", "launch_sigs",
        "memcpy",      "memset",      "tensor_memory", "nvtx_ranges", "cuda_api",
        "cudnn_calls", "strings",     "event_drops"};
    int64_t version = db_int(db, "PRAGMA user_version", 0);
    size_t m = 0;
    for (size_t i = 0; i < sizeof tables / sizeof *tables && m + 32 < sizeof r->missing; i++) {
        if (version < 2 && !strcmp(tables[i], "event_drops")) continue;
        if (!db_has_table(db, tables[i]))
            m += (size_t)snprintf(r->missing + m, sizeof r->missing - m, "%s%s", m ? ", " : "",
                                  tables[i]);
    }
}

static void facts_drop(void *r)
{
    runfacts_free(r);
}

const struct run_model run_model_facts = {"facts", facts_drop, 0};

const struct runfacts *run_facts(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_facts);
    if (*slot) return *slot;
    struct runfacts *r = calloc(1, sizeof *r);
    if (!r) cli_fail("out of memory");
    load_meta(db, r);
    load_gpus(db, r);
    /* From the end-of-run summary when there is one: counting rows scans the whole table. */
    r->kernels = db_int(db, "SELECT sum(count) FROM kernel_summary WHERE phase = -1", -1);
    if (r->kernels < 0) r->kernels = db_int(db, "SELECT count(*) FROM kernels", 0);
    int64_t dropped = 0;
    if (runfacts_int(r, "dropped_events", &dropped) && dropped) load_drops(db, r);
    load_missing(db, r);
    *slot = r;
    return r;
}

static const struct runfacts_meta *find(const struct runfacts *r, const char *key)
{
    struct runfacts_meta k = {.key = (char *)key};
    return bsearch(&k, r->meta, (size_t)r->n, sizeof *r->meta, cmp_meta);
}

const char *runfacts_text(const struct runfacts *r, const char *key)
{
    const struct runfacts_meta *m = find(r, key);
    return m ? m->text : NULL;
}

int runfacts_int(const struct runfacts *r, const char *key, int64_t *out)
{
    const struct runfacts_meta *m = find(r, key);
    if (!m || !m->is_int) return 0;
    *out = m->value;
    return 1;
}

const char *runfacts_stop_fix(const struct runfacts *r)
{
    int64_t v;
    if (runfacts_int(r, "file_size_stop_ns", &v))
        return "raise the file-size limit (ulimit -f), or record a window of the run"
               " (INFPROF_WINDOW_DELAY_MS, INFPROF_WINDOW_DURATION_MS)";
    if (runfacts_int(r, "disk_reserve_stop_ns", &v))
        return "write the database (INFPROF_OUTPUT) to a disk with free space, or lower"
               " INFPROF_DISK_RESERVE_MB";
    if (runfacts_int(r, "finish_cut_ns", &v)) return "raise INFPROF_FINISH_TIMEOUT_MS";
    return NULL;
}

void runfacts_free(struct runfacts *r)
{
    for (int i = 0; r && i < r->n; i++) free(r->meta[i].key), free(r->meta[i].text);
    if (r) free(r->meta);
    free(r);
}
