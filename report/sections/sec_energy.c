/*
 * sec_energy.c: the Energy section (figures from report/run/energy.c): per phase and device (the
 * GPUs the process used, the CPU where it can be read), the energy and average power over the
 * phase, peak power, mean SM clock (the CPU's: cpufreq's mean), the share of time under a
 * throttle reason, and over the steady iterations: J per iteration, mJ per item, items per J.
 * A second table holds each phase's energy and speed against the baseline phase.
 */
#include "sections.h"
#include "../run/energy.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static void set_pos(struct table *t, int col, double v)
{
    if (v >= 0) table_set_num(t, col, v);
}

static const char *why_absent(const struct energy_run *r)
{
    if (!r->present) return "no energy tables (a database older than schema 4)";
    if (r->gpu_status[0] || r->cpu_status[0])
        return pool_printf("no energy readings; GPU: %s; CPU: %s",
                           r->gpu_status[0] ? r->gpu_status : "-",
                           r->cpu_status[0] ? r->cpu_status : "-");
    return "no energy readings (INFPROF_ENERGY_MS=0, or the run ended before the first)";
}

/* ratio_table's columns, in the order it declares them (asserted there). */
enum { ER_PHASE, ER_SHORT, ER_DEVICE, ER_SPEEDUP, ER_ENERGY_RATIO, ER_EFFICIENCY_RATIO, ER_NCOLS };

static struct table *ratio_table(struct sqlite3 *db, const struct run_phases *p,
                                 const struct energy_run *r, const struct phase_info *base)
{
    struct table *t = table_new("energy_vs_baseline", "Energy against the baseline phase");
    t->optional = 1;
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "device", "Device", COL_TEXT);
    table_col(t, "speedup", "Speed-up", COL_RATIO);
    table_col(t, "energy_ratio", "Energy/iter", COL_RATIO);
    table_col(t, "efficiency_ratio", "Items/J", COL_RATIO);
    assert(t->ncols == ER_NCOLS);
    if (!base || !base->nsteady || !base->lat_p50) return t;
    for (int k = 0; k < r->n; k++) {
        struct energy_phase b;
        energy_phase_figures(db, base, &r->d[k], &b);
        if (b.j_per_iter <= 0) continue;
        for (int i = 0; i < p->n; i++) {
            const struct phase_info *ph = &p->v[i];
            if (ph == base || !ph->nsteady || !ph->lat_p50) continue;
            struct energy_phase f;
            energy_phase_figures(db, ph, &r->d[k], &f);
            if (f.j_per_iter <= 0) continue;
            char shortl[64];
            phase_short_label(ph, shortl, sizeof shortl);
            table_row(t);
            table_set_text(t, ER_PHASE, ph->label);
            table_set_text(t, ER_SHORT, shortl);
            table_set_text(t, ER_DEVICE, r->d[k].label);
            /* A phase pooling several series has a p50 of none of them: no speed-up, as every
             * other table withholds it (an H200 run read 0.82x here where the Phases table said
             * "no verdict: pools 2"). */
            if (ph->nseries <= 1 && base->nseries <= 1)
                table_set_num(t, ER_SPEEDUP, (double)base->lat_p50 / (double)ph->lat_p50);
            /* Energy per iteration relative to the baseline's: below 1 uses less. */
            table_set_num(t, ER_ENERGY_RATIO, f.j_per_iter / b.j_per_iter);
            /* Items per joule against the baseline's, where both know their items (it was the
             * iterations' ratio: 0.77x for a batch-64 phase against batch 16, where the Energy
             * table's items/J gave 3.15x). */
            if (f.items_per_j > 0 && b.items_per_j > 0)
                table_set_num(t, ER_EFFICIENCY_RATIO, f.items_per_j / b.items_per_j);
        }
    }
    return t;
}

/* section_energy's columns, in the order it declares them (asserted there). */
enum {
    EN_PHASE,
    EN_SHORT,
    EN_DEVICE,
    EN_SECONDS,
    EN_ENERGY_J,
    EN_AVG_POWER_W,
    EN_PEAK_POWER_W,
    EN_SM_CLOCK_MHZ,
    EN_THROTTLED_PCT,
    EN_REASONS,
    EN_J_PER_ITERATION,
    EN_MJ_PER_ITEM,
    EN_ITEMS_PER_J,
    EN_SOURCE,
    EN_NCOLS
};

int section_energy(struct sqlite3 *db, const struct run_phases *p, const struct phase_info *base,
                   struct table **out)
{
    struct table *t = table_new("energy", "Energy, power and clocks per phase");
    table_col(t, "phase", NULL, COL_TEXT); /* the label (JSON, CSV); text: the short one */
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "device", "Device", COL_TEXT);
    table_col(t, "seconds", NULL, COL_RATE);
    table_col(t, "energy_j", "Energy J", COL_RATE);
    table_col(t, "avg_power_w", "Avg W", COL_RATE);
    table_col(t, "peak_power_w", "Peak W", COL_RATE);
    table_col(t, "sm_clock_mhz", "SM MHz", COL_RATE);
    table_col(t, "throttled_pct", "Throttled%", COL_PCT);
    table_col(t, "reasons", NULL, COL_INT);
    table_col(t, "j_per_iteration", "J/iter", COL_RATE);
    table_col(t, "mj_per_item", "mJ/item", COL_RATE);
    table_col(t, "items_per_j", "Items/J", COL_RATE);
    table_col(t, "source", NULL, COL_TEXT);
    assert(t->ncols == EN_NCOLS);
    const struct energy_run *r = run_energy(db, p);
    char unread[400] = ""; /* phases begun before their device's first reading */
    for (int k = 0; k < r->n; k++) {
        const struct energy_device *d = &r->d[k];
        for (int i = 0; i < p->n; i++) {
            const struct phase_info *ph = &p->v[i];
            if (ph->transient) continue;
            struct energy_phase f;
            energy_phase_figures(db, ph, d, &f);
            if (!f.span.ok && !f.iter.ok) continue;
            table_row(t);
            char shortl[64];
            phase_short_label(ph, shortl, sizeof shortl);
            table_set_text(t, EN_PHASE, ph->label);
            table_set_text(t, EN_SHORT, shortl);
            table_set_text(t, EN_DEVICE, d->label);
            table_set_num(t, EN_SECONDS, f.span.seconds);
            if (d->has_energy && f.span.ok) {
                table_set_num(t, EN_ENERGY_J, f.span.joules);
                table_set_num(t, EN_AVG_POWER_W, f.span.avg_w);
            }
            if (f.span.peak_w > 0) table_set_num(t, EN_PEAK_POWER_W, f.span.peak_w);
            set_pos(t, 7, f.span.sm_mhz);
            if (f.span.throttle_share >= 0) {
                table_set_num(t, EN_THROTTLED_PCT, 100 * f.span.throttle_share);
                table_set_int(t, EN_REASONS, f.span.reasons);
            }
            set_pos(t, 10, f.j_per_iter);
            set_pos(t, 11, f.mj_per_item);
            set_pos(t, 12, f.items_per_j);
            table_set_text(t, EN_SOURCE,
                           !d->has_energy  ? "none"
                           : d->from_power ? "power"
                                           : "counter");
            if (f.span.unread_s >= 0.001 || f.iter.unread) /* not an edge's microseconds */
                snprintf(unread + strlen(unread), sizeof unread - strlen(unread),
                         "%s%s on %s: %.3f s outside %s readings%s", unread[0] ? "; " : "", shortl,
                         d->label, f.span.unread_s, d->gpu >= 0 ? "the GPU's" : "the",
                         f.iter.unread ? pool_printf(" (%zu iterations left out)", f.iter.unread)
                                       : "");
        }
    }
    if (!t->nrows)
        t->note = why_absent(r);
    else {
        char notes[1100] = "";
        for (int k = 0; k < r->n; k++)
            if (r->d[k].status[0])
                snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%s%s: %s",
                         notes[0] ? "; " : "", r->d[k].label, r->d[k].status);
        if (unread[0])
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes),
                     "%sfigures over the time read only: %s (a GPU is read from the process's"
                     " first use of it)",
                     notes[0] ? "; " : "", unread);
        if (notes[0]) t->note = pool_printf("%s", notes);
    }
    out[0] = t;
    out[1] = ratio_table(db, p, r, base);
    return 2;
}

/* Clocks: a phase that ran throttled, or at another SM clock than the baseline (energy.c). */
static void fill_clocks(const struct section_ctx *c, struct summary_out *so)
{
    char clocks[512];
    if (energy_clock_note(c->db, c->p, c->base, clocks, sizeof clocks)) summary_set(so, clocks);
}

static const struct summary_line line_clocks = {
    .key = "clocks", .title = "Clocks", .rank = 80, .fill = fill_clocks};
static const struct summary_line *const energy_summary[] = {&line_clocks, NULL};

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int energy_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    return section_energy(c->db, c->p, c->base, out);
}

/* Per phase and device; the energy ratio beside the throughput one. */
static const struct section_compare energy_compare = {
    .spec = {.key = "energy",
             .match = {"phase", "device"},
             .figs = {{"j_per_iteration", 0, 1},
                      {"items_per_j", 0, 1},
                      {"avg_power_w", 0, 1},
                      {"sm_clock_mhz", 0, 0},
                      {"throttled_pct", 0, 0}},
             .what = "rows"},
    .title = "Energy per iteration by phase and device, new / base (below 1.00x: less)",
    .cols = {{"phase", "Phase"},
             {"device", "Device"},
             {"j_per_iteration_base", "J/iter base"},
             {"j_per_iteration_new", "J/iter new"},
             {"j_per_iteration_ratio", "Energy"},
             {"avg_power_w_ratio", "Power"},
             {"sm_clock_mhz_base", "SM base"},
             {"sm_clock_mhz_new", "SM new"}},
};

const struct report_section sec_energy = {.summary = energy_summary,
                                          .key = "energy",
                                          .build = energy_build,
                                          .shown_empty = 0,
                                          .compare = &energy_compare};
