/*
 * detect.h: iterations found in a phase that marks none (detect.c says how).
 */
#ifndef INFPROF_DETECT_H
#define INFPROF_DETECT_H

#include "../base/cli.h"
#include "../base/db.h"

#include <stddef.h>
#include <stdint.h>

#define DETECT_MAX 100000

struct detected {
    int64_t tid;
    int period;  /* allocator reports per iteration */
    int repeats; /* whole periods that matched exactly */
    size_t n;
    int64_t start[DETECT_MAX], end[DETECT_MAX]; /* ns since t0 */
};

/* The iterations of `phase` from its allocator reports: 1 when found (out filled), else 0. */
int detect_iterations(struct sqlite3 *db, int phase, struct detected *out);

#endif
