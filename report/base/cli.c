/*
 * cli.c: the one way the `infprof` command fails on bad input (cli.h), and where its binary is.
 */
#include "cli.h"
#include "table.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_fail(const char *fmt, ...)
{
    fflush(stdout);
    va_list ap;
    va_start(ap, fmt);
    char msg[2048], line[8192];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, whatever the message quotes (a file name with a newline in it). */
    fmt_escape(line, sizeof line, msg);
    fprintf(stderr, "infprof: %s\n", line);
    exit(CLI_EXIT_USAGE);
}

const char *cli_self_dir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        dir[n > 0 ? n : 0] = 0;
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
    }
    return dir;
}

void cli_escape_into(char *buf, size_t n)
{
    char *tmp = malloc(n * 4 + 8);
    if (!tmp) return;
    fmt_escape(tmp, n * 4 + 8, buf);
    snprintf(buf, n, "%s", tmp);
    free(tmp);
}
