/*
 * requests.h: a series served from several threads at once, a server's requests (requests.c;
 * docs/windows.md, "Requests"): how many threads, requests per second over the series' span,
 * how many were in flight on average and at most (concurrency), and the share of their time the
 * handling threads spent off the CPU (waiting: the GIL, a lock, I/O; table iteration_cpu).
 * Read once, on first use.
 */
#ifndef INFPROF_RUN_REQUESTS_H
#define INFPROF_RUN_REQUESTS_H

#include "run.h"

#include <stdint.h>

struct series_requests {
    int series;  /* index in run_series */
    int threads; /* threads its iterations ran on */
    int64_t requests;
    double per_s;            /* requests over the span, first start to last end */
    double mean_concurrency; /* their summed time over the span */
    int max_concurrency;     /* the most in flight at once */
    double waiting_pct;      /* of their time off the CPU (-1 unknown: no iteration_cpu) */
    double cpu_mean_ns;      /* the mean of each one's CPU time (-1 unknown) */
};

struct run_requests {
    int n;
    struct series_requests v[REPORT_MAX_SERIES];
};

const struct run_requests *run_requests(struct sqlite3 *db, const struct run_phases *p);

#endif
