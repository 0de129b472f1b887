/*
 * db.h: an infprof database opened read-only, with one-line errors that name the file and the
 * fix (exit 2) for a missing, damaged or foreign file, and the few queries every reader needs.
 */
#ifndef INFPROF_DB_H
#define INFPROF_DB_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct sqlite3_stmt;

/* Open an infprof database read-only, or exit 2 with one line naming the file and the fix:
 * missing, not SQLite, empty, truncated, not infprof, or from a newer schema. */
struct sqlite3 *db_open(const char *path);
void db_close(struct sqlite3 *db);
/* Prepare or exit 2 ("damaged database"). */
struct sqlite3_stmt *db_prepare(struct sqlite3 *db, const char *sql);
/* Step: 1 row, 0 done; exit 2 on error. */
int db_step(struct sqlite3_stmt *st);
int db_has_table(struct sqlite3 *db, const char *name);
/* Whether the run recorded every PyTorch operator call (INFPROF_OPERATORS=1, or a database from
 * before sampling), so that any one iteration's operators are there: 0 when none were recorded,
 * or whole iterations sampled (meta torch_operators_mode, report/run/operators.h). */
int db_operators_every_call(struct sqlite3 *db);
/* The operator calls as a subquery of (phase, name_id, iter, calls, self, dur) rows, for a reader
 * to sum: the writer's sums where the run left them whole (meta 'torch_operator_sums',
 * collectors/torch_opsum.c: a row per phase, name and iteration, each key perhaps in several
 * rows), else torch_operators with calls 1 (a database from before 2026-11-29). Exact both
 * ways; the sums make a report's cost grow with the iterations sampled, not the calls. */
const char *db_operator_calls(struct sqlite3 *db);
/* A first guess of a rowid table's rows, without counting them: its largest rowid (one step
 * down the b-tree; count(*) reads every page: 12 ms of the H200 fixture's tensor_memory, 10x
 * that for a run 10x as long), at most 4 M. Rows a program deleted make it larger than the
 * count; rowids set below 1 can make it smaller: a reader grows its array past it (db_scan). */
size_t db_rows_guess(struct sqlite3 *db, const char *table);
/* The tensor_memory rows that carry a running total. In a database from before 2026-11-28 (second
 * session), c10's MapAllocator (shared memory: a DataLoader's batches) left CPU rows with allocated
 * 0, no total at all; since, the writer stores the CPU total with the shared blocks in it
 * (collectors/torch_ingest.c). A reader of the totals skips the rows of 0 (a total that falls to
 * exactly 0 is skipped with them: the total then holds at its last value). */
#define DB_TENSOR_TOTALS "NOT (device_type = 0 AND allocated = 0)"

/* The one-line failure db_prepare and db_step give, for an SQLite error (rc, msg) met reading
 * path (NULL: the database opened last): damaged, a table missing, or else the message. */
void db_fail_as(const char *path, int rc, const char *msg) __attribute__((noreturn));

/* ---- a table read by several threads (db_scan.c) ------------------------------------------ */

/* One row of a scan's statement into `row` (the scan's size in bytes). It runs on a reader
 * thread: it may read ctx and the statement, nothing else of the report, and cannot fail. */
typedef void (*db_scan_row)(struct sqlite3_stmt *st, void *row, void *ctx);

/* The rows of `table` that `sql` selects, in rowid order (as one `SELECT ... FROM table` steps
 * them), decoded by `row` into one malloc'ed array of *n rows (NULL when none). `sql` reads
 * `table` alone and its WHERE ends with "rowid BETWEEN ?1 AND ?2". The rowids are cut into
 * ranges read at once by several threads (db_scan_threads), each through its own connection,
 * while the report's connection holds a read transaction; one thread reads a table under 64 k
 * rowids, the file of a run still being written (a -wal beside it: connections could see
 * different commits), and a view or a table without rowids (whole: the range left out). Errors
 * as db_step's. */
void *db_scan(struct sqlite3 *db, const char *table, const char *sql, size_t size, db_scan_row row,
              void *ctx, size_t *n);
/* The threads a scan reads with: INFPROF_REPORT_THREADS (1-64; anything else is one line and
 * exit 2), else the CPUs the report may run on, at most 8. */
int db_scan_threads(void);

/* A column of a table (databases of older schemas lack some). */
int db_has_column(struct sqlite3 *db, const char *table, const char *column);
/* One integer from a query; fallback when it returns no row or NULL. */
int64_t db_int(struct sqlite3 *db, const char *sql, int64_t fallback);
/* meta values: malloc'ed text (NULL if absent), or an integer. */
char *db_meta_text(struct sqlite3 *db, const char *key);
int db_meta_int(struct sqlite3 *db, const char *key, int64_t *out);
const char *db_path_of(struct sqlite3 *db);

/* A text column whole, malloc'ed: a NUL inside it (a name the program gave) shows as \\0
 * instead of cutting the name there. */
char *db_text_whole(struct sqlite3_stmt *st, int col);

#endif
