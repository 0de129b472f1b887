/*
 * memrows.h: the allocator's reports (tensor_memory) read once into the run model, for every
 * figure that reads them: each phase's peaks and allocations (phases.c), each series' peak
 * (series.c), the warm-up's reserved growth (iterations.c), the memory timeline, the slow
 * iterations' allocations (tails.c) and the operator at a peak (operators.c). Each read the
 * table again before (seven scans, 1.8 s of the H200 fixture's 635 k reports).
 */
#ifndef INFPROF_MEMROWS_H
#define INFPROF_MEMROWS_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

struct mem_row {
    int64_t ts, allocated, reserved, bytes; /* reserved: -1 where NULL (a CPU allocator's) */
    int64_t op;                             /* its operator's string id, 0 none */
    uint32_t tid;
    int32_t phase;
    int16_t type, index; /* device */
    uint32_t seq;        /* its place in the table: ties in ts keep that order */
};

/* The allocations of reports folded by the writer (tensor_memory_folds: collectors/torch.sql),
 * whose levels are rows of v like any report's (with bytes 0: not allocations). */
struct mem_fold {
    int64_t start, end, allocs, alloc_bytes, largest[3];
    uint32_t tid;
    int32_t phase;
    int16_t type, index; /* device */
};

struct mem_rows {
    struct mem_row *v; /* in time order (ts, then the table's order: a stable sort) */
    size_t n;
    struct mem_fold *folds; /* in the table's order */
    size_t nfolds;
    int gpu; /* some report is of a device's memory (device_type != 0) */
    int64_t out_of_bounds; /* CUDA reports above their GPU's memory (devices): left out */
};

/* The run's reports, read on first use (an empty set where the table is missing). */
const struct mem_rows *mem_rows_get(struct sqlite3 *db, const struct run_phases *p);
/* The allocated total of device kind `type` (c10::DeviceType) after its last report at or before
 * t (ns since t0); -1 where there is none. */
int64_t mem_rows_level_at(const struct mem_rows *m, int type, int64_t t);
void mem_rows_free(struct mem_rows *m);

#endif
