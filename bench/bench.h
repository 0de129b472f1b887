/*
 * bench.h: what the files of infprof-bench share (bench.c dispatches the subcommands; bench_db.c
 * holds the helpers both use).
 */
#ifndef INFPROF_BENCH_H
#define INFPROF_BENCH_H

/* bench_events.c */
int bench_burst(int argc, char **argv);
int bench_hooks(int argc, char **argv);

/* bench_db.c */
/* infprof-bench floor: rows through the store alone (the ceiling of ingest). */
int bench_floor(int argc, char **argv);
/* A fresh path for a benchmark's database (`keep`, emptied, when given). */
void bench_temp_path(char *out, unsigned long size, const char *keep);
/* Remove it (and its folder) unless it is the file --keep named. */
void bench_temp_done(const char *path, const char *keep);
/* A number from the run's metadata (0 when absent). */
double bench_meta_number(const char *path, const char *key);
/* Bytes the table takes in the file (dbstat), or the file's size where dbstat is missing. */
double bench_table_bytes(const char *path, const char *table);

#endif
