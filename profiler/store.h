/*
 * store.h: the writer thread's database access. Only the writer thread calls these: it owns the
 * one SQLite connection. Collectors use them from their writer-side callbacks.
 */
#ifndef INFPROF_STORE_H
#define INFPROF_STORE_H

#include <stddef.h>
#include <stdint.h>

struct ip_store;
struct sqlite3;

#define IP_NULL INT64_MIN /* a batch value stored as SQL NULL */

/* Open (creating the schema) the database at `path`, an empty file we just created. t0 is the
 * run's clock origin. NULL on failure (logged). */
struct ip_store *ip_store_open(const char *path, uint64_t t0);
/* Commit, checkpoint, leave a single file (journal_mode DELETE) and close. */
void ip_store_close(struct ip_store *s);
/* The close that follows skips the checkpoint (the finish is out of time): the -wal stays. */
void ip_store_hurry(struct ip_store *s);
/* Batches opened from now on prepare their statements at their first write (a forked child's). */
void ip_store_lazy_batches(struct ip_store *s);
struct sqlite3 *ip_store_db(struct ip_store *s);

/* Relative time of a clock reading. */
int64_t ip_store_rel(const struct ip_store *s, uint64_t ts);

/* Transactions: the writer keeps one open and commits at least every second. */
void ip_store_begin(struct ip_store *s);
void ip_store_commit(struct ip_store *s);
/* What the open transaction will add to the files when it commits, about. */
uint64_t ip_store_uncommitted_bytes(const struct ip_store *s);
/* Outside a transaction: fold the WAL into the database and empty its file (under a file-size
 * limit the WAL's file counts too). 0 done. */
int ip_store_fold_wal(struct ip_store *s);

/* Run a statement without results; failures are counted and logged once. */
int ip_store_exec(struct ip_store *s, const char *sql);
/* Prepare a statement kept for the connection's life (finalised by ip_store_close). */
struct sqlite3_stmt *ip_store_prepare(struct ip_store *s, const char *sql);
/* Step and reset a prepared statement; failures counted. */
int ip_store_step(struct ip_store *s, struct sqlite3_stmt *st);

/* Strings: the id of `text` in table strings, inserted on first sight. */
int64_t ip_store_intern(struct ip_store *s, const char *text, size_t len);
/* The same, cached by the address of a string that never changes (CUPTI kernel names). */
int64_t ip_store_intern_static(struct ip_store *s, const char *text);

/* Metadata (table meta). */
void ip_store_meta_text(struct ip_store *s, const char *key, const char *value);
void ip_store_meta_int(struct ip_store *s, const char *key, int64_t value);

/* Batched appends: rows gathered and written with one multi-row INSERT per IP_BATCH_ROWS. */
#define IP_BATCH_ROWS 64
struct ip_batch;
/* NULL when it cannot be opened (counted as a write error); ip_batch_row(NULL) then gives a row
 * that goes nowhere, so callers need not check. At most 64 columns. */
struct ip_batch *ip_batch_open(struct ip_store *s, const char *table, int ncols);
/* Room for one row of ncols values (IP_NULL for NULL); written when the batch fills. */
int64_t *ip_batch_row(struct ip_batch *b);
/* Write the rows gathered so far (ip_store_commit flushes every batch first). */
void ip_batch_flush(struct ip_batch *b);

/* What the next commit may write at most: the connection's page cache, in bytes. */
uint64_t ip_store_pending_bytes(struct ip_store *s);

/* Counters of the store itself. */
uint64_t ip_store_rows(const struct ip_store *s);
/* Rows of transactions whose commit failed (not in the database). */
uint64_t ip_store_rows_lost(const struct ip_store *s);
uint64_t ip_store_errors(const struct ip_store *s);
uint64_t ip_store_duplicates(const struct ip_store *s); /* rows ignored for a duplicate key */

#endif
