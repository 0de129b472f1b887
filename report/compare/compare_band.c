/*
 * compare_band.c: how a change weighs against the variation between runs, for `infprof compare
 * BASE... -- NEW...` (compare.h). Two processes of one unchanged program differ by more than
 * either one's iterations say (the GPU's clocks, the allocator, the kernels cuDNN picked, the
 * host), so with several runs a side the band comes from the runs:
 *
 *   each run gives one figure per series (or phase): the p50 of its steady latencies, as the
 *   report prints it (a run far slower than its side's others left out). On their logs, Welch's
 *   t: the speed-up is exp(mean log base - mean log new), its 95%
 *   band exp(that -+ t(0.975, df) x se), se^2 = var_base / k_base + var_new / k_new, df
 *   Welch-Satterthwaite's (rounded down); one run on a side takes the other side's variance
 *   (se^2 = var x (1 / k_base + 1 / k_new), df = k - 1).
 *
 * The verdict reads that band as compare_verdict.c reads any (faster or slower only past the 3%
 * noise floor), and never calls a change smaller than the runs' own spread (the widest gap
 * between two runs of one side, in logs) faster or slower. The loop rate is weighed the same
 * way from each run's rate. Also here: what a series' change is made of (its parts per
 * iteration, each side's median over its runs).
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run r of a side: 0 the first, then its more runs. */
static const struct run_phases *side_run(const struct compare_side *s, int r)
{
    return r ? &s->more[r - 1] : &s->phases;
}

const struct series_info *series_in(const struct run_phases *p, const char *phase, const char *name)
{
    /* The Series table shows a series without a name as "(unnamed)" (sec_series.c). */
    const char *want = strcmp(name, "(unnamed)") ? name : "";
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        if (!strcmp(p->v[s->phase].label, phase) && !strcmp(s->name, want)) return s;
    }
    return NULL;
}

/* One run's p50 steady latency of its phase (name NULL) or series, as `infprof report` prints it
 * (rstats_p50: the lower of the middle two); 0 when it has none. */
static double run_p50_of(const struct run_phases *p, const char *phase, const char *name)
{
    int64_t *v = NULL;
    size_t n = 0;
    if (!name) {
        for (int i = 0; i < p->n && !v; i++) {
            const struct phase_info *ph = &p->v[i];
            if (strcmp(ph->label, phase) || !ph->nsteady) continue;
            if (!(v = malloc(ph->ncounted * sizeof *v))) cli_fail("out of memory");
            memcpy(v, ph->counted_lat, ph->ncounted * sizeof *v);
            n = ph->ncounted;
        }
    } else {
        const struct series_info *s = series_in(p, phase, name);
        if (s && s->nsteady) {
            if (!(v = malloc((s->nits + 1) * sizeof *v))) cli_fail("out of memory");
            n = series_steady_latencies(s, v);
        }
    }
    double m = n ? (double)rstats_p50(v, n) : 0;
    free(v);
    return m;
}

int side_run_p50s(const struct compare_side *s, const char *phase, const char *name, double *m)
{
    int k = 0;
    for (int r = 0; r <= s->nmore; r++) {
        double x = run_p50_of(side_run(s, r), phase, name);
        if (x > 0) m[k++] = x;
    }
    return k;
}

int side_run_rates(const struct compare_side *s, const char *phase, const char *name, double *m)
{
    int k = 0, unit = -1;
    for (int r = 0; r <= s->nmore; r++) {
        const struct series_info *x = series_in(side_run(s, r), phase, name);
        int items;
        double v = x ? series_delivered_per_s(x, &items) : 0;
        if (!(v > 0)) continue;
        if (unit < 0) unit = items;
        if (items != unit) continue; /* per item and per iteration do not mix */
        m[k++] = v;
    }
    return k;
}

/* Mean, sample variance (-1 with one) and range of m[0..k), of their logs where logs is set. */
static void mean_var(const double *m, int k, int logs, double *mean, double *var, double *range)
{
    double s = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < k; i++) {
        double l = logs ? log(m[i]) : m[i];
        s += l, lo = fmin(lo, l), hi = fmax(hi, l);
    }
    *mean = s / k;
    double q = 0;
    for (int i = 0; i < k; i++) {
        double l = logs ? log(m[i]) : m[i];
        q += (l - *mean) * (l - *mean);
    }
    *var = k > 1 ? q / (k - 1) : -1;
    *range = k > 1 ? hi - lo : 0;
}

/* Welch's t: the half-width of the 95% band of a difference of two means, from each side's
 * sample variance and count (two or more a side). */
static double welch_half(double vb, int kb, double vn, int kn)
{
    double qb = vb / kb, qn = vn / kn, den = qb * qb / (kb - 1) + qn * qn / (kn - 1);
    double df = den > 0 ? (qb + qn) * (qb + qn) / den : kb + kn - 2;
    return rstats_t975((int)floor(df)) * sqrt(qb + qn);
}

int runs_band(const double *mb, int kb, const double *mn, int kn, struct runs_band *out)
{
    memset(out, 0, sizeof *out);
    out->kb = kb, out->kn = kn;
    if (kb < 2 || kn < 2) return 0; /* a side's spread unknown (compare.h) */
    double ab, vb, rb, an, vn, rn;
    mean_var(mb, kb, 1, &ab, &vb, &rb);
    mean_var(mn, kn, 1, &an, &vn, &rn);
    double d = ab - an, h = welch_half(vb, kb, vn, kn);
    out->centre_b = exp(ab), out->centre_n = exp(an);
    out->ratio = exp(d);
    out->lo = exp(d - h);
    out->hi = exp(d + h);
    out->spread = fmax(rb, rn);
    out->within_spread = fabs(d) <= out->spread;
    return 1;
}

/* A run that stands out above its side's others (the outlier rule, rstats.h): a machine that
 * ran one process at half speed (this VM's slow mode read 52.50 ms against 25.66 and 26.19) is
 * not the program. Only with three runs or more, and only slower ones. */
#define RUN_OUT_SIGMAS 3
#define RUN_OUT_SHARE  0.25

int runs_left_out(const double *m, int k, int *out)
{
    int n = 0;
    for (int i = 0; i < k; i++) out[i] = 0;
    if (k < 3) return 0;
    double *v = malloc((size_t)k * sizeof *v);
    if (!v) cli_fail("out of memory");
    for (int i = 0; i < k; i++) v[i] = m[i];
    double med = rstats_median_f(v, (size_t)k);
    for (int i = 0; i < k; i++) v[i] = m[i];
    double sigma = RSTATS_SIGMA_PER_MAD * rstats_mad_f(v, (size_t)k, med);
    free(v);
    for (int i = 0; i < k; i++)
        if (rstats_above(m[i], med, sigma, RUN_OUT_SIGMAS, RUN_OUT_SHARE)) out[i] = 1, n++;
    return n;
}

const char *runs_ns(const double *m, int k)
{
    char buf[400] = "";
    size_t o = 0;
    for (int i = 0; i < k && o + 24 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%.0f", i ? " " : "", m[i]);
    return pool_printf("%s", buf);
}

const char *runs_text(const double *m, int k, const int *out)
{
    char buf[400] = "";
    size_t o = 0;
    for (int i = 0; i < k && o + 60 < sizeof buf; i++) {
        char x[32];
        fmt_ns(x, sizeof x, m[i]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s%s", i ? " " : "", x,
                              out && out[i] ? " (left out)" : "");
    }
    return pool_printf("%s", buf);
}

/* ---- what a change is made of ------------------------------------------------------------- */

enum { PART_CPU, PART_OFF_CPU, PART_GPU, PART_BETWEEN, PARTS };
/* Read as the parts are, said beside them (faults_moved), never a part that moved. */
enum { PART_FAULTS = PARTS, PART_SYS };
static const char *const part_words[PARTS] = {"on the CPU", "off the CPU", "GPU kernels",
                                              "between iterations"};

/* A part of one run's series per steady iteration (ns), -1 unknown. */
static double part_of(const struct series_info *s, int part)
{
    switch (part) {
    case PART_CPU:
        return (double)s->cpu_mean;
    case PART_OFF_CPU:
        return (double)s->off_cpu_mean;
    case PART_GPU:
        return s->gpu_time >= 0 && s->nsteady ? (double)s->gpu_time / (double)s->nsteady : -1;
    case PART_FAULTS:
        return s->faults_mean;
    case PART_SYS:
        return (double)s->sys_mean;
    default:
        return s->gaps ? (double)s->gap_p50 : -1;
    }
}

/* A side's part: the median over its runs that know it, -1 none; *range: how far apart its
 * runs are (0 with one); v, *k: their values. */
static double side_part(const struct compare_side *s, const char *phase, const char *name, int part,
                        double *range, double *v, int *k)
{
    double lo = INFINITY, hi = -INFINITY, w[1 + 64];
    *k = 0;
    for (int r = 0; r <= s->nmore && *k < 65; r++) {
        const struct series_info *x = series_in(side_run(s, r), phase, name);
        double y = x ? part_of(x, part) : -1;
        if (y >= 0) v[*k] = w[*k] = y, (*k)++, lo = fmin(lo, y), hi = fmax(hi, y);
    }
    *range = *k > 1 ? hi - lo : 0;
    return *k ? rstats_median_f(w, (size_t)*k) : -1;
}

/* Several runs a side: whether the 95% band of the difference of the sides' means (Welch, as
 * runs_band but on the values themselves: a part may be about 0) leaves 0 out. Two runs a side
 * that know it are a weak sample: an unchanged program read "off the CPU +2.24ms" from runs of
 * 0.04, 0.15 against 1.34, 3.34 ms (its third runs not knowing it). */
static int parts_band_clear(const double *b, int kb, const double *n, int kn)
{
    if (kb < 2 || kn < 2) return 0; /* as runs_band */
    double mb, vb, rb, mn, vn, rn;
    mean_var(b, kb, 0, &mb, &vb, &rb);
    mean_var(n, kn, 0, &mn, &vn, &rn);
    return fabs(mn - mb) > welch_half(vb, kb, vn, kn);
}

/* " (page faults an iteration 4064 -> 10176, system time +15.20ms: glibc's heap, its layout or
 * its MALLOC_ settings; page_faults)": where the series' page faults per steady iteration
 * changed by FAULTS_MOVED or more, and by half as many again or with system time that moved as a
 * part does (PARTS_MOVED_SHARE of the base p50). An unchanged conv net read "faster, 0.67x" and
 * "slower, 1.32x" between runs that differed only there, glibc trimming its heap every forward
 * in some runs and not others, and What moved named the time on the CPU alone (a fresh-eyes
 * check; a second one found 8,013 -> 10,110 faults, +10 ms of system time, unnamed by the ratio
 * alone). *sys_moved: the system time moved so (said alone where no part moved). */
#define FAULTS_MOVED 64.0
static size_t faults_moved(const struct compare_side *b, const struct compare_side *n,
                           const char *phase, const char *bname, const char *nname, double base_p50,
                           int *sys_moved, char *out, size_t size)
{
    double r, v[65];
    int k;
    *sys_moved = 0;
    double fb = side_part(b, phase, bname, PART_FAULTS, &r, v, &k);
    double fn = side_part(n, phase, nname, PART_FAULTS, &r, v, &k);
    double sb = side_part(b, phase, bname, PART_SYS, &r, v, &k);
    double sn = side_part(n, phase, nname, PART_SYS, &r, v, &k);
    if (fb < 0 || fn < 0 || fabs(fn - fb) < FAULTS_MOVED) return 0;
    int sys = sb >= 0 && sn >= 0;
    *sys_moved = sys && fabs(sn - sb) >= PARTS_MOVED_SHARE * base_p50 &&
                 fabs(sn - sb) >= PARTS_MOVED_MIN_NS && (sn - sb) * (fn - fb) > 0;
    if (!*sys_moved && fmax(fb, fn) < 1.5 * fmin(fb, fn)) return 0;
    char words[48] = "", x[32];
    if (sys) {
        fmt_ns(x, sizeof x, fabs(sn - sb));
        snprintf(words, sizeof words, ", system time %s%s", sn >= sb ? "+" : "-", x);
    }
    int w = snprintf(out, size,
                     "page faults an iteration %.0f -> %.0f%s: glibc's heap, its layout or its"
                     " MALLOC_ settings; page_faults",
                     fb, fn, words);
    return w < 0 ? 0 : (size_t)w < size ? (size_t)w : size - 1;
}

const char *series_parts_moved(const struct compare_side *b, const struct compare_side *n,
                               const char *phase, const char *bname, const char *nname,
                               double base_p50)
{
    struct {
        int part;
        double d;
    } moved[PARTS];
    int k = 0;
    for (int part = 0; part < PARTS; part++) {
        double rx, ry, vx[65], vy[65];
        int kx, ky;
        double x = side_part(b, phase, bname, part, &rx, vx, &kx);
        double y = side_part(n, phase, nname, part, &ry, vy, &ky);
        if (x < 0 || y < 0) continue;
        double d = y - x;
        if (fabs(d) < PARTS_MOVED_SHARE * base_p50 || fabs(d) < PARTS_MOVED_MIN_NS) continue;
        /* Several runs: no further than two runs of one side are apart is no move (an unchanged
         * program's off-CPU time moved 2.28 ms on a preempted VM, its runs as far apart), nor
         * one whose band between the runs reaches 0. */
        if (fabs(d) <= fmax(rx, ry)) continue;
        if ((b->nmore || n->nmore) && !parts_band_clear(vx, kx, vy, ky)) continue;
        int at = k++;
        while (at > 0 && fabs(moved[at - 1].d) < fabs(d)) moved[at] = moved[at - 1], at--;
        moved[at].part = part, moved[at].d = d;
    }
    char why[192] = "";
    int sys_moved;
    faults_moved(b, n, phase, bname, nname, base_p50, &sys_moved, why, sizeof why);
    if (!k && sys_moved) return pool_printf("%s", why); /* the faults alone, their time said */
    if (!k) return NULL;
    char buf[256] = "";
    size_t o = 0;
    for (int i = 0; i < k; i++) {
        char x[32];
        fmt_ns(x, sizeof x, fabs(moved[i].d));
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %s%s", i ? ", " : "",
                              part_words[moved[i].part], moved[i].d > 0 ? "+" : "-", x);
    }
    return pool_printf("%s per iteration%s%s%s", buf, why[0] ? " (" : "", why, why[0] ? ")" : "");
}
