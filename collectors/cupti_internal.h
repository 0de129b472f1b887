/*
 * cupti_internal.h: what the CUPTI collector's files share: the table of CUPTI functions (loaded
 * with dlopen, or supplied by the replay path), the buffer pool, the launch event, and the
 * writer-side entry points.
 *
 *   cupti.c         app side: injection, subscription, callbacks, buffer pool, stop
 *   cupti_ingest.c  writer side: records -> rows, attribution, summaries
 *   cupti_replay.c  synthetic records through the same buffer callbacks (tests, benchmarks)
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
};

extern struct ip_cupti_api ip_cupti;
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
/* Counters: records CUPTI reported dropped, buffer requests we could not serve. */
void ip_cupti_pool_counters(uint64_t *dropped_records, uint64_t *refused_buffers,
                            uint64_t *completed_buffers);

/* A kernel or graph launch seen by the launch callback, on the launching thread. */
enum { IP_EV_CUPTI_LAUNCH = 1 };
struct ip_ev_launch {
    struct ip_ev h; /* aux: correlation id */
    uint64_t nvtx;  /* innermost NVTX push/pop range of the thread, 0 none */
    uint8_t phase;
    uint8_t pad[7];
};

/* CUPTI is subscribed and recording (so external correlation ids can be pushed). */
int ip_cupti_active(void);

/* What the launch callback does on the launching thread: poll the phase, append the launch
 * event (phase, innermost NVTX range), move the phase's NVTX range if needed. */
void ip_cupti_note_launch(uint32_t corr);

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

/* API names by callback id (generated from CUPTI's cbid headers). */
const char *ip_cupti_api_name(int domain, uint32_t cbid);

#endif
