/*
 * table_stats.c: the statistic column group that the kernel, NVTX, CUDA API and memory
 * operation tables share (table.h): Time%, total, count, average, median, min, max and
 * standard deviation, under the keys nsys's and torch.profiler's users read (time_pct,
 * total_ns, ..., stddev_ns).
 */
#include "table.h"

static const char *const keys_ns[6] = {"total_ns", "avg_ns", "med_ns",
                                       "min_ns",   "max_ns", "stddev_ns"};
static const char *const keys_bytes[6] = {"total_bytes", "avg_bytes", "med_bytes",
                                          "min_bytes",   "max_bytes", "stddev_bytes"};

int table_stat_cols(struct table *t, const struct stat_cols *c)
{
    int first = t->ncols;
    const char *const *k = c->bytes ? keys_bytes : keys_ns;
    enum col_type type = c->bytes ? COL_BYTES : COL_NS;
    if (!c->bytes) table_col(t, "time_pct", "Time%", COL_PCT);
    table_col(t, k[0], "Total", type);
    table_col(t, c->count_key, c->count_title, COL_INT);
    table_col(t, k[1], "Avg", type);
    table_col(t, k[2], "Med", type);
    table_col(t, k[3], c->show_min ? "Min" : NULL, type);
    table_col(t, k[4], c->show_max ? "Max" : NULL, type);
    table_col(t, k[5], c->show_stddev ? "StdDev" : NULL, type);
    return first;
}

int table_set_stats(struct table *t, int first, const struct stat_cells *s)
{
    int c = first;
    if (s->with_pct) table_set_num(t, c++, s->all > 0 ? 100.0 * (double)s->total / s->all : 0);
    table_set_int(t, c++, s->total);
    table_set_int(t, c++, s->count);
    table_set_num(t, c++, s->count ? (double)s->total / (double)s->count : 0);
    table_set_int(t, c++, s->med);
    table_set_int(t, c++, s->min);
    table_set_int(t, c++, s->max);
    table_set_num(t, c++, s->stddev);
    return c;
}
