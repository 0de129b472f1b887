/*
 * tails_kind.c: slow iterations known by their kind (tails_kind.h). Each iteration's allocated
 * bytes are its thread's allocator reports inside its host window, and the writer's folds that
 * begin there, found by binary search: a series reads no more than its iterations' rows.
 */
#include "tails_kind.h"
#include "report/base/rstats.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define KIND_ALIKE  0.10 /* the typical kind: within this share of the median bytes */
#define KIND_LARGER 1.5  /* the larger kind: this many times the median bytes or more */
#define KIND_APART  0.8  /* the chance one of the larger kind is the slower of a pair, at least */

struct fold_at {
    int64_t start; /* first: sorted by rstats_cmp_i64, searched by first_at */
    int64_t bytes;
    uint32_t tid;
};

_Static_assert(offsetof(struct mem_row, ts) == 0, "first_at reads a mem_row's ts first");

/* The first of n elements of `size` bytes at v, in order of the int64_t each begins with (a
 * mem_row's ts, a fold_at's start), at or after t. */
static size_t first_at(const void *v, size_t n, size_t size, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const int64_t *)(const void *)((const char *)v + mid * size) < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Each iteration's allocated bytes (its thread's, inside its host window); returns how many
 * allocated anything. */
static size_t bytes_of(const struct mem_rows *m, const struct run_iter *const *it, size_t n,
                       int64_t *bytes)
{
    struct fold_at *f = malloc((m->nfolds ? m->nfolds : 1) * sizeof *f);
    if (!f) return 0;
    for (size_t k = 0; k < m->nfolds; k++)
        f[k] = (struct fold_at){m->folds[k].start, m->folds[k].alloc_bytes, m->folds[k].tid};
    size_t sorted = 1; /* the writer's folds come in time order: sorted only where they do not */
    for (size_t k = 1; k < m->nfolds && sorted; k++) sorted = f[k - 1].start <= f[k].start;
    if (!sorted) qsort(f, m->nfolds, sizeof *f, rstats_cmp_i64);
    size_t known = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s = it[i]->start, e = s + it[i]->host, b = 0;
        for (size_t r = first_at(m->v, m->n, sizeof *m->v, s); r < m->n && m->v[r].ts <= e; r++)
            if (m->v[r].tid == (uint32_t)it[i]->tid && m->v[r].bytes > 0) b += m->v[r].bytes;
        for (size_t k = first_at(f, m->nfolds, sizeof *f, s); k < m->nfolds && f[k].start <= e; k++)
            if (f[k].tid == (uint32_t)it[i]->tid && f[k].bytes > 0) b += f[k].bytes;
        bytes[i] = b;
        known += b > 0;
    }
    free(f);
    return known;
}

size_t tails_kind(const struct mem_rows *m, const struct run_iter *const *it, const int64_t *lat,
                  const double *local, size_t n, double share, char *slow)
{
    memset(slow, 0, n);
    if (!m || (!m->n && !m->nfolds) || n < 4) return 0;
    int64_t *bytes = malloc(n * sizeof *bytes), *a = malloc(n * sizeof *a);
    int64_t *typ = malloc(n * sizeof *typ);
    size_t set = 0;
    if (!bytes || !a || !typ) goto out;
    if (4 * bytes_of(m, it, n, bytes) < 3 * n) goto out; /* the allocations mostly unknown */
    memcpy(a, bytes, n * sizeof *a);
    double med = (double)rstats_median(a, n);
    if (med <= 0) goto out;
    /* The typical kind (most of the series) and the larger one (a minority of 2 or more). */
    size_t nt = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (double)bytes[i] / med;
        if (r >= 1 - KIND_ALIKE && r <= 1 + KIND_ALIKE)
            typ[nt++] = lat[i];
        else if (r >= KIND_LARGER)
            a[nl++] = lat[i];
    }
    if (2 * nt < n || nl < 2) goto out;
    rstats_sort_i64(typ, nt);
    double typ_med = (double)typ[nt / 2];
    /* The chance that one of the larger kind is slower than one of the typical kind (the
     * Mann-Whitney statistic over its pairs, ties half): KIND_APART or more. */
    double above = 0;
    for (size_t i = 0; i < nl; i++) {
        size_t lo = 0, hi = nt;
        while (lo < hi) { /* typ below a[i] */
            size_t mid = lo + (hi - lo) / 2;
            if (typ[mid] < a[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t eq = lo;
        while (eq < nt && typ[eq] == a[i]) eq++;
        above += (double)lo + 0.5 * (double)(eq - lo);
    }
    if ((double)rstats_median(a, nl) < (1 + share) * typ_med ||
        above < KIND_APART * (double)nl * (double)nt)
        goto out;
    /* Each of the kind `share` over the typical kind's median and over its own level (a larger
     * forward as fast as the others is not slow). */
    for (size_t i = 0; i < n; i++)
        if ((double)bytes[i] >= KIND_LARGER * med && (double)lat[i] > (1 + share) * typ_med &&
            (double)lat[i] > local[i])
            slow[i] = 1, set++;
out:
    free(bytes), free(a), free(typ);
    return set;
}
