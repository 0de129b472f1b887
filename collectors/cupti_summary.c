/*
 * cupti_summary.c: the CUPTI collector's writer-side aggregates: per-kernel and per-API-call
 * statistics (kernel_summary, api_summary, written at finish), graph launches derived from the
 * work of their nodes (graph_launches), and device facts (devices, version metadata).
 *
 * Graph launches: we never enable GRAPH_TRACE (it would replace node records), so a launch's
 * row spans the first start to the last end of the work that carries its correlation id and a
 * graph id. Launches are written when the table of open ones grows large (oldest first: their
 * work has long arrived) and at finish.
 */
#include "cupti_internal.h"
#include "../profiler/map.h"
#include "../profiler/phase.h"
#include "../profiler/stats.h"
#include "../profiler/stats_row.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kernel_stats {
    int64_t name_id;
    int phase; /* -1: all phases */
    struct ip_stats st;
};

struct api_stats {
    int64_t name_id;
    uint64_t errors;
    struct ip_stats st, latency;
};

struct graph_launch {
    uint32_t corr, graph_id, device, stream;
    int phase, traced;
    uint64_t start, end, issue_ts;
    int64_t api_name;
};

#define GRAPH_OPEN_MAX 65536

static struct {
    struct ip_map kernel_index, api_index, graph_index;
    struct kernel_stats *kernels;
    size_t nkernels, capkernels;
    struct api_stats *apis;
    size_t napis, capapis;
    struct graph_launch *graphs; /* open graph launches, in order of first sight */
    size_t ngraphs, capgraphs;
} sum;

static void *grow(void *p, size_t *cap, size_t elem)
{
    size_t n = *cap ? *cap * 2 : 64;
    void *q = realloc(p, n * elem);
    if (q) *cap = n;
    return q;
}

void ip_cupti_sum_reset(void)
{
    ip_cupti_busy_reset();
    ip_cupti_fold_reset();
    for (size_t i = 0; i < sum.nkernels; i++) ip_stats_free(&sum.kernels[i].st);
    for (size_t i = 0; i < sum.napis; i++) {
        ip_stats_free(&sum.apis[i].st);
        ip_stats_free(&sum.apis[i].latency);
    }
    free(sum.kernels);
    free(sum.apis);
    free(sum.graphs);
    ip_map_free(&sum.kernel_index);
    ip_map_free(&sum.api_index);
    ip_map_free(&sum.graph_index);
    memset(&sum, 0, sizeof sum);
}

/* ---- kernels and API calls ---------------------------------------------------------------- */

static struct ip_stats *kernel_stats(int64_t name_id, int phase)
{
    uint64_t key = ((uint64_t)name_id << 8) | (uint64_t)(phase + 1);
    uint64_t *slot = ip_map_put(&sum.kernel_index, key);
    if (!slot) return NULL;
    if (!*slot) {
        if (sum.nkernels == sum.capkernels) {
            struct kernel_stats *p = grow(sum.kernels, &sum.capkernels, sizeof *p);
            if (!p) return NULL;
            sum.kernels = p;
        }
        struct kernel_stats *k = &sum.kernels[sum.nkernels++];
        k->name_id = name_id;
        k->phase = phase;
        ip_stats_init(&k->st, 1);
        *slot = sum.nkernels;
    }
    return &sum.kernels[*slot - 1].st;
}

static struct api_stats *api_stats(int64_t name_id)
{
    uint64_t *slot = ip_map_put(&sum.api_index, (uint64_t)name_id);
    if (!slot) return NULL;
    if (!*slot) {
        if (sum.napis == sum.capapis) {
            struct api_stats *p = grow(sum.apis, &sum.capapis, sizeof *p);
            if (!p) return NULL;
            sum.apis = p;
        }
        struct api_stats *a = &sum.apis[sum.napis++];
        memset(a, 0, sizeof *a);
        a->name_id = name_id;
        ip_stats_init(&a->st, 1);
        ip_stats_init(&a->latency, 1);
        *slot = sum.napis;
    }
    return &sum.apis[*slot - 1];
}

void ip_cupti_sum_kernel(int64_t name_id, int phase, int64_t dur)
{
    /* Per phase only: the all-phases row is merged from these at finish (half the work here). */
    struct ip_stats *a = kernel_stats(name_id, phase);
    if (a) ip_stats_add(a, dur);
}

void ip_cupti_sum_api(int64_t name_id, int64_t dur, int error)
{
    struct api_stats *g = api_stats(name_id);
    if (!g) return;
    ip_stats_add(&g->st, dur);
    if (error) g->errors++;
}

void ip_cupti_sum_latency(int64_t api_name_id, int64_t latency)
{
    struct api_stats *g = api_stats(api_name_id);
    if (g) ip_stats_add(&g->latency, latency);
}

/* ---- graph launches ----------------------------------------------------------------------- */

static struct graph_launch *graph_launch(uint32_t corr, int create)
{
    uint64_t *slot =
        create ? ip_map_put(&sum.graph_index, corr) : ip_map_get(&sum.graph_index, corr);
    if (!slot) return NULL;
    if (!*slot) {
        if (sum.ngraphs == sum.capgraphs) {
            struct graph_launch *p = grow(sum.graphs, &sum.capgraphs, sizeof *p);
            if (!p) {
                ip_map_del(&sum.graph_index, corr);
                return NULL;
            }
            sum.graphs = p;
        }
        struct graph_launch *g = &sum.graphs[sum.ngraphs++];
        memset(g, 0, sizeof *g);
        g->corr = corr;
        *slot = sum.ngraphs;
    }
    return &sum.graphs[*slot - 1];
}

/* Write the first n open launches and forget them. */
static void graph_write(struct ip_store *s, size_t n)
{
    sqlite3_stmt *st = ip_store_prepare(s, "INSERT INTO graph_launches VALUES (?,?,?,?,?,?,?)");
    for (size_t i = 0; st && i < n; i++) {
        struct graph_launch *g = &sum.graphs[i];
        if (g->traced) continue;
        sqlite3_bind_int64(st, 1, ip_store_rel(s, g->start));
        sqlite3_bind_int64(st, 2, (int64_t)(g->end - g->start));
        sqlite3_bind_int64(st, 3, g->device);
        sqlite3_bind_int64(st, 4, g->stream);
        sqlite3_bind_int64(st, 5, g->graph_id);
        sqlite3_bind_int64(st, 6, g->corr);
        sqlite3_bind_int64(st, 7, g->phase);
        ip_store_step(s, st);
        if (g->issue_ts && g->api_name && g->start >= g->issue_ts)
            ip_cupti_sum_latency(g->api_name, (int64_t)(g->start - g->issue_ts));
    }
    if (sum.graphs) memmove(sum.graphs, sum.graphs + n, (sum.ngraphs - n) * sizeof *sum.graphs);
    sum.ngraphs -= n;
    ip_map_free(&sum.graph_index);
    for (size_t i = 0; i < sum.ngraphs; i++) {
        uint64_t *slot = ip_map_put(&sum.graph_index, sum.graphs[i].corr);
        if (slot) *slot = i + 1;
    }
}

void ip_cupti_sum_graph_work(struct ip_store *s, uint32_t corr, uint32_t graph_id, uint32_t device,
                             uint32_t stream, int phase, uint64_t start, uint64_t end,
                             uint64_t issue_ts, int64_t api_name_id)
{
    if (sum.ngraphs >= GRAPH_OPEN_MAX) graph_write(s, sum.ngraphs / 2);
    struct graph_launch *g = graph_launch(corr, 1);
    if (!g || g->traced) return;
    if (!g->graph_id) {
        *g = (struct graph_launch){corr, graph_id, device, stream,   phase,
                                   0,    start,    end,    issue_ts, api_name_id};
        return;
    }
    if (start < g->start) g->start = start, g->device = device, g->stream = stream;
    if (end > g->end) g->end = end;
}

void ip_cupti_sum_graph_traced(uint32_t corr)
{
    struct graph_launch *g = graph_launch(corr, 1);
    if (g) g->traced = 1;
}

/* ---- devices ------------------------------------------------------------------------------ */

void ip_cupti_uuid_text(const CUuuid *u, char *out, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

void ip_cupti_write_device(struct ip_store *s, const struct ip_cupti_device *v)
{
    sqlite3_stmt *d = ip_store_prepare(s, "INSERT OR REPLACE INTO devices VALUES"
                                          " (?,?,?,?,?,?,?,?,?,?)");
    if (!d) return;
    sqlite3_bind_int(d, 1, v->id);
    sqlite3_bind_text(d, 2, v->name, -1, SQLITE_TRANSIENT);
    int64_t ints[7] = {v->sms,       v->memory,        v->cc_major, v->cc_minor,
                       v->clock_khz, v->mem_clock_khz, v->bus_width};
    for (int i = 0; i < 7; i++)
        if (ints[i] >= 0) sqlite3_bind_int64(d, 3 + i, ints[i]);
    sqlite3_bind_text(d, 10, v->uuid, -1, SQLITE_TRANSIENT);
    ip_store_step(s, d);
}

static void write_devices(struct ip_store *s)
{
    const struct ip_cupti_facts *f = &ip_cupti_facts;
    if (f->driver_version) ip_store_meta_int(s, "cuda_driver_version", f->driver_version);
    if (f->runtime_version) ip_store_meta_int(s, "cuda_runtime_version", f->runtime_version);
    if (f->cupti_version) ip_store_meta_int(s, "cupti_api_version", f->cupti_version);
    for (int i = 0; i < f->ndevices; i++) ip_cupti_write_device(s, &f->dev[i]);
}

/* ---- finish ------------------------------------------------------------------------------- */

static void write_kernel_row(struct ip_store *s, sqlite3_stmt *k, int64_t name_id, int phase,
                             struct ip_stats *st)
{
    ip_stats_bind_summary(k, name_id, phase, st);
    ip_store_step(s, k);
}

static int cmp_kernel_name(const void *a, const void *b)
{
    const struct kernel_stats *x = *(const struct kernel_stats *const *)a,
                              *y = *(const struct kernel_stats *const *)b;
    return (x->name_id > y->name_id) - (x->name_id < y->name_id);
}

static void write_summaries(struct ip_store *s)
{
    sqlite3_stmt *k = ip_store_prepare(s, "INSERT INTO kernel_summary VALUES (?,?,?,?,?,?,?,?,?)");
    /* Phase rows as accumulated; the all-phases row (-1) of each name merged from them. */
    struct kernel_stats **by_name = malloc(sum.nkernels * sizeof *by_name);
    for (size_t i = 0; by_name && i < sum.nkernels; i++) by_name[i] = &sum.kernels[i];
    if (by_name && sum.nkernels) qsort(by_name, sum.nkernels, sizeof *by_name, cmp_kernel_name);
    for (size_t i = 0; k && by_name && i < sum.nkernels;) {
        size_t j = i;
        struct ip_stats *parts[IP_PHASE_COUNT + 1];
        int n = 0;
        for (; j < sum.nkernels && by_name[j]->name_id == by_name[i]->name_id; j++)
            if (n <= IP_PHASE_COUNT) parts[n++] = &by_name[j]->st;
        struct ip_stats all;
        ip_stats_init(&all, 1);
        ip_stats_merge(&all, parts, n);
        for (size_t m = i; m < j; m++)
            write_kernel_row(s, k, by_name[m]->name_id, by_name[m]->phase, &by_name[m]->st);
        write_kernel_row(s, k, by_name[i]->name_id, -1, &all);
        ip_stats_free(&all);
        i = j;
    }
    free(by_name);
    sqlite3_stmt *a = ip_store_prepare(s, "INSERT INTO api_summary VALUES"
                                          " (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; a && i < sum.napis; i++) {
        struct api_stats *g = &sum.apis[i];
        sqlite3_bind_int64(a, 1, g->name_id);
        sqlite3_bind_int64(a, 2, (int64_t)g->st.count);
        if (g->st.count) {
            /* Host times are unknown when only the issue callback saw the call
             * (INFPROF_CUDA_API=0): NULL, never 0. */
            int exact;
            int64_t med = ip_stats_median(&g->st, &exact);
            sqlite3_bind_int64(a, 3, g->st.total);
            sqlite3_bind_int64(a, 4, g->st.min);
            sqlite3_bind_int64(a, 5, g->st.max);
            sqlite3_bind_int64(a, 6, med);
            sqlite3_bind_double(a, 7, ip_stats_stddev(&g->st));
            sqlite3_bind_int(a, 8, exact);
        }
        sqlite3_bind_int64(a, 9, (int64_t)g->errors);
        sqlite3_bind_int64(a, 10, (int64_t)g->latency.count);
        if (g->latency.count) {
            int lat_exact;
            int64_t lat_med = ip_stats_median(&g->latency, &lat_exact);
            sqlite3_bind_int64(a, 11, g->latency.total);
            sqlite3_bind_int64(a, 12, g->latency.min);
            sqlite3_bind_int64(a, 13, g->latency.max);
            sqlite3_bind_int64(a, 14, lat_med);
        }
        ip_store_step(s, a);
    }
}

void ip_cupti_sum_write(struct ip_store *s)
{
    graph_write(s, sum.ngraphs); /* first: graph launch latencies join the API summary */
    write_summaries(s);
    ip_cupti_busy_write(s);
    ip_cupti_fold_write(s);
    write_devices(s);
    ip_cupti_sum_reset();
}
