/*
 * sections.h: the sections of the report of one run, each built from the run model (run.h: the
 * figures are computed there, once; sections hold no SQL) into tables (table.h), and the report
 * they make together (build.c).
 */
#ifndef INFPROF_SECTIONS_H
#define INFPROF_SECTIONS_H

#include "../run/run.h"

/* What the report's options ask of the sections (the run model's own are struct run_options). */
struct report_opts {
    int top;                /* kernels shown; 0 all */
    const char *baseline;   /* phase label (or "grad/off" form) to compare against */
    int by_phase;           /* kernels per phase rather than over all phases */
    const char *phase;      /* kernels of this phase only */
    const char *nvtx;       /* kernels launched inside NVTX ranges matching this glob */
    struct run_options run; /* what the run model is asked (--warmup, --detect, --window) */
    int each;               /* several databases: each process's own report too */
    enum out_format format; /* views that differ by rendering (advice: wrapped text, md rows) */
    /* No output reads a quiet table's rows (text and Markdown without --section): the tables
     * quiet whatever the run (iterations) are built without them (report_defaults). */
    int quiet_rows_unread;
};
struct table *section_run(struct sqlite3 *db, const struct run_phases *p);
/* A row's phase: its full label in column `full` (JSON, CSV: as the phase table's `label`) and
 * its short one in `shrt` (text); "(no phase)" for none (sections.c). */
void phase_cells(struct table *t, const struct phase_info *ph, int full, int shrt);
/* The phase ran the model: it has steady iterations, or (when no phase has any) at least a tenth
 * of the busiest phase's GEMM and convolution time; not a phase that only loaded it. */
int phase_ran_model(const struct run_phases *p, const struct phase_info *ph);
/* The phase others are held against (--baseline, else one that ran the model; sec_phases.c). */
const struct phase_info *baseline_of(const struct run_phases *p, const char *want);
struct advice_list;
/* The phase comparison: a data table ("phases") and two text views; returns how many. */
int section_phases(const struct run_phases *p, const struct report_opts *o, struct table **out);
/* The precision mix per phase: share of kernel time by compute type. */
struct table *section_precision(const struct run_phases *p);
/* Kernel time by operation kind (GEMM, conv, elementwise, ...) per phase. */
struct table *section_operations(const struct run_phases *p);
struct table *section_memory(const struct run_phases *p);
/* Series, the batch sweep, the time between iterations and the iterations (sec_series.c);
 * quiet_rows 0: the iterations table without its rows (no output reads them); returns how many. */
int section_series(struct sqlite3 *db, const struct run_phases *p, int quiet_rows,
                   struct table **out);
/* A verdict in a table's words: "faster", "slower", "no clear difference", "same (within 1%)"
 * (the phases, inference_mode and Series tables; sec_phases.c). */
const char *verdict_word(enum verdict v);
/* The verdict of fast against slow in words, ", faster (95%: 1.37-1.52x, one run)" or ", no
 * verdict: b shifted ..." (series_pair_verdict; sec_series.c); returns what it wrote. */
size_t series_pair_words(const struct series_info *fast, const struct series_info *slow, char *out,
                         size_t n);
/* The inference_mode line's comparisons (sec_phases_lines.c), per autocast setting where it
 * gives a ratio (one series a side, one batch size, one model): inference_mode's speed-up over
 * no_grad (no_grad's p50 over its), the band and verdict (band 0: none stood). */
struct mode_verdict {
    char autocast[16];
    double ratio, lo, hi;
    int band;
    enum verdict v;
};
int mode_verdicts(const struct run_phases *p, struct mode_verdict *out, int max);
/* PyTorch operators per phase (sec_operators.c): two tables; returns how many. */
int section_operators(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                      struct table **out);
/* Energy, power and clocks per phase and device, and energy against the baseline phase
 * (sec_energy.c): two tables; returns how many. */
int section_energy(struct sqlite3 *db, const struct run_phases *p, const struct phase_info *base,
                   struct table **out);
struct table *section_nvtx(struct sqlite3 *db, const struct run_phases *p,
                           const struct report_opts *o);
struct table *section_kernels(struct sqlite3 *db, const struct run_phases *p,
                              const struct report_opts *o);
/* The cuDNN section (sec_cudnn.c): up to `max` tables appended to out; returns how many. */
int section_cudnn(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                  struct table **out, int max);
/* The advice (sec_advice.c): a data table and the view for `format`; returns how many. */
int section_advice(const struct advice_list *l, enum out_format format, struct table **out);

/* ---- section descriptors ------------------------------------------------------------------
 * Each section file exports one descriptor per section it builds (registry.c lists them in the
 * report's order); `infprof report` (build.c) and `infprof compare` (report/compare) loop over
 * that one list. */

/* What every section's build reads: the run model, the options, the baseline phase and the
 * advice found once for the run. */
struct section_ctx {
    struct sqlite3 *db;
    const struct run_phases *p;
    const struct report_opts *o;
    const struct phase_info *base;
    const struct advice_list *advice;
};

/* How `infprof compare` matches a section's rows in two runs (compare_diff.c): */
struct diff_fig {
    const char *key; /* the section's column */
    int additive;    /* a row on one side only counts as 0 on the other (totals, counts) */
    int ratio;       /* also new / base (throughput, latency) */
};

struct diff_spec {
    const char *key;          /* the section: its key in both runs and in the result */
    const char *match[3];     /* columns that identify a row (NULL ends) */
    const char *show[3];      /* columns copied from the side that has the row (text labels) */
    struct diff_fig figs[16]; /* compared figures (key NULL ends) */
    const char *sort;         /* figure whose absolute change orders rows; NULL: as found */
    const char *group;        /* rows are sorted and cut (--top) within each value of this */
    const char *what;         /* "kernel names": for the note on rows left out */
};

/* ... and the text view it shows of the result. */
struct section_compare {
    struct diff_spec spec;
    const char *title;        /* the text view's title */
    struct view_col cols[10]; /* its columns (name NULL ends) */
    int always;               /* shown in text even when empty */
    int top;                  /* cut to --top rows */
    const char *empty_note;   /* the view's note when neither run has a row; NULL none */
    int verdicts;             /* rows are series: the speed-up's band and a verdict each */
    /* A second text view of the same rows (NULL title: none): a text of 100 columns holds
     * only so many. */
    const char *title2;
    struct view_col cols2[10];
};

/* A line of the first screen (the Summary) that a section answers: the Summary gathers every
 * section's lines, orders them by rank and gives each its column (sec_summary.c). */
struct summary_out {
    struct table *t; /* the Summary, one row */
    int col;         /* the line's column */
    int extra;       /* its first extra column (summary_line.extra), if any */
    int hit;         /* set by the line when it quotes a phase whose figures are suspect */
};

struct summary_col {
    const char *key; /* NULL ends */
    enum col_type type;
};

#define SUMMARY_MAX_EXTRA 10 /* a line's figures beside its prose */

struct summary_line {
    const char *key, *title; /* its column: JSON and CSV key, the text's title */
    int rank;                /* its place on the first screen, lowest first */
    /* Writes the line (summary_set) and its extra columns; an empty line is null. */
    void (*fill)(const struct section_ctx *c, struct summary_out *o);
    struct summary_col extra[SUMMARY_MAX_EXTRA]; /* figures beside the prose, JSON and CSV only */
};

/* The line's text, unless empty. */
void summary_set(struct summary_out *o, const char *text);
/* A phase's short label for a line, " (suspect)" added (and o->hit set) when its figures lost
 * events (suspect.c). */
void summary_named(struct summary_out *o, const struct phase_info *ph, char *out, size_t n);

struct report_section {
    const char *key; /* the data table's key (JSON, CSV; compare matches on it) */
    const struct summary_line *const *summary; /* its Summary lines, NULL-ended; NULL none */
    /* Appends the section's tables (its data table first, then text views) to out; at most
     * max; returns how many. A section of one table may give `table` instead. */
    int (*build)(const struct section_ctx *c, struct table **out, int max);
    int shown_empty; /* text and Markdown show it even with nothing to say */
    /* How compare shows it; NULL: not compared, or compared by report/compare itself (phases,
     * kernels, operators: views that depend on options or several notes). */
    const struct section_compare *compare;
    struct table *(*table)(const struct section_ctx *c); /* one table, where build is NULL */
};

/* The report's sections in the order the report shows them (registry.c). */
extern const struct report_section *const report_sections[];
extern const int report_section_count;

/* ---- the report (build.c) ----------------------------------------------------------------- */

/* Room for one run's tables: every section's, data and views (report_build stops with a message
 * naming this rather than run past it), and at most SECTION_MAX_TABLES from one section. */
#define REPORT_TABLES      64
#define SECTION_MAX_TABLES 8

/* The report's sections of one database, as `infprof report` builds them. */
int report_build(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                 struct table **t, int max);

#endif
