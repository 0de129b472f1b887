/*
 * tails.h: the slow iterations of each series and what they did that its typical ones did not
 * (tails.c; docs/report.md, "Slow iterations"). A series has a tail when its p99 is above 1.3x
 * its p50 with one slow iteration or more, or two or more are slow: a steady iteration is slow
 * above 1.25x the median of the 11 around it and 4 robust deviations (1.4826 MAD) over it (a
 * machine that slows for a while shifts the level: no tail), or is of a kind slow as a group
 * (tails_kind.h: a larger input every so many requests). Its typical iterations are the (at
 * most TAIL_TYPICAL) steady ones nearest their neighbours' median. Each cause is a time the record
 * holds for every iteration (garbage collection, host time outside the model's forward or outside
 * any operator, operators or kernels the typical iterations did not run, the same ones for longer,
 * CUDA synchronisations, copies, cudaMalloc and cudaFree): its extra time is its mean over the
 * slow iterations less its mean over the typical ones, and it is named only where that explains
 * TAIL_MIN_SHARE of the slow iterations' extra latency. What no cause explains is said; what
 * differs without a time (allocations) is said as a guess; another series running beside the slow
 * iterations far more than beside the typical ones, as what they ran with. Read once, on first use.
 */
#ifndef INFPROF_RUN_TAILS_H
#define INFPROF_RUN_TAILS_H

#include "run.h"

#include <stdint.h>

#define TAIL_MIN_STEADY 10   /* steady iterations a series needs to have a tail */
#define TAIL_TYPICAL    64   /* typical iterations compared with */
#define TAIL_SLOW_MAX   256  /* slow iterations looked into (the slowest) */
#define TAIL_MIN_SHARE  0.10 /* of the extra latency a cause must explain to be named */
#define TAIL_FINDING    5.0  /* % of the series' time the tail costs for a Summary finding */

enum tail_cause {
    TAIL_GC,               /* Python's garbage collector (gc_pauses) */
    TAIL_OUTSIDE_FORWARD,  /* host time in the iteration outside the model's forward */
    TAIL_NO_OPERATOR,      /* host time with no operator running (operators recorded) */
    TAIL_NEW_OPERATORS,    /* operators the typical iterations did not run */
    TAIL_LONGER_OPERATORS, /* the same operators, longer */
    TAIL_OFF_CPU,          /* the thread off the CPU: preempted, or waiting (iteration_cpu) */
    TAIL_PAGE_FAULTS,      /* page faults' system time (iteration_cpu) */
    TAIL_SYNC,             /* CUDA synchronisations (API time) */
    TAIL_COPIES,           /* cudaMemcpy (API time) */
    TAIL_CUDA_MALLOC,      /* cudaMalloc / cudaFree (API time): the caching allocator grew */
    TAIL_CUDNN_SEARCH,     /* cuDNN algorithm searches and plan builds (autotuning a new shape) */
    TAIL_GPU_IDLE,         /* the GPU idle in the iteration, waiting for the host */
    TAIL_NEW_KERNELS,      /* kernels the typical iterations did not run */
    TAIL_LONGER_KERNELS,   /* the same kernels, longer */
    TAIL_GPU_CLOCK,        /* the same kernels, longer at a lower SM clock (energy readings) */
    TAIL_CAUSES
};

struct tail_cause_figure {
    int cause;         /* enum tail_cause */
    const char *key;   /* "gc", "large_allocation", "new_input_shape", ... */
    const char *title; /* in words: "garbage collection", "a large allocation", ... */
    double extra_ns;   /* per slow iteration, over the typical ones */
    double share;      /* of the extra latency, 0..1 (causes may overlap: host and GPU) */
    char top[256];     /* the operators or kernels that differ most ("" none) */
    char detail[768];  /* what shows it, with figures (an off-CPU one ran past 256 bytes) */
};

struct series_tail {
    int series; /* index in run_series */
    int64_t steady, nslow;
    int64_t p50, p99;
    double slow_mean;    /* the slow iterations' mean latency, ns */
    double extra;        /* their mean extra over their neighbours' median, ns */
    double typical_mean; /* slow_mean - extra */
    double window_extra; /* the slow windows' mean latency less the typical ones' (causes') */
    double cost_pct;     /* the slow iterations' time over p50, of the steady time */
    int64_t *slow_index, *slow_start, *slow_lat; /* nslow each: index in the series (0 first,
                                                    warm-up counted), start, latency */
    char pattern[160]; /* "every 10th", "the first 3", "at no regular interval" */
    int ncauses;
    struct tail_cause_figure c[TAIL_CAUSES];
    double unexplained; /* share of extra no named cause explains, 0..1 */
    int overlap;        /* the named causes add up past the extra: host and GPU overlap */
    char guess[320];    /* what differs without a time, said as a guess ("" none) */
    /* The gaps between consecutive slow iterations that are a multiple of infprof's writer
     * cycle (writer_period_ns, within a tenth of it), of writer_gaps, where far more are than
     * at other periods: the profile's own work took the CPU (0 where not). */
    int64_t writer_hits, writer_gaps;
    double writer_period_ns;
    /* Another series' iterations ran on another thread through beside_slow of the slow
     * iterations' host time (0..1) and beside_typical of the typical ones', where the first is
     * TAIL_BESIDE or more, 1.5x the second and 20 points over it: two models served side by side
     * take turns on the CPUs (a server's text model's slow forwards 60% against 13%, a fresh-eyes
     * check). beside_series: the one beside them longest most often, -1 none. */
    int beside_series;
    double beside_slow, beside_typical;
};

#define TAIL_BESIDE 0.3

struct run_tails {
    int n, cap;
    struct series_tail *v; /* the series with a tail (at most REPORT_MAX_SERIES) */
    int operators;         /* operators were recorded: their causes could be told */
};

const struct run_tails *run_tails(struct sqlite3 *db, const struct run_phases *p);

#endif
