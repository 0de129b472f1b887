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
#include <string.h>

void detect_sizes_tokens(struct rep *s, size_t n, int64_t *bytes)
{
    for (size_t i = 0; i < n; i++) {
        int64_t b = rep_bytes(s[i].token);
        bytes[i] = b;
        s[i].token = rep_token(b > 0 ? 1 : b < 0 ? -1 : 0, rep_type(s[i].token));
    }
}

void detect_sizes_restore(struct rep *s, size_t n, const int64_t *bytes)
{
    for (size_t i = 0; i < n; i++) s[i].token = rep_token(bytes[i], rep_type(s[i].token));
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

struct seg {
    uint64_t hash;
    size_t at, len;
};

static int cmp_seg(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    if (x->hash != y->hash) return (x->hash > y->hash) - (x->hash < y->hash);
    return (x->len > y->len) - (x->len < y->len);
}

void detect_sizes_levels_free(struct level_cut *c)
{
    free(c->first), free(c->last);
    memset(c, 0, sizeof *c);
}

int detect_sizes_levels(const struct rep *s, size_t n, const int64_t *bytes, struct level_cut *out)
{
    memset(out, 0, sizeof *out);
    if (n < 64) return 0;
    int64_t level = s[n / 2].key;
    for (size_t i = n / 2; i < n; i++) level = s[i].key < level ? s[i].key : level;
    /* The pieces between two reports that leave the total at its level, each with the hash of
     * its order of allocations and frees. */
    struct seg *v = malloc(n * sizeof *v);
    if (!v) return 0;
    size_t m = 0, prev = n;
    for (size_t i = 0; i < n; i++) {
        if (s[i].key != level) continue;
        if (prev < n && i > prev) {
            uint64_t h = 0xcbf29ce484222325ull;
            for (size_t k = prev + 1; k <= i; k++)
                h = (h ^ (uint64_t)s[k].token) * 0x100000001b3ull;
            v[m++] = (struct seg){h, prev + 1, i - prev};
        }
        prev = i;
    }
    /* The unit: the order most pieces of 4 reports or more repeat. */
    struct seg *w = malloc((m ? m : 1) * sizeof *w);
    if (!w) {
        free(v);
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (v[i].len >= 4) w[k++] = v[i];
    qsort(w, k, sizeof *w, cmp_seg);
    size_t best = 0, count = 0;
    struct seg unit = {0};
    for (size_t i = 0; i < k; i += count) {
        count = 1;
        while (i + count < k && !cmp_seg(&w[i], &w[i + count])) count++;
        if (count > best) best = count, unit = w[i];
    }
    free(w);
    size_t q = unit.len, pieces = 0, span = m ? v[m - 1].at + v[m - 1].len - v[0].at : 0;
    for (size_t i = 0; i < m; i++) pieces += 2 * v[i].len >= q;
    /* The first copy in time, against which the others are scaled. */
    for (size_t i = 0; i < m && best; i++)
        if (v[i].hash == unit.hash && v[i].len == q) {
            unit = v[i];
            break;
        }
    int ok = best >= 8 && 4 * best >= 3 * pieces && 2 * best * q >= span && 2 * span >= n;
    double *r = ok ? malloc(q * sizeof *r) : NULL;
    size_t scaled_ok = 0;
    for (size_t i = 0; r && i < m; i++)
        if (v[i].hash == unit.hash && v[i].len == q)
            scaled_ok += (size_t)scaled(bytes + v[i].at, bytes + unit.at, q, r);
    free(r);
    ok = ok && 10 * scaled_ok >= 9 * best;
    if (ok) {
        out->first = malloc(pieces * sizeof *out->first);
        out->last = malloc(pieces * sizeof *out->last);
        ok = out->first && out->last;
    }
    if (!ok) {
        free(v);
        detect_sizes_levels_free(out);
        return 0;
    }
    for (size_t i = 0; i < m; i++)
        if (2 * v[i].len >= q)
            out->first[out->n] = v[i].at, out->last[out->n] = v[i].at + v[i].len - 1, out->n++;
    out->unit_at = unit.at, out->unit_len = q, out->copies = best;
    free(v);
    return 1;
}
