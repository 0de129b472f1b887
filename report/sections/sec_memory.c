/*
 * sec_memory.c: the memory section: per phase and device, the peak of live tensor bytes and of
 * reserved bytes (the caching allocator's own totals), what the allocator held beyond the
 * tensors at the moment of the peak, and the allocations the phase's threads made.
 */
#include "sections.h"
#include "../run/runfacts.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* section_memory's columns, in the order it declares them (asserted there). */
enum {
    ME_PHASE,
    ME_LABEL,
    ME_DEVICE,
    ME_PEAK_ALLOCATED_BYTES,
    ME_PEAK_RESERVED_BYTES,
    ME_RESERVED_MINUS_ALLOCATED_AT_PEAK_BYTES,
    ME_ALLOCATIONS,
    ME_ALLOCATED_BYTES,
    ME_LARGEST_BYTES,
    ME_LARGEST3_BYTES,
    ME_HELD_AFTER_PEAK_BYTES,
    ME_NCOLS
};

struct table *section_memory(const struct run_phases *p)
{
    struct table *t = table_new("memory", "Tensor memory by phase and device (allocator reports)");
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    table_col(t, "device", "Device", COL_TEXT);
    table_col(t, "peak_allocated_bytes", "Peak alloc", COL_BYTES);
    table_col(t, "peak_reserved_bytes", "Peak rsrvd", COL_BYTES);
    table_col(t, "reserved_minus_allocated_at_peak_bytes", "Cached at peak", COL_BYTES);
    table_col(t, "allocations", "Allocs", COL_INT);
    table_col(t, "allocated_bytes", "Alloc bytes", COL_BYTES);
    table_col(t, "largest_bytes", "Largest", COL_BYTES);
    table_col(t, "largest3_bytes", NULL, COL_JSON);
    table_col(t, "held_after_peak_bytes", NULL, COL_BYTES); /* the Summary's, JSON and CSV */
    assert(t->ncols == ME_NCOLS);
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->has_memory) continue;
        for (int k = 0; k < p->devices.n; k++) {
            char label[64], dev[32], top[96];
            phase_short_label(ph, label, sizeof label); /* one short label, compare's pairs too */
            device_name(p->devices.type[k], p->devices.index[k], dev, sizeof dev);
            table_row(t);
            table_set_text(t, ME_PHASE, label);
            table_set_text(t, ME_LABEL, ph->label);
            table_set_text(t, ME_DEVICE, dev);
            /* No thread that allocates there was in the phase: no peak, not 0. */
            int held = (ph->dev_held & (1u << k)) != 0;
            if (held) table_set_int(t, ME_PEAK_ALLOCATED_BYTES, ph->dev_peak_alloc[k]);
            if (held && p->devices.type[k] != 0) { /* the CPU allocator reports no reserve */
                table_set_int(t, ME_PEAK_RESERVED_BYTES, ph->dev_peak_reserved[k]);
                table_set_int(t, ME_RESERVED_MINUS_ALLOCATED_AT_PEAK_BYTES,
                              ph->dev_reserved_at_peak[k] - ph->dev_peak_alloc[k]);
            }
            table_set_int(t, ME_ALLOCATIONS, ph->dev_allocs[k]);
            table_set_int(t, ME_ALLOCATED_BYTES, ph->dev_alloc_bytes[k]);
            if (ph->dev_allocs[k]) table_set_int(t, ME_LARGEST_BYTES, ph->dev_largest[k][0]);
            snprintf(top, sizeof top, "[%lld, %lld, %lld]", (long long)ph->dev_largest[k][0],
                     (long long)ph->dev_largest[k][1], (long long)ph->dev_largest[k][2]);
            table_set_text(t, ME_LARGEST3_BYTES, top);
            int64_t kept = memory_held_after_peak(ph, k);
            if (kept >= 0) table_set_int(t, ME_HELD_AFTER_PEAK_BYTES, kept);
        }
    }
    if (!t->nrows)
        t->note = "no allocator reports (no libtorch, or INFPROF_TORCH=0 / INFPROF_CPU_MEMORY=0)";
    return t;
}

/* Peak memory: the phase that sets it, and what the least costly setting saves. */
static void fill_memory(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    const struct phase_info *base = c->base;
    char buf[1024];
    char a[64], b[64];
    char x[32], y[32];
    /* The peak and the saving: memory.c's figures, the phase table's (per device, never a
     * sum over devices); the saving is against the baseline, as in the table's Saved column. */
    const struct phase_info *top = NULL, *least = NULL;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->has_memory || ph->transient || ph->mem_dev < 0) continue;
        /* A tie (a phase whose span held another thread's peak): the one that allocated. */
        if (!top || ph->peak_alloc > top->peak_alloc ||
            (ph->peak_alloc == top->peak_alloc &&
             ph->dev_allocs[ph->mem_dev] > top->dev_allocs[top->mem_dev]))
            top = ph;
        /* What a setting saves: among the phases that ran the model, not their setup. */
        if (phase_ran_model(p, ph) && (!least || ph->peak_alloc < least->peak_alloc)) least = ph;
    }
    if (top && top->peak_alloc > 0) {
        char dev[32];
        device_name(p->devices.type[top->mem_dev], p->devices.index[top->mem_dev], dev, sizeof dev);
        summary_named(so, top, a, sizeof a);
        fmt_bytes(x, sizeof x, (double)top->peak_alloc);
        snprintf(buf, sizeof buf, "%s sets the peak, %s allocated%s%s", a, x,
                 p->devices.n > 1 ? " on " : "", p->devices.n > 1 ? dev : "");
        /* What of it stayed held after the peak (weights, inputs, data the program kept): a
         * server's queued requests made 114 of a phase's 132 MiB, which read as the inference's
         * (a fresh-eyes check). */
        int64_t kept = memory_held_after_peak(top, top->mem_dev); /* the memory table's */
        if (kept >= 0) {
            fmt_bytes(y, sizeof y, (double)kept);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                     ", %s of it still held after the peak (weights, inputs, data kept)", y);
            table_set_int(so->t, so->extra + 8, kept);
        }
        /* A forked child's CPU figures are its own: what it was born holding is its parent's. */
        int64_t inherited = 0;
        if (p->devices.type[top->mem_dev] == 0 &&
            runfacts_int(run_facts(c->db, p), "cpu_memory_inherited_bytes", &inherited) &&
            inherited > 0) {
            fmt_bytes(y, sizeof y, (double)inherited);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                     " beyond the %s it was forked holding (its parent's)", y);
            table_set_int(so->t, so->extra + 7, inherited);
        }
        table_set_text(so->t, so->extra + 0, top->label);
        table_set_text(so->t, so->extra + 1, dev);
        table_set_int(so->t, so->extra + 2, top->peak_alloc);
        const struct phase_info *against = base && base->has_memory ? base : top;
        int64_t saved;
        double pct;
        if (least && least != against && memory_saving(against, least, &saved, &pct) && saved > 0) {
            summary_named(so, least, b, sizeof b);
            fmt_bytes(y, sizeof y, (double)saved);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "; %s needs %s less", b, y);
            if (against != top) {
                summary_named(so, against, a, sizeof a);
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " than %s", a);
            }
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " (%.0f%%)", pct);
            table_set_text(so->t, so->extra + 3, least->label);
            table_set_text(so->t, so->extra + 4, against->label);
            table_set_int(so->t, so->extra + 5, saved);
            table_set_num(so->t, so->extra + 6, pct);
        } else if (least && least != against && memory_batches_differ(against, least)) {
            summary_named(so, least, b, sizeof b);
            summary_named(so, against, a, sizeof a);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                     "; no saving stated: %s's largest batch is %lld, %s's %lld (the Series table"
                     " has each one's peak)",
                     a, (long long)memory_largest_batch(against), b,
                     (long long)memory_largest_batch(least));
        } else if (least && least != against && (against->peak_mixed || least->peak_mixed)) {
            summary_named(so, against->peak_mixed ? against : least, a, sizeof a);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                     "; no saving stated: %s pools series of other models or batch sizes, its"
                     " peak one of theirs (the Series table has each one's peak)",
                     a);
        }
        summary_set(so, buf);
    } else if (p->n && p->v[0].has_memory) {
        /* Reports, but only in phases too short to name (each under a millisecond, no iteration,
         * no kernel): the table below still has them. */
        summary_set(so, "no phase long enough to name a peak (the allocator's reports are in the"
                        " Tensor memory table)");
    } else if (p->n) {
        summary_set(so, "no allocator report: no tensor memory was recorded (libtorch's allocator"
                        " hooks off, or no tensor allocated)");
    }
}

static const struct summary_line line_memory = {"memory",
                                                "Peak memory",
                                                40,
                                                fill_memory,
                                                {{"peak_phase", COL_TEXT},
                                                 {"peak_device", COL_TEXT},
                                                 {"peak_allocated_bytes", COL_BYTES},
                                                 {"saved_phase", COL_TEXT},
                                                 {"saved_against_phase", COL_TEXT},
                                                 {"peak_allocated_saved_bytes", COL_BYTES},
                                                 {"peak_allocated_saved_pct", COL_PCT},
                                                 {"peak_inherited_bytes", COL_BYTES},
                                                 {"peak_held_bytes", COL_BYTES}}};
static const struct summary_line *const memory_summary[] = {&line_memory, NULL};

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int memory_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_memory(c->p);
    return 1;
}

static const struct section_compare memory_compare = {
    .spec = {.key = "memory",
             .match = {"label", "device"},
             .show = {"Phase"},
             .figs = {{"peak_allocated_bytes", 0, 0},
                      {"peak_reserved_bytes", 0, 0},
                      {"reserved_minus_allocated_at_peak_bytes", 0, 0},
                      {"allocations", 1, 0},
                      {"allocated_bytes", 1, 0},
                      {"largest_bytes", 0, 0}},
             .what = "rows"},
    .title = "Tensor memory by phase and device: peak allocated",
    .cols = {{"Phase", NULL},
             {"device", "Device"},
             {"Change", NULL},
             {"peak_allocated_bytes_base", "Peak base"},
             {"peak_allocated_bytes_new", "Peak new"},
             {"peak_allocated_bytes_delta", "Delta"},
             {"peak_allocated_bytes_pct", "Delta%"}},
};

const struct report_section sec_memory = {.summary = memory_summary,
                                          .key = "memory",
                                          .build = memory_build,
                                          .shown_empty = 0,
                                          .compare = &memory_compare};
