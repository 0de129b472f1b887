/*
 * operators_strata.h: the strata of a sampled operator capture (operators_strata.c): per phase,
 * each run of captures chosen at one mean gap, with the iterations it stands for.
 */
#ifndef INFPROF_REPORT_OPERATORS_STRATA_H
#define INFPROF_REPORT_OPERATORS_STRATA_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

struct op_stratum {
    int phase;     /* phase id */
    int64_t last;  /* its last iteration id (INT64_MAX: the phase's last stratum) */
    int64_t pop;   /* the phase's counted iterations in it (steady or set apart by a capture) */
    int64_t taken; /* of those, captured */
    double share;  /* pop over the phase's counted iterations */
    double weight; /* a capture's weight against the phase's mean: (pop / taken) / (N / n) */
};

struct op_strata {
    struct op_stratum *v; /* by phase id in the run's order, then by `last` */
    int n;
    int multi; /* some phase has more than one stratum (else every weight is 1) */
};

/* The strata of the run's captures (none for a database without `every`, every capture alike). */
void op_strata_load(struct sqlite3 *db, const struct run_phases *p, struct op_strata *s);
/* The stratum of iteration `id` of phase id `phase`: its index in s->v, -1 none. */
int op_strata_of(const struct op_strata *s, int phase, int64_t id);
/* A captured iteration's weight (1 outside every stratum, or where a phase has one). */
double op_strata_weight(const struct op_strata *s, int phase, int64_t id);
/* The weights of phase id `phase`'s captures together (their count where it has one stratum),
 * summed stratum by stratum. */
double op_strata_wsum(const struct op_strata *s, int phase);
void op_strata_free(struct op_strata *s);
/* The captures left out (or held) at each end of n, for a self time per iteration that a rare
 * preempted call does not move: the highest and lowest 2%, at least one each from 10 on (the
 * phase table's and the series table's one rule, operators_sampled.c, operators_series.c). */
size_t op_trim_count(size_t n);

#endif
