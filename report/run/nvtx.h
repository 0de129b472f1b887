/*
 * nvtx.h: the run model's NVTX ranges (nvtx.c), read once on first use and kept with the run
 * model (run.h's lazy part): per range name and style, the CPU time of its ranges (nsys
 * nvtx_sum) and the GPU time of the work launched inside them, nested ranges included (nsys
 * nvtx_gpu_proj_sum). A kernel belongs to the innermost push/pop range of the thread that
 * launched it; its GPU time counts once for that range and once for each enclosing range of
 * another name.
 */
#ifndef INFPROF_RUN_NVTX_H
#define INFPROF_RUN_NVTX_H

#include "run.h"

#include <stdint.h>

/* The ended ranges of one name and style. */
struct nvtx_group {
    char *name;                          /* "domain/text" or "text" */
    int kind;                            /* 1 push/pop, 2 start/end */
    int64_t count, total, min, max, med; /* their durations (ns); med exact */
    double stddev;
    int64_t kernels, gpu_ns; /* launched inside; 0 when the run has no kernel rows */
};

struct nvtx_run {
    struct nvtx_group *v; /* by total CPU time, largest first, then by name */
    int n;
    int has_kernels; /* kernel_rows holds a row: kernels and gpu_ns are figures */
    /* A run that lost events (p->lost[RUN_LOST_EVENTS]) may have lost range pushes, pops and
     * launch records: with ranges, the kernels and of them those with a launching range, for the
     * note that GPU figures may undercount. -1 not counted (no loss, or no ranges). */
    int64_t kernels_all, kernels_ranged;
};

/* The run's NVTX ranges, loaded once on first use and kept with the run model (p->lazy). */
const struct nvtx_run *run_nvtx(struct sqlite3 *db, const struct run_phases *p);

#endif
