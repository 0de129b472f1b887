/*
 * glob.h: the one pattern language of infprof's options (INFPROF_ITERATION_RANGE, report --nvtx):
 * `*` any run of characters, `?` one character, everything else itself.
 */
#ifndef INFPROF_GLOB_H
#define INFPROF_GLOB_H

int ip_glob_match(const char *pattern, const char *text);

#endif
