/*
 * stats.c: running statistics with a bounded sample (stats.h).
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

void ip_stats_init(struct ip_stats *st, int bounded)
{
    *st = (struct ip_stats){0};
    st->min = INT64_MAX;
    st->max = INT64_MIN;
    st->cap = bounded ? IP_STATS_SAMPLES : 0;
    st->rng = 0x9e3779b97f4a7c15ull;
}

static uint64_t stats_rand(struct ip_stats *st)
{
    uint64_t x = st->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return st->rng = x;
}

static int stats_grow(struct ip_stats *st)
{
    uint32_t want = st->nsamples ? st->nsamples * 2 : 16;
    if (st->cap && want > st->cap) want = st->cap;
    int64_t *p = realloc(st->samples, (size_t)want * sizeof *p);
    if (!p) return -1;
    st->samples = p;
    return 0;
}

void ip_stats_add(struct ip_stats *st, int64_t v)
{
    st->count++;
    st->total += v;
    double d = (double)v - st->mean;
    st->mean += d / (double)st->count;
    st->m2 += d * ((double)v - st->mean);
    if (v < st->min) st->min = v;
    if (v > st->max) st->max = v;
    uint32_t n = st->nsamples;
    if (!st->cap || n < st->cap) {
        /* Capacity doubles: grow when n reaches a power of two (or 16). */
        if ((n == 0 || (n >= 16 && (n & (n - 1)) == 0)) && stats_grow(st) != 0) return;
        st->samples[st->nsamples++] = v;
        return;
    }
    uint64_t slot = stats_rand(st) % st->count; /* Algorithm R */
    if (slot < st->cap) st->samples[slot] = v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t ip_stats_median(struct ip_stats *st, int *exact)
{
    if (exact) *exact = st->nsamples == st->count;
    if (!st->nsamples) return 0;
    qsort(st->samples, st->nsamples, sizeof *st->samples, cmp_i64);
    uint32_t n = st->nsamples;
    /* nsys reports the median as the mean of the two middle values for an even count. */
    if (n % 2) return st->samples[n / 2];
    return (st->samples[n / 2 - 1] + st->samples[n / 2]) / 2;
}

int64_t ip_stats_percentile(const struct ip_stats *st, double p)
{
    if (!st->nsamples) return 0;
    double rank = ceil(p / 100.0 * st->nsamples);
    uint32_t i = rank < 1 ? 0 : (uint32_t)rank - 1;
    if (i >= st->nsamples) i = st->nsamples - 1;
    return st->samples[i];
}

double ip_stats_stddev(const struct ip_stats *st)
{
    if (st->count < 2) return 0;
    double var = st->m2 / (double)(st->count - 1);
    return var > 0 ? sqrt(var) : 0;
}

void ip_stats_free(struct ip_stats *st)
{
    free(st->samples);
    st->samples = NULL;
    st->nsamples = 0;
}
