/*
 * detect.h: iterations found in a phase that marks none (detect.c says how).
 */
#ifndef INFPROF_DETECT_H
#define INFPROF_DETECT_H

#include "../base/cli.h"
#include "../base/db.h"

#include <stddef.h>
#include <stdint.h>

enum { DETECT_ALLOCATIONS = 1, DETECT_KERNELS = 2, DETECT_OPERATORS = 3 };

/* What a phase's detection found, beside its iterations: the phase keeps it whole
 * (run.h, phase_info.detected; period 0: nothing detected). */
struct detect_info {
    int from;    /* DETECT_*: kernels give GPU times, the others host times */
    int period;  /* allocator reports (or kernels) per iteration (the first loop's) */
    int repeats; /* whole periods that matched exactly (all loops) */
    int nloops;  /* loops of their own (a batch size, a model after another): 1 or more */
    int pieces;  /* iterations a period: 1, or more where a stretch's period held several
                  * forwards (detect_split.c; the stretch of most) */
    int alike;   /* ... of which the forward that repeats */
    int split_period;  /* ... that stretch's period (reports) */
    uint64_t unit_sig; /* the forward the first loop repeats: a hash of its reports (sorted, for
                        * allocations); two phases that ran the same work have the same */
    int unit_len;      /* ... its reports (or kernels, operators) */
    int threads;       /* threads whose forwards were found (allocations): 1, or more where
                        * other threads repeat a forward too (a server's workers running one
                        * model, or models of their own: a loop each) */
    int sizes_vary;    /* allocations: forwards found by their pattern at other sizes (a server's
                        * batches of any size; detect_sizes.c), not by sizes that repeat */
    int by_level;      /* ... and cut where the allocated total came back to its level, no period
                        * repeating (some forwards another order: period is the unit's reports,
                        * repeats its copies) */
    int threads_missed; /* other threads with as many reports (a quarter of the busiest's or
                         * more) in which no loop was found: their forwards are not counted */
};

struct detected {
    int64_t tid; /* the thread (allocations, operators), 0 (kernels) */
    struct detect_info info;
    size_t n, cap;        /* iterations, and room for them (grown: no limit) */
    int64_t *start, *end; /* ns since t0, in time order */
    unsigned char *loop;  /* the loop of each, 0 .. info.nloops - 1 */
    int64_t *tids;        /* the thread of each where info.threads > 1 (else NULL: tid's) */
};

/* The arrays of d, freed (d itself is the caller's). */
void detected_free(struct detected *d);

/* The iterations of `phase` from its kernel sequence, else its operators, else its allocator
 * reports; `prefer` (--detect: DETECT_KERNELS, the default, and 0; _OPERATORS; _ALLOCATIONS) is
 * searched first: 1 when found (out filled), else 0. */
int detect_iterations(struct sqlite3 *db, int prefer, int phase, struct detected *out);
/* The words for a preferred source the run does not hold (--detect operators without
 * INFPROF_OPERATORS=1), or NULL: said, not fallen back from silently. */
const char *detect_prefer_missing(struct sqlite3 *db, int prefer);

#endif
