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
 */
#include "detect.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct rep {
    int64_t ts, token, allocated;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* How far back from the end s[i] == s[i + p] holds (the matching run's length). */
static size_t run_back(const struct rep *s, size_t n, size_t p)
{
    size_t run = 0;
    for (size_t i = n - 1 - p; i + 1 > 0 && s[i].token == s[i + p].token; i--) run++;
    return run;
}

/* The smallest period of s (0 none). Candidates are the distances back from the last report to
 * earlier reports of the same token: a period is always one of them. */
static size_t period_of(const struct rep *s, size_t n, size_t *run_out)
{
    if (n < 16) return 0;
    int64_t last = s[n - 1].token;
    for (size_t k = n - 1; k-- > 0;) {
        size_t p = n - 1 - k;
        if (p > n / 4) break;
        if (s[k].token != last) continue;
        size_t run = run_back(s, n, p);
        if (run >= 3 * p && run >= n / 2) {
            *run_out = run;
            return p;
        }
    }
    return 0;
}

static int64_t median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int detect_iterations(sqlite3 *db, int phase, struct detected *out)
{
    memset(out, 0, sizeof *out);
    if (!db_has_table(db, "tensor_memory")) return 0;
    /* The phase's busiest thread. */
    sqlite3_stmt *st = db_prepare(db, "SELECT tid FROM tensor_memory WHERE phase = ? GROUP BY tid"
                                      " ORDER BY count(*) DESC LIMIT 1");
    sqlite3_bind_int(st, 1, phase);
    int64_t tid = db_step(st) ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (tid < 0) return 0;
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM tensor_memory", 0), n = 0;
    struct rep *s = malloc((cap ? cap : 1) * sizeof *s);
    if (!s) cli_fail("out of memory");
    st = db_prepare(db, "SELECT ts, bytes, device_type, allocated FROM tensor_memory WHERE"
                        " phase = ? AND tid = ? ORDER BY ts, rowid");
    sqlite3_bind_int(st, 1, phase);
    sqlite3_bind_int64(st, 2, tid);
    while (db_step(st) && n < cap) {
        s[n].ts = sqlite3_column_int64(st, 0);
        s[n].token = sqlite3_column_int64(st, 1) * 16 + sqlite3_column_int64(st, 2);
        s[n].allocated = sqlite3_column_int64(st, 3);
        n++;
    }
    sqlite3_finalize(st);
    /* The end of a phase may hold a few reports of no iteration (the last output freed, the
     * program's clean-up): the period is looked for with up to a quarter of them left off. */
    size_t run = 0, p = 0;
    for (size_t cut = 0; !p && cut <= n / 4 && cut < 256 && n - cut >= 16; cut++)
        if ((p = period_of(s, n - cut, &run))) n -= cut;
    int found = 0;
    if (p) {
        size_t r0 = n - p - run; /* s[r0 ..] repeats with period p */
        /* The offset in the period where the allocated total is lowest (median over periods). */
        size_t cycles = (n - r0) / p, best = 0;
        int64_t best_v = 0, *v = malloc(cycles * sizeof *v);
        if (!v) cli_fail("out of memory");
        for (size_t j = 0; j < p; j++) {
            size_t m = 0;
            for (size_t k = r0 + j; k < n && m < cycles; k += p) v[m++] = s[k].allocated;
            int64_t med = median(v, m);
            if (j == 0 || med < best_v) best_v = med, best = j;
        }
        /* A loop that frees what it allocates: the total at that point the same each period. */
        size_t m = 0;
        for (size_t k = r0 + best; k < n && m < cycles; k += p) v[m++] = s[k].allocated;
        int64_t lo = v[0], hi = v[0];
        for (size_t k = 1; k < m; k++) lo = v[k] < lo ? v[k] : lo, hi = v[k] > hi ? v[k] : hi;
        free(v);
        if (hi - lo <= (hi > 0 ? hi / 100 : 0)) {
            out->tid = tid;
            out->period = (int)p;
            out->repeats = (int)(run / p);
            for (size_t a = r0 + best + 1; a + p - 1 < n && out->n < DETECT_MAX; a += p) {
                out->start[out->n] = s[a].ts;
                out->end[out->n] = s[a + p - 1].ts;
                out->n++;
            }
            found = out->n >= 4;
            if (!found) out->n = 0;
        }
    }
    free(s);
    return found;
}
