/*
 * cupti_ingest.c: the CUPTI collector, writer side. Completed activity buffers become rows.
 *
 * Attribution: every kernel, copy, memset, memory and synchronisation record carries the
 * correlation id of the API call that issued it. The launch callback (cupti.c) told us, on the
 * launching thread, that thread's phase and innermost NVTX range; API records tell us the thread
 * and the call's start. Both go into a direct-mapped table indexed by correlation id, which the
 * work records then read. Per buffer set, API records are read first (pass 1), the work they
 * issued second (pass 2).
 *
 * Summaries (kernel_summary, api_summary) are accumulated here and written at finish.
 */
#include "collector.h"
#include "cupti_internal.h"
#include "../profiler/map.h"
#include "../profiler/phase.h"
#include "../profiler/stats.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTR_BITS 20
#define ATTR_SIZE (1u << ATTR_BITS)

struct attr {
    uint32_t corr, tid;
    uint8_t phase, launched, has_api, pad;
    uint32_t api_name; /* string id of the API function */
    uint64_t nvtx;
    uint64_t api_start; /* our clock */
};

#define SIG_FIELDS 15
struct sig {
    int64_t v[SIG_FIELDS];
};

struct kagg {
    int64_t name_id;
    int phase; /* -1: all phases */
    struct ip_stats st;
};

struct aagg {
    int64_t name_id;
    uint64_t errors;
    struct ip_stats st, latency;
};

static struct {
    struct attr *attr;
    struct ip_batch *kernels, *memcpy, *memset, *segments, *pools, *sync, *api, *ext, *graphs;
    struct sig *sigs;
    size_t nsigs, capsigs;
    uint32_t *sig_table; /* open addressing: sig index + 1 */
    size_t sig_table_cap;
    struct ip_map kagg_index, aagg_index;
    struct kagg *kaggs;
    size_t nkaggs, capkaggs;
    struct aagg *aaggs;
    size_t naaggs, capaaggs;
    uint64_t records, unattributed, invalid, unknown_kinds;
} ci;

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t rel(struct ip_store *s, uint64_t cupti_ts)
{
    return ip_store_rel(s, cupti_ts - (uint64_t)ip_cupti_clock_offset);
}

static struct attr *attr_get(uint32_t corr)
{
    struct attr *a = &ci.attr[corr & (ATTR_SIZE - 1)];
    return a->corr == corr && corr ? a : NULL;
}

static struct attr *attr_claim(uint32_t corr)
{
    struct attr *a = &ci.attr[corr & (ATTR_SIZE - 1)];
    if (a->corr != corr) memset(a, 0, sizeof *a), a->corr = corr;
    return a;
}

static int phase_of(uint32_t corr)
{
    struct attr *a = attr_get(corr);
    if (!a) ci.unattributed++;
    return a ? a->phase : 0;
}

static void *grow(void *p, size_t *cap, size_t elem)
{
    size_t n = *cap ? *cap * 2 : 64;
    void *q = realloc(p, n * elem);
    if (q) *cap = n;
    return q;
}

/* ---- launch signatures -------------------------------------------------------------------- */

static uint64_t sig_hash(const struct sig *g)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < SIG_FIELDS; i++) h = (h ^ (uint64_t)g->v[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static int sig_rehash(void)
{
    size_t cap = ci.sig_table_cap ? ci.sig_table_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < ci.nsigs; i++) {
        size_t j = sig_hash(&ci.sigs[i]) & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    free(ci.sig_table);
    ci.sig_table = t;
    ci.sig_table_cap = cap;
    return 0;
}

static int64_t sig_id(struct ip_store *s, const struct sig *g)
{
    static const char *const cols = "id, name_id, device, stream, grid_x, grid_y, grid_z,"
                                    " block_x, block_y, block_z, registers, static_smem,"
                                    " dynamic_smem, graph_id, graph_node, context";
    if ((ci.nsigs + 1) * 2 > ci.sig_table_cap && sig_rehash() != 0) return 0;
    size_t j = sig_hash(g) & (ci.sig_table_cap - 1);
    for (; ci.sig_table[j]; j = (j + 1) & (ci.sig_table_cap - 1))
        if (memcmp(&ci.sigs[ci.sig_table[j] - 1], g, sizeof *g) == 0) return ci.sig_table[j];
    if (ci.nsigs == ci.capsigs) {
        struct sig *p = grow(ci.sigs, &ci.capsigs, sizeof *p);
        if (!p) return 0;
        ci.sigs = p;
    }
    ci.sigs[ci.nsigs++] = *g;
    ci.sig_table[j] = (uint32_t)ci.nsigs;
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO launch_sigs(%s) VALUES (%zu", cols, ci.nsigs);
    for (int i = 0; i < SIG_FIELDS; i++)
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql), ",%lld", (long long)g->v[i]);
    strcat(sql, ")");
    ip_store_exec(s, sql);
    return (int64_t)ci.nsigs;
}

/* ---- aggregates --------------------------------------------------------------------------- */

static struct ip_stats *kagg(int64_t name_id, int phase)
{
    uint64_t key = ((uint64_t)name_id << 8) | (uint64_t)(phase + 1);
    uint64_t *slot = ip_map_put(&ci.kagg_index, key);
    if (!slot) return NULL;
    if (!*slot) {
        if (ci.nkaggs == ci.capkaggs) {
            struct kagg *p = grow(ci.kaggs, &ci.capkaggs, sizeof *p);
            if (!p) return NULL;
            ci.kaggs = p;
        }
        struct kagg *k = &ci.kaggs[ci.nkaggs++];
        k->name_id = name_id;
        k->phase = phase;
        ip_stats_init(&k->st, 1);
        *slot = ci.nkaggs;
    }
    return &ci.kaggs[*slot - 1].st;
}

static struct aagg *aagg(int64_t name_id)
{
    uint64_t *slot = ip_map_put(&ci.aagg_index, (uint64_t)name_id);
    if (!slot) return NULL;
    if (!*slot) {
        if (ci.naaggs == ci.capaaggs) {
            struct aagg *p = grow(ci.aaggs, &ci.capaaggs, sizeof *p);
            if (!p) return NULL;
            ci.aaggs = p;
        }
        struct aagg *a = &ci.aaggs[ci.naaggs++];
        memset(a, 0, sizeof *a);
        a->name_id = name_id;
        ip_stats_init(&a->st, 1);
        ip_stats_init(&a->latency, 1);
        *slot = ci.naaggs;
    }
    return &ci.aaggs[*slot - 1];
}

/* The launch latency of work that starts at `start` (our clock), issued by call `corr`. */
static void note_latency(uint32_t corr, uint64_t start)
{
    struct attr *a = attr_get(corr);
    if (!a || !a->has_api || !a->api_name || start < a->api_start) return;
    struct aagg *g = aagg(a->api_name);
    if (g) ip_stats_add(&g->latency, (int64_t)(start - a->api_start));
    a->has_api = 0; /* once per call (a graph launch issues many kernels) */
}

/* ---- records ------------------------------------------------------------------------------ */

static void on_api(struct ip_store *s, const CUpti_ActivityAPI *r)
{
    int domain = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 1 : 2;
    const char *name = ip_cupti_api_name(domain, r->cbid);
    int64_t name_id = ip_store_intern_static(s, name);
    uint64_t start = r->start - (uint64_t)ip_cupti_clock_offset;
    struct attr *a = attr_claim(r->correlationId);
    if (!a->launched) a->phase = ip_phase_at(r->threadId, start), a->tid = r->threadId;
    a->has_api = 1;
    a->api_name = (uint32_t)name_id;
    a->api_start = start;
    int64_t *row = ip_batch_row(ci.api);
    row[0] = r->correlationId;
    row[1] = rel(s, r->start);
    row[2] = (int64_t)(r->end - r->start);
    row[3] = r->threadId;
    row[4] = name_id;
    row[5] = r->cbid;
    row[6] = domain;
    row[7] = r->returnValue;
    row[8] = a->phase;
    row[9] = a->launched && a->nvtx ? (int64_t)a->nvtx : IP_NULL;
    struct aagg *g = aagg(name_id);
    if (g) {
        ip_stats_add(&g->st, (int64_t)(r->end - r->start));
        if (r->returnValue) g->errors++;
    }
}

static void on_kernel(struct ip_store *s, const CUpti_ActivityKernel10 *k)
{
    if (!k->start || k->end < k->start) {
        ci.invalid++;
        return;
    }
    struct sig g = {{ip_store_intern_static(s, k->name), k->deviceId, k->streamId, k->gridX,
                     k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->registersPerThread,
                     k->staticSharedMemory, k->dynamicSharedMemory, k->graphId,
                     (int64_t)k->graphNodeId, k->contextId}};
    int phase = phase_of(k->correlationId);
    int64_t dur = (int64_t)(k->end - k->start);
    int64_t *row = ip_batch_row(ci.kernels);
    row[0] = rel(s, k->start);
    row[1] = dur;
    row[2] = sig_id(s, &g);
    row[3] = k->correlationId;
    row[4] = phase;
    struct ip_stats *a = kagg(g.v[0], phase), *all = kagg(g.v[0], -1);
    if (a) ip_stats_add(a, dur);
    if (all) ip_stats_add(all, dur);
    note_latency(k->correlationId, k->start - (uint64_t)ip_cupti_clock_offset);
}

static void on_memcpy(struct ip_store *s, const CUpti_ActivityMemcpy6 *m)
{
    int64_t *row = ip_batch_row(ci.memcpy);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = (int64_t)m->bytes;
    row[3] = m->copyKind;
    row[4] = m->srcKind;
    row[5] = m->dstKind;
    row[6] = m->flags;
    row[7] = m->deviceId;
    row[8] = m->streamId;
    row[9] = m->correlationId;
    row[10] = phase_of(m->correlationId);
    row[11] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    row[12] = IP_NULL;
    note_latency(m->correlationId, m->start - (uint64_t)ip_cupti_clock_offset);
}

static void on_memcpy_p2p(struct ip_store *s, const CUpti_ActivityMemcpyPtoP4 *m)
{
    int64_t *row = ip_batch_row(ci.memcpy);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = (int64_t)m->bytes;
    row[3] = m->copyKind;
    row[4] = m->srcKind;
    row[5] = m->dstKind;
    row[6] = m->flags;
    row[7] = m->srcDeviceId;
    row[8] = m->streamId;
    row[9] = m->correlationId;
    row[10] = phase_of(m->correlationId);
    row[11] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    row[12] = m->dstDeviceId;
}

static void on_memset(struct ip_store *s, const CUpti_ActivityMemset4 *m)
{
    int64_t *row = ip_batch_row(ci.memset);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = (int64_t)m->bytes;
    row[3] = m->value;
    row[4] = m->memoryKind;
    row[5] = m->flags;
    row[6] = m->deviceId;
    row[7] = m->streamId;
    row[8] = m->correlationId;
    row[9] = phase_of(m->correlationId);
    row[10] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    note_latency(m->correlationId, m->start - (uint64_t)ip_cupti_clock_offset);
}

static void on_memory(struct ip_store *s, const CUpti_ActivityMemory4 *m)
{
    int64_t *row = ip_batch_row(ci.segments);
    row[0] = rel(s, m->timestamp);
    row[1] = m->memoryOperationType;
    row[2] = m->memoryKind;
    row[3] = (int64_t)m->address;
    row[4] = (int64_t)m->bytes;
    row[5] = m->deviceId;
    row[6] = m->streamId;
    row[7] = m->correlationId;
    row[8] = phase_of(m->correlationId);
    row[9] = m->isAsync;
    row[10] = m->memoryPoolConfig.address ? (int64_t)m->memoryPoolConfig.address : IP_NULL;
    row[11] = m->memoryPoolConfig.memoryPoolType;
}

static void on_pool(struct ip_store *s, const CUpti_ActivityMemoryPool3 *m)
{
    int64_t *row = ip_batch_row(ci.pools);
    row[0] = rel(s, m->timestamp);
    row[1] = m->memoryPoolOperationType;
    row[2] = m->memoryPoolType;
    row[3] = (int64_t)m->address;
    row[4] = (int64_t)m->size;
    row[5] = (int64_t)m->utilizedSize;
    row[6] = (int64_t)m->releaseThreshold;
    row[7] = m->deviceId;
    row[8] = m->correlationId;
}

static void on_sync(struct ip_store *s, const CUpti_ActivitySynchronization2 *m)
{
    int64_t *row = ip_batch_row(ci.sync);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = m->type;
    row[3] = m->contextId;
    row[4] = m->streamId == (uint32_t)-1 ? IP_NULL : m->streamId;
    row[5] = m->cudaEventId ? (int64_t)m->cudaEventId : IP_NULL;
    row[6] = m->correlationId;
    row[7] = phase_of(m->correlationId);
}

static void on_graph(struct ip_store *s, const CUpti_ActivityGraphTrace2 *m)
{
    int64_t *row = ip_batch_row(ci.graphs);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = m->deviceId;
    row[3] = m->streamId;
    row[4] = m->graphId;
    row[5] = m->correlationId;
    row[6] = phase_of(m->correlationId);
}

static void on_external(const CUpti_ActivityExternalCorrelation *m)
{
    int64_t *row = ip_batch_row(ci.ext);
    row[0] = m->correlationId;
    row[1] = m->externalKind;
    row[2] = (int64_t)m->externalId;
}

static int is_api_pass(CUpti_ActivityKind k)
{
    return k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER ||
           k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
}

static void on_record(struct ip_store *s, const CUpti_Activity *r)
{
    ci.records++;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        on_api(s, (const CUpti_ActivityAPI *)r);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        on_external((const CUpti_ActivityExternalCorrelation *)r);
        break;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        on_kernel(s, (const CUpti_ActivityKernel10 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        on_memcpy(s, (const CUpti_ActivityMemcpy6 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        on_memcpy_p2p(s, (const CUpti_ActivityMemcpyPtoP4 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        on_memset(s, (const CUpti_ActivityMemset4 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        on_memory(s, (const CUpti_ActivityMemory4 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        on_pool(s, (const CUpti_ActivityMemoryPool3 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        on_sync(s, (const CUpti_ActivitySynchronization2 *)r);
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        on_graph(s, (const CUpti_ActivityGraphTrace2 *)r);
        break;
    default:
        ci.unknown_kinds++;
        break;
    }
}

/* ---- collector callbacks ------------------------------------------------------------------ */

static void ingest_reset(void)
{
    /* A forked child's writer starts from a copy of the parent's state: drop it. */
    for (size_t i = 0; i < ci.nkaggs; i++) ip_stats_free(&ci.kaggs[i].st);
    for (size_t i = 0; i < ci.naaggs; i++) {
        ip_stats_free(&ci.aaggs[i].st);
        ip_stats_free(&ci.aaggs[i].latency);
    }
    free(ci.kaggs);
    free(ci.aaggs);
    free(ci.sigs);
    free(ci.sig_table);
    ip_map_free(&ci.kagg_index);
    ip_map_free(&ci.aagg_index);
    struct attr *attr = ci.attr;
    memset(&ci, 0, sizeof ci);
    ci.attr = attr;
    if (ci.attr) memset(ci.attr, 0, ATTR_SIZE * sizeof *ci.attr);
}

void ip_cupti_ingest_prepare(struct ip_store *s)
{
    ingest_reset();
    if (!ci.attr) ci.attr = calloc(ATTR_SIZE, sizeof *ci.attr);
    ci.kernels = ip_batch_open(s, "kernels", 5);
    ci.memcpy = ip_batch_open(s, "memcpy", 13);
    ci.memset = ip_batch_open(s, "memset", 11);
    ci.segments = ip_batch_open(s, "memory_segments", 12);
    ci.pools = ip_batch_open(s, "memory_pools", 9);
    ci.sync = ip_batch_open(s, "sync", 8);
    ci.api = ip_batch_open(s, "cuda_api", 10);
    ci.ext = ip_batch_open(s, "external_corr", 3);
    ci.graphs = ip_batch_open(s, "graph_launches", 7);
}

void ip_cupti_ingest_launch(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    (void)s;
    if ((ev->type & 0xff) != IP_EV_CUPTI_LAUNCH || !ci.attr) return;
    const struct ip_ev_launch *e = (const struct ip_ev_launch *)ev;
    struct attr *a = attr_claim(e->h.aux);
    a->launched = 1;
    a->phase = e->phase;
    a->nvtx = e->nvtx;
    a->tid = tid;
}

#define MAX_BUFFERS_PER_CYCLE 4096

void ip_cupti_ingest_flush(struct ip_store *s, int final)
{
    (void)final;
    if (!ci.attr || !ci.kernels || !ip_cupti.ActivityGetNextRecord) return;
    static uint8_t *bufs[MAX_BUFFERS_PER_CYCLE];
    static size_t valid[MAX_BUFFERS_PER_CYCLE];
    uint32_t n = 0;
    while (n < MAX_BUFFERS_PER_CYCLE && ip_cupti_pool_take(&bufs[n], &valid[n])) n++;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            CUpti_Activity *r = NULL;
            while (ip_cupti.ActivityGetNextRecord(bufs[i], valid[i], &r) == CUPTI_SUCCESS)
                if (is_api_pass(r->kind) == (pass == 0)) on_record(s, r);
        }
    }
    for (uint32_t i = 0; i < n; i++) ip_cupti_pool_release(bufs[i]);
    uint64_t dropped, refused, completed;
    ip_cupti_pool_counters(&dropped, &refused, &completed);
    if (n || final) {
        ip_store_meta_int(s, "cupti_records", (int64_t)ci.records);
        ip_store_meta_int(s, "cupti_dropped_records", (int64_t)dropped);
        ip_store_meta_int(s, "cupti_buffers_refused", (int64_t)refused);
        ip_store_meta_int(s, "cupti_buffers_completed", (int64_t)completed);
        ip_store_meta_int(s, "cupti_unattributed_records", (int64_t)ci.unattributed);
        ip_store_meta_int(s, "cupti_invalid_records", (int64_t)ci.invalid);
    }
}

static void write_summaries(struct ip_store *s)
{
    sqlite3_stmt *k = ip_store_prepare(s, "INSERT INTO kernel_summary VALUES (?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; k && i < ci.nkaggs; i++) {
        struct kagg *g = &ci.kaggs[i];
        int exact;
        int64_t med = ip_stats_median(&g->st, &exact);
        sqlite3_bind_int64(k, 1, g->name_id);
        sqlite3_bind_int(k, 2, g->phase);
        sqlite3_bind_int64(k, 3, (int64_t)g->st.count);
        sqlite3_bind_int64(k, 4, g->st.total);
        sqlite3_bind_int64(k, 5, g->st.min);
        sqlite3_bind_int64(k, 6, g->st.max);
        sqlite3_bind_int64(k, 7, med);
        sqlite3_bind_double(k, 8, ip_stats_stddev(&g->st));
        sqlite3_bind_int(k, 9, exact);
        ip_store_step(s, k);
        ip_stats_free(&g->st);
    }
    sqlite3_stmt *a = ip_store_prepare(s, "INSERT INTO api_summary VALUES"
                                          " (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; a && i < ci.naaggs; i++) {
        struct aagg *g = &ci.aaggs[i];
        int exact, lat_exact;
        int64_t med = ip_stats_median(&g->st, &exact);
        int64_t lat_med = ip_stats_median(&g->latency, &lat_exact);
        sqlite3_bind_int64(a, 1, g->name_id);
        sqlite3_bind_int64(a, 2, (int64_t)g->st.count);
        sqlite3_bind_int64(a, 3, g->st.total);
        sqlite3_bind_int64(a, 4, g->st.min);
        sqlite3_bind_int64(a, 5, g->st.max);
        sqlite3_bind_int64(a, 6, med);
        sqlite3_bind_double(a, 7, ip_stats_stddev(&g->st));
        sqlite3_bind_int(a, 8, exact);
        sqlite3_bind_int64(a, 9, (int64_t)g->errors);
        sqlite3_bind_int64(a, 10, (int64_t)g->latency.count);
        if (g->latency.count) {
            sqlite3_bind_int64(a, 11, g->latency.total);
            sqlite3_bind_int64(a, 12, g->latency.min);
            sqlite3_bind_int64(a, 13, g->latency.max);
            sqlite3_bind_int64(a, 14, lat_med);
        }
        ip_store_step(s, a);
        ip_stats_free(&g->st);
        ip_stats_free(&g->latency);
    }
}

static void write_devices(struct ip_store *s)
{
    const struct ip_cupti_facts *f = &ip_cupti_facts;
    if (f->driver_version) ip_store_meta_int(s, "cuda_driver_version", f->driver_version);
    if (f->runtime_version) ip_store_meta_int(s, "cuda_runtime_version", f->runtime_version);
    if (f->cupti_version) ip_store_meta_int(s, "cupti_api_version", f->cupti_version);
    sqlite3_stmt *d = ip_store_prepare(s, "INSERT OR REPLACE INTO devices VALUES"
                                          " (?,?,?,?,?,?,?,?,?,?)");
    for (int i = 0; d && i < f->ndevices; i++) {
        const struct ip_cupti_device *v = &f->dev[i];
        sqlite3_bind_int(d, 1, v->id);
        sqlite3_bind_text(d, 2, v->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(d, 3, v->sms);
        sqlite3_bind_int64(d, 4, v->memory);
        sqlite3_bind_int64(d, 5, v->cc_major);
        sqlite3_bind_int64(d, 6, v->cc_minor);
        sqlite3_bind_int64(d, 7, v->clock_khz);
        sqlite3_bind_int64(d, 8, v->mem_clock_khz);
        sqlite3_bind_int64(d, 9, v->bus_width);
        sqlite3_bind_text(d, 10, v->uuid, -1, SQLITE_STATIC);
        ip_store_step(s, d);
    }
}

void ip_cupti_ingest_finish(struct ip_store *s)
{
    if (!ci.kernels) return;
    ip_cupti_ingest_flush(s, 1);
    write_summaries(s);
    write_devices(s);
}
