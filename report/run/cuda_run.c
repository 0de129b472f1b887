/*
 * cuda_run.c: the run model's CUDA work besides kernels (cuda_run.h): copies and memsets by kind
 * with the pageable ones of the steady state, memory segments, CUDA API calls and the CUPTI
 * collection's counters, each table read once (memcpy serves both the operations and the
 * pageable copies).
 */
#include "cuda_run.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- copies and memsets ------------------------------------------------------------------- */

/* An operation's rows while they are read: every value kept, for exact medians. */
struct memop_acc {
    int op, host_kind;
    struct ip_stats dur, bytes;
};

static struct memop_acc *memop_get(struct memop_acc **v, int *n, int op, int host_kind)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i].op == op && (*v)[i].host_kind == host_kind) return &(*v)[i];
    struct memop_acc *p = realloc(*v, sizeof **v * (size_t)(*n + 1));
    if (!p) cli_fail("out of memory");
    *v = p;
    struct memop_acc *m = &p[(*n)++];
    m->op = op;
    m->host_kind = host_kind;
    ip_stats_init(&m->dur, 0);
    ip_stats_init(&m->bytes, 0);
    return m;
}

/* The host side of a copy, which decides pinned or pageable. */
static int host_side(int copy_kind, int src_kind, int dst_kind)
{
    switch (copy_kind) {
    case 1:
    case 3:
    case 9:
        return src_kind; /* HtoD, HtoA, HtoH */
    case 2:
    case 4:
        return dst_kind; /* DtoH, AtoH */
    default:
        return -1;
    }
}

/* The run's iterations (every one recorded, counted or not) as sorted, merged intervals; 0 when
 * there are none. */
static int iteration_windows_load(sqlite3 *db, int64_t (**out)[2])
{
    int64_t(*v)[2] = NULL;
    int n = 0, cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, start + dur FROM iterations ORDER BY start");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (n && s <= v[n - 1][1]) {
            if (e > v[n - 1][1]) v[n - 1][1] = e;
            continue;
        }
        if (n == cap && !(v = realloc(v, sizeof *v * (size_t)(cap = cap ? cap * 2 : 64))))
            cli_fail("out of memory");
        v[n][0] = s, v[n][1] = e;
        n++;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

static int inside(int64_t (*v)[2], int n, int64_t t)
{
    int lo = 0, hi = n; /* the first interval that ends after t */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid][1] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo][0] <= t;
}

/* A copy from or to pageable memory (1 is CUPTI's pageable memory kind): loading weights once
 * that way is the norm, so with iterations recorded only those starting inside one count. */
static void pageable_add(struct cuda_pageable *pg, int64_t (*iv)[2], int niv, int kind,
                         int64_t start, int64_t dur, int64_t bytes)
{
    if (niv && !inside(iv, niv, start)) {
        pg->outside++;
        return;
    }
    pg->copies++;
    pg->bytes += bytes;
    pg->ns += dur;
    pg->to_device += kind == 1 || kind == 3;
    pg->from_device += kind == 2 || kind == 4;
}

/* memcpy, read once: the operations by kind, the pageable copies and the copy time (gpu_busy's
 * fallback); then memset. Returns how many operations. */
static int memops_read(sqlite3 *db, struct cuda_run *r, struct memop_acc **out, int64_t *copy_ns)
{
    struct memop_acc *v = NULL;
    int n = 0;
    /* The iterations' windows, read at the first pageable copy (a run without one, as every CPU
     * run, read and sorted its iterations for nothing: a twentieth of the report of 200,000). */
    int64_t(*iv)[2] = NULL;
    int niv = -1;
    r->pageable.windows = db_int(db, "SELECT EXISTS (SELECT 1 FROM iterations)", 0) != 0;
    sqlite3_stmt *st =
        db_prepare(db, "SELECT copy_kind, src_kind, dst_kind, dur, bytes, start FROM memcpy");
    while (db_step(st)) {
        int kind = sqlite3_column_int(st, 0);
        if (kind < 0 || kind >= CUDA_COPY_KINDS) kind = 0;
        int host = host_side(kind, sqlite3_column_int(st, 1), sqlite3_column_int(st, 2));
        int64_t dur = sqlite3_column_int64(st, 3), bytes = sqlite3_column_int64(st, 4);
        struct memop_acc *m = memop_get(&v, &n, kind, host);
        ip_stats_add(&m->dur, dur);
        ip_stats_add(&m->bytes, bytes);
        *copy_ns += dur;
        if (host == 1 && niv < 0) niv = iteration_windows_load(db, &iv);
        if (host == 1)
            pageable_add(&r->pageable, iv, niv, kind, sqlite3_column_int64(st, 5), dur, bytes);
    }
    sqlite3_finalize(st);
    free(iv);
    st = db_prepare(db, "SELECT dur, bytes FROM memset");
    while (db_step(st)) {
        struct memop_acc *m = memop_get(&v, &n, CUDA_MEMSET_OP, -1);
        ip_stats_add(&m->dur, sqlite3_column_int64(st, 0));
        ip_stats_add(&m->bytes, sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

static void stat_of(struct ip_stats *s, struct cuda_stat *out)
{
    int exact;
    out->total = s->total;
    out->count = (int64_t)s->count;
    out->med = ip_stats_median(s, &exact);
    out->min = s->min;
    out->max = s->max;
    out->stddev = ip_stats_stddev(s);
}

static int cmp_memop(const void *a, const void *b)
{
    const struct cuda_memop *x = a, *y = b;
    if (x->dur.total != y->dur.total)
        return (x->dur.total < y->dur.total) - (x->dur.total > y->dur.total);
    return x->op != y->op ? x->op - y->op : x->host_kind - y->host_kind;
}

static void memops_load(sqlite3 *db, struct cuda_run *r)
{
    struct memop_acc *acc;
    int64_t copy_ns = 0;
    int n = memops_read(db, r, &acc, &copy_ns);
    if (n && !(r->memops = malloc(sizeof *r->memops * (size_t)n))) cli_fail("out of memory");
    for (int i = 0; i < n; i++) {
        r->memops[i].op = acc[i].op;
        r->memops[i].host_kind = acc[i].host_kind;
        stat_of(&acc[i].dur, &r->memops[i].dur);
        stat_of(&acc[i].bytes, &r->memops[i].bytes);
        ip_stats_free(&acc[i].dur), ip_stats_free(&acc[i].bytes);
    }
    free(acc);
    r->nmemops = n;
    if (n) qsort(r->memops, (size_t)n, sizeof *r->memops, cmp_memop);
    /* The GPU's busy time, what the pageable copies' share is of. */
    r->gpu_busy =
        db_has_table(db, "phase_gpu") ? db_int(db, "SELECT sum(busy_ns) FROM phase_gpu", 0) : 0;
    if (r->gpu_busy <= 0)
        r->gpu_busy = db_int(db, "SELECT coalesce(sum(dur), 0) FROM kernels", 0) + copy_ns;
}

/* ---- memory segments ---------------------------------------------------------------------- */

static void segments_load(sqlite3 *db, struct cuda_run *r)
{
    struct cuda_segment *v = r->seg;
    int n = 0;
    /* Peak: the running sum of live bytes, in time order (rowid breaks ties in arrival order). */
    sqlite3_stmt *st = db_prepare(db, "SELECT device, memory_kind, op, bytes, is_async FROM"
                                      " memory_segments ORDER BY ts, rowid");
    while (db_step(st)) {
        int dev = sqlite3_column_int(st, 0), kind = sqlite3_column_int(st, 1), k;
        for (k = 0; k < n && (v[k].device != dev || v[k].kind != kind); k++) continue;
        if (k == n) {
            if (n == CUDA_MAX_SEGMENTS) continue;
            memset(&v[n], 0, sizeof v[n]);
            v[n].device = dev, v[n].kind = kind;
            n++;
        }
        int64_t bytes = sqlite3_column_int64(st, 3);
        if (sqlite3_column_int(st, 2) == 1) {
            v[k].allocs++, v[k].allocated += bytes, v[k].live += bytes;
            if (sqlite3_column_int(st, 4)) v[k].async_allocs++;
            if (v[k].live > v[k].peak) v[k].peak = v[k].live;
        } else if (sqlite3_column_int(st, 2) == 2) {
            v[k].releases++, v[k].released += bytes, v[k].live -= bytes;
        }
    }
    sqlite3_finalize(st);
    r->nseg = n;
}

/* ---- API calls ---------------------------------------------------------------------------- */

static struct cuda_api_fn *api_push(struct cuda_api_fn **v, int *n, int *cap,
                                    const unsigned char *name)
{
    if (*n == *cap && !(*v = realloc(*v, (size_t)(*cap = *cap ? *cap * 2 : 64) * sizeof **v)))
        cli_fail("out of memory");
    struct cuda_api_fn *r = &(*v)[(*n)++];
    memset(r, 0, sizeof *r);
    r->name = strdup(name ? (const char *)name : "?");
    if (!r->name) cli_fail("out of memory");
    return r;
}

/* From api_summary, written at the end of the run. */
static int api_summary_load(sqlite3 *db, struct cuda_api_fn **v, int *cap)
{
    int n = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT s.value, a.count, a.total, a.min, a.max, a.med,"
                                      " a.stddev, a.errors, a.launches, a.latency_total,"
                                      " a.latency_min, a.latency_max, a.latency_med FROM"
                                      " api_summary a JOIN strings s ON s.id = a.name_id");
    while (db_step(st)) {
        struct cuda_api_fn *r = api_push(v, &n, cap, sqlite3_column_text(st, 0));
        r->calls = sqlite3_column_int64(st, 1);
        r->has_host = sqlite3_column_type(st, 2) != SQLITE_NULL;
        r->total = sqlite3_column_int64(st, 2);
        r->min = sqlite3_column_int64(st, 3);
        r->max = sqlite3_column_int64(st, 4);
        r->med = sqlite3_column_int64(st, 5);
        r->stddev = sqlite3_column_double(st, 6);
        r->errors = sqlite3_column_int64(st, 7);
        r->launches = sqlite3_column_int64(st, 8);
        r->has_latency = r->launches > 0;
        r->lat_total = sqlite3_column_int64(st, 9);
        r->lat_min = sqlite3_column_int64(st, 10);
        r->lat_max = sqlite3_column_int64(st, 11);
        r->lat_med = sqlite3_column_int64(st, 12);
        r->issued = r->calls > r->launches ? r->calls : r->launches;
        r->timed = r->calls > 0 && r->has_host;
    }
    sqlite3_finalize(st);
    return n;
}

/* From the rows of an unfinished run: no latency then. */
static int api_rows_load(sqlite3 *db, struct cuda_api_fn **v, int *cap)
{
    int n = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT a.name_id, s.value, a.dur, a.ret FROM cuda_api a"
                                      " JOIN strings s ON s.id = a.name_id ORDER BY a.name_id");
    int64_t current = -1;
    struct ip_stats acc;
    ip_stats_init(&acc, 0);
    for (int more = db_step(st);; more = db_step(st)) {
        int64_t id = more ? sqlite3_column_int64(st, 0) : -2;
        if (id != current && current != -1) {
            struct cuda_api_fn *r = &(*v)[n - 1];
            int exact;
            r->has_host = 1;
            r->calls = (int64_t)acc.count, r->total = acc.total;
            r->min = acc.min, r->max = acc.max;
            r->med = ip_stats_median(&acc, &exact);
            r->stddev = ip_stats_stddev(&acc);
            r->issued = r->calls;
            ip_stats_free(&acc);
            ip_stats_init(&acc, 0);
        }
        if (!more) break;
        if (id != current) api_push(v, &n, cap, sqlite3_column_text(st, 1)), current = id;
        ip_stats_add(&acc, sqlite3_column_int64(st, 2));
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) (*v)[n - 1].timed = 1;
        if (sqlite3_column_int64(st, 3)) (*v)[n - 1].errors++;
    }
    sqlite3_finalize(st);
    return n;
}

static int cmp_api(const void *a, const void *b)
{
    const struct cuda_api_fn *x = a, *y = b;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    if (x->launches != y->launches)
        return (x->launches < y->launches) - (x->launches > y->launches);
    return strcmp(x->name, y->name);
}

static int cmp_issued(const void *a, const void *b)
{
    const struct cuda_api_fn *x = *(const struct cuda_api_fn *const *)a;
    const struct cuda_api_fn *y = *(const struct cuda_api_fn *const *)b;
    if (x->issued != y->issued) return (x->issued < y->issued) - (x->issued > y->issued);
    return strcmp(x->name, y->name);
}

static void api_load(sqlite3 *db, struct cuda_run *r)
{
    int cap = 0;
    r->api = NULL;
    if (db_int(db, "SELECT count(*) FROM api_summary", 0) > 0)
        r->napi = api_summary_load(db, &r->api, &cap);
    else
        r->napi = api_rows_load(db, &r->api, &cap);
    if (!r->napi) return;
    qsort(r->api, (size_t)r->napi, sizeof *r->api, cmp_api);
    if (!(r->api_by_issued = malloc(sizeof *r->api_by_issued * (size_t)r->napi)))
        cli_fail("out of memory");
    for (int i = 0; i < r->napi; i++) r->api_by_issued[i] = &r->api[i];
    qsort(r->api_by_issued, (size_t)r->napi, sizeof *r->api_by_issued, cmp_issued);
}

/* ---- the collection itself ---------------------------------------------------------------- */

static void counters_load(sqlite3 *db, struct cuda_run *r)
{
    static const char *const meta[CUDA_COUNTERS] = {
        [CUDA_CTR_RECORDS] = "cupti_records",
        [CUDA_CTR_BUFFERS_COMPLETED] = "cupti_buffers_completed",
        [CUDA_CTR_BUFFERS_REFUSED] = "cupti_buffers_refused",
        [CUDA_CTR_DROPPED_RECORDS] = "cupti_dropped_records",
        [CUDA_CTR_BUFFER_ERRORS] = "cupti_buffer_errors",
        [CUDA_CTR_INVALID_RECORDS] = "cupti_invalid_records",
        [CUDA_CTR_UNATTRIBUTED_RECORDS] = "cupti_unattributed_records",
        [CUDA_CTR_UNKNOWN_RECORDS] = "cupti_unknown_records",
        [CUDA_CTR_API_SAME_CORR] = "cupti_api_same_corr",
        [CUDA_CTR_RECORDS_NOT_STORED] = "cupti_records_not_stored",
        [CUDA_CTR_RECORDS_WAITED] = "cupti_records_waited",
        [CUDA_CTR_RECORDS_WAIT_EXPIRED] = "cupti_records_wait_expired",
        [CUDA_CTR_HISTORY_GONE] = "cupti_history_gone",
    };
    for (int i = 0; i < CUDA_COUNTERS; i++)
        r->has_counter[i] = db_meta_int(db, meta[i], &r->counter[i]);
    r->attribution = db_meta_text(db, "cupti_attribution");
}

void cuda_run_free(struct cuda_run *r)
{
    if (!r) return;
    for (int i = 0; i < r->napi; i++) free(r->api[i].name);
    free(r->api), free(r->api_by_issued), free(r->memops), free(r->attribution);
    free(r);
}

static void cuda_drop(void *r)
{
    cuda_run_free(r);
}

const struct run_model run_model_cuda = {"cuda", cuda_drop, 0};

const struct cuda_run *run_cuda(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_cuda);
    if (!*slot) {
        struct cuda_run *r = calloc(1, sizeof *r);
        if (!r) cli_fail("out of memory");
        memops_load(db, r);
        segments_load(db, r);
        api_load(db, r);
        counters_load(db, r);
        *slot = r;
    }
    return *slot;
}
