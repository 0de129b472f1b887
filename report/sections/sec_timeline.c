/*
 * sec_timeline.c: the run over time (report/run/timeline.c) as five data tables, JSON and CSV
 * only (text has no room for 400 rows a device; the HTML report draws them): each device's
 * tensor memory, the GPU's busy share, each device's power and clock, and the CPU cores the
 * program kept busy (and ours), per bucket of equal length.
 */
#include "sections.h"
#include "../run/timeline.h"

static struct table *series_table(const char *key, const struct timeline_series *v, int n,
                                  const char *value, enum col_type type, const char *value2)
{
    struct table *t = table_new(key, NULL);
    table_col(t, "device", NULL, COL_TEXT);
    table_col(t, "t_ns", NULL, COL_NS);
    table_col(t, value, NULL, type);
    if (value2) table_col(t, value2, NULL, type);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < v[k].n; i++) {
            table_row(t);
            table_set_text(t, 0, v[k].device);
            table_set_int(t, 1, v[k].t[i]);
            table_set_num(t, 2, v[k].v[i]);
            if (value2 && v[k].v2[i] >= 0) table_set_num(t, 3, v[k].v2[i]);
        }
    return t;
}

static int timeline_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    const struct run_timeline *r = run_timeline(c->db, c->p);
    out[0] = series_table("memory_timeline", r->mem, r->nmem, "allocated_bytes", COL_BYTES,
                          "reserved_bytes");
    out[1] = series_table("gpu_timeline", &r->gpu_busy, r->gpu, "busy_pct", COL_PCT, NULL);
    out[2] = series_table("power_timeline", r->power, r->npower, "watts", COL_RATE, NULL);
    out[3] = series_table("clock_timeline", r->clock, r->nclock, "sm_clock_mhz", COL_RATE, NULL);
    out[4] = series_table("cpu_timeline", &r->cpu_busy, r->cpu, "program_cores", COL_RATIO,
                          "infprof_cores");
    return 5;
}

const struct report_section sec_timeline = {.key = "memory_timeline", .build = timeline_build};
