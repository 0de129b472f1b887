/*
 * median_check.c: rstats_median (a selection, report/base/rstats.c) against the median of the
 * sorted array on arrays shaped to break a selection: every length 1-64, sorted, reversed, all
 * equal, two values, heavy duplicates, extremes, random. Exit 0 when every one agrees.
 */
#include "report/base/rstats.h"

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
    int64_t want = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2, got = rstats_median(b, n);
    if (want == got) return 0;
    fprintf(stderr, "median_check: %s n=%zu: selection %lld, sort %lld\n", shape, n, (long long)got,
            (long long)want);
    return 1;
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
    printf("median_check: %d cases, %d disagree\n", cases, bad);
    return bad != 0;
}
