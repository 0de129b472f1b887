/*
 * itercpu.h: each iteration's thread CPU time and context switches, read once for every figure
 * that uses them (report/run/itercpu.c).
 */
#ifndef INFPROF_REPORT_ITERCPU_H
#define INFPROF_REPORT_ITERCPU_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct run_phases;

struct iter_cpu {
    int64_t id;               /* first: rstats_cmp_i64 orders by it */
    int64_t cpu, vcsw, ivcsw; /* ns; switches voluntary, involuntary (NULL read as 0) */
    int has_cpu;              /* cpu_ns was not NULL */
    /* Page faults (minor + major) and system time over the same reading, as stored (not
     * settled: the account's lag is the CPU time's); -1 unknown (before 2026-11-29, session 16). */
    int64_t faults, sys;
};

struct iter_cpus {
    struct iter_cpu *v; /* by id */
    size_t n;
    int64_t settled; /* ns the walk moved, in all (itercpu.c) */
};

/* The run's, read on first use (NULL: no table iteration_cpu). */
const struct iter_cpus *iter_cpus_get(struct sqlite3 *db, const struct run_phases *p);
/* Iteration id's, NULL none. */
const struct iter_cpu *iter_cpus_find(const struct iter_cpus *c, int64_t id);

#endif
