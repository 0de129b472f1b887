/*
 * db_scan.c: a table read by several threads at once (db.h). A long run's report spends most of
 * its time stepping the rows of three tables (the allocator's reports, the cuDNN calls, the
 * kernels: 200-400 ns a row, SQLite's decoding), and a run ten times as long has ten times the
 * rows. Each thread reads one range of rowids through its own connection into its place in one
 * array; the ranges are joined in rowid order, so the result is the one a single statement
 * gives. While they read, the report's own connection holds a read transaction (no commit can
 * come between two ranges), and each thread checks that its connection sees the same database
 * (the meta table and the page count: a file renamed over the path is not read). A range a thread
 * cannot read (no connection, no memory, the file locked or another) is read on the report's
 * own connection. A live run's file (a -wal beside it), a view and a table without rowids are
 * read by this thread alone, in one piece.
 */
#include "cli.h"
#include "db.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCAN_MAX_THREADS 8
#define SCAN_MIN_ROWIDS  65536 /* fewer: one thread (a thread's start costs more than it saves) */
#define SCAN_FIRST_CAP   65536
/* More rowids than this: each thread grows an array of its own, joined after (a copy). */
#define SCAN_MAX_ROWIDS (UINT64_C(1) << 28)

#define SCAN_RANGE "rowid BETWEEN ?1 AND ?2" /* how every scan's statement ends */
#define SCAN_STACK (512u << 10)              /* a reader's stack: SQLite's stepping needs little */
/* The database as a connection sees it: the run's meta and the file's pages. */
#define SCAN_SAME                                                                                  \
    "SELECT (SELECT group_concat(key || '=' || quote(value), ',') FROM meta) ||"                   \
    " '|' || (SELECT page_count FROM pragma_page_count())"

struct scan_job {
    const char *sql, *path;
    const char *same; /* SCAN_SAME on the report's connection */
    size_t size;
    db_scan_row row;
    void *ctx;
};

struct scan_part {
    const struct scan_job *job;
    int64_t lo, hi; /* rowids, both ends in */
    char *v;
    size_t n, cap;
    int rc; /* SQLITE_OK, or the error that stopped it (msg) */
    char msg[512];
    int fixed;    /* v is its place in the scan's one array: full at cap */
    int unopened; /* its own connection could not be opened */
    pthread_t thread;
    int started;
};

/* Under an address-space limit (ulimit -v) the readers share the report's malloc arena: each
 * thread's own arena reserves 64 MB of address space that the report cannot use once the thread
 * is gone, so that a limit the report fits in with one thread could fail it after the reading
 * ("out of memory" at 120 MB of a 16x copy of the H100 fixture on one machine, where 100 MB and
 * 200 MB passed). Once, before the first threads start. */
static void scan_share_arena(void)
{
#ifdef M_ARENA_MAX
    static int done;
    struct rlimit as;
    if (done) return;
    done = 1;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) mallopt(M_ARENA_MAX, 1);
#endif
}

/* The threads a report reads with: INFPROF_REPORT_THREADS (digits only), else the CPUs it may
 * run on, at most SCAN_MAX_THREADS. */
int db_scan_threads(void)
{
    static int threads;
    if (threads) return threads;
    const char *e = getenv("INFPROF_REPORT_THREADS");
    if (e && *e) {
        long v = 0;
        const char *c = e;
        while (*c >= '0' && *c <= '9' && v <= 64) v = v * 10 + (*c++ - '0');
        if (*c || v < 1 || v > 64)
            cli_fail("INFPROF_REPORT_THREADS must be a number of threads from 1 to 64 (got '%s')",
                     e);
        return threads = (int)v;
    }
    int cpus = 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    else if (sysconf(_SC_NPROCESSORS_ONLN) > 0)
        cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return threads = cpus < 1 ? 1 : cpus > SCAN_MAX_THREADS ? SCAN_MAX_THREADS : cpus;
}

/* What SCAN_SAME gives on db (malloc'ed), or NULL. */
static char *scan_same(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, SCAN_SAME, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

static void part_error(struct scan_part *p, int rc, const char *msg)
{
    p->rc = rc;
    snprintf(p->msg, sizeof p->msg, "%s", msg ? msg : "?");
}

/* The part's rows through db, into its own array. */
static void part_read(struct scan_part *p, sqlite3 *db)
{
    const struct scan_job *j = p->job;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, j->sql, -1, &st, NULL) != SQLITE_OK) {
        part_error(p, sqlite3_errcode(db), sqlite3_errmsg(db));
        return;
    }
    sqlite3_bind_int64(st, 1, p->lo);
    sqlite3_bind_int64(st, 2, p->hi);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (p->n == p->cap) {
            if (p->fixed) { /* more rows than rowids (unique: never): not into the next range */
                part_error(p, SQLITE_CORRUPT, "rows beyond their rowids' range");
                break;
            }
            size_t cap = p->cap ? p->cap * 2 : SCAN_FIRST_CAP;
            char *v = realloc(p->v, cap * j->size);
            if (!v) {
                part_error(p, SQLITE_NOMEM, "out of memory");
                break;
            }
            p->v = v, p->cap = cap;
        }
        j->row(st, p->v + p->n * j->size, j->ctx);
        p->n++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        part_error(p, sqlite3_errcode(db), sqlite3_errmsg(db));
    sqlite3_finalize(st);
}

/* A part a reader could not read, given back to the report's connection: its rows dropped. */
static void part_retry(struct scan_part *p)
{
    p->unopened = 1;
    p->n = 0;
    p->rc = SQLITE_OK;
    if (!p->fixed) free(p->v), p->v = NULL, p->cap = 0;
}

static void *part_thread(void *arg)
{
    struct scan_part *p = arg;
    sqlite3 *db = NULL;
    char *same = NULL;
    /* Its own read transaction, begun by reading what tells the database apart. */
    if (sqlite3_open_v2(p->job->path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK || !(same = scan_same(db)) ||
        strcmp(same, p->job->same) != 0) {
        p->unopened = 1; /* no descriptor or memory left, or another file: read by the report */
    } else {
        part_read(p, db);
        /* Out of memory, or locked (a writer waiting for the report's own lock): read again by
         * the report's connection, which holds what it needs. */
        int rc = p->rc & 0xff;
        if (rc == SQLITE_NOMEM || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) part_retry(p);
    }
    free(same);
    sqlite3_close(db);
    return NULL;
}

/* A table of rowids (not a view, not WITHOUT ROWID): what a range of rowids can cut. */
static int rowid_table(sqlite3 *db, const char *table)
{
    sqlite3_stmt *q = db_prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND"
                                     " name = ? AND upper(sql) NOT LIKE '%WITHOUT%ROWID%'");
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    int yes = db_step(q);
    sqlite3_finalize(q);
    return yes;
}

/* How many threads read this table: 1 for a live file, a small table or an SQLite built
 * without threads; several, each a range of [*lo, *hi], the rowids it holds (read inside the
 * report's read transaction, as the ranges will be). */
static int scan_parts(sqlite3 *db, const char *path, const char *table, int64_t *lo, int64_t *hi)
{
    int threads = db_scan_threads();
    if (threads < 2 || !sqlite3_threadsafe() || !path || !*path) return 1;
    char wal[4096];
    struct stat st;
    if ((size_t)snprintf(wal, sizeof wal, "%s-wal", path) >= sizeof wal || stat(wal, &st) == 0)
        return 1;
    /* Each end its own statement: SQLite reads one end of the b-tree for a lone min() or max(),
     * every row for the two together. */
    for (int end = 0; end < 2; end++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT %s(rowid) FROM \"%s\"", end ? "max" : "min", table);
        sqlite3_stmt *q = db_prepare(db, sql);
        int rows = db_step(q) && sqlite3_column_type(q, 0) != SQLITE_NULL;
        if (rows) *(end ? hi : lo) = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        if (!rows) return 1;
    }
    /* Rowids spread far apart (a program's own, or near 2^63) are read in one piece. */
    uint64_t span = (uint64_t)*hi - (uint64_t)*lo;
    if (span < SCAN_MIN_ROWIDS || span > (UINT64_C(1) << 40)) return 1;
    return threads;
}

/* The statement without its range, for a table read in one piece (a view has no rowids). */
static char *whole_sql(const char *sql)
{
    size_t n = strlen(sql) - strlen(SCAN_RANGE);
    char *w = malloc(n + 2);
    if (!w) cli_fail("out of memory");
    memcpy(w, sql, n);
    memcpy(w + n, "1", 2);
    return w;
}

void *db_scan(sqlite3 *db, const char *table, const char *sql, size_t size, db_scan_row row,
              void *ctx, size_t *n)
{
    *n = 0;
    size_t len = strlen(sql);
    if (len < strlen(SCAN_RANGE) || strcmp(sql + len - strlen(SCAN_RANGE), SCAN_RANGE))
        cli_fail("internal error: a scan of %s does not end with " SCAN_RANGE, table);
    const char *path = sqlite3_db_filename(db, "main");
    char *whole = rowid_table(db, table) ? NULL : whole_sql(sql);
    struct scan_job job = {whole ? whole : sql, path, NULL, size, row, ctx};
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    /* Several threads: the report's connection in a read transaction first (unless one is open
     * already), which no writer can commit past while it lasts. */
    int began = 0, np = 1;
    if (!whole && db_scan_threads() > 1) {
        began = sqlite3_get_autocommit(db) && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == 0;
        job.same = scan_same(db);
        if (job.same) np = scan_parts(db, path, table, &lo, &hi);
        if (np == 1) lo = INT64_MIN, hi = INT64_MAX;
    }
    struct scan_part parts[64];
    if (np > (int)(sizeof parts / sizeof parts[0])) np = (int)(sizeof parts / sizeof parts[0]);
    uint64_t span = (uint64_t)hi - (uint64_t)lo, step = span / (uint64_t)np;
    for (int i = 0; i < np; i++) {
        parts[i] = (struct scan_part){.job = &job};
        parts[i].lo = (int64_t)((uint64_t)lo + step * (uint64_t)i);
        parts[i].hi = i == np - 1 ? hi : (int64_t)((uint64_t)lo + step * (uint64_t)(i + 1) - 1);
    }
    /* Several parts: one array with room for every rowid, each part writing from its first
     * rowid's place (a range holds at most as many rows as rowids), so that rows are neither
     * copied as an array grows nor when the parts are joined: pages no row reaches are never
     * touched. One part: sized from the table's largest rowid and grown as read. */
    char *v = NULL;
    if (np > 1 && span < SCAN_MAX_ROWIDS && (v = malloc((span + 1) * size))) {
        for (int i = 0; i < np; i++) {
            parts[i].v = v + (uint64_t)(parts[i].lo - lo) * size;
            parts[i].cap = (size_t)((uint64_t)parts[i].hi - (uint64_t)parts[i].lo + 1);
            parts[i].fixed = 1;
        }
    } else if (np == 1) {
        parts[0].cap = db_rows_guess(db, table);
        if (parts[0].cap && !(parts[0].v = malloc(parts[0].cap * size))) cli_fail("out of memory");
    } /* else each part grows its own array, joined below */
    /* The first range on this thread and its connection, the others each on a thread of its
     * own (one that cannot start, or cannot read its range, is read here after). */
    pthread_attr_t attr;
    int attr_ok = np > 1 && pthread_attr_init(&attr) == 0;
    if (attr_ok) pthread_attr_setstacksize(&attr, SCAN_STACK);
    if (np > 1) scan_share_arena();
    for (int i = 1; i < np; i++)
        parts[i].started =
            pthread_create(&parts[i].thread, attr_ok ? &attr : NULL, part_thread, &parts[i]) == 0;
    if (attr_ok) pthread_attr_destroy(&attr);
    part_read(&parts[0], db);
    for (int i = 1; i < np; i++) {
        if (parts[i].started)
            pthread_join(parts[i].thread, NULL);
        else
            part_retry(&parts[i]);
        if (parts[i].unopened) part_read(&parts[i], db);
    }
    if (began) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    free((void *)job.same);
    free(whole);
    for (int i = 0; i < np; i++) {
        if (parts[i].rc == SQLITE_OK) continue;
        if (parts[i].rc == SQLITE_NOMEM) cli_fail("out of memory");
        db_fail_as(path, parts[i].rc, parts[i].msg);
    }
    size_t total = 0;
    for (int i = 0; i < np; i++) total += parts[i].n;
    if (!parts[0].fixed) {
        /* Parts of their own arrays: the first grown to hold them all. */
        v = parts[0].v;
        if (total > parts[0].cap && !(v = realloc(v, total * size))) cli_fail("out of memory");
        size_t at = parts[0].n;
        for (int i = 1; i < np; i++) {
            if (parts[i].n) memcpy(v + at * size, parts[i].v, parts[i].n * size);
            at += parts[i].n;
            free(parts[i].v);
        }
    } else {
        /* One array: the parts' rows brought together (nothing moves where every rowid has its
         * row), and what sparse rowids left unused given back. */
        size_t at = 0;
        for (int i = 0; i < np; i++) {
            if (parts[i].n && v + at * size != parts[i].v)
                memmove(v + at * size, parts[i].v, parts[i].n * size);
            at += parts[i].n;
        }
        if (total && total < span + 1) {
            char *w = realloc(v, total * size);
            if (w) v = w;
        }
    }
    if (!total) {
        free(v);
        return NULL;
    }
    *n = total;
    return v;
}
