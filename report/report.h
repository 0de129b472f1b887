/*
 * report.h: the report's view of one run, computed from its database (phases.c, sections.c)
 * and turned into tables (cli.h) by `infprof report`.
 */
#ifndef INFPROF_REPORT_H
#define INFPROF_REPORT_H

#include "classify.h"
#include "cli.h"

#include <stdint.h>

#define REPORT_MAX_PHASES  16
#define REPORT_MAX_DEVICES 17

struct run_devices {
    int n;
    int type[REPORT_MAX_DEVICES], index[REPORT_MAX_DEVICES]; /* c10::DeviceType, index */
};

struct phase_info {
    int id;
    char grad_mode[16], autocast[8], label[64];
    int64_t start, end, wall; /* ns since t0; wall: union of the phase's spans */
    int has_kernels, has_memory, has_reserved, has_iterations;
    int64_t kernels, gpu_time;
    int has_busy;
    int64_t gpu_busy;                  /* union of the phase's GPU work intervals (phase_gpu) */
    int64_t peak_alloc, peak_reserved; /* all devices together */
    int64_t dev_peak_alloc[REPORT_MAX_DEVICES], dev_peak_reserved[REPORT_MAX_DEVICES];
    int64_t dev_reserved_at_peak[REPORT_MAX_DEVICES]; /* reserved when allocated peaked */
    int64_t dev_allocs[REPORT_MAX_DEVICES], dev_alloc_bytes[REPORT_MAX_DEVICES]; /* by the phase */
    int64_t dev_largest[REPORT_MAX_DEVICES][3]; /* its three largest allocations */
    /* Iterations (iterations.c): all of them; the warm-up ones apart; the figures of the
     * steady state, latency to GPU completion (gpu_latency 0: host time only, none known). */
    int64_t iterations, warmup, warmup_ns;
    char warmup_cause[200];
    int gpu_latency;
    int64_t lat_p50, lat_p95, lat_p99, lat_mean, host_p50;
    int64_t lat_all_p50; /* every iteration, warm-up included (what a plain timer's p50 says) */
    int64_t *steady;     /* the steady iterations' latencies, in time order */
    int64_t *steady_start, *steady_batch; /* their start (ns since t0) and batch (-1 unknown) */
    size_t nsteady;
    int64_t items; /* items of the steady iterations when every batch is known, else 0 */
    int64_t busy;  /* union of the iterations' host intervals */
    int transient; /* no iteration, no kernel, under 1 ms: folded away from the tables */
    int64_t mix[OP_COUNT][PREC_COUNT]; /* kernel ns by operation class and compute type */
};

struct run_phases {
    int n;
    struct phase_info v[REPORT_MAX_PHASES];
    struct run_devices devices;
};

void phases_load(struct sqlite3 *db, struct run_phases *p);
/* iterations.c: each phase's iterations (phases_load calls it). */
void iterations_load(struct sqlite3 *db, struct run_phases *p);
/* Warm-up: the first n iterations of each phase (-1: found from the data, the default). */
void iterations_set_warmup(int n);
size_t iterations_warmup(const int64_t *lat, size_t n);
/* 95% interval of median(b) / median(a), bootstrap with a fixed seed; 0 when too few. */
int iterations_ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                        double *hi);
/* Length of the union of n time intervals, overlaps counted once (sorts them). */
struct interval {
    int64_t start, end;
};
int64_t union_length(struct interval *v, size_t n);
/* A run that did not finish has no kernel summary: compute it once from the rows into a TEMP
 * table of the same name (summaries.c), which every section then reads. */
void summaries_complete(struct sqlite3 *db);
/* "inference/bf16": a phase's label in the few columns text can spare. */
void phase_short_label(const struct phase_info *ph, char *out, size_t n);
/* Index of the phase named `want` (its label or short label), or exit 2 naming `option` and the
 * phases there are. */
int phases_find(const struct run_phases *p, const char *want, const char *option);
/* "cpu", "cuda:0", ... */
void device_name(int type, int index, char *out, size_t n);

/* Sections: each returns a new table built from the database. */
struct report_opts {
    int top;                /* kernels shown; 0 all */
    const char *baseline;   /* phase label (or "grad/off" form) to compare against */
    int by_phase;           /* kernels per phase rather than over all phases */
    const char *phase;      /* kernels of this phase only */
    const char *nvtx;       /* kernels launched inside NVTX ranges matching this glob */
    enum out_format format; /* views that differ by rendering (advice: wrapped text, md rows) */
};
struct table *section_run(struct sqlite3 *db);
/* The phase others are held against (--baseline, else one that ran the model; sec_phases.c). */
const struct phase_info *baseline_of(const struct run_phases *p, const char *want);
/* The first screen: the answers in a line each (sec_summary.c). */
struct table *section_summary(struct sqlite3 *db, const struct run_phases *p,
                              const struct phase_info *base);
/* Where a run's dropped events were: "in grad/off 120, ...; up to 7 iterations touched", or "". */
void drops_where(struct sqlite3 *db, char *out, size_t n);
/* The phase comparison: a data table ("phases") and two text views; returns how many. */
int section_phases(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                   struct table **out);
/* The precision mix per phase: share of kernel time by compute type. */
struct table *section_precision(const struct run_phases *p);
/* Kernel time by operation kind (GEMM, conv, elementwise, ...) per phase. */
struct table *section_operations(const struct run_phases *p);
struct table *section_memory(const struct run_phases *p);
struct table *section_nvtx(struct sqlite3 *db, const struct report_opts *o);
struct table *section_kernels(struct sqlite3 *db, const struct run_phases *p,
                              const struct report_opts *o);
/* sec_cuda.c */
struct table *section_memops_time(struct sqlite3 *db);
struct table *section_memops_size(struct sqlite3 *db);
struct table *section_segments(struct sqlite3 *db);
struct table *section_api(struct sqlite3 *db, const struct report_opts *o);
struct table *section_cuda_activity(struct sqlite3 *db);
/* The cuDNN section (sec_cudnn.c): up to `max` tables appended to out; returns how many. */
int section_cudnn(struct sqlite3 *db, const struct report_opts *o, struct table **out, int max);
/* What the cuDNN calls show (sec_cudnn.c), for its findings table and the advice rules. */
struct cudnn_findings {
    int calls;                                    /* cuDNN calls recorded; 0: nothing is known */
    int64_t bn_train;                             /* batch-norm training in no_grad/inference */
    int64_t bn_train_by_phase[REPORT_MAX_PHASES]; /* the same by phase id */
    int64_t conv_computes;                        /* convolution forward executions */
    int64_t searches, search_ns, heuristics, builds, build_ns, warm_end;
    int64_t late, late_ns; /* searches and plan builds after warm-up, and their host time */
    int searched, researched, plan_shapes, max_plans, late_shapes;
};
int cudnn_findings_load(struct sqlite3 *db, struct cudnn_findings *f); /* returns f->calls */
/* The advice (sec_advice.c): a data table and the view for `format`; returns how many. */
int section_advice(struct sqlite3 *db, const struct run_phases *p, enum out_format format,
                   struct table **out);

#endif
