/*
 * median_check.c: rstats_median (a selection, report/base/rstats.c) against the median of the
 * sorted array on arrays shaped to break a selection: every length 1-64, sorted, reversed, all
 * equal, two values, heavy duplicates, extremes, random. And rstats_sort_i64 (a radix sort past
 * 64 values) against qsort on the same shapes at lengths on both sides of that, up to 100,000:
 * negative values, INT64_MIN and INT64_MAX, values that share their high bytes (latencies), or
 * their low ones. And rstats_upper_i64 against a linear count, every length 0-64. And
 * rstats_rank_i64 (the p95 a selection gives) against the sorted array's nearest rank, as
 * profiler/stats.c's percentile reads it, on the median's shapes. And the bootstrap's median
 * drawn from the sorted values (rboot_median_sorted, report/base/rboot.c) against the median of
 * values drawn one by one: the two distributions of 20,000 draws each within 0.025 of each
 * other at every value (odd and even counts, ties, two levels). Exit 0 when every one agrees.
 */
#include "report/base/rboot.h"
#include "report/base/rstats.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed = 88172645463325252ull;
static int64_t next(void)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (int64_t)(seed >> 1);
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int check(const int64_t *v, size_t n, const char *shape)
{
    int64_t a[128], b[128];
    memcpy(a, v, n * sizeof *v), memcpy(b, v, n * sizeof *v);
    qsort(a, n, sizeof *a, cmp);
    static const double ps[] = {0, 1, 50, 95, 99, 100};
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
        size_t rank = (size_t)ceil(ps[k] / 100.0 * (double)n); /* nearest rank, 1... */
        int64_t r = a[rank ? rank - 1 : 0];
        memcpy(b, v, n * sizeof *v);
        if (rstats_rank_i64(b, n, ps[k]) != r) {
            fprintf(stderr, "median_check: %s n=%zu: p%g %lld, sort %lld\n", shape, n, ps[k],
                    (long long)rstats_rank_i64(b, n, ps[k]), (long long)r);
            return 1;
        }
    }
    memcpy(b, v, n * sizeof *v);
    int64_t want = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2, got = rstats_median(b, n);
    if (want == got) return 0;
    fprintf(stderr, "median_check: %s n=%zu: selection %lld, sort %lld\n", shape, n, (long long)got,
            (long long)want);
    return 1;
}

/* rstats_sort_i64 against qsort. */
static int check_sort(const int64_t *v, size_t n, const char *shape)
{
    int64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    if (!a || !b) return 1;
    memcpy(a, v, n * sizeof *v), memcpy(b, v, n * sizeof *v);
    qsort(a, n, sizeof *a, cmp);
    rstats_sort_i64(b, n);
    int bad = memcmp(a, b, n * sizeof *a) != 0;
    if (bad) fprintf(stderr, "median_check: sort of %s n=%zu differs from qsort\n", shape, n);
    free(a), free(b);
    return bad;
}

static int sorts(void)
{
    static const size_t lens[] = {0, 1, 2, 63, 64, 65, 100, 255, 256, 257, 1000, 4096, 100000};
    int64_t *v = malloc(100000 * sizeof *v);
    int bad = 0;
    if (!v) return 1;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        size_t n = lens[l];
        for (int shape = 0; shape < 8; shape++) {
            for (size_t i = 0; i < n; i++) {
                int64_t r = next();
                /* reversed, equal, extremes, signs, latencies, low bytes 0, small negatives,
                 * random */
                static const int64_t big = INT64_MAX / 2;
                v[i] = shape == 0   ? (int64_t)(n - i)
                       : shape == 1 ? 7
                       : shape == 2 ? (r % 2 ? INT64_MIN : INT64_MAX)
                       : shape == 3 ? r - big
                       : shape == 4 ? 1000000 + r % 5000000
                       : shape == 5 ? (r % 1000) << 40
                       : shape == 6 ? -(r % 300)
                                    : (int64_t)(((uint64_t)r << 1) ^ (uint64_t)next());
            }
            bad +=
                check_sort(v, n,
                           (const char *[]){"reversed", "equal", "extremes", "signs", "latencies",
                                            "low bytes zero", "small negatives", "random"}[shape]);
        }
    }
    free(v);
    return bad;
}

/* rstats_upper_i64 against a linear count, on records with the key at an offset. */
static int uppers(void)
{
    struct rec {
        int32_t pad;
        int64_t key;
    } r[64];
    int bad = 0;
    for (size_t n = 0; n <= 64; n++) {
        int64_t at = 0;
        for (size_t i = 0; i < n; i++) r[i].key = at += next() % 3; /* sorted, with repeats */
        for (int64_t t = -1; t <= at + 1; t++) {
            size_t want = 0;
            while (want < n && r[want].key <= t) want++;
            if (rstats_upper_i64(r, n, sizeof *r, offsetof(struct rec, key), t) != want) bad++;
        }
    }
    return bad;
}

/* The two ways of drawing a resample's median, as distributions: the largest difference of
 * their cumulative shares at any value. */
#define BOOT_DRAWS 20000
static int boots(void)
{
    static const size_t lens[] = {2, 3, 10, 11, 20, 21, 200, 201, 1000};
    int64_t *v = malloc(1000 * sizeof *v), *sorted = malloc(1000 * sizeof *v);
    int64_t *buf = malloc(1000 * sizeof *v), *a = malloc(BOOT_DRAWS * sizeof *a);
    int64_t *b = malloc(BOOT_DRAWS * sizeof *b);
    int bad = 0;
    if (!v || !sorted || !buf || !a || !b) return 1;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        size_t n = lens[l];
        for (int shape = 0; shape < 4; shape++) {
            for (size_t i = 0; i < n; i++) {
                int64_t r = next();
                v[i] = shape == 0   ? (int64_t)((i * 7919) % n) /* distinct, shuffled */
                       : shape == 1 ? r % 5                     /* ties */
                       : shape == 2 ? (r % 5 ? 1000000 : 5000000) + r % 1000 /* two levels */
                                    : 200000 + (r % 1000) * (r % 1000);      /* skewed */
            }
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, cmp);
            uint64_t s1 = 0x9e3779b97f4a7c15ull, s2 = 0x2545f4914f6cdd1dull;
            for (size_t k = 0; k < BOOT_DRAWS; k++) {
                a[k] = rboot_median_drawn(v, n, buf, &s1);
                b[k] = rboot_median_sorted(sorted, n, &s2);
            }
            qsort(a, BOOT_DRAWS, sizeof *a, cmp);
            qsort(b, BOOT_DRAWS, sizeof *b, cmp);
            double worst = 0;
            for (size_t i = 0, j = 0; i < BOOT_DRAWS || j < BOOT_DRAWS;) {
                int64_t t = j >= BOOT_DRAWS || (i < BOOT_DRAWS && a[i] <= b[j]) ? a[i] : b[j];
                while (i < BOOT_DRAWS && a[i] <= t) i++;
                while (j < BOOT_DRAWS && b[j] <= t) j++;
                worst = fmax(worst, fabs((double)i - (double)j) / BOOT_DRAWS);
            }
            if (worst > 0.025) {
                fprintf(stderr,
                        "median_check: resample medians of shape %d n=%zu: sorted draws "
                        "differ from draws one by one by %.3f\n",
                        shape, n, worst);
                bad++;
            }
        }
    }
    free(v), free(sorted), free(buf), free(a), free(b);
    return bad;
}

int main(void)
{
    int bad = 0, cases = 0;
    int64_t v[128];
    for (size_t n = 1; n <= 64; n++) {
        for (int shape = 0; shape < 7; shape++) {
            for (size_t i = 0; i < n; i++) {
                switch (shape) {
                case 0:
                    v[i] = (int64_t)i;
                    break;
                case 1:
                    v[i] = (int64_t)(n - i);
                    break;
                case 2:
                    v[i] = 7;
                    break;
                case 3:
                    v[i] = (int64_t)(i % 2);
                    break;
                case 4:
                    v[i] = next() % 3;
                    break;
                case 5:
                    v[i] = i % 2 ? INT64_MAX / 4 : -(INT64_MAX / 4);
                    break;
                default:
                    v[i] = next() % 1000000;
                    break;
                }
            }
            bad += check(v, n,
                         (const char *[]){"sorted", "reversed", "equal", "two values", "duplicates",
                                          "extremes", "random"}[shape]);
            cases++;
        }
    }
    for (int k = 0; k < 2000; k++) { /* random lengths and values, with repeats */
        size_t n = 1 + (size_t)(next() % 128);
        for (size_t i = 0; i < n; i++) v[i] = next() % (1 + k % 50);
        bad += check(v, n, "random repeats");
        cases++;
    }
    int sort_bad = sorts(), upper_bad = uppers(), boot_bad = boots();
    bad += sort_bad + upper_bad + boot_bad;
    printf("median_check: %d cases, %d disagree; sorts: %d differ; upper bounds: %d differ; "
           "resample medians: %d differ\n",
           cases, bad - sort_bad - upper_bad - boot_bad, sort_bad, upper_bad, boot_bad);
    return bad != 0;
}
