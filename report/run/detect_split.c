/*
 * detect_split.c: a detected period of allocations that holds several forwards (docs/report.md,
 * "Iterations without a mark").
 *
 * detect.c finds the smallest period over which a phase's allocator reports repeat exactly. A
 * loop whose every 20th request is longer repeats exactly only every 20 forwards, and each of
 * those periods was one "iteration" of 20 forwards: a model 24x slower than the one that ran
 * (a fresh-eyes check, 2026-11-30). Here the forward that repeats is found in a period: the
 * shortest run of reports that starts where the allocated total is back at exactly its level at
 * the period's cut (a forward's temporaries all freed; inside a forward its activations are
 * held, so the total is never that low) and is followed at once by itself, ending at such a
 * point too. The period is then cut into its copies, found wherever they start (the same
 * reports but for 1 in 32 or fewer of the same kind and another size: the forward after a
 * longer request frees that request's larger input), and the pieces between copies (the longer
 * request), one iteration each. Kept when the copies are at least two and cover half the
 * period's reports; else the period is one forward, as before.
 */
#include "detect_split.h"

#include <stdlib.h>
#include <string.h>

#define SPLIT_BOUNDS_MAX 1024 /* points at the level in one period: more, no split */
/* Reports compared in one period's search: past it, no split (the period stays one iteration,
 * as before), so that no pattern of reports can make a report slow. */
#define SPLIT_WORK_MAX 50000000u
/* A forward that repeats makes more reports than one allocation and one free: every operator
 * makes those (its output allocated, its input freed), so a period whose shortest repeat is that
 * short is not split (searched by pattern, a forward then argmax().tolist() was cut into 870
 * such "iterations" of 25 us, a segmentation loop into 5,662 of 0.13 ms). */
#define SPLIT_UNIT_MIN 4

static int same(const struct rep *a, const struct rep *b, size_t q)
{
    for (size_t i = 0; i < q; i++)
        if (a[i].token != b[i].token) return 0;
    return 1;
}

/* Whether t[0..q) is the unit u[0..q) but for a few reports (1 + q / 32) of the same kind
 * (an allocation for an allocation, a free for a free) and another size: the forward after a
 * longer request frees that request's larger input. */
static int near(const struct rep *t, const struct rep *u, size_t q, size_t *work)
{
    size_t off = 0, tol = 1 + q / 32, i = 0;
    int ok = 1;
    for (; i < q && ok; i++)
        if (t[i].token != u[i].token && ((t[i].token > 0) != (u[i].token > 0) || ++off > tol))
            ok = 0;
    *work += i;
    return ok;
}

/* The greedy cut of t[0..p) with unit t[u..u+q): a copy wherever the unit (near enough) starts,
 * the rest between copies a piece each. The pieces' count (0 past cap, or past the work). */
static size_t decompose(const struct rep *t, size_t p, size_t u, size_t q, size_t *at, size_t cap,
                        size_t *copies, size_t *work)
{
    size_t k = 0, i = 0;
    int other = 0;
    *copies = 0;
    while (i < p) {
        if (*work > SPLIT_WORK_MAX) return 0;
        if (i + q <= p && near(t + i, t + u, q, work)) {
            if (k == cap) return 0;
            at[k++] = i;
            (*copies)++;
            i += q;
            other = 0; /* the piece before it, if any, ends here */
            continue;
        }
        if (!other) {
            if (k == cap) return 0;
            at[k++] = i;
            other = 1;
        }
        i++;
    }
    return k;
}

size_t detect_split(const struct rep *t, size_t p, int64_t level, size_t *at, size_t cap,
                    size_t *alike, size_t *unit_at, size_t *unit_len)
{
    *alike = 0;
    if (p < 4) return 0;
    unsigned char *isb = calloc(p + 1, 1);
    size_t *bd = malloc(SPLIT_BOUNDS_MAX * sizeof *bd), nb = 0;
    if (!isb || !bd) {
        free(isb), free(bd);
        return 0;
    }
    isb[0] = isb[p] = 1;
    bd[nb++] = 0;
    for (size_t i = 1; i < p && nb < SPLIT_BOUNDS_MAX; i++)
        if (t[i - 1].key == level) isb[i] = 1, bd[nb++] = i;
    size_t best_q = 0, best_u = 0, work = 0;
    if (nb < SPLIT_BOUNDS_MAX)
        for (size_t a = 0; a < nb; a++)
            for (size_t b = a + 1; b < nb; b++) {
                size_t q = bd[b] - bd[a];
                if (2 * q > p || (best_q && q >= best_q)) break;
                if (bd[a] + 2 * q > p || !isb[bd[a] + 2 * q]) continue;
                work += q;
                if (work > SPLIT_WORK_MAX || !same(t + bd[a], t + bd[a] + q, q)) continue;
                size_t copies;
                size_t k = decompose(t, p, bd[a], q, at, cap, &copies, &work);
                if (k >= 2 && copies >= 2 && 2 * copies * q >= p) best_q = q, best_u = bd[a];
                break; /* a longer unit from this point: only if no shorter one holds */
            }
    size_t k = 0;
    if (best_q >= SPLIT_UNIT_MIN)
        work = 0, k = decompose(t, p, best_u, best_q, at, cap, alike, &work);
    free(isb), free(bd);
    if (k < 2) return 0;
    for (size_t j = 0; j < k; j++) /* the first copy (the unit's tokens, to name the loop) */
        if ((j + 1 < k ? at[j + 1] : p) - at[j] == best_q && same(t + at[j], t + best_u, best_q)) {
            *unit_at = at[j], *unit_len = best_q;
            break;
        }
    return k;
}
