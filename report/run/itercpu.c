/*
 * itercpu.c: each iteration's thread CPU time and context switches (table iteration_cpu), read
 * once for the series' CPU split (series_cpu.c), the slow iterations' causes (tails.c) and the
 * requests (requests.c).
 *
 * The thread's CPU account (getrusage, profiler/iteration.c) moves at the scheduler's ticks and
 * switches. A thread that blocks between its iterations (a sleep, a queue's wait for the next
 * request) brings its account up to date there: the CPU of its iterations since the last tick is
 * then read in the gap, not in them (a compute-only forward that slept 2 ms in every 10th gap read
 * 9% of its host time on the CPU; a fresh-eyes check, 2026-11-29). Where a gap held a voluntary
 * switch (gap_voluntary > 0) the account was exact at that switch, so its CPU (gap_cpu_ns) is
 * given back to the thread's iterations since the gap before that one that blocked, in
 * proportion to the room each has (its host time less its CPU time), never past it: an
 * iteration is never on the CPU longer than it lasted. What the thread did in the gap before
 * it blocked (returning a result, taking the next request) goes with it, up to that room.
 * Without the gap columns (databases before 2026-11-29, session 15) the readings are as stored.
 */
#include "itercpu.h"
#include "run.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    int64_t tid, start, host;
    size_t row; /* its index in the rows */
    int64_t gap_cpu, gap_vcsw;
};

static int cmp_walk(const void *a, const void *b)
{
    const struct walk *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static void give_back(struct iter_cpus *c, struct walk *w, size_t n)
{
    qsort(w, n, sizeof *w, cmp_walk);
    size_t from = 0; /* the thread's first iteration since its last blocked gap */
    for (size_t i = 0; i < n; i++) {
        if (i && w[i].tid != w[i - 1].tid) from = i;
        if (w[i].gap_cpu <= 0 || w[i].gap_vcsw <= 0 || from == i) continue;
        double room = 0;
        for (size_t j = from; j < i; j++) {
            const struct iter_cpu *x = &c->v[w[j].row];
            if (x->has_cpu && w[j].host > x->cpu) room += (double)(w[j].host - x->cpu);
        }
        double give = (double)w[i].gap_cpu < room ? (double)w[i].gap_cpu : room;
        for (size_t j = from; j < i && give > 0; j++) {
            struct iter_cpu *x = &c->v[w[j].row];
            if (!x->has_cpu || w[j].host <= x->cpu) continue;
            int64_t add = (int64_t)((double)(w[j].host - x->cpu) / room * give);
            x->cpu += add, c->given_back += add;
        }
        from = i;
    }
}

static void load(sqlite3 *db, const struct run_phases *p, struct iter_cpus *c)
{
    int gaps = db_has_column(db, "iteration_cpu", "gap_cpu_ns") &&
               db_has_column(db, "iteration_cpu", "gap_voluntary");
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM iteration_cpu", 0);
    c->v = malloc((cap ? cap : 1) * sizeof *c->v);
    int64_t(*gap)[2] = malloc((cap ? cap : 1) * sizeof *gap);
    if (!c->v || !gap) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, gaps ? "SELECT id, cpu_ns, voluntary, involuntary,"
                                             " gap_cpu_ns, gap_voluntary FROM iteration_cpu"
                                             " ORDER BY id"
                                           : "SELECT id, cpu_ns, voluntary, involuntary, NULL,"
                                             " NULL FROM iteration_cpu ORDER BY id");
    while (c->n < cap && db_step(st)) {
        struct iter_cpu *x = &c->v[c->n];
        x->id = sqlite3_column_int64(st, 0);
        x->cpu = sqlite3_column_int64(st, 1);
        x->has_cpu = sqlite3_column_type(st, 1) != SQLITE_NULL;
        x->vcsw = sqlite3_column_int64(st, 2);
        x->ivcsw = sqlite3_column_int64(st, 3);
        gap[c->n][0] = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
        gap[c->n][1] = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
        c->n++;
    }
    sqlite3_finalize(st);
    if (gaps && c->n) { /* each thread's iterations in time order, from the run model */
        struct walk *w = malloc((p->niters ? p->niters : 1) * sizeof *w);
        if (!w) cli_fail("out of memory");
        size_t n = 0;
        for (size_t i = 0; i < p->niters; i++) {
            const struct run_iter *x = &p->iters[i];
            const struct iter_cpu *r = x->id > 0 ? iter_cpus_find(c, x->id) : NULL;
            if (!r) continue;
            size_t k = (size_t)(r - c->v);
            w[n++] = (struct walk){x->tid, x->start, x->host, k, gap[k][0], gap[k][1]};
        }
        give_back(c, w, n);
        free(w);
    }
    free(gap);
}

static void drop(void *x)
{
    struct iter_cpus *c = x;
    if (!c) return;
    free(c->v);
    free(c);
}

const struct run_model run_model_iter_cpus = {"iter_cpus", drop, 1};

const struct iter_cpus *iter_cpus_get(sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_iter_cpus);
    if (*slot) return *slot;
    if (!db_has_table(db, "iteration_cpu")) return NULL;
    struct iter_cpus *c = calloc(1, sizeof *c);
    if (!c) cli_fail("out of memory");
    load(db, p, c);
    *slot = c;
    return c;
}

const struct iter_cpu *iter_cpus_find(const struct iter_cpus *c, int64_t id)
{
    return c && c->n ? bsearch(&id, c->v, c->n, sizeof *c->v, rstats_cmp_i64) : NULL;
}
