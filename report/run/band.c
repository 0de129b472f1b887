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
 */
#include "run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DRIFT_BLOCKS 8 /* stretches a set is cut into */
#define DRIFT_MIN    6 /* iterations a stretch needs: below, the band is the iterations' */

/* The median of each of the DRIFT_BLOCKS stretches of v[0..n), in time order, into out. */
static void stretch_medians(const int64_t *v, size_t n, int64_t *out, int64_t *buf)
{
    for (size_t k = 0; k < DRIFT_BLOCKS; k++) {
        size_t a = k * n / DRIFT_BLOCKS, b = (k + 1) * n / DRIFT_BLOCKS;
        memcpy(buf, v + a, (b - a) * sizeof *buf);
        out[k] = rstats_median(buf, b - a);
    }
}

static int drift_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                      double *hi)
{
    if (na < DRIFT_BLOCKS * DRIFT_MIN || nb < DRIFT_BLOCKS * DRIFT_MIN) return 0;
    int64_t ma[DRIFT_BLOCKS], mb[DRIFT_BLOCKS];
    int64_t *buf = malloc((na > nb ? na : nb) * sizeof *buf);
    if (!buf) cli_fail("out of memory");
    stretch_medians(a, na, ma, buf);
    stretch_medians(b, nb, mb, buf);
    free(buf);
    return iterations_ratio_ci(ma, DRIFT_BLOCKS, mb, DRIFT_BLOCKS, lo, hi);
}

int iterations_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                    double *hi)
{
    if (!iterations_ratio_ci(a, na, b, nb, lo, hi)) return 0;
    double dlo, dhi;
    if (drift_band(a, na, b, nb, &dlo, &dhi)) {
        if (dlo < *lo) *lo = dlo;
        if (dhi > *hi) *hi = dhi;
    }
    return 1;
}
