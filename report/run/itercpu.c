/*
 * itercpu.c: each iteration's thread CPU time and context switches (table iteration_cpu), read
 * once for the series' CPU split (series_cpu.c), the slow iterations' causes (tails.c) and the
 * requests (requests.c).
 *
 * The thread's CPU account (getrusage, profiler/iteration.c) is the scheduler's as of its last
 * update: a tick, or a switch. So a reading lags what the thread used, by up to a tick, and
 * catches up wherever the next update falls. A thread that blocks between its iterations (a
 * server waiting for its next request) caught up in the gap: its iterations read a fraction of
 * their CPU (a compute-only forward that slept in every 10th gap: 9% on the CPU; a fresh-eyes
 * check, 2026-11-29). From the gap readings (schema: gap_cpu_ns, gap_voluntary, gap_involuntary),
 * each thread's iterations are walked in time order with what the account still owes it:
 *  - an iteration without a switch never left the CPU: its CPU time is its host time, and what
 *    its reading fell short of that is owed;
 *  - an iteration with a switch caught the account up there: its reading less what was owed
 *    when it began, held to [0, its host time]; nothing owed after (what it ran after its last
 *    switch is missed, as before);
 *  - a gap with a switch settles what was owed; a gap without one was on the CPU throughout (its
 *    wall time), and what the account moved past that settled part of it.
 * A first version gave a blocked gap's CPU to the iterations before it, up to their room; where
 * the gap had computed before it blocked, that CPU filled a forward's sleeps and preemptions, and
 * the slow iterations' causes went (a second fresh-eyes check): the switches tell now where the
 * account was settled, and a forward that slept keeps its own reading. Without the gap columns
 * (databases before 2026-11-29, session 15) the readings are as stored.
 */
#include "itercpu.h"
#include "run.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    int64_t tid, start, host;
    size_t row; /* its index in the rows */
    int64_t gap_cpu, gap_sw; /* -1: not read apart */
};

static int cmp_walk(const void *a, const void *b)
{
    const struct walk *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static void settle(struct iter_cpus *c, struct walk *w, size_t n, const char *sw_known)
{
    qsort(w, n, sizeof *w, cmp_walk);
    double owed = 0; /* CPU the thread used that its account has not shown yet */
    for (size_t i = 0; i < n; i++) {
        int first = !i || w[i].tid != w[i - 1].tid;
        if (first) owed = 0;
        if (!first && w[i].gap_cpu >= 0) { /* the gap before it, read apart */
            if (w[i].gap_sw > 0) {
                owed = 0;
            } else {
                double wall = (double)(w[i].start - (w[i - 1].start + w[i - 1].host));
                owed += (wall > 0 ? wall : 0) - (double)w[i].gap_cpu;
                if (owed < 0) owed = 0;
            }
        }
        struct iter_cpu *x = &c->v[w[i].row];
        if (!x->has_cpu || !sw_known[w[i].row]) continue;
        double host = (double)w[i].host, cpu = (double)x->cpu;
        if (x->vcsw == 0 && x->ivcsw == 0) { /* never off the CPU */
            owed += host - cpu;
            if (owed < 0) owed = 0;
            cpu = host;
        } else {
            cpu -= owed;
            owed = 0;
            cpu = cpu < 0 ? 0 : cpu > host ? host : cpu;
        }
        c->settled += (int64_t)cpu - x->cpu;
        x->cpu = (int64_t)cpu;
    }
}

static void load(sqlite3 *db, const struct run_phases *p, struct iter_cpus *c)
{
    int gaps = db_has_column(db, "iteration_cpu", "gap_cpu_ns") &&
               db_has_column(db, "iteration_cpu", "gap_voluntary") &&
               db_has_column(db, "iteration_cpu", "gap_involuntary");
    int faults = db_has_column(db, "iteration_cpu", "minflt") &&
                 db_has_column(db, "iteration_cpu", "majflt") &&
                 db_has_column(db, "iteration_cpu", "sys_ns");
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM iteration_cpu", 0);
    c->v = malloc((cap ? cap : 1) * sizeof *c->v);
    int64_t(*gap)[2] = malloc((cap ? cap : 1) * sizeof *gap);
    char *sw_known = malloc(cap ? cap : 1);
    if (!c->v || !gap || !sw_known) cli_fail("out of memory");
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT id, cpu_ns, voluntary, involuntary, %s, %s FROM iteration_cpu ORDER BY id",
             gaps ? "gap_cpu_ns, gap_voluntary + gap_involuntary" : "NULL, NULL",
             faults ? "minflt + majflt, sys_ns" : "NULL, NULL");
    sqlite3_stmt *st = db_prepare(db, sql);
    while (c->n < cap && db_step(st)) {
        struct iter_cpu *x = &c->v[c->n];
        x->id = sqlite3_column_int64(st, 0);
        x->cpu = sqlite3_column_int64(st, 1);
        x->has_cpu = sqlite3_column_type(st, 1) != SQLITE_NULL;
        x->vcsw = sqlite3_column_int64(st, 2);
        x->ivcsw = sqlite3_column_int64(st, 3);
        sw_known[c->n] = sqlite3_column_type(st, 2) != SQLITE_NULL &&
                         sqlite3_column_type(st, 3) != SQLITE_NULL && x->vcsw >= 0 && x->ivcsw >= 0;
        gap[c->n][0] = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
        gap[c->n][1] = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
        x->faults = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
        x->sys = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
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
        settle(c, w, n, sw_known);
        free(w);
    }
    free(gap), free(sw_known);
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
