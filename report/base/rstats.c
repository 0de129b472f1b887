/*
 * rstats.c: the report's medians, spread and outlier rule (rstats.h).
 */
#include "rstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int rstats_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

size_t rstats_upper_i64(const void *v, size_t n, size_t size, size_t offset, int64_t t)
{
    const char *p = v;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x;
        memcpy(&x, p + mid * size + offset, sizeof x);
        if (x <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_f(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* v[k] as if v were sorted, v reordered so that every value before k is at most v[k]: a
 * selection (three-way partitions around the middle value), linear time for the medians of
 * many resamples. */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* k lies in [lo, hi); all before lo <= all in it <= all after */
    while (hi - lo > 1) {
        int64_t pivot = v[lo + (hi - lo) / 2], t;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (v[i] < pivot)
                t = v[lt], v[lt++] = v[i], v[i++] = t;
            else if (v[i] > pivot)
                t = v[--gt], v[gt] = v[i], v[i] = t;
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return v[k];
}

int64_t rstats_rank_i64(int64_t *v, size_t n, double p)
{
    if (!n) return 0;
    double rank = ceil(p / 100.0 * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return select_kth(v, n, i < n ? i : n - 1);
}

int64_t rstats_median(int64_t *v, size_t n)
{
    if (!n) return 0;
    int64_t hi = select_kth(v, n, n / 2);
    if (n % 2) return hi;
    int64_t lo = v[0]; /* the largest of the lower half, which selection left below n / 2 */
    for (size_t i = 1; i < n / 2; i++)
        if (v[i] > lo) lo = v[i];
    return (lo + hi) / 2;
}

double rstats_median_f(double *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_f);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sorting int64_t values: a least-significant-digit radix sort, one byte a pass, the passes
 * whose byte is the same in every value skipped (a run's latencies differ in their low five
 * bytes), all eight counts made in one read; linear time, where qsort's comparisons took a
 * fifth of the report of a run of 200,000 iterations (issue 49). Small arrays, and a buffer
 * that cannot be had, by insertion or qsort: the same order (the values alone are the order). */
#define RSTATS_RADIX_MIN 64
void rstats_sort_i64(int64_t *v, size_t n)
{
    if (n < RSTATS_RADIX_MIN) {
        for (size_t i = 1; i < n; i++) {
            int64_t x = v[i];
            size_t k = i;
            for (; k > 0 && v[k - 1] > x; k--) v[k] = v[k - 1];
            v[k] = x;
        }
        return;
    }
    uint64_t *a = (uint64_t *)v, *b = malloc(n * sizeof *b);
    size_t(*count)[256] = calloc(8, sizeof *count);
    if (!b || !count) {
        free(b), free(count);
        qsort(v, n, sizeof *v, rstats_cmp_i64);
        return;
    }
    const uint64_t flip = 1ull << 63; /* signed order as unsigned */
    for (size_t i = 0; i < n; i++) {
        uint64_t x = a[i] ^ flip;
        for (int d = 0; d < 8; d++) count[d][(x >> (8 * d)) & 255]++;
    }
    uint64_t *from = a, *to = b;
    for (int d = 0; d < 8; d++) {
        size_t *c = count[d], sum = 0;
        if (c[((from[0] ^ flip) >> (8 * d)) & 255] == n) continue; /* one byte in all */
        for (int k = 0; k < 256; k++) {
            size_t t = c[k];
            c[k] = sum, sum += t;
        }
        for (size_t i = 0; i < n; i++) to[c[((from[i] ^ flip) >> (8 * d)) & 255]++] = from[i];
        uint64_t *t = from;
        from = to, to = t;
    }
    if (from != a) memcpy(a, from, n * sizeof *a);
    free(b), free(count);
}

int64_t rstats_p50(int64_t *v, size_t n)
{
    if (!n) return 0;
    rstats_sort_i64(v, n);
    return v[(n - 1) / 2];
}

int64_t rstats_mad(int64_t *v, size_t n, int64_t center)
{
    for (size_t i = 0; i < n; i++) v[i] = llabs(v[i] - center);
    return rstats_median(v, n);
}

double rstats_mad_f(double *v, size_t n, double center)
{
    for (size_t i = 0; i < n; i++) v[i] = fabs(v[i] - center);
    return rstats_median_f(v, n);
}

double rstats_margin(double center, double sigma, double k, double share)
{
    return fmax(k * sigma, share * center);
}

int rstats_above(double x, double center, double sigma, double k, double share)
{
    return x > center + rstats_margin(center, sigma, k, share);
}

/* Tables to 30; beyond, 1.96 + 2.4 / df for 0.975 (within 0.002), and the Cornish-Fisher series in
 * 1/df about the normal's 2.576 for 0.995 (within 0.1%). */
double rstats_t975(int df)
{
    static const double t[31] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) df = 1;
    return df <= 30 ? t[df] : 1.96 + 2.4 / df;
}

double rstats_t995(double df)
{
    static const double t[31] = {0,     63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499,
                                 3.355, 3.250,  3.169, 3.106, 3.055, 3.012, 2.977, 2.947,
                                 2.921, 2.898,  2.878, 2.861, 2.845, 2.831, 2.819, 2.807,
                                 2.797, 2.787,  2.779, 2.771, 2.763, 2.756, 2.750};
    if (df < 1) df = 1;
    if (df <= 30) return t[(int)df];
    double z = 2.5758293, z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}
