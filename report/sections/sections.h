/*
 * sections.h: the sections of the report of one run, each built from the database and the run's
 * phases (run.h) into a table (table.h), and the report they make together (build.c).
 */
#ifndef INFPROF_SECTIONS_H
#define INFPROF_SECTIONS_H

#include "../run/run.h"

/* Sections: each returns a new table built from the database. */
struct report_opts {
    int top;                /* kernels shown; 0 all */
    const char *baseline;   /* phase label (or "grad/off" form) to compare against */
    int by_phase;           /* kernels per phase rather than over all phases */
    const char *phase;      /* kernels of this phase only */
    const char *nvtx;       /* kernels launched inside NVTX ranges matching this glob */
    enum out_format format; /* views that differ by rendering (advice: wrapped text, md rows) */
};
struct table *section_run(struct sqlite3 *db, const struct run_phases *p);
/* A row's phase: its full label in column `full` (JSON, CSV: as the phase table's `label`) and
 * its short one in `shrt` (text); "(no phase)" for none (sections.c). */
void phase_cells(struct table *t, const struct phase_info *ph, int full, int shrt);
/* The phase ran the model: it has steady iterations, or (when no phase has any) at least a tenth
 * of the busiest phase's GEMM and convolution time; not a phase that only loaded it. */
int phase_ran_model(const struct run_phases *p, const struct phase_info *ph);
/* The phase others are held against (--baseline, else one that ran the model; sec_phases.c). */
const struct phase_info *baseline_of(const struct run_phases *p, const char *want);
/* The first screen: the answers in a line each (sec_summary.c). */
struct advice_list;
/* advice: the run's findings (advice_find), computed once by report_build for this and the
 * Advice section. */
struct table *section_summary(struct sqlite3 *db, const struct run_phases *p,
                              const struct phase_info *base, const struct advice_list *advice);
/* Where a run's dropped events were: "in grad/off 120, ...; up to 7 iterations touched", or "". */
void drops_where(struct sqlite3 *db, char *out, size_t n);
/* The phase comparison: a data table ("phases") and two text views; returns how many. */
int section_phases(const struct run_phases *p, const struct report_opts *o, struct table **out);
/* The precision mix per phase: share of kernel time by compute type. */
struct table *section_precision(const struct run_phases *p);
/* Kernel time by operation kind (GEMM, conv, elementwise, ...) per phase. */
struct table *section_operations(const struct run_phases *p);
struct table *section_memory(const struct run_phases *p);
/* Series and the batch sweep (sec_series.c): two tables; returns how many. */
int section_series(const struct run_phases *p, struct table **out);
/* PyTorch operators per phase (sec_operators.c): two tables; returns how many. */
int section_operators(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                      struct table **out);
/* Energy, power and clocks per phase and device, and energy against the baseline phase
 * (sec_energy.c): two tables; returns how many. */
int section_energy(struct sqlite3 *db, const struct run_phases *p, const struct phase_info *base,
                   struct table **out);
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
int section_cudnn(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                  struct table **out, int max);
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
/* Returns f->calls. */
int cudnn_findings_load(struct sqlite3 *db, const struct run_phases *p, struct cudnn_findings *f);
/* The advice (sec_advice.c): a data table and the view for `format`; returns how many. */
int section_advice(const struct advice_list *l, enum out_format format, struct table **out);

/* ---- the report (build.c) ----------------------------------------------------------------- */

/* The report's sections of one database, as `infprof report` builds them. */
int report_build(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                 struct table **t, int max);
/* --top's default for the format, and colour on a terminal. */
void report_defaults(struct report_opts *o, struct render_opts *ro);

#endif
