/*
 * windows.c: the recording windows of a run (windows.h), and --window N's restriction (the run
 * model's options), which iterations.c applies to the iterations it loads (every figure made of
 * them follows).
 */
#include "windows.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

const char *run_window_how(int how)
{
    static const char *const names[] = {"",
                                        "the run's start",
                                        "the delay",
                                        "the duration",
                                        "infprof window",
                                        "the signal",
                                        "the NVTX capture range",
                                        "cudaProfilerStart/Stop",
                                        "the run's end"};
    return how > 0 && how < (int)(sizeof names / sizeof *names) ? names[how] : "still open";
}

static void load(sqlite3 *db, struct run_windows *w)
{
    if (!db_has_table(db, "windows")) return;
    int64_t n = db_int(db, "SELECT count(*) FROM windows", 0);
    w->v = calloc(n > 0 ? (size_t)n : 1, sizeof *w->v);
    if (!w->v) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(db, "SELECT id, start, end, opened_by, closed_by, open_at_close"
                                      " FROM windows ORDER BY id");
    while (db_step(st) && w->n < n) {
        struct run_window *x = &w->v[w->n++];
        x->id = sqlite3_column_int(st, 0);
        x->start = sqlite3_column_int64(st, 1);
        x->end = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        x->opened_by = sqlite3_column_int(st, 3);
        x->closed_by = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 4);
        x->open_at_close = sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
}

static void windows_drop(void *r)
{
    struct run_windows *w = r;
    free(w->v);
    free(w);
}

const struct run_model run_model_windows = {"windows", windows_drop, 0};

const struct run_windows *run_windows(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_windows);
    if (*slot) return *slot;
    struct run_windows *w = calloc(1, sizeof *w);
    if (!w) cli_fail("out of memory");
    *slot = w;
    load(db, w);
    int64_t duration = 0;
    db_meta_int(db, "duration_ns", &duration);
    w->duration = duration > 0 ? duration : 0;
    /* The window still open at the end was closed by the writer as it wrote it, after the
     * run's end was taken (0.9 ms later on a fixture: "30.19ms of the run's 29.41ms"): no
     * window reaches past the run. */
    for (int i = 0; i < w->n && duration > 0; i++) {
        if (w->v[i].end > duration) w->v[i].end = duration;
        if (w->v[i].start > duration) w->v[i].start = duration;
    }
    /* A run still going has no length yet: an open window runs to the last iteration written. */
    if (duration <= 0 && db_has_table(db, "iterations"))
        duration = db_int(db, "SELECT max(start + dur) FROM iterations", 0);
    for (int i = 0; i < w->n; i++)
        if (w->v[i].end > duration) duration = w->v[i].end;
    w->so_far = duration;
    /* The iterations the report counts (marks, module calls, detected ones) inside each; with
     * --window N only that window's are read: the others' are not known (-1). A run with no
     * phase (no libtorch) counts none: its table's rows (marks) are counted instead. */
    int64_t os = 0, oe = 0;
    int on = 0, restricted = run_window_only(&p->opts, &os, &oe, &on);
    sqlite3_stmt *st = !p->niters && db_has_table(db, "iterations")
                           ? db_prepare(db, "SELECT count(*) FROM iterations WHERE start >= ?"
                                            " AND start + dur <= ?")
                           : NULL;
    for (int i = 0; i < w->n; i++) {
        int64_t end = w->v[i].end >= 0 ? w->v[i].end : duration;
        w->recorded_ns += end - w->v[i].start;
        w->v[i].iterations = restricted && i + 1 != on ? -1 : 0;
        for (size_t k = 0; k < p->niters && w->v[i].iterations >= 0; k++)
            w->v[i].iterations +=
                p->iters[k].start >= w->v[i].start && p->iters[k].start + p->iters[k].host <= end;
        if (st && w->v[i].iterations >= 0) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, w->v[i].start);
            sqlite3_bind_int64(st, 2, end);
            if (db_step(st)) w->v[i].iterations = sqlite3_column_int64(st, 0);
        }
    }
    if (st) sqlite3_finalize(st);
    w->whole = w->n == 1 && w->v[0].opened_by == 1 && (w->v[0].closed_by == 8 || w->v[0].end < 0);
    return w;
}

void run_window_resolve(struct sqlite3 *db, struct run_options *o)
{
    struct run_windows w = {0};
    load(db, &w);
    int n = o->window;
    if (n < 1 || n > w.n)
        cli_fail(w.n > 1    ? "--window %d: this run has windows 1 to %d (the Windows section lists"
                              " them)"
                 : w.n == 1 ? "--window %d: this run has one window, 1, the whole run (it recorded"
                              " all along)"
                            : "--window %d: this run recorded no windows (it recorded all along)",
                 n, w.n);
    o->window_start = w.v[n - 1].start;
    o->window_end = w.v[n - 1].end >= 0 ? w.v[n - 1].end : INT64_MAX;
    free(w.v);
}

int run_window_only(const struct run_options *o, int64_t *start, int64_t *end, int *n)
{
    if (o->window) *start = o->window_start, *end = o->window_end, *n = o->window;
    return o->window != 0;
}

size_t run_window_spans(struct sqlite3 *db, struct interval **out)
{
    struct run_windows w = {0};
    *out = NULL;
    load(db, &w);
    int whole = w.n == 1 && w.v[0].opened_by == 1 && (w.v[0].closed_by == 8 || w.v[0].end < 0);
    if (!w.n || whole) {
        free(w.v);
        return 0;
    }
    if (!(*out = malloc((size_t)w.n * sizeof **out))) cli_fail("out of memory");
    for (int i = 0; i < w.n; i++)
        (*out)[i] = (struct interval){w.v[i].start, w.v[i].end >= 0 ? w.v[i].end : INT64_MAX};
    size_t n = (size_t)w.n;
    free(w.v);
    return n;
}
