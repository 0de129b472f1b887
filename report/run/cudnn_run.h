/*
 * cudnn_run.h: the run model's cuDNN figures (cudnn_run.c), read once from cudnn_calls and
 * cudnn_plans on first use and kept with the run model (run.h's lazy part), for the cuDNN section
 * and the advice rules alike:
 *  - the calls, in time order, with the GPU time of the kernels each launched (cudnn_calls.ext_id
 *    -> external_corr (kind 4, CUSTOM1) -> kernels.corr);
 *  - the calls grouped per operation kind, API function and phase; per execution plan (with the
 *    plan's cudnn_plans row); per phase, operation kind and data type (the precision mix);
 *  - the findings only this collector sees: batch-norm training during no_grad/inference_mode,
 *    convolution algorithm search (benchmark mode) and whether it recurs.
 * A group's GPU time is unknown (not 0) when none of its calls could be linked to its kernels
 * (linked 0: no CUPTI). Where the writer folded the calls (cudnn_call_sums, meta
 * cudnn_fold_lost 0) and the run has iterations, the folds stand for the calls, with every
 * figure the same: the report then reads a few rows per kind of call, not every call.
 */
#ifndef INFPROF_RUN_CUDNN_H
#define INFPROF_RUN_CUDNN_H

#include "run.h"

#include <stdint.h>

/* cudnn_calls.op_kind codes (collectors/cudnn_internal.h); a code out of range reads as OTHER,
 * NULL as NONE (the call is no operation). */
enum cudnn_op {
    CUDNN_OP_NONE,
    CUDNN_OP_CONV,
    CUDNN_OP_BN_INF,
    CUDNN_OP_BN_TRAIN,
    CUDNN_OP_ATTN,
    CUDNN_OP_MATMUL,
    CUDNN_OP_PW,
    CUDNN_OP_OTHER,
    CUDNN_OP_UNK,
    CUDNN_OP_COUNT
};

/* What an API function does, told by its name: runs work, searches algorithms (find), asks the
 * v7 heuristics, finalizes a backend descriptor (builds a plan), or anything else. */
enum cudnn_role {
    CUDNN_ROLE_OTHER,
    CUDNN_ROLE_COMPUTE,
    CUDNN_ROLE_SEARCH,
    CUDNN_ROLE_HEURISTIC,
    CUDNN_ROLE_FINALIZE
};

/* One cudnn_calls row, or one cudnn_call_sums row: calls of one kind folded by the writer
 * (collectors/cudnn_fold.c), which the figures below weigh by its calls. */
struct cudnn_call {
    int64_t start, dur;    /* ns since t0 (a fold: its first call's); host time (a fold: total) */
    int64_t calls, errors; /* the calls it stands for (1 a call; 0 a fold of kernels only) */
    int64_t *durs;         /* a fold's calls' host times (ndurs), NULL: the one in dur */
    size_t ndurs;
    int64_t gpu, kernels; /* the kernels it launched and their GPU time (linked only) */
    int64_t shape, plan;  /* 0 none */
    int op, phase, dtype; /* enum cudnn_op; phase id; cudnnDataType_t, -1 unknown */
    int64_t linked;       /* its calls that pushed a correlation id (ext_id) */
    int fn;               /* its API function: index into cudnn_run.fns */
    enum cudnn_role role; /* the function's */
    int seq; /* its place as read (a fold: its first call's as stored), 1...: a tie in start */
    int64_t fn_id; /* its function's string id (0: NULL) */
};

/* Calls grouped by key (what the key holds depends on the list, struct cudnn_run). */
struct cudnn_group {
    int64_t key[3];
    int64_t calls, errors;
    int64_t host_total, host_p95; /* host time */
    double host_avg;
    int64_t gpu, kernels, linked; /* over the linked calls; linked: how many */
    double gpu_pct;               /* precision: of the phase's GPU time, in %; < 0 none */
    int plan_row;                 /* plans: its row in cudnn_run.plans, -1 none */
};

/* One cudnn_plans row. */
struct cudnn_plan {
    int64_t plan, first_ns;
    int op, dtype, source; /* dtype -1 unknown; source 0 none, 1 build, 2 read */
    char detail[256];      /* what the plan's graph holds, "" unknown */
};

/* What the cuDNN calls show, for the findings table and the advice rules. Phases 4..9 are
 * no_grad and inference_mode (phase.h). */
struct cudnn_findings {
    int calls;                                    /* cuDNN calls recorded; 0: nothing is known */
    int64_t bn_train;                             /* batch-norm training in no_grad/inference */
    int64_t bn_train_by_phase[REPORT_MAX_PHASES]; /* the same by phase id */
    int64_t conv_computes;                        /* convolution forward executions */
    int64_t searches, search_ns, heuristics, builds, build_ns, warm_end;
    int64_t late, late_ns; /* searches and plan builds after warm-up, and their host time */
    int searched, researched, plan_shapes, max_plans, late_shapes;
};

struct cudnn_run {
    struct cudnn_call *v; /* every call, in time order; or the writer's folds (folded) */
    int n;
    int folded; /* v holds cudnn_call_sums rows (a fold's host times are its own allocation) */
    char **fns; /* the distinct API function names */
    int nfns;
    int linked; /* some call could be linked to its kernels */
    /* key: op (enum cudnn_op), fn, phase id; ordered by them, op NONE last. */
    struct cudnn_group *by_call;
    int nby_call;
    /* key[0]: plan: every plan of cudnn_plans and every plan a compute call ran, by GPU time
     * (then executions) descending. */
    struct cudnn_group *by_plan;
    int nby_plan;
    struct cudnn_plan *plans; /* cudnn_plans (read only when there are calls) */
    int nplans;
    /* key: phase id, op, dtype, over the compute calls of an operation; ordered by them. */
    struct cudnn_group *precision;
    int nprecision;
    struct cudnn_findings findings; /* all 0 when there is no call */
};

/* The run's cuDNN figures, loaded once on first use and kept with the run model (p->lazy). */
const struct cudnn_run *run_cudnn(struct sqlite3 *db, const struct run_phases *p);
/* Frees what run_cudnn loaded (run_lazy_drop). */
void cudnn_run_free(struct cudnn_run *r);
/* The calls the warm-up causes and the slow iterations' causes call "cuDNN algorithm search and
 * plan builds": cudnnFind*, cudnnGet*Algorithm* (the v7 heuristic queries) and
 * cudnnBackendFinalize, by start; none where cudnn_calls is missing.
 * Read once for both (iterations.c, tails.c: a scan of every call each before). */
struct cudnn_search {
    int64_t start, dur, tid;
};
struct cudnn_searches {
    struct cudnn_search *v;
    size_t n;
};
const struct cudnn_searches *cudnn_searches_get(struct sqlite3 *db, const struct run_phases *p);

#endif
