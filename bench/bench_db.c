/*
 * bench_db.c: the small database helpers the benchmarks share: a fresh output path, one number
 * from a run's metadata, and the bytes a table takes.
 */
#include "bench.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void bench_temp_path(char *out, unsigned long size, const char *keep)
{
    if (keep) {
        snprintf(out, size, "%s", keep);
        unlink(out);
        return;
    }
    char dir[] = "/tmp/infprof-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("infprof-bench: mkdtemp");
        exit(1);
    }
    snprintf(out, size, "%s/bench.db", dir);
}

double bench_meta_number(const char *path, const char *key)
{
    sqlite3 *db;
    double v = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) ==
            SQLITE_OK) {
            sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    return v;
}

double bench_table_bytes(const char *path, const char *table)
{
    sqlite3 *db;
    double bytes = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT sum(pgsize) FROM dbstat WHERE name = ?", -1, &st,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW) bytes = sqlite3_column_double(st, 0);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    if (bytes < 0) {
        struct stat s;
        bytes = stat(path, &s) == 0 ? (double)s.st_size : 0;
    }
    return bytes;
}

void bench_temp_done(const char *path, const char *keep)
{
    if (keep) return;
    char side[4200];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    snprintf(side, sizeof side, "%s", path); /* the folder bench_temp_path made */
    char *slash = strrchr(side, '/');
    if (slash) {
        *slash = 0;
        rmdir(side);
    }
}
