/*
 * stats_row.c: a kernel_summary row from a statistic (stats_row.h).
 */
#include "stats_row.h"

#include <sqlite3.h>

void ip_stats_bind_summary(sqlite3_stmt *st, int64_t name_id, int phase, struct ip_stats *stats)
{
    int exact;
    int64_t med = ip_stats_median(stats, &exact);
    sqlite3_bind_int64(st, 1, name_id);
    sqlite3_bind_int(st, 2, phase);
    sqlite3_bind_int64(st, 3, (int64_t)stats->count);
    sqlite3_bind_int64(st, 4, stats->total);
    sqlite3_bind_int64(st, 5, stats->min);
    sqlite3_bind_int64(st, 6, stats->max);
    sqlite3_bind_int64(st, 7, med);
    sqlite3_bind_double(st, 8, ip_stats_stddev(stats));
    sqlite3_bind_int(st, 9, exact);
}
