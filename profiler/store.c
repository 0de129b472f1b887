/*
 * store.c: the SQLite side of the writer thread: opening the database with the embedded schema,
 * transactions, prepared multi-row inserts, string interning and metadata.
 *
 * Contract: every function here runs on the writer thread (or on a thread that owns the store
 * exclusively, as the benchmark and the tests do). Nothing here is called from a hook.
 *
 * Invariants, asserted in debug builds:
 *  S1. A batch holds at most IP_BATCH_ROWS rows: a full one is written before the next row.
 *  S2. Rows are counted once: rows_at_begin <= rows at every commit (the rows a failed commit
 *      loses are those of its own transaction).
 */
#include "store.h"
#include "collector.h"
#include "fdguard.h"
#include "store_vfs.h"
#include "log.h"

#include <assert.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char ip_schema_sql[];
extern const char ip_views_sql[]; /* schema/views.sql: nsys-named views, additive */

/* Each collector's tables (its descriptor's fragment), after the core's and before the views. */
static int store_collector_schemas(struct ip_store *s)
{
    for (int i = 0; i < ip_collector_count(); i++) {
        const struct ip_collector *c = ip_collector_at(i);
        if (c && c->schema && ip_store_exec(s, c->schema) != 0) return -1;
    }
    return 0;
}

/* Kept statements: two per batch and the collectors' own. A run of every collector took all 64
 * on 2026-11-29 when a batch was added (the next statement failed, counted as a write error):
 * room for twice what is used. */
#define STORE_MAX_BATCHES 48
#define STORE_MAX_STMTS   160

struct ip_batch {
    struct ip_store *s;
    sqlite3_stmt *multi, *single; /* prepared at their first use */
    char table[64];
    int ncols, n;
    int64_t *vals; /* IP_BATCH_ROWS * ncols */
};

struct intern_slot {
    uint64_t hash;
    int64_t id;
    const char *text; /* owned copy (or the static string for the pointer cache) */
    uint32_t len;
};

struct intern_table {
    struct intern_slot *slots;
    size_t cap, used;
};

struct ip_store {
    sqlite3 *db;
    uint64_t t0;
    int in_txn;
    uint64_t rows, errors, duplicates;
    uint64_t rows_at_begin, rows_lost; /* rows of transactions that could not be committed */
    int error_logged;
    int hurry; /* close without the checkpoint (ip_store_hurry) */
    int lazy_batches; /* batches prepare their statements at their first write */
    struct ip_batch batches[STORE_MAX_BATCHES];
    int nbatches;
    sqlite3_stmt *stmts[STORE_MAX_STMTS];
    int nstmts;
    sqlite3_stmt *st_string, *st_meta;
    int64_t next_string_id;
    struct intern_table by_text, by_ptr;
};

/* A statement in a few words for a message ("CREATE TABLE meta"), never the SQL itself. */
static void sql_gist(const char *sql, char *out, size_t n)
{
    size_t o = 0;
    int words = 0, space = 0;
    for (const char *p = sql; *p && o + 1 < n && words < 3; p++) {
        int ws = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r' || *p == '(' || *p == ';';
        if (ws) {
            space = o > 0;
            continue;
        }
        if (space) {
            if (++words == 3) break;
            out[o++] = ' ';
            space = 0;
        }
        if (o + 1 < n) out[o++] = *p;
    }
    out[o] = 0;
}

static void store_fail(struct ip_store *s, const char *sql)
{
    s->errors++;
    if (!s->error_logged) {
        s->error_logged = 1;
        /* The program took one of our descriptors over: that is the cause, said once there. */
        if (!ip_fdguard_intact()) return;
        char gist[48];
        sql_gist(sql ? sql : "", gist, sizeof gist);
        ip_warn("writing the profile database failed (%s: %s); later failures are only counted",
                gist, sqlite3_errmsg(s->db));
    }
}

int ip_store_exec(struct ip_store *s, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        store_fail(s, sql);
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

sqlite3_stmt *ip_store_prepare(struct ip_store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (s->nstmts >= STORE_MAX_STMTS ||
        sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        store_fail(s, sql);
        return NULL;
    }
    s->stmts[s->nstmts++] = st;
    return st;
}

int ip_store_step(struct ip_store *s, sqlite3_stmt *st)
{
    if (!st) return -1;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        store_fail(s, sqlite3_sql(st));
        return -1;
    }
    s->rows++;
    return 0;
}

/* The database could not be opened or made: one line naming the cause, its descriptors closed
 * (not kept open as ours), and what we created removed, not left empty or unreadable (the
 * name was claimed by us: no companion file existed before, output.c). */
static void store_open_failed(struct ip_store *s, const char *path, const char *what)
{
    int err = s->db ? sqlite3_system_errno(s->db) : ENOMEM;
    if (err == EMFILE || err == ENFILE)
        ip_warn("%s %s: too many open files; profiling off, the program runs on (raise the"
                " limit: ulimit -n)",
                what, path);
    else if (err == ENOSPC || err == EDQUOT || err == EFBIG)
        ip_warn("%s %s: %s; profiling off, the program runs on (free space, or set"
                " INFPROF_OUTPUT elsewhere)",
                what, path, strerror(err));
    else
        ip_warn("%s %s (%s); profiling off, the program runs on (set INFPROF_OUTPUT to a"
                " writable path)",
                what, path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
    ip_fdguard_release(); /* SQLite's closes below must really close */
    sqlite3_close(s->db);
    free(s);
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    char side[4096];
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        struct stat st;
        if (lstat(side, &st) == 0 && S_ISREG(st.st_mode)) unlink(side);
    }
}

struct ip_store *ip_store_open(const char *path, uint64_t t0)
{
    struct ip_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->t0 = t0;
    s->next_string_id = 1;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    ip_fdguard_reset();
    if (sqlite3_open_v2(path, &s->db, flags, ip_store_vfs()) != SQLITE_OK) {
        store_open_failed(s, path, "cannot open the profile database");
        return NULL;
    }
    /* A reader (infprof report on a live run, a test polling) may hold a lock for a moment:
     * wait for it rather than fail, here and at every commit and checkpoint. */
    sqlite3_busy_timeout(s->db, 2000);
    /* WAL with synchronous=NORMAL: a commit is durable against a killed process (the OS holds
     * the pages), which is what `kill -9` needs; fsync is left to checkpoints. */
    /* The file is new and created before the program's main (writer.c): no fsync while the
     * schema goes in (a crash then leaves a new, empty profile, nothing else); the program's
     * start pays for none. */
    static const char pragmas[] = "PRAGMA synchronous=OFF; PRAGMA page_size=8192;"
                                  "PRAGMA journal_mode=WAL; PRAGMA cache_size=-16384;"
                                  "PRAGMA temp_store=MEMORY;";
    s->error_logged = 1; /* one message below says it all */
    if (ip_store_exec(s, pragmas) != 0 || ip_store_exec(s, "BEGIN") != 0 ||
        ip_store_exec(s, ip_schema_sql) != 0 || store_collector_schemas(s) != 0 ||
        ip_store_exec(s, ip_views_sql) != 0 || ip_store_exec(s, "COMMIT") != 0 ||
        ip_store_exec(s, "PRAGMA synchronous=NORMAL") != 0) {
        store_open_failed(s, path, "cannot create the profile database");
        return NULL;
    }
    s->error_logged = 0;
    ip_store_vfs_protect(path); /* the file, its WAL and index: ours */
    s->st_string = ip_store_prepare(s, "INSERT INTO strings(id, value) VALUES (?, ?)");
    s->st_meta = ip_store_prepare(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
    return s;
}

static void intern_free(struct intern_table *t, int owned)
{
    if (owned)
        for (size_t i = 0; i < t->cap; i++) free((char *)t->slots[i].text);
    free(t->slots);
}

void ip_store_close(struct ip_store *s)
{
    if (!s) return;
    ip_store_commit(s);
    for (int i = 0; i < s->nbatches; i++) free(s->batches[i].vals);
    for (int i = 0; i < s->nstmts; i++) sqlite3_finalize(s->stmts[i]);
    /* Our own closes of our own files follow (the checkpoint below closes the WAL): the close
     * hook must let them through. A descriptor taken over stays refused for writes. */
    int intact = ip_fdguard_intact();
    ip_fdguard_release();
    /* Leave one self-contained file behind (no -wal, no -shm), unless the finish is out of time
     * (ip_store_hurry): then the WAL stays beside it, complete, for the next reader to fold. */
    if (intact && s->hurry) sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
    if (intact && !s->hurry) {
        /* Everything is committed: folding the WAL back is tidiness, not data. A reader holding
         * the database (a report on the live run) must not hold the program's exit for seconds:
         * a short wait, then the file stays in WAL mode, whole, with its -wal beside it. Not
         * synced (the commits were not either: a killed process loses nothing, the OS holds the
         * pages; a power cut just after may): its three fdatasyncs were a third of what a
         * forked worker's exit waited for, and a Pool that found its workers still alive killed
         * them (issue 49). */
        sqlite3_busy_timeout(s->db, 100);
        if (sqlite3_exec(s->db,
                         "PRAGMA synchronous=OFF; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA "
                         "journal_mode=DELETE",
                         NULL, NULL, NULL) != SQLITE_OK)
            ip_info("a reader holds the database: it stays in WAL mode, complete (%s)",
                    sqlite3_errmsg(s->db));
    }
    if (sqlite3_close(s->db) != SQLITE_OK)
        ip_warn("closing the database: %s", sqlite3_errmsg(s->db));
    intern_free(&s->by_text, 1);
    intern_free(&s->by_ptr, 0);
    free(s);
}

sqlite3 *ip_store_db(struct ip_store *s)
{
    return s->db;
}

int64_t ip_store_rel(const struct ip_store *s, uint64_t ts)
{
    return (int64_t)(ts - s->t0);
}

void ip_store_begin(struct ip_store *s)
{
    if (s->in_txn) return;
    if (ip_store_exec(s, "BEGIN") == 0) s->in_txn = 1;
    s->rows_at_begin = s->rows;
}

void ip_store_commit(struct ip_store *s)
{
    for (int i = 0; i < s->nbatches; i++) ip_batch_flush(&s->batches[i]);
    if (!s->in_txn) return;
    s->in_txn = 0;
    assert(s->rows_at_begin <= s->rows); /* S2 */
    if (ip_store_exec(s, "COMMIT") != 0) {
        /* A full disk, a file size limit: every row of the transaction is gone. Counted (the
         * report's Lost line), and the transaction ended so that the next one can begin. */
        s->rows_lost += s->rows - s->rows_at_begin;
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    s->rows_at_begin = s->rows;
}

uint64_t ip_store_rows_lost(const struct ip_store *s)
{
    return s->rows_lost;
}

uint64_t ip_store_rows(const struct ip_store *s)
{
    return s->rows;
}

uint64_t ip_store_errors(const struct ip_store *s)
{
    return s->errors;
}

uint64_t ip_store_duplicates(const struct ip_store *s)
{
    return s->duplicates;
}

/* ---- interning ---------------------------------------------------------------------------- */

static uint64_t hash_bytes(const void *p, size_t n)
{
    /* FNV-1a, 64 bit: names are short and this runs once per new pointer or text. */
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h | 1; /* 0 marks an empty slot */
}

static int intern_grow(struct intern_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct intern_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].hash) continue;
        size_t j = t->slots[i].hash & (cap - 1);
        while (slots[j].hash) j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static int64_t store_new_string(struct ip_store *s, const char *text, size_t len)
{
    int64_t id = s->next_string_id++;
    sqlite3_bind_int64(s->st_string, 1, id);
    sqlite3_bind_text(s->st_string, 2, text, (int)len, SQLITE_STATIC);
    ip_store_step(s, s->st_string);
    return id;
}

int64_t ip_store_intern(struct ip_store *s, const char *text, size_t len)
{
    struct intern_table *t = &s->by_text;
    if (t->used * 2 >= t->cap && intern_grow(t) != 0) return 0;
    uint64_t h = hash_bytes(text, len);
    size_t j = h & (t->cap - 1);
    for (; t->slots[j].hash; j = (j + 1) & (t->cap - 1)) {
        struct intern_slot *e = &t->slots[j];
        if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0) return e->id;
    }
    char *copy = malloc(len + 1);
    if (!copy) return 0;
    memcpy(copy, text, len);
    copy[len] = 0;
    int64_t id = store_new_string(s, copy, len);
    t->slots[j] = (struct intern_slot){h, id, copy, (uint32_t)len};
    t->used++;
    return id;
}

int64_t ip_store_intern_static(struct ip_store *s, const char *text)
{
    if (!text) return ip_store_intern(s, "?", 1);
    struct intern_table *t = &s->by_ptr;
    if (t->used * 2 >= t->cap && intern_grow(t) != 0) return 0;
    uintptr_t key = (uintptr_t)text;
    uint64_t h = (key * 0x9e3779b97f4a7c15ull) | 1;
    size_t j = h & (t->cap - 1);
    for (; t->slots[j].hash; j = (j + 1) & (t->cap - 1))
        if (t->slots[j].text == text) return t->slots[j].id;
    int64_t id = ip_store_intern(s, text, strlen(text));
    t->slots[j] = (struct intern_slot){h, id, text, 0};
    t->used++;
    return id;
}

/* ---- metadata ----------------------------------------------------------------------------- */

void ip_store_meta_text(struct ip_store *s, const char *key, const char *value)
{
    sqlite3_bind_text(s->st_meta, 1, key, -1, SQLITE_STATIC);
    if (value) sqlite3_bind_text(s->st_meta, 2, value, -1, SQLITE_STATIC);
    ip_store_step(s, s->st_meta);
}

void ip_store_meta_int(struct ip_store *s, const char *key, int64_t value)
{
    sqlite3_bind_text(s->st_meta, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s->st_meta, 2, value);
    ip_store_step(s, s->st_meta);
}

/* ---- batches ------------------------------------------------------------------------------ */

static sqlite3_stmt *batch_stmt(struct ip_store *s, const char *table, int ncols, int rows)
{
    size_t cap = 64 + strlen(table) + (size_t)rows * ((size_t)ncols * 2 + 4);
    char *sql = malloc(cap);
    if (!sql) return NULL;
    /* OR IGNORE: a duplicate key drops that row, never the 63 others of its batch. */
    size_t n = (size_t)snprintf(sql, cap, "INSERT OR IGNORE INTO %s VALUES ", table);
    for (int r = 0; r < rows; r++) {
        sql[n++] = r ? ',' : ' ';
        sql[n++] = '(';
        for (int c = 0; c < ncols; c++) {
            if (c) sql[n++] = ',';
            sql[n++] = '?';
        }
        sql[n++] = ')';
    }
    sql[n] = 0;
    sqlite3_stmt *st = ip_store_prepare(s, sql);
    free(sql);
    return st;
}

/* A forked child's batches prepare their statements where they first write (a 64-row INSERT of
 * 13 columns is 832 parameters to parse): a worker that writes a few tables prepares only
 * theirs at its exit, not the 50 statements of every collector's tables (most of what a child's
 * exit waited for: issue 49). The first process prepares them all as it opens, before the
 * program's main, where they cost its run nothing. */
void ip_store_lazy_batches(struct ip_store *s)
{
    if (s) s->lazy_batches = 1;
}

struct ip_batch *ip_batch_open(struct ip_store *s, const char *table, int ncols)
{
    if (s->nbatches >= STORE_MAX_BATCHES || ncols > 64 || strlen(table) >= 64) {
        store_fail(s, table);
        return NULL;
    }
    struct ip_batch *b = &s->batches[s->nbatches];
    b->vals = malloc(sizeof(int64_t) * IP_BATCH_ROWS * (size_t)ncols);
    if (!b->vals) {
        store_fail(s, table);
        return NULL;
    }
    b->multi = b->single = NULL;
    snprintf(b->table, sizeof b->table, "%s", table);
    if (!s->lazy_batches && (!(b->multi = batch_stmt(s, table, ncols, IP_BATCH_ROWS)) ||
                             !(b->single = batch_stmt(s, table, ncols, 1)))) {
        free(b->vals);
        b->vals = NULL;
        return NULL;
    }
    b->s = s;
    b->ncols = ncols;
    b->n = 0;
    s->nbatches++;
    return b;
}

static void batch_bind(sqlite3_stmt *st, const int64_t *vals, int count)
{
    for (int i = 0; i < count; i++) {
        if (vals[i] == IP_NULL)
            sqlite3_bind_null(st, i + 1);
        else
            sqlite3_bind_int64(st, i + 1, vals[i]);
    }
}

static void batch_write(struct ip_batch *b, const int64_t *vals, int rows)
{
    sqlite3_stmt **slot = rows == 1 ? &b->single : &b->multi;
    if (!*slot && !(*slot = batch_stmt(b->s, b->table, b->ncols, rows)))
        return; /* counted and said once (store_fail), as a batch that could not be opened */
    sqlite3_stmt *st = *slot;
    batch_bind(st, vals, rows * b->ncols);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_fail(b->s, "insert");
        return;
    }
    /* OR IGNORE kept the batch; rows it ignored (a duplicate key) are counted, not lost
     * silently. */
    int changed = sqlite3_changes(b->s->db);
    b->s->rows += (uint64_t)changed;
    if (changed < rows) b->s->duplicates += (uint64_t)(rows - changed);
}

int64_t *ip_batch_row(struct ip_batch *b)
{
    if (!b) {
        /* A batch that could not be opened: the row goes nowhere (the failure was counted). */
        static int64_t nowhere[64];
        return nowhere;
    }
    if (b->n == IP_BATCH_ROWS) {
        batch_write(b, b->vals, IP_BATCH_ROWS);
        b->n = 0;
    }
    assert(b->n < IP_BATCH_ROWS); /* S1 */
    return b->vals + (size_t)b->n++ * (size_t)b->ncols;
}

void ip_batch_flush(struct ip_batch *b)
{
    if (!b || !b->vals) return;
    if (b->n == IP_BATCH_ROWS) {
        batch_write(b, b->vals, IP_BATCH_ROWS);
    } else {
        for (int r = 0; r < b->n; r++) batch_write(b, b->vals + (size_t)r * (size_t)b->ncols, 1);
    }
    b->n = 0;
}

uint64_t ip_store_pending_bytes(struct ip_store *s)
{
    int cur = 0, high = 0;
    if (!s || sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_USED, &cur, &high, 0) != SQLITE_OK)
        return 0;
    return cur > 0 ? (uint64_t)cur : 0;
}

void ip_store_hurry(struct ip_store *s)
{
    if (s) s->hurry = 1;
}

uint64_t ip_store_uncommitted_bytes(const struct ip_store *s)
{
    /* Rows since the transaction began, at a generous 48 bytes each (a kernel row takes 26). */
    return s ? (s->rows - s->rows_at_begin) * 48u : 0;
}

int ip_store_fold_wal(struct ip_store *s)
{
    if (!s || s->in_txn) return -1;
    /* A reader (a report on the live run) may hold it: a short wait, then it stays as it is. */
    sqlite3_busy_timeout(s->db, 50);
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_busy_timeout(s->db, 2000);
    return rc == SQLITE_OK ? 0 : -1;
}
