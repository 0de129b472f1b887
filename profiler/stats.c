/*
 * stats.c: running statistics with a bounded sample (stats.h).
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ip_stats_init(struct ip_stats *st, int bounded)
{
    *st = (struct ip_stats){0};
    st->min = INT64_MAX;
    st->max = INT64_MIN;
    st->cap = bounded ? IP_STATS_SAMPLES : 0;
    st->rng = 0x9e3779b97f4a7c15ull;
}

/* A uniform double in (0, 1). */
static double stats_uniform(struct ip_stats *st);

/* Algorithm L (Li 1994): the reservoir skips ahead geometrically, so a value that is not kept
 * costs a comparison, not a random draw and a division. */
static void stats_schedule(struct ip_stats *st)
{
    st->w *= exp(log(stats_uniform(st)) / st->cap);
    st->next_replace += (uint64_t)floor(log(stats_uniform(st)) / log(1 - st->w)) + 1;
}

static uint64_t stats_rand(struct ip_stats *st)
{
    uint64_t x = st->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return st->rng = x;
}

static double stats_uniform(struct ip_stats *st)
{
    return ((double)(stats_rand(st) >> 11) + 0.5) / 9007199254740992.0;
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
    if (!st->count) st->shift = v;
    st->count++;
    st->total += v;
    __int128 d = (__int128)v - st->shift;
    st->sum_d += d;
    st->sumsq_d += d * d;
    if (v < st->min) st->min = v;
    if (v > st->max) st->max = v;
    uint32_t n = st->nsamples;
    if (!st->cap || n < st->cap) {
        /* Capacity doubles: grow when n reaches a power of two (or 16). */
        if ((n == 0 || (n >= 16 && (n & (n - 1)) == 0)) && stats_grow(st) != 0) return;
        st->samples[st->nsamples++] = v;
        if (st->nsamples == st->cap) {
            st->w = 1.0;
            st->next_replace = st->count;
            stats_schedule(st);
        }
        return;
    }
    if (st->count < st->next_replace) return;
    st->samples[stats_rand(st) % st->cap] = v;
    stats_schedule(st);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sort n values: radix sort by bytes (least significant first) for large arrays, skipping the
 * bytes every value shares; qsort for small ones and whenever memory is short. Durations are
 * non-negative; a negative value sends the whole array to qsort. */
static void sort_values(int64_t *v, uint32_t n)
{
    if (n < 4096) {
        qsort(v, n, sizeof *v, cmp_i64);
        return;
    }
    uint64_t or_all = 0, and_all = ~0ull;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] < 0) {
            qsort(v, n, sizeof *v, cmp_i64);
            return;
        }
        or_all |= (uint64_t)v[i];
        and_all &= (uint64_t)v[i];
    }
    int64_t *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) {
        qsort(v, n, sizeof *v, cmp_i64);
        return;
    }
    int64_t *src = v, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        if ((((or_all ^ and_all) >> shift) & 0xff) == 0) continue; /* a byte all values share */
        uint32_t count[257] = {0};
        for (uint32_t i = 0; i < n; i++) count[(((uint64_t)src[i] >> shift) & 0xff) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (uint32_t i = 0; i < n; i++) dst[count[((uint64_t)src[i] >> shift) & 0xff]++] = src[i];
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, (size_t)n * sizeof *v);
    free(tmp);
}

int64_t ip_stats_median(struct ip_stats *st, int *exact)
{
    if (exact) *exact = st->nsamples == st->count;
    if (!st->nsamples) return 0;
    sort_values(st->samples, st->nsamples);
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
    long double n = (long double)st->count, sd = (long double)st->sum_d;
    long double var = ((long double)st->sumsq_d - sd * sd / n) / (n - 1);
    return var > 0 ? (double)sqrtl(var) : 0;
}

void ip_stats_merge(struct ip_stats *dst, struct ip_stats *const *parts, int n)
{
    uint64_t count = 0;
    int all_kept = 1;
    for (int i = 0; i < n; i++) {
        count += parts[i]->count;
        all_kept &= parts[i]->nsamples == parts[i]->count;
    }
    uint32_t want = all_kept ? (uint32_t)count
                             : (count < IP_STATS_SAMPLES ? (uint32_t)count : IP_STATS_SAMPLES);
    free(dst->samples);
    dst->samples = want ? malloc((size_t)want * sizeof *dst->samples) : NULL;
    dst->nsamples = 0;
    dst->cap = want;
    for (int i = 0; i < n; i++) {
        struct ip_stats *p = parts[i];
        if (!p->count) continue;
        if (!dst->count) dst->shift = p->shift;
        /* Re-base the part's shifted sums on dst's shift, exactly. */
        __int128 delta = (__int128)p->shift - dst->shift, pn = (__int128)p->count;
        dst->sumsq_d += p->sumsq_d + 2 * delta * p->sum_d + pn * delta * delta;
        dst->sum_d += p->sum_d + pn * delta;
        dst->count += p->count;
        dst->total += p->total;
        if (p->count && p->min < dst->min) dst->min = p->min;
        if (p->count && p->max > dst->max) dst->max = p->max;
        if (!dst->samples || !p->nsamples) continue;
        ip_stats_median(p, NULL); /* sorts its samples */
        uint32_t take =
            all_kept ? p->nsamples : (uint32_t)((double)want * (double)p->count / (double)count);
        if (take > p->nsamples) take = p->nsamples;
        for (uint32_t k = 0; k < take && dst->nsamples < want; k++)
            dst->samples[dst->nsamples++] =
                p->samples[(uint32_t)(((uint64_t)k * p->nsamples + p->nsamples / 2) / take)];
    }
    if (dst->nsamples < dst->count) dst->cap = dst->nsamples ? dst->nsamples : 1;
}

void ip_stats_free(struct ip_stats *st)
{
    free(st->samples);
    st->samples = NULL;
    st->nsamples = 0;
}
