/*
 * sec_cuda.c: the report's CUDA sections besides kernels: GPU memory operations by time and by
 * size (nsys cuda_gpu_mem_time_sum / cuda_gpu_mem_size_sum), memory segments (cudaMalloc,
 * pools, cuMemCreate), the CUDA API summary (nsys cuda_api_sum, plus launch latency: a call's
 * start to the start of the GPU work it issued), and what the CUPTI collection itself counted.
 *
 * Medians here are exact: the rows are read in full (copies and API calls are far fewer than
 * kernels; the API summary comes from api_summary when the run finished).
 */
#include "sections.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory operations -------------------------------------------------------------------- */

/* CUpti_ActivityMemcpyKind -> nsys name and our short name. */
static const struct {
    const char *nsys, *text;
} copy_names[] = {
    /* clang-format off */
    {"[CUDA memcpy Unknown]", "memcpy ?"},
    {"[CUDA memcpy Host-to-Device]", "memcpy HtoD"},
    {"[CUDA memcpy Device-to-Host]", "memcpy DtoH"},
    {"[CUDA memcpy Host-to-Array]", "memcpy HtoA"},
    {"[CUDA memcpy Array-to-Host]", "memcpy AtoH"},
    {"[CUDA memcpy Array-to-Array]", "memcpy AtoA"},
    {"[CUDA memcpy Array-to-Device]", "memcpy AtoD"},
    {"[CUDA memcpy Device-to-Array]", "memcpy DtoA"},
    {"[CUDA memcpy Device-to-Device]", "memcpy DtoD"},
    {"[CUDA memcpy Host-to-Host]", "memcpy HtoH"},
    {"[CUDA memcpy Peer-to-Peer]", "memcpy PtoP"},
    /* clang-format on */
};
#define MEMSET_OP 100

/* CUpti_ActivityMemoryKind. */
static const char *memory_kind_name(int k)
{
    static const char *const names[] = {"unknown", "pageable", "pinned",        "device",
                                        "array",   "managed",  "device_static", "managed_static"};
    return k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "unknown";
}

struct memop {
    int op, host_kind; /* host_kind -1: no host side */
    struct ip_stats dur, bytes;
};

static int cmp_memop(const void *a, const void *b)
{
    const struct memop *x = a, *y = b;
    if (x->dur.total != y->dur.total)
        return (x->dur.total < y->dur.total) - (x->dur.total > y->dur.total);
    return x->op != y->op ? x->op - y->op : x->host_kind - y->host_kind;
}

static struct memop *memop_get(struct memop **v, int *n, int op, int host_kind)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i].op == op && (*v)[i].host_kind == host_kind) return &(*v)[i];
    struct memop *p = realloc(*v, sizeof **v * (size_t)(*n + 1));
    if (!p) cli_fail("out of memory");
    *v = p;
    struct memop *m = &p[(*n)++];
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

static int memops_load(struct sqlite3 *db, struct memop **out)
{
    struct memop *v = NULL;
    int n = 0;
    sqlite3_stmt *st =
        db_prepare(db, "SELECT copy_kind, src_kind, dst_kind, dur, bytes FROM memcpy");
    while (db_step(st)) {
        int kind = sqlite3_column_int(st, 0);
        if (kind < 0 || kind >= (int)(sizeof copy_names / sizeof *copy_names)) kind = 0;
        struct memop *m = memop_get(
            &v, &n, kind, host_side(kind, sqlite3_column_int(st, 1), sqlite3_column_int(st, 2)));
        ip_stats_add(&m->dur, sqlite3_column_int64(st, 3));
        ip_stats_add(&m->bytes, sqlite3_column_int64(st, 4));
    }
    sqlite3_finalize(st);
    st = db_prepare(db, "SELECT dur, bytes FROM memset");
    while (db_step(st)) {
        struct memop *m = memop_get(&v, &n, MEMSET_OP, -1);
        ip_stats_add(&m->dur, sqlite3_column_int64(st, 0));
        ip_stats_add(&m->bytes, sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_memop);
    *out = v;
    return n;
}

static void memop_names(const struct memop *m, const char **nsys, char *text, size_t size)
{
    *nsys = m->op == MEMSET_OP ? "[CUDA memset]" : copy_names[m->op].nsys;
    const char *base = m->op == MEMSET_OP ? "memset" : copy_names[m->op].text;
    if (m->host_kind >= 0)
        snprintf(text, size, "%s %s", base, memory_kind_name(m->host_kind));
    else
        snprintf(text, size, "%s", base);
}

/* One table per view; `by_size` picks the byte statistics. */
static struct table *memops_table(struct sqlite3 *db, int by_size)
{
    struct table *t = by_size ? table_new("memory_ops_size", "CUDA memory operations by size")
                              : table_new("memory_ops_time", "CUDA memory operations by time");
    struct stat_cols stat = {"count", "Count", by_size, 1, 1, 1};
    table_stat_cols(t, &stat);
    table_col(t, "operation", NULL, COL_TEXT);
    table_col(t, "host_memory", NULL, COL_TEXT);
    table_col(t, NULL, "Operation", COL_TEXT);
    struct memop *v;
    int n = memops_load(db, &v);
    double all = 0;
    for (int i = 0; i < n; i++) all += (double)v[i].dur.total;
    for (int i = 0; i < n; i++) {
        struct ip_stats *st = by_size ? &v[i].bytes : &v[i].dur;
        int exact;
        table_row(t);
        struct stat_cells s = {
            !by_size, all,     st->total,          (int64_t)st->count, ip_stats_median(st, &exact),
            st->min,  st->max, ip_stats_stddev(st)};
        int c = table_set_stats(t, 0, &s);
        const char *nsys;
        char text[64];
        memop_names(&v[i], &nsys, text, sizeof text);
        table_set_text(t, c++, nsys);
        if (v[i].host_kind >= 0) table_set_text(t, c, memory_kind_name(v[i].host_kind));
        c++;
        table_set_text(t, c++, text);
    }
    for (int i = 0; i < n; i++) ip_stats_free(&v[i].dur), ip_stats_free(&v[i].bytes);
    free(v);
    return t;
}

static struct table *memops_time(const struct section_ctx *c)
{
    return memops_table(c->db, 0);
}

static struct table *memops_size(const struct section_ctx *c)
{
    return memops_table(c->db, 1);
}

/* ---- memory segments ---------------------------------------------------------------------- */

struct seg {
    int device, kind;
    int64_t allocs, releases, async_allocs, allocated, released, live, peak;
};

static struct table *segments(const struct section_ctx *c)
{
    struct sqlite3 *db = c->db;
    struct table *t = table_new("memory_segments", "CUDA memory segments (allocations)");
    table_col(t, NULL, "Device", COL_TEXT);
    table_col(t, "device", NULL, COL_INT);
    table_col(t, "memory_kind", "Kind", COL_TEXT);
    table_col(t, "allocations", "Allocs", COL_INT);
    table_col(t, "async_allocations", "Async", COL_INT);
    table_col(t, "allocated_bytes", "Allocated", COL_BYTES);
    table_col(t, "releases", "Frees", COL_INT);
    table_col(t, "released_bytes", "Freed", COL_BYTES);
    table_col(t, "peak_bytes", "Peak", COL_BYTES);
    struct seg v[64];
    int n = 0;
    /* Peak: the running sum of live bytes, in time order (rowid breaks ties in arrival order). */
    sqlite3_stmt *st = db_prepare(db, "SELECT device, memory_kind, op, bytes, is_async FROM"
                                      " memory_segments ORDER BY ts, rowid");
    while (db_step(st)) {
        int dev = sqlite3_column_int(st, 0), kind = sqlite3_column_int(st, 1), k;
        for (k = 0; k < n && (v[k].device != dev || v[k].kind != kind); k++) continue;
        if (k == n) {
            if (n == (int)(sizeof v / sizeof *v)) continue;
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
    for (int i = 0; i < n; i++) {
        char name[32];
        device_name(1, v[i].device, name, sizeof name);
        table_row(t);
        table_set_text(t, 0, name);
        table_set_int(t, 1, v[i].device);
        table_set_text(t, 2, memory_kind_name(v[i].kind));
        table_set_int(t, 3, v[i].allocs);
        table_set_int(t, 4, v[i].async_allocs);
        table_set_int(t, 5, v[i].allocated);
        table_set_int(t, 6, v[i].releases);
        table_set_int(t, 7, v[i].released);
        table_set_int(t, 8, v[i].peak);
    }
    return t;
}

/* ---- API calls ---------------------------------------------------------------------------- */

struct api_row {
    char *name;
    int64_t calls, total, min, max, med, errors, launches, lat_total, lat_min, lat_max, lat_med;
    double stddev;
    int has_host, has_latency;
};

static int cmp_api(const void *a, const void *b)
{
    const struct api_row *x = a, *y = b;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    if (x->launches != y->launches)
        return (x->launches < y->launches) - (x->launches > y->launches);
    return strcmp(x->name, y->name);
}

static struct api_row *api_push(struct api_row **v, int *n, int *cap, const unsigned char *name)
{
    if (*n == *cap && !(*v = realloc(*v, (size_t)(*cap = *cap ? *cap * 2 : 64) * sizeof **v)))
        cli_fail("out of memory");
    struct api_row *r = &(*v)[(*n)++];
    memset(r, 0, sizeof *r);
    r->name = strdup(name ? (const char *)name : "?");
    return r;
}

/* From api_summary (written at the end of the run), else from the rows (no latency then). */
static int api_load(struct sqlite3 *db, struct api_row **out)
{
    struct api_row *v = NULL;
    int n = 0, cap = 0;
    if (db_int(db, "SELECT count(*) FROM api_summary", 0) > 0) {
        sqlite3_stmt *st = db_prepare(db, "SELECT s.value, a.count, a.total, a.min, a.max, a.med,"
                                          " a.stddev, a.errors, a.launches, a.latency_total,"
                                          " a.latency_min, a.latency_max, a.latency_med FROM"
                                          " api_summary a JOIN strings s ON s.id = a.name_id");
        while (db_step(st)) {
            struct api_row *r = api_push(&v, &n, &cap, sqlite3_column_text(st, 0));
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
        }
        sqlite3_finalize(st);
    } else {
        sqlite3_stmt *st = db_prepare(db, "SELECT a.name_id, s.value, a.dur, a.ret FROM cuda_api a"
                                          " JOIN strings s ON s.id = a.name_id ORDER BY a.name_id");
        int64_t current = -1;
        struct ip_stats acc;
        ip_stats_init(&acc, 0);
        for (int more = db_step(st);; more = db_step(st)) {
            int64_t id = more ? sqlite3_column_int64(st, 0) : -2;
            if (id != current && current != -1) {
                struct api_row *r = &v[n - 1];
                int exact;
                r->has_host = 1;
                r->calls = (int64_t)acc.count, r->total = acc.total;
                r->min = acc.min, r->max = acc.max;
                r->med = ip_stats_median(&acc, &exact);
                r->stddev = ip_stats_stddev(&acc);
                ip_stats_free(&acc);
                ip_stats_init(&acc, 0);
            }
            if (!more) break;
            if (id != current) api_push(&v, &n, &cap, sqlite3_column_text(st, 1)), current = id;
            ip_stats_add(&acc, sqlite3_column_int64(st, 2));
            if (sqlite3_column_int64(st, 3)) v[n - 1].errors++;
        }
        sqlite3_finalize(st);
    }
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_api);
    *out = v;
    return n;
}

static struct table *api(const struct section_ctx *c)
{
    struct sqlite3 *db = c->db;
    const struct report_opts *o = c->o;
    struct table *t = table_new("cuda_api", "CUDA API calls");
    static const struct stat_cols stat = {"calls", "Calls", 0, 0, 1, 0};
    table_stat_cols(t, &stat);
    table_col(t, "errors", NULL, COL_INT);
    table_col(t, "launches", NULL, COL_INT);
    table_col(t, "latency_avg_ns", NULL, COL_NS);
    table_col(t, "latency_med_ns", "Lat med", COL_NS);
    table_col(t, "latency_min_ns", NULL, COL_NS);
    table_col(t, "latency_max_ns", "Lat max", COL_NS);
    table_col(t, "name", "Name", COL_NAME);
    struct api_row *v;
    int n = api_load(db, &v);
    double all = 0;
    int64_t errors = 0;
    for (int i = 0; i < n; i++) all += (double)v[i].total, errors += v[i].errors;
    int shown = o->top && o->top < n ? o->top : n;
    for (int i = 0; i < shown; i++) {
        struct api_row *r = &v[i];
        table_row(t);
        struct stat_cells s = {1, all, r->total, r->calls, r->med, r->min, r->max, r->stddev};
        if (r->has_host)
            table_set_stats(t, 0, &s);
        else
            table_set_int(t, 2, r->calls); /* no host times (API records off): calls only */
        table_set_int(t, 8, r->errors);
        table_set_int(t, 9, r->launches);
        if (r->has_latency) {
            table_set_num(t, 10, (double)r->lat_total / (double)r->launches);
            table_set_int(t, 11, r->lat_med);
            table_set_int(t, 12, r->lat_min);
            table_set_int(t, 13, r->lat_max);
        }
        table_set_text(t, 14, r->name);
    }
    static char note[160];
    int o_ = snprintf(note, sizeof note,
                      "Lat: from the call's start to the start of the GPU work"
                      " it issued");
    if (errors)
        snprintf(note + o_, sizeof note - (size_t)o_, "; %lld calls returned an error",
                 (long long)errors);
    else if (shown < n)
        snprintf(note + o_, sizeof note - (size_t)o_, "; %d more not shown (--top 0)", n - shown);
    t->note = n ? note : NULL;
    for (int i = 0; i < n; i++) free(v[i].name);
    free(v);
    return t;
}

/* ---- the collection itself ---------------------------------------------------------------- */

static struct table *cuda_activity(const struct section_ctx *c)
{
    struct sqlite3 *db = c->db;
    static const struct {
        const char *key, *meta, *warn;
    } counters[] = {
        {"records", "cupti_records", NULL},
        {"buffers_completed", "cupti_buffers_completed", NULL},
        {"buffers_refused", "cupti_buffers_refused", NULL},
        {"dropped_records", "cupti_dropped_records", NULL},
        {"buffer_errors", "cupti_buffer_errors",
         "%lld CUPTI buffers could not be read to the end (records after the error are lost)"},
        {"invalid_records", "cupti_invalid_records", "%lld records without valid times"},
        {"unattributed_records", "cupti_unattributed_records", NULL},
        {"unknown_records", "cupti_unknown_records", NULL},
        {"api_same_corr", "cupti_api_same_corr", NULL},
        {"records_not_stored", "cupti_records_not_stored",
         "%lld CUPTI records not stored (the tables could not be opened)"},
        /* INFPROF_ATTRIBUTION=records only (docs/cupti.md). */
        {"records_waited", "cupti_records_waited", NULL},
        {"records_wait_expired", "cupti_records_wait_expired",
         "%lld CUDA records read without the call that issued them (attribution by API records:"
         " the call never came, or came too late): no phase"},
        {"history_gone", "cupti_history_gone",
         "%lld calls older than their thread's kept history: phase only, no iteration"},
    };
    struct table *t = table_new("cuda_activity", "CUDA activity collection");
    t->object = 1;
    table_col(t, NULL, "Records", COL_INT);
    for (size_t i = 0; i < sizeof counters / sizeof *counters; i++)
        table_col(t, counters[i].key, NULL, COL_INT);
    table_col(t, "attribution", "Attribution", COL_TEXT);
    table_col(t, "warnings", "Warnings", COL_TEXT);
    int64_t v;
    if (!db_meta_int(db, "cupti_records", &v)) {
        t->note = "no CUDA activity records (see the CUPTI line of the run header)";
        return t;
    }
    table_row(t);
    table_set_int(t, 0, v);
    char warn[1024] = "";
    size_t w = 0;
    for (size_t i = 0; i < sizeof counters / sizeof *counters; i++) {
        if (!db_meta_int(db, counters[i].meta, &v)) continue;
        table_set_int(t, 1 + (int)i, v);
        if (v && counters[i].warn && w < sizeof warn) {
            w += (size_t)snprintf(warn + w, sizeof warn - w, "%s", w ? "; " : "");
            if (w < sizeof warn)
                w += (size_t)snprintf(warn + w, sizeof warn - w, counters[i].warn, (long long)v);
        }
    }
    int ncounters = (int)(sizeof counters / sizeof *counters);
    char *attribution = db_meta_text(db, "cupti_attribution");
    if (attribution) table_set_text(t, 1 + ncounters, attribution);
    free(attribution);
    if (warn[0]) table_set_text(t, 2 + ncounters, warn);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static const struct section_compare memops_time_compare = {
    .spec = {.key = "memory_ops_time",
             .match = {"operation", "host_memory"},
             .show = {"Operation"},
             .figs = {{"total_ns", 1, 0},
                      {"count", 1, 0},
                      {"avg_ns", 0, 0},
                      {"med_ns", 0, 0},
                      {"max_ns", 0, 0}},
             .sort = "total_ns",
             .what = "operations"},
    .title = "CUDA memory operations by time",
    .cols = {{"Operation", NULL},
             {"total_ns_base", "Base"},
             {"total_ns_new", "New"},
             {"total_ns_delta", "Delta"},
             {"total_ns_pct", "Delta%"},
             {"count_base", "Count base"},
             {"count_new", "Count new"},
             {"Change", NULL}},
    .top = 1,
};

static const struct section_compare memops_size_compare = {
    .spec = {.key = "memory_ops_size",
             .match = {"operation", "host_memory"},
             .show = {"Operation"},
             .figs = {{"total_bytes", 1, 0},
                      {"count", 1, 0},
                      {"avg_bytes", 0, 0},
                      {"med_bytes", 0, 0},
                      {"max_bytes", 0, 0}},
             .sort = "total_bytes",
             .what = "operations"},
    .title = "CUDA memory operations by size",
    .cols = {{"Operation", NULL},
             {"total_bytes_base", "Base"},
             {"total_bytes_new", "New"},
             {"total_bytes_delta", "Delta"},
             {"total_bytes_pct", "Delta%"},
             {"Change", NULL}},
    .top = 1,
};

static const struct section_compare api_compare = {
    .spec = {.key = "cuda_api",
             .match = {"name"},
             .figs = {{"total_ns", 1, 0},
                      {"calls", 1, 0},
                      {"avg_ns", 0, 0},
                      {"med_ns", 0, 0},
                      {"max_ns", 0, 0},
                      {"errors", 1, 0},
                      {"latency_med_ns", 0, 0}},
             .sort = "total_ns",
             .what = "API functions"},
    .title = "CUDA API calls (host time)",
    .cols = {{"total_ns_base", "Base"},
             {"total_ns_new", "New"},
             {"total_ns_delta", "Delta"},
             {"total_ns_pct", "Delta%"},
             {"calls_base", "Calls base"},
             {"calls_new", "Calls new"},
             {"Change", NULL},
             {"name", "Name"}},
    .top = 1,
};

const struct report_section sec_memops_time = {.key = "memory_ops_time",
                                               .shown_empty = 0,
                                               .compare = &memops_time_compare,
                                               .table = memops_time};
const struct report_section sec_memops_size = {.key = "memory_ops_size",
                                               .shown_empty = 0,
                                               .compare = &memops_size_compare,
                                               .table = memops_size};
const struct report_section sec_segments = {
    .key = "memory_segments", .shown_empty = 0, .compare = NULL, .table = segments};
const struct report_section sec_api = {
    .key = "cuda_api", .shown_empty = 0, .compare = &api_compare, .table = api};
const struct report_section sec_cuda_activity = {
    .key = "cuda_activity", .shown_empty = 0, .compare = NULL, .table = cuda_activity};
