/*
 * compare_drift.c: how far one run's own level wanders, for `infprof compare` with one run a side
 * (compare.h, compare_verdict.c's band_of).
 *
 * The band of a speed-up is a bootstrap of each run's iterations as if each were drawn alone. A
 * server's are not: how many requests are in flight moves its latency for seconds at a time, so
 * neighbours are alike and the iterations say less than their number. Two runs of an unchanged
 * thread-pool server read "faster, latency 0.83x (95%: 0.78-0.90x)" and "slower, 1.20x
 * (1.11-1.27x)" (a fresh-eyes check), its conv model's medians over fifths of one run ranging
 * 246-476 us. So each run is also cut into DRIFT_BLOCKS stretches in time order, and the band is
 * bootstrapped from the stretches' medians (the batch means of a time series, taken as medians):
 * a run whose level wanders gives a wide band, a steady loop's stretches agree and its band stays
 * what the iterations give (an unchanged 580 us loop: 1.00-1.01x). The verdict reads the wider
 * of the two. What it cannot see is a run whose whole level differs from the next one's, steadily
 * (the allocator, the host's placement): that takes several runs a side (compare_band.c).
 */
#include "compare.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DRIFT_BLOCKS 8 /* stretches a run is cut into */
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

int compare_drift_band(const int64_t *base, size_t nb, const int64_t *new, size_t nn, double *lo,
                       double *hi)
{
    if (nb < DRIFT_BLOCKS * DRIFT_MIN || nn < DRIFT_BLOCKS * DRIFT_MIN) return 0;
    int64_t mb[DRIFT_BLOCKS], mn[DRIFT_BLOCKS];
    int64_t *buf = malloc((nb > nn ? nb : nn) * sizeof *buf);
    if (!buf) cli_fail("out of memory");
    stretch_medians(base, nb, mb, buf);
    stretch_medians(new, nn, mn, buf);
    free(buf);
    /* The stretches' medians bootstrapped as the iterations are (report/run), median(base) over
     * median(new). */
    return iterations_ratio_ci(mn, DRIFT_BLOCKS, mb, DRIFT_BLOCKS, lo, hi);
}
