/*
 * band.c: the 95% band of one set of iterations' median against another's, as wide as each
 * set's own wandering level allows (run.h, iterations_band). The one band behind every speed-up
 * the report and compare print: the Fastest phase and inference_mode lines, the phase table's
 * ratio, the Series line's pairs, compare's verdicts.
 *
 * The iterations' bootstrap (iterations_ratio_ci) takes each iteration as drawn alone. Two
 * loops that run one after the other are not: the machine's speed wanders between them as it
 * does within each. A loop of 3,000 forwards under no_grad, then 3,000 under inference_mode, read
 * "1.01x no_grad, faster (95%: 1.01-1.01x)" where the program's own timer, three runs without
 * us, read -0.2%, +0.2% and -0.4% (a fresh-eyes check, 2026-11-30). A server is the same within
 * a run: how many requests are in flight moves its latency for seconds at a time (two runs of an
 * unchanged thread-pool server read "faster, 0.83x" and "slower, 1.20x" in compare). So each set
 * is also cut into DRIFT_BLOCKS stretches in time order, and their medians bootstrapped (the
 * batch means of a time series, taken as medians): a set whose level wanders gives a wide band,
 * a steady loop's stretches agree and its band stays what the iterations give. The band is the
 * wider of the two. What it cannot see is a level that differs between the two sets and is
 * steady within each (the allocator's layout, the host's placement): compare's several runs a
 * side see that (compare_band.c).
 *
 * The bootstrap itself (iterations_ratio_ci): 2,000 resamples a side, each one's median drawn
 * from the sorted set in constant time where the set is long (report/base/rboot.c), one value
 * at a time where it is short.
 */
#include "run.h"

#include "../base/rboot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BOOT_REPS    2000 /* resamples: stable 2.5% tails */
#define BOOT_SORTED  200  /* a set this long or longer has its medians drawn from the sorted set */
#define DRIFT_BLOCKS 8    /* stretches a set is cut into */
#define DRIFT_MIN    6    /* iterations a stretch needs: below, the band is the iterations' */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One side of the bootstrap: its values, sorted where its medians are drawn from them. */
struct boot_side {
    const int64_t *v;
    size_t n;
    int64_t *sorted;
};

static void side_open(struct boot_side *s, const int64_t *v, size_t n, int mean)
{
    *s = (struct boot_side){v, n, NULL};
    if (mean || n < BOOT_SORTED) return;
    s->sorted = malloc(n * sizeof *s->sorted);
    if (!s->sorted) cli_fail("out of memory");
    memcpy(s->sorted, v, n * sizeof *v);
    rstats_sort_i64(s->sorted, n);
}

static double side_draw(const struct boot_side *s, int mean, int64_t *buf, uint64_t *seed)
{
    if (mean) return rboot_mean(s->v, s->n, seed);
    if (s->sorted) return (double)rboot_median_sorted(s->sorted, s->n, seed);
    return (double)rboot_median_drawn(s->v, s->n, buf, seed);
}

/* The band of stat(b) / stat(a), stat the median or (mean) the mean, bootstrap. */
static int ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                    double *hi, int mean)
{
    if (na < 3 || nb < 3) return 0;
    struct boot_side sa, sb;
    side_open(&sa, a, na, mean);
    side_open(&sb, b, nb, mean);
    /* A mean's draws cost the set's length: fewer resamples for very long sets (bounded work). */
    size_t reps = BOOT_REPS;
    while (mean && reps > 200 && reps * (na + nb) > 40000000) reps /= 2;
    size_t ba = mean || sa.sorted ? 0 : na, bb = mean || sb.sorted ? 0 : nb; /* drawn one by one */
    size_t nbuf = ba > bb ? ba : bb;
    int64_t *buf = malloc((nbuf ? nbuf : 1) * sizeof *buf);
    double *r = malloc(reps * sizeof *r);
    if (!buf || !r) cli_fail("out of memory");
    uint64_t seed = 0x9e3779b97f4a7c15ull; /* fixed: the same data gives the same band */
    size_t k = 0;
    for (size_t i = 0; i < reps; i++) {
        double ma = side_draw(&sa, mean, buf, &seed), mb = side_draw(&sb, mean, buf, &seed);
        if (ma > 0) r[k++] = mb / ma;
    }
    free(buf);
    free(sa.sorted);
    free(sb.sorted);
    if (k < reps / 2) {
        free(r);
        return 0;
    }
    qsort(r, k, sizeof *r, cmp_double);
    *lo = r[(size_t)(0.025 * (double)(k - 1))];
    *hi = r[(size_t)(0.975 * (double)(k - 1))];
    free(r);
    return 1;
}

int iterations_ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                        double *hi)
{
    return ratio_ci(a, na, b, nb, lo, hi, 0);
}

int iterations_mean_ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                             double *hi)
{
    return ratio_ci(a, na, b, nb, lo, hi, 1);
}

/* Each of the DRIFT_BLOCKS stretches of v[0..n), in time order, into out: its median, or
 * (mean) its mean, as the set's own band is of the one or the other. */
static void stretch_stats(const int64_t *v, size_t n, int64_t *out, int64_t *buf, int mean)
{
    for (size_t k = 0; k < DRIFT_BLOCKS; k++) {
        size_t a = k * n / DRIFT_BLOCKS, b = (k + 1) * n / DRIFT_BLOCKS;
        double sum = 0;
        for (size_t i = a; mean && i < b; i++) sum += (double)v[i];
        if (mean) {
            out[k] = b > a ? (int64_t)(sum / (double)(b - a)) : 0;
            continue;
        }
        memcpy(buf, v + a, (b - a) * sizeof *buf);
        out[k] = rstats_median(buf, b - a);
    }
}

/* The iterations' band widened by the stretches' (the one band every speed-up gets). */
static int band_of(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo, double *hi,
                   int mean)
{
    if (!ratio_ci(a, na, b, nb, lo, hi, mean)) return 0;
    if (na < DRIFT_BLOCKS * DRIFT_MIN || nb < DRIFT_BLOCKS * DRIFT_MIN) return 1;
    int64_t ma[DRIFT_BLOCKS], mb[DRIFT_BLOCKS];
    int64_t *buf = malloc((na > nb ? na : nb) * sizeof *buf);
    if (!buf) cli_fail("out of memory");
    stretch_stats(a, na, ma, buf, mean);
    stretch_stats(b, nb, mb, buf, mean);
    free(buf);
    double dlo, dhi;
    if (ratio_ci(ma, DRIFT_BLOCKS, mb, DRIFT_BLOCKS, &dlo, &dhi, mean)) {
        if (dlo < *lo) *lo = dlo;
        if (dhi > *hi) *hi = dhi;
    }
    return 1;
}

int iterations_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                    double *hi)
{
    return band_of(a, na, b, nb, lo, hi, 0);
}

int iterations_mean_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                         double *hi)
{
    return band_of(a, na, b, nb, lo, hi, 1);
}
