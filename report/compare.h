/*
 * compare.h: reports over more than one database: `infprof compare BASE NEW` (cmd_compare.c,
 * compare_diff.c) and `infprof report A B ...` (report_multi.c, multi_combined.c). Both start
 * from the tables the single-run report builds for each database and work on those tables, so
 * every figure means what it means in `infprof report`. The table helpers they share are in
 * compare_table.c.
 */
#ifndef INFPROF_COMPARE_H
#define INFPROF_COMPARE_H

#include "report.h"

/* ---- strings that live until the command ends (compare_table.c) ---------------------------- */

/* A formatted copy kept until pool_free(): generated column keys, titles and notes. */
const char *pool_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A program or user string made safe for a title: escaped, and cut to at most `max` bytes. */
const char *pool_escaped(const char *s, size_t max);
void pool_free(void);

/* ---- table helpers (compare_table.c) ------------------------------------------------------- */

/* The column whose JSON key is `name`, or else whose text title is (text-only columns); -1. */
int table_col_index(const struct table *t, const char *name);
/* The cell at row r of the column named `name` (table_col_index), or NULL. */
const struct cell *table_cell(const struct table *t, int r, const char *name);
/* Copy src's cell (row r, column sc) into column dc of dst's last row. */
void table_copy_cell(struct table *dst, int dc, const struct table *src, int r, int sc);
/* A copy of t with the rows whose text in column `col` is `value`. */
struct table *table_where(const struct table *t, const char *col, const char *value);
/* The first table with this key among n, or NULL. */
struct table *table_by_key(struct table **t, int n, const char *key);

/* A text view of `data`: the named columns under new titles (NULL: keep the data's own). */
struct view_col {
    const char *name;  /* column in data (table_col_index) */
    const char *title; /* title in the view */
};
struct table *table_view(const struct table *data, const char *title, const struct view_col *c,
                         int n);

/* The label of the phase --phase names among the phases of several runs (exit 2 when none has
 * it, listing those they have). */
const char *phase_resolve(const struct run_phases *const *runs, int n, const char *want);

/* ---- what `infprof report` shares (cmd_report.c) ------------------------------------------ */

/* The report's sections of one database, as `infprof report` builds them. */
int report_build(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                 struct table **t, int max);
/* An option report and compare share at argv[*i] (--format, --top, --by-phase, --phase, --nvtx,
 * --wide): taken, with its value (*i moves past it); 0 when it is none of those. */
int report_option(int argc, char **argv, int *i, struct report_opts *o, struct render_opts *ro);
/* --top's default for the format, and colour on a terminal. */
void report_defaults(struct report_opts *o, struct render_opts *ro);

/* ---- compare (compare_diff.c) ------------------------------------------------------------- */

struct diff_fig {
    const char *key; /* the section's column */
    int additive;    /* a row on one side only counts as 0 on the other (totals, counts) */
    int ratio;       /* also new / base (throughput, latency) */
};

struct diff_spec {
    const char *key;          /* the section: its key in both runs and in the result */
    const char *match[3];     /* columns that identify a row (NULL ends) */
    const char *show[3];      /* columns copied from the side that has the row (text labels) */
    struct diff_fig figs[10]; /* compared figures (key NULL ends) */
    const char *sort;         /* figure whose absolute change orders rows; NULL: as found */
    const char *group;        /* rows are sorted and cut (--top) within each value of this */
    const char *what;         /* "kernel names": for the note on rows left out */
};

/* Rows of base and new matched on the spec's columns; for each figure the base value, the new
 * value, the delta (new - base), the change in % of base and, for ratio figures, new / base;
 * `status` says "both", "added" (new only) or "removed" (base only). top: rows kept per group
 * (0 all). */
struct table *diff_section(const struct diff_spec *s, const struct table *base,
                           const struct table *new, int top);

/* One side of a comparison: a database read into the report's tables (cmd_compare.c). */
#define COMPARE_TABLES 32
struct compare_side {
    const char *path;
    struct run_phases phases;
    struct table *t[COMPARE_TABLES];
    int n;
};
/* The side's table of a section (exits if the report has none: a bug). */
struct table *side_table(struct compare_side *s, const char *key);
/* The compared sections, data and text views, appended to t; returns how many (at most 24).
 * phase: the label --phase resolved to, or NULL. */
int compare_sections(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                     const char *phase, struct table **t);

/* ---- several databases (report_multi.c, multi_combined.c) --------------------------------- */

struct multi_run {
    const char *path, *label; /* label: "pid 123 on host" (pool), unique among the runs */
    int64_t start_unix;       /* start_unix_ns: with the label, which run this is */
    struct run_phases phases;
    struct table *kernels; /* every kernel row of this process (no --top), for the combined */
    int own_kernels;       /* kernels is not one of the report's tables */
};

/* An iteration on the wall clock (start_unix_ns + start): processes share that clock. */
struct multi_iter {
    int64_t start, dur, batch; /* batch -1: unknown */
    int phase;
};

/* An allocator's totals after an event, on the wall clock; dev indexes multi_data.devs. */
struct multi_mem {
    int64_t wall, allocated, reserved;
    int proc, dev;
    int end; /* the process ended: what it held is released */
};

/* A device as memory sees it: one GPU (by UUID) or the host's memory, which processes on one
 * host share; a GPU whose UUID is unknown is the process's own. */
struct multi_dev {
    char id[192]; /* host and identity: what makes two processes' devices one */
    char host[64], name[32], uuid[48];
};

struct multi_data {
    struct multi_run *runs;
    int n;
    struct multi_iter *iters;
    size_t niters, itercap;
    struct multi_mem *mem;
    size_t nmem, memcap;
    struct multi_dev *devs;
    int ndevs, devcap;
};

/* Read what the combined sections need from run `proc`'s open database. */
void multi_gather(struct sqlite3 *db, const struct run_phases *p, struct multi_data *d, int proc);
/* The combined sections (data and text tables) appended to t; returns how many (at most 8). */
int multi_combined(struct multi_data *d, const struct report_opts *o, const char *phase,
                   struct table **t);
void multi_free(struct multi_data *d);
/* The kernels of all processes by name (and phase): counts and totals summed; a name that
 * several processes launched gets its median and deviation from every launch (multi_kernels.c). */
struct table *multi_kernels(struct multi_data *d, const struct report_opts *o, const char *phase);
/* `infprof report A B ...`: each process, then all of them combined. */
int report_several(char **paths, int n, const struct report_opts *o, const struct render_opts *ro);

#endif
