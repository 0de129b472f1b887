/*
 * sec_cuda.c: the report's CUDA sections besides kernels: GPU memory operations by time and by
 * size (nsys cuda_gpu_mem_time_sum / cuda_gpu_mem_size_sum), memory segments (cudaMalloc,
 * pools, cuMemCreate), the CUDA API summary (nsys cuda_api_sum, plus launch latency: a call's
 * start to the start of the GPU work it issued), and what the CUPTI collection itself counted.
 * The figures come from the run model (run/cuda_run.h); this file only names and lays them out.
 */
#include "sections.h"
#include "../run/cuda_run.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- memory operations -------------------------------------------------------------------- */

/* CUpti_ActivityMemcpyKind -> nsys name and our short name. */
static const struct {
    const char *nsys, *text;
} copy_names[CUDA_COPY_KINDS] = {
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

/* CUpti_ActivityMemoryKind. */
static const char *memory_kind_name(int k)
{
    static const char *const names[] = {"unknown", "pageable", "pinned",        "device",
                                        "array",   "managed",  "device_static", "managed_static"};
    return k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "unknown";
}

static void memop_names(const struct cuda_memop *m, const char **nsys, char *text, size_t size)
{
    *nsys = m->op == CUDA_MEMSET_OP ? "[CUDA memset]" : copy_names[m->op].nsys;
    const char *base = m->op == CUDA_MEMSET_OP ? "memset" : copy_names[m->op].text;
    if (m->host_kind >= 0)
        snprintf(text, size, "%s %s", base, memory_kind_name(m->host_kind));
    else
        snprintf(text, size, "%s", base);
}

/* One table per view; `by_size` picks the byte statistics. */
static struct table *memops_table(const struct section_ctx *c, int by_size)
{
    struct table *t = by_size ? table_new("memory_ops_size", "CUDA memory operations by size")
                              : table_new("memory_ops_time", "CUDA memory operations by time");
    struct stat_cols stat = {"count", "Count", by_size, 1, 1, 1};
    table_stat_cols(t, &stat);
    table_col(t, "operation", NULL, COL_TEXT);
    table_col(t, "host_memory", NULL, COL_TEXT);
    table_col(t, NULL, "Operation", COL_TEXT);
    const struct cuda_run *r = run_cuda(c->db, c->p);
    double all = 0;
    for (int i = 0; i < r->nmemops; i++) all += (double)r->memops[i].dur.total;
    for (int i = 0; i < r->nmemops; i++) {
        const struct cuda_memop *m = &r->memops[i];
        const struct cuda_stat *st = by_size ? &m->bytes : &m->dur;
        table_row(t);
        struct stat_cells s = {!by_size, all,     st->total, st->count,
                               st->med,  st->min, st->max,   st->stddev};
        int col = table_set_stats(t, 0, &s);
        const char *nsys;
        char text[64];
        memop_names(m, &nsys, text, sizeof text);
        table_set_text(t, col++, nsys);
        if (m->host_kind >= 0) table_set_text(t, col, memory_kind_name(m->host_kind));
        col++;
        table_set_text(t, col++, text);
    }
    return t;
}

static struct table *memops_time(const struct section_ctx *c)
{
    return memops_table(c, 0);
}

static struct table *memops_size(const struct section_ctx *c)
{
    return memops_table(c, 1);
}

/* segments's columns, in the order it declares them (asserted there). */
enum {
    SG_DEVICE_NAME,
    SG_DEVICE_INDEX,
    SG_MEMORY_KIND,
    SG_ALLOCATIONS,
    SG_ASYNC_ALLOCATIONS,
    SG_ALLOCATED_BYTES,
    SG_RELEASES,
    SG_RELEASED_BYTES,
    SG_PEAK_BYTES,
    SG_NCOLS
};

/* ---- memory segments ---------------------------------------------------------------------- */

static struct table *segments(const struct section_ctx *c)
{
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
    assert(t->ncols == SG_NCOLS);
    const struct cuda_run *r = run_cuda(c->db, c->p);
    for (int i = 0; i < r->nseg; i++) {
        const struct cuda_segment *v = &r->seg[i];
        char name[32];
        device_name(1, v->device, name, sizeof name);
        table_row(t);
        table_set_text(t, SG_DEVICE_NAME, name);
        table_set_int(t, SG_DEVICE_INDEX, v->device);
        table_set_text(t, SG_MEMORY_KIND, memory_kind_name(v->kind));
        table_set_int(t, SG_ALLOCATIONS, v->allocs);
        table_set_int(t, SG_ASYNC_ALLOCATIONS, v->async_allocs);
        table_set_int(t, SG_ALLOCATED_BYTES, v->allocated);
        table_set_int(t, SG_RELEASES, v->releases);
        table_set_int(t, SG_RELEASED_BYTES, v->released);
        table_set_int(t, SG_PEAK_BYTES, v->peak);
    }
    return t;
}

/* ---- API calls ---------------------------------------------------------------------------- */

static struct table *api(const struct section_ctx *c)
{
    const struct report_opts *o = c->o;
    struct table *t = table_new("cuda_api", "CUDA API calls");
    static const struct stat_cols stat = {"calls", "Calls", 0, 0, 1, 0};
    table_stat_cols(t, &stat);
    table_col(t, "errors", NULL, COL_INT);
    /* Launches in text only where a call has no count of its own (API records off). */
    const struct cuda_run *cr = run_cuda(c->db, c->p);
    int uncounted = 0;
    for (int i = 0; i < cr->napi; i++) uncounted |= !cr->api[i].has_host && !cr->api[i].calls;
    table_col(t, "launches", uncounted ? "Launches" : NULL, COL_INT);
    table_col(t, "latency_avg_ns", NULL, COL_NS);
    table_col(t, "latency_med_ns", "Lat med", COL_NS);
    table_col(t, "latency_min_ns", NULL, COL_NS);
    table_col(t, "latency_max_ns", "Lat max", COL_NS);
    table_col(t, "name", "Name", COL_NAME);
    const struct cuda_api_fn *v = cr->api;
    int n = cr->napi;
    double all = 0;
    int64_t errors = 0;
    for (int i = 0; i < n; i++) all += (double)v[i].total, errors += v[i].errors;
    int shown = o->top && o->top < n ? o->top : n;
    int any_counted_only = 0;
    for (int i = 0; i < shown; i++) {
        const struct cuda_api_fn *r = &v[i];
        table_row(t);
        struct stat_cells s = {1, all, r->total, r->calls, r->med, r->min, r->max, r->stddev};
        if (r->has_host)
            table_set_stats(t, 0, &s);
        else if (r->calls) /* no host times: the calls alone */
            table_set_int(t, 2, r->calls);
        else /* no API records (the default): calls unknown, not 0; Launches has them */
            any_counted_only = 1;
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
    static char note[320];
    int o_ = snprintf(note, sizeof note,
                      "Lat: from the call's start to the start of the GPU work"
                      " it issued");
    if (any_counted_only) /* Calls 0 beside latencies read as no call at all */
        o_ += snprintf(note + o_, sizeof note - (size_t)o_,
                       "; without API records (INFPROF_CUDA_API=1) no host times and no call"
                       " count ('-'), only the Launches the callback saw");
    if (errors)
        snprintf(note + o_, sizeof note - (size_t)o_, "; %lld calls returned an error",
                 (long long)errors);
    else if (shown < n)
        snprintf(note + o_, sizeof note - (size_t)o_, "; %d more not shown (--top 0)", n - shown);
    t->note = n ? note : NULL;
    return t;
}

/* ---- the collection itself ---------------------------------------------------------------- */

static struct table *cuda_activity(const struct section_ctx *c)
{
    static const struct {
        const char *key, *warn;
    } counters[CUDA_COUNTERS] = {
        [CUDA_CTR_RECORDS] = {"records", NULL},
        [CUDA_CTR_BUFFERS_COMPLETED] = {"buffers_completed", NULL},
        [CUDA_CTR_BUFFERS_REFUSED] = {"buffers_refused", NULL},
        [CUDA_CTR_DROPPED_RECORDS] = {"dropped_records", NULL},
        [CUDA_CTR_BUFFER_ERRORS] =
            {"buffer_errors",
             "%lld CUPTI buffers could not be read to the end (records after the error are lost)"},
        [CUDA_CTR_INVALID_RECORDS] = {"invalid_records", "%lld records without valid times"},
        [CUDA_CTR_UNATTRIBUTED_RECORDS] = {"unattributed_records", NULL},
        [CUDA_CTR_UNKNOWN_RECORDS] = {"unknown_records", NULL},
        [CUDA_CTR_API_SAME_CORR] = {"api_same_corr", NULL},
        [CUDA_CTR_RECORDS_NOT_STORED] =
            {"records_not_stored",
             "%lld CUPTI records not stored (the tables could not be opened)"},
        /* INFPROF_ATTRIBUTION=records only (docs/cupti.md). */
        [CUDA_CTR_RECORDS_WAITED] = {"records_waited", NULL},
        [CUDA_CTR_RECORDS_WAIT_EXPIRED] =
            {"records_wait_expired",
             "%lld CUDA records read without the call that issued them (attribution by API"
             " records: the call never came, or came too late): no phase"},
        [CUDA_CTR_HISTORY_GONE] =
            {"history_gone",
             "%lld calls older than their thread's kept history: phase only, no iteration"},
    };
    struct table *t = table_new("cuda_activity", "CUDA activity collection");
    t->object = 1;
    table_col(t, NULL, "Records", COL_INT);
    for (int i = 0; i < CUDA_COUNTERS; i++) table_col(t, counters[i].key, NULL, COL_INT);
    table_col(t, "attribution", "Attribution", COL_TEXT);
    table_col(t, "warnings", "Warnings", COL_TEXT);
    const struct cuda_run *r = run_cuda(c->db, c->p);
    if (!r->has_counter[CUDA_CTR_RECORDS]) {
        t->note = "no CUDA activity records (see the CUPTI line of the run header)";
        return t;
    }
    table_row(t);
    table_set_int(t, 0, r->counter[CUDA_CTR_RECORDS]);
    char warn[1024] = "";
    size_t w = 0;
    for (int i = 0; i < CUDA_COUNTERS; i++) {
        if (!r->has_counter[i]) continue;
        int64_t v = r->counter[i];
        table_set_int(t, 1 + i, v);
        if (v && counters[i].warn && w < sizeof warn) {
            w += (size_t)snprintf(warn + w, sizeof warn - w, "%s", w ? "; " : "");
            if (w < sizeof warn)
                w += (size_t)snprintf(warn + w, sizeof warn - w, counters[i].warn, (long long)v);
        }
    }
    if (r->attribution) table_set_text(t, 1 + CUDA_COUNTERS, r->attribution);
    if (warn[0]) table_set_text(t, 2 + CUDA_COUNTERS, warn);
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
