/*
 * cli.h: what the `infprof` subcommands share: the command table, database access with one-line
 * errors (db.c), and the table model every report section is built into and rendered from in
 * text, JSON, CSV or Markdown (table.c). One model, several renderings: the formats always carry
 * the same content.
 */
#ifndef INFPROF_CLI_H
#define INFPROF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sqlite3;
struct sqlite3_stmt;

/* ---- commands (main.c) -------------------------------------------------------------------- */

struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* Exit codes: 0 fine, 2 usage or input error (one line on stderr, prefixed "infprof:"). */
#define CLI_EXIT_USAGE 2
void cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
const char *cli_self_dir(void); /* directory of the running infprof binary */

/* ---- databases (db.c) --------------------------------------------------------------------- */

/* Open an infprof database read-only, or exit 2 with one line naming the file and the fix:
 * missing, not SQLite, empty, truncated, not infprof, or from a newer schema. */
struct sqlite3 *db_open(const char *path);
void db_close(struct sqlite3 *db);
/* Prepare or exit 2 ("damaged database"). */
struct sqlite3_stmt *db_prepare(struct sqlite3 *db, const char *sql);
/* Step: 1 row, 0 done; exit 2 on error. */
int db_step(struct sqlite3_stmt *st);
int db_has_table(struct sqlite3 *db, const char *name);
/* A column of a table (databases of older schemas lack some). */
int db_has_column(struct sqlite3 *db, const char *table, const char *column);
/* One integer from a query; fallback when it returns no row or NULL. */
int64_t db_int(struct sqlite3 *db, const char *sql, int64_t fallback);
/* meta values: malloc'ed text (NULL if absent), or an integer. */
char *db_meta_text(struct sqlite3 *db, const char *key);
int db_meta_int(struct sqlite3 *db, const char *key, int64_t *out);
const char *db_path_of(struct sqlite3 *db);

/* ---- the table model (table.c) ------------------------------------------------------------ */

#define TABLE_MAX_COLS 48

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
    int ncols;
    struct col cols[TABLE_MAX_COLS];
    struct cell *cells;
    int nrows, cap;
    const char *note; /* a line printed under the table in text and Markdown */
};

struct table *table_new(const char *key, const char *title);
void table_col(struct table *t, const char *key, const char *title, enum col_type type);
void table_row(struct table *t); /* start a row: cells are null until set */
void table_set_int(struct table *t, int col, int64_t v);
void table_set_num(struct table *t, int col, double v);
void table_set_text(struct table *t, int col, const char *s);
void table_free(struct table *t);

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV, OUT_MD };

struct render_opts {
    enum out_format format;
    int wide;            /* do not shorten names */
    int color;           /* ANSI colour (text on a terminal, NO_COLOR unset) */
    int width;           /* text width, 100 */
    const char *section; /* only the table with this key (CSV: one tidy table, no "# key" line) */
    const char *csv_dir; /* CSV: one tidy file per table, DIR/<key>.csv */
};

/* Render a document made of tables. JSON: one object with a member per table. */
void render(FILE *out, struct table **tables, int n, const struct render_opts *o);

/* Escaping and units, shared with the commands. */
/* Control characters (C0, DEL, C1) and bytes that are not UTF-8 -> \xNN or \uNNNN. */
void fmt_escape(char *out, size_t n, const char *s);
/* Length of the valid UTF-8 sequence at p (no overlongs, surrogates, nothing past U+10FFFF),
 * or 0. */
size_t fmt_utf8_len(const unsigned char *p, const unsigned char *end);
void fmt_ns(char *out, size_t n, double ns);
void fmt_bytes(char *out, size_t n, double bytes);
enum out_format parse_format(const char *s); /* exits 2 on an unknown format */

#endif
