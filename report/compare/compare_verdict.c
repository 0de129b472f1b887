/*
 * compare_verdict.c: what `infprof compare` says of a latency change, by the report's own method
 * (report/run: iterations_ratio_ci, iterations_verdict, phases_shifted): for each phase and each
 * series that both runs have, the 95% band of the speed-up (median latency of the base run's
 * steady iterations over the new run's, bootstrap) and a verdict: faster, slower, the same within
 * 1%, or no clear difference; no verdict where too few iterations, where a run's phase or series
 * shifted level mid-run, or where a phase pools several series (its p50 is of none of them).
 *
 * Between two runs a band of the noise within each run is not enough: two processes of one
 * program differ more than either run's band says (6 of 15 pairs of a small CPU model once read
 * faster or slower for 0.5-0.7%; later, against one base run 2% slower than the rest, 3 of 10
 * unchanged pairs read faster by 1.3-2.4%). So a change is only a change where its band clears
 * RUN_NOISE_FLOOR (3%) either way; a median ratio within 1% whose band stays within the floor
 * is the same within 1%; else no clear difference. A band needs six iterations a side (the exact
 * 95% interval of a median does). With several runs a side the band is the runs'
 * (compare_band.c) and the verdict reads it the same way. The first screen: compare_summary.c.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The phase of a side with this full label, or NULL. */
static const struct phase_info *phase_named(const struct compare_side *s, const char *label)
{
    for (int i = 0; i < s->phases.n; i++)
        if (!strcmp(s->phases.v[i].label, label)) return &s->phases.v[i];
    return NULL;
}

static const struct series_info *series_named(const struct compare_side *s, const char *phase,
                                              const char *name)
{
    return series_in(&s->phases, phase, name);
}

#define COMPARE_MIN_STEADY 6
#define RUNS_COLS          12 /* the last columns of a verdict table (compare_verdicts) */

/* Between runs (the block at the top): lo, hi the band of the speed-up, r its median ratio; the
 * report's rule within a run too (report/run: iterations_verdict, RUN_NOISE_FLOOR). */
static const char *verdict_words(double lo, double hi, double r)
{
    static const char *const words[] = {[VERDICT_SAME] = "the same within 1%",
                                        [VERDICT_FASTER] = "faster",
                                        [VERDICT_SLOWER] = "slower",
                                        [VERDICT_UNCLEAR] = "no clear difference"};
    return words[iterations_verdict(lo, hi, r)];
}

/* The band and verdict of base against new latencies; 0 (why in *why) where there is none. */
static int band_of(const int64_t *base, size_t nb, const int64_t *new, size_t nn, double *lo,
                   double *hi, const char **why)
{
    int64_t x, y;
    if (nb < COMPARE_MIN_STEADY || nn < COMPARE_MIN_STEADY) {
        /* none at all on one side: that run has no such iterations (4,000 of them on the other
         * side read "too few") */
        *why = !nb && nn   ? "no verdict: no steady iteration in the base run"
               : nb && !nn ? "no verdict: no steady iteration in the new run"
                           : "no verdict: too few iterations";
        return 0;
    }
    /* median(base) / median(new): above 1, the new run is faster; as wide as each run's own
     * wandering level allows (report/run/band.c). */
    int band = iterations_band(new, nn, base, nb, lo, hi);
    /* A run that shifted level mid-run withholds it, unless the band is past the shift's own
     * ratio (report/run: iterations_band_outlasts_shift). */
    for (int k = 0; k < 2; k++)
        if (iterations_level_shift(k ? new : base, k ? nn : nb, &x, &y) &&
            !(band && iterations_band_outlasts_shift(*lo, *hi, x, y, 1))) {
            *why = k ? "no verdict: the new run's iterations shifted level mid-run"
                     : "no verdict: the base run's iterations shifted level mid-run";
            return 0;
        }
    if (!band) {
        *why = "no verdict: too few iterations";
        return 0;
    }
    return 1;
}

/* A series' loop rate (delivered throughput, waits included): the band of base cycles' mean over
 * new ones' (a speed-up, as for latency) and its verdict in the row's last three columns.
 *
 * A mean moves with every long wait, the machine's as much as the program's: ten unchanged runs
 * of a small CPU model on a busy machine read "slower" four times by the mean's band alone (a few
 * descheduled cycles each). So a change must show in the typical cycle too: faster or slower
 * only where the band of the cycles' median clears the floor the same way; else, where the mean's
 * alone does, the words say that a few long waits moved it. */
static void loop_verdict(struct table *t, int r, int col, const struct compare_side *b,
                         const struct series_info *sb, const struct compare_side *n,
                         const struct series_info *sn)
{
    int64_t *cb = malloc((sb->nsteady + 1) * sizeof *cb);
    int64_t *cn = malloc((sn->nsteady + 1) * sizeof *cn);
    if (!cb || !cn) cli_fail("out of memory");
    size_t nb = series_cycles(&b->phases, sb, cb), nn = series_cycles(&n->phases, sn, cn);
    /* Per item where the loop rate counts items (the batch known): two batch sizes compare by
     * the time each item takes (scaled by 1024 to keep the integer cycles exact enough). */
    int ib, in;
    series_delivered_per_s(sb, &ib), series_delivered_per_s(sn, &in);
    if (ib && in && sb->nsteady && sn->nsteady) {
        double bb = (double)sb->items / (double)sb->nsteady;
        double bn = (double)sn->items / (double)sn->nsteady;
        for (size_t i = 0; i < nb; i++) cb[i] = (int64_t)((double)cb[i] * 1024 / bb);
        for (size_t i = 0; i < nn; i++) cn[i] = (int64_t)((double)cn[i] * 1024 / bn);
    }
    double lo, hi, mlo = 0, mhi = 0;
    const char *why = NULL;
    if (band_of(cb, nb, cn, nn, &mlo, &mhi, &why) &&
        iterations_mean_ratio_ci(cn, nn, cb, nb, &lo, &hi)) {
        const struct cell *db = table_cell(t, r, "delivered_per_s_base");
        const struct cell *dn = table_cell(t, r, "delivered_per_s_new");
        double mb = 0, mn = 0;
        for (size_t i = 0; i < nb; i++) mb += (double)cb[i] / (double)nb;
        for (size_t i = 0; i < nn; i++) mn += (double)cn[i] / (double)nn;
        double point = mn > 0 ? mb / mn : 0;
        double ratio = db && dn && !db->null && !dn->null && db->d > 0 ? dn->d / db->d : point;
        /* The band is of the cycles' mean; the loop rate counts the run's last iteration but
         * not the wait after it, so over a short run it differs from their ratio by a little:
         * the band is placed around the rate shown, as wide as the cycles' is. */
        if (point > 0) lo *= ratio / point, hi *= ratio / point;
        table_set_num(t, col, lo);
        table_set_num(t, col + 1, hi);
        why = verdict_words(lo, hi, ratio);
        int changed = !strcmp(why, "faster") || !strcmp(why, "slower");
        if (changed && strcmp(why, verdict_words(mlo, mhi, (mlo + mhi) / 2)) != 0)
            why = "no clear difference: a few long waits moved it, not the typical iteration";
    }
    if (why) table_set_text(t, col + 2, why);
    free(cb);
    free(cn);
}

/* Several runs a side: the loop rate's band from the runs' rates too (new over base), in place
 * of the first runs' cycles' (lo at col, hi, verdict), and its point at point_col; nothing
 * where too few runs have one. */
static void runs_loop_verdict(struct table *t, int col, int point_col, const struct compare_side *b,
                              const struct compare_side *n, const char *phase, const char *bname,
                              const char *nname)
{
    double *rb = malloc((size_t)(1 + b->nmore) * sizeof *rb);
    double *rn = malloc((size_t)(1 + n->nmore) * sizeof *rn);
    if (!rb || !rn) cli_fail("out of memory");
    int kb = side_run_rates(b, phase, bname, rb), kn = side_run_rates(n, phase, nname, rn);
    struct runs_band band;
    /* new over base: the new runs in the base's place */
    if (runs_band(rn, kn, rb, kb, &band)) {
        table_set_num(t, col, band.lo);
        table_set_num(t, col + 1, band.hi);
        table_set_num(t, point_col, band.ratio);
        const char *why = verdict_words(band.lo, band.hi, band.ratio);
        if ((!strcmp(why, "faster") || !strcmp(why, "slower")) && band.within_spread)
            why = "no clear difference: no more than two runs of one side differ";
        table_set_text(t, col + 2, why);
    } else {
        table_set_text(t, col + 2,
                       "no verdict: a band of runs needs two or more a side with a loop rate");
    }
    free(rb);
    free(rn);
}

/* Several runs a side: the row's p50s, delta, % and ratio are the runs' centres, the figures its
 * band and verdict are of (the first runs' beside them read "1.27x, no clear difference" where
 * the Summary said 1.03x for the same series). */
static void runs_p50_cells(struct table *t, double cb, double cn) /* on the row being filled */
{
    int64_t b = (int64_t)llround(cb), n = (int64_t)llround(cn);
    int k;
    if ((k = table_col_index(t, "latency_p50_ns_base")) >= 0) table_set_int(t, k, b);
    if ((k = table_col_index(t, "latency_p50_ns_new")) >= 0) table_set_int(t, k, n);
    if ((k = table_col_index(t, "latency_p50_ns_delta")) >= 0) table_set_int(t, k, n - b);
    if ((k = table_col_index(t, "latency_p50_ns_pct")) >= 0 && b > 0)
        table_set_num(t, k, 100.0 * (double)(n - b) / (double)b);
    if ((k = table_col_index(t, "latency_p50_ns_ratio")) >= 0 && b > 0)
        table_set_num(t, k, (double)n / (double)b);
}

/* One row's verdict: writes the band (or leaves it null) and the words into the row. */
static void row_verdict(struct table *t, int r, int lo_col, int hi_col, int v_col, const char *kind,
                        const struct compare_side *b, const struct compare_side *n,
                        const struct series_renames *rn)
{
    const struct cell *st = table_cell(t, r, "status");
    if (!st || !st->s || strcmp(st->s, "both")) return;
    double lo = 0, hi = 0;
    const char *why = NULL;
    int ok = 0, judged = 0; /* judged: weighed by its band (not withheld for a pooled phase or
                               another batch size), which several runs a side may then give */
    const char *key_phase = NULL, *bname = NULL, *nname = NULL;
    if (!strcmp(kind, "phases")) {
        const struct cell *l = table_cell(t, r, "label");
        key_phase = l ? l->s : NULL;
        const struct phase_info *pb = l && l->s ? phase_named(b, l->s) : NULL;
        const struct phase_info *pn = l && l->s ? phase_named(n, l->s) : NULL;
        if (!pb || !pn || (!pb->nsteady && !pn->nsteady)) return; /* set-up: nothing to weigh */
        const struct phase_info *sh = phases_shifted(pb, pn);
        const struct series_info *ob = phase_only_series(&b->phases, pb);
        const struct series_info *on = phase_only_series(&n->phases, pn);
        if (pb->nseries > 1 || pn->nseries > 1) {
            /* A p50 of several configurations is none of theirs: no ratio of two either (two
             * runs of one program read "Latency 6.51x" beside this verdict). */
            static const char *const ratios[] = {
                "throughput_per_s_pct", "throughput_per_s_ratio", "latency_p50_ns_pct",
                "latency_p50_ns_ratio", "latency_p95_ns_pct",     "latency_p95_ns_ratio",
                "latency_p99_ns_pct",   "latency_p99_ns_ratio",   NULL};
            for (const char *const *c = ratios; *c; c++)
                table_clear_cell(t, r, table_col_index(t, *c));
            why = "no verdict: pools series";
        } else if (series_batches_differ(ob, on)) /* its one series ran another batch size */
            why = pool_printf("no verdict: the batch changed %lld -> %lld, items/s compares them",
                              (long long)ob->batch, (long long)on->batch);
        else if (sh && phases_pair_band(pn, pb, 1, &lo, &hi) != 1)
            why = sh == pb ? "no verdict: the base run's phase shifted level mid-run"
                           : "no verdict: the new run's phase shifted level mid-run";
        else
            ok = band_of(pb->counted_lat, pb->ncounted, pn->counted_lat, pn->ncounted, &lo, &hi,
                         &why),
            judged = 1;
    } else {
        const struct cell *ph = table_cell(t, r, "phase"), *nm = table_cell(t, r, "series");
        if (!ph || !ph->s || !nm || !nm->s) return;
        const char *renamed = series_renamed_to(rn, ph->s, nm->s);
        const struct series_info *sb = series_named(b, ph->s, nm->s);
        const struct series_info *sn = series_named(n, ph->s, renamed ? renamed : nm->s);
        if (renamed) table_set_text(t, v_col + 1, renamed);
        /* Several runs a side: each run's series by the same name (the new side's as renamed). */
        key_phase = ph->s, bname = nm->s, nname = renamed ? renamed : nm->s;
        if (!sb || !sn || (!sb->nsteady && !sn->nsteady)) return;
        loop_verdict(t, r, v_col + 1 + (rn != NULL), b, sb, n, sn);
        if (series_batches_differ(sb, sn)) {
            /* Latency per call of another batch size is no regression nor a gain: the rate per
             * item (items/s, the loop rate) compares them. */
            table_set_text(t, v_col,
                           pool_printf("no verdict: the batch changed %lld -> %lld, items/s"
                                       " compares them",
                                       (long long)sb->batch, (long long)sn->batch));
            return;
        }
        int64_t *lb = malloc((sb->nits + 1) * sizeof *lb);
        int64_t *ln = malloc((sn->nits + 1) * sizeof *ln);
        if (!lb || !ln) cli_fail("out of memory");
        size_t nb = series_steady_latencies(sb, lb), nn = series_steady_latencies(sn, ln);
        ok = band_of(lb, nb, ln, nn, &lo, &hi, &why);
        judged = 1;
        free(lb);
        free(ln);
    }
    const struct cell *b50 = table_cell(t, r, "latency_p50_ns_base");
    const struct cell *n50 = table_cell(t, r, "latency_p50_ns_new");
    double ratio = b50 && n50 && !b50->null && !n50->null && n50->i > 0
                       ? (double)b50->i / (double)n50->i
                       : (lo + hi) / 2;
    int runs_col = t->ncols - RUNS_COLS;
    table_set_text(t, runs_col + 4, "iterations");
    /* What the change is made of (a series: its parts per iteration, each side's runs). */
    const char *moved = bname && b50 && !b50->null && b50->i > 0
                            ? series_parts_moved(b, n, key_phase, bname, nname, (double)b50->i)
                            : NULL;
    if (moved) table_set_text(t, runs_col + 6, moved);
    if (key_phase && (b->nmore || n->nmore)) {
        /* Several runs a side: the band is the runs' (compare_band.c), whatever each run's own
         * iterations said; the runs' medians are shown. */
        double *mb = malloc((size_t)(1 + b->nmore) * sizeof *mb);
        double *mn = malloc((size_t)(1 + n->nmore) * sizeof *mn);
        if (!mb || !mn) cli_fail("out of memory");
        int kb = side_run_p50s(b, key_phase, bname, mb);
        int kn = side_run_p50s(n, key_phase, nname, mn);
        int *ob = malloc((size_t)(kb + 1) * sizeof *ob),
            *on = malloc((size_t)(kn + 1) * sizeof *on);
        if (!ob || !on) cli_fail("out of memory");
        int lb = runs_left_out(mb, kb, ob), ln = runs_left_out(mn, kn, on);
        table_set_text(t, runs_col + 2, runs_text(mb, kb, ob));
        table_set_text(t, runs_col + 3, runs_text(mn, kn, on));
        table_set_text(t, runs_col + 7, runs_ns(mb, kb));
        table_set_text(t, runs_col + 8, runs_ns(mn, kn));
        /* The band of the runs kept. */
        for (int i = 0, w = 0; i < kb; i++)
            if (!ob[i]) mb[w++] = mb[i];
        for (int i = 0, w = 0; i < kn; i++)
            if (!on[i]) mn[w++] = mn[i];
        kb -= lb, kn -= ln;
        free(ob), free(on);
        table_set_int(t, runs_col, kb); /* the runs the band is of */
        table_set_int(t, runs_col + 1, kn);
        struct runs_band rb;
        if (judged && runs_band(mb, kb, mn, kn, &rb)) {
            ok = 1, lo = rb.lo, hi = rb.hi, ratio = rb.ratio;
            table_set_text(t, runs_col + 4, "runs");
            table_set_num(t, runs_col + 5, ratio);
            table_set_int(t, runs_col + 9, (int64_t)llround(rb.centre_b));
            table_set_int(t, runs_col + 10, (int64_t)llround(rb.centre_n));
            runs_p50_cells(t, rb.centre_b, rb.centre_n);
            table_set_num(t, lo_col, lo);
            table_set_num(t, hi_col, hi);
            why = verdict_words(lo, hi, ratio);
            if ((!strcmp(why, "faster") || !strcmp(why, "slower")) && rb.within_spread)
                why = "no clear difference: no more than two runs of one side differ";
            else if (!strcmp(why, "no clear difference") && (lo > 1 || hi < 1))
                why = pool_printf("no clear difference: %s, but the band reaches within 3%%"
                                  " (more runs a side narrow it)",
                                  lo > 1 ? "faster" : "slower");
        } else if (judged) {
            ok = 0;
            why = "no verdict: a band of runs needs two or more a side with steady iterations";
        }
        free(mb);
        free(mn);
        if (why) table_set_text(t, v_col, why);
        if (bname)
            runs_loop_verdict(t, v_col + 1 + (rn != NULL), runs_col + 11, b, n, key_phase, bname,
                              nname);
        return;
    }
    table_set_int(t, runs_col, 1);
    table_set_int(t, runs_col + 1, 1);
    if (ok) {
        table_set_num(t, lo_col, lo);
        table_set_num(t, hi_col, hi);
        table_set_num(t, runs_col + 5, ratio);
        why = verdict_words(lo, hi, ratio);
    }
    if (why) table_set_text(t, v_col, why);
}

struct table *compare_verdicts(struct table *d, const char *kind, const struct compare_side *b,
                               const struct compare_side *n, const struct series_renames *rn)
{
    struct table *t = table_new(d->key, d->title);
    t->optional = d->optional;
    t->note = d->note;
    for (int c = 0; c < d->ncols; c++)
        table_col(t, d->cols[c].key, d->cols[c].title, d->cols[c].type);
    int lo_col = t->ncols, hi_col = t->ncols + 1, v_col = t->ncols + 2;
    table_col(t, "speedup_lo", NULL, COL_RATIO);
    table_col(t, "speedup_hi", NULL, COL_RATIO);
    table_col(t, "verdict", NULL, COL_TEXT);
    if (rn) table_col(t, "new_series", NULL, COL_TEXT); /* the new run's name, where renamed */
    if (!strcmp(kind, "series")) { /* the loop rate's, waits for data included */
        table_col(t, "delivered_speedup_lo", NULL, COL_RATIO);
        table_col(t, "delivered_speedup_hi", NULL, COL_RATIO);
        table_col(t, "delivered_verdict", NULL, COL_TEXT);
    }
    /* Last (RUNS_COLS): the runs each side had, their medians, what the band is of (a run's
     * iterations, or the runs), and the speed-up the verdict read. */
    table_col(t, "runs_base", NULL, COL_INT);
    table_col(t, "runs_new", NULL, COL_INT);
    table_col(t, "run_p50s_base", NULL, COL_TEXT);
    table_col(t, "run_p50s_new", NULL, COL_TEXT);
    table_col(t, "band_from", NULL, COL_TEXT);
    table_col(t, "speedup", NULL, COL_RATIO);
    table_col(t, "moved", NULL, COL_TEXT); /* series_parts_moved */
    table_col(t, "run_p50s_base_ns", NULL, COL_TEXT); /* every run's p50, ns */
    table_col(t, "run_p50s_new_ns", NULL, COL_TEXT);
    table_col(t, "p50_base_runs_ns", NULL, COL_NS); /* the runs' centre (geometric mean) */
    table_col(t, "p50_new_runs_ns", NULL, COL_NS);
    table_col(t, "delivered_speedup", NULL, COL_RATIO); /* the loop rate's point, new / base */
    for (int r = 0; r < d->nrows; r++) {
        table_row(t);
        for (int c = 0; c < d->ncols; c++) table_copy_cell(t, c, d, r, c);
        row_verdict(t, r, lo_col, hi_col, v_col, kind, b, n, rn);
    }
    d->note = NULL; /* now t's */
    table_free(d);
    return t;
}
