/*
 * cmd_views.c: `infprof views FILE...`: the views with Nsight Systems' names (schema/views.sql:
 * CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, the ENUM_* tables, META_DATA_EXPORT), added to or refreshed
 * in an infprof database (one written before they existed keeps its data, untouched), and the
 * kernel names they show filled in: demangledName and shortName (the base name, as nsys forms
 * it) beside the mangled name CUPTI gives. `infprof run` does the same after the program exits
 * (views_write), so SQL written for nsys reports runs on its database as is.
 */
#include "commands.h"
#include "../base/cli.h"
#include "../base/db.h"
#include "../base/names.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

extern const char ip_views_sql[]; /* schema/views.sql, embedded at build time */

static void views_usage(FILE *out)
{
    fprintf(out,
            "usage: infprof views FILE [FILE...]\n\n"
            "Add (or refresh) the views named as in an Nsight Systems SQLite export\n"
            "(CUPTI_ACTIVITY_KIND_KERNEL, ..._RUNTIME, ..._MEMCPY, ..._MEMSET, NVTX_EVENTS,\n"
            "StringIds, TARGET_INFO_GPU, ThreadNames, ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND,\n"
            "ENUM_NSYS_EVENT_TYPE, META_DATA_EXPORT) to infprof databases, and fill the kernels'\n"
            "demangledName and shortName. New databases have the views; 'infprof run' fills the\n"
            "names; this is for databases written by LD_PRELOAD alone or by an older infprof.\n"
            "Only the views and the table kernel_names are written; the run's data is not\n"
            "touched (docs/export.md).\n");
}

/* The strings id of value, added when missing (0 on error). */
static int64_t string_id(sqlite3 *db, const char *value)
{
    sqlite3_stmt *st = NULL;
    int64_t id = 0;
    if (sqlite3_prepare_v2(db, "SELECT id FROM strings WHERE value = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, value, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (id) return id;
    if (sqlite3_prepare_v2(db, "INSERT INTO strings(value) VALUES (?)", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, value, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_DONE) id = sqlite3_last_insert_rowid(db);
    sqlite3_finalize(st);
    return id;
}

/* kernel_names for every kernel name that has none yet: *added of them. */
static int fill_names(sqlite3 *db, int *added)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT g.name_id, s.value FROM launch_sigs g JOIN strings s"
                           " ON s.id = g.name_id WHERE g.name_id NOT IN"
                           " (SELECT name_id FROM kernel_names)",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT OR REPLACE INTO kernel_names(name_id, demangled_id, short_id)"
                           " VALUES (?, ?, ?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -1;
    }
    /* Read them all first: the inserts below add strings while the query would still run. */
    size_t n = 0, cap = 0;
    struct name {
        int64_t id;
        char *raw;
    } *v = NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            struct name *w = realloc(v, cap * sizeof *v);
            if (!w) cli_fail("out of memory");
            v = w;
        }
        const char *raw = (const char *)sqlite3_column_text(st, 1);
        v[n].id = sqlite3_column_int64(st, 0);
        v[n].raw = strdup(raw ? raw : "");
        if (!v[n++].raw) cli_fail("out of memory");
    }
    sqlite3_finalize(st);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char base[1024], *full = name_demangled_whole(v[i].raw);
        name_base(v[i].raw, base, sizeof base);
        int64_t d = string_id(db, full), b = string_id(db, base);
        free(full);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, v[i].id);
        sqlite3_bind_int64(ins, 2, d ? d : v[i].id);
        sqlite3_bind_int64(ins, 3, b ? b : v[i].id);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = -1;
        free(v[i].raw);
    }
    free(v);
    sqlite3_finalize(ins);
    *added = (int)n;
    return rc;
}

int views_write(const char *path, int *names, char *err, size_t n)
{
    *names = 0;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        snprintf(err, n, "%s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, ip_views_sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK && db_has_table(db, "launch_sigs") && fill_names(db, names) != 0) {
        rc = SQLITE_ERROR;
        msg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        snprintf(err, n, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

int cmd_views(int argc, char **argv)
{
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
            views_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[first], "--")) {
            first++;
            break;
        }
        cli_fail("unknown option '%s' (try 'infprof views --help')", argv[first]);
    }
    if (first >= argc) cli_fail("no database given (usage: infprof views FILE [FILE...])");
    for (int i = first; i < argc; i++) {       /* every file checked before any is written */
        struct sqlite3 *db = db_open(argv[i]); /* an infprof database, readable: else exit 2 */
        db_close(db);
    }
    for (int i = first; i < argc; i++) {
        char err[512];
        int names;
        if (views_write(argv[i], &names, err, sizeof err) != 0)
            cli_fail("cannot add the views to %s: %s (is it read-only or in use?)", argv[i], err);
        char shown[PATH_MAX];
        snprintf(shown, sizeof shown, "%s", argv[i]);
        cli_escape_into(shown, sizeof shown);
        fprintf(stderr, "infprof: %s: the Nsight Systems views are there, %d kernel name%s added\n",
                shown, names, names == 1 ? "" : "s");
    }
    return 0;
}
