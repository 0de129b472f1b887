/*
 * multi_series.c: the Series line across runs, in the Summary of a report of several
 * databases. Each run's Series line states one process: its band (band.c) is of that process's
 * iterations, and a level that differs between processes is not in it. An int8 MLP against its
 * fp32 copy, one loop after the other, read "fp32 faster (95%: 1.10-1.22x)" in one process and
 * "int8 faster (95%: 1.12-1.62x)" in the next (a fresh-eyes check, 2026-11-30; plain runs flipped
 * the same way). `infprof run --repeat 3`, then `infprof report` of the three: this line gives
 * each run's ratio of the same pair and verdict (series_pair_verdict, what each run's Series
 * line says), and whether one verdict holds in every run.
 */
#include "multi.h"

#include <stdio.h>
#include <string.h>

void multi_series_facts(const struct run_phases *p, struct multi_run *r)
{
    r->npairs = 0;
    for (int i = 0; i < p->n && r->npairs < MULTI_PAIRS; i++) {
        struct series_pick k;
        if (!series_pick(p, i, &k) || !k.fast) continue;
        struct multi_pair *m = &r->pairs[r->npairs++];
        phase_short_label(&p->v[i], m->phase, sizeof m->phase);
        fmt_label_cut(m->fast, sizeof m->fast, k.fast->name[0] ? k.fast->name : "(unnamed)", 40);
        fmt_label_cut(m->slow, sizeof m->slow, k.slow->name[0] ? k.slow->name : "(unnamed)", 40);
        struct pair_verdict pv;
        series_pair_verdict(k.fast, k.slow, &pv);
        m->ratio = pv.ratio;
        m->judged = pv.has_band;
        m->v = pv.v;
    }
}

/* Run r's pair of a against b in phase ph, or NULL. */
static const struct multi_pair *pair_of(const struct multi_run *r, const char *ph, const char *a,
                                        const char *b)
{
    for (int k = 0; k < r->npairs; k++) {
        const struct multi_pair *m = &r->pairs[k];
        if (!strcmp(m->phase, ph) && ((!strcmp(m->fast, a) && !strcmp(m->slow, b)) ||
                                      (!strcmp(m->fast, b) && !strcmp(m->slow, a))))
            return m;
    }
    return NULL;
}

/* One pair across the runs that have it: "no_grad/off: int8 against fp32 in 3 runs: 37.98x,
 * 35.10x, 40.20x; faster in all 3", a named the one faster in the most runs. */
static size_t pair_words(const struct multi_data *d, const struct multi_pair *first, char *out,
                         size_t n)
{
    int runs = 0, fa = 0, fb = 0;
    for (int i = 0; i < d->n; i++) {
        const struct multi_pair *m =
            d->runs[i].helper ? NULL : pair_of(&d->runs[i], first->phase, first->fast, first->slow);
        if (!m) continue;
        runs++;
        int faster = m->judged && m->v == VERDICT_FASTER;
        if (faster && !strcmp(m->fast, first->fast)) fa++;
        if (faster && strcmp(m->fast, first->fast)) fb++;
    }
    if (runs < 2) return 0;
    const char *a = fb > fa ? first->slow : first->fast, *b = fb > fa ? first->fast : first->slow;
    int fast = fb > fa ? fb : fa, slow = fb > fa ? fa : fb;
    size_t o = (size_t)snprintf(out, n, "%s: %s against %s in %d runs:", first->phase, a, b, runs);
    for (int i = 0, c = 0; i < d->n && o < n; i++) {
        const struct multi_pair *m =
            d->runs[i].helper ? NULL : pair_of(&d->runs[i], first->phase, a, b);
        if (!m) continue;
        double x = !strcmp(m->fast, a) ? m->ratio : m->ratio > 0 ? 1 / m->ratio : 0;
        o += (size_t)snprintf(out + o, n - o, "%s %.2fx", c++ ? "," : "", x);
    }
    int none = runs - fast - slow;
    if (o < n)
        o += (size_t)snprintf(
            out + o, n - o, "; %s",
            fast == runs ? pool_printf("faster in all %d", runs)
            : !fast && !slow
                ? pool_printf("no verdict of speed in any (no clear difference or none)")
                : pool_printf("faster in %d, slower in %d, neither in %d: no verdict holds in"
                              " every run",
                              fast, slow, none));
    return o < n ? o : n - 1;
}

const char *multi_series_line(const struct multi_data *d)
{
    char buf[2048];
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].helper) continue;
        for (int k = 0; k < d->runs[i].npairs && o + 200 < sizeof buf; k++) {
            const struct multi_pair *m = &d->runs[i].pairs[k];
            int seen = 0; /* told already, from an earlier run's */
            for (int j = 0; j < i && !seen; j++)
                seen = !d->runs[j].helper && pair_of(&d->runs[j], m->phase, m->fast, m->slow);
            if (seen) continue;
            char w[600];
            if (!pair_words(d, m, w, sizeof w)) continue;
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", o ? "; " : "", w);
        }
    }
    return o ? pool_printf("%s", buf) : NULL;
}
