/*
 * cuda_run.h: the run model's CUDA work besides kernels, read from the database once on first use
 * (run.h's lazy part): copies and memsets by kind, memory segments, the CUDA API calls, what the
 * CUPTI collection counted, and the copy figures the advice weighs. The CUDA sections
 * (sec_cuda.c) turn it into tables and the copy advice (advice_copies.c) reads it; neither
 * touches the database.
 *
 * Medians are exact: the rows are read in full (copies and API calls are far fewer than kernels;
 * the API summary comes from api_summary when the run finished).
 */
#ifndef INFPROF_RUN_CUDA_H
#define INFPROF_RUN_CUDA_H

#include "run.h"

#include <stdint.h>

/* A statistic of one operation or function, computed once from its rows. */
struct cuda_stat {
    int64_t total, count, med, min, max;
    double stddev;
};

/* Copies by CUpti_ActivityMemcpyKind (0 unknown, 1 HtoD ... 10 PtoP; a kind out of that range
 * counts as unknown), memsets as one operation of their own. */
#define CUDA_COPY_KINDS 11
#define CUDA_MEMSET_OP  100

/* One operation, copy kind and host memory kind (CUpti_ActivityMemoryKind of the host side:
 * pinned or pageable decides how a copy goes; -1 no host side, memsets and device copies). */
struct cuda_memop {
    int op, host_kind;
    struct cuda_stat dur, bytes;
};

/* Device memory segments (cudaMalloc, pools, cuMemCreate) by device and memory kind; peak: the
 * running sum of live bytes in time order. */
#define CUDA_MAX_SEGMENTS 64
struct cuda_segment {
    int device, kind;
    int64_t allocs, releases, async_allocs, allocated, released, live, peak;
};

/* One CUDA API function: host time (has_host 0: API records off, calls only) and for launches
 * the launch latency (a call's start to the start of the GPU work it issued). */
struct cuda_api_fn {
    char *name; /* "?" when the strings table lacks it */
    int64_t calls, total, min, max, med, errors, launches, lat_total, lat_min, lat_max, lat_med;
    double stddev;
    int has_host, has_latency;
    /* For the copy advice: the calls it made, or at the default settings (no API records, count
     * 0) the calls the issue callback saw issue work (launches); timed: its host time is known
     * (total then counts it). */
    int64_t issued;
    int timed;
};

/* The CUPTI collection's own counters (run metadata cupti_*, docs/cupti.md). */
enum {
    CUDA_CTR_RECORDS,
    CUDA_CTR_BUFFERS_COMPLETED,
    CUDA_CTR_BUFFERS_REFUSED,
    CUDA_CTR_DROPPED_RECORDS,
    CUDA_CTR_BUFFER_ERRORS,
    CUDA_CTR_INVALID_RECORDS,
    CUDA_CTR_UNATTRIBUTED_RECORDS,
    CUDA_CTR_UNKNOWN_RECORDS,
    CUDA_CTR_API_SAME_CORR,
    CUDA_CTR_RECORDS_NOT_STORED,
    CUDA_CTR_RECORDS_WAITED, /* INFPROF_ATTRIBUTION=records only */
    CUDA_CTR_RECORDS_WAIT_EXPIRED,
    CUDA_CTR_HISTORY_GONE,
    CUDA_COUNTERS
};

/* Host-device copies through pageable host memory (the host side of HtoD, HtoA, HtoH is the
 * source, of DtoH, AtoH the destination). With iterations recorded (windows 1), only copies that
 * start inside one count; the others are `outside`. */
struct cuda_pageable {
    int64_t copies, bytes, ns, to_device, from_device, outside;
    int windows;
};

struct cuda_run {
    struct cuda_memop *memops; /* by total time, most first */
    int nmemops;
    struct cuda_segment seg[CUDA_MAX_SEGMENTS]; /* in order of first appearance */
    int nseg;
    struct cuda_api_fn *api; /* by host time, then launches, most first, then name */
    int napi;
    const struct cuda_api_fn **api_by_issued; /* the same by issued, most first, then name */
    int has_counter[CUDA_COUNTERS];
    int64_t counter[CUDA_COUNTERS];
    char *attribution; /* meta cupti_attribution, NULL none */
    struct cuda_pageable pageable;
    /* The GPU's busy time: the phases' union of GPU work (phase_gpu), else, without it, kernel
     * and copy time summed. */
    int64_t gpu_busy;
};

/* The run's CUDA figures, loaded once on first use and kept with the run model (p->lazy). */
const struct cuda_run *run_cuda(struct sqlite3 *db, const struct run_phases *p);
/* Frees what run_cuda loaded (run_lazy_drop). */
void cuda_run_free(struct cuda_run *r);

#endif
