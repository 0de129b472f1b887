/*
 * kernels.h: the run model's kernel figures by name (kernels.c). The Kernels section's rows, in
 * Nsight Systems' cuda_gpu_kern_sum columns, for the options that pick them (all phases, per
 * phase, one phase, the work launched inside NVTX ranges of one name): loaded on demand, freed
 * by the caller. And each phase's kernel names with their launches and times, which the advice
 * rules read for what names say (backward passes, layout conversions, short kernels): read once
 * on first use and kept with the run model (run.h's lazy part).
 */
#ifndef INFPROF_RUN_KERNELS_H
#define INFPROF_RUN_KERNELS_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

/* One kernel name's launches (ns). */
struct kernels_row {
    char *name; /* in full, an embedded NUL as "\0" (db_text_whole) */
    int phase;  /* phase id; -1: every phase together */
    int64_t count, total, min, max, med;
    double stddev;
};

struct kernels_list {
    struct kernels_row *v;
    int n, cap;
};

/* The rows: one per name (by_phase 0, phase -1), or per phase and name (by_phase, or phase: the
 * id of the one phase kept); nvtx: a glob, only kernels launched inside a range of that name or
 * one nested in it (NULL: all). Sorted by phase, then total time (largest first), then name. The
 * end-of-run summary answers without a glob; the rows (exact medians) with one, or when the run
 * has no summary. */
void kernels_load(struct sqlite3 *db, int by_phase, int phase, const char *nvtx,
                  struct kernels_list *out);
void kernels_list_free(struct kernels_list *l);

/* One kernel name's launches in one phase: how many, their total, shortest and longest (ns). */
struct kernels_name {
    char *name; /* up to an embedded NUL */
    int64_t count, total, min, max;
};

struct kernels_names {
    struct kernels_name *v;
    size_t n;
};

struct kernels_run {
    struct kernels_names phase[REPORT_MAX_PHASES]; /* index as in run_phases.v */
};

/* Each phase's kernel names (the summary's, else the rows'), loaded once on first use and kept
 * with the run model (p->lazy). */
const struct kernels_run *run_kernels(struct sqlite3 *db, const struct run_phases *p);

#endif
