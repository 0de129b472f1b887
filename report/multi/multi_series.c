/*
 * multi_series.c: the Series line across runs, in the Summary of a report of several
 * databases. Each run's Series line states one process: its band (band.c) is of that process's
 * iterations, and a level that differs between processes is not in it. An int8 MLP against its
 * fp32 copy, one loop after the other, read "fp32 faster (95%: 1.10-1.22x)" in one process and
 * "int8 faster (95%: 1.12-1.62x)" in the next (a fresh-eyes check, 2026-11-30; plain runs flipped
 * the same way). `infprof run --repeat 3`, then `infprof report` of the three: for each pair a
 * run's Series line compares, this line gives the ratio in every run that ran both
 * configurations, each run's verdict (series_pair_verdict, what its Series line would say), and
 * whether one verdict holds in every run. A run whose own line compared another pair still
 * counts (three labels of one model: a run's "a faster than c" is refuted by the runs where b
 * was slowest, a second fresh-eyes check).
 */
#include "multi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The series of phase i in p with steady iterations, the pair k's two first (so that they are
 * kept past MULTI_SERIES), into m; the pairs' verdicts. */
static void phase_series(const struct run_phases *p, int i, const struct series_pick *k,
                         struct multi_phase_series *m)
{
    const struct series_info *v[MULTI_SERIES];
    int n = 0;
    v[n++] = k->fast, v[n++] = k->slow;
    for (int s = 0; s < p->series.n && n < MULTI_SERIES; s++) {
        const struct series_info *x = &p->series.v[s];
        if (x->phase == i && x->nsteady && x->lat_p50 > 0 && x != k->fast && x != k->slow)
            v[n++] = x;
    }
    memset(m, 0, sizeof *m);
    phase_short_label(&p->v[i], m->phase, sizeof m->phase);
    m->n = n, m->fast = 0, m->slow = 1;
    for (int a = 0; a < n; a++) {
        fmt_label_cut(m->name[a], sizeof m->name[a], v[a]->name[0] ? v[a]->name : "(unnamed)", 40);
        m->p50[a] = v[a]->lat_p50;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            if (n > MULTI_JUDGED && !(a == 0 && b == 1)) continue; /* bootstraps: the pair's */
            int af = v[a]->lat_p50 <= v[b]->lat_p50;
            struct pair_verdict pv;
            series_pair_verdict(af ? v[a] : v[b], af ? v[b] : v[a], &pv);
            if (!pv.has_band) continue;
            /* pv.v is of the faster p50 against the slower: FASTER means it is faster. */
            int fa = af ? a : b, sl = af ? b : a;
            m->judged[fa][sl] = m->judged[sl][fa] = 1;
            m->v[fa][sl] = (signed char)pv.v;
            m->v[sl][fa] = (signed char)(pv.v == VERDICT_FASTER   ? VERDICT_SLOWER
                                         : pv.v == VERDICT_SLOWER ? VERDICT_FASTER
                                                                  : pv.v);
        }
}

void multi_series_facts(struct sqlite3 *db, const struct run_phases *p, struct multi_run *r)
{
    char *cmd = db_meta_text(db, "command");
    r->command = cmd ? pool_printf("%s", cmd) : NULL;
    free(cmd);
    r->nmodes = mode_verdicts(p, r->modes, MULTI_PHASES);
    r->npairs = 0;
    for (int i = 0; i < p->n && r->npairs < MULTI_PHASES; i++) {
        struct series_pick k;
        if (series_pick(p, i, &k) && k.fast) phase_series(p, i, &k, &r->pairs[r->npairs++]);
    }
}

/* Index of series `name` in run r's phase `ph`, or -1; *m its phase. */
static int find(const struct multi_run *r, const char *ph, const char *name,
                const struct multi_phase_series **m)
{
    for (int k = 0; k < r->npairs; k++)
        if (!strcmp(r->pairs[k].phase, ph))
            for (int a = 0; a < r->pairs[k].n; a++)
                if (!strcmp(r->pairs[k].name[a], name)) return *m = &r->pairs[k], a;
    return -1;
}

/* Run r's ratio of a against b (b's p50 over a's) and verdict of a (-1: none judged); 0 where
 * it ran not both. */
static int in_run(const struct multi_run *r, const char *ph, const char *a, const char *b,
                  double *ratio, int *v)
{
    const struct multi_phase_series *m = NULL, *m2 = NULL;
    int i = find(r, ph, a, &m), j = find(r, ph, b, &m2);
    if (i < 0 || j < 0 || m != m2) return 0;
    *ratio = (double)m->p50[j] / (double)m->p50[i];
    *v = m->judged[i][j] ? m->v[i][j] : -1;
    return 1;
}

/* Whether one verdict holds in every run: of `runs`, faster in `fast`, slower in `slow`. */
static const char *held(int runs, int fast, int slow)
{
    int none = runs - fast - slow;
    if (fast == runs) return runs == 2 ? "faster in both" : pool_printf("faster in all %d", runs);
    if (slow == runs) return runs == 2 ? "slower in both" : pool_printf("slower in all %d", runs);
    if (!fast && !slow)
        return "no verdict of speed in any (no clear difference, or too few to tell)";
    return pool_printf("%s%s%s: no verdict holds in every run",
                       fast ? pool_printf("faster in %d", fast) : "",
                       slow ? pool_printf("%sslower in %d", fast ? ", " : "", slow) : "",
                       none ? pool_printf(", neither in %d", none) : "");
}

/* One pair across the runs that ran both: "no_grad/off: int8 against fp32 in 3 of 3 runs:
 * 37.98x, 35.10x, 40.20x; faster in all 3", a named the one faster in the most runs. */
static size_t pair_words(const struct multi_data *d, const char *ph, const char *x, const char *y,
                         int compared, char *out, size_t n)
{
    int runs = 0, fx = 0, fy = 0;
    double ratio;
    int v;
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].helper || !in_run(&d->runs[i], ph, x, y, &ratio, &v)) continue;
        runs++;
        fx += v == VERDICT_FASTER, fy += v == VERDICT_SLOWER;
    }
    if (runs < 2) return 0;
    const char *a = fy > fx ? y : x, *b = fy > fx ? x : y;
    int fast = fy > fx ? fy : fx, slow = fy > fx ? fx : fy;
    size_t o =
        (size_t)snprintf(out, n, "%s: %s against %s in %d of %d runs:", ph, a, b, runs, compared);
    for (int i = 0, c = 0; i < d->n && o < n; i++)
        if (!d->runs[i].helper && in_run(&d->runs[i], ph, a, b, &ratio, &v))
            o += (size_t)snprintf(out + o, n - o, "%s %.2fx", c++ ? "," : "", ratio);
    if (o < n) o += (size_t)snprintf(out + o, n - o, "; %s", held(runs, fast, slow));
    return o < n ? o : n - 1;
}

const char *multi_series_line(const struct multi_data *d)
{
    char buf[2048];
    size_t o = 0;
    buf[0] = 0;
    int compared = 0, other_commands = 0;
    const char *cmd = NULL;
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].helper) continue;
        compared++;
        const char *c = d->runs[i].command ? d->runs[i].command : "";
        if (!cmd) cmd = c;
        other_commands |= strcmp(cmd, c) != 0;
    }
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].helper) continue;
        for (int k = 0; k < d->runs[i].npairs && o + 200 < sizeof buf; k++) {
            const struct multi_phase_series *m = &d->runs[i].pairs[k];
            const char *x = m->name[m->fast], *y = m->name[m->slow];
            int seen = 0; /* told already: an earlier run's line compared it */
            for (int j = 0; j < i && !seen; j++)
                for (int q = 0; q < d->runs[j].npairs && !seen; q++) {
                    const struct multi_phase_series *e = &d->runs[j].pairs[q];
                    const char *ex = e->name[e->fast], *ey = e->name[e->slow];
                    seen =
                        !d->runs[j].helper && !strcmp(e->phase, m->phase) &&
                        ((!strcmp(ex, x) && !strcmp(ey, y)) || (!strcmp(ex, y) && !strcmp(ey, x)));
                }
            if (seen) continue;
            char w[600];
            if (!pair_words(d, m->phase, x, y, compared, w, sizeof w)) continue;
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", o ? "; " : "", w);
        }
    }
    if (o && other_commands && o + 100 < sizeof buf) /* a label is no configuration elsewhere */
        snprintf(buf + o, sizeof buf - o,
                 " (the runs ran other commands: a name may be other work in each)");
    return o ? pool_printf("%s", buf) : NULL;
}

const char *multi_modes_line(const struct multi_data *d)
{
    char buf[1024];
    size_t o = 0;
    int compared = 0;
    for (int i = 0; i < d->n; i++) compared += !d->runs[i].helper;
    for (int i = 0; i < d->n; i++) {
        if (d->runs[i].helper) continue;
        for (int k = 0; k < d->runs[i].nmodes && o + 200 < sizeof buf; k++) {
            const char *ac = d->runs[i].modes[k].autocast;
            int seen = 0; /* told already, from an earlier run's */
            for (int j = 0; j < i && !seen; j++)
                for (int q = 0; q < d->runs[j].nmodes && !seen; q++)
                    seen = !d->runs[j].helper && !strcmp(d->runs[j].modes[q].autocast, ac);
            if (seen) continue;
            int runs = 0, fast = 0, slow = 0;
            char r[400];
            size_t ro = 0;
            r[0] = 0;
            for (int j = i; j < d->n; j++)
                for (int q = 0; !d->runs[j].helper && q < d->runs[j].nmodes; q++) {
                    const struct mode_verdict *m = &d->runs[j].modes[q];
                    if (strcmp(m->autocast, ac)) continue;
                    runs++;
                    fast += m->band && m->v == VERDICT_FASTER;
                    slow += m->band && m->v == VERDICT_SLOWER;
                    if (ro + 16 < sizeof r)
                        ro += (size_t)snprintf(r + ro, sizeof r - ro, "%s%.2fx", ro ? ", " : "",
                                               m->ratio);
                }
            if (runs < 2) continue;
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "%sautocast %s in %d of %d runs: %s no_grad; %s", o ? "; " : "",
                                  ac, runs, compared, r, held(runs, fast, slow));
        }
    }
    return o ? pool_printf("%s", buf) : NULL;
}
