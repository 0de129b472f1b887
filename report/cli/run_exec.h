/*
 * run_exec.h: the database of the image that ended a program which replaced itself with exec
 * (run_exec.c).
 */
#ifndef INFPROF_RUN_EXEC_H
#define INFPROF_RUN_EXEC_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* first is the database of the program `infprof run` started (process pid). Where that image
 * ended by exec, out gets the database of the image of the same process that ended otherwise,
 * found among listed (the library's list of what it wrote) and the STEM-PID* files beside
 * first: 1, with *execs the images before it. 0 when first ended otherwise or none is found. */
int run_exec_last(const char *first, pid_t pid, char (*listed)[PATH_MAX], int nlisted, char *out,
                  size_t n, int *execs);

#endif
