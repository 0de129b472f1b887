/*
 * run_list.h: the file in which a profiled program names the databases it wrote, for `infprof
 * run` to print (run_list.c).
 */
#ifndef INFPROF_RUN_LIST_H
#define INFPROF_RUN_LIST_H

#include <limits.h>
#include <stddef.h>

/* A new, empty list in $TMPDIR (else /tmp), its path into out and an open descriptor that holds
 * it in use (close it after unlinking the file); lists left by runs that were killed are removed
 * first. -1 and out empty when none could be made. */
int run_list_create(char *out, size_t n);

/* The databases the list names, in order: the first `max` kept in names, every one counted in
 * *total (each process announces its own once). */
int run_listed(const char *list, char names[][PATH_MAX], int max, int *total);

#endif
