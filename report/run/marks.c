/*
 * marks.c: which Python module calls a program's marks hold (iterations_counted, run.h). A mark
 * (an NVTX range or a record_function scope named iteration*) is what the program calls an
 * iteration; the outermost module calls inside it are part of it, not iterations of their own.
 * What a mark takes from them: the model it ran (temp.mark_models: two phases that ran other
 * models are not compared), and where they ran on another thread (a server's request, marked on
 * its front thread) their phase and operators (iterations_moved and the SQL sources below).
 */
#include "run.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static void marks_exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        cli_fail("cannot list the iterations: %s", err ? err : "?");
}

/* A mark wins over the Python module calls it holds: where the program marks its iterations (an
 * NVTX range, a record_function scope named iteration*), a model that runs inside a mark of its
 * own thread in a phase is the mark's there, its calls inside the marks and its few outside them
 * (a warm-up before the marked loop, 3 calls or 20: as a series of its own it split the phase, and
 * its headline verdict with it). Its calls outside at one batch, MARK_LOOP_MIN or more and at
 * least half as many as it ran inside the marks at that batch, are a loop of their own and stay
 * iterations (200 unmarked forwards at batch 64 after 100 marked at batch 8
 * were lost, a third fresh-eyes check). A model that never runs inside a mark in a phase stays
 * iterations there: its own unmarked loop, a phase with no mark, a model beside the marked loop
 * on another thread, unless nearly all its calls (9 in 10) each run inside a mark of another
 * thread, about one a mark (a server's forward on its worker, inside the request its front thread
 * marks; 748 short forwards of an unrelated model inside 60 long marks are not that). Until
 * 2026-11-29 (session 17) every module call of a marked run was set aside: one
 * record_function("iteration B") made model A's 150 unmarked forwards "no iteration was seen in
 * inference_mode" under "Lost nothing". The rowids set aside go into temp.modules_in_marks,
 * once per report, which iterations_counted's SQL reads. */
struct mark_row {
    int64_t id, tid, start, end, phase, label, batch;
    int source;     /* 5 a module call; 2, 3 a mark; -1 a module call set aside */
    int across;     /* set aside as another thread's mark's (a server's worker) */
    int64_t to;     /* then the mark it counts in (its index among the marks by start), -1 none */
    int64_t in;     /* a module call set aside: the mark it runs in (its id), 0 none */
    int64_t within; /* a module call: the mark of any thread it runs inside, start to end (its
                       index among the marks by start), -1 none */
};

/* A module call set aside inside another thread's mark: the mark takes its phase and its
 * operators (marks_moved below). */
struct mark_move {
    int64_t call, mark, start, phase; /* mark: its index among the marks by start */
};

#define MARK_LOOP_MIN 10 /* a held model's calls outside the marks: a loop of its own from this */
#define MARK_SCAN     64 /* marks looked back over for those holding a call (overlapping ones) */

/* The marks by start, with the latest end so far (reach), for the calls within them. */
struct marks_by_start {
    const struct mark_row *v;
    const int64_t *reach;
    size_t n;
    int64_t *calls, *busy; /* per mark: calls counted in it, their time (cross_attribute) */
    int64_t *last, *first; /* per mark: the latest end of those calls, the earliest start */
    int64_t *own_end;      /* per mark: the latest end of its own thread's module calls in it */
    char *own;     /* per mark: its own thread works in it (marks_own): it takes no other's calls */
    char *model;   /* per mark: it holds a module call of its own thread: filled by none */
    char *nested;  /* per mark: inside another of its thread (the report counts the outer one) */
    int64_t *into; /* per mark: the phase of a held call of another thread inside it, -1 none */
};

static int by_start(const void *a, const void *b)
{
    const struct mark_row *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int by_tid_start(const void *a, const void *b)
{
    const struct mark_row *x = a, *y = b;
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->start > y->start) - (x->start < y->start);
}

/* Module calls first, by phase, model and batch; the marks after them. */
static int by_phase_label(const void *a, const void *b)
{
    const struct mark_row *x = a, *y = b;
    int mx = x->source == 2 || x->source == 3, my = y->source == 2 || y->source == 3;
    if (mx != my) return mx - my;
    if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
    if (x->label != y->label) return (x->label > y->label) - (x->label < y->label);
    if (x->batch != y->batch) return (x->batch > y->batch) - (x->batch < y->batch);
    return (x->id > y->id) - (x->id < y->id);
}

/* Marks starting at or before t: [0, return). */
static size_t marks_before(const struct mark_row *mk, size_t nm, int64_t t)
{
    return rstats_upper_i64(mk, nm, sizeof *mk, offsetof(struct mark_row, start), t);
}

/* Mark j may hold call c of another thread: it spans the call, is of another thread, does no work
 * of its own (marks_own), is outermost on its thread, and is of name `label` (INT64_MIN: any). */
static int cross_candidate(const struct marks_by_start *m, size_t j, const struct mark_row *c,
                           int64_t label)
{
    return m->v[j].end >= c->end && m->v[j].start <= c->start && m->v[j].tid != c->tid &&
           !m->own[j] && !m->nested[j] && (label == INT64_MIN || m->v[j].label == label);
}

/* Each call of v[a..b) within a mark that may hold it (cross_candidate) counts in one of them: the
 * one of fewest calls so far, the earliest of those (requests that overlap, four workers serving
 * them: the latest-ending one took two calls and another none, a fresh-eyes check). Of one name
 * where label is not INT64_MIN (two services whose requests overlap: a chat request's calls went
 * to the other service's marks). into: every mark that may hold the call takes its phase (a
 * batching server: one call in four requests, three of them were left in the front thread's
 * phase), instead of counting it. */
static void cross_scan(struct mark_row *v, size_t a, size_t b, struct marks_by_start *m,
                       int64_t label, int into)
{
    for (size_t k = a; k < b; k++) {
        if (!into) v[k].to = -1;
        if (v[k].within < 0) continue;
        size_t lo = marks_before(m->v, m->n, v[k].start);
        int64_t best = -1;
        for (size_t j = lo; j-- > 0 && lo - j <= MARK_SCAN && m->reach[j] >= v[k].end;) {
            if (!cross_candidate(m, j, &v[k], label)) continue;
            if (into && m->into[j] < 0) m->into[j] = v[k].phase;
            if (best < 0 || m->calls[j] <= m->calls[best]) best = (int64_t)j;
        }
        if (into) continue;
        if (best < 0 && cross_candidate(m, (size_t)v[k].within, &v[k], label)) best = v[k].within;
        if (best < 0) continue;
        v[k].to = best;
        m->calls[best]++;
        m->busy[best] += v[k].end - v[k].start;
        if (v[k].end > m->last[best]) m->last[best] = v[k].end;
        if (!m->first[best] || v[k].start < m->first[best]) m->first[best] = v[k].start;
    }
}

static void cross_clear(const struct mark_row *v, size_t a, size_t b, struct marks_by_start *m)
{
    for (size_t k = a; k < b; k++)
        if (v[k].to >= 0)
            m->calls[v[k].to] = m->busy[v[k].to] = m->last[v[k].to] = m->first[v[k].to] = 0;
}

/* Each call of v[a..b) within a mark of another thread counts in one of those that hold it
 * (cross_scan), of the one name most of them went to (returned; INT64_MIN: any). m->calls and
 * m->busy zero on entry; cross_clear zeroes them again. */
static int64_t cross_attribute(struct mark_row *v, size_t a, size_t b, struct marks_by_start *m,
                               int64_t *tmp)
{
    cross_scan(v, a, b, m, INT64_MIN, 0);
    size_t q = 0, best = 0, run = 0;
    for (size_t k = a; k < b; k++)
        if (v[k].to >= 0) tmp[q++] = m->v[v[k].to].label;
    rstats_sort_i64(tmp, q);
    int64_t label = INT64_MIN;
    for (size_t k = 0; k < q; k++) {
        run = k && tmp[k] == tmp[k - 1] ? run + 1 : 1;
        if (run > best) best = run, label = tmp[k];
    }
    if (!q || best == q) return INT64_MIN;
    cross_clear(v, a, b, m);
    cross_scan(v, a, b, m, label, 0);
    return label;
}

static const struct mark_row *sib_marks; /* by_mark_group's marks (qsort has no context) */

static int by_mark_group(const void *a, const void *b)
{
    const struct mark_row *x = &sib_marks[*(const size_t *)a], *y = &sib_marks[*(const size_t *)b];
    if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
    return (x->label > y->label) - (x->label < y->label);
}

static int by_mark_thread(const void *a, const void *b)
{
    const struct mark_row *x = &sib_marks[*(const size_t *)a], *y = &sib_marks[*(const size_t *)b];
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->start > y->start) - (x->start < y->start);
}

/* m->own: the marks whose thread works in them, which no call of another thread's model joins
 * (a pipeline whose main thread runs its encoder in each step while another thread decodes the
 * step before: the steps took the decoder's phase and operators; a loop of its own mm and tanh
 * beside an unrelated model). By name: the median mark's thread on the CPU for half its time or
 * more (iteration_cpu: a server's front thread waits for its worker), or, where the CPU is not
 * known, a mark that holds a module call of its own thread (v[k].in). m->nested: marks inside
 * another of their thread, which the report does not count (a batch's mark around its four
 * requests' marks: the calls went to the requests). ix, tmp: room for n. */
static void marks_own(sqlite3 *db, const struct mark_row *v, size_t n, struct marks_by_start *m,
                      size_t *ix, int64_t *tmp)
{
    size_t q = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k].source == -1 && v[k].in) tmp[q++] = v[k].in;
    rstats_sort_i64(tmp, q);
    for (size_t j = 0; j < m->n; j++)
        m->own[j] = m->model[j] =
            q && bsearch(&m->v[j].id, tmp, q, sizeof *tmp, rstats_cmp_i64) != NULL;
    /* Each mark's own module calls' latest end: the marks by id, (id, index) pairs. */
    int64_t(*byid)[2] = malloc((m->n ? m->n : 1) * sizeof *byid),
    (*cpu)[2] = malloc((m->n ? m->n : 1) * sizeof *cpu);
    if (!byid || !cpu) cli_fail("out of memory");
    for (size_t j = 0; j < m->n; j++) byid[j][0] = m->v[j].id, byid[j][1] = (int64_t)j;
    qsort(byid, m->n, sizeof *byid, rstats_cmp_i64);
    for (size_t k = 0; k < n; k++) {
        if (v[k].source != -1 || !v[k].in) continue;
        int64_t(*at)[2] = bsearch(&v[k].in, byid, m->n, sizeof *byid, rstats_cmp_i64);
        if (at && v[k].end > m->own_end[(*at)[1]]) m->own_end[(*at)[1]] = v[k].end;
    }
    free(byid);
    size_t nc = 0;
    if (db_has_table(db, "iteration_cpu")) {
        sqlite3_stmt *st = db_prepare(db, "SELECT c.id, c.cpu_ns FROM main.iteration_cpu c JOIN"
                                          " main.iterations i ON i.rowid = c.id WHERE i.source"
                                          " IN (2, 3) AND c.cpu_ns IS NOT NULL ORDER BY c.id");
        while (nc < m->n && db_step(st))
            cpu[nc][0] = sqlite3_column_int64(st, 0), cpu[nc++][1] = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
    }
    sib_marks = m->v;
    for (size_t j = 0; j < m->n; j++) ix[j] = j;
    qsort(ix, m->n, sizeof *ix, by_mark_group);
    for (size_t a = 0, b; a < m->n; a = b) {
        size_t k = 0;
        for (b = a; b < m->n && !by_mark_group(&ix[a], &ix[b]); b++) {
            const struct mark_row *x = &m->v[ix[b]];
            int64_t(*c)[2] = nc ? bsearch(&x->id, cpu, nc, sizeof *cpu, rstats_cmp_i64) : NULL;
            if (c && x->end > x->start)
                tmp[k++] = (int64_t)(1000.0 * (double)(*c)[1] / (double)(x->end - x->start));
        }
        if (!k) continue; /* the CPU not known: a module call of its own, as above */
        int busy = rstats_median(tmp, k) >= 500;
        for (size_t j = a; j < b; j++) m->own[ix[j]] = (char)busy;
    }
    free(cpu);
    /* Nested: inside an earlier mark of its thread of another name (an event loop's requests of
     * one name overlap, each a request: iterations.c, drop_nested), among the MARK_SCAN before. */
    qsort(ix, m->n, sizeof *ix, by_mark_thread);
    for (size_t j = 0; j < m->n; j++) {
        const struct mark_row *x = &m->v[ix[j]];
        m->nested[ix[j]] = 0;
        for (size_t k = j; k-- > 0 && j - k <= MARK_SCAN && m->v[ix[k]].tid == x->tid;)
            if (m->v[ix[k]].label != x->label && m->v[ix[k]].end >= x->end) {
                m->nested[ix[j]] = 1;
                break;
            }
    }
}

/* How many marks the calls of v[a..b) counted in (v[k].to) have innermost around them on the
 * thread of the mark they counted in (a request's mark inside its batch's). */
static size_t inner_marks(const struct mark_row *v, size_t a, size_t b,
                          const struct marks_by_start *mb)
{
    int64_t *ids = malloc((b - a + 1) * sizeof *ids);
    if (!ids) cli_fail("out of memory");
    size_t q = 0;
    for (size_t k = a; k < b; k++) {
        if (v[k].to < 0) continue;
        const struct mark_row *h = &mb->v[v[k].to];
        int64_t in = v[k].to;
        size_t lo = marks_before(mb->v, mb->n, v[k].start);
        for (size_t j = lo; j-- > 0 && lo - j <= MARK_SCAN;)
            if (mb->v[j].tid == h->tid && mb->v[j].end >= v[k].end) {
                in = (int64_t)j; /* the latest to start of those around it: the innermost */
                break;
            }
        ids[q++] = in;
    }
    rstats_sort_i64(ids, q);
    size_t n = 0;
    for (size_t k = 0; k < q; k++) n += !k || ids[k] != ids[k - 1];
    free(ids);
    return n;
}

/* A model's calls in one phase, v[a..b) by batch: which are the marks' (-1). */
static void model_held(struct mark_row *v, size_t a, size_t b, int64_t *tmp,
                       struct marks_by_start *mb)
{
    size_t own = 0, calls = b - a, within = 0;
    for (size_t k = a; k < b; k++) own += v[k].source == -1;
    if (own) { /* held on its own thread: its calls outside, batch by batch, against the held
                  ones at that batch (all batches' once kept 30 of 50 at batch 8 from a loop) */
        for (size_t c = a, d; c < b; c = d) {
            size_t out = 0, held = 0;
            for (d = c; d < b && v[d].batch == v[c].batch; d++)
                out += v[d].source == 5, held += v[d].source == -1;
            int loop = out >= MARK_LOOP_MIN && 2 * out >= held;
            for (size_t k = c; !loop && k < d; k++) v[k].source = -1;
        }
        return;
    }
    /* Within another thread's marks: nearly all of them (9 in 10), its calls before the first
     * such mark aside (a server's warm-up before it takes requests: 60 before 400 kept it apart,
     * a fresh-eyes check). */
    int64_t label = cross_attribute(v, a, b, mb, tmp), first = INT64_MAX;
    for (size_t k = a; k < b; k++)
        if (v[k].to >= 0 && mb->v[v[k].to].start < first) first = mb->v[v[k].to].start;
    calls = 0;
    for (size_t k = a; k < b; k++) calls += v[k].start >= first, within += v[k].to >= 0;
    if (!within || 10 * within < 9 * calls) {
        cross_clear(v, a, b, mb);
        for (size_t k = a; k < b; k++) v[k].to = -1;
        return;
    }
    /* And about one call a mark, or calls that fill the marks they are in (a request that runs
     * its model twice, or a decoder's steps; 748 short forwards of an unrelated model inside 60
     * long marks are neither): the median mark's calls at least half its time, where no such
     * mark holds a model of its own thread (a mark around its own model, asleep in it, filled
     * by an unrelated model's back-to-back forwards on another thread). Either way the marks
     * end with their calls, as a request waits for its answer: the median mark's last call ends
     * in the last quarter of it (an unrelated model ticking about once a mark, at any point of
     * a loop's own work and sleep, moved the loop to its phase: a second fresh-eyes check), and
     * begin with them, as a worker takes a request when it is handed over: the median mark's
     * first call starts in the first quarter of what follows its own thread's module calls (a
     * loop and a model ticking beside it fell into step, the loop's end waiting on the GIL for
     * the model's call, which began at 86% of the step). */
    size_t m = 0; /* the marks the calls count in */
    int model = 0;
    int64_t *tail = tmp + (b - a), *head = tmp + 2 * (b - a);
    for (size_t k = a; k < b; k++) {
        if (v[k].to < 0 || !mb->calls[v[k].to]) continue;
        model |= mb->model[v[k].to];
        const struct mark_row *x = &mb->v[v[k].to];
        int64_t len = x->end - x->start;
        tail[m] =
            len > 0 ? (int64_t)(1000.0 * (double)(x->end - mb->last[v[k].to]) / (double)len) : 0;
        int64_t from = mb->own_end[v[k].to] > x->start ? mb->own_end[v[k].to] : x->start;
        head[m] =
            x->end > from
                ? (int64_t)(1000.0 * (double)(mb->first[v[k].to] - from) / (double)(x->end - from))
                : 0;
        tmp[m++] = len > 0 ? (int64_t)(1000.0 * (double)mb->busy[v[k].to] / (double)len) : 1000;
        /* once a mark, and zero for the next */
        mb->calls[v[k].to] = mb->busy[v[k].to] = mb->last[v[k].to] = mb->first[v[k].to] = 0;
    }
    /* The head only where a mark holds a model of its own thread (that loop's own calls, then
     * the other's): a front thread that runs no model waits for its worker, which a loaded
     * machine wakes late (a request mark of 6.0 ms whose call began 4.4 ms in: the worker's
     * calls stayed a series of their own, the marks in the front thread's phase). And one call
     * a mark counts the innermost marks of the holder's thread around the calls: a batch's mark
     * around four requests' marks holds four calls, one a request (on a loaded machine the
     * requests' waits left the calls 15% of the batch's time, under half). */
    size_t inner = inner_marks(v, a, b, mb);
    if (inner < m) inner = m;
    int held = m && rstats_median(tail, m) <= 250 && (!model || rstats_median(head, m) <= 250) &&
               (2 * within <= 3 * inner || (!model && rstats_median(tmp, m) >= 500));
    for (size_t k = a; k < b; k++) {
        if (held) v[k].source = -1, v[k].across = v[k].to >= 0;
        if (!held) v[k].to = -1;
    }
    if (held) cross_scan(v, a, b, mb, label, 1);
}

static int by_mark_start(const void *a, const void *b)
{
    const struct mark_move *x = a, *y = b;
    if (x->mark != y->mark) return (x->mark > y->mark) - (x->mark < y->mark);
    return (x->start > y->start) - (x->start < y->start);
}

/* The few marks of a name whose calls went to its other marks (four workers serving overlapping
 * requests: 4 of 600 held none, and as a phase of their own read "Fastest phase grad/off, the
 * baseline"): where 9 in 10 marks of a name in a phase moved, all to one phase, the rest go too.
 * to: each mark's new phase (-1 none). */
static void marks_siblings(const struct mark_row *mk, size_t nm, int64_t *to)
{
    size_t *ix = malloc((nm ? nm : 1) * sizeof *ix);
    if (!ix) cli_fail("out of memory");
    for (size_t k = 0; k < nm; k++) ix[k] = k;
    sib_marks = mk;
    qsort(ix, nm, sizeof *ix, by_mark_group);
    for (size_t a = 0, b; a < nm; a = b) {
        size_t moved = 0;
        int64_t target = -1;
        int one = 1;
        for (b = a; b < nm && !by_mark_group(&ix[a], &ix[b]); b++) {
            if (to[ix[b]] < 0) continue;
            moved++;
            one &= target < 0 || target == to[ix[b]];
            target = to[ix[b]];
        }
        if (!one || !moved || 10 * moved < 9 * (b - a)) continue;
        for (size_t k = a; k < b; k++)
            if (to[ix[k]] < 0) to[ix[k]] = target;
    }
    free(ix);
}

/* A server's request, marked on its front thread, whose model ran on a worker: the work inside
 * the mark is the worker's, in the worker's phase (a front thread in grad mode, a worker in
 * inference_mode: the requests read "no iteration was seen in inference_mode", a fresh-eyes check
 * of 2026-11-29), and its operators are the worker's, which the operator callback records on the
 * thread that runs them (the front thread's own capture held the queue's aten::empty alone).
 * temp.iteration_moves: each such module call and its mark; temp.marks_moved: each such mark and
 * the phase of its first call (marks_siblings: and the few of its name left). */
static void marks_moved_make(sqlite3 *db, const struct mark_row *v, size_t n,
                             const struct mark_row *mk, size_t nm, const int64_t *into)
{
    marks_exec(db, "CREATE TEMP TABLE iteration_moves (id INTEGER PRIMARY KEY, mark INTEGER,"
                   " phase INTEGER)");
    marks_exec(db, "CREATE TEMP TABLE marks_moved (id INTEGER PRIMARY KEY, phase INTEGER)");
    size_t m = 0;
    for (size_t k = 0; k < n; k++) m += v[k].across;
    if (!m) return;
    struct mark_move *mv = malloc(m * sizeof *mv);
    int64_t *to = malloc(nm * sizeof *to);
    if (!mv || !to) cli_fail("out of memory");
    m = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k].across) mv[m++] = (struct mark_move){v[k].id, v[k].to, v[k].start, v[k].phase};
    qsort(mv, m, sizeof *mv, by_mark_start);
    for (size_t k = 0; k < nm; k++) to[k] = -1;
    for (size_t k = 0; k < m; k++)
        if (!k || mv[k].mark != mv[k - 1].mark) to[mv[k].mark] = mv[k].phase;
    for (size_t k = 0; k < nm; k++)
        if (to[k] < 0 && into[k] >= 0) to[k] = into[k]; /* a call it shares with others' marks */
    marks_siblings(mk, nm, to);
    marks_exec(db, "BEGIN");
    sqlite3_stmt *a = db_prepare(db, "INSERT INTO temp.iteration_moves VALUES (?, ?, ?)"),
                 *b = db_prepare(db, "INSERT INTO temp.marks_moved VALUES (?, ?)");
    for (size_t k = 0; k < m; k++) {
        sqlite3_bind_int64(a, 1, mv[k].call), sqlite3_bind_int64(a, 2, mk[mv[k].mark].id);
        sqlite3_bind_int64(a, 3, mv[k].phase);
        db_step(a);
        sqlite3_reset(a);
    }
    for (size_t k = 0; k < nm; k++) {
        if (to[k] < 0) continue;
        sqlite3_bind_int64(b, 1, mk[k].id), sqlite3_bind_int64(b, 2, to[k]);
        db_step(b);
        sqlite3_reset(b);
    }
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    marks_exec(db, "COMMIT");
    free(mv), free(to);
    /* A request that ran its model twice, one call captured: its operators stand for both
     * (2 aten::addmm a request read where it ran 4). Each mark's calls over those captured, the
     * weight of its captured calls' operators (a ratio estimate, per mark). */
    marks_exec(db, "CREATE TEMP TABLE mark_weights (mark INTEGER PRIMARY KEY, w REAL)");
    if (db_has_table(db, "torch_operator_windows"))
        marks_exec(db, "INSERT INTO temp.mark_weights SELECT m.mark, CAST(count(*) AS REAL) /"
                       " sum(w.iter IS NOT NULL) FROM temp.iteration_moves m LEFT JOIN (SELECT"
                       " DISTINCT iter FROM main.torch_operator_windows) w ON w.iter = m.id"
                       " GROUP BY m.mark HAVING sum(w.iter IS NOT NULL) > 0 AND count(*) >"
                       " sum(w.iter IS NOT NULL)");
}

/* temp.mark_models: each mark and the models (module calls' labels) that ran inside it, on its
 * own thread or, a server's, on another (iterations.c: each series' model). */
static void mark_models_make(sqlite3 *db, const struct mark_row *v, size_t n)
{
    marks_exec(db, "CREATE TEMP TABLE mark_models (mark INTEGER, label INTEGER,"
                   " UNIQUE (mark, label))");
    marks_exec(db, "BEGIN");
    sqlite3_stmt *st = db_prepare(db, "INSERT OR IGNORE INTO temp.mark_models VALUES (?, ?)");
    for (size_t k = 0; k < n; k++) {
        if (v[k].source != -1 || !v[k].in || v[k].label <= 0) continue;
        sqlite3_bind_int64(st, 1, v[k].in), sqlite3_bind_int64(st, 2, v[k].label);
        db_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    marks_exec(db, "COMMIT");
}

static void modules_in_marks_make(sqlite3 *db)
{
    marks_exec(db, "CREATE TEMP TABLE modules_in_marks (id INTEGER PRIMARY KEY)");
    if (db_int(db, "SELECT count(*) FROM main.iterations WHERE source IN (2, 3)", 0) <= 0) {
        marks_moved_make(db, NULL, 0, NULL, 0, NULL);
        mark_models_make(db, NULL, 0);
        return;
    }
    int v4 = db_has_column(db, "iterations", "label_id");
    size_t cap = (size_t)db_int(
               db, "SELECT count(*) FROM main.iterations WHERE source IN (2, 3, 5)", 0),
           n = 0;
    struct mark_row *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, v4 ? "SELECT rowid, tid, start, dur, phase, label_id, source,"
                                           " coalesce(batch, -1) FROM main.iterations WHERE"
                                           " source IN (2, 3, 5)"
                                         : "SELECT rowid, tid, start, dur, phase, 0, source,"
                                           " coalesce(batch, -1) FROM main.iterations WHERE"
                                           " source IN (2, 3, 5)");
    while (n < cap && db_step(st)) {
        struct mark_row *x = &v[n++];
        x->id = sqlite3_column_int64(st, 0), x->tid = sqlite3_column_int64(st, 1);
        x->start = sqlite3_column_int64(st, 2), x->end = x->start + sqlite3_column_int64(st, 3);
        x->phase = sqlite3_column_int64(st, 4), x->label = sqlite3_column_int64(st, 5);
        x->source = sqlite3_column_int(st, 6), x->batch = sqlite3_column_int64(st, 7);
        x->within = -1, x->across = 0, x->in = 0, x->to = -1;
    }
    sqlite3_finalize(st);
    /* Each module call within a mark of any thread: among the marks that start before it, one
     * that ends after it (the latest end so far, by start). */
    size_t nm = 0;
    for (size_t k = 0; k < n; k++) nm += v[k].source != 5;
    struct mark_row *mk = malloc((nm ? nm : 1) * sizeof *mk);
    int64_t *reach = malloc((nm ? nm : 1) * sizeof *reach),
            *at = malloc((nm ? nm : 1) * sizeof *at);
    if (!mk || !reach || !at) cli_fail("out of memory");
    nm = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k].source != 5) mk[nm++] = v[k];
    qsort(mk, nm, sizeof *mk, by_start);
    for (size_t k = 0; k < nm; k++) { /* the latest end so far, and whose */
        int before = k && reach[k - 1] > mk[k].end;
        reach[k] = before ? reach[k - 1] : mk[k].end;
        at[k] = before ? at[k - 1] : (int64_t)k;
    }
    for (size_t k = 0; k < n; k++) {
        if (v[k].source != 5) continue;
        size_t lo = marks_before(mk, nm, v[k].start);
        v[k].within = lo && reach[lo - 1] >= v[k].end ? at[lo - 1] : -1;
    }
    free(at);
    /* Per thread in time order: a module call inside the thread's latest mark that reaches it
     * (marks nest, ranges of one thread rarely overlap otherwise) is held (-1). */
    qsort(v, n, sizeof *v, by_tid_start);
    int64_t last = INT64_MIN, tid = 0, last_id = 0;
    for (size_t k = 0; k < n; k++) {
        if (!k || v[k].tid != tid) tid = v[k].tid, last = INT64_MIN;
        if (v[k].source != 5) {
            if (v[k].end > last) last = v[k].end, last_id = v[k].id;
        } else if (last > v[k].start) {
            v[k].source = -1, v[k].in = last_id;
        }
    }
    /* Per phase and model (model_held). */
    qsort(v, n, sizeof *v, by_phase_label);
    int64_t *tmp = malloc((3 * n + 1) * sizeof *tmp);
    size_t cnt = nm ? nm : 1;
    struct marks_by_start mb = {.v = mk,
                                .reach = reach,
                                .n = nm,
                                .calls = calloc(cnt, sizeof(int64_t)),
                                .busy = calloc(cnt, sizeof(int64_t)),
                                .last = calloc(cnt, sizeof(int64_t)),
                                .first = calloc(cnt, sizeof(int64_t)),
                                .own_end = calloc(cnt, sizeof(int64_t)),
                                .own = calloc(cnt, 1),
                                .model = calloc(cnt, 1),
                                .nested = calloc(cnt, 1),
                                .into = malloc(cnt * sizeof(int64_t))};
    size_t *ix = malloc((nm ? nm : 1) * sizeof *ix);
    if (!tmp || !mb.calls || !mb.busy || !mb.last || !mb.first || !mb.own_end || !mb.own ||
        !mb.model || !mb.nested || !mb.into || !ix)
        cli_fail("out of memory");
    for (size_t j = 0; j < nm; j++) mb.into[j] = -1;
    marks_own(db, v, n, &mb, ix, tmp);
    free(ix);
    for (size_t a = 0, b; a < n && (v[a].source == 5 || v[a].source == -1); a = b) {
        for (b = a; b < n && (v[b].source == 5 || v[b].source == -1) && v[b].phase == v[a].phase &&
                    v[b].label == v[a].label;
             b++)
            ;
        model_held(v, a, b, tmp, &mb);
    }
    free(tmp), free(mb.calls), free(mb.busy), free(mb.last), free(mb.first), free(mb.own_end),
        free(mb.own), free(mb.model), free(mb.nested), free(reach);
    marks_moved_make(db, v, n, mk, nm, mb.into);
    free(mb.into);
    for (size_t k = 0; k < n; k++)
        if (v[k].across) v[k].in = mk[v[k].to].id;
    free(mk);
    mark_models_make(db, v, n);
    marks_exec(db, "BEGIN");
    st = db_prepare(db, "INSERT INTO temp.modules_in_marks (id) VALUES (?)");
    for (size_t k = 0; k < n; k++) {
        if (v[k].source != -1) continue;
        sqlite3_bind_int64(st, 1, v[k].id);
        db_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    marks_exec(db, "COMMIT");
    free(v);
}

const char *iterations_counted(sqlite3 *db)
{
    if (!db_has_table(db, "iterations")) return "1";
    if (!db_int(db, "SELECT count(*) FROM temp.sqlite_master WHERE name = 'modules_in_marks'", 0))
        modules_in_marks_make(db);
    return db_int(db, "SELECT count(*) FROM temp.modules_in_marks", 0) > 0
               ? "(source IS NOT 5 OR rowid NOT IN (SELECT id FROM temp.modules_in_marks))"
               : "1";
}

int64_t iterations_moved(sqlite3 *db)
{
    iterations_counted(db);
    if (!db_int(db, "SELECT count(*) FROM temp.sqlite_master WHERE name = 'marks_moved'", 0))
        return 0;
    return db_int(db, "SELECT count(*) FROM temp.marks_moved", 0);
}

const char *iterations_operator_calls(sqlite3 *db)
{
    if (!iterations_moved(db)) return db_operator_calls(db);
    return pool_printf("(SELECT o.phase AS phase, o.name_id AS name_id, CASE WHEN o.iter IN"
                       " (SELECT id FROM temp.marks_moved) THEN -1 ELSE coalesce(m.mark, o.iter)"
                       " END AS iter, o.calls * coalesce(w.w, 1) AS calls, o.self * coalesce(w.w,"
                       " 1) AS self, o.dur * coalesce(w.w, 1) AS dur FROM %s o LEFT JOIN"
                       " temp.iteration_moves m ON m.id = o.iter LEFT JOIN temp.mark_weights w ON"
                       " w.mark = m.mark)",
                       db_operator_calls(db));
}

const char *iterations_operator_windows(sqlite3 *db)
{
    if (!iterations_moved(db)) return "torch_operator_windows";
    return pool_printf("(SELECT w.start AS start, w.dur AS dur, coalesce(m.mark, w.iter) AS iter,"
                       " w.tid AS tid, w.phase AS phase%s FROM torch_operator_windows w LEFT JOIN"
                       " temp.iteration_moves m ON m.id = w.iter WHERE w.iter IS NULL OR w.iter"
                       " NOT IN (SELECT id FROM temp.marks_moved))",
                       db_has_column(db, "torch_operator_windows", "every") ? ", w.every AS every"
                                                                            : "");
}

const char *iterations_phase(sqlite3 *db)
{
    if (!iterations_moved(db)) return "phase";
    return "coalesce((SELECT m.phase FROM temp.marks_moved m WHERE m.id = iterations.rowid),"
           " iterations.phase)";
}
