/*
 * stats.h: one running statistic (count, total, min, max, standard deviation, median) with
 * bounded memory: every value is kept up to IP_STATS_SAMPLES, after which a uniform reservoir of
 * that many stands in for the median (and says so). Used by the writer's end-of-run summaries
 * and by the report when it summarises rows itself.
 */
#ifndef INFPROF_STATS_H
#define INFPROF_STATS_H

#include <stdint.h>

#define IP_STATS_SAMPLES 8192

struct ip_stats {
    uint64_t count;
    int64_t total, min, max;
    unsigned __int128 sumsq; /* exact: 2^40 ns squared times 2^34 values still fits */
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
void ip_stats_free(struct ip_stats *st);

#endif
