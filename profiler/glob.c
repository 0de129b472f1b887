/*
 * glob.c: `*` and `?` matching (glob.h), iterative, with one backtracking point.
 */
#include "glob.h"

#include <stddef.h>

int ip_glob_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '?' || *p == *s) {
            p++, s++;
        } else if (*p == '*') {
            star = p++;
            resume = s;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*') p++;
    return *p == 0;
}
