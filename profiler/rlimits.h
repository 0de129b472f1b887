/*
 * rlimits.h: the program's resource limits and disk come first. Under a tight RLIMIT_NOFILE,
 * RLIMIT_NPROC (unprivileged), RLIMIT_AS or RLIMIT_FSIZE, or with little free space where the
 * database would go, profiling stays off with one line: our descriptors, thread, buffers and file
 * would otherwise be taken out of the program's budget. While it runs, the writer stops recording
 * (counted, shown) when the disk falls below INFPROF_DISK_RESERVE_MB, or the database comes near
 * the file-size limit.
 */
#ifndef INFPROF_RLIMITS_H
#define INFPROF_RLIMITS_H

#include <stddef.h>

#define IP_LIMIT_MIN_NOFILE 256          /* our descriptors sit in the top 32 of these */
#define IP_LIMIT_MIN_NPROC  1024         /* unprivileged; our thread counts against it */
#define IP_LIMIT_MIN_AS     (4ull << 30) /* rings, the writer's arena and stack: ~1/16 of it */
#define IP_LIMIT_MIN_FSIZE                                                                         \
    (1ull << 20) /* the schema and a first batch; near it, recording                               \
                    stops and what follows is counted as dropped */

/* 0 when profiling may start; else -1 with the one-line reason in why. output_dir: the folder
 * the database goes to (its free space), or NULL. */
int ip_limits_check(const char *output_dir, char *why, size_t n);
/* The disk of `path` holds less than the reserve and `pending` bytes about to be written. */
int ip_limits_disk_low(const char *path, unsigned long long pending);
/* Under a file-size limit (ulimit -f), the database and its WAL together, with `pending` bytes
 * about to be written, come within a reserve of it (an eighth of the limit, at least
 * IP_LIMIT_FSIZE_RESERVE_MIN, at most _MAX): past it a commit fails, and the run's end (its
 * counters, the finished flag, the summaries) must still fit. */
int ip_limits_file_full(const char *path, unsigned long long pending);
#define IP_LIMIT_FSIZE_RESERVE_MIN (256ull << 10)
#define IP_LIMIT_FSIZE_RESERVE_MAX (64ull << 20)

#endif
