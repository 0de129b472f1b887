/*
 * detect_sizes.c: forwards of one model at other sizes (docs/report.md, "Iterations without a
 * mark"). detect.c finds a loop where the allocator's reports repeat exactly. A server whose
 * requests come in batches of any size repeats no sizes: a C++ loop of 4,000 forwards at random
 * batches of 1 to 8 read "no iteration was seen", and batches of 1, 2, ... 8 in turn one
 * iteration of 8 forwards (486 iterations, p50 2.59 ms against the program's own 336 us).
 * Where the exact search finds nothing, or one loop whose period holds no cut, the search runs
 * again on the reports' pattern (an allocation or a free, and the device): a forward makes the
 * same allocations and frees in the same order at any batch. Kept only where it holds what an
 * exact period checks and more: the allocated total back at exactly one level at every cut, and
 * every period the first one scaled (at least half its allocations by one factor, in 9 of 10
 * periods), so that a loop's layers (the total never back at its level) or two models of
 * unrelated sizes are not read as one model's forwards.
 */
#include "detect_sizes.h"

#include <stdlib.h>

void detect_sizes_tokens(struct rep *s, size_t n, int64_t *bytes)
{
    for (size_t i = 0; i < n; i++) {
        int64_t t = s[i].token, type = t & 15, b = (t - type) / 16;
        bytes[i] = b;
        s[i].token = (b > 0 ? 1 : b < 0 ? -1 : 0) * 16 + type;
    }
}

void detect_sizes_restore(struct rep *s, size_t n, const int64_t *bytes)
{
    for (size_t i = 0; i < n; i++) s[i].token = bytes[i] * 16 + (s[i].token & 15);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether at least half of one period's allocations are the unit's scaled by one factor. */
static int scaled(const int64_t *b, const int64_t *u, size_t p, double *r)
{
    size_t m = 0;
    for (size_t i = 0; i < p; i++)
        if (u[i] > 0 && b[i] > 0) r[m++] = (double)b[i] / (double)u[i];
    if (!m) return 0;
    qsort(r, m, sizeof *r, cmp_double);
    size_t most = 0;
    for (size_t lo = 0, hi = 0; lo < m; lo++) {
        while (hi < m && r[hi] <= r[lo] * 1.03) hi++;
        if (hi - lo > most) most = hi - lo;
    }
    return 2 * most >= m;
}

int detect_sizes_scaled(const int64_t *bytes, size_t first, size_t p, size_t n)
{
    double *r = malloc((p ? p : 1) * sizeof *r);
    if (!r) return 0;
    size_t periods = 0, ok = 0;
    for (size_t a = first; a + p <= n; a += p, periods++)
        ok += (size_t)scaled(bytes + a, bytes + first, p, r);
    free(r);
    return periods && 10 * ok >= 9 * periods;
}
