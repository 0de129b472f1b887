/*
 * sec_nvtx.c: the program's NVTX ranges: CPU time per range name (nsys nvtx_sum) and the GPU
 * time of the work launched inside each range, nested ranges included (nsys nvtx_gpu_proj_sum).
 * A kernel belongs to the innermost push/pop range of the thread that launched it; its GPU time
 * counts once for that range and once for each enclosing range of another name. The figures come
 * from the run model (run/nvtx.c); here: their Time %, --top and the note on lost events.
 */
#include "sections.h"
#include "../run/nvtx.h"

#include <string.h>

struct table *section_nvtx(struct sqlite3 *db, const struct run_phases *p,
                           const struct report_opts *o)
{
    struct table *t = table_new("nvtx", "NVTX ranges (CPU time; GPU time of the work launched"
                                        " inside)");
    static const struct stat_cols stat = {"instances", "Instances", 0, 0, 0, 0};
    table_stat_cols(t, &stat);
    table_col(t, "style", NULL, COL_TEXT);
    table_col(t, "gpu_kernels", "Kernels", COL_INT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    table_col(t, "range", "Range", COL_NAME);
    const struct nvtx_run *r = run_nvtx(db, p);
    double all = 0;
    for (int i = 0; i < r->n; i++) all += (double)r->v[i].total;
    int shown = o->top && o->top < r->n ? o->top : r->n;
    for (int i = 0; i < shown; i++) {
        const struct nvtx_group *g = &r->v[i];
        table_row(t);
        struct stat_cells s = {1, all, g->total, g->count, g->med, g->min, g->max, g->stddev};
        table_set_stats(t, 0, &s);
        table_set_text(t, 8, g->kind == 1 ? "PushPop" : "StartEnd");
        if (r->has_kernels) {
            table_set_int(t, 9, g->kernels);
            table_set_int(t, 10, g->gpu_ns);
        }
        table_set_text(t, 11, g->name);
    }
    static char note[400];
    note[0] = 0;
    if (shown < r->n)
        snprintf(note, sizeof note, "%d more range names not shown (--top 0 shows all)",
                 r->n - shown);
    /* A run that lost events may have lost range pushes and pops and launch records: the GPU
     * projection then undercounts, and says so (issue 25: the ResNet-50 fixture's
     * inference/fp16 range, 2,185 kernels where its time span holds 14,060). */
    if (r->kernels_all >= 0) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len,
                 "%sGPU kernels and time may undercount: the run lost %lld events (range pushes,"
                 " pops or launch records among them); %lld of %lld kernels have a launching"
                 " range",
                 len ? ". " : "", (long long)p->lost[RUN_LOST_EVENTS], (long long)r->kernels_ranged,
                 (long long)r->kernels_all);
    }
    t->note = note[0] ? note : NULL;
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int nvtx_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_nvtx(c->db, c->p, c->o);
    return 1;
}

static const struct section_compare nvtx_compare = {
    .spec = {.key = "nvtx",
             .match = {"range", "style"},
             .figs = {{"total_ns", 1, 0},
                      {"instances", 1, 0},
                      {"avg_ns", 0, 0},
                      {"med_ns", 0, 0},
                      {"gpu_kernels", 1, 0},
                      {"gpu_time_ns", 1, 0}},
             .sort = "total_ns",
             .what = "range names"},
    .title = "NVTX ranges (CPU time)",
    .cols = {{"total_ns_base", "Base"},
             {"total_ns_new", "New"},
             {"total_ns_delta", "Delta"},
             {"total_ns_pct", "Delta%"},
             {"gpu_time_ns_base", "GPU base"},
             {"gpu_time_ns_new", "GPU new"},
             {"Change", NULL},
             {"range", "Range"}},
    .top = 1,
};

const struct report_section sec_nvtx = {
    .key = "nvtx", .build = nvtx_build, .shown_empty = 0, .compare = &nvtx_compare};
