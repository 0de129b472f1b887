/*
 * detect.c: iterations of a program that marks none (docs/report.md, "Iterations without a
 * mark"). An inference loop repeats the same work, and the caching allocator sees it: each
 * forward requests the same block sizes in the same order and frees what it took. In a phase
 * without explicit iterations, the allocator's reports of its busiest thread (tensor_memory:
 * size and sign, per device) are searched for their period P: the smallest P at which the
 * sequence matches itself shifted by P over at least half the phase's reports and four whole
 * periods, and over which the allocated total comes back to where it was (a loop that frees
 * what it allocates; model building, which only grows, never qualifies). Iterations are cut at
 * the point of each period where the allocated total is lowest (between two forwards: the last
 * free of the previous one, then the first allocation of the next), so an iteration runs from
 * its first allocator report to its last. Only the stretch that matched is cut: no false
 * period, and the leading iterations that differ (a first forward allocating more) are not
 * counted. Explicit marks always win: phases with any are left alone.
 *
 * A phase with kernels is searched first in them: the launch signatures (name, grid, block) of
 * its busiest stream, in GPU order, the same search. Iterations are cut where the GPU idles
 * longest within the period (median over periods) and run from the first kernel's start to the
 * last one's end: GPU time, the latency to GPU completion less the first launch's delay. It sees
 * what the allocations cannot (CUDA graph replays allocate nothing) and counts the forwards whose
 * allocations differ (on the H100 eager ResNet-50: 44 of the program's 45 forwards, 38 from the
 * allocations). A phase with no kernel period, or none at all (CPU), is searched next in its
 * outermost PyTorch operators when they were recorded (INFPROF_OPERATORS=1: their names on the
 * busiest thread, cut before the longest host idle; host time, first operator's start to last
 * one's end), then in its allocations. `infprof report --detect allocations` (run_options.detect)
 * searches the allocations first, then the operators, then the kernels.
 *
 * A phase that runs one loop after another (a batch size, then another) repeats no period over
 * half of it: each loop is then looked for on its own, from the last back (at least 8 periods
 * and 16 reports each, together half the reports), and each is a series ("loop 1", ...). Where
 * the last loop does cover half of it (an int8 copy's many short forwards after an fp32 model's
 * few long ones), the loops before it are looked for the same way. Loops whose forwards make the
 * same allocations (in any order) are one loop, one series.
 *
 * A period of allocations may hold several forwards: a loop whose every 20th request is longer
 * repeats exactly only every 20. detect_split.c cuts such a period into its forwards, each an
 * iteration (the longer one a slow iteration of the same series, not a model of its own).
 *
 * Forwards at other sizes (a server's batches of any size) repeat no sizes: where the exact
 * search finds no loop, or one whose period holds no cut, the reports are searched again by
 * their pattern, then cut at the allocated total's level (by_pattern; detect_sizes.c).
 */
#include "detect.h"
#include "detect_sizes.h"
#include "detect_split.h"
#include "run.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define MIN_KERNELS 4

const char *detect_prefer_missing(struct sqlite3 *db, int prefer)
{
    if (prefer != DETECT_OPERATORS) return NULL;
    if (db_operators_every_call(db)) return NULL;
    return "--detect operators: this run did not record every PyTorch operator call"
           " (INFPROF_OPERATORS=1 records them; sampled ones are those of live iterations only);"
           " a phase without marked iterations is searched in its kernels and allocations"
           " instead";
}

/* The comparisons one search may make (cut_periods resets it): the candidates of a long phase
 * with no loop in it (250,000 allocations then their frees) would otherwise take each distance
 * back in turn over the whole phase, for hours; past it, no (further) loop is found. */
#define DETECT_WORK_MAX 200000000u
static size_t detect_work;
/* Set while the allocations are searched by their pattern (detect_sizes.c): their sizes, so that
 * a stretch is kept only where its periods are the first one's forward at other sizes. */
static const int64_t *detect_bytes;

/* How far back from the end s[i] == s[i + p] holds (the matching run's length). */
static size_t run_back(const struct rep *s, size_t n, size_t p)
{
    size_t run = 0;
    for (size_t i = n - 1 - p; i + 1 > 0 && s[i].token == s[i + p].token; i--) run++;
    detect_work += run + 1;
    return run;
}

/* The smallest period of s (0 none) whose matching run reaches back at least 3 periods and
 * min_run reports. Candidates are the distances back from the last report to earlier reports of
 * the same token: a period is always one of them. A candidate whose run cannot reach that far
 * (the report that far back does not match) is passed over without walking it. */
static size_t period_of(const struct rep *s, size_t n, size_t min_run, size_t *run_out)
{
    if (n < 16) return 0;
    int64_t last = s[n - 1].token;
    for (size_t k = n - 1; k-- > 0 && detect_work < DETECT_WORK_MAX;) {
        size_t p = n - 1 - k;
        if (p > n / 4) break;
        if (s[k].token != last) continue;
        size_t need = 3 * p > min_run ? 3 * p : min_run;
        if (need > n - p) continue;
        size_t far = n - p - need; /* the last pair the run must hold */
        detect_work++;
        if (s[far].token != s[far + p].token) continue;
        size_t run = run_back(s, n, p);
        if (run >= need) {
            *run_out = run;
            return p;
        }
    }
    return 0;
}

/* The forward a stretch repeats: s[at..at + len) (its period, or the unit of a period cut into
 * forwards). Two stretches whose forwards make the same allocations, in whatever order, are one
 * loop (one series): a warm-up loop `for i in range(40): m(make(i))` frees each input after its
 * call, the timed loop `x = make(i); m(x)` when the next one replaces it, and the same model at
 * the same sizes read as "loop 1 1.02x loop 2". Settings that differ (threads) still split them
 * (settings.c). */
struct unit {
    size_t at, len;
    int pieces, alike; /* detect_split's: iterations a period (1: the period is one), alike */
    size_t period;
    uint64_t sig; /* unit_sig: the same forward, the same (its allocations in any order) */
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The iterations of one repeating stretch s[r0..n) of period p (run: reports that matched),
 * appended to out as loop `loop`: their count, 0 when the stretch is no loop of forwards.
 * closing (allocations): the key at the cut must be the same in every period within 1% (a loop
 * that frees what it allocates). *unit: the forward it repeats. */
/* One iteration appended to d. Until 2026-11-30 at most 100,000 were kept, silently: a C++
 * server's 150,000 requests read 99,939 steady iterations and "Lost nothing" (a fresh-eyes
 * check). */
static void push(struct detected *d, int64_t start, int64_t end, int loop)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 4096;
        int64_t *s = realloc(d->start, cap * sizeof *s);
        if (s) d->start = s;
        int64_t *e = realloc(d->end, cap * sizeof *e);
        if (e) d->end = e;
        unsigned char *l = realloc(d->loop, cap);
        if (l) d->loop = l;
        if (!s || !e || !l) cli_fail("out of memory");
        d->cap = cap;
    }
    d->start[d->n] = start, d->end[d->n] = end, d->loop[d->n] = (unsigned char)loop;
    d->n++;
}

void detected_free(struct detected *d)
{
    free(d->start), free(d->end), free(d->loop), free(d->tids);
    d->start = d->end = d->tids = NULL, d->loop = NULL, d->n = d->cap = 0;
}

/* A hash of the forward a stretch repeats (FNV-1a over its tokens, sorted where `closing`: the
 * same allocations in any order). */
static uint64_t unit_sig(const struct rep *s, struct unit u, int closing)
{
    int64_t *x = malloc((u.len ? u.len : 1) * sizeof *x);
    if (!x) cli_fail("out of memory");
    for (size_t i = 0; i < u.len; i++) x[i] = s[u.at + i].token;
    if (closing) qsort(x, u.len, sizeof *x, cmp_i64);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < u.len; i++) h = (h ^ (uint64_t)x[i]) * 0x100000001b3ull;
    free(x);
    return h;
}

static int same_unit(struct unit a, struct unit b)
{
    return a.len == b.len && a.sig == b.sig;
}

/* The bytes s[a..b) allocates (its tokens' sizes, or detect_bytes' in the pattern search). */
static int64_t allocated(const struct rep *s, size_t a, size_t b)
{
    int64_t sum = 0;
    for (size_t i = a; i < b; i++) {
        int64_t x = detect_bytes ? detect_bytes[i] : rep_bytes(s[i].token);
        sum += x > 0 ? x : 0;
    }
    return sum;
}

/* Whether s[a..a + q) makes the forward s[u..u + q)'s allocations and frees in its order, at
 * whatever sizes (a smaller request: every 10th at batch 1 among batches of 16). */
static int same_order(const struct rep *s, size_t a, size_t u, size_t q)
{
    for (size_t i = 0; i < q; i++) {
        int64_t x = s[a + i].token, y = s[u + i].token;
        if (rep_type(x) != rep_type(y) || (rep_bytes(x) > 0) != (rep_bytes(y) > 0)) return 0;
    }
    return 1;
}

/* The pieces at[0..k) of a period (at[k] its end) with each piece that is m >= 2 forwards'
 * length and makes the forward's allocations and frees in its order m times over cut into those
 * m: a longer request and the forward after it, which frees the longer one's input in more than
 * 1 report in 32 (every 10th forward longer, each with the next read as one iteration: "every
 * 9th, 120.3 ms" where every 10th took 74.45). Returns the new count (at most
 * SPLIT_PIECES_MAX). */
static size_t split_runs(const struct rep *s, size_t first, size_t *at, size_t k, size_t u,
                         size_t q)
{
    if (k < 2 || !q) return k;
    size_t parts[SPLIT_PIECES_MAX], total = 0;
    for (size_t j = 0; j < k; j++) {
        size_t len = at[j + 1] - at[j], m = len / q, c = 0;
        int whole = m >= 2 && !(len % q);
        while (whole && c < m && same_order(s, first + at[j] + c * q, first + u, q)) c++;
        parts[j] = whole && c == m ? m : 1;
        total += parts[j];
    }
    if (total == k || total > SPLIT_PIECES_MAX) return k;
    at[total] = at[k];
    for (size_t j = k, to = total; j-- > 0;) { /* from the end: no piece read is overwritten */
        size_t base = at[j];
        to -= parts[j];
        for (size_t c = 0; c < parts[j]; c++) at[to + c] = base + c * q;
    }
    return total;
}

static size_t cut_stretch(struct rep *s, size_t r0, size_t n, size_t p, int closing, int loop,
                          struct unit *unit, struct detected *out)
{
    /* Kernels and operators: at least MIN_KERNELS a period: one or two repeated (a
     * micro-benchmark, a kernel in a loop of its own) are no loop of forwards. */
    if (!closing && p < MIN_KERNELS) return 0;
    /* The offset in the period where the key is lowest (median over periods). */
    size_t cycles = (n - r0) / p, best = 0;
    int64_t best_v = 0, *v = malloc(cycles * sizeof *v);
    if (!v) cli_fail("out of memory");
    for (size_t j = 0; j < p; j++) {
        size_t m = 0;
        for (size_t k = r0 + j; k < n && m < cycles; k += p) v[m++] = s[k].key;
        int64_t med = rstats_median(v, m);
        if (j == 0 || med < best_v) best_v = med, best = j;
    }
    /* Allocations: a loop that makes its input before the forward reaches the same lowest
     * total twice a period (after the old input's free, after the output's): of the offsets at
     * the lowest total, the cut goes after the one the host idles longest after (the input's
     * preparation), so the iteration holds the forward and not the preparation. */
    if (closing) {
        int64_t longest = -1;
        size_t pick = best;
        for (size_t j = 0; j < p; j++) {
            size_t m = 0;
            for (size_t k = r0 + j; k < n && m < cycles; k += p) v[m++] = s[k].key;
            int64_t med = rstats_median(v, m);
            if (med != best_v) continue; /* exactly the lowest: the forward never gets there */
            m = 0;
            for (size_t k = r0 + j; k + 1 < n && m < cycles; k += p) v[m++] = s[k + 1].ts - s[k].ts;
            if (!m) continue;
            int64_t idle = rstats_median(v, m);
            if (idle > longest) longest = idle, pick = j;
        }
        best = pick;
    }
    size_t m = 0;
    for (size_t k = r0 + best; k < n && m < cycles; k += p) v[m++] = s[k].key;
    int64_t lo = v[0], hi = v[0];
    for (size_t k = 1; k < m; k++) lo = v[k] < lo ? v[k] : lo, hi = v[k] > hi ? v[k] : hi;
    free(v);
    if (closing && hi - lo > (hi > 0 ? hi / 100 : 0)) return 0;
    /* The allocations' cut is after their lowest point; the kernels' before the longest idle.
     * Where the cut falls matters little to the figures: each window spans one period. */
    size_t first = closing ? r0 + best + 1 : r0 + best, before = out->n;
    if (detect_bytes && !detect_sizes_scaled(detect_bytes, first, p, n)) return 0;
    /* A period of allocations that holds several forwards (every 20th request longer): cut
     * into them (detect_split.c); its unit, the forward that repeats, names the loop. */
    size_t at[SPLIT_PIECES_MAX + 1] = {0}, k = 1, alike = 0, u = 0, q = p;
    if (closing && first + p <= n) {
        size_t got =
            detect_split(s + first, p, s[first - 1].key, at, SPLIT_PIECES_MAX, &alike, &u, &q);
        if (got)
            k = got;
        else
            u = 0, q = p, alike = 0;
    }
    at[k] = p;
    k = split_runs(s, first, at, k, u, q);
    /* Of a period cut into forwards, a piece that is no repeat of the forward is one where it
     * makes the forward's allocations and frees in its order at other sizes (a smaller request),
     * or has half its reports or more and allocates a quarter of its bytes or more (a longer
     * request); else it is no forward (a DataLoader's set-up between two epochs' forwards: 16
     * reports and 16 KB against 26 and 108 KB) and lies between iterations. */
    unsigned char keep[SPLIT_PIECES_MAX + 1];
    size_t kept = 0;
    int64_t unit_bytes = k > 1 ? allocated(s, first + u, first + u + q) : 0;
    for (size_t j = 0; j < k; j++) {
        size_t len = at[j + 1] - at[j];
        keep[j] =
            k == 1 || (len == q && same_order(s, first + at[j], first + u, q)) ||
            (2 * len >= q && 4 * allocated(s, first + at[j], first + at[j + 1]) >= unit_bytes);
        kept += keep[j];
    }
    unit->at = first + u, unit->len = q, unit->pieces = (int)kept, unit->alike = (int)alike;
    unit->period = p, unit->sig = unit_sig(s, *unit, closing);
    for (size_t a = first; a + p - 1 < n; a += p)
        for (size_t j = 0; j < k; j++)
            if (keep[j]) push(out, s[a + at[j]].ts, s[a + at[j + 1] - 1].end, loop);
    if (out->n - before < 4) out->n = before;
    return out->n - before;
}

/* The stretch of s[0..n) that repeats up to its end (up to a quarter of it, at most `most`
 * reports, left off the end: a phase's clean-up, the next loop's set-up and first forward),
 * with at least min_run reports matched: its start *r0 and new end *n, its period (0 none). */
static size_t find_stretch(const struct rep *s, size_t *n, size_t min_run, size_t most, size_t *r0)
{
    size_t run = 0, p = 0;
    for (size_t cut = 0;
         cut <= *n / 4 && cut < most && *n - cut >= 16 && detect_work < DETECT_WORK_MAX; cut++)
        if ((p = period_of(s, *n - cut, min_run, &run))) {
            *n -= cut;
            *r0 = *n - p - run;
            return p;
        }
    return 0;
}

/* Whether the iterations cover half the sequence's time, loop by loop (kernels and operators:
 * model building repeats its initialisers layer after layer, briefly, in a long phase; a loop
 * that prepares its input between forwards still covers its phase). */
static int covers_half(const struct rep *s, size_t n, const struct detected *d)
{
    int64_t covered = 0;
    for (size_t k = 0, a = 0; k < d->n; k++)
        if (k + 1 == d->n || d->loop[k + 1] != d->loop[k]) {
            covered += d->end[k] - d->start[a]; /* loops are appended whole, in start order */
            a = k + 1;
        }
    return 2 * covered >= s[n - 1].end - s[0].ts;
}

/* Cut s[0..n) into iterations: 1 when found (out filled). One period repeating over at least
 * half of the sequence first; else loops of their own (a batch size or a model after another:
 * each a stretch of at least 8 periods and 16 reports, found from the end back), together over
 * half of the sequence's reports, each loop its own series. */
static int cut_periods(struct rep *s, size_t n, int closing, struct detected *out)
{
    out->n = 0, out->info.nloops = 0, out->info.pieces = 1, out->info.alike = 0,
    out->info.split_period = 0;
    detect_work = 0;
    size_t matched = 0, at = n, bounds[16];
    struct unit units[16];
    int loops = 0, repeats = 0, period = 0, half = 0;
    size_t skip = 256; /* before a loop: the next one's set-up and its first, odd, forward */
    size_t end = n, r0 = 0, p = find_stretch(s, &end, n / 2, 256, &r0);
    if (p) { /* one loop over half of it: the last, the others (if any) before it */
        size_t got = cut_stretch(s, r0, end, p, closing, 0, &units[0], out);
        if (!got) return 0;
        bounds[loops++] = got;
        matched = end - r0, repeats = (int)((end - r0) / p), period = (int)p, half = 1;
        at = r0;
        skip = 256 + 2 * p;
    }
    /* Loops of their own, from the last back: before the one over half (an fp32 model's few
     * long forwards before its int8 copy's many short ones), or all of them. With a budget of
     * their own: a loop run twice in rounds of 1,000 forwards (each round just short of half
     * the phase) spent the search for one loop over half on every multiple of its period, and
     * left none for the rounds (a fresh-eyes check's C++ benchmark: "no iteration was seen"). */
    detect_work = 0;
    while (loops < 16 && at >= 16) {
        size_t e = at, start;
        size_t q = find_stretch(s, &e, 16, skip, &start);
        if (!q || (e - start) / q < 8) break;
        size_t got = cut_stretch(s, start, e, q, closing, loops, &units[loops], out);
        if (!got) break;
        bounds[loops] = got;
        matched += e - start, repeats += (int)((e - start) / q), period = (int)q;
        loops++;
        at = start;
        skip = 256 + 2 * q;
    }
    /* A stretch whose period held several forwards: the one of most (said in the note). */
    for (int l = 0; l < loops; l++)
        if (units[l].pieces > out->info.pieces)
            out->info.pieces = units[l].pieces, out->info.alike = units[l].alike,
            out->info.split_period = (int)units[l].period;
    /* The earliest loop's forward (found last): what the phase ran, to tell phases apart. */
    if (loops)
        out->info.unit_sig = units[loops - 1].sig, out->info.unit_len = (int)units[loops - 1].len;
    if (loops == 1 && half) {
        out->info.period = (int)p;
        out->info.repeats = repeats;
        out->info.nloops = 1;
        if (closing || covers_half(s, n, out)) return 1;
        out->n = 0;
        return 0;
    }
    if (loops < 2 || (!half && 2 * matched < n)) {
        out->n = 0;
        return 0;
    }
    /* Stretches that repeat the same forward are one loop (a request loop's runs of short
     * requests in its warm-up, then the periods of short and long ones): numbered in time
     * order, the stretch found last being the earliest. */
    int number[16], nloops = 0;
    for (int l = loops - 1; l >= 0; l--) {
        number[l] = -1;
        for (int e = loops - 1; e > l && number[l] < 0; e--)
            if (same_unit(units[e], units[l])) number[l] = number[e];
        if (number[l] < 0) number[l] = nloops++;
    }
    size_t total = out->n, o = 0;
    int64_t *st = malloc(total * sizeof *st), *en = malloc(total * sizeof *en);
    unsigned char *lp = malloc(total ? total : 1);
    if (!st || !en || !lp) cli_fail("out of memory");
    for (int l = loops - 1; l >= 0; l--) { /* the loop found last is the earliest */
        size_t a = 0;
        for (int q = 0; q < l; q++) a += bounds[q];
        for (size_t k = a; k < a + bounds[l]; k++, o++) {
            st[o] = out->start[k], en[o] = out->end[k];
            lp[o] = (unsigned char)number[l];
        }
    }
    memcpy(out->start, st, total * sizeof *st);
    memcpy(out->end, en, total * sizeof *en);
    memcpy(out->loop, lp, total);
    free(st), free(en), free(lp);
    out->info.period = period; /* the earliest loop's */
    out->info.repeats = repeats;
    out->info.nloops = nloops;
    if (closing || covers_half(s, n, out)) return 1;
    out->n = 0;
    return 0;
}

/* Whether d's iterations are parts of e's, two or more in each on average: 3 in 4 of them lie
 * inside one of e's (both in time order; e may leave out a first forward that d cut too). */
static int parts_of(const struct detected *d, const struct detected *e)
{
    if (!e->n || d->n < 2 * e->n) return 0;
    size_t inside = 0;
    for (size_t k = 0, j = 0; k < d->n; k++) {
        while (j < e->n && e->end[j] < d->start[k]) j++;
        inside += j < e->n && e->start[j] <= d->start[k] && d->end[k] <= e->end[j];
    }
    return 4 * inside >= 3 * d->n;
}

/* The time alt's iterations take inside d's span, 4/5 of d's iterations' or more: forwards cut
 * out of a period of several cover it, pieces of one forward do not (a forward then argmax and
 * tolist: its layers alike but for their widths, 870 "iterations" of 25 us at 0.52 of 58 forwards
 * of 15.6 ms; batches of 1 to 8 in turn: 0.99). */
static int covers(const struct detected *d, const struct detected *alt)
{
    double a = 0, e = 0;
    int64_t lo = d->start[0], hi = d->end[d->n - 1];
    for (size_t i = 0; i < d->n; i++) e += (double)(d->end[i] - d->start[i]);
    for (size_t i = 0; i < alt->n; i++)
        if (alt->start[i] >= lo && alt->end[i] <= hi) a += (double)(alt->end[i] - alt->start[i]);
    return 5 * a >= 4 * e;
}

/* Where the exact search found nothing, or one loop whose period holds no cut: the same search
 * on the reports' pattern (detect_sizes.c), for forwards at other sizes (a server's batches of
 * any size), and where that finds no period either, the cut at the allocated total's level. Kept
 * where nothing was found, or where it finds at least twice the exact search's iterations and
 * covers their time (batches of 1 to 8 in turn: a period of 8 forwards), or one loop whose forwards
 * hold the exact search's loops of their own (8 forwards at random batches of a model of 8 alike
 * layers: the layers, 2 reports a period, read as 6 loops of 19-90 us against forwards of 378 ms).
 * The forward's hash is marked apart from any exact one's. found: the exact search's result, in
 * out. */
static int by_pattern(struct rep *s, size_t n, int found, struct detected *out)
{
    if (found && out->info.nloops == 1 && out->info.pieces != 1) return found;
    int64_t *bytes = malloc((n ? n : 1) * sizeof *bytes);
    if (!bytes) return found; /* no memory for a second look: the exact one stands */
    detect_sizes_tokens(s, n, bytes);
    struct detected alt = {0};
    detect_bytes = bytes;
    int got = cut_periods(s, n, 1, &alt);
    detect_bytes = NULL;
    /* No period at all: the forwards cut where the total comes back to its level (some of them
     * another order of reports: a conv net's batch-1 path). */
    struct level_cut lc;
    if (!got && !found && detect_sizes_levels(s, n, bytes, &lc)) {
        alt.n = 0;
        for (size_t i = 0; i < lc.n; i++) push(&alt, s[lc.first[i]].ts, s[lc.last[i]].end, 0);
        struct unit u = {.at = lc.unit_at, .len = lc.unit_len};
        alt.info = (struct detect_info){.period = (int)lc.unit_len,
                                        .repeats = (int)lc.copies,
                                        .nloops = 1,
                                        .pieces = 1,
                                        .unit_sig = unit_sig(s, u, 1),
                                        .unit_len = (int)lc.unit_len,
                                        .by_level = 1};
        detect_sizes_levels_free(&lc);
        got = alt.n >= 4;
    }
    detect_sizes_restore(s, n, bytes);
    free(bytes);
    if (got && (!found || (alt.info.nloops == 1 && alt.n >= 2 * out->n && covers(out, &alt)) ||
                (out->info.nloops > 1 && alt.info.nloops == 1 && parts_of(out, &alt)))) {
        struct detected t = *out;
        *out = alt, alt = t;
        out->info.sizes_vary = 1;
        out->info.unit_sig ^= UINT64_C(0x7061747465726e00); /* "pattern": not an exact hash */
        found = 1;
    }
    detected_free(&alt);
    return found;
}

/* The allocator's reports of thread tid in the phase (at most cap), cut into iterations. The
 * level each report leaves: the process's total (as it reported it), or where own, the thread's
 * own: the process's total where the thread's first report on that device left it, then moved
 * by the thread's reports alone. Where two threads run forwards at once (a server's workers),
 * the process's total moved with both and came back to no level at any period: "no iteration
 * was seen" in a two-thread C++ loop whose threads each repeat 82 reports exactly. The
 * process's total is tried first: a forward whose blocks another thread allocates or frees (an
 * intra-op pool's) leaves the thread's own level drifting, never the process's. */
static int alloc_thread(sqlite3 *db, int phase, int64_t tid, size_t cap, int own, int pattern,
                        struct detected *out)
{
    struct rep *s = malloc((cap ? cap : 1) * sizeof *s);
    if (!s) cli_fail("out of memory");
    size_t n = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT ts, bytes, device_type, allocated, device_index FROM"
                                      " tensor_memory WHERE phase = ? AND tid = ? ORDER BY ts,"
                                      " rowid");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int64(st, 2, tid);
    enum { LEVELS = 8 };
    int64_t dev[LEVELS], level[LEVELS];
    int ndev = 0;
    while (db_step(st) && n < cap) {
        int64_t bytes = sqlite3_column_int64(st, 1), type = sqlite3_column_int64(st, 2);
        int64_t d = type * 65536 + sqlite3_column_int64(st, 4), key = sqlite3_column_int64(st, 3);
        if (own) {
            int i = 0;
            while (i < ndev && dev[i] != d) i++;
            if (i < ndev)
                key = level[i] += bytes;
            else if (ndev < LEVELS)
                dev[ndev] = d, level[ndev++] = key; /* its first report: the process's total */
        }
        s[n].ts = s[n].end = sqlite3_column_int64(st, 0);
        s[n].token = rep_token(bytes, type);
        s[n].key = key;
        n++;
    }
    sqlite3_finalize(st);
    int found = cut_periods(s, n, 1, out);
    if (found || pattern) found = by_pattern(s, n, found, out);
    if (found) out->tid = tid, out->info.from = DETECT_ALLOCATIONS, out->info.threads = 1;
    free(s);
    return found;
}

/* A thread's iterations: exactly first, at the process's total then (several threads reporting)
 * at the thread's own level; only then by their pattern, at the thread's own level first where
 * several threads report. The process's total moves with every thread's reports: searched by
 * pattern there first, two workers taking turns on one CPU may be cut between their time slices
 * where the exact search at each one's own level finds their forwards (the likely cause of a
 * test's two tails, under load, where one worker model ran). */
static int alloc_find(sqlite3 *db, int phase, int64_t tid, size_t cap, int several,
                      struct detected *out)
{
    return alloc_thread(db, phase, tid, cap, 0, 0, out) ||
           (several && alloc_thread(db, phase, tid, cap, 1, 0, out)) ||
           (several && alloc_thread(db, phase, tid, cap, 1, 1, out)) ||
           alloc_thread(db, phase, tid, cap, 0, 1, out);
}

#define ALLOC_THREADS_MAX 64
#define ALLOC_LOOPS_MAX   16

/* The iterations of the phase's busiest thread; then those of each other thread of at least a
 * quarter of its reports whose one loop repeats a forward, each with its thread: the same
 * forward as a loop already found joins it (a server's workers running one model: each forward
 * counted, not only the busiest worker's), another is a loop of its own (two models on two
 * threads: the second's forwards were dropped, unsaid, and the first's p50 read as the phase's).
 * Such threads where no loop is found are counted (info.threads_missed) and said. */
static int from_allocations(sqlite3 *db, int phase, struct detected *out)
{
    if (!db_has_table(db, "tensor_memory")) return 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT tid, count(*) FROM tensor_memory WHERE phase = ?"
                                      " GROUP BY tid ORDER BY count(*) DESC, tid LIMIT ?");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int(st, 2, ALLOC_THREADS_MAX);
    int64_t tid[ALLOC_THREADS_MAX], count[ALLOC_THREADS_MAX];
    int nt = 0;
    while (nt < ALLOC_THREADS_MAX && db_step(st)) {
        tid[nt] = sqlite3_column_int64(st, 0);
        count[nt++] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (!nt) return 0;
    if (!alloc_find(db, phase, tid[0], (size_t)count[0], nt > 1, out)) return 0;
    uint64_t unit[ALLOC_LOOPS_MAX] = {out->info.unit_sig}; /* each loop's forward */
    int nl = out->info.nloops;
    struct detected other = {0};
    for (int t = 1; t < nt; t++) {
        if (count[t] < 16 || 4 * count[t] < count[0]) break; /* by count, descending */
        other.n = 0;
        int found = nl == 1 && alloc_find(db, phase, tid[t], (size_t)count[t], 1, &other);
        int l = 0;
        while (found && l < nl && unit[l] != other.info.unit_sig) l++;
        if (!found || other.info.nloops != 1 || l == ALLOC_LOOPS_MAX) {
            out->info.threads_missed++;
            continue;
        }
        if (l == nl) unit[nl++] = other.info.unit_sig; /* another model: a loop of its own */
        if (!out->tids) {
            out->tids = malloc((out->cap ? out->cap : 1) * sizeof *out->tids);
            if (!out->tids) cli_fail("out of memory");
            for (size_t k = 0; k < out->n; k++) out->tids[k] = out->tid;
        }
        for (size_t k = 0; k < other.n; k++) {
            size_t cap = out->cap;
            push(out, other.start[k], other.end[k], l);
            if (out->cap != cap && !(out->tids = realloc(out->tids, out->cap * sizeof *out->tids)))
                cli_fail("out of memory");
            out->tids[out->n - 1] = tid[t];
        }
        out->info.repeats += other.info.repeats;
        out->info.threads++;
    }
    out->info.nloops = nl;
    detected_free(&other);
    return 1;
}

/* Whether the allocated tensor total (the phase's most reported device) is the same at the start
 * of every iteration found, within 1% + 64 KiB: an inference loop frees what each forward
 * allocates; building a model, which repeats its initialisers layer after layer, only grows.
 * Loop by loop (each its own batch size or model). 1 too when the phase has no allocator reports
 * (nothing says otherwise). */
static int memory_returns(sqlite3 *db, int phase, const struct detected *d)
{
    if (!db_has_table(db, "tensor_memory") || !d->n) return 1;
    sqlite3_stmt *st = db_prepare(db, "SELECT device_type, device_index, count(*) FROM"
                                      " tensor_memory WHERE phase = ? GROUP BY 1, 2"
                                      " ORDER BY 3 DESC LIMIT 1");
    sqlite3_bind_int(st, 1, phase);
    int type = -1, index = 0;
    size_t cap = 0;
    if (db_step(st)) {
        type = sqlite3_column_int(st, 0);
        index = sqlite3_column_int(st, 1);
        cap = (size_t)sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (type < 0 || !cap) return 1;
    int64_t(*v)[2] = malloc(cap * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    st = db_prepare(db, "SELECT ts, allocated FROM tensor_memory WHERE phase = ? AND"
                        " device_type = ? AND device_index = ? AND " DB_TENSOR_TOTALS
                        " ORDER BY ts, rowid");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int(st, 2, type);
    sqlite3_bind_int(st, 3, index);
    while (db_step(st) && n < cap) {
        v[n][0] = sqlite3_column_int64(st, 0);
        v[n][1] = sqlite3_column_int64(st, 1);
        n++;
    }
    sqlite3_finalize(st);
    int ok = 1;
    for (int l = 0; l < d->info.nloops && ok;
         l++) { /* loop by loop: another batch, another total */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t k = 0; k < d->n; k++) {
            if (d->loop[k] != l) continue;
            size_t a = 0, b = n; /* the last report at or before the iteration's start */
            while (a < b) {
                size_t mid = (a + b) / 2;
                if (v[mid][0] <= d->start[k])
                    a = mid + 1;
                else
                    b = mid;
            }
            if (!a) continue;
            int64_t x = v[a - 1][1];
            lo = x < lo ? x : lo, hi = x > hi ? x : hi;
        }
        ok = lo > hi || hi - lo <= hi / 100 + 65536;
    }
    free(v);
    return ok;
}

/* Kernels or operators: the rows of st (start, dur, token), at most cap, into s, cut into
 * iterations (the cut before the longest idle), kept when the allocated total comes back at
 * each iteration's start. s is freed. */
static int cut_spans(sqlite3 *db, int phase, sqlite3_stmt *st, struct rep *s, size_t cap,
                     int64_t tid, int from, struct detected *out)
{
    size_t n = 0;
    while (db_step(st) && n < cap) {
        s[n].ts = sqlite3_column_int64(st, 0);
        s[n].end = s[n].ts + sqlite3_column_int64(st, 1);
        s[n].token = sqlite3_column_int64(st, 2);
        s[n].key = n ? -(s[n].ts - s[n - 1].end) : 0; /* the idle before it, negated */
        n++;
    }
    sqlite3_finalize(st);
    int found = cut_periods(s, n, 0, out) && memory_returns(db, phase, out);
    if (found)
        out->tid = tid, out->info.from = from;
    else
        out->n = 0;
    free(s);
    return found;
}

static int from_kernels(sqlite3 *db, int phase, struct detected *out)
{
    if (!db_has_table(db, "kernel_rows")) return 0;
    /* The phase's busiest stream. */
    sqlite3_stmt *st = db_prepare(db, "SELECT device, stream, count(*) FROM kernels WHERE phase = ?"
                                      " GROUP BY device, stream ORDER BY count(*) DESC LIMIT 1");
    sqlite3_bind_int(st, 1, phase);
    int64_t device = -1, stream = -1;
    size_t cap = 0;
    if (db_step(st)) {
        device = sqlite3_column_int64(st, 0);
        stream = sqlite3_column_int64(st, 1);
        cap = (size_t)sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (cap < 16) return 0;
    struct rep *s = malloc(cap * sizeof *s);
    if (!s) cli_fail("out of memory");
    st = db_prepare(db, "SELECT start, dur, sig FROM kernels WHERE phase = ? AND device = ? AND"
                        " stream = ? ORDER BY start");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int64(st, 2, device);
    sqlite3_bind_int64(st, 3, stream);
    return cut_spans(db, phase, st, s, cap, 0, DETECT_KERNELS, out);
}

/* The outermost PyTorch operators of the phase's busiest thread (INFPROF_OPERATORS=1). */
static int from_operators(sqlite3 *db, int phase, struct detected *out)
{
    if (!db_operators_every_call(db)) return 0; /* sampled: only where iterations were live */
    sqlite3_stmt *st = db_prepare(db, "SELECT tid, count(*) FROM torch_operators WHERE phase = ?"
                                      " AND depth = 0 GROUP BY tid ORDER BY count(*) DESC LIMIT 1");
    sqlite3_bind_int(st, 1, phase);
    int64_t tid = -1;
    size_t cap = 0;
    if (db_step(st)) {
        tid = sqlite3_column_int64(st, 0);
        cap = (size_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (cap < 16) return 0;
    struct rep *s = malloc(cap * sizeof *s);
    if (!s) cli_fail("out of memory");
    st = db_prepare(db, "SELECT start, dur, name_id FROM torch_operators WHERE phase = ? AND"
                        " tid = ? AND depth = 0 ORDER BY start");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int64(st, 2, tid);
    return cut_spans(db, phase, st, s, cap, tid, DETECT_OPERATORS, out);
}

/* Iterations that take no time are no forwards: a DataLoader worker's collate makes one batch
 * tensor a period, handed on, never freed, and its "iterations" (one allocation each) last 0 ns. */
static int timed(struct detected *d)
{
    int64_t *v = malloc((d->n ? d->n : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    for (size_t k = 0; k < d->n; k++) v[k] = d->end[k] - d->start[k];
    int64_t med = rstats_median(v, d->n);
    free(v);
    if (med > 0) return 1;
    d->n = 0;
    return 0;
}

int detect_iterations(sqlite3 *db, int prefer, int phase, struct detected *out)
{
    struct detected keep = *out; /* its arrays, reused (but the threads', made where needed) */
    memset(out, 0, sizeof *out);
    out->start = keep.start, out->end = keep.end, out->loop = keep.loop, out->cap = keep.cap;
    free(keep.tids);
    /* The one asked for first, then kernels, operators, allocations. */
    if (prefer == DETECT_OPERATORS && from_operators(db, phase, out) && timed(out)) return 1;
    if (prefer == DETECT_ALLOCATIONS && from_allocations(db, phase, out) && timed(out)) return 1;
    return (from_kernels(db, phase, out) && timed(out)) ||
           (from_operators(db, phase, out) && timed(out)) ||
           (from_allocations(db, phase, out) && timed(out));
}
