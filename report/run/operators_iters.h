/*
 * operators_iters.h: a sampled run's PyTorch operators summed per phase, operator and iteration
 * of a capture window, read in one scan of torch_operators and kept in the run model (run_lazy)
 * for every figure that reads them: the operator rows and their trimmed means, the phase's
 * operator time, the operators per series, and the calls outside every window.
 */
#ifndef INFPROF_OPERATORS_ITERS_H
#define INFPROF_OPERATORS_ITERS_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

struct op_iter_sum {
    int64_t iter, name_id, calls, self, dur;
    int phase;
    int named; /* the strings table has its name (figures by name read only these) */
};

struct op_iters {
    struct op_iter_sum *v; /* by phase, name_id, iter (a NULL name_id first, unnamed) */
    size_t n;
    int64_t outside; /* calls with an iteration outside every capture window */
    int64_t moved;   /* calls of a request's own thread in it, its model's on another (iter -1:
                        iterations_operator_calls) */
    struct op_iter_name {
        int64_t id;  /* first: rstats_cmp_i64 orders by it */
        char *value; /* NULL: the string's value is NULL */
    } * names;
    size_t nnames;
};

/* The run's sums, read on first use (NULL: no torch_operators or no torch_operator_windows). */
const struct op_iters *op_iters_get(struct sqlite3 *db, const struct run_phases *p);
/* An operator's name as the strings table holds it (NULL for a NULL value). */
const char *op_iters_name(const struct op_iters *x, int64_t name_id);
void op_iters_free(struct op_iters *x);

#endif
