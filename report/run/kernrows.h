/*
 * kernrows.h: the kernels (kernel_rows, with each launch signature's phase and name) read once
 * into the run model, for every figure that reads them one by one: each phase's steady GPU time
 * (steady.c), the GPU busy between iterations (between.c), each series' kernels (series.c), the
 * GPU busy timeline and the cuDNN calls' kernels. Each scanned the table again before (eleven
 * scans, 1.4 s of the H200 fixture's 371 k kernels).
 */
#ifndef INFPROF_KERNROWS_H
#define INFPROF_KERNROWS_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

#define KROW_NO_ITER INT64_MIN /* iter NULL */

struct kern_row {
    int64_t start, dur, iter;
    uint32_t corr; /* 0: NULL */
    uint32_t op;   /* the operator's string id, 0: NULL */
    int32_t sig; /* index into kern_rows.sigs; -1: no launch signature (not in the kernels view) */
};

struct kern_rows {
    struct kern_row *v; /* in the table's order */
    size_t n;
    struct ksig {
        int64_t id, name_id; /* id first: rstats_cmp_i64 orders by it */
        int phase;
    } * sigs; /* by id */
    size_t nsigs;
};

struct run_model;
extern const struct run_model run_model_kern_rows; /* its lazy part (report/run/lazy.c) */
/* The run's kernels, read on first use (empty where the table is missing). */
const struct kern_rows *kern_rows_get(struct sqlite3 *db, const struct run_phases *p);
/* The phase of a kernel of the kernels view (r->sig >= 0). */
static inline int krow_phase(const struct kern_rows *k, const struct kern_row *r)
{
    return k->sigs[r->sig].phase;
}
void kern_rows_free(struct kern_rows *k);

#endif
