/*
 * bench_db.c: the small database helpers the benchmarks share: a fresh output path, one number
 * from a run's metadata, and the bytes a table takes.
 */
#include "bench.h"
#include "profiler/clock.h"
#include "profiler/store.h"

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

/* infprof-bench floor [--records N]: the writer's storage alone, the ceiling of ingest. N kernel
 * rows as on_kernel makes them (7 integers, the iteration, NVTX range and operator NULL), through
 * the real store (its pragmas, WAL, VFS and 64-row batches), a commit every 50 ms as a backlog's
 * drain commits (IP_WRITER_BACKLOG_COMMIT_MS), nothing decoded, attributed or summarised. */
int bench_floor(int argc, char **argv)
{
    long n = 5000000;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--records") && i + 1 < argc)
            n = strtol(argv[++i], NULL, 10);
        else
            return fprintf(stderr, "usage: infprof-bench floor [--records N]\n"), 2;
    }
    if (n <= 0) return fprintf(stderr, "usage: infprof-bench floor [--records N]\n"), 2;
    char path[4096];
    bench_temp_path(path, sizeof path, NULL);
    struct ip_store *s = ip_store_open(path, 0);
    if (!s) return fprintf(stderr, "infprof-bench: cannot open %s\n", path), 1;
    ip_store_exec(s, "CREATE TABLE IF NOT EXISTS kernel_rows (start INTEGER, dur INTEGER,"
                     " sig INTEGER, corr INTEGER, iter INTEGER, nvtx INTEGER, op INTEGER)");
    struct ip_batch *b = ip_batch_open(s, "kernel_rows", 7);
    ip_store_begin(s);
    uint64_t t0 = ip_clock_now();
    int64_t ts = 1000000000;
    uint64_t last = t0;
    for (long k = 0; k < n; k++) {
        int64_t *row = ip_batch_row(b);
        ts += 1500;
        row[0] = ts, row[1] = 1000 + k % 101, row[2] = 1 + k % 64, row[3] = k + 1;
        row[4] = row[5] = row[6] = IP_NULL;
        if ((k & 4095) == 4095 && ip_clock_now() - last >= 50000000ull) {
            ip_store_commit(s);
            ip_store_begin(s);
            last = ip_clock_now();
        }
    }
    ip_store_commit(s);
    double secs = (double)(ip_clock_now() - t0) / 1e9;
    ip_store_close(s);
    printf("rows %ld\n", n);
    printf("seconds %.3f\n", secs);
    printf("rows_per_s %.0f\n", (double)n / secs);
    bench_temp_done(path, NULL);
    return 0;
}
