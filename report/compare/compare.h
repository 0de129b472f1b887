/*
 * compare.h: `infprof compare BASE NEW` (compare_runs.c, compare_sections.c, compare_diff.c).
 * It starts from the tables the single-run report builds for each database (report_build) and
 * works on those tables, so every figure means what it means in `infprof report`.
 */
#ifndef INFPROF_COMPARE_H
#define INFPROF_COMPARE_H

#include "../render/render.h"

/* ---- compare (compare_diff.c) ------------------------------------------------------------- */

/* Rows of base and new matched on the spec's columns; for each figure the base value, the new
 * value, the delta (new - base), the change in % of base and, for ratio figures, new / base;
 * `status` says "both", "added" (new only) or "removed" (base only). top: rows kept per group
 * (0 all). */
struct table *diff_section(const struct diff_spec *s, const struct table *base,
                           const struct table *new, int top);

/* One side of a comparison: a database read into the report's tables (compare_runs.c), and the
 * side's other runs (compare BASE... -- NEW...), read into run models only: the first run's
 * tables are compared row by row; the phases' and series' verdicts weigh every run. */
struct compare_side {
    const char *path;
    struct run_phases phases;
    struct table *t[REPORT_TABLES];
    int n;
    struct run_phases *more; /* runs 2.. of the side */
    const char *const *more_paths;
    int nmore;
};

/* ---- between runs (compare_band.c) --------------------------------------------------------- */

/* One run's series by phase (full label) and name as the Series table shows it ("(unnamed)"
 * for none), or NULL. */
const struct series_info *series_in(const struct run_phases *p, const char *phase,
                                    const char *name);

/* Each run's p50 steady latency (the report's p50) of the phase (name NULL) or series (phase's
 * full label and the series' name) of side s, into m (room for 1 + s->nmore); how many runs
 * have one. */
int side_run_p50s(const struct compare_side *s, const char *phase, const char *name, double *m);
/* Each run's loop rate (series_delivered_per_s: items/s where the batch is known, else
 * iterations/s; the first run's unit) of a series of side s into m; how many. */
int side_run_rates(const struct compare_side *s, const char *phase, const char *name, double *m);
/* The 95% band of the speed-up (base over new) across the runs' medians mb[0..kb), mn[0..kn)
 * (Welch's t on their logs); spread: the widest gap between two runs of one side (log), and
 * within_spread: the change is no larger. 0 when a side has fewer than two runs: one run's
 * spread is unknown, and two runs of the other side that agree by chance made a band of nothing
 * (an unchanged program's 2+1 runs read "loop rate slower, 0.95x (0.95-0.96x)"). */
struct runs_band {
    int kb, kn;
    double lo, hi, ratio, spread;
    double centre_b, centre_n; /* each side's geometric mean of its runs' p50 (ns) */
    int within_spread;
};
int runs_band(const double *mb, int kb, const double *mn, int kn, struct runs_band *out);
/* The runs of a side that stand out slower than its others (three runs or more; out[i] 1), how
 * many: a machine's slow spell, left out of the band and said. */
int runs_left_out(const double *m, int k, int *out);
/* "3.21ms 52.50ms (left out) 3.19ms": the runs' medians as the tables show them (pool
 * memory); out NULL: none left out. */
const char *runs_text(const double *m, int k, const int *out);
/* "16930123 18140456": the same in ns, every run (for checking a band by hand). */
const char *runs_ns(const double *m, int k);
/* What a series' change is made of: per steady iteration, each side's median over its runs of
 * its time on the CPU, off it (sleeps, waits, preemption: iteration_cpu), its GPU kernels' time
 * and the wait between iterations; those that moved by PARTS_MOVED_SHARE of the base latency
 * p50 and PARTS_MOVED_MIN_NS or more and, with several runs, by more than two runs of one side
 * are apart; largest first: "off the CPU +10.05ms, on the CPU +1.20ms per iteration" (pool
 * memory), or NULL. */
#define PARTS_MOVED_SHARE  0.05
#define PARTS_MOVED_MIN_NS 20000
const char *series_parts_moved(const struct compare_side *b, const struct compare_side *n,
                               const char *phase, const char *bname, const char *nname,
                               double base_p50);
/* The side's table of a section (compare_diff.c; exits if the report has none: a bug). */
struct table *side_table(struct compare_side *s, const char *key);
/* The compared sections, data and text views, appended to t (room for max); returns how many.
 * phase: the label --phase resolved to, or NULL. */
int compare_sections(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                     const char *phase, struct table **t, int max);
/* Room for compare's tables: the headers, the first screen, and every section's compared. */
#define COMPARE_OUT_TABLES (REPORT_TABLES + 8)
/* Series a changed setting renamed (compare_rename.c): in a phase where exactly one series of
 * each run has no partner by name, the new run's is matched under the base run's name. */
#define SERIES_RENAMES_MAX 16
struct series_renames {
    int n;
    const char *phase[SERIES_RENAMES_MAX], *base[SERIES_RENAMES_MAX], *new[SERIES_RENAMES_MAX];
    int row[SERIES_RENAMES_MAX]; /* in the new run's table */
};
/* A copy of the new run's series table with those series under the base run's names. */
struct table *series_match_renames(const struct table *base, const struct table *new,
                                   struct series_renames *rn);
/* A copy of a new run's table whose rows name a series (operators per series) with the renamed
 * series under the base run's names. */
struct table *series_renamed(const struct table *new, const struct series_renames *rn);
/* The new run's name of the base run's series (phase, name) where renamed, else NULL. */
const char *series_renamed_to(const struct series_renames *rn, const char *phase, const char *name);
/* d with the 95% band of each row's speed-up (speedup_lo, speedup_hi: base latency over new) and
 * its verdict (compare_verdict.c); kind "phases" (rows by label) or "series" (by phase and
 * name). d is freed; the result replaces it. */
struct table *compare_verdicts(struct table *d, const char *kind, const struct compare_side *b,
                               const struct compare_side *n, const struct series_renames *rn);
/* The first screen of compare (compare_verdict.c): from the phases and series of t[0..k), the
 * changes beyond their 95% band (largest first, with the band, both p50s and the difference),
 * those with no clear difference, those the same within 1%, and those with no verdict (why). */
struct table *compare_summary(struct table **t, int k);
/* The operator deltas (compare_operators.c): data and text view, appended to t; returns 2. */
int compare_operators(struct compare_side *b, struct compare_side *n, const struct report_opts *o,
                      struct table **t);

/* Both runs read and compared (compare_runs.c): the header that names them and warns when the
 * comparison may mislead, then the compared sections, appended to t (room for 64); returns how
 * many. Exits 2 when both name one database or one run. */
struct compare_runs {
    struct compare_side base, new;
};
/* base[0..nb), new[0..nn): each side's runs, the first compared row by row. */
int compare_runs(struct compare_runs *r, const char *const *base, int nb, const char *const *new,
                 int nn, const struct report_opts *o, struct table **t);
void compare_runs_free(struct compare_runs *r, struct table **t, int k);

#endif
