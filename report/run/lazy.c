/*
 * lazy.c: the list of the run model's lazy parts, read on first use by their getters and let go
 * by run_lazy_drop and run_rows_drop. A new part is a file with its getter and its descriptor
 * (struct run_model, run.h) and two lines below, its declaration and its entry.
 */
#include "run.h"
#include "../base/cli.h"

#include <stdlib.h>

extern const struct run_model run_model_energy; /* energy.c: the energy and clock readings */
extern const struct run_model
    run_model_cuda; /* cuda_run.c: copies, memsets, memory operations, API calls */
extern const struct run_model run_model_cudnn;     /* cudnn_run.c: cuDNN calls, plans, findings */
extern const struct run_model
    run_model_cudnn_searches; /* cudnn_run.c: cuDNN's algorithm searches and plan builds */
extern const struct run_model run_model_kernels;   /* kernels.c: kernel names per phase */
extern const struct run_model run_model_nvtx;      /* nvtx.c: NVTX ranges and their GPU time */
extern const struct run_model run_model_operators; /* operators.c: PyTorch operators per phase */
extern const struct run_model
    run_model_op_iters; /* operators_iters.c: sampled operators per iteration */
extern const struct run_model run_model_mem_rows;  /* memrows.c: the allocator's reports */
extern const struct run_model run_model_kern_rows; /* kernrows.c: the kernels one by one */
extern const struct run_model
    run_model_timeline; /* timeline.c: memory, GPU busy and power over time */
extern const struct run_model run_model_tails;   /* tails.c: the slow iterations and their causes */
extern const struct run_model run_model_windows; /* windows.c: the recording windows */
extern const struct run_model
    run_model_requests;                        /* requests.c: series served from several threads */
extern const struct run_model run_model_facts; /* runfacts.c: the run header's facts */
extern const struct run_model
    run_model_iter_cpus; /* itercpu.c: each iteration's thread CPU time and switches */

static const struct run_model *const lazy_models[] = {
    &run_model_energy,    &run_model_cuda,      &run_model_cudnn,          &run_model_kernels,
    &run_model_nvtx,      &run_model_operators, &run_model_op_iters,       &run_model_mem_rows,
    &run_model_kern_rows, &run_model_timeline,  &run_model_tails,          &run_model_windows,
    &run_model_requests,  &run_model_facts,     &run_model_cudnn_searches, &run_model_iter_cpus,
};
_Static_assert(sizeof lazy_models / sizeof *lazy_models <= RUN_LAZY_MAX,
               "more lazy parts than struct run_lazy holds: raise RUN_LAZY_MAX");

void **run_lazy_slot(const struct run_phases *p, const struct run_model *m)
{
    for (size_t i = 0; i < sizeof lazy_models / sizeof *lazy_models; i++)
        if (lazy_models[i] == m) return &p->lazy->slot[i];
    cli_fail("internal error: the run model's part '%s' is not listed in report/run/lazy.c",
             m->name);
    return NULL;
}

/* Let go of every listed part that can be (rows_only: those that are rows). */
static void lazy_drop_parts(struct run_phases *p, int rows_only)
{
    for (size_t i = 0; i < sizeof lazy_models / sizeof *lazy_models; i++) {
        const struct run_model *m = lazy_models[i];
        if (!m->drop || (rows_only && !m->rows) || !p->lazy->slot[i]) continue;
        m->drop(p->lazy->slot[i]);
        p->lazy->slot[i] = NULL;
    }
}

void run_rows_drop(struct run_phases *p)
{
    lazy_drop_parts(p, 1);
}

void run_lazy_drop(struct run_phases *p)
{
    /* The largest parts: every cuDNN call, the API functions, the operators, the energy
     * readings, the rows (a thousand processes read for one report kept them all). */
    lazy_drop_parts(p, 0);
    for (int i = 0; i < p->series.n; i++) free(p->series.v[i].its), free(p->series.v[i].gapv);
    free(p->series.v); /* 120 KB a process, of which the many-process report reads nothing */
    p->series.v = NULL;
    p->series.n = 0;
    /* The phases it has, not room for REPORT_MAX_PHASES (40 KB): nothing adds one now. */
    struct phase_info *v = p->n ? realloc(p->v, (size_t)p->n * sizeof *v) : NULL;
    if (v) p->v = v;
    /* Every iteration, and each phase's steady ones (nsteady stays their count): the caller
     * took what it needs of them first (multi_gather, multi_process_facts). */
    free(p->iters);
    p->iters = NULL;
    p->niters = 0;
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        free(ph->steady), free(ph->steady_start), free(ph->steady_batch), free(ph->counted_lat);
        ph->steady = ph->steady_start = ph->steady_batch = NULL;
    }
}
