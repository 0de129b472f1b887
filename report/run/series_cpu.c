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

void series_cpu(struct sqlite3 *db, struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++) {
        p->series.v[i].cpu_mean = p->series.v[i].off_cpu_mean = p->series.v[i].sys_mean = -1;
        p->series.v[i].faults_mean = -1;
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
void phases_warmup_off_cpu(struct sqlite3 *db, struct run_phases *p)
{
    const struct iter_cpus *c = NULL;
    for (int ph = 0; ph < p->n; ph++) {
        struct phase_info *f = &p->v[ph];
        if (f->warmup <= 0 || !f->nsteady) continue;
        if (!c && !(c = iter_cpus_get(db, p))) return;
        double extra_off = 0, extra_host = 0, extra_invol = 0, extra_vol = 0, extra_sys = 0,
               extra_faults = 0;
        for (int s = 0; s < p->series.n; s++) {
            if (p->series.v[s].phase != ph) continue;
            double off_w = 0, host_w = 0, inv_w = 0, vol_w = 0, off_s = 0, host_s = 0, inv_s = 0,
                   vol_s = 0, sys_w = 0, sys_s = 0, flt_w = 0, flt_s = 0;
            int64_t nw = 0, ns = 0, fw = 0, fs = 0; /* fw, fs: those with faults known */
            for (size_t i = 0; i < p->niters; i++) {
                const struct run_iter *x = &p->iters[i];
                const struct iter_cpu *r =
                    x->series == s && !x->captured && x->id > 0 ? iter_cpus_find(c, x->id) : NULL;
                if (!r || !r->has_cpu) continue;
                double off = (double)(x->host - r->cpu > 0 ? x->host - r->cpu : 0);
                int faults = r->faults >= 0 && r->sys >= 0;
                if (x->steady) {
                    off_s += off, host_s += (double)x->host, ns++;
                    inv_s += (double)r->ivcsw, vol_s += (double)r->vcsw;
                    if (faults) sys_s += (double)r->sys, flt_s += (double)r->faults, fs++;
                } else {
                    off_w += off, host_w += (double)x->host, nw++;
                    inv_w += (double)r->ivcsw, vol_w += (double)r->vcsw;
                    if (faults) sys_w += (double)r->sys, flt_w += (double)r->faults, fw++;
                }
            }
            if (!nw || !ns) continue;
            double k = (double)nw / (double)ns; /* the steady ones' rate, over nw iterations */
            extra_off += off_w - k * off_s, extra_host += host_w - k * host_s;
            extra_invol += inv_w - k * inv_s, extra_vol += vol_w - k * vol_s;
            if (fw && fs) /* per known reading, over the warm-up's iterations */
                extra_sys += (double)nw * (sys_w / (double)fw - sys_s / (double)fs),
                    extra_faults += (double)nw * (flt_w / (double)fw - flt_s / (double)fs);
        }
        char t[32], *out = f->warmup_cause;
        size_t n = sizeof f->warmup_cause;
        if (extra_sys >= WARMUP_OFF_MIN_NS && extra_sys >= extra_host / 4 && extra_faults >= 1) {
            size_t o = strlen(out);
            fmt_ns(t, sizeof t, extra_sys);
            snprintf(out + o, n - o,
                     "%s%.0f more page faults (%s of system time: first touches"
                     " of fresh memory)",
                     o ? "; " : "", extra_faults, t);
        }
        if (extra_off < WARMUP_OFF_MIN_NS || extra_off < extra_host / 2) continue;
        size_t o = strlen(out);
        fmt_ns(t, sizeof t, extra_off);
        long long waits = llround(extra_vol > 0 ? extra_vol : 0);
        long long preempts = llround(extra_invol > 0 ? extra_invol : 0);
        const char *why = !waits && !preempts ? "waiting or preempted"
                          : !preempts         ? "waiting (a sleep, I/O or a lock)"
                          : !waits            ? "preempted (other work had the CPU)"
                                              : pool_printf("%lld more waits (a sleep, I/O or a"
                                                                       " lock) and %lld more preemptions",
                                                            waits, preempts);
        snprintf(out + o, n - o, "%sthe thread off the CPU %s more than at the steady rate: %s",
                 o ? "; " : "", t, why);
    }
}
