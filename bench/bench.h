/*
 * bench.h: what the files of infprof-bench share (bench.c dispatches the subcommands).
 */
#ifndef INFPROF_BENCH_H
#define INFPROF_BENCH_H

/* bench_events.c */
int bench_burst(int argc, char **argv);
int bench_hooks(int argc, char **argv);

/* bench.c */
double bench_meta_number(const char *path, const char *key);
void bench_temp_path(char *out, unsigned long size, const char *keep);

#endif
