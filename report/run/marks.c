/*
 * marks.c: which Python module calls a program's marks hold (iterations_counted, run.h). A mark
 * (an NVTX range or a record_function scope named iteration*) is what the program calls an
 * iteration; the outermost module calls inside it are part of it, not iterations of their own.
 */
#include "run.h"

#include <sqlite3.h>
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
 * own thread in a phase is the mark's in that phase: every call of it there is set aside, those
 * inside the marks and those outside them (its warm-up before the marked loop, 3 calls or 20: a
 * series of its own would split the phase, and its headline verdict with it). A model that never
 * runs inside a mark in a phase stays iterations there: its own unmarked loop, before or after
 * the marked one, or beside it on another thread. Until 2026-11-29 (session 17) every module
 * call of a marked run was set aside: one record_function("iteration B") made model A's 150
 * unmarked forwards "no iteration was seen in inference_mode" under "Lost nothing" (a fresh-eyes
 * check). A mark on another thread holds a model's calls only where it holds nearly all of them,
 * each from its start to its end (a server's forward on its worker, inside the request its front
 * thread marks): a concurrent model's own loop, overlapping the marks by chance, is no request of
 * theirs (its 240 forwards in inference_mode read "no iteration was seen" while any overlap held a
 * call: the same fresh-eyes check's second look). The rowids set aside go into
 * temp.modules_in_marks, once per report, which iterations_counted's SQL reads. */
struct mark_row {
    int64_t id, tid, start, end, phase, label;
    int source; /* 5 a module call; 2, 3 a mark; -1 a module call set aside */
    int within; /* a module call inside a mark of any thread, start to end */
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

static int by_phase_label(const void *a, const void *b)
{
    const struct mark_row *x = a, *y = b;
    if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
    if (x->label != y->label) return (x->label > y->label) - (x->label < y->label);
    return (x->id > y->id) - (x->id < y->id);
}

static void modules_in_marks_make(sqlite3 *db)
{
    marks_exec(db, "CREATE TEMP TABLE modules_in_marks (id INTEGER PRIMARY KEY)");
    if (db_int(db, "SELECT count(*) FROM main.iterations WHERE source IN (2, 3)", 0) <= 0) return;
    int v4 = db_has_column(db, "iterations", "label_id");
    size_t cap = (size_t)db_int(
               db, "SELECT count(*) FROM main.iterations WHERE source IN (2, 3, 5)", 0),
           n = 0;
    struct mark_row *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, v4 ? "SELECT rowid, tid, start, dur, phase, label_id, source"
                                           " FROM main.iterations WHERE source IN (2, 3, 5)"
                                         : "SELECT rowid, tid, start, dur, phase, 0, source FROM"
                                           " main.iterations WHERE source IN (2, 3, 5)");
    while (n < cap && db_step(st)) {
        struct mark_row *x = &v[n++];
        x->id = sqlite3_column_int64(st, 0), x->tid = sqlite3_column_int64(st, 1);
        x->start = sqlite3_column_int64(st, 2), x->end = x->start + sqlite3_column_int64(st, 3);
        x->phase = sqlite3_column_int64(st, 4), x->label = sqlite3_column_int64(st, 5);
        x->source = sqlite3_column_int(st, 6);
    }
    sqlite3_finalize(st);
    /* Each module call within a mark of any thread: among the marks that start before it, one
     * that ends after it (the latest end so far, by start). */
    size_t nm = 0;
    for (size_t k = 0; k < n; k++) nm += v[k].source != 5;
    struct mark_row *mk = malloc((nm ? nm : 1) * sizeof *mk);
    int64_t *reach = malloc((nm ? nm : 1) * sizeof *reach);
    if (!mk || !reach) cli_fail("out of memory");
    nm = 0;
    for (size_t k = 0; k < n; k++)
        if (v[k].source != 5) mk[nm++] = v[k];
    qsort(mk, nm, sizeof *mk, by_start);
    for (size_t k = 0; k < nm; k++)
        reach[k] = k && reach[k - 1] > mk[k].end ? reach[k - 1] : mk[k].end;
    for (size_t k = 0; k < n; k++) {
        if (v[k].source != 5) continue;
        size_t lo = 0, hi = nm; /* marks starting at or before it: [0, lo) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (mk[mid].start <= v[k].start)
                lo = mid + 1;
            else
                hi = mid;
        }
        v[k].within = lo && reach[lo - 1] >= v[k].end;
    }
    free(mk), free(reach);
    /* Per thread in time order: a module call inside the thread's latest mark that reaches it
     * (marks nest, ranges of one thread rarely overlap otherwise) is held (-1). */
    qsort(v, n, sizeof *v, by_tid_start);
    int64_t last = INT64_MIN, tid = 0;
    for (size_t k = 0; k < n; k++) {
        if (!k || v[k].tid != tid) tid = v[k].tid, last = INT64_MIN;
        if (v[k].source != 5) {
            if (v[k].end > last) last = v[k].end;
        } else if (last > v[k].start) {
            v[k].source = -1;
        }
    }
    /* A model held once in a phase is the marks' there: all its calls set aside; so is one
     * whose calls (nine in ten or more) each run within a mark of another thread: a server's
     * forward on its worker inside the request its front thread marks. */
    qsort(v, n, sizeof *v, by_phase_label);
    for (size_t a = 0, b; a < n; a = b) {
        int held = 0;
        size_t calls = 0, within = 0;
        for (b = a; b < n && v[b].phase == v[a].phase && v[b].label == v[a].label; b++) {
            held |= v[b].source == -1;
            calls += v[b].source != 2 && v[b].source != 3;
            within += v[b].source != 2 && v[b].source != 3 && v[b].within;
        }
        held |= calls && 10 * within >= 9 * calls;
        for (size_t k = a; held && k < b; k++)
            if (v[k].source == 5) v[k].source = -1;
    }
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
