/*
 * cupti_fold.c: two figures the report otherwise reads from every kernel row, folded while the
 * rows are written and stored at finish, so that a report's cost does not grow with the run:
 *
 *   kernel_time:      the kernels' time over the run, in buckets of a width that doubles (pairs
 *                     merged) whenever the run outgrows FOLD_BUCKETS of them; a kernel over two
 *                     buckets counts in both, split at the edge. Exact sums: the report's
 *                     timeline buckets are whole multiples of the width (report/run/timeline.c).
 *   operator_kernels: per (phase of the launch, innermost operator) the kernels and their time
 *                     (report/run/operators.c).
 *
 * Writer thread only. The operators' table is a map from (op string id, phase) to an index.
 */
#include "cupti_internal.h"
#include "../profiler/map.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_BUCKETS 16384
#define FOLD_WIDTH0  1000000 /* 1 ms at first */
/* Past 2^62 ns (146 years) a time is a broken record: not folded, so that the width (at most
 * 2^49 then) times FOLD_BUCKETS never overflows and widen() always ends. */
#define FOLD_MAX_NS ((int64_t)1 << 62)

struct op_fold {
    int64_t op;
    int phase;
    int64_t kernels, ns;
};

static struct {
    int64_t width;
    int64_t t[FOLD_BUCKETS]; /* kernel ns in [b * width, (b + 1) * width) */
    int any;
    struct ip_map index; /* op << 8 | phase -> index + 1 */
    struct op_fold *ops;
    size_t nops, capops;
} fold;

void ip_cupti_fold_reset(void)
{
    free(fold.ops);
    ip_map_free(&fold.index);
    memset(&fold, 0, sizeof fold);
}

/* Double the width until end fits: bucket b and b + 1 become bucket b / 2. */
static void widen(int64_t end)
{
    while (end > fold.width * FOLD_BUCKETS) {
        for (int b = 0; b < FOLD_BUCKETS / 2; b++) fold.t[b] = fold.t[2 * b] + fold.t[2 * b + 1];
        memset(fold.t + FOLD_BUCKETS / 2, 0, sizeof fold.t / 2);
        fold.width *= 2;
    }
}

static void time_add(int64_t s, int64_t e)
{
    if (s < 0) s = 0; /* before t0: left out, as the report's buckets leave it */
    if (e <= s) return;
    if (!fold.width) fold.width = FOLD_WIDTH0;
    widen(e);
    fold.any = 1;
    for (int64_t b = s / fold.width; b < FOLD_BUCKETS && b * fold.width < e; b++) {
        int64_t lo = b * fold.width, hi = lo + fold.width;
        fold.t[b] += (e < hi ? e : hi) - (s > lo ? s : lo);
    }
}

static void op_add(int64_t op, int phase, int64_t dur)
{
    if (op <= 0 || phase < 0 || phase > 255) return;
    uint64_t *slot = ip_map_put(&fold.index, (uint64_t)op << 8 | (uint64_t)phase);
    if (!slot) return;
    if (!*slot) {
        if (fold.nops == fold.capops) {
            size_t n = fold.capops ? fold.capops * 2 : 64;
            struct op_fold *q = realloc(fold.ops, n * sizeof *q);
            if (!q) {
                ip_map_del(&fold.index, (uint64_t)op << 8 | (uint64_t)phase);
                return;
            }
            fold.ops = q, fold.capops = n;
        }
        fold.ops[fold.nops] = (struct op_fold){op, phase, 0, 0};
        *slot = ++fold.nops;
    }
    struct op_fold *f = &fold.ops[*slot - 1];
    f->kernels++;
    f->ns += dur;
}

void ip_cupti_fold_kernel(int64_t start, int64_t dur, int phase, int64_t op)
{
    if (start < FOLD_MAX_NS && dur >= 0 && dur < FOLD_MAX_NS - (start > 0 ? start : 0))
        time_add(start, start + dur);
    op_add(op, phase, dur);
}

void ip_cupti_fold_write(struct ip_store *s)
{
    sqlite3_stmt *t = ip_store_prepare(s, "INSERT INTO kernel_time(bucket, ns) VALUES (?,?)");
    for (int b = 0; t && fold.any && b < FOLD_BUCKETS; b++) {
        if (!fold.t[b]) continue;
        sqlite3_bind_int(t, 1, b);
        sqlite3_bind_int64(t, 2, fold.t[b]);
        ip_store_step(s, t);
    }
    /* The width even where no kernel ran: the table then says "none", not "not folded". */
    sqlite3_stmt *m = ip_store_prepare(s, "INSERT OR REPLACE INTO meta VALUES"
                                          " ('kernel_time.width_ns', ?)");
    if (m) {
        sqlite3_bind_int64(m, 1, fold.width ? fold.width : FOLD_WIDTH0);
        ip_store_step(s, m);
    }
    sqlite3_stmt *o = ip_store_prepare(s, "INSERT INTO operator_kernels(phase, op, kernels, ns)"
                                          " VALUES (?,?,?,?)");
    for (size_t i = 0; o && i < fold.nops; i++) {
        sqlite3_bind_int(o, 1, fold.ops[i].phase);
        sqlite3_bind_int64(o, 2, fold.ops[i].op);
        sqlite3_bind_int64(o, 3, fold.ops[i].kernels);
        sqlite3_bind_int64(o, 4, fold.ops[i].ns);
        ip_store_step(s, o);
    }
    ip_cupti_fold_reset();
}
