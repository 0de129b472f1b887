/*
 * report_multi.c: `infprof report A.db B.db ...`, one database per process or rank. Each file
 * is read into the tables of the single-run report (report_build), one after the other; text
 * prints every run header, then each process's sections under its label ("pid 123 on host"),
 * then the combined sections (multi_combined.c). JSON and CSV carry each section once, its rows
 * from every process with a leading `process` column (`runs` holds the run headers), then the
 * combined sections as `combined_*`.
 */
#include "multi.h"
#include "../run/detect.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TITLE_MAX  98   /* a title is one line of text (100 columns) */
#define SPILL_ROWS 4096 /* rows of all processes a section holds in memory (JSON, CSV) */

/* "pid 123 on host" ("rank 3, pid 123 on host" where the launcher set a rank), and the role
 * when the process was not the one started. */
static const char *label_of(struct sqlite3 *db)
{
    int64_t pid = 0, rank = -1;
    db_meta_int(db, "pid", &pid);
    db_meta_int(db, "dist_rank", &rank);
    char *host = db_meta_text(db, "host"), *role = db_meta_text(db, "role");
    char *py = db_meta_text(db, "python_module_hooks");
    if (py && !strncmp(py, "worker", 6)) { /* a DataLoader worker: named so, whatever its role */
        free(role);
        role = strdup("DataLoader worker");
    }
    free(py);
    const char *label =
        pool_printf("%spid %lld on %s%s%s%s",
                    rank >= 0 ? pool_printf("rank %lld, ", (long long)rank) : "", (long long)pid,
                    pool_escaped(host ? host : "?", 40), role && strcmp(role, "root") ? " (" : "",
                    role && strcmp(role, "root") ? pool_escaped(role, 20) : "",
                    role && strcmp(role, "root") ? ")" : "");
    free(host);
    free(role);
    return label;
}

/* The rows of a per-phase kernel table that belong to one phase (by label). */
static struct table *kernels_of_phase(struct table *k, const char *label)
{
    struct table *t = table_where(k, "phase", label);
    table_free(k);
    /* One phase: its label in a column of every row says nothing (the title names it). */
    for (int c = 0; c < t->ncols; c++)
        if (!t->cols[c].key) t->cols[c].title = NULL;
    return t;
}

/* --phase names a phase of any of the processes; their kernels are kept to that phase. */
static const char *restrict_phase(struct multi_data *d, struct table ***per, const int *nper,
                                  const char *want)
{
    const struct run_phases **runs = calloc((size_t)(d->n > 0 ? d->n : 1), sizeof *runs);
    if (!runs) cli_fail("out of memory");
    for (int i = 0; i < d->n; i++) runs[i] = &d->runs[i].phases;
    const char *label = phase_resolve(runs, d->n, want);
    free(runs);
    const char *title = pool_printf("CUDA kernels of phase %s", label);
    for (int i = 0; i < d->n; i++) {
        struct multi_run *r = &d->runs[i];
        if (r->own_kernels) r->kernels = kernels_of_phase(r->kernels, label);
        for (int k = 0; k < nper[i]; k++) {
            if (!per[i][k]->key || strcmp(per[i][k]->key, "kernels")) continue;
            int same = r->kernels == per[i][k];
            struct table *t = per[i][k] = kernels_of_phase(per[i][k], label);
            t->title = title;
            if (same) r->kernels = t;
            /* The note counted the rows left out of every phase: count this one's. */
            int hidden = r->kernels->nrows - t->nrows;
            t->note =
                hidden ? pool_printf("%d more kernel names not shown (--top 0 shows all)", hidden)
                       : NULL;
        }
    }
    return label;
}

/* One process's rows appended to the section's table of all processes (made on first use). */
static void merge_rows(struct table **all, int *nall, const struct table *src,
                       const struct multi_run *r)
{
    const char *key = !strcmp(src->key, "run") ? "runs" : src->key;
    struct table *m = table_by_key(all, *nall, key);
    int extra = m ? m->ncols - src->ncols : 0;
    if (!m) {
        m = all[(*nall)++] = table_new(key, NULL);
        table_col(m, "process", NULL, COL_TEXT);
        if (!strcmp(key, "runs")) table_col(m, "file", NULL, COL_TEXT);
        extra = m->ncols;
        for (int c = 0; c < src->ncols; c++)
            table_col(m, src->cols[c].key, NULL, src->cols[c].type);
    }
    for (int row = 0; row < src->nrows; row++) {
        table_row(m);
        table_set_text(m, 0, r->label);
        if (extra == 2) table_set_text(m, 1, r->path);
        for (int c = 0; c < src->ncols; c++)
            if (src->cols[c].key) table_copy_cell(m, extra + c, src, row, c);
    }
}

static void check_distinct(char **paths, int n)
{
    struct stat *st = calloc((size_t)n, sizeof *st);
    if (!st) cli_fail("out of memory");
    for (int i = 0; i < n; i++) {
        if (stat(paths[i], &st[i]) != 0) continue; /* db_open says why */
        for (int j = 0; j < i; j++)
            if (st[j].st_ino == st[i].st_ino && st[j].st_dev == st[i].st_dev && st[i].st_ino)
                cli_fail("%s and %s are the same database: give each process once", paths[j],
                         paths[i]);
    }
    free(st);
}

/* Two processes with one label (the same pid on hosts of one name) are told apart by file; two
 * copies of one run (same pid, host and start) would count it twice. Run i against the runs
 * read before it, as it is read (its rows may be merged at once). */
static void unique_label(struct multi_data *d, int i)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(d->runs[i].label, d->runs[j].label)) {
            if (d->runs[i].start_unix == d->runs[j].start_unix)
                cli_fail("%s and %s hold the same run (%s, same start): give each process"
                         " once",
                         d->runs[j].path, d->runs[i].path, d->runs[i].label);
            d->runs[i].label =
                pool_printf("%s [%s]", d->runs[i].label, pool_escaped(d->runs[i].path, 40));
            break;
        }
}

/* Process i: its run model and its sections (per[i]), its kernels folded into the combined
 * ones, what the combined sections and the process comparison need gathered. */
static void read_process(struct multi_data *d, int i, const char *path,
                         const struct report_opts *po, int by_phase, int lean, struct table ***per,
                         int *nper)
{
    struct multi_run *r = &d->runs[i];
    struct sqlite3 *db = db_open(path);
    const char *missing = detect_prefer_missing(db, po->run.detect);
    if (missing) fprintf(stderr, "infprof: %s: %s\n", path, missing);
    r->path = path;
    r->label = label_of(db);
    db_meta_int(db, "start_unix_ns", &r->start_unix);
    unique_label(d, i);
    phases_load(db, &r->phases, &po->run);
    if (!(per[i] = calloc(REPORT_TABLES, sizeof **per))) cli_fail("out of memory");
    nper[i] = report_build(db, &r->phases, po, per[i], REPORT_TABLES);
    /* Some sections title themselves in static buffers the next database reuses (tables
     * shown: lean mode lets them go). */
    for (int k = 0; !lean && k < nper[i]; k++) {
        struct table *t = per[i][k];
        if (t->title) t->title = pool_printf("%s", t->title);
        if (t->note) t->note = pool_printf("%s", t->note);
    }
    r->kernels = table_by_key(per[i], nper[i], "kernels");
    if (po->top) {
        struct report_opts all = *po;
        all.top = 0;
        r->kernels = section_kernels(db, &r->phases, &all);
        r->own_kernels = 1;
    }
    multi_kernels_fold(d, i, r->kernels, by_phase);
    multi_gather(db, &r->phases, d, i);
    multi_process_facts(db, r);
    multi_series_facts(db, &r->phases, r);
    db_close(db);
    run_rows_drop(&r->phases); /* with --each too: its tables are made */
}

/* Without --each: process i's rows folded into the sections of all processes (JSON, CSV; past
 * a few thousand rows a section, on disk), then its tables and the parts of its run model read
 * no more let go. */
static void let_go(struct multi_data *d, int i, struct table ***per, int *nper, int rows,
                   struct table **data, int *ndata)
{
    struct multi_run *r = &d->runs[i];
    for (int k = 0; rows && k < nper[i]; k++)
        if (per[i][k]->key && *ndata < REPORT_TABLES) merge_rows(data, ndata, per[i][k], r);
    for (int k = 0; rows && k < *ndata; k++)
        if (data[k]->nrows >= SPILL_ROWS) table_spill(data[k]);
    for (int k = 0; k < nper[i]; k++) table_free(per[i][k]);
    nper[i] = 0;
    if (r->own_kernels) table_free(r->kernels); /* folded */
    r->kernels = NULL;
    r->own_kernels = 0;
    run_lazy_drop(&r->phases);
}

int report_several(char **paths, int n, const struct report_opts *o, const struct render_opts *ro)
{
    if (o->nvtx)
        cli_fail("--nvtx reads one database at a time (combined kernel medians read the"
                 " launches again, and ranges are per process)");
    check_distinct(paths, n);
    struct multi_data d = {0};
    d.n = n;
    d.runs = calloc((size_t)n, sizeof *d.runs);
    struct table ***per = calloc((size_t)n, sizeof *per);
    int *nper = calloc((size_t)n, sizeof *nper);
    if (!d.runs || !per || !nper) cli_fail("out of memory");
    /* --phase: every process's kernels by phase, cut to the phase once all are read (it may be
     * a phase of some processes only). */
    struct report_opts po = *o;
    /* Without --each, no table of one process is shown: its kernels are folded into the
     * combined ones as it is read (multi_kernels_fold), JSON and CSV fold its rows into the
     * sections of all processes (past a few thousand rows, on disk), and its tables are let go.
     * So a thousand processes take a thousand run models (their iteration arrays and lazy parts
     * dropped), not a thousand reports. --phase cuts every process's kernels once all are read:
     * it keeps them. */
    int lean = !o->each && !o->phase;
    struct table **data = calloc(REPORT_TABLES, sizeof *data);
    int ndata = 0;
    if (!data) cli_fail("out of memory");
    if (o->phase) po.phase = NULL, po.by_phase = 1;
    for (int i = 0; i < n; i++) {
        read_process(&d, i, paths[i], &po, o->by_phase || o->phase, lean, per, nper);
        if (lean)
            let_go(&d, i, per, nper, ro->format == OUT_JSON || ro->format == OUT_CSV, data, &ndata);
    }
    multi_process_roles(&d);
    const char *phase = o->phase ? restrict_phase(&d, per, nper, o->phase) : NULL;

    int cap = REPORT_TABLES + 8, nt = 0;
    for (int i = 0; i < n; i++) cap += nper[i];
    struct table **t = calloc((size_t)cap, sizeof *t);
    if (!t) cli_fail("out of memory");
    /* Data: each section once, rows of every process. */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nper[i]; k++)
            if (per[i][k]->key && ndata < REPORT_TABLES)
                merge_rows(data, &ndata, per[i][k], &d.runs[i]);
    /* The answer first, in every format: the Summary over all processes, the processes side by
     * side, the combined sections; then (JSON and CSV) each section's rows of every process,
     * and each process's own report with --each. */
    t[nt++] = multi_job_summary(&d);
    t[nt++] = multi_processes(&d);
    nt += multi_combined(&d, o, phase, t + nt);
    for (int k = 0; k < ndata; k++) t[nt++] = data[k];
    for (int i = 0; o->each && i < n; i++) {
        struct table *run = table_by_key(per[i], nper[i], "run");
        run->title = pool_escaped(pool_printf("Run %d of %d: %s, %s", i + 1, n, d.runs[i].label,
                                              pool_escaped(paths[i], 40)),
                                  TITLE_MAX);
        t[nt++] = run;
    }
    for (int i = 0; o->each && i < n; i++)
        for (int k = 0; k < nper[i]; k++) {
            struct table *s = per[i][k];
            if (s->key && !strcmp(s->key, "run")) continue;
            if (s->title)
                s->title =
                    pool_escaped(pool_printf("%s: %s", d.runs[i].label, s->title), TITLE_MAX);
            t[nt++] = s;
        }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nper[i]; k++) per[i][k]->key = NULL; /* their rows are in data */
    render(stdout, t, nt, ro);

    for (int i = 0; i < nt; i++) table_free(t[i]);
    for (int i = 0; !o->each && i < n; i++) /* not shown: not in t */
        for (int k = 0; k < nper[i]; k++) table_free(per[i][k]);
    for (int i = 0; i < n; i++) {
        if (d.runs[i].own_kernels) table_free(d.runs[i].kernels);
        free(per[i]);
    }
    free(per);
    free(nper);
    free(t);
    free(data);
    multi_free(&d);
    pool_free();
    return fflush(stdout) == 0 ? 0 : 1;
}
