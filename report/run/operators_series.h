/*
 * operators_series.h: each series' PyTorch operators, calls and self time per iteration
 * (operators_series.c), for the operator_series section and compare's operator deltas per
 * series.
 */
#ifndef INFPROF_RUN_OPERATORS_SERIES_H
#define INFPROF_RUN_OPERATORS_SERIES_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

struct op_series_row {
    int phase;  /* phase id */
    int series; /* index in run_phases.series */
    char name[64];
    int64_t iterations;                   /* of the series', those whose operators were recorded */
    double calls_per_iter, self_per_iter; /* means over them (ns) */
};
/* The rows (malloc'd), by operator name, then series; returns how many. */
size_t operators_by_series(struct sqlite3 *db, const struct run_phases *p,
                           struct op_series_row **out);

#endif
