/*
 * sec_kernels.c: the kernel summary in Nsight Systems' cuda_gpu_kern_sum columns (Time %, Total,
 * Instances, Avg, Med, Min, Max, StdDev, Name), over all phases, per phase (--by-phase), for one
 * phase (--phase) or for the work launched inside NVTX ranges of one name (--nvtx, nested ranges
 * included). The rows come from the run model (run/kernels.c: the end-of-run summary, or the
 * kernel rows for the NVTX filter and runs without one); here: their Time % and --top.
 */
#include "sections.h"
#include "../run/kernels.h"

#include <string.h>

struct table *section_kernels(struct sqlite3 *db, const struct run_phases *p,
                              const struct report_opts *o)
{
    int phase = -1;
    static char title[160];
    if (o->phase) {
        const struct phase_info *ph = &p->v[phases_find(p, o->phase, "--phase")];
        phase = ph->id;
        snprintf(title, sizeof title, "CUDA kernels of phase %s", ph->label);
    } else {
        snprintf(title, sizeof title, "CUDA kernels (%s)", o->by_phase ? "by phase" : "all phases");
    }
    if (o->nvtx)
        snprintf(title + strlen(title), sizeof title - strlen(title),
                 ", launched inside NVTX ranges '%.*s'", (int)fmt_utf8_cut(o->nvtx, 40), o->nvtx);
    struct table *t = table_new("kernels", title);
    if (o->by_phase) table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "phase", NULL, COL_TEXT);
    /* Min and standard deviation in JSON and CSV (nsys's columns); text keeps the room for
     * names people can read. */
    static const struct stat_cols stat = {"instances", "Instances", 0, 0, 1, 0};
    table_stat_cols(t, &stat);
    table_col(t, "name", "Name", COL_KERNEL);
    struct kernels_list r;
    kernels_load(db, o->by_phase, phase, o->nvtx, &r);
    int base = o->by_phase ? 1 : 0, shown = 0, hidden = 0;
    for (int i = 0; i < r.n; i++) {
        const struct kernels_row *k = &r.v[i];
        /* Time % is within the phase (by phase) or within what the filter kept. */
        double all = 0;
        for (int j = 0; j < r.n; j++)
            if (r.v[j].phase == k->phase) all += (double)r.v[j].total;
        int rank = 0;
        for (int j = i - 1; j >= 0 && r.v[j].phase == k->phase; j--) rank++;
        if (o->top && rank >= o->top) {
            hidden++;
            continue;
        }
        const struct phase_info *ph = phase_by_id(p, k->phase);
        table_row(t);
        if (ph) {
            char s[64];
            phase_short_label(ph, s, sizeof s);
            if (o->by_phase) table_set_text(t, 0, s);
            table_set_text(t, base, ph->label);
        } else if (o->by_phase) {
            table_set_text(t, 0, "none");
            table_set_text(t, base, "none");
        }
        struct stat_cells s = {1, all, k->total, k->count, k->med, k->min, k->max, k->stddev};
        table_set_text(t, table_set_stats(t, base + 1, &s), k->name);
        shown++;
    }
    static char note[128];
    if (hidden) {
        snprintf(note, sizeof note, "%d more kernel names not shown (--top 0 shows all)", hidden);
        t->note = note;
    }
    kernels_list_free(&r);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int kernels_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_kernels(c->db, c->p, c->o);
    return 1;
}

/* Compared by report/compare itself (by name, or by phase and name; --phase). */
const struct report_section sec_kernels = {
    .key = "kernels", .build = kernels_build, .shown_empty = 1, .compare = NULL};
