/*
 * memrows.c: tensor_memory read once (memrows.h). 56 bytes a report held in memory, against a
 * scan of the table per figure. Put in time order once here, so that a sweep over them (phases.c)
 * merges instead of sorting them again: the table is in that order but for the writer's drains
 * of several threads (8 places out of 635 k in the H200 fixture), which an insertion sort mends
 * in one pass; a table far from it is sorted whole. The folds' allocations (tensor_memory_folds)
 * are read beside them.
 */
#include "memrows.h"
#include "run.h"

#include <sqlite3.h>
#include <stdlib.h>

static int cmp_time(const void *a, const void *b)
{
    const struct mem_row *x = a, *y = b;
    if (x->ts != y->ts) return (x->ts > y->ts) - (x->ts < y->ts);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Stable by ts: insertion while it moves at most 4 rows a row on the whole, else qsort by
 * (ts, seq). */
static void time_order(struct mem_rows *m)
{
    size_t moves = 0, budget = 4 * m->n;
    for (size_t i = 1; i < m->n; i++) {
        if (m->v[i - 1].ts <= m->v[i].ts) continue;
        struct mem_row r = m->v[i];
        size_t j = i;
        while (j > 0 && m->v[j - 1].ts > r.ts && moves <= budget)
            m->v[j] = m->v[j - 1], j--, moves++;
        m->v[j] = r;
        if (moves > budget) {
            qsort(m->v, m->n, sizeof *m->v, cmp_time);
            return;
        }
    }
}

/* One report as the table has it (db_scan: on a reader thread); the CPU totals, the reports
 * left out and the order are made after, in the table's order. */
static void decode(sqlite3_stmt *st, void *row, void *ctx)
{
    (void)ctx;
    struct mem_row *r = row;
    r->ts = sqlite3_column_int64(st, 0);
    r->tid = (uint32_t)sqlite3_column_int64(st, 1);
    r->phase = sqlite3_column_int(st, 2);
    r->type = (int16_t)sqlite3_column_int(st, 3);
    r->index = (int16_t)sqlite3_column_int(st, 4);
    r->allocated = sqlite3_column_int64(st, 5);
    r->reserved = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
    r->bytes = sqlite3_column_int64(st, 7);
    r->op = sqlite3_column_int64(st, 8);
}

/* The folds' allocations (their levels are rows like any report's, above). */
static void load_folds(sqlite3 *db, struct mem_rows *m)
{
    if (!db_has_table(db, "tensor_memory_folds")) return;
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM tensor_memory_folds", 0);
    if (!cap) return;
    m->folds = malloc(cap * sizeof *m->folds);
    if (!m->folds) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, "SELECT start, end, allocs, alloc_bytes, largest1, largest2,"
                                      " largest3, tid, phase, device_type, device_index FROM"
                                      " tensor_memory_folds");
    while (m->nfolds < cap && db_step(st)) {
        struct mem_fold *f = &m->folds[m->nfolds];
        f->start = sqlite3_column_int64(st, 0);
        f->end = sqlite3_column_int64(st, 1);
        f->allocs = sqlite3_column_int64(st, 2);
        f->alloc_bytes = sqlite3_column_int64(st, 3);
        for (int k = 0; k < 3; k++) f->largest[k] = sqlite3_column_int64(st, 4 + k);
        f->tid = (uint32_t)sqlite3_column_int64(st, 7);
        f->phase = sqlite3_column_int(st, 8);
        f->type = (int16_t)sqlite3_column_int(st, 9);
        f->index = (int16_t)sqlite3_column_int(st, 10);
        m->nfolds++;
    }
    sqlite3_finalize(st);
}

static void load(sqlite3 *db, struct mem_rows *m)
{
    if (!db_has_table(db, "tensor_memory")) return;
    int op = db_has_column(db, "tensor_memory", "op");
    /* Each GPU's memory (CUPTI's device records): a report of more allocated or reserved than
     * the GPU holds is no reading any machine gives, left out of every figure and counted. */
    int64_t total[64] = {0};
    if (db_has_table(db, "devices")) {
        sqlite3_stmt *d = db_prepare(db, "SELECT id, global_memory_bytes FROM devices");
        while (db_step(d)) {
            int64_t id = sqlite3_column_int64(d, 0);
            if (id >= 0 && id < 64) total[id] = sqlite3_column_int64(d, 1);
        }
        sqlite3_finalize(d);
    }
    size_t n;
    m->v = db_scan(db, "tensor_memory",
                   op ? "SELECT ts, tid, phase, device_type, device_index, allocated, reserved,"
                        " bytes, op FROM tensor_memory WHERE rowid BETWEEN ?1 AND ?2"
                      : "SELECT ts, tid, phase, device_type, device_index, allocated, reserved,"
                        " bytes, 0 FROM tensor_memory WHERE rowid BETWEEN ?1 AND ?2",
                   sizeof *m->v, decode, NULL, &n);
    /* A CPU report without a total (DB_TENSOR_TOTALS) holds the CPU total it came between, so
     * that every reader of the totals (timeline, peaks) sees the allocator's. */
    int64_t cpu_alloc[65] = {0}, cpu_resv[65];
    for (int k = 0; k < 65; k++) cpu_resv[k] = -1;
    for (size_t i = 0; i < n; i++) {
        struct mem_row *r = &m->v[m->n];
        *r = m->v[i];
        r->seq = (uint32_t)i;
        if (r->type == 1 && r->index >= 0 && r->index < 64 && total[r->index] > 0 &&
            (r->allocated > total[r->index] || r->reserved > total[r->index])) {
            m->out_of_bounds++; /* CUDA (c10's DeviceType 1) */
            continue;
        }
        if (r->type == 0 && r->index >= -1 && r->index < 64) {
            int k = r->index + 1;
            if (r->allocated == 0) {
                r->allocated = cpu_alloc[k];
                r->reserved = cpu_resv[k];
            } else {
                cpu_alloc[k] = r->allocated;
                cpu_resv[k] = r->reserved;
            }
        }
        m->gpu |= r->type != 0;
        m->n++;
    }
    time_order(m);
    load_folds(db, m);
}

static void mem_rows_drop(void *m)
{
    mem_rows_free(m);
}

const struct run_model run_model_mem_rows = {"mem_rows", mem_rows_drop, 1};

const struct mem_rows *mem_rows_get(sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_mem_rows);
    if (!*slot) {
        struct mem_rows *m = calloc(1, sizeof *m);
        if (!m) cli_fail("out of memory");
        load(db, m);
        *slot = m;
    }
    return *slot;
}

void mem_rows_free(struct mem_rows *m)
{
    if (m) free(m->v), free(m->folds);
    free(m);
}

int64_t mem_rows_level_at(const struct mem_rows *m, int type, int64_t t)
{
    size_t lo = 0, hi = m->n; /* the first row after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo-- > 0)
        if (m->v[lo].type == type) return m->v[lo].allocated;
    return -1;
}
