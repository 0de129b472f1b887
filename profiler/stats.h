/*
 * stats.h: one running statistic (count, total, min, max, standard deviation, median) with
 * bounded memory: every value is kept up to IP_STATS_SAMPLES, after which a uniform reservoir of
 * that many stands in for the median (and says so). Used by the writer's end-of-run summaries
 * and by the report when it summarises rows itself.
 */
#ifndef INFPROF_STATS_H
#define INFPROF_STATS_H

#include <stdint.h>

#define IP_STATS_SAMPLES 4096

struct ip_stats {
    uint64_t count;
    int64_t total, min, max;
    /* Sums of (value - shift), shift being the first value: exact in 128 bits, and the variance
     * taken from them keeps its precision however large the values are. */
    int64_t shift;
    __int128 sum_d, sumsq_d;
    int64_t *samples;
    uint32_t nsamples, cap; /* cap 0: unbounded (the report's exact mode) */
    uint64_t rng;
    uint64_t next_replace; /* reservoir: the next value (by count) that replaces a sample */
    double w;
};

/* bounded: keep at most IP_STATS_SAMPLES samples (else every value, for exact medians). */
void ip_stats_init(struct ip_stats *st, int bounded);
void ip_stats_add(struct ip_stats *st, int64_t v);
/* Median (the mean of the two middle values for an even count); *exact tells whether every value
 * was kept.
 * Sorts the samples in place. */
int64_t ip_stats_median(struct ip_stats *st, int *exact);
/* Percentile p in 0..100 of the kept samples (nearest rank). Call after ip_stats_median. */
int64_t ip_stats_percentile(const struct ip_stats *st, double p);
double ip_stats_stddev(const struct ip_stats *st);
/* Merge parts into dst (fresh from ip_stats_init): count, total, min, max and the sum of squares
 * exactly; the samples are every value when each part kept all of its own, else from each part a
 * share proportional to its count, evenly over its sorted values (sorts the parts). */
void ip_stats_merge(struct ip_stats *dst, struct ip_stats *const *parts, int n);
void ip_stats_free(struct ip_stats *st);

#endif
