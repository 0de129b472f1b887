/*
 * stats_row.h: one kernel_summary row (schema/schema.sql) from a statistic: the writer writes
 * them at the end of a run (collectors/cupti_summary.c), the report for a run that never got
 * there (report/run/summaries.c). Binds the nine values; the caller steps the statement.
 */
#ifndef INFPROF_STATS_ROW_H
#define INFPROF_STATS_ROW_H

#include "stats.h"

#include <stdint.h>

struct sqlite3_stmt;

/* Sorts st's samples (the median). */
void ip_stats_bind_summary(struct sqlite3_stmt *st, int64_t name_id, int phase,
                           struct ip_stats *stats);

#endif
