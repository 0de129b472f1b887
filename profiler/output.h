/*
 * output.h: where the database goes. The rules (docs/configuration.md):
 *   - INFPROF_OUTPUT (or -o) names it; %p pid, %h host, %% percent are expanded;
 *   - unset, it is infprof.db in the working directory, then infprof-2.db, infprof-3.db, ...;
 *   - an existing file is never overwritten, nor one beside it that SQLite would take for a
 *     companion (NAME-wal, NAME-shm, NAME-journal): the root process warns and takes a fresh
 *     name;
 *   - a directory gets DIR/infprof.db (or the next free name) inside it; /dev/null is
 *     profiling off;
 *   - descendants (executed programs, forked children) write NAME-PID.db unless the pattern
 *     already holds %p.
 * The file is created with O_EXCL, so two processes never share one.
 */
#ifndef INFPROF_OUTPUT_H
#define INFPROF_OUTPUT_H

#include <stddef.h>

/* The longest absolute database path we claim: SQLite's unix VFS opens paths shorter than 512
 * bytes (its mxPathname), "-journal" after ours included, and a fresh name adds up to 6. */
#define IP_OUTPUT_PATH_LONGEST (511 - 8 - 6)

/* Expand %p, %h and %%. Returns 0, or -1 when the result does not fit. */
int ip_output_expand(const char *pattern, int pid, char *out, size_t n);
/* Claim the output file for this process (role: enum ip_role). Writes the absolute path.
 * Returns 0, or -1 after a warning naming the path and the fix. */
int ip_output_claim(const char *pattern, int role, char *path, size_t n);
/* The next free name for `path`: stem-2.ext, stem-3.ext, ... Returns 0 or -1. */
int ip_output_fresh_name(const char *path, char *out, size_t n);
/* Tell `infprof run` (INFPROF_RUN_LIST) that the database at this absolute path was created. */
void ip_output_announce(const char *path);

#endif
