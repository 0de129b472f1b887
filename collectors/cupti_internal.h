/*
 * cupti_internal.h: what the CUPTI collector's files share: the table of CUPTI functions (loaded
 * with dlopen, or supplied by the replay path), the buffer pool, the launch event, and the
 * writer-side entry points.
 *
 *   cupti.c          app side: injection, subscription, issue callbacks, stop
 *   cupti_pool.c     app side: the pre-allocated buffer pool behind CUPTI's buffer callbacks
 *   cupti_ingest.c   writer side: records -> rows, attribution by correlation id
 *   cupti_park.c     writer side: work records waiting for their API record (records mode)
 *   cupti_summary.c  writer side: end-of-run summaries, graph launches, device facts
 *   cupti_replay.c   synthetic records through the same buffer callbacks (tests, benchmarks)
 *   cupti_holder.c   naming the other tool when CUPTI is already held
 */
#ifndef INFPROF_CUPTI_INTERNAL_H
#define INFPROF_CUPTI_INTERNAL_H

#include "../profiler/events.h"

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

struct ip_store;

struct ip_cupti_api {
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                CUpti_SubscriberParams *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityFlushPeriod)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
};

extern struct ip_cupti_api ip_cupti;
/* 1 when kernels are attributed from API records of the issuing calls (INFPROF_ATTRIBUTION=
 * records, and this CUPTI can enable them call by call), 0 from the launch callbacks. Set before
 * the first buffer is requested. */
extern _Atomic int ip_cupti_by_records;
/* CUPTI timestamp minus our clock: 0 when CUPTI uses our timestamp callback. */
extern int64_t ip_cupti_clock_offset;

/* The buffer callbacks CUPTI calls (and the replay path calls the same way). */
void CUPTIAPI ip_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI ip_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid);
/* Allocate the pool once (count buffers of size bytes). 0 on success. */
int ip_cupti_pool_init(size_t size, uint32_t count);
/* Writer side: fix how many completed buffers this cycle processes; take them in order. */
uint32_t ip_cupti_pool_snapshot(void);
int ip_cupti_pool_take(uint8_t **buffer, size_t *valid);
void ip_cupti_pool_release(uint8_t *buffer);
/* Counters: records CUPTI reported dropped, buffer requests we could not serve, buffers
 * completed. */
void ip_cupti_pool_counters(uint64_t *dropped_records, uint64_t *refused_buffers,
                            uint64_t *completed_buffers);
/* Records CUPTI reports dropped outside a buffer completion (read at stop). */
void ip_cupti_pool_add_dropped(uint64_t n);
/* Wait (bounded) until every buffer completed so far was ingested and released (tests). */
int ip_cupti_pool_wait_idle(uint64_t timeout_ms);
void ip_cupti_pool_atfork_child(void);

/* An API call that issues GPU work (launch, copy, memset, allocation, synchronisation), seen by
 * the callback on the issuing thread at the call's entry. */
enum { IP_EV_CUPTI_LAUNCH = 1 };
struct ip_ev_launch {
    struct ip_ev h; /* aux: correlation id */
    uint64_t nvtx;  /* innermost NVTX push/pop range of the thread, 0 none */
    uint64_t ts;    /* call entry, our clock; 0 unknown */
    uint16_t cbid;  /* callback id of the call in `domain` (all are below 1024) */
    uint8_t domain; /* 1 runtime, 2 driver, 0 unknown */
    uint8_t phase;
    uint32_t iter;  /* the thread's iteration (iteration.h), 0 none */
    uint64_t cudnn; /* the cuDNN call it was made in (cudnn_calls.ext_id), 0 none */
    uint32_t op;    /* the thread's innermost PyTorch operator (opname.h), 0 none */
    uint32_t pad;
};

/* CUPTI is subscribed and recording (so external correlation ids can be pushed). */
int ip_cupti_active(void);

/* What the issue callback does on the calling thread: append the issue event (phase, innermost
 * NVTX range, entry time, call). For kernel and graph launches (`launch`) it first polls the
 * phase and then moves the phase's NVTX range; never for memory calls, which may run under the
 * caching allocator's lock. */
void ip_cupti_note_issue(uint32_t corr, uint8_t domain, uint32_t cbid, uint64_t ts, int launch);

/* Device facts gathered at stop (driver queries), written by the writer at finish. */
#define IP_CUPTI_MAX_DEVICES 16
struct ip_cupti_device {
    int id;
    char name[256];
    char uuid[48];
    int64_t memory, sms, cc_major, cc_minor, clock_khz, mem_clock_khz, bus_width;
};
struct ip_cupti_facts {
    int driver_version, runtime_version, ndevices;
    uint32_t cupti_version;
    struct ip_cupti_device dev[IP_CUPTI_MAX_DEVICES];
};
extern struct ip_cupti_facts ip_cupti_facts;

/* Writer side (cupti_ingest.c). */
void ip_cupti_ingest_prepare(struct ip_store *s);
void ip_cupti_ingest_launch(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_cupti_ingest_flush(struct ip_store *s, int final);
void ip_cupti_ingest_finish(struct ip_store *s);

/* Writer side: work records waiting for their API record (cupti_park.c), in arrival order.
 * known(r): r's call is known (or it names none); read(s, r): the record becomes its row. */
typedef int (*ip_cupti_known_fn)(const CUpti_Activity *r);
typedef void (*ip_cupti_read_fn)(struct ip_store *s, const CUpti_Activity *r);
void ip_cupti_park_reset(void);
/* A work record in records mode: read now when its call is known and none waits, else queued
 * (a copy) behind the ones waiting; a full queue reads its oldest first. */
void ip_cupti_park_work(struct ip_store *s, const CUpti_Activity *r, ip_cupti_known_fn known,
                        ip_cupti_read_fn read);
/* Read, in order, the waiting records whose call is now known and those that waited too long
 * (counted as expired); with all, every one. */
void ip_cupti_park_release(struct ip_store *s, int all, ip_cupti_known_fn known,
                           ip_cupti_read_fn read);
void ip_cupti_park_counters(uint64_t *parked, uint64_t *expired);

/* Writer side aggregates (cupti_summary.c), fed by cupti_ingest.c. Times in our clock. */
void ip_cupti_sum_reset(void);
/* GPU busy time per phase (cupti_busy.c): intervals of GPU work, written to phase_gpu. */
void ip_cupti_busy_reset(void);
void ip_cupti_busy_add(int phase, uint64_t start, uint64_t end);
void ip_cupti_busy_write(struct ip_store *s);
void ip_cupti_sum_kernel(int64_t name_id, int phase, int64_t dur);
/* The kernels' time over the run and per (phase, operator), folded for the report
 * (cupti_fold.c): start in ns since t0, op a strings id (IP_NULL none). Written at finish. */
void ip_cupti_fold_reset(void);
void ip_cupti_fold_kernel(int64_t start, int64_t dur, int phase, int64_t op);
void ip_cupti_fold_write(struct ip_store *s);
void ip_cupti_sum_api(int64_t name_id, int64_t dur, int error);
void ip_cupti_sum_latency(int64_t api_name_id, int64_t latency);
/* Work of a graph launch (graph_id != 0): its span becomes one graph_launches row at finish;
 * issue_ts/api_name_id (0: unknown) give the launch latency of the graph launch. */
void ip_cupti_sum_graph_work(struct ip_store *s, uint32_t corr, uint32_t graph_id, uint32_t device,
                             uint32_t stream, int phase, uint64_t start, uint64_t end,
                             uint64_t issue_ts, int64_t api_name_id);
/* A GRAPH_TRACE record was stored for this launch: do not derive another row for it. */
void ip_cupti_sum_graph_traced(uint32_t corr);
void ip_cupti_sum_write(struct ip_store *s);
/* Devices: a row of table devices (INSERT OR REPLACE: the driver's facts at stop complete what a
 * DEVICE record said); "GPU-xxxxxxxx-..." as nvidia-smi prints a UUID. */
void ip_cupti_write_device(struct ip_store *s, const struct ip_cupti_device *v);
void ip_cupti_uuid_text(const CUuuid *u, char *out, size_t n);

/* Who holds CUPTI when cuptiSubscribe refuses us (cupti_holder.c): the name CUPTI reported,
 * else the tool whose library or injection variable is found in the process, else a plain
 * statement that it could not be named. */
void ip_cupti_name_holder(const char *reported, char *out, size_t n);
/* The tool a library path belongs to (compute-sanitizer, Nsight Systems...), or NULL. */
const char *ip_cupti_holder_tool(const char *path);

/* API names by callback id (generated from CUPTI's cbid headers). */
const char *ip_cupti_api_name(int domain, uint32_t cbid);

#endif
