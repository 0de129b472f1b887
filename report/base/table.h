/*
 * table.h: the table model every report section is built into and rendered from in text, JSON,
 * CSV or Markdown (table.c), the escaping and units the renderings share, and the operations on
 * built tables that compare and multi-run reports use (table_ops.c). One model, several
 * renderings: the formats always carry the same content.
 */
#ifndef INFPROF_TABLE_H
#define INFPROF_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TABLE_MAX_COLS 96

enum col_type {
    COL_TEXT,   /* a string (escaped on output) */
    COL_NAME,   /* a program string (range, API): escaped, shortened in the middle in text */
    COL_KERNEL, /* a kernel name: as COL_NAME, simplified first in text (fmt_kernel_name) */
    COL_INT,    /* a count */
    COL_NS,     /* nanoseconds: human units in text, exact in JSON/CSV */
    COL_BYTES,  /* bytes: human units in text */
    COL_PCT,    /* a percentage, 0..100 */
    COL_RATE,   /* per second */
    COL_RATIO,  /* x.xx (1.00 = same) */
    COL_JSON,   /* raw JSON in JSON output, the text as is elsewhere */
};

struct col {
    const char *key;   /* JSON key and CSV header; NULL: shown in text and Markdown only */
    const char *title; /* text and Markdown header; NULL: shown in JSON and CSV only */
    enum col_type type;
};

struct cell {
    int null;
    int64_t i;
    double d;
    char *s;
};

struct table {
    const char *key;   /* JSON member name and CSV section; NULL: a text and Markdown view only */
    const char *title; /* heading in text and Markdown; NULL: data (JSON, CSV) only */
    int object;        /* one row rendered as a JSON object / "key: value" lines */
    int optional;      /* text and Markdown leave it out when it has no rows */
    int quiet;         /* text and Markdown leave it out unless asked for (--section) */
    int ncols;
    struct col cols[TABLE_MAX_COLS];
    struct cell *cells;
    int nrows, cap;
    const char *note; /* a line printed under the table in text and Markdown */
    /* Rows moved to a temporary file (table_spill.c): they come before the rows in cells and
     * are read back in order through table_row_cells; NULL: every row is in cells. */
    struct table_spill *spill;
};

struct table *table_new(const char *key, const char *title);
void table_col(struct table *t, const char *key, const char *title, enum col_type type);
void table_row(struct table *t); /* start a row: cells are null until set */
void table_set_int(struct table *t, int col, int64_t v);
void table_set_num(struct table *t, int col, double v);
void table_set_text(struct table *t, int col, const char *s);
void table_free(struct table *t);

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV, OUT_MD };

/* Escaping and units, shared with the commands. */
/* Control characters (C0, DEL, C1) and bytes that are not UTF-8 -> \xNN or \uNNNN. */
void fmt_escape(char *out, size_t n, const char *s);
/* Length of the valid UTF-8 sequence at p (no overlongs, surrogates, nothing past U+10FFFF),
 * or 0. */
size_t fmt_utf8_len(const unsigned char *p, const unsigned char *end);
/* How many bytes of s, at most max, end on a character boundary (never half a UTF-8 sequence). */
size_t fmt_utf8_cut(const char *s, size_t max);
/* s, or, when longer than max bytes, its start cut on a character boundary, "..." and "~" with
 * six hex digits of a hash of the whole text (at most max bytes in all): two long labels that
 * differ only at their end stay apart, and the same text gives the same name in every run. */
void fmt_label_cut(char *out, size_t n, const char *s, size_t max);
void fmt_ns(char *out, size_t n, double ns);
void fmt_bytes(char *out, size_t n, double bytes);

/* ---- strings that live until the command ends (table_ops.c) ---------------------------- */

/* A formatted copy kept until pool_free(): generated column keys, titles and notes. */
const char *pool_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A program or user string made safe for a title: escaped, and cut to at most `max` bytes. */
const char *pool_escaped(const char *s, size_t max);
void pool_free(void);

/* ---- table helpers (table_ops.c) ------------------------------------------------------- */

/* The column whose JSON key is `name`, or else whose text title is (text-only columns); -1. */
int table_col_index(const struct table *t, const char *name);
/* The cell at row r of the column named `name` (table_col_index), or NULL. */
const struct cell *table_cell(const struct table *t, int r, const char *name);
/* Copy src's cell (row r, column sc; a spilled row read back) into column dc of dst's last
 * row. */
void table_copy_cell(struct table *dst, int dc, const struct table *src, int64_t r, int sc);
/* Row r's cell in column c emptied (null), its text freed. */
void table_clear_cell(struct table *t, int r, int c);
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

/* ---- rows on disk (table_spill.c) ---------------------------------------------------------- */

/* Move t's rows to its temporary file (made on first use; a table of many processes' rows keeps
 * only the rows added since, and its memory stays bounded). JSON and CSV read them back. */
void table_spill(struct table *t);
/* Every row, spilled ones first. */
int64_t table_rows(const struct table *t);
/* Row r's cells (t->ncols of them): rows in order, read back from the file for spilled ones;
 * valid until the next call on t. */
const struct cell *table_row_cells(const struct table *t, int64_t r);
/* Close the file (table_free does). */
void table_spill_free(struct table *t);

/* ---- the statistic column group (table_stats.c) -------------------------------------------- */

struct stat_cols {
    const char *count_key, *count_title; /* "instances"/"Instances", "calls"/"Calls", ... */
    int bytes;                           /* byte statistics (*_bytes), no Time% column */
    int show_min, show_max, show_stddev; /* shown in text too (JSON and CSV always have them) */
};
/* Append time_pct (unless bytes), total, count, avg, med, min, max, stddev; returns the index
 * of the first. */
int table_stat_cols(struct table *t, const struct stat_cols *c);
struct stat_cells {
    int with_pct; /* the group has its time_pct column */
    double all;   /* what time_pct is a share of */
    int64_t total, count, med, min, max;
    double stddev;
};
/* Fill the group of the current row from column `first`; returns the column after it. */
int table_set_stats(struct table *t, int first, const struct stat_cells *s);

#endif
