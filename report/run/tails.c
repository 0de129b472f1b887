/*
 * tails.c: the slow iterations of each series and their causes (tails.h). The slow and typical
 * iterations are known from the latencies alone; then each table that holds a time is read once
 * and each row added to the window (slow or typical iteration, its thread) it falls in, found by
 * binary search: garbage collections, Python module calls, operators (depth 0), allocator
 * reports, CUDA API calls and kernels. A long run reads no more than its rows.
 */
#include "tails.h"
#include "tails_kind.h"
#include "memrows.h"
#include "kernrows.h"
#include "cudnn_run.h"
#include "energy.h"
#include "itercpu.h"
#include "timeline.h"
#include "runfacts.h"

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The outlier rule's constants for a slow iteration (rstats.h): over the median of the 11 around
 * it by more than TAIL_SIGMAS robust deviations and TAIL_SHARE of that median. */
#define TAIL_SIGMAS 4
#define TAIL_SHARE  0.25
#define TAIL_SPLIT_GAP 1.3 /* two levels in a window: a gap this wide between them */

struct win {
    int64_t s, host_end, end, tid; /* host window [s, host_end], GPU to end */
    int tail, slow;                /* index in run_tails.v; a slow one (else typical) */
    int module;                    /* the iteration is a module call itself */
    /* What it held, ns (counts where said). */
    double gc, mod, ops, new_ops, known_ops, sync, copies, malloc_api, kern, new_kern, known_kern;
    double cudnn, cudnn_n;      /* cuDNN algorithm searches and plan builds: host time, calls */
    double ops_outside;         /* operators outside the model's forward (module calls) */
    double bytes_outside;       /* bytes allocated outside it */
    int64_t id;                 /* iterations.id, 0 detected */
    double cpu, vcsw, ivcsw;    /* its thread's CPU time, context switches (iteration_cpu; cpu
                                   -1 unknown) */
    double faults, sys;         /* its page faults and system time (the same reading); -1
                                   unknown (an iteration_cpu row from before 2026-11-29) */
    double allocs, alloc_bytes; /* allocator reports of the thread: count, bytes */
    double alloc_max;           /* the largest of them */
    double beside;              /* host time another series' iterations ran beside it (union) */
    int beside_series;          /* the series that ran beside it longest, -1 none */
};

struct wins {
    struct win *v;
    size_t n;
    struct interval *mods; /* the model's forwards inside the windows (module calls), by start */
    int64_t *mod_tid;
    size_t nmods;
};

static int cmp_win(const void *a, const void *b)
{
    const struct win *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* The window of thread tid (0: any) holding time t, NULL none. gpu: up to its GPU end. */
static struct win *win_at(struct wins *w, int64_t t, int64_t tid, int gpu)
{
    size_t lo = rstats_upper_i64(w->v, w->n, sizeof *w->v, offsetof(struct win, s), t);
    for (size_t k = lo; k-- > 0 && lo - k <= 8;) { /* windows of other threads may overlap */
        struct win *x = &w->v[k];
        if ((!tid || x->tid == tid) && t < (gpu ? x->end : x->host_end)) return x;
    }
    return NULL;
}

/* ---- which iterations --------------------------------------------------------------------- */

struct cand {
    const struct run_iter *it;
    int64_t lat;   /* its latency, a captured one's divided by what the capture cost it */
    int64_t index; /* in the series, warm-up counted */
    double dist;
};

/* By distance, then by place in the series (the order a stable sort by distance gives). */
static int by_dist(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int d = (x->dist > y->dist) - (x->dist < y->dist);
    return d ? d : (x->index > y->index) - (x->index < y->index);
}

/* v[0, min(k, n)) made the k first of v in by_dist's order, in no order (a selection). */
static void select_by_dist(struct cand *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
    while (k < n && hi - lo > 1) {
        struct cand pivot = v[lo + (hi - lo) / 2], t;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            int c = by_dist(&v[i], &pivot);
            if (c < 0)
                t = v[lt], v[lt++] = v[i], v[i++] = t;
            else if (c > 0)
                t = v[--gt], v[gt] = v[i], v[i] = t;
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k > gt)
            lo = gt;
        else
            break; /* [0, k) holds the k first */
    }
}

/* The same, those k in by_dist's order: where a sort of all of a run's 200,000 iterations took a
 * twentieth of its report for the few hundred it reads (issue 49). */
static void first_by_dist(struct cand *v, size_t n, size_t k)
{
    if (k > n) k = n;
    select_by_dist(v, n, k);
    if (k) qsort(v, k, sizeof *v, by_dist);
}

/* Whether slow iteration `index` is one of ix[from, n) (ascending), and where. */
static int64_t slow_at(const int64_t *ix, int64_t from, int64_t n, int64_t index);

/* The slow iterations recur with gaps: at a fixed step from one of the first 64 (any step between
 * two of them), most of that step's places in the series slow (60% or more: a forward after a
 * wait on every 10th input that a warm cache sometimes hides, 86 of 99 places, which the run
 * above breaks at its first miss and called "at no regular interval"), a third of the slow ones
 * or more, and far more of them than chance would put there were the slow ones spread at random
 * (p each): the start and step whose count lies most standard deviations past chance's, 4 or
 * more (every 2nd place held more slow ones than every 10th there, all the 10ths being odd).
 * Sets *first, *step, *hits, *places; 0 none. */
static int periodic_with_gaps(const struct series_tail *t, int64_t span, double p, int64_t *first,
                              int64_t *step, int64_t *hits, int64_t *places)
{
    const int64_t *ix = t->slow_index;
    int64_t n = t->nslow < 64 ? t->nslow : 64, best = 0, best_f = 0, best_d = 0, best_of = 0;
    double best_z = 0; /* how far past chance, in standard deviations: every 2nd holds more */
    if (p <= 0 || p >= 1 || span <= 0) return 0;
    /* Which places are slow, a bit each: a step's places are tested in constant time, or its
     * slow ones counted from the list where they are fewer (a binary search a place took 15% of
     * the report of a 200,000-forward run; issue 49). */
    uint64_t *slow = calloc((size_t)(span + 63) / 64, sizeof *slow);
    if (!slow) cli_fail("out of memory");
    for (int64_t q = 0; q < t->nslow; q++)
        if (ix[q] >= 0 && ix[q] < span) slow[ix[q] / 64] |= 1ull << (ix[q] % 64);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            int64_t d = ix[j] - ix[i];
            if (d < 2) continue;
            int64_t h = 0, of = ix[i] < span ? (span - 1 - ix[i]) / d + 1 : 0;
            if (of <= t->nslow - i) {
                for (int64_t want = ix[i]; want < span; want += d)
                    h += (int64_t)(slow[want / 64] >> (want % 64) & 1);
            } else {
                for (int64_t q = i; q < t->nslow && ix[q] < span; q++)
                    h += (ix[q] - ix[i]) % d == 0;
            }
            double z = ((double)h - (double)of * p) / sqrt((double)of * p * (1 - p));
            if (z > best_z || (z == best_z && d < best_d))
                best_z = z, best = h, best_f = ix[i], best_d = d, best_of = of;
        }
    free(slow);
    if (best < 5 || 10 * best < 6 * best_of || 3 * best < t->nslow || best_z < 4) return 0;
    *first = best_f, *step = best_d, *hits = best, *places = best_of;
    return 1;
}

static int64_t slow_at(const int64_t *ix, int64_t from, int64_t n, int64_t index)
{
    while (from < n) {
        int64_t mid = from + (n - from) / 2;
        if (ix[mid] == index) return mid;
        if (ix[mid] < index)
            from = mid + 1;
        else
            n = mid;
    }
    return -1;
}

/* Whether the slow iterations recur: the longest run of them a fixed step apart (any step
 * between two of the first 64, the run followed through all of them: counted among those 64
 * alone, 200 iterations waiting on every 10th read "at no regular interval"; on a tie the slower
 * members, then the smaller step), when it holds
 * 3 or more and either it holds a third of them and chance would hardly make one so long (fewer
 * than 0.2 such runs expected were the slow ones spread at random over the series: a loaded
 * machine's many slow iterations once gave "every 3rd from #13" among 14, and "every 5th, and 148
 * others" among 160), or its members are all slower than every other slow one (a recurring
 * cause among noise: the program's every 10th at 180 ms among 20 ms ones). */
static void pattern_of(struct series_tail *t, int64_t span)
{
    int64_t n = t->nslow < 64 ? t->nslow : 64, *ix = t->slow_index, best_d = 0, best = 0;
    int64_t first = 0;
    double best_sum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            int64_t d = ix[j] - ix[i], len = 1, want = ix[i] + d;
            double sum = (double)t->slow_lat[i];
            if (d < 2) continue;
            int64_t q = i + 1;
            for (; q < n && ix[q] <= want; q++)
                if (ix[q] == want) len++, want += d, sum += (double)t->slow_lat[q];
            if (q == n) /* on past the first 64 */
                for (int64_t at; (at = slow_at(ix, q, t->nslow, want)) >= 0; q = at + 1)
                    len++, want += d, sum += (double)t->slow_lat[at];
            if (len > best || (len == best && (sum > best_sum || (sum == best_sum && d < best_d))))
                best = len, best_d = d, first = ix[i], best_sum = sum;
        }
    double in_min = INFINITY, out_max = 0;
    for (int64_t q = 0, want = first; q < t->nslow; q++) {
        int member = best >= 3 && ix[q] == want && (want - first) / best_d < best;
        if (member) want += best_d;
        if (member)
            in_min = fmin(in_min, (double)t->slow_lat[q]);
        else
            out_max = fmax(out_max, (double)t->slow_lat[q]);
    }
    /* Runs of this length expected by chance: every slow start and step that fits the span,
     * each with the chance that the next best - 1 at that step are slow too. */
    double chance = 0, p = span > 0 ? fmin(1, (double)t->nslow / (double)span) : 1;
    for (int64_t i = 0; best >= 3 && i < n && chance < 1; i++)
        for (int64_t d = 2; ix[i] + (best - 1) * d < span; d++)
            chance += pow(p, (double)(best - 1));
    int64_t others = t->nslow - best, of = 0;
    /* The unbroken run, unless the step with gaps holds more of the slow ones (every 5th from
     * #0 with #20 missed read "every 5th from #0, and 2 others", the others #25 and #30). */
    int run = best >= 3 && ((chance < 0.2 && 3 * best >= t->nslow) || in_min > out_max);
    int64_t g_first = 0, g_step = 0, g_hits = 0, g_of = 0;
    if ((!run || others) && periodic_with_gaps(t, span, p, &g_first, &g_step, &g_hits, &g_of) &&
        (!run || g_hits > best))
        first = g_first, best_d = g_step, best = g_hits, of = g_of, others = t->nslow - best;
    else if (!run)
        best = 0;
    if (best) {
        const char *th = best_d % 100 / 10 == 1 ? "th"
                         : best_d % 10 == 1     ? "st"
                         : best_d % 10 == 2     ? "nd"
                         : best_d % 10 == 3     ? "rd"
                                                : "th";
        snprintf(t->pattern, sizeof t->pattern, "every %lld%s from #%lld%s%s", (long long)best_d,
                 th, (long long)first,
                 of ? pool_printf(" in %lld of %lld", (long long)best, (long long)of) : "",
                 others
                     ? pool_printf(", and %lld other%s", (long long)others, others > 1 ? "s" : "")
                     : "");
        return;
    }
    if (ix[t->nslow - 1] < t->nslow + 3) {
        snprintf(t->pattern, sizeof t->pattern, "at the series' start");
        return;
    }
    snprintf(t->pattern, sizeof t->pattern, t->nslow == 1 ? "once" : "at no regular interval");
}

/* The level around c[i]: the median of the 11 steady iterations around it, or, where slow ones
 * alternate with fast ones (every 2nd forward at 4x: each window's median is either level by an
 * iteration's chance, so no slow one stood out and the section said "(none)" under a p95 of 4x
 * the p50; a fresh-eyes check), the median of the fast ones among them. Two levels, not a spread:
 * sorted, the window has a gap of TAIL_SPLIT_GAP between two neighbours with 3 or more on each
 * side, wider than either side spans (a lognormal spread of 0.3, or inputs of random length, has
 * none: a first version that took every one under the median / 1.25 as fast read 29 of 200 such
 * forwards slow; 1.5x missed 8 ms and 5 ms in turn with 10% of noise), and the window changes
 * between the two 3 times or more (3 slow and 3 fast in turn; a level shift changes once, a burst
 * of slow ones twice: they stay what they were). */
static int64_t local_level(const struct cand *c, size_t n, size_t i, int64_t *win, size_t *split)
{
    size_t a = i >= 5 ? i - 5 : 0, b = i + 6 < n ? i + 6 : n, m = 0;
    for (size_t q = a; q < b; q++) { /* sorted, by insertion: 11 at most */
        size_t at = m++;
        while (at && win[at - 1] > c[q].lat) win[at] = win[at - 1], at--;
        win[at] = c[q].lat;
    }
    int64_t med = m % 2 ? win[m / 2] : (win[m / 2 - 1] + win[m / 2]) / 2, fast_max = -1;
    double widest = TAIL_SPLIT_GAP;
    /* win[g - 1] | win[g]: 3 or more each side, the gap wider than either side is (two levels
     * further apart than each is wide: inputs of random length 8-48, their times spread 6x,
     * left a 1.3x gap among 11 by chance, and 36 of 100 forwards at their own length's time
     * read slow against a "typical" of the shortest, 18.52 ms where the p50 was 37.58). */
    for (size_t g = 3; g + 3 <= m; g++) {
        if (win[g - 1] <= 0 || win[0] <= 0) continue;
        double gap = (double)win[g] / (double)win[g - 1];
        double wide =
            fmax((double)win[g - 1] / (double)win[0], (double)win[m - 1] / (double)win[g]);
        if (gap >= widest && gap > wide) widest = gap, fast_max = win[g - 1];
    }
    if (fast_max < 0) return med;
    size_t nfast = 0, changes = 0;
    for (size_t q = a; q < b; q++) {
        changes += q > a && (c[q].lat <= fast_max) != (c[q - 1].lat <= fast_max);
        nfast += c[q].lat <= fast_max;
    }
    if (changes < 3) return med;
    ++*split;
    return (win[(nfast - 1) / 2] + win[nfast / 2]) / 2; /* the fast ones' median */
}

/* Which series have a tail; their slow and typical iterations become windows. */
static void classify(sqlite3 *db, const struct run_phases *p, struct run_tails *r, struct wins *w)
{
    size_t cap = 0;
    for (int s = 0; s < p->series.n && r->n < REPORT_MAX_SERIES; s++) {
        const struct series_info *se = &p->series.v[s];
        /* Every steady iteration, those whose operators were captured too, at their latency
         * less what the capture cost them (se->capture_f): a slow one is never hidden by having
         * been sampled (ResNet-18's autotuning every 8th call on the H200: 2 of 6 were
         * captured, and the tail read "4 of 31", every 8th from #27 where it was from #11). */
        size_t all = se->nsteady + (size_t)se->captured_apart;
        if (all < TAIL_MIN_STEADY) continue;
        /* Forwards found at other sizes (a server's batches of any size): the larger ones are
         * slower for it, not a tail (a fresh-eyes check's batches of 1-16 read "1534 of 3999
         * iterations slow", against a typical 2.29 ms under the p50 of 5.62): none is judged,
         * and the Summary's Tail line says so. */
        if (p->v[se->phase].detected.sizes_vary) continue;
        struct cand *c = malloc(all * sizeof *c);
        int64_t *dev = malloc(all * sizeof *dev);
        if (!c || !dev) cli_fail("out of memory");
        size_t n = 0;
        int64_t index = 0;
        for (size_t i = 0; i < p->niters; i++) {
            const struct run_iter *it = &p->iters[i];
            if (it->series != s) continue;
            if ((it->steady || it->captured) && n < all)
                c[n++] = (struct cand){it, it->steady ? it->lat : series_captured_as(se, it->lat),
                                       index, 0};
            index++;
        }
        /* Slow against its neighbours (the median of the 11 steady iterations around it): a
         * machine that slows for a while (another process) shifts the level, it makes no tail. */
        double *local = malloc((n ? n : 1) * sizeof *local);
        int64_t *win = malloc(11 * sizeof *win);
        if (!local || !win) cli_fail("out of memory");
        size_t split = 0;
        for (size_t i = 0; i < n; i++) local[i] = (double)local_level(c, n, i, win, &split);
        free(win);
        /* The series' own p50 and p99 (the Series table's, one computation). */
        int64_t p50 = se->lat_p50, p99 = se->lat_p99;
        for (size_t i = 0; i < n; i++) dev[i] = llabs(c[i].lat - (int64_t)local[i]);
        double sigma = RSTATS_SIGMA_PER_MAD * (double)rstats_median(dev, n);
        /* Where slow ones alternate with fast ones (a quarter of the levels or more taken from
         * the fast ones), nearly half are slow, and the deviations' median is their own distance:
         * the spread is that of those under 1.25x their level alone, the noise a slow one stands
         * out of (at least a quarter of the iterations). Elsewhere it is not asked: the few 1.3x
         * ones after each of a series' autotuning calls are its noise, not its tail. */
        size_t nlow = 0;
        for (size_t i = 0; 4 * split >= n && i < n; i++)
            if ((double)c[i].lat < local[i] * (1 + TAIL_SHARE))
                dev[nlow++] = llabs(c[i].lat - (int64_t)local[i]);
        if (4 * nlow >= n && nlow)
            sigma = fmin(sigma, RSTATS_SIGMA_PER_MAD * (double)rstats_median(dev, nlow));
        int64_t nslow = 0;
        for (size_t i = 0; i < n; i++) {
            int slow = rstats_above((double)c[i].lat, local[i], sigma, TAIL_SIGMAS, TAIL_SHARE);
            c[i].dist = slow ? -(double)c[i].lat : fabs((double)c[i].lat - local[i]) / local[i];
            nslow += c[i].dist < 0;
        }
        /* And the iterations of a kind slow as a group (tails_kind.h): every 5th request at 9x
         * the pixels, 2x slower, on a machine whose typical forwards ranged 1.5x ("once: #6"). */
        const struct run_iter **its = malloc((n ? n : 1) * sizeof *its);
        int64_t *lats = malloc((n ? n : 1) * sizeof *lats);
        char *kind = malloc(n ? n : 1);
        if (!its || !lats || !kind) cli_fail("out of memory");
        for (size_t i = 0; i < n; i++) its[i] = c[i].it, lats[i] = c[i].lat;
        if (tails_kind(mem_rows_get(db, p), its, lats, local, n, TAIL_SHARE, kind))
            for (size_t i = 0; i < n; i++)
                if (kind[i] && c[i].dist >= 0) c[i].dist = -(double)c[i].lat, nslow++;
        free(its), free(lats), free(kind);
        if (!p50 || !nslow || !((double)p99 > 1.3 * (double)p50 || nslow >= 2)) {
            free(c), free(dev), free(local);
            continue;
        }
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 4;
            if (!(r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v))) cli_fail("out of memory");
        }
        struct series_tail *t = &r->v[r->n];
        memset(t, 0, sizeof *t);
        t->series = s, t->steady = (int64_t)n, t->nslow = nslow, t->p50 = p50, t->p99 = p99;
        t->slow_index = malloc((size_t)nslow * 3 * sizeof(int64_t));
        if (!t->slow_index) cli_fail("out of memory");
        t->slow_start = t->slow_index + nslow, t->slow_lat = t->slow_start + nslow;
        double total = 0, over = 0, slow_sum = 0;
        int64_t k = 0, span = 0; /* the series' iterations up to its last steady one */
        for (size_t i = 0; i < n; i++) {
            total += (double)c[i].lat;
            if (c[i].index + 1 > span) span = c[i].index + 1;
            if (c[i].dist >= 0) continue;
            over += (double)c[i].lat - local[i], slow_sum += (double)c[i].lat;
            t->slow_index[k] = c[i].index, t->slow_start[k] = c[i].it->start;
            t->slow_lat[k++] = c[i].lat;
        }
        free(local);
        t->cost_pct = total > 0 ? 100 * over / total : 0;
        /* What they took, and what their neighbours did: the extra the causes explain. */
        t->slow_mean = slow_sum / (double)nslow, t->extra = over / (double)nslow;
        t->typical_mean = t->slow_mean - t->extra;
        pattern_of(t, span);
        /* The windows: every slow one (the slowest TAIL_SLOW_MAX) and the typical ones. The
         * slow ones first (a distance below 0), the slowest TAIL_SLOW_MAX of them in order; then
         * the TAIL_TYPICAL nearest their neighbours, and one more, in order. */
        size_t ns = (size_t)nslow, until = ns + TAIL_TYPICAL + 1 < n ? ns + TAIL_TYPICAL + 1 : n;
        select_by_dist(c, n, ns);
        first_by_dist(c, ns, TAIL_SLOW_MAX);
        first_by_dist(c + ns, n - ns, TAIL_TYPICAL + 1);
        size_t want = 0;
        for (size_t i = 0; i < until; i++) {
            int slow = c[i].dist < 0;
            if (slow ? (int64_t)want >= TAIL_SLOW_MAX : i - (size_t)nslow >= TAIL_TYPICAL) {
                if (!slow) break;
                continue;
            }
            if (!slow && c[i].dist > fmax(sigma / (double)p50, 0.02) && i > (size_t)nslow + 4)
                break; /* typical: near their neighbours (at least 5 of them) */
            if (w->n == cap) {
                cap = cap ? 2 * cap : 256;
                if (!(w->v = realloc(w->v, cap * sizeof *w->v))) cli_fail("out of memory");
            }
            const struct run_iter *it = c[i].it;
            w->v[w->n++] = (struct win){.s = it->start,
                                        .host_end = it->start + it->host,
                                        .end = it->start + it->lat,
                                        .tid = it->tid,
                                        .tail = r->n,
                                        .slow = slow,
                                        .module = it->source == 5,
                                        .id = it->id,
                                        .cpu = -1,
                                        .faults = -1,
                                        .sys = -1,
                                        .beside_series = -1};
            want += slow;
        }
        r->n++;
        free(c), free(dev);
    }
    if (w->n) qsort(w->v, w->n, sizeof *w->v, cmp_win);
}

/* ---- what each window held ------------------------------------------------------------------ */

/* The overlap of [s, s + d] with the window's host part. */
static double host_overlap(const struct win *x, int64_t s, int64_t d)
{
    int64_t a = s > x->s ? s : x->s, b = s + d < x->host_end ? s + d : x->host_end;
    return b > a ? (double)(b - a) : 0;
}

static void read_gc(sqlite3 *db, struct wins *w)
{
    if (!db_has_table(db, "gc_pauses")) return;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, dur, tid FROM gc_pauses");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 1);
        struct win *x = win_at(w, s + d / 2, sqlite3_column_int64(st, 2), 0);
        if (x) x->gc += host_overlap(x, s, d);
    }
    sqlite3_finalize(st);
}

/* The model's forwards inside marked iterations: Python module calls (iterations, source 5). */
static void read_modules(sqlite3 *db, struct wins *w)
{
    size_t cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, dur, tid FROM iterations WHERE source = 5"
                                      " ORDER BY start");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 1);
        int64_t tid = sqlite3_column_int64(st, 2);
        struct win *x = win_at(w, s, tid, 0);
        if (!x || x->module || (s == x->s && s + d == x->host_end)) continue;
        x->mod += host_overlap(x, s, d);
        if (w->nmods == cap) {
            cap = cap ? 2 * cap : 256;
            w->mods = realloc(w->mods, cap * sizeof *w->mods);
            w->mod_tid = realloc(w->mod_tid, cap * sizeof *w->mod_tid);
            if (!w->mods || !w->mod_tid) cli_fail("out of memory");
        }
        w->mods[w->nmods] = (struct interval){s, s + d}, w->mod_tid[w->nmods++] = tid;
    }
    sqlite3_finalize(st);
}

/* Time t of thread tid falls in the model's forward (a module call inside a window). */
static int in_forward(const struct wins *w, int64_t t, int64_t tid)
{
    size_t lo = 0, hi = w->nmods;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->mods[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0 && lo - k <= 8;)
        if (w->mod_tid[k] == tid && t < w->mods[k].end) return 1;
    return 0;
}

/* n allocations of `bytes` in all, the largest `big`, made at t by thread tid: its window's. */
static void allocs_at(struct wins *w, int64_t t, int64_t tid, double n, double bytes, double big)
{
    struct win *x = win_at(w, t, tid, 1);
    if (!x) return;
    x->allocs += n, x->alloc_bytes += bytes, x->alloc_max = fmax(x->alloc_max, big);
    if (w->nmods && !in_forward(w, t, x->tid)) x->bytes_outside += bytes;
}

static void read_memory(sqlite3 *db, const struct run_phases *p, struct wins *w)
{
    const struct mem_rows *m = mem_rows_get(db, p);
    for (size_t i = 0; i < m->n; i++) {
        const struct mem_row *r = &m->v[i];
        if (r->bytes > 0) allocs_at(w, r->ts, r->tid, 1, (double)r->bytes, (double)r->bytes);
    }
    /* Reports folded by the writer: a fold lies inside one forward iteration (its first report's
     * time places it). */
    for (size_t i = 0; i < m->nfolds; i++) {
        const struct mem_fold *f = &m->folds[i];
        if (f->allocs > 0)
            allocs_at(w, f->start, f->tid, (double)f->allocs, (double)f->alloc_bytes,
                      (double)f->largest[0]);
    }
}

static void read_api(sqlite3 *db, struct wins *w)
{
    if (!db_has_table(db, "cuda_api")) return;
    sqlite3_stmt *st = db_prepare(db, "SELECT a.start, a.dur, a.tid, s.value FROM cuda_api a"
                                      " JOIN strings s ON s.id = a.name_id");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 1);
        struct win *x = win_at(w, s, sqlite3_column_int64(st, 2), 0);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        if (!x || !name) continue;
        double o = host_overlap(x, s, d);
        if (strstr(name, "Synchronize"))
            x->sync += o;
        else if (strstr(name, "Memcpy"))
            x->copies += o;
        else if (strstr(name, "Malloc") || strstr(name, "MemAlloc") || !strcmp(name, "cudaFree") ||
                 !strncmp(name, "cuMemFree", 9))
            x->malloc_api += o;
    }
    sqlite3_finalize(st);
}

/* cuDNN's algorithm searches and plan builds in the windows (cudnn.benchmark autotuning a shape
 * it has not seen: on the H200, a new input size every 8th call took 290-390 ms against 2 ms). */
static void read_cudnn(sqlite3 *db, const struct run_phases *p, struct wins *w)
{
    const struct cudnn_searches *c = cudnn_searches_get(db, p);
    for (size_t i = 0; i < c->n; i++) {
        int64_t s = c->v[i].start, d = c->v[i].dur;
        struct win *x = win_at(w, s, c->v[i].tid, 0);
        if (!x) continue;
        x->cudnn += host_overlap(x, s, d), x->cudnn_n++;
    }
}

/* Each marked or module-call iteration's thread: its CPU time and context switches
 * (itercpu.h: a blocked gap's CPU given back to the iterations before it). */
static void read_cpu(sqlite3 *db, const struct run_phases *p, struct wins *w)
{
    const struct iter_cpus *c = iter_cpus_get(db, p);
    for (size_t i = 0; c && i < w->n; i++) {
        const struct iter_cpu *x = w->v[i].id ? iter_cpus_find(c, w->v[i].id) : NULL;
        if (!x) continue;
        w->v[i].cpu = (double)x->cpu;
        w->v[i].vcsw = (double)x->vcsw;
        w->v[i].ivcsw = (double)x->ivcsw;
        if (x->faults >= 0 && x->sys >= 0)
            w->v[i].faults = (double)x->faults, w->v[i].sys = (double)x->sys;
    }
}

/* Operators (depth 0) or kernels, keyed by name: each row's window, name and time. */
struct krow {
    struct win *x;
    int64_t key;
    double dur;
};

static int by_tail_key(const void *a, const void *b)
{
    const struct krow *x = a, *y = b;
    if (x->x->tail != y->x->tail) return x->x->tail - y->x->tail;
    return (x->key > y->key) - (x->key < y->key);
}

/* The names that differ most, per tail: new ones by their time in the slow iterations, known
 * ones by their extra time there. */
#define TOP_NAMES 3
struct top {
    int64_t key[TOP_NAMES];
    double v[TOP_NAMES];
};

static void top_add(struct top *t, int64_t key, double v)
{
    if (v <= 0) return;
    for (int i = 0; i < TOP_NAMES; i++)
        if (v > t->v[i]) {
            memmove(&t->key[i + 1], &t->key[i], (TOP_NAMES - 1 - i) * sizeof *t->key);
            memmove(&t->v[i + 1], &t->v[i], (TOP_NAMES - 1 - i) * sizeof *t->v);
            t->key[i] = key, t->v[i] = v;
            return;
        }
}

struct keyed {
    struct top fresh[REPORT_MAX_SERIES], longer[REPORT_MAX_SERIES];
};

/* Rows sorted by tail and name: a name the typical iterations ran is known, else new. */
static void split_keyed(struct krow *v, size_t n, const int *nslow, const int *ntyp, int kernels,
                        struct keyed *k)
{
    if (n) qsort(v, n, sizeof *v, by_tail_key);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double s = 0, t = 0;
        int typical = 0;
        for (; j < n && v[j].x->tail == v[i].x->tail && v[j].key == v[i].key; j++) {
            typical |= !v[j].x->slow;
            if (v[j].x->slow)
                s += v[j].dur;
            else
                t += v[j].dur;
        }
        int tail = v[i].x->tail;
        for (size_t q = i; q < j; q++) {
            struct win *x = v[q].x;
            if (kernels)
                *(typical ? &x->known_kern : &x->new_kern) += v[q].dur;
            else
                *(typical ? &x->known_ops : &x->new_ops) += v[q].dur;
        }
        double ms = nslow[tail] ? s / nslow[tail] : 0, mt = ntyp[tail] ? t / ntyp[tail] : 0;
        if (typical)
            top_add(&k->longer[tail], v[i].key, ms - mt);
        else
            top_add(&k->fresh[tail], v[i].key, ms);
        i = j;
    }
}

/* The outermost operators (sql: start, dur, name id, thread) in the windows, by host overlap. */
static size_t read_keyed(sqlite3 *db, const char *sql, struct wins *w, struct krow **out)
{
    size_t n = 0, cap = 0;
    struct krow *v = NULL;
    sqlite3_stmt *st = db_prepare(db, sql);
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 1);
        struct win *x = win_at(w, s, sqlite3_column_int64(st, 3), 0);
        if (!x) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            if (!(v = realloc(v, cap * sizeof *v))) cli_fail("out of memory");
        }
        v[n++] = (struct krow){x, sqlite3_column_int64(st, 2), host_overlap(x, s, d)};
        x->ops += v[n - 1].dur;
        if (w->nmods && !in_forward(w, s, x->tid)) x->ops_outside += v[n - 1].dur;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

/* The kernels (those of the kernels view) in the windows, keyed by name, from the run model. */
static size_t read_kernels(sqlite3 *db, const struct run_phases *p, struct wins *w,
                           struct krow **out)
{
    const struct kern_rows *kr = kern_rows_get(db, p);
    size_t n = 0, cap = 0;
    struct krow *v = NULL;
    for (size_t j = 0; j < kr->n; j++) {
        const struct kern_row *k = &kr->v[j];
        if (k->sig < 0) continue;
        struct win *x = win_at(w, k->start, 0, 1);
        if (!x) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            if (!(v = realloc(v, cap * sizeof *v))) cli_fail("out of memory");
        }
        v[n++] = (struct krow){x, kr->sigs[k->sig].name_id, (double)k->dur};
        x->kern += (double)k->dur;
    }
    *out = v;
    return n;
}

/* "aten::conv2d, aten::add" from string ids, each cut to fit. */
static void names_of(sqlite3 *db, const struct top *t, char *out, size_t size)
{
    out[0] = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT value FROM strings WHERE id = ?");
    for (int i = 0; i < TOP_NAMES && t->v[i] > 0; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, t->key[i]);
        if (!db_step(st)) continue;
        const char *s = (const char *)sqlite3_column_text(st, 0);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%.80s", len ? ", " : "", s ? s : "?");
    }
    sqlite3_finalize(st);
}

/* Another series' iterations on another thread during each window's host part: their union,
 * and the series beside it longest. Two models served by two threads take turns on the CPUs (and
 * share the memory's bandwidth): a fresh-eyes check's server forwarded its image model in 18 ms
 * alone and in 39 ms beside its text model's, 33 ms of them overlapped, where the Tail said the
 * thread was off the CPU and not why. */
/* An iteration this long (host time) is walked apart: a first forward of a minute would have
 * every window walk all the iterations that began since it did. */
#define TAIL_BESIDE_LONG 1000000000LL

struct side {
    int64_t s, e, tid;
    int series;
};

static int by_side_start(const void *a, const void *b)
{
    const struct side *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* Add another series' iteration q to window x's overlaps (clipped to its host part). */
static void side_add(const struct win *x, int me, const struct side *q, struct side **buf,
                     size_t *nbuf, size_t *cap)
{
    int64_t cs = q->s > x->s ? q->s : x->s, ce = q->e < x->host_end ? q->e : x->host_end;
    if (q->series == me || q->tid == x->tid || ce <= cs) return;
    if (*nbuf == *cap && !(*buf = realloc(*buf, (*cap = *cap ? 2 * *cap : 64) * sizeof **buf)))
        cli_fail("out of memory");
    (*buf)[(*nbuf)++] = (struct side){cs, ce, q->tid, q->series};
}

static void read_beside(const struct run_phases *p, const struct run_tails *r, struct wins *w)
{
    if (p->series.n < 2 || !p->niters || !w->n) return;
    struct side *v = malloc(p->niters * sizeof *v), *lng = NULL, *buf = NULL;
    if (!v) cli_fail("out of memory");
    size_t n = 0, nl = 0, cl = 0, cap = 0;
    int64_t longest = 0;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *it = &p->iters[i];
        if (it->series < 0 || it->host <= 0) continue;
        struct side one = {it->start, it->start + it->host, it->tid, it->series};
        if (it->host >= TAIL_BESIDE_LONG) {
            side_add(&(struct win){.s = INT64_MIN, .host_end = INT64_MAX, .tid = -1}, -1, &one,
                     &lng, &nl, &cl);
            continue;
        }
        v[n++] = one;
        if (it->host > longest) longest = it->host;
    }
    qsort(v, n, sizeof *v, by_side_start);
    for (size_t i = 0; i < w->n; i++) {
        struct win *x = &w->v[i];
        int me = r->v[x->tail].series;
        size_t nbuf = 0, lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].s < x->s - longest)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t q = lo; q < n && v[q].s < x->host_end; q++)
            side_add(x, me, &v[q], &buf, &nbuf, &cap);
        for (size_t q = 0; q < nl; q++) side_add(x, me, &lng[q], &buf, &nbuf, &cap);
        if (nl) qsort(buf, nbuf, sizeof *buf, by_side_start);
        /* Their union (in order of start), and the one beside it longest. */
        int64_t cur_s = 0, cur_e = 0, best = 0;
        double sum = 0;
        for (size_t q = 0; q < nbuf; q++) {
            if (buf[q].e - buf[q].s > best)
                best = buf[q].e - buf[q].s, x->beside_series = buf[q].series;
            if (!q || buf[q].s > cur_e) {
                sum += (double)(cur_e - cur_s);
                cur_s = buf[q].s, cur_e = buf[q].e;
            } else if (buf[q].e > cur_e) {
                cur_e = buf[q].e;
            }
        }
        x->beside = sum + (double)(cur_e - cur_s);
    }
    free(v), free(lng), free(buf);
}

/* The series beside tail k's slow windows longest most often; -1 none. */
static int beside_most(const struct wins *w, int k)
{
    int seen[REPORT_MAX_SERIES] = {0}, most = -1;
    for (size_t i = 0; i < w->n; i++) {
        int s = w->v[i].beside_series;
        if (w->v[i].tail != k || !w->v[i].slow || s < 0 || s >= REPORT_MAX_SERIES) continue;
        if (++seen[s] > (most >= 0 ? seen[most] : 0)) most = s;
    }
    return most;
}

/* ---- the causes ----------------------------------------------------------------------------- */

#define MIB                    (1024.0 * 1024.0)
#define TAIL_CPU_RESOLUTION_NS 4e6

struct means {
    double n, lat, host, gc, mod, ops, new_ops, known_ops, sync, copies, malloc_api, new_kern,
        known_kern, allocs, alloc_bytes, ops_outside, bytes_outside, kern, alloc_max, cudnn,
        cudnn_n, beside, off_cpu, vcsw, ivcsw, off_waited,
        ncpu;                    /* off_waited: off_cpu of the iterations with a voluntary switch */
    double faults, sys, nfaults; /* page faults and system time, over the nfaults that have them */
    double n_new, bytes_new; /* the iterations that ran operators new to the typical ones */
    double n_gc;             /* the iterations the garbage collector ran in */
};

static void add_means(struct means *m, const struct win *x)
{
    m->n++, m->lat += (double)(x->end - x->s), m->host += (double)(x->host_end - x->s);
    m->gc += x->gc, m->mod += x->mod, m->ops += x->ops, m->new_ops += x->new_ops;
    m->known_ops += x->known_ops, m->sync += x->sync, m->copies += x->copies;
    m->malloc_api += x->malloc_api, m->new_kern += x->new_kern, m->known_kern += x->known_kern;
    m->allocs += x->allocs, m->alloc_bytes += x->alloc_bytes, m->ops_outside += x->ops_outside;
    m->bytes_outside += x->bytes_outside, m->kern += x->kern, m->alloc_max += x->alloc_max;
    m->cudnn += x->cudnn, m->cudnn_n += x->cudnn_n, m->beside += x->beside;
    if (x->new_ops > 0) m->n_new++, m->bytes_new += x->alloc_bytes;
    if (x->gc > 0) m->n_gc++;
    if (x->cpu >= 0) {
        double off = run_off_cpu((double)(x->host_end - x->s), x->cpu, x->vcsw, x->ivcsw);
        m->off_cpu += off, m->off_waited += x->vcsw > 0 ? off : 0;
        m->vcsw += x->vcsw, m->ivcsw += x->ivcsw, m->ncpu++;
    }
    if (x->faults >= 0) m->faults += x->faults, m->sys += x->sys, m->nfaults++;
}

static void div_means(struct means *m)
{
    double *f = &m->lat, n = m->n > 0 ? m->n : 1, nc = m->ncpu > 0 ? m->ncpu : 1;
    for (double *q = f; q < &m->off_cpu; q++) *q /= n;
    m->off_cpu /= nc, m->vcsw /= nc, m->ivcsw /= nc, m->off_waited /= nc;
    double nf = m->nfaults > 0 ? m->nfaults : 1;
    m->faults /= nf, m->sys /= nf;
}

static void cause(struct series_tail *t, int which, const char *key, double extra, const char *top,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static const char *const titles[][2] = {
    {"gc", "garbage collection"},
    {"outside_forward", "Python outside the model's forward"},
    {"host_no_operator", "host time outside any operator"},
    {"new_operators", "operators the typical iterations did not run"},
    {"large_allocation", "a large temporary allocation"},
    {"new_input_shape", "a new input shape"},
    {"longer_operators", "the same operators, longer"},
    {"preempted", "the thread preempted"},
    {"page_faults", "page faults"},
    {"off_cpu", "the thread off the CPU (waiting, or switched out)"},
    {"synchronisation", "CUDA synchronisations"},
    {"copies", "cudaMemcpy"},
    {"cuda_malloc", "cudaMalloc and cudaFree"},
    {"cudnn_search", "cuDNN autotuning (algorithm searches and plan builds)"},
    {"gpu_idle", "the GPU idle, waiting for the host"},
    {"new_kernels", "kernels the typical iterations did not run"},
    {"longer_kernels", "the same kernels, longer"},
    {"gpu_clock", "the GPU's clock lowered (power or thermal throttling, or a clock change)"},
};

/* A cause, kept when it explains enough of the extra latency. */
static void cause(struct series_tail *t, int which, const char *key, double extra, const char *top,
                  const char *fmt, ...)
{
    /* Shares are of the slow windows' latency over the typical ones', the same windows the
     * causes' times are read in (their extra over their neighbours, t->extra, may differ). */
    double of = t->window_extra > 0 ? t->window_extra : t->extra;
    if (!(of > 0) || extra < TAIL_MIN_SHARE * of || extra < 20000) return;
    struct tail_cause_figure *c = &t->c[t->ncauses++];
    /* No cause explains more than all of the extra (one read 100.2%, the windows' edges apart). */
    c->cause = which, c->key = key, c->title = key, c->extra_ns = extra;
    c->share = extra < of ? extra / of : 1;
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        if (!strcmp(titles[i][0], key)) c->title = titles[i][1];
    snprintf(c->top, sizeof c->top, "%s", top ? top : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
}

static int by_extra(const void *a, const void *b)
{
    double x = ((const struct tail_cause_figure *)a)->extra_ns;
    double y = ((const struct tail_cause_figure *)b)->extra_ns;
    return (x < y) - (x > y);
}

/* The operators' causes: host time with none running, new operators (a large allocation among
 * them), the same ones longer (a new input shape when the same allocations grew). */
static void causes_of_operators(sqlite3 *db, struct series_tail *t, int k, const struct means *s,
                                const struct means *m, const struct keyed *kd, int forward,
                                double off_extra, double outside_off)
{
    char names[512];
    double so = forward ? fmax(0, s->mod - s->ops - (off_extra - outside_off))
                        : fmax(0, s->host - s->ops - s->gc - off_extra);
    double mo = forward ? fmax(0, m->mod - m->ops) : fmax(0, m->host - m->ops - m->gc);
    /* The off-CPU extra that time with no operator could not hold fell inside operators: an
     * operator preempted runs longer by it. Taken out of the operators' extra, as out of the
     * time outside them (a preempted loop read "the same operators ran longer" 95.7% and
     * "preempted" 92.3% of one extra, longer operators first; a fresh-eyes check). */
    double off_left = forward ? off_extra - outside_off : off_extra;
    double raw_no = forward ? fmax(0, s->mod - s->ops) : fmax(0, s->host - s->ops - s->gc);
    double in_ops = fmax(0, off_left - fmin(off_left, raw_no));
    cause(t, TAIL_NO_OPERATOR, "host_no_operator", so - mo, NULL,
          "host time %swith no operator running (Python, the GIL): %.2f ms vs %.2f ms",
          forward ? "in the forward " : "", so / 1e6, mo / 1e6);
    /* Over the slow iterations that ran the new operators (others may be slow for causes of
     * their own, a loaded machine's). */
    double more_bytes = (s->n_new > 0 ? s->bytes_new / s->n_new : 0) - m->alloc_bytes;
    names_of(db, &kd[0].fresh[k], names, sizeof names);
    if (more_bytes >= 16 * MIB)
        cause(t, TAIL_NEW_OPERATORS, "large_allocation", s->new_ops, names,
              "operators the typical iterations did not run, allocating %.1f MiB more where"
              " they ran: %s",
              more_bytes / MIB, names);
    else
        cause(t, TAIL_NEW_OPERATORS, "new_operators", s->new_ops, names,
              "operators the typical iterations did not run: %s", names);
    names_of(db, &kd[0].longer[k], names, sizeof names);
    double ratio = m->alloc_bytes > 0 ? s->alloc_bytes / m->alloc_bytes : 0;
    int same_count = m->allocs > 0 && fabs(s->allocs / m->allocs - 1) <= 0.1;
    if (ratio >= 1.2 && same_count)
        cause(t, TAIL_LONGER_OPERATORS, "new_input_shape", s->known_ops - m->known_ops - in_ops,
              names,
              "a new input shape: the same operators on larger tensors (the same allocations,"
              " %.2fx the bytes): %s",
              ratio, names);
    else
        cause(t, TAIL_LONGER_OPERATORS, "longer_operators", s->known_ops - m->known_ops - in_ops,
              names, "the same operators ran longer%s: %s",
              in_ops > 0 ? " than their thread's time off the CPU explains" : "", names);
}

/* A slow iteration's SM clock under the typical ones' by more than this share: the clock, not
 * the kernels, made them longer. */
#define TAIL_CLOCK_DROP 0.10

/* The GPU's causes: idle waiting for the host, kernels new or longer, and of those longer the
 * part a lower SM clock explains (clock_s, clock_m: the slow and typical iterations' mean SM
 * clock in MHz from the energy readings, <= 0 unknown). */
static void causes_of_gpu(sqlite3 *db, struct series_tail *t, int k, const struct means *s,
                          const struct means *m, const struct keyed *kd, double clock_s,
                          double clock_m)
{
    char names[512];
    /* The GPU idle inside the iteration: the host's time, not the kernels' (launch-bound). It is
     * the symptom of every host cause: what the host causes named already (cuDNN's autotuning,
     * synchronisations, copies, cudaMalloc) is taken out, so that it names only the rest (the
     * H200's autotuning tail read "the GPU idle, waiting for the host: 97%" above its cause). */
    double si = fmax(0, s->lat - s->kern), mi = fmax(0, m->lat - m->kern), named = 0;
    for (int i = 0; i < t->ncauses; i++)
        if (t->c[i].cause == TAIL_CUDNN_SEARCH || t->c[i].cause == TAIL_SYNC ||
            t->c[i].cause == TAIL_COPIES || t->c[i].cause == TAIL_CUDA_MALLOC)
            named += t->c[i].extra_ns;
    cause(t, TAIL_GPU_IDLE, "gpu_idle", si - mi - named, NULL,
          "the GPU idle, waiting for the host (launches, Python, the CPU side of operators):"
          " %.2f ms of the slow iterations vs %.2f ms%s; their kernels ran %.2f ms vs %.2f ms",
          si / 1e6, mi / 1e6,
          named > 0 ? pool_printf(", %.2f ms of it the host causes above", named / 1e6) : "",
          s->kern / 1e6, m->kern / 1e6);
    names_of(db, &kd[1].fresh[k], names, sizeof names);
    cause(t, TAIL_NEW_KERNELS, "new_kernels", s->new_kern, names,
          "kernels the typical iterations did not run (autotuning, a new shape): %s", names);
    names_of(db, &kd[1].longer[k], names, sizeof names);
    double longer = s->known_kern - m->known_kern, clock = 0;
    if (clock_s > 0 && clock_m > 0 && clock_s < (1 - TAIL_CLOCK_DROP) * clock_m && longer > 0) {
        /* At clock_s the typical iterations' kernels would take clock_m / clock_s as long. */
        clock = fmin(longer, m->known_kern * (clock_m / clock_s - 1));
        cause(t, TAIL_GPU_CLOCK, "gpu_clock", clock, names,
              "the GPU's SM clock was %.0f MHz in the slow iterations against %.0f MHz in the"
              " typical ones (power or thermal throttling: the Energy section names the reasons):"
              " the same kernels ran longer, %.2f ms vs %.2f ms",
              clock_s, clock_m, s->known_kern / 1e6, m->known_kern / 1e6);
    }
    cause(t, TAIL_LONGER_KERNELS, "longer_kernels", longer - clock, names,
          "the same kernels ran longer (clocks, contention): %s", names);
}

/* The mean SM clock of the run's first GPU with clock readings over the windows of tail k, slow
 * or typical (MHz; <= 0 unknown). */
static double windows_clock(sqlite3 *db, const struct run_phases *p, const struct wins *w, int k,
                            int slow)
{
    const struct energy_run *e = run_energy(db, p);
    const struct energy_device *d = NULL;
    for (int i = 0; i < e->n && !d; i++)
        if (e->d[i].cuda >= 0 && e->d[i].has_sm) d = &e->d[i];
    if (!d) return -1;
    struct interval *iv = malloc((w->n ? w->n : 1) * sizeof *iv);
    if (!iv) cli_fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].tail == k && w->v[i].slow == slow)
            iv[n++] = (struct interval){w->v[i].s,
                                        w->v[i].end > w->v[i].s ? w->v[i].end : w->v[i].host_end};
    struct energy_figures f;
    energy_over(d, iv, n, 0, &f);
    free(iv);
    return f.used ? f.sm_mhz : -1; /* a clock without an energy counter is a clock */
}

/* What differs without a time of its own, said as a guess when the named causes explain under
 * half: one allocation much larger (a temporary tensor), or the same allocations each larger (a
 * new input shape: the largest taken out, the rest 1.2x the bytes or more), or more allocations
 * of 1.5x the bytes or more in all (larger inputs). */
/* Where no recorded cause explains a tail: what held the process's threads back when its slow
 * iterations began, by the CPU readings whose intervals hold their starts (cpu_samples):
 *  - its cgroup's CPU quota, where it throttled the process then (a container's CPU limit stops
 *    every thread of the cgroup for the rest of a period once they used its quota);
 *  - else every CPU it may use busy (its CPU time, ours included, at 90% of the CPUs allowed,
 *    online or its quota, whichever fewer): its threads wait for one in turn, a scheduler's
 *    slice at a time. Two C++ threads running one model on a 2-CPU host read p99 0.5-0.7 ms
 *    plain, 3-4.5 ms under us (our writer took 22% of a core: a third thread for two cores),
 *    "no recorded cause".
 * The words (out, "" none) are the guess tail_guess makes where the allocations suggest none, with
 * our writer's part: the wait makes slow iterations that no allocation, operator or kernel
 * explains. */
#define TAIL_SATURATED 0.9
#define TAIL_THROTTLED 0.01 /* of the readings' wall time, summed over CPUs */

static void cpu_wait_words(sqlite3 *db, const struct run_phases *p, const struct series_tail *t,
                           char *out, size_t size)
{
    out[0] = 0;
    const struct run_timeline *tl = run_timeline(db, p);
    const struct timeline_series *c = &tl->cpu_busy;
    double bound = tl->cpus_online;
    if (tl->cpus_allowed > 0 && (bound <= 0 || tl->cpus_allowed < bound)) bound = tl->cpus_allowed;
    if (tl->cpu_quota > 0 && (bound <= 0 || tl->cpu_quota < bound)) bound = tl->cpu_quota;
    if (!tl->cpu || !c->n || bound <= 0 || tl->bucket_ns <= 0 || !t->nslow) return;
    double prog = 0, ours = 0, thr = 0;
    int64_t n = 0, nthr = 0;
    for (int64_t i = 0; i < t->nslow; i++) {
        /* The reading whose interval holds the start: the first bucket ending after it. */
        int lo = 0, hi = c->n;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (c->t[mid] + tl->bucket_ns <= t->slow_start[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == c->n) continue;
        prog += c->v[lo], ours += c->v2[lo], n++;
        if (tl->cpu_throttled[lo] >= 0) thr += tl->cpu_throttled[lo], nthr++;
    }
    if (!n) return;
    if (tl->cpu_quota > 0 && nthr && thr / (double)nthr >= TAIL_THROTTLED) {
        int64_t periods = -1, throttled = -1, throttled_ns = -1;
        db_meta_int(db, "cpu_periods", &periods);
        db_meta_int(db, "cpu_throttled_periods", &throttled);
        db_meta_int(db, "cpu_throttled_ns", &throttled_ns);
        snprintf(out, size,
                 "the cgroup's CPU quota, %.2f cores, held the process back when the slow"
                 " iterations began (it throttled the process in %lld of the %lld periods"
                 " recorded, %.1f ms summed over CPUs): its threads stop until the next period;"
                 " with a higher CPU limit, or fewer threads, they would not",
                 tl->cpu_quota, (long long)throttled, (long long)periods,
                 (double)throttled_ns / 1e6);
        return;
    }
    /* Turns need more threads wanting a CPU than there are: the threads that ran iterations
     * (distinct over the series, SERIES_TIDS each at most), and ours where it took a tenth of a
     * core or more. One worker held to one CPU is busy, not waiting (a fresh-eyes check read
     * the guess there). */
    int64_t seen[64];
    int threads = 0;
    for (int i = 0; i < p->series.n; i++)
        for (int j = 0; j < p->series.v[i].ntids && j < SERIES_TIDS; j++) {
            int k = 0;
            while (k < threads && seen[k] != p->series.v[i].tids[j]) k++;
            if (k == threads && threads < 64) seen[threads++] = p->series.v[i].tids[j];
        }
    if ((prog + ours) / (double)n < TAIL_SATURATED * bound ||
        (double)threads + (ours / (double)n >= 0.1) <= bound)
        return;
    snprintf(out, size,
             "all the CPUs the process may use were busy when the slow iterations began (%.2f of"
             " %g core%s: the program %.2f, infprof's writer %.2f), so its threads took turns on"
             " them; with a core to spare (fewer threads, or more CPUs) they would not",
             (prog + ours) / (double)n, bound, bound == 1 ? "" : "s", prog / (double)n,
             ours / (double)n);
}

static void tail_guess(const struct run_tails *r, struct series_tail *t, const struct means *s,
                       const struct means *m, int faulted, const char *cpu)
{
    double more = s->alloc_max - m->alloc_max;
    double rest_s = s->alloc_bytes - s->alloc_max, rest_m = m->alloc_bytes - m->alloc_max;
    int same_n = m->allocs > 0 && fabs(s->allocs / m->allocs - 1) <= 0.1;
    const char *ops = r->operators ? "" : " (INFPROF_OPERATORS=1 times the operators)";
    if (same_n && rest_m > 0 && rest_s >= 1.2 * rest_m)
        snprintf(t->guess, sizeof t->guess,
                 "the slow iterations made the same allocations, %.2fx the bytes: a new input"
                 " shape?%s",
                 s->alloc_bytes / m->alloc_bytes, ops);
    else if (more >= 16 * MIB)
        snprintf(t->guess, sizeof t->guess,
                 "the slow iterations' largest allocation was %.1f MiB larger on average than"
                 " a typical one's (%.0f allocations vs %.0f): a large temporary tensor?%s",
                 more / MIB, s->allocs, m->allocs, ops);
    else if (m->alloc_bytes > 0 && s->alloc_bytes >= 1.5 * m->alloc_bytes)
        /* More of everything: a larger input takes more allocations too (an image of 4x the
         * pixels: 131 against 107, 3.05x the bytes, in a detected loop's every 5th forward). */
        snprintf(t->guess, sizeof t->guess,
                 "the slow iterations allocated %.2fx the bytes (%.0f allocations vs %.0f):"
                 " larger inputs?%s",
                 s->alloc_bytes / m->alloc_bytes, s->allocs, m->allocs, ops);
    else if (cpu[0]) /* the threads waited for a CPU (cpu_wait_words) */
        snprintf(t->guess, sizeof t->guess, "%s", cpu);
    else if (!r->operators && !faulted) /* page faults named: no guess is one */
        snprintf(t->guess, sizeof t->guess,
                 "no recorded cause; INFPROF_OPERATORS=1 times the operators of each iteration");
}

/* What took the slow iterations' thread off the CPU, by their context switches: waiting when
 * their voluntary ones grew (a sleep, a lock or the GIL is one at least, whatever a loaded machine
 * adds), or when most of their extra time off the CPU was in iterations that switched voluntarily
 * (a 50 ms sleep in every 10th iteration among more iterations a loaded ctest made slow by
 * preempting them once read 0.4 voluntary switches each and "preempted"); preempted when not,
 * and they were preempted about once each or more (a loaded machine preempts the typical ones
 * too, as often: 3.0 switches against 3.2 once read as no preemption; the time is the excess
 * over theirs, off_cpu_excess); else neither said (too few switches to tell). */
enum { OFF_UNTOLD, OFF_PREEMPTED, OFF_WAITED };

static int off_cpu_kind(const struct means *s, const struct means *m)
{
    if (s->vcsw - m->vcsw >= 0.5) return OFF_WAITED;
    double extra = s->off_cpu - m->off_cpu;
    if (s->vcsw > m->vcsw && extra > 0 && s->off_waited - m->off_waited > 0.5 * extra)
        return OFF_WAITED;
    return s->ivcsw >= 0.5 ? OFF_PREEMPTED : OFF_UNTOLD;
}

/* The slow iterations' time off the CPU beyond what their CPU work costs at the typical ones'
 * rate: on a loaded machine each iteration is preempted in proportion to the CPU it uses, so work
 * that made an iteration slow (Python, a large tensor) is stretched too, and the stretch is that
 * work's, not a cause of its own (it once named "preempted" first, 61%, for a Python loop before
 * the forward under a loaded ctest). A sleep, a lock or a preemption aimed at the slow ones adds
 * time off the CPU without CPU work, and counts whole. */
static double off_cpu_excess(const struct means *s, const struct means *m)
{
    if (!s->ncpu || !m->ncpu) return 0;
    double m_on = fmax(0, m->host - m->off_cpu), s_on = fmax(0, s->host - s->off_cpu);
    double rate = m_on > 0 ? m->off_cpu / m_on : 0;
    double x = fmax(0, s->off_cpu - rate * s_on);
    /* Each iteration's CPU time is the scheduler's account, up to a tick (4 ms at 250 Hz) behind
     * at either edge (profiler/iteration.c): time off the CPU with too few context switches to
     * tell is told only past that, over the slow iterations' number. Two iterations after an idle
     * sleep, each 0.8 ms slower on the CPU by the program's own thread clock, once read as taken
     * off it for 147% of their extra. */
    int switched = off_cpu_kind(s, m) != OFF_UNTOLD;
    return switched || x >= TAIL_CPU_RESOLUTION_NS / sqrt(s->ncpu) ? x : 0;
}

/* Page faults: the slow iterations' system time over the typical ones', where they took many
 * more faults (64 more an iteration, 256 KiB of fresh pages, and a quarter more than the typical
 * ones: a heavier loop's slow iterations took 10,023 against 6,231, 5.1 ms of their 5.7 ms extra
 * in system time, and twice as many, the first rule, read "100% unexplained"): the kernel
 * handing the thread pages it had given back (glibc's malloc maps a large block afresh each
 * time, or trims its heap; a fresh-eyes check's DataLoader loop took 2,855 faults and 3-6 ms of
 * system time in every second forward against 9 and none, where its Tail read 69% unexplained).
 * Time on the CPU, so no part of the off-CPU cause; a part of whichever host time it fell in
 * (outside the forward, an operator), which it overlaps. The system time is the scheduler's split
 * of the CPU time, a tick's grain: a mean over the slow iterations against the typical ones'. */
static void causes_of_faults(struct series_tail *t, const struct means *s, const struct means *m)
{
    double more = s->faults - m->faults;
    if (more < 64 || more < 0.25 * m->faults) return;
    cause(t, TAIL_PAGE_FAULTS, "page_faults", s->sys - m->sys, NULL,
          "%.0f page faults an iteration vs %.0f in a typical one, %.2f ms of system time vs"
          " %.2f ms: memory handed back to the system and faulted in again, or fresh memory"
          " (the page_faults finding, where it recurs)",
          s->faults, m->faults, s->sys / 1e6, m->sys / 1e6);
}

/* cpu: what the slow iterations waited for a CPU on, where they did (cpu_wait_words), else "". */
static void causes_of(sqlite3 *db, struct run_tails *r, int k, const struct means *s,
                      const struct means *m, const struct keyed *kd, int gpu, double clock_s,
                      double clock_m, const char *cpu)
{
    struct series_tail *t = &r->v[k];
    t->window_extra = s->lat - m->lat;
    /* In how many it ran, and for how long in each: a collection every 50th forward, 60 of
     * 131 slow ones, read "ran 25.63 ms in each slow iteration" where each ran 56 ms (a
     * fresh-eyes check); the cause's time stays the mean over the slow ones, as every cause's. */
    if (s->n_gc > 0 && s->n_gc < s->n)
        cause(t, TAIL_GC, "gc", s->gc - m->gc, NULL,
              "Python's garbage collector ran in %.0f of the %.0f slow iterations, %.2f ms in each"
              " of them (%.2f ms a slow iteration; %.2f ms in a typical one)",
              s->n_gc, s->n, s->gc * s->n / s->n_gc / 1e6, s->gc / 1e6, m->gc / 1e6);
    else
        cause(t, TAIL_GC, "gc", s->gc - m->gc, NULL,
              "Python's garbage collector ran %.2f ms in each slow iteration (%.2f ms in a typical"
              " one)",
              s->gc / 1e6, m->gc / 1e6);
    int forward = m->mod > 0; /* marked iterations with the model's forward seen inside */
    /* Time the thread spent off the CPU is its own cause (preempted, or waiting): the host
     * time outside the forward or outside any operator is what the thread computed there, the
     * off-CPU extra taken out of the first (then of the second). */
    double off_extra = off_cpu_excess(s, m), outside_off = 0;
    if (forward) {
        /* Operators outside the forward are theirs (new or longer ones below), not Python's. */
        double so = fmax(0, s->host - s->mod - s->gc - s->ops_outside - off_extra);
        double mo = fmax(0, m->host - m->mod - m->gc - m->ops_outside);
        double more = s->bytes_outside - m->bytes_outside;
        double raw = fmax(0, s->host - s->mod - s->gc - s->ops_outside) - mo;
        outside_off = fmin(off_extra, fmax(0, raw));
        cause(t, TAIL_OUTSIDE_FORWARD, "outside_forward", so - mo, NULL,
              "host time in the iteration outside the model's forward (Python before or after"
              " it): %.2f ms vs %.2f ms%s",
              so / 1e6, mo / 1e6,
              more >= 16 * MIB && !r->operators
                  ? pool_printf("; there the slow iterations allocated %.1f MiB more on"
                                " average: a large"
                                " temporary tensor? (INFPROF_OPERATORS=1 times it)",
                                more / MIB)
                  : "");
    }
    if (r->operators) causes_of_operators(db, t, k, s, m, kd, forward, off_extra, outside_off);
    if (s->ncpu && m->ncpu) {
        int how = off_cpu_kind(s, m);
        cause(t, TAIL_OFF_CPU, how == OFF_PREEMPTED ? "preempted" : "off_cpu", off_extra, NULL,
              "the iteration's thread was off the CPU %.2f ms (%.2f ms in a typical one; %.2f ms"
              " more than its CPU time would be off at a typical one's rate): %.1f involuntary"
              " context switches (preempted) and %.1f voluntary ones (waiting: a lock, the GIL,"
              " I/O, a sleep, a synchronisation) vs %.1f and %.1f",
              s->off_cpu / 1e6, m->off_cpu / 1e6, off_extra / 1e6, s->ivcsw, s->vcsw, m->ivcsw,
              m->vcsw);
    }
    if (s->nfaults && m->nfaults) causes_of_faults(t, s, m);
    cause(t, TAIL_SYNC, "synchronisation", s->sync - m->sync, NULL,
          "CUDA synchronisations: %.2f ms vs %.2f ms", s->sync / 1e6, m->sync / 1e6);
    cause(t, TAIL_COPIES, "copies", s->copies - m->copies, NULL,
          "cudaMemcpy calls: %.2f ms vs %.2f ms", s->copies / 1e6, m->copies / 1e6);
    cause(t, TAIL_CUDA_MALLOC, "cuda_malloc", s->malloc_api - m->malloc_api, NULL,
          "cudaMalloc and cudaFree (the caching allocator grew or gave memory back): %.2f ms vs"
          " %.2f ms",
          s->malloc_api / 1e6, m->malloc_api / 1e6);
    cause(t, TAIL_CUDNN_SEARCH, "cudnn_search", s->cudnn - m->cudnn, NULL,
          "cuDNN algorithm searches and plan builds (cudnn.benchmark autotuning a shape it had not"
          " seen: fix the input size, or turn benchmark mode off for this model): %.1f calls, %.2f"
          " ms vs %.1f, %.2f ms",
          s->cudnn_n, s->cudnn / 1e6, m->cudnn_n, m->cudnn / 1e6);
    if (gpu) causes_of_gpu(db, t, k, s, m, kd, clock_s, clock_m);
    qsort(t->c, (size_t)t->ncauses, sizeof *t->c, by_extra);
    double named = 0, faults = 0;
    for (int i = 0; i < t->ncauses; i++) named += t->c[i].share;
    for (int i = 0; i < t->ncauses; i++)
        if (t->c[i].cause == TAIL_PAGE_FAULTS) faults = t->c[i].share;
    t->unexplained = fmax(0, 1 - named);
    t->overlap = named > 1.05;
    /* Page faults say how the time went, not what brought the fresh memory: the guess (a new
     * input shape, a large temporary tensor) is made as though they were not named. */
    if (named - faults < 0.5) tail_guess(r, t, s, m, faults > 0, cpu);
}

static void tails_drop(void *r)
{
    struct run_tails *t = r;
    for (int i = 0; i < t->n; i++) free(t->v[i].slow_index);
    free(t->v);
    free(t);
}

const struct run_model run_model_tails = {"tails", tails_drop, 0};

/* How many gaps between consecutive slow iterations lie within a tenth of period of one of
 * its multiples. */
static int64_t gaps_at(const struct series_tail *t, double period)
{
    int64_t h = 0;
    for (int64_t i = 1; i < t->nslow; i++) {
        double g = (double)(t->slow_start[i] - t->slow_start[i - 1]), k = round(g / period);
        h += k >= 1 && fabs(g - k * period) <= 0.1 * period;
    }
    return h;
}

/* The writer's cycle in the slow iterations' times: a loop of 3 ms forwards with nothing
 * injected, on a machine whose two CPUs the program kept busy, read 60 slow iterations
 * "preempted", 42 of their 59 gaps a multiple of 100 ms (INFPROF_FLUSH_MS) against 11 at most
 * at four other periods (a fresh-eyes check; with INFPROF_FLUSH_MS=250 they were gone): the
 * profile's own work, which the line must say, not the machine's. Counted where the thread off
 * the CPU is the first cause, and a third of the gaps or more, 5 or more, and three times as many
 * as at any of the other periods are; "at no regular interval" (of iterations) then says of
 * time. Runs recorded before the writer counted its cycles (meta writer_cycles) are not judged. */
static void writer_cadence(sqlite3 *db, const struct run_phases *p, struct series_tail *t)
{
    const struct runfacts *f = run_facts(db, p);
    int64_t cycles = 0;
    if (!runfacts_int(f, "writer_cycles", &cycles) || cycles < 2 || t->nslow < 6) return;
    const char *ms = runfacts_text(f, "config.INFPROF_FLUSH_MS");
    double period = (ms ? atof(ms) : 100) * 1e6; /* config.c's default */
    if (!(period > 0)) return;
    int64_t hits = gaps_at(t, period), other = 0;
    static const double others[] = {0.61, 0.73, 1.37, 1.61};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        int64_t h = gaps_at(t, period * others[i]);
        if (h > other) other = h;
    }
    if (hits >= 5 && 3 * hits >= t->nslow - 1 && hits >= 3 * other) {
        t->writer_hits = hits, t->writer_gaps = t->nslow - 1, t->writer_period_ns = period;
        if (!strcmp(t->pattern, "at no regular interval"))
            snprintf(t->pattern, sizeof t->pattern, "at no regular interval of iterations");
    }
}

const struct run_tails *run_tails(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_tails);
    if (*slot) return *slot;
    struct run_tails *r = calloc(1, sizeof *r);
    if (!r) cli_fail("out of memory");
    *slot = r;
    struct wins w = {0};
    classify(db, p, r, &w);
    if (!r->n) return r;
    read_gc(db, &w);
    read_modules(db, &w);
    read_memory(db, p, &w);
    read_api(db, &w);
    read_cudnn(db, p, &w);
    read_cpu(db, p, &w);
    read_beside(p, r, &w);
    static struct keyed kd[2];
    memset(kd, 0, sizeof kd);
    int nslow[REPORT_MAX_SERIES] = {0}, ntyp[REPORT_MAX_SERIES] = {0};
    for (size_t i = 0; i < w.n; i++) (w.v[i].slow ? nslow : ntyp)[w.v[i].tail]++;
    struct krow *v = NULL;
    size_t n;
    /* Every call, so that a slow iteration's operators are there (sampled: 1 in N). */
    r->operators = db_operators_every_call(db);
    if (r->operators) {
        n = read_keyed(db, "SELECT start, dur, name_id, tid FROM torch_operators WHERE depth = 0",
                       &w, &v);
        split_keyed(v, n, nslow, ntyp, 0, &kd[0]);
        free(v);
    }
    int gpu = kern_rows_get(db, p)->n > 0;
    if (gpu) {
        n = read_kernels(db, p, &w, &v);
        split_keyed(v, n, nslow, ntyp, 1, &kd[1]);
        free(v);
    }
    for (int k = 0; k < r->n; k++) {
        struct means s = {0}, m = {0};
        for (size_t i = 0; i < w.n; i++)
            if (w.v[i].tail == k) add_means(w.v[i].slow ? &s : &m, &w.v[i]);
        div_means(&s), div_means(&m);
        double clock_s = gpu ? windows_clock(db, p, &w, k, 1) : -1;
        double clock_m = gpu ? windows_clock(db, p, &w, k, 0) : -1;
        char cpu[sizeof r->v[k].guess];
        cpu_wait_words(db, p, &r->v[k], cpu, sizeof cpu);
        causes_of(db, r, k, &s, &m, kd, gpu, clock_s, clock_m, cpu);
        struct series_tail *t = &r->v[k];
        t->beside_series = -1;
        double bs = s.host > 0 ? s.beside / s.host : 0, bm = m.host > 0 ? m.beside / m.host : 0;
        if (bs >= TAIL_BESIDE && bs >= 1.5 * bm && bs - bm >= 0.2) {
            t->beside_series = beside_most(&w, k);
            t->beside_slow = bs, t->beside_typical = bm;
        }
        /* Ours only where the thread was off the CPU first: a program's own timer, heartbeat
         * or collection once a second keeps the cycle's multiples too (a review). */
        if (r->v[k].ncauses && r->v[k].c[0].cause == TAIL_OFF_CPU) writer_cadence(db, p, &r->v[k]);
    }
    free(w.v), free(w.mods), free(w.mod_tid);
    return r;
}

