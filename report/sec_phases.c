/*
 * sec_phases.c: the phase comparison, the table the inference guides print with illustrative
 * numbers and infprof prints measured: per phase (grad mode x autocast) iterations, throughput,
 * latency, kernels, GPU time, peak memory and the measured precision mix; and against a
 * baseline phase (grad/off unless --baseline says otherwise) the throughput and latency ratios
 * and the memory saved. Also the precision-mix section.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* {"cpu": 123, "cuda:0": 456} */
static void device_json(const struct run_devices *d, const int64_t *v, char *out, size_t n)
{
    size_t o = (size_t)snprintf(out, n, "{");
    for (int k = 0; k < d->n && o + 48 < n; k++) {
        char name[32];
        device_name(d->type[k], d->index[k], name, sizeof name);
        o += (size_t)snprintf(out + o, n - o, "%s\"%s\": %lld", k ? ", " : "", name,
                              (long long)v[k]);
    }
    snprintf(out + o, n - o, "}");
}

static const struct phase_info *baseline_of(const struct run_phases *p, const char *want)
{
    if (want) return &p->v[phases_find(p, want, "--baseline")];
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].label, "grad | autocast off")) return &p->v[i];
    return p->n ? &p->v[0] : NULL;
}

static double throughput(const struct phase_info *ph)
{
    return ph->iterations && ph->busy > 0 ? (double)ph->iterations * 1e9 / (double)ph->busy : 0;
}

static int64_t kernel_ns(const struct phase_info *ph, enum precision *top)
{
    int64_t total = 0, best = -1;
    for (int prec = 0; prec < PREC_COUNT; prec++) {
        int64_t sum = 0;
        for (int op = 0; op < OP_COUNT; op++) sum += ph->mix[op][prec];
        total += sum;
        if (top && sum > best) best = sum, *top = (enum precision)prec;
    }
    return total;
}

/* "bf16 82% fp32 18%": the classes with at least 1% of the phase's kernel time. */
static void mix_text(const struct phase_info *ph, char *out, size_t n)
{
    int64_t total = kernel_ns(ph, NULL);
    size_t o = 0;
    out[0] = 0;
    if (!total) return;
    int used[PREC_COUNT] = {0};
    for (int round = 0; round < 3; round++) {
        int best = -1;
        int64_t best_ns = 0;
        for (int prec = 0; prec < PREC_COUNT; prec++) {
            int64_t sum = 0;
            for (int op = 0; op < OP_COUNT; op++) sum += ph->mix[op][prec];
            if (!used[prec] && sum > best_ns) best = prec, best_ns = sum;
        }
        if (best < 0 || best_ns * 100 < total) break;
        used[best] = 1;
        o += (size_t)snprintf(out + o, n - o, "%s%s %.0f%%", o ? " " : "",
                              precision_name((enum precision)best),
                              100.0 * (double)best_ns / (double)total);
    }
}

/* {"bf16": 0.82, "fp32": 0.18} */
static void mix_json(const struct phase_info *ph, char *out, size_t n)
{
    int64_t total = kernel_ns(ph, NULL);
    size_t o = (size_t)snprintf(out, n, "{");
    for (int prec = 0; total && prec < PREC_COUNT; prec++) {
        int64_t sum = 0;
        for (int op = 0; op < OP_COUNT; op++) sum += ph->mix[op][prec];
        if (sum)
            o +=
                (size_t)snprintf(out + o, n - o, "%s\"%s\": %.6g", o > 1 ? ", " : "",
                                 precision_name((enum precision)prec), (double)sum / (double)total);
    }
    snprintf(out + o, n - o, "}");
}

enum {
    C_SHORT,
    C_LABEL,
    C_GRAD,
    C_AUTOCAST,
    C_START,
    C_END,
    C_WALL,
    C_ITERS,
    C_TPUT,
    C_ITEMS,
    C_P50,
    C_P95,
    C_P99,
    C_KERNELS,
    C_GPU,
    C_BUSY,
    C_BUSY_PCT,
    C_ALLOC,
    C_RSRVD,
    C_ALLOC_DEV,
    C_RSRVD_DEV,
    C_MIX_TEXT,
    C_MIX,
    C_TPUT_RATIO,
    C_LAT_RATIO,
    C_SAVED,
    C_SAVED_PCT,
    C_BASE,
    C_COUNT
};

static void phase_columns(struct table *t)
{
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    table_col(t, "grad_mode", NULL, COL_TEXT);
    table_col(t, "autocast", NULL, COL_TEXT);
    table_col(t, "start_ns", NULL, COL_NS);
    table_col(t, "end_ns", NULL, COL_NS);
    table_col(t, "wall_ns", NULL, COL_NS);
    table_col(t, "iterations", "Iters", COL_INT);
    table_col(t, "throughput_per_s", "Iter/s", COL_RATE);
    table_col(t, "items_per_s", NULL, COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "latency_p99_ns", NULL, COL_NS);
    table_col(t, "kernels", "Kernels", COL_INT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    table_col(t, "gpu_busy_ns", NULL, COL_NS);
    table_col(t, "gpu_busy_pct", "GPU busy%", COL_PCT);
    table_col(t, "peak_allocated_bytes", "Peak alloc", COL_BYTES);
    table_col(t, "peak_reserved_bytes", "Peak rsrvd", COL_BYTES);
    table_col(t, "peak_allocated_by_device", NULL, COL_JSON);
    table_col(t, "peak_reserved_by_device", NULL, COL_JSON);
    table_col(t, NULL, "Precision", COL_TEXT);
    table_col(t, "precision_mix", NULL, COL_JSON);
    table_col(t, "throughput_ratio", "Throughput", COL_RATIO);
    table_col(t, "latency_p50_ratio", "Latency", COL_RATIO);
    table_col(t, "peak_allocated_saved_bytes", "Memory saved", COL_BYTES);
    table_col(t, "peak_allocated_saved_pct", "Saved %", COL_PCT);
    table_col(t, "baseline", NULL, COL_TEXT);
}

static void phase_row(struct table *t, const struct phase_info *ph, const struct phase_info *base,
                      const struct run_devices *devices)
{
    char buf[1024];
    table_row(t);
    phase_short_label(ph, buf, sizeof buf);
    table_set_text(t, C_SHORT, buf);
    table_set_text(t, C_LABEL, ph->label);
    table_set_text(t, C_GRAD, ph->grad_mode);
    table_set_text(t, C_AUTOCAST, ph->autocast);
    table_set_int(t, C_START, ph->start);
    table_set_int(t, C_END, ph->end);
    table_set_int(t, C_WALL, ph->wall);
    if (ph->has_iterations) {
        table_set_int(t, C_ITERS, ph->iterations);
        if (ph->iterations) {
            table_set_num(t, C_TPUT, throughput(ph));
            if (ph->items && ph->busy > 0)
                table_set_num(t, C_ITEMS, (double)ph->items * 1e9 / (double)ph->busy);
            table_set_int(t, C_P50, ph->lat_p50);
            table_set_int(t, C_P95, ph->lat_p95);
            table_set_int(t, C_P99, ph->lat_p99);
        }
    }
    if (ph->has_kernels) {
        table_set_int(t, C_KERNELS, ph->kernels);
        table_set_int(t, C_GPU, ph->gpu_time);
        mix_text(ph, buf, sizeof buf);
        if (buf[0]) table_set_text(t, C_MIX_TEXT, buf);
        mix_json(ph, buf, sizeof buf);
        table_set_text(t, C_MIX, buf);
    }
    if (ph->has_busy) {
        table_set_int(t, C_BUSY, ph->gpu_busy);
        if (ph->wall > 0)
            table_set_num(t, C_BUSY_PCT, 100.0 * (double)ph->gpu_busy / (double)ph->wall);
    }
    if (ph->has_memory) {
        table_set_int(t, C_ALLOC, ph->peak_alloc);
        device_json(devices, ph->dev_peak_alloc, buf, sizeof buf);
        table_set_text(t, C_ALLOC_DEV, buf);
    }
    if (ph->has_memory && ph->has_reserved) {
        table_set_int(t, C_RSRVD, ph->peak_reserved);
        device_json(devices, ph->dev_peak_reserved, buf, sizeof buf);
        table_set_text(t, C_RSRVD_DEV, buf);
    }
    if (!base) return;
    table_set_text(t, C_BASE, base->label);
    if (throughput(ph) > 0 && throughput(base) > 0)
        table_set_num(t, C_TPUT_RATIO, throughput(ph) / throughput(base));
    if (ph->iterations && base->iterations && base->lat_p50 > 0)
        table_set_num(t, C_LAT_RATIO, (double)ph->lat_p50 / (double)base->lat_p50);
    if (ph->has_memory && base->peak_alloc > 0) {
        table_set_int(t, C_SAVED, base->peak_alloc - ph->peak_alloc);
        table_set_num(t, C_SAVED_PCT,
                      100.0 * (double)(base->peak_alloc - ph->peak_alloc) /
                          (double)base->peak_alloc);
    }
}

/* A view of `data` showing only the given columns in text (the data table carries them all). */
static struct table *text_view(const struct table *data, const char *title, const int *cols, int n)
{
    struct table *v = table_new(NULL, title);
    for (int k = 0; k < n; k++) {
        const struct col *c = &data->cols[cols[k]];
        table_col(v, NULL, c->title ? c->title : c->key, c->type);
    }
    for (int r = 0; r < data->nrows; r++) {
        table_row(v);
        for (int k = 0; k < n; k++) {
            const struct cell *c = &data->cells[r * data->ncols + cols[k]];
            if (c->null) continue;
            if (c->s)
                table_set_text(v, k, c->s);
            else if (data->cols[cols[k]].type == COL_INT || data->cols[cols[k]].type == COL_NS ||
                     data->cols[cols[k]].type == COL_BYTES)
                table_set_int(v, k, c->i);
            else
                table_set_num(v, k, c->d);
        }
    }
    return v;
}

int section_phases(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                   struct table **out)
{
    (void)db;
    const struct phase_info *base = baseline_of(p, o->baseline);
    struct table *t = table_new("phases", NULL);
    phase_columns(t);
    for (int i = 0; i < p->n; i++) phase_row(t, &p->v[i], base, &p->devices);
    static const int overview[] = {C_SHORT,   C_ITERS, C_TPUT,     C_P50,     C_P95,
                                   C_KERNELS, C_GPU,   C_BUSY_PCT, C_MIX_TEXT};
    static const int against[] = {C_SHORT, C_TPUT_RATIO, C_LAT_RATIO, C_ALLOC,
                                  C_RSRVD, C_SAVED,      C_SAVED_PCT};
    struct table *v1 = text_view(t, "Phases (grad mode / autocast)", overview,
                                 (int)(sizeof overview / sizeof *overview));
    static char title[160];
    char b[64] = "";
    if (base) phase_short_label(base, b, sizeof b);
    snprintf(title, sizeof title,
             "Phases against %s (ratios above 1.00x: more throughput, more"
             " latency)",
             base ? b : "a baseline");
    struct table *v2 = text_view(t, title, against, (int)(sizeof against / sizeof *against));
    if (!p->n)
        v1->note = "no libtorch phase was seen (the program does not use libtorch, or"
                   " INFPROF_TORCH=0)";
    out[0] = t;
    out[1] = v1;
    if (p->n < 2) {
        table_free(v2);
        return 2;
    }
    out[2] = v2;
    return 3;
}

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
            char label[64];
            phase_short_label(ph, label, sizeof label);
            table_row(t);
            table_set_text(t, 0, label);
            table_set_text(t, 1, ph->label);
            table_set_text(t, 2, row < 0 ? "all" : opclass_name((enum opclass)row));
            for (int prec = 0; prec < PREC_COUNT; prec++)
                table_set_num(t, 3 + prec, 100.0 * (double)by[prec] / (double)total);
            table_set_int(t, 3 + PREC_COUNT, total);
        }
    }
    t->note = "compute type from kernel names (docs/report.md lists the rules); unknown: the name"
              " does not say";
    return t;
}
