/*
 * windows.h: the recording windows of a run (table windows, collectors/window.sql;
 * docs/windows.md), read once on first use, and the one a report is restricted to
 * (--window N: the iterations a mark or a module call made inside it; set before phases_load).
 */
#ifndef INFPROF_RUN_WINDOWS_H
#define INFPROF_RUN_WINDOWS_H

#include "run.h"

#include <stdint.h>

struct run_window {
    int id;
    int64_t start, end; /* ns since t0; end -1: still open (a live run) */
    int opened_by, closed_by;
    int64_t open_at_close;
    int64_t iterations; /* the report's iterations inside it; -1 unknown (--window of another) */
};

struct run_windows {
    int n;
    struct run_window *v;
    int64_t recorded_ns; /* their total length */
    int64_t so_far;      /* the run's length (a run still going: to what it has written) */
    int64_t duration;    /* the run's recorded length (meta duration_ns); 0: still going */
    int whole;           /* one window, the run's start to its end: no windows asked for */
};

const struct run_windows *run_windows(struct sqlite3 *db, const struct run_phases *p);
/* "the run's start", "infprof window", ... (windows.opened_by, closed_by). */
const char *run_window_how(int how);
/* The windows as intervals (an open one to INT64_MAX) into *out (malloc'd), how many; 0 when
 * the run recorded all along (no windows, or one from its start to its end). */
size_t run_window_spans(struct sqlite3 *db, struct interval **out);
/* --window N (o->window): its span into o; exits 2 naming the windows there are when there is no
 * such window (phases_load calls it). */
void run_window_resolve(struct sqlite3 *db, struct run_options *o);
/* The restriction o puts in force: 1 and its bounds, 0 none. */
int run_window_only(const struct run_options *o, int64_t *start, int64_t *end, int *n);

#endif
