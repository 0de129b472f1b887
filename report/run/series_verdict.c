/*
 * series_verdict.c: the verdict of two series of one run (series_pick's fastest against its
 * slowest), one computation for every place that states it: the Summary's Series line
 * (sec_series.c) and the line across runs of a report of several databases (multi_series.c).
 * The band every speed-up gets (band.c) over each one's steady latencies; a level shift of
 * either withholds the verdict unless the band is past the shift's own ratio (squared where the
 * two ran one after the other: iterations_band_outlasts_shift). And of two batch sizes' items/s
 * (series_rate_verdict): "batch 8 gives the most items/s" stated a winner at 1,513 against 1,500
 * items/s, and 8 and 32 took turns over eight runs (a fresh-eyes check).
 */
#include "run.h"

#include <stdlib.h>

void series_pair_verdict(const struct series_info *fast, const struct series_info *slow,
                         struct pair_verdict *out)
{
    *out = (struct pair_verdict){0};
    out->ratio = fast->lat_p50 > 0 ? (double)slow->lat_p50 / (double)fast->lat_p50 : 0;
    int64_t *a = malloc((fast->nits + 1) * sizeof *a), *b = malloc((slow->nits + 1) * sizeof *b);
    if (!a || !b) cli_fail("out of memory");
    size_t na = series_steady_latencies(fast, a), nb = series_steady_latencies(slow, b);
    int64_t x2, y2;
    int sa = iterations_level_shift(a, na, &out->shift_before, &out->shift_after);
    int sb = iterations_level_shift(b, nb, &x2, &y2);
    out->shifted = sa ? fast : sb ? slow : NULL;
    if (!sa && sb) out->shift_before = x2, out->shift_after = y2;
    int band = iterations_band(a, na, b, nb, &out->lo, &out->hi);
    int apart = !(fast->start < slow->end && slow->start < fast->end); /* one after the other */
    out->has_band = band &&
                    (!sa || iterations_band_outlasts_shift(out->lo, out->hi, out->shift_before,
                                                           out->shift_after, apart)) &&
                    (!sb || iterations_band_outlasts_shift(out->lo, out->hi, x2, y2, apart));
    out->withheld = out->shifted && !out->has_band;
    out->v = out->has_band ? iterations_verdict(out->lo, out->hi, out->ratio) : VERDICT_UNCLEAR;
    free(a);
    free(b);
}

void series_rate_verdict(const struct series_info *most, const struct series_info *other,
                         struct pair_verdict *out)
{
    *out = (struct pair_verdict){0};
    double rm = series_items_per_s(most), ro = series_items_per_s(other);
    if (rm <= 0 || ro <= 0) return;
    out->ratio = rm / ro;
    int64_t *a = malloc((most->nits + 1) * sizeof *a), *b = malloc((other->nits + 1) * sizeof *b);
    if (!a || !b) cli_fail("out of memory");
    size_t na = series_steady_latencies(most, a), nb = series_steady_latencies(other, b);
    double items = ((double)most->items / (double)most->nsteady) /
                   ((double)other->items / (double)other->nsteady);
    if (iterations_mean_band(a, na, b, nb, &out->lo, &out->hi)) {
        out->lo *= items, out->hi *= items, out->has_band = 1;
        out->v = iterations_verdict(out->lo, out->hi, out->ratio);
    }
    free(a);
    free(b);
}
