/*
 * rboot.h: the bootstrap's draws (rboot.c): one resample's median or mean, each drawn with
 * replacement from a run's iterations. The band of every speed-up (report/run/band.c) takes
 * the 2.5% and 97.5% of 2,000 such ratios. A resample's median drawn one value at a time costs
 * the resample's length; drawn from the sorted values by the order statistics of uniforms it
 * costs a few logarithms, whatever the length (the same distribution: median_check compares the
 * two).
 */
#ifndef INFPROF_RBOOT_H
#define INFPROF_RBOOT_H

#include <stddef.h>
#include <stdint.h>

/* The generator (xorshift64): a fixed seed gives the same band for the same data. */
uint64_t rboot_next(uint64_t *seed);
/* The median (rstats_median's: the mean of the middle two for an even count) of n values drawn
 * with replacement from v[0..n), one by one into buf (room for n). */
int64_t rboot_median_drawn(const int64_t *v, size_t n, int64_t *buf, uint64_t *seed);
/* The same draw's median from v[0..n) sorted, in constant time: the resample's k-th smallest is
 * v[floor(n U)] where U is the k-th smallest of n uniforms, a Beta(k, n - k + 1). */
int64_t rboot_median_sorted(const int64_t *sorted, size_t n, uint64_t *seed);
/* The mean of n values drawn with replacement from v[0..n). */
double rboot_mean(const int64_t *v, size_t n, uint64_t *seed);

#endif
