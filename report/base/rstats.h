/*
 * rstats.h: the report's statistics, one definition each (rstats.c): the median, the p50 the
 * report prints, the robust spread (the median absolute deviation) and the one rule by which a
 * value stands out above a typical one. Each user names its own constants (how many robust
 * deviations, what share of the typical value) next to its use.
 */
#ifndef INFPROF_RSTATS_H
#define INFPROF_RSTATS_H

#include <stddef.h>
#include <stdint.h>

/* A normal distribution's sigma is 1.4826 times its median absolute deviation. */
#define RSTATS_SIGMA_PER_MAD 1.4826

/* qsort and bsearch order of int64_t values (or of records that begin with one). */
int rstats_cmp_i64(const void *a, const void *b);
/* Records v[0..n) of `size` bytes, sorted by the int64_t at `offset` in each: how many have it at
 * or below t (the index of the first past t). */
size_t rstats_upper_i64(const void *v, size_t n, size_t size, size_t offset, int64_t t);
/* v sorted in that order, in linear time (what qsort with rstats_cmp_i64 gives an array of
 * int64_t values, faster). */
void rstats_sort_i64(int64_t *v, size_t n);
/* The median: the mean of the middle two for an even count; v reordered by a selection (linear
 * time), not sorted; 0 for none. */
int64_t rstats_median(int64_t *v, size_t n);
double rstats_median_f(double *v, size_t n);
/* The p50 the report prints: the lower of the middle two, an observed value (nearest rank, as
 * p95 and p99 are: profiler/stats.h's percentile agrees); v sorted; 0 for none. */
int64_t rstats_p50(int64_t *v, size_t n);
/* The value of nearest rank p (0..100) in v, as profiler/stats.h's percentile gives it from the
 * sorted values: v reordered by a selection (linear time), not sorted; 0 for none. */
int64_t rstats_rank_i64(int64_t *v, size_t n, double p);
/* The median absolute deviation of v about center; v overwritten by the deviations. */
int64_t rstats_mad(int64_t *v, size_t n, int64_t center);
double rstats_mad_f(double *v, size_t n, double center);
/* The outlier rule: how far above a typical value `center` a value must be to stand out: more
 * than k robust deviations (sigma: RSTATS_SIGMA_PER_MAD x the MAD) and more than `share` of the
 * typical value. rstats_above: x stands out. */
double rstats_margin(double center, double sigma, double k, double share);
/* Student's t quantiles for df degrees of freedom (1 at least): t(0.975, df), a two-sided 95%
 * interval's (compare's bands), and t(0.995, df), a 99% one's (sampled operators' errors). */
double rstats_t975(int df);
double rstats_t995(double df);
int rstats_above(double x, double center, double sigma, double k, double share);

#endif
