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

/* One side of a comparison: a database read into the report's tables (compare_runs.c). */
struct compare_side {
    const char *path;
    struct run_phases phases;
    struct table *t[REPORT_TABLES];
    int n;
};
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
int compare_runs(struct compare_runs *r, const char *base_path, const char *new_path,
                 const struct report_opts *o, struct table **t);
void compare_runs_free(struct compare_runs *r, struct table **t, int k);

#endif
