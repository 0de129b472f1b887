/*
 * operators_model.h: the run's PyTorch operator figures as the run model holds them (operators.h
 * reads and exports them), and what loads a sampled run's (operators_sampled.c): apart so that
 * the sampled reader needs nothing of operators.c.
 */
#ifndef INFPROF_RUN_OPERATORS_MODEL_H
#define INFPROF_RUN_OPERATORS_MODEL_H

#include <stdint.h>

struct sqlite3;
struct run_phases;

/* One operator name in one phase. */
struct op_figure {
    int phase;
    char name[64];
    int64_t calls, self_ns, total_ns;
    int64_t calls_in_iter;   /* its calls inside iterations */
    double calls_per_iter;   /* its calls inside iterations / the phase's iterations; < 0 none */
    double self_share;       /* of the phase's operator self time, 0..100 */
    int64_t kernels, gpu_ns; /* kernels launched with it innermost, and their GPU time */
    double self_per_iter;    /* its self time per iteration, ns; < 0 unknown */
    double total_per_iter;   /* sampled: its total time per iteration (trimmed), ns; < 0 none */
    double err_pct;          /* sampled: the 99% error of its self time, % of it; < 0 exact */
};
/* One phase's operators together. */
struct op_phase {
    int phase;
    int64_t iterations;        /* the phase's iterations, 0 none */
    int64_t captured;          /* sampled: of those, the ones whose operators were recorded */
    double err_pct;            /* sampled: 99% error of its operator self time, %; < 0 exact */
    int64_t calls, self_ns;    /* all its operator calls, and their self time */
    int64_t calls_in_iter;     /* those inside iterations */
    int64_t casts, cast_ns;    /* aten::_to_copy calls (autocast's casts) and their time */
    int64_t casts_in_iter;     /* those inside iterations */
    int64_t int8_ns, float_ns; /* self time of quantized::* and of float GEMM/conv operators */
    int int8;                  /* quantized operators did most of the GEMM/conv work */
    int64_t kernels, gpu_ns;   /* kernels launched inside operators, and their GPU time */
    /* Layers in their training form without grad (the train_mode_in_inference advice): dropout
     * that dropped (aten::native_dropout, or aten::bernoulli_ inside aten::dropout's calls: in
     * eval mode dropout returns its input and calls nothing) and batch-norm computing batch
     * statistics (aten::_native_batch_norm_legit, PyTorch 2.1 and later: eval mode calls
     * ..._no_training). */
    int64_t dropout_train, bn_train;
    int capped;       /* sampled: the estimate ran past its iterations' own time, held to it */
    double held;      /* by this factor (1 where not capped): the series' figures too */
    char peak_op[64]; /* innermost operator when tensor memory first reached the
                       * phase's peak as memory.c defines it, "" none */
};
struct run_operators {
    int present;         /* the database has the table (schema 4) */
    int sampled;         /* whole iterations sampled (meta torch_operators_mode 'sampled') */
    int64_t every;       /* sampled: one iteration in this many (INFPROF_OPERATORS_EVERY) */
    int64_t budget;      /* sampled: later captures spaced to cost this (thousandths of a
                          * percent), 0 none */
    int64_t spaced;      /* of the captures, those the budget spaced further apart */
    int n, cap;          /* cap: of v, while loading */
    struct op_figure *v; /* by phase, then self time, descending */
    int nphases;
    struct op_phase *phases; /* by phase id */
    int gpu;                 /* kernel rows carry the operator (kernel_rows.op, schema 4) */
    int64_t overflow;        /* calls deeper than the 64-deep stack: not recorded, so the
                              * self times of the operators around them are too high */
    int64_t uncounted;       /* sampled: calls recorded outside any captured iteration (a capture
                              * a program ended inside, a forked child's), left out */
    int64_t moved;           /* sampled: calls of a request's own thread inside it, where its
                              * model ran on another thread (op_iters.moved), left out */
};
/* Loading (operators.c, operators_sampled.c): a zeroed figure at the end of r->v; a sampled
 * run's observed figures over its captured steady iterations; then, with the phases summed, each
 * phase's captured count, the errors and the scaling to all of its iterations. */
struct op_figure *operators_add(struct run_operators *r);
void operators_sampled_rows(struct sqlite3 *db, const struct run_phases *p,
                            struct run_operators *r);
void operators_sampled_finish(struct sqlite3 *db, const struct run_phases *p,
                              struct run_operators *r);

#endif
