/*
 * sec_precision.c: the precision mix per phase (the share of GEMM and convolution kernel time by
 * compute type) and kernel time by operation kind, and the first screen's Autocast line: whether
 * autocast ran the GEMMs and convolutions in the type it was asked for.
 */
#include "sections.h"
#include "../run/operators.h"

#include <stdio.h>
#include <string.h>

struct table *section_precision(const struct run_phases *p)
{
    struct table *t = table_new("precision", "Precision mix: share of kernel time (GEMM and conv)");
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    table_col(t, "operation", "Operation", COL_TEXT);
    for (int prec = 0; prec < PREC_COUNT; prec++)
        table_col(t, precision_name((enum precision)prec), precision_name((enum precision)prec),
                  COL_PCT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->has_kernels) continue;
        /* Rows: all kernels, then GEMM and conv, the work autocast is meant to move. */
        for (int row = -1; row < OP_COUNT; row++) {
            if (row >= 0 && row != OP_GEMM && row != OP_CONV && row != OP_ATTENTION) continue;
            int64_t by[PREC_COUNT] = {0}, total = 0;
            for (int prec = 0; prec < PREC_COUNT; prec++)
                for (int op = 0; op < OP_COUNT; op++)
                    if (row < 0 || op == row) by[prec] += ph->mix[op][prec];
            for (int prec = 0; prec < PREC_COUNT; prec++) total += by[prec];
            if (!total) continue;
            table_row(t);
            phase_cells(t, ph, 1, 0);
            table_set_text(t, 2, row < 0 ? "all" : opclass_name((enum opclass)row));
            for (int prec = 0; prec < PREC_COUNT; prec++)
                table_set_num(t, 3 + prec, 100.0 * (double)by[prec] / (double)total);
            table_set_int(t, 3 + PREC_COUNT, total);
        }
    }
    int64_t triton = 0;
    for (int i = 0; i < p->n; i++) triton += p->v[i].triton_compute_ns;
    t->note = triton ? "compute type from kernel names (docs/report.md lists the rules); unknown:"
                       " the name does not say, as with every Triton kernel (torch.compile,"
                       " AOTInductor): Inductor names them after the operations they fuse, never"
                       " a dtype, and neither the kernel records nor the allocator carry one"
                     : "compute type from kernel names (docs/report.md lists the rules); unknown:"
                       " the name does not say";
    return t;
}

struct table *section_operations(const struct run_phases *p)
{
    struct table *t = table_new("operations", "Kernel time by operation (% of the phase's)");
    static const int order[] = {OP_GEMM,      OP_CONV, OP_ATTENTION, OP_NORM,    OP_ELEMENTWISE,
                                OP_REDUCTION, OP_COPY, OP_LAYOUT,    OP_DROPOUT, OP_OTHER};
    static const char *const titles[] = {"GEMM",   "Conv", "Attn",   "Norm", "Elem",
                                         "Reduce", "Copy", "Layout", "Drop", "Other"};
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        table_col(t, opclass_name((enum opclass)order[k]), titles[k], COL_PCT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->has_kernels || ph->transient) continue;
        int64_t by[OP_COUNT] = {0}, total = 0;
        for (int op = 0; op < OP_COUNT; op++)
            for (int prec = 0; prec < PREC_COUNT; prec++) by[op] += ph->mix[op][prec];
        for (int op = 0; op < OP_COUNT; op++) total += by[op];
        if (!total) continue;
        table_row(t);
        phase_cells(t, ph, 1, 0);
        for (size_t k = 0; k < sizeof order / sizeof *order; k++)
            table_set_num(t, 2 + (int)k, 100.0 * (double)by[order[k]] / (double)total);
        table_set_int(t, 2 + (int)(sizeof order / sizeof *order), total);
    }
    t->note = "operation from kernel names (docs/report.md): what torch.profiler groups as GEMM,"
              " convolution, attention, normalisation, elementwise, reduction and copies";
    return t;
}

/* The share of a phase's GEMM/conv/attention time in precision `want`, among the time whose
 * type the names say; -1 when there is no such time. *unknown: the share of all that time whose
 * type they do not say (Triton kernels, unknown names), -1 when there is none at all. */
static double compute_share(const struct phase_info *ph, enum precision want, double *unknown)
{
    int64_t total = 0, in = 0, dark = 0;
    static const int ops[] = {OP_GEMM, OP_CONV, OP_ATTENTION};
    for (size_t k = 0; k < 3; k++)
        for (int prec = 0; prec < PREC_COUNT; prec++) {
            int64_t ns = ph->mix[ops[k]][prec];
            if (prec == PREC_UNKNOWN)
                dark += ns;
            else
                total += ns;
            if (prec == (int)want) in += ns;
        }
    *unknown = total + dark ? 100.0 * (double)dark / (double)(total + dark) : -1;
    return total ? 100.0 * (double)in / (double)total : -1;
}

/* An autocast phase on the CPU: no kernel names a type, and the operators' dtypes are not
 * recorded; the casts it made are (aten::_to_copy, the operators table's Casts/it). Its
 * operators table read "Precision float" for bf16, and the line said only that no CUDA ran (a
 * fresh-eyes check: autocast('cpu', bfloat16) ran its convolutions in bf16, 8x slower). */
static void cpu_autocast_words(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_operators *r = run_operators(c->db, c->p);
    char buf[1024], a[64];
    size_t o = (size_t)snprintf(buf, sizeof buf,
                                "no CUDA activity was recorded in the autocast"
                                " phases; on the CPU");
    int said = 0;
    for (int i = 0; r && i < r->nphases && o + 120 < sizeof buf; i++) {
        const struct op_phase *op = &r->phases[i];
        const struct phase_info *ph = phase_by_id(c->p, op->phase);
        if (!ph || !op->iterations || !strcmp(ph->autocast, "off") || ph->transient) continue;
        summary_named(so, ph, a, sizeof a);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s %s made %.2f casts an iteration",
                              said ? "," : "", a,
                              (double)op->casts_in_iter / (double)op->iterations);
        said = 1;
    }
    if (!said) return;
    /* The program's own .to() calls are casts too: the phases without autocast say how many
     * (a review: no_grad made 1.00 an iteration beside bf16's 2.00). */
    double off = -1;
    for (int i = 0; r && i < r->nphases; i++) {
        const struct op_phase *op = &r->phases[i];
        const struct phase_info *ph = phase_by_id(c->p, op->phase);
        if (ph && op->iterations && !strcmp(ph->autocast, "off") && !ph->transient &&
            (double)op->casts_in_iter / (double)op->iterations > off)
            off = (double)op->casts_in_iter / (double)op->iterations;
    }
    if (off >= 0 && o + 80 < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o, " against %.2f without autocast", off);
    snprintf(buf + o, sizeof buf - o,
             " (autocast's conversions to the type asked for and the program's own; the"
             " operators' dtypes are not recorded, so the share of their time in it is not"
             " known)");
    summary_set(so, buf);
}

/* Autocast: the share of GEMM and convolution time in the type each autocast phase asked for. */
static void fill_autocast(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    char buf[1024];
    char a[64];
    size_t o;
    o = 0;
    buf[0] = 0;
    char foot[160];
    size_t fo = 0;
    int triton = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!strcmp(ph->autocast, "off") || ph->transient || o + 80 > sizeof buf) continue;
        enum precision want = !strcmp(ph->autocast, "bf16") ? PREC_BF16 : PREC_FP16;
        double unknown, share = compute_share(ph, want, &unknown);
        if (unknown < 0) continue;
        summary_named(so, ph, a, sizeof a);
        if (share < 0)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s unknown*", o ? ", " : "", a);
        else
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %.0f%%%s", o ? ", " : "", a, share,
                                  unknown >= 0.5 ? "*" : "");
        /* The footnote: how much of the time the answer covers, and why not all of it. */
        if (unknown >= 0.5 && fo + 80 < sizeof foot)
            fo += (size_t)snprintf(foot + fo, sizeof foot - fo, "%s%s %.0f%%", fo ? ", " : "", a,
                                   100 - unknown);
        triton |= ph->triton_compute_ns > 0 && unknown >= 0.5;
    }
    if (o)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              " of GEMM and convolution time in the type asked for");
    if (o && fo && o + fo + 120 < sizeof buf)
        snprintf(buf + o, sizeof buf - o, "; * of the time whose type the kernel names say: %s%s",
                 foot, triton ? " (the rest is Triton kernels, which name no dtype)" : "");
    summary_set(so, buf);
    if (!o && p->n) {
        int any = 0, kernels = 0;
        for (int i = 0; i < p->n; i++)
            if (strcmp(p->v[i].autocast, "off") && !p->v[i].transient)
                any = 1, kernels |= p->v[i].has_kernels;
        summary_set(so, !any      ? "no autocast phase ran"
                        : kernels ? "no GEMM or convolution kernel ran in the autocast phases"
                                  : "no CUDA activity was recorded in the autocast phases");
        if (any && !kernels) cpu_autocast_words(c, so);
    }
}

/* ---- descriptors (sections.h) ------------------------------------------------------------ */

static const struct summary_line line_autocast = {
    .key = "autocast", .title = "Autocast", .rank = 50, .fill = fill_autocast};
static const struct summary_line *const precision_summary[] = {&line_autocast, NULL};

static int precision_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_precision(c->p);
    return 1;
}

static int operations_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_operations(c->p);
    return 1;
}

const struct report_section sec_precision = {.summary = precision_summary,
                                             .key = "precision",
                                             .build = precision_build,
                                             .shown_empty = 0,
                                             .compare = NULL};
const struct report_section sec_operations = {
    .key = "operations", .build = operations_build, .shown_empty = 0, .compare = NULL};
