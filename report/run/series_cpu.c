/*
 * series_cpu.c: each series' time on and off the CPU per steady iteration, from iteration_cpu
 * (each marked or module-call iteration's thread CPU time, read at its edges: schema 5): the
 * mean CPU time, and the mean host time less it (sleeps, waits for a lock, the GIL, I/O or a
 * synchronisation, preemption). Means, not medians: a running thread's account (getrusage
 * RUSAGE_THREAD) moves at the scheduler's ticks and switches (1-10 ms), coarse for one iteration
 * (a 10 ms sleep read 1.7 ms on the CPU by the median), right on average over many ticks; and
 * the two add up to the mean host time. Only where the steady iterations span at least
 * SERIES_CPU_MIN_SPAN_NS together: below it the split is the luck of a few ticks (60 forwards of
 * 28 us read 0 on the CPU and all 28 us off it), and it is unknown. On a shared host these move far
 * less than wall latency, so compare names the part that moved (docs/compare.md). The readings
 * come from itercpu.h (what the account still owed each iteration settled). -1 unknown:
 * too short, or no steady iteration has a reading (detected loops, older databases). With them,
 * the mean page faults and system time per steady iteration (the advice rule page_faults).
 */
#include "itercpu.h"
#include "run.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The steady iterations' host time, together, for their CPU split to be told: 50 ticks of a
 * 100 Hz scheduler clock (125 at 250 Hz), the mean's error then about a tenth or less. */
#define SERIES_CPU_MIN_SPAN_NS 500000000LL

/* The mean page faults of series s's steady iterations within 10% of its p50 (at least the
 * nearest one); -1 none with a reading. */
static double faults_near_p50(const struct run_phases *p, const struct iter_cpus *c, int s)
{
    int64_t p50 = p->series.v[s].lat_p50, best = -1;
    double sum = 0, nearest = -1;
    int64_t k = 0;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *x = &p->iters[i];
        if (x->series != s || !x->steady || x->id <= 0) continue;
        const struct iter_cpu *r = iter_cpus_find(c, x->id);
        if (!r || r->faults < 0) continue;
        int64_t d = x->lat > p50 ? x->lat - p50 : p50 - x->lat;
        if (10 * d <= p50) sum += (double)r->faults, k++;
        if (best < 0 || d < best) best = d, nearest = (double)r->faults;
    }
    return k ? sum / (double)k : nearest;
}

void series_cpu(struct sqlite3 *db, struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++) {
        p->series.v[i].cpu_mean = p->series.v[i].off_cpu_mean = p->series.v[i].sys_mean = -1;
        p->series.v[i].faults_mean = p->series.v[i].faults_at_p50 = -1;
    }
    if (!p->series.n) return;
    const struct iter_cpus *c = iter_cpus_get(db, p);
    if (!c || !c->n) return;
    for (int s = 0; s < p->series.n; s++) {
        int64_t k = 0, kf = 0;
        double cpu = 0, host = 0, faults = 0, sys = 0; /* no overflow whatever a database holds */
        for (size_t i = 0; i < p->niters; i++) {
            const struct run_iter *x = &p->iters[i];
            if (x->series != s || !x->steady || x->id <= 0) continue;
            const struct iter_cpu *r = iter_cpus_find(c, x->id);
            if (r && r->faults >= 0 && r->sys >= 0)
                faults += (double)r->faults, sys += (double)r->sys, kf++;
            if (!r || !r->has_cpu) continue;
            cpu += (double)r->cpu, host += (double)x->host, k++;
        }
        /* Faults are counted exactly, one by one: their mean wants no span. The system time is
         * the account's, as the CPU time (below). */
        if (kf) p->series.v[s].faults_mean = faults / (double)kf;
        if (kf) p->series.v[s].faults_at_p50 = faults_near_p50(p, c, s);
        if (!k || host < (double)SERIES_CPU_MIN_SPAN_NS) continue;
        if (kf) p->series.v[s].sys_mean = (int64_t)(sys / (double)kf);
        int64_t on = (int64_t)(cpu / (double)k),
                off = host > cpu ? (int64_t)((host - cpu) / (double)k) : 0;
        /* A physical bound: never more on the CPU than the series' mean latency (the split is
         * over its steady iterations, the latency's mean over its captured ones too, held to
         * their place: an iteration without a switch on the CPU throughout read 491.9 us for a
         * mean of 489.7, a third fresh-eyes check). */
        int64_t lat = p->series.v[s].lat_mean;
        if (lat > 0 && on > lat) off = 0, on = lat;
        p->series.v[s].cpu_mean = on;
        p->series.v[s].off_cpu_mean = off;
    }
}

/* What the warm-up's time off the CPU says (its Likely cause): a first forward that waited (a
 * lazy load from disk: three sleeps of 150 ms read "not visible in the data" while the thread's
 * own account showed it asleep), or that was preempted (a machine oversubscribed at the start:
 * 7.7 s of "warm-up" that was another process's). Each series' warm-up iterations against its
 * own steady ones (warm-up is judged within a series: a phase's other model, 4 ms forwards beside
 * one of 30 ms asleep, made its 3.8 ms of warm-up read 27.9 ms off the CPU), their excess summed;
 * said where the thread was off the CPU WARMUP_OFF_MIN_NS more in all and that is half or more of
 * the warm-up's extra host time, with the switches the thread's account counted past the steady
 * rate: voluntary (waits: a sleep, I/O or a lock) and involuntary (preemptions). Their counts
 * say nothing of their lengths (one preemption among 7 busy processes on 2 CPUs held a forward
 * off for 27 ms; three 80 ms sleeps came with 7 short preemptions, and "preempted" by the counts
 * alone was wrong), so where there are both, both are said. And page faults: the system time
 * the warm-up spent more (first touches of fresh memory: four 400 MB fills read "not visible in
 * the data" beside 97,700 faults and 117-292 ms of system time an iteration), where it is
 * WARMUP_OFF_MIN_NS or more and a quarter of the extra host time or more. */
#define WARMUP_OFF_MIN_NS 1000000.0
struct warm_sums { /* a series' warm-up [0] and steady [1] iterations with a reading */
    double off[2], host[2], inv[2], vol[2], sys[2], flt[2];
    int64_t n[2], nf[2]; /* nf: those with faults and system time known */
};

void phases_warmup_off_cpu(struct sqlite3 *db, struct run_phases *p)
{
    int any = 0;
    for (int ph = 0; ph < p->n; ph++) any |= p->v[ph].warmup > 0 && p->v[ph].nsteady;
    const struct iter_cpus *c = any && p->series.n ? iter_cpus_get(db, p) : NULL;
    if (!c) return;
    struct warm_sums *w = calloc((size_t)p->series.n, sizeof *w);
    if (!w) cli_fail("out of memory");
    for (size_t i = 0; i < p->niters; i++) { /* one pass: each series' sums */
        const struct run_iter *x = &p->iters[i];
        if (x->series < 0 || x->series >= p->series.n || x->captured || x->id <= 0) continue;
        const struct iter_cpu *r = iter_cpus_find(c, x->id);
        if (!r || !r->has_cpu) continue;
        struct warm_sums *a = &w[x->series];
        int k = x->steady != 0;
        a->off[k] += (double)(x->host - r->cpu > 0 ? x->host - r->cpu : 0);
        a->host[k] += (double)x->host, a->n[k]++;
        a->inv[k] += (double)r->ivcsw, a->vol[k] += (double)r->vcsw;
        if (r->faults >= 0 && r->sys >= 0)
            a->sys[k] += (double)r->sys, a->flt[k] += (double)r->faults, a->nf[k]++;
    }
    for (int ph = 0; ph < p->n; ph++) {
        struct phase_info *f = &p->v[ph];
        if (f->warmup <= 0 || !f->nsteady) continue;
        double off = 0, host = 0, inv = 0, vol = 0, sys = 0, flt = 0; /* past the steady rate */
        for (int s = 0; s < p->series.n; s++) {
            const struct warm_sums *a = &w[s];
            if (p->series.v[s].phase != ph || !a->n[0] || !a->n[1]) continue;
            double k = (double)a->n[0] / (double)a->n[1]; /* the steady ones, over the warm-up's */
            off += a->off[0] - k * a->off[1], host += a->host[0] - k * a->host[1];
            inv += a->inv[0] - k * a->inv[1], vol += a->vol[0] - k * a->vol[1];
            if (a->nf[0] && a->nf[1]) { /* per reading known, over the warm-up's iterations */
                double w = (double)a->n[0];
                sys += w * (a->sys[0] / (double)a->nf[0] - a->sys[1] / (double)a->nf[1]);
                flt += w * (a->flt[0] / (double)a->nf[0] - a->flt[1] / (double)a->nf[1]);
            }
        }
        char t[32], why[96], *out = f->warmup_cause;
        size_t n = sizeof f->warmup_cause, o = strlen(out);
        if (sys >= WARMUP_OFF_MIN_NS && sys >= host / 4 && flt >= 1) {
            fmt_ns(t, sizeof t, sys);
            o += (size_t)snprintf(out + o, n - o,
                                  "%s%.0f more page faults (%s of system time:"
                                  " first touches of fresh memory)",
                                  o ? "; " : "", flt, t);
            if (o >= n) continue;
        }
        if (off < WARMUP_OFF_MIN_NS || off < host / 2) continue;
        long long waits = llround(vol > 0 ? vol : 0), preempts = llround(inv > 0 ? inv : 0);
        if (waits && preempts)
            snprintf(why, sizeof why,
                     "%lld more waits (a sleep, I/O or a lock) and %lld more"
                     " preemptions",
                     waits, preempts);
        else
            snprintf(why, sizeof why, "%s",
                     waits      ? "waiting (a sleep, I/O or a lock)"
                     : preempts ? "preempted (other work had the CPU)"
                                : "waiting or preempted");
        fmt_ns(t, sizeof t, off);
        snprintf(out + o, n - o, "%sthe thread off the CPU %s more than at the steady rate: %s",
                 o ? "; " : "", t, why);
    }
    free(w);
}
