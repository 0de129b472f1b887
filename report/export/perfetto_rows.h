/*
 * perfetto_rows.h: the sources of the Perfetto trace and their rows as events (perfetto_rows.c),
 * for perfetto.c, which merges them in time order.
 */
#ifndef INFPROF_PERFETTO_ROWS_H
#define INFPROF_PERFETTO_ROWS_H

#include "perfetto_writer.h"

enum {
    SRC_PHASES,
    SRC_ITERS,
    SRC_NVTX,
    SRC_CUDNN,
    SRC_API,
    SRC_MEMORY,
    SRC_DEVICE_MEMORY,
    SRC_OPS,
    SRC_GPU,
    SRC_COUNT
};

/* Whether source `which` has its table in this database. */
int pf_source_present(const struct export_ctx *c, int which);
/* Its query (with the cut and the cap's limit), in time order when ordered. */
void pf_source_sql(const struct export_ctx *c, int which, int64_t limit, int ordered, char *sql,
                   size_t n);
/* A row's start and end (end = start for counters, INT64_MAX for open ranges). */
void pf_row_span(int which, sqlite3_stmt *st, int64_t *start, int64_t *end);
/* The row's events. */
void pf_write_row(struct pf *w, int which, sqlite3_stmt *st);
const char *pf_source_what(int which);

#endif
