/*
 * db.c: opening infprof databases for reading, with one clear line and exit status 2 for every
 * way a file can be wrong (cli.h), and small query helpers that turn any SQLite error into the
 * same kind of line.
 */
#include "cli.h"
#include "db.h"

#include <stdio.h>
#include "../../profiler/runinfo.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *current_path = "";

const char *db_path_of(struct sqlite3 *db)
{
    (void)db;
    return current_path;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Check the file before SQLite sees it: exists, SQLite magic, not cut short. */
static void db_check_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) cli_fail("cannot open %s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) cli_fail("%s is a directory, not an infprof database", path);
    if (st.st_size == 0)
        cli_fail("%s is empty: the profiled program ended before infprof wrote anything (was it"
                 " killed at once?)",
                 path);
    FILE *f = fopen(path, "rb");
    if (!f) cli_fail("cannot open %s: %s", path, strerror(errno));
    unsigned char h[100];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < 100 || memcmp(h, "SQLite format 3", 16) != 0)
        cli_fail("%s is not an infprof database (not an SQLite file)", path);
    uint32_t page = (uint32_t)h[16] << 8 | h[17];
    uint64_t page_size = page == 1 ? 65536 : page;
    uint32_t pages = be32(h + 28);
    /* The header's page count is valid when its "version valid for" matches the change count,
     * and only without a WAL beside it: a checkpoint writes page 1 (the header) before the pages
     * that extend the file, so a run killed or out of disk mid-checkpoint leaves a short file
     * whose committed data SQLite still reads whole from the WAL. */
    char wal[4096];
    struct stat ws;
    snprintf(wal, sizeof wal, "%s-wal", path);
    int has_wal = stat(wal, &ws) == 0 && ws.st_size > 0;
    if (!has_wal && be32(h + 92) == be32(h + 24) && pages &&
        (uint64_t)st.st_size < (uint64_t)pages * page_size)
        cli_fail("%s is truncated (%lld of %llu bytes): the copy is incomplete or the disk was"
                 " full",
                 path, (long long)st.st_size, (unsigned long long)pages * page_size);
}

/* INFPROF_SQL_TRACE=1: each statement the report ran and its time, on stderr (where a report's
 * time goes: docs/performance.md). */
static int db_trace_cb(unsigned t, void *c, void *p, void *x)
{
    (void)t, (void)c;
    char *sql = sqlite3_expanded_sql(p);
    fprintf(stderr, "sql %.1f ms: %.300s\n", (double)*(long long *)x / 1e6, sql ? sql : "?");
    sqlite3_free(sql);
    return 0;
}

struct sqlite3 *db_open(const char *path)
{
    db_check_file(path);
    current_path = path;
    sqlite3 *db = NULL;
    /* A run killed mid-way leaves its last commits in path-wal: reading them needs write access
     * to the -shm index, so open read-write only then. */
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    int flags = stat(wal, &st) == 0 ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    /* One thread reads a connection: no mutex around each call (a tenth of a large report's
     * time went to taking and giving it back, once per column read). */
    flags |= SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK)
        cli_fail("cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_busy_timeout(db, 2000);
    if (getenv("INFPROF_SQL_TRACE")) sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, db_trace_cb, NULL);
    if (!db_has_table(db, "meta"))
        cli_fail("%s is an SQLite database but not an infprof one (no infprof metadata)", path);
    char *format = db_meta_text(db, "format");
    int ours = format && strcmp(format, "infprof") == 0;
    free(format);
    if (!ours) cli_fail("%s is an SQLite database but not an infprof one", path);
    int64_t version = db_int(db, "PRAGMA user_version", 0);
    if (version > INFPROF_SCHEMA_VERSION)
        cli_fail("%s was written by a newer infprof (schema %lld, this one reads up to %d):"
                 " update infprof to read it",
                 path, (long long)version, INFPROF_SCHEMA_VERSION);
    if (version < 1) cli_fail("%s has no infprof schema version; it is not readable", path);
    return db;
}

void db_close(struct sqlite3 *db)
{
    sqlite3_close(db);
}

__attribute__((noreturn)) static void db_fail(sqlite3 *db)
{
    /* The failing connection's own file: several databases may be open (compare, reports over
     * several runs). */
    const char *path = db ? sqlite3_db_filename(db, "main") : NULL;
    db_fail_as(path, sqlite3_errcode(db), sqlite3_errmsg(db));
}

void db_fail_as(const char *path, int rc, const char *msg)
{
    if (!path || !*path) path = current_path;
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_IOERR)
        cli_fail("%s is damaged (%s): the file was cut short or overwritten", path, msg);
    if (!strncmp(msg, "no such table: ", 15))
        cli_fail("%s has no table %s (edited, or cut short): infprof cannot report it; record the"
                 " run again",
                 path, msg + 15);
    cli_fail("reading %s failed: %s", path, msg);
}

struct sqlite3_stmt *db_prepare(struct sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) db_fail(db);
    return st;
}

int db_step(struct sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    db_fail(sqlite3_db_handle(st));
}

int db_has_column(struct sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

int db_has_table(struct sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type IN ('table','view')"
                           " AND name = ?",
                           -1, &st, NULL) != SQLITE_OK)
        db_fail(db);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int found = db_step(st);
    sqlite3_finalize(st);
    return found;
}

int64_t db_int(struct sqlite3 *db, const char *sql, int64_t fallback)
{
    sqlite3_stmt *st = db_prepare(db, sql);
    int64_t v = fallback;
    if (db_step(st) && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

char *db_meta_text(struct sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT value FROM meta WHERE key = ?");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    char *v = NULL;
    if (db_step(st) && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

int db_meta_int(struct sqlite3 *db, const char *key, int64_t *out)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT value FROM meta WHERE key = ?");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int found = 0;
    if (db_step(st) && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
        *out = sqlite3_column_int64(st, 0);
        found = 1;
    }
    sqlite3_finalize(st);
    return found;
}

char *db_text_whole(struct sqlite3_stmt *st, int col)
{
    const unsigned char *p = sqlite3_column_text(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (!p) return strdup("");
    size_t nul = 0;
    for (int i = 0; i < n; i++) nul += p[i] == 0;
    char *out = malloc((size_t)n + nul + 1), *o = out;
    if (!out) cli_fail("out of memory");
    for (int i = 0; i < n; i++) {
        if (p[i]) {
            *o++ = (char)p[i];
        } else {
            *o++ = '\\';
            *o++ = '0';
        }
    }
    *o = 0;
    return out;
}

int db_operators_every_call(struct sqlite3 *db)
{
    if (!db_has_table(db, "torch_operators") ||
        !db_int(db, "SELECT EXISTS (SELECT 1 FROM torch_operators)", 0))
        return 0;
    char *m = db_meta_text(db, "torch_operators_mode");
    int all = !m || strcmp(m, "sampled") != 0;
    free(m);
    return all;
}

size_t db_rows_guess(struct sqlite3 *db, const char *table)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", table);
    int64_t n = db_int(db, sql, 0);
    /* A rowid a program set far past the rows would ask for memory the rows never need. */
    return n > 0 ? (size_t)(n < ((int64_t)1 << 22) ? n : ((int64_t)1 << 22)) : 0;
}

const char *db_operator_calls(struct sqlite3 *db)
{
    int64_t calls;
    if (db_has_table(db, "torch_operator_sums") && db_meta_int(db, "torch_operator_sums", &calls))
        return "(SELECT phase, name_id, iter, calls, self, dur FROM torch_operator_sums)";
    return "(SELECT phase, name_id, iter, 1 AS calls, self, dur FROM torch_operators)";
}
