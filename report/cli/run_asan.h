/*
 * run_asan.h: the AddressSanitizer runtime a program needs first (run_asan.c).
 */
#ifndef INFPROF_RUN_ASAN_H
#define INFPROF_RUN_ASAN_H

#include <stddef.h>

/* The path of the ASan runtime that the program `prog` (a name execvp would search for, or a
 * path) needs, into out: 0; -1 when it needs none or the library is not found. */
int run_asan_runtime(const char *prog, char *out, size_t n);

#endif
