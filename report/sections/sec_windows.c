/*
 * sec_windows.c: the Windows section (report/run/windows.c; docs/windows.md): each recording
 * window, when and how it opened and closed, its length, the iterations it holds and those in
 * flight when it closed (not recorded: they ended outside it); the Summary's Windows line says
 * what share of the run the figures cover. Nothing when the run recorded all along.
 */
#include "sections.h"
#include "../run/windows.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* windows_build's columns, in the order it declares them (asserted there). */
enum {
    WI_WINDOW,
    WI_START_NS,
    WI_END_NS,
    WI_DURATION_NS,
    WI_OPENED_BY,
    WI_CLOSED_BY,
    WI_ITERATIONS,
    WI_IN_FLIGHT_AT_CLOSE,
    WI_NCOLS
};

static int windows_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    const struct run_windows *w = run_windows(c->db, c->p);
    struct table *t = table_new("windows", "Recording windows (infprof records only inside them)");
    table_col(t, "window", "Window", COL_INT);
    table_col(t, "start_ns", "Start", COL_NS);
    table_col(t, "end_ns", "End", COL_NS);
    table_col(t, "duration_ns", "Length", COL_NS);
    table_col(t, "opened_by", "Opened by", COL_TEXT);
    table_col(t, "closed_by", "Closed by", COL_TEXT);
    table_col(t, "iterations", "Iters", COL_INT);
    table_col(t, "in_flight_at_close", "In flight at close", COL_INT);
    assert(t->ncols == WI_NCOLS);
    int64_t duration = w->duration;
    for (int i = 0; !w->whole && i < w->n; i++) {
        const struct run_window *x = &w->v[i];
        int64_t end = x->end >= 0 ? x->end : duration > 0 ? duration : w->so_far;
        table_row(t);
        table_set_int(t, WI_WINDOW, x->id);
        table_set_int(t, WI_START_NS, x->start);
        if (x->end >= 0) table_set_int(t, WI_END_NS, x->end);
        table_set_int(t, WI_DURATION_NS, end - x->start);
        table_set_text(t, WI_OPENED_BY, run_window_how(x->opened_by));
        table_set_text(t, WI_CLOSED_BY, run_window_how(x->closed_by));
        if (x->iterations >= 0) table_set_int(t, WI_ITERATIONS, x->iterations);
        table_set_int(t, WI_IN_FLIGHT_AT_CLOSE, x->open_at_close);
    }
    t->note = "Start, End: since the run's start; In flight at close: iterations open when the"
              " window closed, not recorded (they ended outside it); one that began before a"
              " window opened is not seen. --window N reports one window.";
    out[0] = t;
    return 1;
}

/* The Windows line: the figures cover the windows, not the whole run. */
static void fill_windows(const struct section_ctx *c, struct summary_out *o)
{
    const struct run_windows *w = run_windows(c->db, c->p);
    if (!w->n || w->whole) return;
    int64_t duration = w->duration, start, end;
    int n;
    int live = duration <= 0; /* a run still going: to what it has written so far */
    if (live) duration = w->so_far;
    char a[32], b[32], line[400];
    fmt_ns(a, sizeof a, (double)w->recorded_ns);
    fmt_ns(b, sizeof b, (double)duration);
    if (run_window_only(&c->p->opts, &start, &end, &n))
        snprintf(line, sizeof line, "window %d of %d only (--window %d): %s-%s of the run", n, w->n,
                 n, pool_printf("%.3fs", (double)start / 1e9),
                 end == INT64_MAX ? "now" : pool_printf("%.3fs", (double)end / 1e9));
    else
        snprintf(line, sizeof line,
                 "recorded in %d window%s, %s of the run's %s%s (opened by %s): "
                 "every figure is"
                 " of them (--window N for one)",
                 w->n, w->n > 1 ? "s" : "", a, b, live ? " so far" : "",
                 run_window_how(w->v[0].opened_by));
    summary_set(o, line);
}

static const struct summary_line line_windows = {
    .key = "windows", .title = "Windows", .rank = 5, .fill = fill_windows};
static const struct summary_line *const windows_summary[] = {&line_windows, NULL};

const struct report_section sec_windows = {
    .key = "windows", .summary = windows_summary, .build = windows_build, .shown_empty = 0};
