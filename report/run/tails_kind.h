/*
 * tails_kind.h: slow iterations known by their kind (tails_kind.c). Most of a series' iterations
 * allocate one amount; some allocate 1.5x it or more (a larger input every so many requests).
 * Where that kind is slower as a group (its median latency TAIL_SHARE over the typical kind's,
 * and one of it the slower of a pair with one of the typical kind 8 times in 10), each of its
 * iterations TAIL_SHARE over the typical kind's median and over its own level is slow, however
 * noisy the machine: the robust deviations of the outlier rule (tails.c) grow with the noise,
 * and on a loaded machine, where the typical forwards' times ranged 1.5x, they left all but one
 * of every 5th forward at 2x unjudged.
 */
#ifndef INFPROF_RUN_TAILS_KIND_H
#define INFPROF_RUN_TAILS_KIND_H

#include "memrows.h"
#include "run.h"

#include <stddef.h>
#include <stdint.h>

/* Of n iterations it[i] (in series order), at latencies lat[i] against the levels around them
 * local[i]: sets slow[i] for each one of the slow kind (its median `share` over the typical
 * one's) that is slow itself. Returns how many it set (0 where no kind is slow, or the
 * allocations are not known). */
size_t tails_kind(const struct mem_rows *m, const struct run_iter *const *it, const int64_t *lat,
                  const double *local, size_t n, double share, char *slow);

#endif
