/*
 * cupti_ingest.c: the CUPTI collector, writer side. Completed activity buffers become rows.
 *
 * Attribution: every kernel, copy, memset, memory and synchronisation record carries the
 * correlation id of the API call that issued it. The issue callback (cupti.c) told us, on the
 * issuing thread, that thread's phase, innermost NVTX range and the call's entry time; API
 * records tell us the thread and the call's start and duration. Both go into a direct-mapped
 * table indexed by correlation id, which the work records then read. Issue events are drained
 * from the rings before the buffers of the same cycle are read (collector.h, snapshot), so a
 * work record always finds its issue event; API records, which CUPTI may deliver after the work
 * they issued, are read first within a cycle (passes 0 and 1) and only refine what the event
 * said.
 *
 * With INFPROF_ATTRIBUTION=records there is no issue event: the API record of the issuing call
 * (enabled for those calls only) gives the thread and the time, and the thread's histories give
 * its phase (phase.h) and its iteration, NVTX range and cuDNN call (attrib.h) at that time. A
 * work record that arrives before its API record waits for it (cupti_park.c).
 *
 * Aggregates (summaries, graph launches, devices) live in cupti_summary.c.
 */
#include "cupti_config.h"
#include "registry.h"
#include "cupti_internal.h"
#include "../profiler/watch.h"
#include "../profiler/attrib.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/iteration.h"
#include "../profiler/opname.h"
#include "../profiler/phase.h"
#include "../profiler/store.h"
#include "../profiler/window.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTR_BITS 20
#define ATTR_SIZE (1u << ATTR_BITS)

/* 48 bytes (40 before the cuDNN call's id, which lets the writer fold a call's kernels:
 * collectors/cudnn_fold.c); 2^20 of them (48 MiB of address space, touched as correlation ids
 * reach them) cover the ids of a few seconds of a launch-bound run, far more than a record waits
 * between its call and its buffer's ingestion. */
struct attr {
    uint32_t corr, tid;
    uint32_t api_name; /* string id of the issuing call, 0 unknown */
    uint8_t phase, has_issue, has_api, latency_done;
    uint64_t nvtx;
    uint64_t issue_ts; /* start of the issuing call, our clock; 0 unknown */
    uint32_t iter;     /* the iteration that issued it, 0 none */
    uint32_t op;       /* the issuing thread's innermost operator (opname.h), 0 none */
    uint64_t cudnn;    /* the cuDNN call it was made in (its ext id), 0 none */
};

#define SIG_FIELDS 16
struct sig {
    int64_t v[SIG_FIELDS];
};

static struct {
    int ok; /* every batch opened */
    struct attr *attr;
    struct ip_batch *kernels, *memcpy, *memset, *segments, *pools, *sync, *api, *ext, *graphs;
    struct sig *sigs;
    size_t nsigs, capsigs;
    uint32_t *sig_table; /* open addressing: sig index + 1 */
    size_t sig_table_cap;
    int api_rows; /* API records become rows (INFPROF_CUDA_API); else they only attribute */
    uint64_t records, unattributed, invalid, unknown_kinds, buffer_errors, api_same_corr,
        not_stored, history_gone, outside_windows;
} ci;

/* ---- small helpers ------------------------------------------------------------------------ */

static uint64_t ours(uint64_t cupti_ts)
{
    return cupti_ts - (uint64_t)ip_cupti_clock_offset;
}

static int64_t rel(struct ip_store *s, uint64_t cupti_ts)
{
    return ip_store_rel(s, ours(cupti_ts));
}

static int64_t or_null(uint32_t v, uint32_t invalid)
{
    return v == invalid ? IP_NULL : (int64_t)v;
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

/* The call a work record's correlation id names, else the runtime call's (copies carry both),
 * when an issue event or an API record told us of it; NULL otherwise. */
static struct attr *attr_find(uint32_t corr, uint32_t runtime_corr)
{
    struct attr *a = attr_get(corr);
    if (!a && runtime_corr && runtime_corr != corr) a = attr_get(runtime_corr);
    return a && (a->has_issue || a->has_api) ? a : NULL;
}

/* The attribution of a work record (attr_find), counted when there is none. */
static struct attr *attr_of(uint32_t corr, uint32_t runtime_corr)
{
    struct attr *a = attr_find(corr, runtime_corr);
    if (!a) ci.unattributed++;
    return a;
}

/* Launch latency of work that starts at `start` (our clock): once per call, from its first work
 * record. Graph work goes to its graph launch instead (cupti_summary.c). */
static void note_latency(struct attr *a, uint64_t start)
{
    if (!a || a->latency_done || !a->issue_ts || !a->api_name || start < a->issue_ts) return;
    a->latency_done = 1;
    ip_cupti_sum_latency(a->api_name, (int64_t)(start - a->issue_ts));
}

static void note_work(struct ip_store *s, struct attr *a, uint32_t corr, uint32_t graph_id,
                      uint32_t device, uint32_t stream, uint64_t start, uint64_t end)
{
    ip_cupti_busy_add(a ? a->phase : 0, ours(start), ours(end));
    ip_watch_device(device); /* the energy sampler reads the GPUs the process used */
    if (a) ip_iter_gpu_work(a->iter, ours(end));
    if (graph_id)
        ip_cupti_sum_graph_work(s, corr, graph_id, device, stream, a ? a->phase : 0, ours(start),
                                ours(end), a ? a->issue_ts : 0, a ? a->api_name : 0);
    else
        note_latency(a, ours(start));
}

static int bad_times(uint64_t start, uint64_t end)
{
    if (start && end >= start) return 0;
    ci.invalid++; /* CUPTI could not time it (0), or it makes no sense: counted, not stored */
    return 1;
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
                                    " dynamic_smem, graph_id, graph_node, context, phase";
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

/* ---- records ------------------------------------------------------------------------------ */

/* The cuDNN call a call was made in: the row CUPTI's external correlation record would give
 * (kind CUSTOM1). */
static void link_cudnn(uint32_t corr, uint64_t cudnn)
{
    if (!cudnn) return;
    int64_t *row = ip_batch_row(ci.ext);
    row[0] = corr;
    row[1] = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    row[2] = (int64_t)cudnn;
}

/* A kernel launched inside a cuDNN call goes to that call's fold (collectors/cudnn_fold.c), as
 * its external_corr row ties it to the call. One with no attribution whose slot a later call took
 * may have been made in one: said with ext 0, so that the fold does not stand for the rows. */
static void in_call(const struct attr *a, uint32_t corr, int64_t dur)
{
    if (!ip_attrib_kernel_in_call) return;
    if (a) {
        if (a->cudnn) ip_attrib_kernel_in_call(a->cudnn, dur);
        return;
    }
    /* In records mode its API record may still come (then its external_corr row is written). */
    const struct attr *x = &ci.attr[corr & (ATTR_SIZE - 1)];
    if (atomic_load_explicit(&ip_cupti_by_records, memory_order_relaxed) ||
        (corr && x->corr && (int32_t)(x->corr - corr) > 0))
        ip_attrib_kernel_in_call(0, 0);
}

/* A call no issue event told us of: what its thread was in when it started. */
static void attr_by_time(struct attr *a, uint32_t tid, uint64_t start)
{
    a->tid = tid;
    a->phase = ip_phase_at(tid, start);
    if (!atomic_load_explicit(&ip_cupti_by_records, memory_order_relaxed)) return;
    struct ip_attrib_state st;
    if (!ip_attrib_at(tid, start, &st)) ci.history_gone++;
    a->iter = st.iter;
    a->nvtx = st.nvtx;
    a->op = st.op;
    a->cudnn = st.cudnn;
    link_cudnn(a->corr, st.cudnn);
}

static void on_api(struct ip_store *s, const CUpti_ActivityAPI *r)
{
    int domain = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 1 : 2;
    int64_t name_id = ip_store_intern_static(s, ip_cupti_api_name(domain, r->cbid));
    uint64_t start = ours(r->start);
    struct attr *a = attr_claim(r->correlationId);
    if (!a->has_issue && !a->has_api) attr_by_time(a, r->threadId, start);
    int second = a->has_api;
    if (!a->has_api || start < a->issue_ts) a->issue_ts = start, a->api_name = (uint32_t)name_id;
    a->has_api = 1;
    if (!ci.api_rows) return; /* records mode: the issuing calls' records only attribute */
    if (second) {
        /* A second call with the same correlation id (a driver call inside a runtime call):
         * summarised, but the table keeps one row per id (the runtime call, read first). */
        ci.api_same_corr++;
    } else {
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
        row[9] = a->nvtx ? (int64_t)a->nvtx : IP_NULL;
    }
    ip_cupti_sum_api(name_id, (int64_t)(r->end - r->start), r->returnValue != 0);
}

static void on_kernel(struct ip_store *s, const CUpti_ActivityKernel10 *k)
{
    if (bad_times(k->start, k->end)) return;
    struct attr *a = attr_of(k->correlationId, 0);
    int phase = a ? a->phase : 0;
    struct sig g = {{ip_store_intern_static(s, k->name), k->deviceId, k->streamId, k->gridX,
                     k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->registersPerThread,
                     k->staticSharedMemory, k->dynamicSharedMemory, k->graphId,
                     (int64_t)k->graphNodeId, k->contextId, phase}};
    int64_t dur = (int64_t)(k->end - k->start);
    int64_t *row = ip_batch_row(ci.kernels);
    row[0] = rel(s, k->start);
    row[1] = dur;
    row[2] = sig_id(s, &g);
    row[3] = k->correlationId;
    row[4] = a && a->iter ? (int64_t)a->iter : IP_NULL;
    row[5] = a && a->nvtx ? (int64_t)a->nvtx : IP_NULL;
    row[6] = ip_opname_string(s, a ? a->op : 0);
    ip_cupti_sum_kernel(g.v[0], phase, dur);
    ip_cupti_fold_kernel(row[0], dur, phase, row[6]);
    in_call(a, k->correlationId, dur);
    note_work(s, a, k->correlationId, k->graphId, k->deviceId, k->streamId, k->start, k->end);
}

static void on_memcpy(struct ip_store *s, const CUpti_ActivityMemcpy6 *m)
{
    if (bad_times(m->start, m->end)) return;
    struct attr *a = attr_of(m->correlationId, m->runtimeCorrelationId);
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
    row[9] = a ? a->corr : m->correlationId;
    row[10] = a ? a->phase : 0;
    row[11] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    row[12] = IP_NULL;
    row[13] = ip_opname_string(s, a ? a->op : 0);
    note_work(s, a, a ? a->corr : m->correlationId, m->graphId, m->deviceId, m->streamId, m->start,
              m->end);
}

static void on_memcpy_p2p(struct ip_store *s, const CUpti_ActivityMemcpyPtoP4 *m)
{
    if (bad_times(m->start, m->end)) return;
    struct attr *a = attr_of(m->correlationId, 0);
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
    row[10] = a ? a->phase : 0;
    row[11] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    row[12] = m->dstDeviceId;
    row[13] = ip_opname_string(s, a ? a->op : 0);
    note_work(s, a, m->correlationId, m->graphId, m->srcDeviceId, m->streamId, m->start, m->end);
}

static void on_memset(struct ip_store *s, const CUpti_ActivityMemset4 *m)
{
    if (bad_times(m->start, m->end)) return;
    struct attr *a = attr_of(m->correlationId, 0);
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
    row[9] = a ? a->phase : 0;
    row[10] = m->graphNodeId ? (int64_t)m->graphNodeId : IP_NULL;
    row[11] = ip_opname_string(s, a ? a->op : 0);
    note_work(s, a, m->correlationId, m->graphId, m->deviceId, m->streamId, m->start, m->end);
}

static void on_memory(struct ip_store *s, const CUpti_ActivityMemory4 *m)
{
    struct attr *a = attr_of(m->correlationId, 0);
    int64_t *row = ip_batch_row(ci.segments);
    row[0] = rel(s, m->timestamp);
    row[1] = m->memoryOperationType;
    row[2] = m->memoryKind;
    row[3] = (int64_t)m->address;
    row[4] = (int64_t)m->bytes;
    row[5] = m->deviceId;
    row[6] = or_null(m->streamId, CUPTI_INVALID_STREAM_ID); /* set only for async calls */
    row[7] = m->correlationId;
    row[8] = a ? a->phase : 0;
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
    if (bad_times(m->start, m->end)) return;
    struct attr *a = attr_of(m->correlationId, 0);
    int64_t *row = ip_batch_row(ci.sync);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = m->type;
    row[3] = or_null(m->contextId, CUPTI_INVALID_CONTEXT_ID);
    row[4] = or_null(m->streamId, CUPTI_INVALID_STREAM_ID);
    row[5] = m->cudaEventId ? (int64_t)m->cudaEventId : IP_NULL;
    row[6] = m->correlationId;
    row[7] = a ? a->phase : 0;
}

static void on_graph(struct ip_store *s, const CUpti_ActivityGraphTrace2 *m)
{
    /* Only seen when someone else enabled GRAPH_TRACE (we do not, cupti.c). */
    if (bad_times(m->start, m->end)) return;
    struct attr *a = attr_of(m->correlationId, 0);
    int64_t *row = ip_batch_row(ci.graphs);
    row[0] = rel(s, m->start);
    row[1] = (int64_t)(m->end - m->start);
    row[2] = m->deviceId;
    row[3] = m->streamId;
    row[4] = m->graphId;
    row[5] = m->correlationId;
    row[6] = a ? a->phase : 0;
    ip_cupti_sum_graph_traced(m->correlationId);
    note_latency(a, ours(m->start));
}

static void on_external(const CUpti_ActivityExternalCorrelation *m)
{
    int64_t *row = ip_batch_row(ci.ext);
    row[0] = m->correlationId;
    row[1] = m->externalKind;
    row[2] = (int64_t)m->externalId;
}

static void on_device(struct ip_store *s, const CUpti_ActivityDevice5 *d)
{
    struct ip_cupti_device v;
    memset(&v, 0, sizeof v);
    v.id = (int)d->id;
    snprintf(v.name, sizeof v.name, "%s", d->name ? d->name : "");
    v.memory = (int64_t)d->globalMemorySize;
    v.sms = d->numMultiprocessors;
    v.cc_major = d->computeCapabilityMajor;
    v.cc_minor = d->computeCapabilityMinor;
    v.clock_khz = d->coreClockRate;
    v.mem_clock_khz = v.bus_width = -1; /* not in the record; the driver fills them at stop */
    ip_cupti_uuid_text(&d->uuid, v.uuid, sizeof v.uuid);
    ip_cupti_write_device(s, &v);
}

/* Which pass reads a kind: 0 runtime calls (and records that only describe), 1 driver calls (so
 * that a runtime call and a driver call inside it with one correlation id keep the runtime one's
 * row), 2 the work they issued. */
static int pass_of(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return 0;
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return 1;
    default:
        return 2;
    }
}

/* The start of a record of GPU work or an API call, 0 for the others. */
static uint64_t record_start(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return ((const CUpti_ActivityKernel10 *)r)->start;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return ((const CUpti_ActivityMemcpy6 *)r)->start;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return ((const CUpti_ActivityMemcpyPtoP4 *)r)->start;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return ((const CUpti_ActivityMemset4 *)r)->start;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return ((const CUpti_ActivitySynchronization2 *)r)->start;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return ((const CUpti_ActivityAPI *)r)->start;
    default:
        return 0;
    }
}

static void on_record(struct ip_store *s, const CUpti_Activity *r)
{
    ci.records++;
    /* Outside every recording window (profiler/window.h): CUPTI's kernel activity stays on
     * (turning it on again mid-run has hung for seconds), its records are left out here. */
    uint64_t at = record_start(r);
    if (at && !ip_window_covers(at)) {
        ci.outside_windows++;
        return;
    }
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        on_api(s, (const CUpti_ActivityAPI *)r);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        on_external((const CUpti_ActivityExternalCorrelation *)r);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        on_device(s, (const CUpti_ActivityDevice5 *)r);
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
    ip_cupti_sum_reset();
    ip_cupti_park_reset();
    free(ci.sigs);
    free(ci.sig_table);
    /* Freed and allocated afresh rather than cleared: a fresh calloc of this size is untouched
     * zero pages, where clearing would make every page of it resident. */
    free(ci.attr);
    memset(&ci, 0, sizeof ci);
}

void ip_cupti_ingest_prepare(struct ip_store *s)
{
    ingest_reset();
    ci.attr = calloc(ATTR_SIZE, sizeof *ci.attr);
    ci.api_rows = ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_CUDA_API) ||
                  ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ATTRIBUTION) != 1;
    ci.kernels = ip_batch_open(s, "kernel_rows", 7);
    ci.memcpy = ip_batch_open(s, "memcpy", 14);
    ci.memset = ip_batch_open(s, "memset", 12);
    ci.segments = ip_batch_open(s, "memory_segments", 12);
    ci.pools = ip_batch_open(s, "memory_pools", 9);
    ci.sync = ip_batch_open(s, "sync", 8);
    ci.api = ip_batch_open(s, "cuda_api", 10);
    ci.ext = ip_batch_open(s, "external_corr", 3);
    ci.graphs = ip_batch_open(s, "graph_launches", 7);
    /* Without a table to write to, buffers are still read and given back (so CUPTI keeps
     * getting buffers), and their records are counted as not stored. */
    ci.ok = ci.attr && ci.kernels && ci.memcpy && ci.memset && ci.segments && ci.pools && ci.sync &&
            ci.api && ci.ext && ci.graphs;
}

void ip_cupti_ingest_launch(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    if ((ev->type & 0xff) != IP_EV_CUPTI_LAUNCH || !ci.attr) return;
    const struct ip_ev_launch *e = (const struct ip_ev_launch *)ev;
    struct attr *a = attr_claim(e->h.aux);
    a->has_issue = 1;
    a->phase = e->phase;
    a->nvtx = e->nvtx;
    a->tid = tid;
    a->iter = e->iter;
    a->op = e->op;
    a->cudnn = e->cudnn;
    link_cudnn(e->h.aux, e->cudnn);
    if (!a->has_api && e->ts && e->domain) {
        a->issue_ts = e->ts;
        a->api_name = (uint32_t)ip_store_intern_static(s, ip_cupti_api_name(e->domain, e->cbid));
    }
}

#define MAX_BUFFERS_PER_CYCLE 4096

/* Records of the later passes, in buffer order: read once, handled after the runtime calls. */
struct later {
    CUpti_Activity **v;
    size_t n, cap;
};

static void later_add(struct later *l, CUpti_Activity *r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        CUpti_Activity **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            ci.not_stored++;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = r;
}

/* Read one buffer once: runtime calls now (pass 0), driver calls and work into the lists of
 * passes 1 and 2. Returns 0, or -1 when CUPTI stopped with an error before the end (the rest of
 * that buffer cannot be read). */
static int read_buffer(struct ip_store *s, uint8_t *buf, size_t valid, struct later *driver,
                       struct later *work)
{
    CUpti_Activity *r = NULL;
    CUptiResult rc;
    while ((rc = ip_cupti.ActivityGetNextRecord(buf, valid, &r)) == CUPTI_SUCCESS) {
        if (!ci.ok) {
            ci.not_stored++;
            continue;
        }
        int pass = pass_of(r->kind);
        if (pass == 0)
            on_record(s, r);
        else
            later_add(pass == 1 ? driver : work, r);
    }
    return rc == CUPTI_ERROR_MAX_LIMIT_REACHED ? 0 : -1;
}

static void write_counters(struct ip_store *s)
{
    uint64_t dropped, refused, completed, parked, expired;
    ip_cupti_pool_counters(&dropped, &refused, &completed);
    ip_cupti_park_counters(&parked, &expired);
    ip_store_meta_int(s, "cupti_records", (int64_t)ci.records);
    if (ip_window_used())
        ip_store_meta_int(s, "cupti_records_outside_windows", (int64_t)ci.outside_windows);
    ip_store_meta_int(s, "cupti_dropped_records", (int64_t)dropped);
    ip_store_meta_int(s, "cupti_buffers_refused", (int64_t)refused);
    ip_store_meta_int(s, "cupti_buffers_completed", (int64_t)completed);
    ip_store_meta_int(s, "cupti_buffer_errors", (int64_t)ci.buffer_errors);
    ip_store_meta_int(s, "cupti_unattributed_records", (int64_t)ci.unattributed);
    ip_store_meta_int(s, "cupti_invalid_records", (int64_t)ci.invalid);
    ip_store_meta_int(s, "cupti_unknown_records", (int64_t)ci.unknown_kinds);
    ip_store_meta_int(s, "cupti_api_same_corr", (int64_t)ci.api_same_corr);
    ip_store_meta_int(s, "cupti_records_not_stored", (int64_t)ci.not_stored);
    int by_records = atomic_load_explicit(&ip_cupti_by_records, memory_order_relaxed);
    ip_store_meta_text(s, "cupti_attribution", by_records ? "records" : "callbacks");
    if (by_records) {
        ip_store_meta_int(s, "cupti_records_waited", (int64_t)parked);
        ip_store_meta_int(s, "cupti_records_wait_expired", (int64_t)expired);
        ip_store_meta_int(s, "cupti_history_gone", (int64_t)ci.history_gone);
    }
}

/* ---- records mode: work that arrives before its call ------------------------------------- */

/* The work record's call is known (or it names none). */
static int call_known(const CUpti_Activity *r)
{
    uint32_t corr = 0, runtime_corr = 0;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        corr = ((const CUpti_ActivityKernel10 *)r)->correlationId;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        corr = ((const CUpti_ActivityMemcpy6 *)r)->correlationId;
        runtime_corr = ((const CUpti_ActivityMemcpy6 *)r)->runtimeCorrelationId;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        corr = ((const CUpti_ActivityMemcpyPtoP4 *)r)->correlationId;
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        corr = ((const CUpti_ActivityMemset4 *)r)->correlationId;
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        corr = ((const CUpti_ActivityMemory4 *)r)->correlationId;
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        corr = ((const CUpti_ActivitySynchronization2 *)r)->correlationId;
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        corr = ((const CUpti_ActivityGraphTrace2 *)r)->correlationId;
        break;
    default:
        return 1;
    }
    return !corr || attr_find(corr, runtime_corr);
}

void ip_cupti_ingest_flush(struct ip_store *s, int final)
{
    if (!ip_cupti.ActivityGetNextRecord) return;
    static uint8_t *bufs[MAX_BUFFERS_PER_CYCLE];
    static size_t valid[MAX_BUFFERS_PER_CYCLE];
    uint32_t n = 0;
    while (n < MAX_BUFFERS_PER_CYCLE && ip_cupti_pool_take(&bufs[n], &valid[n])) n++;
    static struct later driver, work; /* kept between cycles: no allocation once warm */
    driver.n = work.n = 0;
    for (uint32_t i = 0; i < n; i++)
        if (read_buffer(s, bufs[i], valid[i], &driver, &work) != 0) ci.buffer_errors++;
    for (size_t k = 0; k < driver.n; k++) on_record(s, driver.v[k]);
    int by_records = atomic_load_explicit(&ip_cupti_by_records, memory_order_relaxed);
    if (by_records) ip_cupti_park_release(s, 0, call_known, on_record);
    for (size_t k = 0; k < work.n; k++) {
        if (by_records)
            ip_cupti_park_work(s, work.v[k], call_known, on_record);
        else
            on_record(s, work.v[k]);
    }
    if (by_records && final) ip_cupti_park_release(s, 1, call_known, on_record);
    for (uint32_t i = 0; i < n; i++) ip_cupti_pool_release(bufs[i]);
    if (n || final) write_counters(s);
}

void ip_cupti_ingest_finish(struct ip_store *s)
{
    if (!ci.attr) return;
    ip_cupti_ingest_flush(s, 1);
    if (ci.ok) ip_cupti_sum_write(s);
}
