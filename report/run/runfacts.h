/*
 * runfacts.h: the run's own facts as the run header and the advice read them: the metadata the
 * library wrote (meta table: command, versions, collector states, counters of what was lost, the
 * settings it ran with), the GPUs, where events were dropped and which tables are gone. Read
 * once, on first use (run_facts); sections and rules read it, never the database.
 */
#ifndef INFPROF_RUN_RUNFACTS_H
#define INFPROF_RUN_RUNFACTS_H

#include "run.h"

#include <stdint.h>

struct runfacts_meta {
    char *key, *text; /* text: the value as text, NULL when it is NULL */
    int is_int;       /* stored as an integer (what runfacts_int accepts) */
    int64_t value;
};

struct runfacts {
    int n;
    struct runfacts_meta *meta; /* sorted by key */
    /* "0: NVIDIA H100 (sm_90, 132 SMs, 79.19GiB)" for each device, joined; "" none. */
    char gpus[1024];
    /* Kernels recorded: the end-of-run summary's count, else the rows'. */
    int64_t kernels;
    /* Where events were dropped, "in grad/off 120, no_grad/off 80; up to 7 iterations touched";
     * "" where none were (or the database has no event_drops). */
    char drops[256];
    /* Tables of the schema the database says it has that are gone (edited, cut short). */
    char missing[256];
};

/* The run's facts, read on first use and kept in p's lazy part. */
const struct runfacts *run_facts(struct sqlite3 *db, const struct run_phases *p);
/* A metadata value as text, NULL when absent or NULL. */
const char *runfacts_text(const struct runfacts *r, const char *key);
/* A metadata value stored as an integer: 1 and *out set, else 0 (out untouched). */
int runfacts_int(const struct runfacts *r, const char *key, int64_t *out);
/* Where recording stopped before the end (a file-size limit, the disk reserve, the finish's
 * timeout), what to change: the events dropped after it are its, not the writer's falling
 * behind. NULL when it did not stop. */
const char *runfacts_stop_fix(const struct runfacts *r);
/* Frees what run_facts read (run_lazy_drop). */
void runfacts_free(struct runfacts *r);

#endif
