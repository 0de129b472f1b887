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
 * COMPARE_NOISE_FLOOR (3%) either way; a median ratio within 1% whose band stays within the floor
 * is the same within 1%; else no clear difference. A band needs six iterations a side (the exact
 * 95% interval of a median does).
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
    const struct run_phases *p = &s->phases;
    /* The Series table shows a series without a name as "(unnamed)" (sec_series.c). */
    const char *want = strcmp(name, "(unnamed)") ? name : "";
    for (int i = 0; i < p->series.n; i++)
        if (!strcmp(p->v[p->series.v[i].phase].label, phase) && !strcmp(p->series.v[i].name, want))
            return &p->series.v[i];
    return NULL;
}

#define COMPARE_MIN_STEADY 6
#define RUNS_COLS          12 /* the last columns of a verdict table (compare_verdicts) */
/* What two processes of one unchanged program differ by (above): a change needs its band past. */
#define COMPARE_NOISE_FLOOR 1.03

/* Between runs (the block at the top): lo, hi the band of the speed-up, r its median ratio. */
static const char *verdict_words(double lo, double hi, double r)
{
    if (lo > COMPARE_NOISE_FLOOR) return "faster";
    if (hi < 1 / COMPARE_NOISE_FLOOR) return "slower";
    /* The same only where the band says so too: a median ratio of 1.00 with a band of
     * 0.07-13.98x (the H200's autotuning series, six slow iterations of 42) knows nothing. */
    if (r >= 1 / 1.01 && r <= 1.01 && lo >= 1 / COMPARE_NOISE_FLOOR && hi <= COMPARE_NOISE_FLOOR)
        return "the same within 1%";
    return "no clear difference";
}

/* The band and verdict of base against new latencies; 0 (why in *why) where there is none. */
static int band_of(const int64_t *base, size_t nb, const int64_t *new, size_t nn, double *lo,
                   double *hi, const char **why)
{
    int64_t x, y;
    if (nb < COMPARE_MIN_STEADY || nn < COMPARE_MIN_STEADY) {
        *why = "no verdict: too few iterations";
        return 0;
    }
    if (iterations_level_shift(base, nb, &x, &y) || iterations_level_shift(new, nn, &x, &y)) {
        *why = iterations_level_shift(base, nb, &x, &y)
                   ? "no verdict: the base run's iterations shifted level mid-run"
                   : "no verdict: the new run's iterations shifted level mid-run";
        return 0;
    }
    /* median(base) / median(new): above 1, the new run is faster */
    if (!iterations_ratio_ci(new, nn, base, nb, lo, hi)) {
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
        table_set_text(t, col + 2, "no verdict: too few runs with a loop rate on a side");
    }
    free(rb);
    free(rn);
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
        int64_t bb = ob ? ob->batch : -1, bn = on ? on->batch : -1;
        if (pb->nseries > 1 || pn->nseries > 1)
            why = "no verdict: pools series";
        else if (bb > 0 && bn > 0 && bb != bn) /* its one series ran another batch size */
            why = pool_printf("no verdict: the batch changed %lld -> %lld, items/s compares them",
                              (long long)bb, (long long)bn);
        else if (sh)
            why = sh == pb ? "no verdict: the base run's phase shifted level mid-run"
                           : "no verdict: the new run's phase shifted level mid-run";
        else
            ok = band_of(pb->steady, pb->nsteady, pn->steady, pn->nsteady, &lo, &hi, &why),
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
        if (sb->batch > 0 && sn->batch > 0 && sb->batch != sn->batch) {
            /* Latency per call of another batch size is no regression nor a gain: the rate per
             * item (items/s, the loop rate) compares them. */
            table_set_text(t, v_col,
                           pool_printf("no verdict: the batch changed %lld -> %lld, items/s"
                                       " compares them",
                                       (long long)sb->batch, (long long)sn->batch));
            return;
        }
        int64_t *lb = malloc((sb->nsteady + 1) * sizeof *lb);
        int64_t *ln = malloc((sn->nsteady + 1) * sizeof *ln);
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
            why = "no verdict: too few runs with steady iterations on a side";
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

/* ---- the first screen of compare ------------------------------------------------------------ */

struct change {
    char name[160];
    double lat, lo, hi; /* latency new / base, its 95% band */
    int64_t base, new;
    int slower;
    char runs[48]; /* what the band is of: ", 3+3 runs" or ", one run a side" */
};

static int by_size(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    double dx = x->lat > 1 ? x->lat : 1 / x->lat, dy = y->lat > 1 ? y->lat : 1 / y->lat;
    return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* A list of names: "a; b; c", then "and N more" once it is full (never cut mid-entry). */
struct list {
    char text[1024];
    int left;
};

static void append(struct list *l, const char *s)
{
    size_t len = strlen(l->text);
    if (l->left || len + strlen(s) + 40 > sizeof l->text) {
        l->left++;
        return;
    }
    snprintf(l->text + len, sizeof l->text - len, "%s%s", len ? "; " : "", s);
}

static const char *list_text(struct list *l)
{
    size_t len = strlen(l->text);
    if (l->left) snprintf(l->text + len, sizeof l->text - len, "; and %d more", l->left);
    return l->text[0] ? l->text : NULL;
}

/* Rows of the series table in this phase (short label). */
static int series_rows(const struct table *d, const char *phase)
{
    int n = 0;
    for (int r = 0; d && r < d->nrows; r++) {
        const struct cell *c = table_cell(d, r, "Phase");
        n += c && c->s && !strcmp(c->s, phase);
    }
    return n;
}

/* The loop rates that changed where the latency did not say as much (a loop that now waits
 * longer for its data, the model as fast as before): "grad/off a loop rate slower, 0.52x (95%:
 * 0.51-0.53x), latency the same within 1%, between p50 10.00us -> 100.00us". */
static void loop_changes(const struct table *d, const char *basis, char *out, size_t n)
{
    for (int r = 0; d && r < d->nrows; r++) {
        const struct cell *lv = table_cell(d, r, "delivered_verdict");
        const struct cell *v = table_cell(d, r, "verdict");
        if (!lv || !lv->s || !v || !v->s) continue;
        if (strcmp(lv->s, "slower") && strcmp(lv->s, "faster")) continue;
        /* The latency's change says it, unless the loop changed much more (a slower data
         * pipeline beside a small model change: latency 1.05x, loop rate 0.57x). */
        const struct cell *lr = table_cell(d, r, "latency_p50_ns_ratio");
        const struct cell *dr = table_cell(d, r, "delivered_per_s_ratio");
        double lat = lr && !lr->null && lr->d > 0 ? fabs(log(lr->d)) : 0;
        double loop = dr && !dr->null && dr->d > 0 ? fabs(log(dr->d)) : 0;
        if (!strcmp(v->s, lv->s) && loop <= 2 * lat) continue;
        const struct cell *ph = table_cell(d, r, "Phase"), *se = table_cell(d, r, "series");
        const struct cell *ratio = table_cell(d, r, "delivered_speedup"); /* the runs' */
        if (!ratio || ratio->null) ratio = table_cell(d, r, "delivered_per_s_ratio");
        const struct cell *lo = table_cell(d, r, "delivered_speedup_lo");
        const struct cell *hi = table_cell(d, r, "delivered_speedup_hi");
        const struct cell *gb = table_cell(d, r, "between_p50_ns_base");
        const struct cell *gn = table_cell(d, r, "between_p50_ns_new");
        const struct cell *bb = table_cell(d, r, "batch_base"), *bn = table_cell(d, r, "batch_new");
        char cut[96], why[160] = "", b[32], g[32];
        fmt_label_cut(cut, sizeof cut, se && se->s && strcmp(se->s, "(unnamed)") ? se->s : "", 80);
        if (bb && bn && !bb->null && !bn->null && bb->i != bn->i)
            snprintf(why, sizeof why, " per item, at batch %lld against %lld", (long long)bn->i,
                     (long long)bb->i);
        else
            snprintf(why, sizeof why, ", latency %s", v->s);
        if (gb && gn && !gb->null && !gn->null && gb->i != gn->i) {
            fmt_ns(b, sizeof b, (double)gb->i);
            fmt_ns(g, sizeof g, (double)gn->i);
            snprintf(why + strlen(why), sizeof why - strlen(why), ", between p50 %s -> %s", b, g);
        }
        size_t len = strlen(out);
        if (len + 400 > n) return;
        snprintf(out + len, n - len, "%s%s%s%s loop rate %s, %.2fx (95%%: %.2f-%.2fx, %s)%s",
                 len ? "; " : "", ph && ph->s ? ph->s : "?", cut[0] ? " " : "", cut, lv->s,
                 ratio && !ratio->null ? ratio->d : 0, lo ? lo->d : 0, hi ? hi->d : 0, basis, why);
    }
}

struct table *compare_summary(struct table **t, int k)
{
    const struct table *cmp = table_by_key(t, k, "compare");
    const struct cell *kb = cmp ? table_cell(cmp, 0, "runs_base") : NULL;
    const struct cell *kn = cmp ? table_cell(cmp, 0, "runs_new") : NULL;
    int several = kb && kn && !kb->null && !kn->null && (kb->i > 1 || kn->i > 1);
    struct change ch[64];
    int nch = 0, changed = 0, compared = 0;
    static struct list unclear, same, none, moved, left;
    memset(&unclear, 0, sizeof unclear), memset(&same, 0, sizeof same);
    memset(&none, 0, sizeof none), memset(&moved, 0, sizeof moved);
    memset(&left, 0, sizeof left);
    static const char *const kinds[] = {"phases", "series"};
    for (int q = 0; q < 2; q++) {
        const struct table *d = table_by_key(t, k, kinds[q]);
        if (!d) continue;
        for (int r = 0; r < d->nrows; r++) {
            const struct cell *v = table_cell(d, r, "verdict"), *ph = table_cell(d, r, "Phase");
            const struct cell *se = table_cell(d, r, "series");
            if (!v || !v->s) continue;
            /* A phase of one series in the Series table: that row says the same, named. */
            if (q == 0 && ph && ph->s && series_rows(table_by_key(t, k, "series"), ph->s) == 1)
                continue;
            char name[400];
            const char *sn = se && se->s && strcmp(se->s, "(unnamed)") ? se->s : "";
            char cut[96]; /* a long series name cut on a character, its hash kept */
            fmt_label_cut(cut, sizeof cut, sn, 80);
            snprintf(name, sizeof name, "%s%s%s", ph && ph->s ? ph->s : "?", cut[0] ? " " : "",
                     cut);
            compared++;
            const struct cell *mv = table_cell(d, r, "moved");
            if (mv && mv->s) append(&moved, pool_printf("%s: %s", name, mv->s));
            for (int side = 0; side < 2; side++) { /* the runs left out, said where they were */
                const struct cell *rp = table_cell(d, r, side ? "run_p50s_new" : "run_p50s_base");
                if (rp && rp->s && strstr(rp->s, "(left out)"))
                    append(&left,
                           pool_printf("%s, %s runs %s", name, side ? "new" : "base", rp->s));
            }
            if (!strcmp(v->s, "faster") || !strcmp(v->s, "slower")) {
                changed++;
                if (nch == (int)(sizeof ch / sizeof ch[0])) continue;
                struct change *c = &ch[nch++];
                snprintf(c->name, sizeof c->name, "%.159s", name);
                c->slower = !strcmp(v->s, "slower");
                c->base = table_cell(d, r, "latency_p50_ns_base")->i;
                c->new = table_cell(d, r, "latency_p50_ns_new")->i;
                /* Several runs a side: the runs' centres, what the ratio is of */
                const struct cell *cb = table_cell(d, r, "p50_base_runs_ns");
                const struct cell *cn = table_cell(d, r, "p50_new_runs_ns");
                if (cb && cn && !cb->null && !cn->null) c->base = cb->i, c->new = cn->i;
                const struct cell *sp = table_cell(d, r, "speedup");
                c->lat = sp && !sp->null && sp->d > 0 ? 1 / sp->d
                         : c->base                    ? (double)c->new / (double)c->base
                                                      : 1;
                c->lo = 1 / table_cell(d, r, "speedup_hi")->d; /* latency band: 1 / speed-up */
                c->hi = 1 / table_cell(d, r, "speedup_lo")->d;
                const struct cell *bf = table_cell(d, r, "band_from");
                const struct cell *xb = table_cell(d, r, "runs_base");
                const struct cell *xn = table_cell(d, r, "runs_new");
                if (bf && bf->s && !strcmp(bf->s, "runs") && xb && xn)
                    snprintf(c->runs, sizeof c->runs, ", %lld+%lld runs", (long long)xb->i,
                             (long long)xn->i);
                else
                    snprintf(c->runs, sizeof c->runs, ", one run a side");
            } else if (!strncmp(v->s, "no clear difference", 19)) {
                /* With its ratio and band: a wide band around a large ratio is a reason to look
                 * (too few iterations, noisy runs), not a sign that nothing changed. */
                const struct cell *lat = table_cell(d, r, "latency_p50_ns_ratio");
                const struct cell *sp = table_cell(d, r, "speedup");
                const struct cell *lo = table_cell(d, r, "speedup_lo");
                const struct cell *hi = table_cell(d, r, "speedup_hi");
                double l = sp && !sp->null && sp->d > 0 ? 1 / sp->d
                           : lat && !lat->null          ? lat->d
                                                        : 0;
                if (l > 0 && lo && !lo->null && hi && !hi->null && lo->d > 0)
                    snprintf(name + strlen(name), sizeof name - strlen(name),
                             " (latency %.2fx, 95%%: %.2f-%.2fx%s)", l, 1 / hi->d, 1 / lo->d,
                             strchr(v->s, ':') ? pool_printf("; %s", strchr(v->s, ':') + 2) : "");
                append(&unclear, name);
            } else if (!strcmp(v->s, "the same within 1%")) {
                append(&same, name);
            } else if (q == 1 || !strstr(v->s, "pools")) {
                static const char lead[] = "no verdict: ";
                const char *why =
                    strncmp(v->s, lead, sizeof lead - 1) ? v->s : v->s + sizeof lead - 1;
                /* The change itself, withheld as a verdict, said as a figure: a level shift or
                 * another batch leaves it unjudged, not unseen. */
                const struct cell *b50 = table_cell(d, r, "latency_p50_ns_base");
                const struct cell *n50 = table_cell(d, r, "latency_p50_ns_new");
                char fig[160] = "";
                if (b50 && n50 && !b50->null && !n50->null && b50->i > 0) {
                    char x[32], y[32], dl[32];
                    fmt_ns(x, sizeof x, (double)b50->i);
                    fmt_ns(y, sizeof y, (double)n50->i);
                    fmt_ns(dl, sizeof dl, (double)(n50->i - b50->i));
                    snprintf(fig, sizeof fig, "latency %.2fx, p50 %s -> %s (%s%s); ",
                             (double)n50->i / (double)b50->i, x, y, n50->i >= b50->i ? "+" : "",
                             dl);
                }
                snprintf(name + strlen(name), sizeof name - strlen(name), " (%s%s)", fig, why);
                append(&none, name);
            }
        }
    }
    qsort(ch, (size_t)nch, sizeof ch[0], by_size);
    char changes[3072] = "";
    for (int i = 0; i < nch && i < 8; i++) {
        const struct change *c = &ch[i];
        char b[32], n[32], dlt[32], one[sizeof c->name + 256];
        fmt_ns(b, sizeof b, (double)c->base);
        fmt_ns(n, sizeof n, (double)c->new);
        fmt_ns(dlt, sizeof dlt, (double)(c->new - c->base));
        snprintf(one, sizeof one,
                 "%.159s %s, latency %.2fx (95%%: %.2f-%.2fx%s), p50 %s -> %s (%s%s)", c->name,
                 c->slower ? "slower" : "faster", c->lat, c->lo, c->hi, c->runs, b, n,
                 c->new >= c->base ? "+" : "", dlt);
        size_t len = strlen(changes);
        snprintf(changes + len, sizeof changes - len, "%s%s", len ? "; " : "", one);
    }
    if (changed > 8)
        snprintf(changes + strlen(changes), sizeof changes - strlen(changes),
                 "; %d more in the tables below", changed - 8);
    loop_changes(table_by_key(t, k, "series"),
                 several ? pool_printf("%lld+%lld runs", (long long)kb->i, (long long)kn->i)
                         : "one run a side",
                 changes, sizeof changes);
    struct table *s = table_new("summary", "Summary: the changes the data supports");
    s->object = 1;
    table_col(s, "changes", "Changes", COL_TEXT);
    table_col(s, "no_clear_difference", "No clear difference", COL_TEXT);
    table_col(s, "same", "The same within 1%", COL_TEXT);
    table_col(s, "no_verdict", "No verdict", COL_TEXT);
    table_col(s, "runs", "Runs", COL_TEXT);
    table_col(s, "moved", "What moved", COL_TEXT);
    table_row(s);
    /* What the bands are of (docs/compare.md): one run a side cannot know how much a second
     * run of the same program would differ, and says so. */
    const char *lt = list_text(&left);
    if (several)
        table_set_text(s, 4,
                       pool_printf("%lld base, %lld new: each phase's and series' band is of the"
                                   " runs' p50s (the other sections compare the first run of"
                                   " each side)%s%s",
                                   (long long)kb->i, (long long)kn->i,
                                   lt ? "; left out, slower than their side's other runs by 25%"
                                        " or more (a machine's slow spell): "
                                      : "",
                                   lt ? lt : ""));
    else
        table_set_text(s, 4,
                       "one a side: each band is of one run's iterations; how much a second run"
                       " of the program would differ is not known (infprof run --repeat 3 a side,"
                       " then infprof compare BASE... -- NEW...)");
    table_set_text(s, 0,
                   changes[0] ? changes
                   : compared && list_text(&none)
                       ? "none: no phase or series faster or slower by 3% past its 95% band;"
                         " some unjudged (No verdict)"
                   : compared ? "none: no phase or series is faster or slower by more than 3%"
                                " beyond its 95% band"
                              : "nothing to compare: no phase or series with iterations in both"
                                " runs (the tables below list what each run alone has)");
    const char *u = list_text(&unclear), *sm = list_text(&same), *nv = list_text(&none);
    if (u) table_set_text(s, 1, u);
    if (sm) table_set_text(s, 2, sm);
    if (nv) table_set_text(s, 3, nv);
    const char *mvd = list_text(&moved);
    if (mvd) table_set_text(s, 5, mvd);
    return s;
}
