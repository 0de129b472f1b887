/*
 * compare_summary.c: the first screen of `infprof compare` (compare.h): from the phases' and
 * series' verdicts (compare_verdict.c), the changes beyond their 95% band (largest first, with
 * the band, what it is of, both p50s and the difference), the loop rates that changed where the
 * latency did not say as much, those with no clear difference, those the same within 1%, those
 * with no verdict (why), what the bands are of (the runs a side, and any left out) and what moved
 * in each series' iteration.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
                       pool_printf("%lld base, %lld new: each phase's and series' p50, band and"
                                   " verdict are of the runs' p50s (the other figures compare the"
                                   " first run of each side)%s%s",
                                   (long long)kb->i, (long long)kn->i,
                                   lt ? "; left out, slower than their side's other runs by 25%"
                                        " or more (a machine's slow spell): "
                                      : "",
                                   lt ? lt : ""));
    else
        table_set_text(s, 4,
                       "one a side: each band is of one run's iterations and how far its level"
                       " wanders; how much a second run of the program would differ is not known"
                       " (infprof run --repeat 3 a side, then infprof compare BASE... -- NEW...)");
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
