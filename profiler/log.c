/*
 * log.c: formatting of the library's stderr lines (see log.h). Safe to call from any thread; it
 * never allocates (the line is built on the stack), escapes what a terminal would obey (text.h)
 * so that a line stays one line, and writes with a single write(2).
 */
#include "log.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int log_level = IP_LOG_WARN;

void ip_log_set_level(int level)
{
    log_level = level;
}

int ip_log_level(void)
{
    return log_level;
}

void ip_log(int level, const char *fmt, ...)
{
    if (level > log_level) return;
    int saved_errno = errno;
    char line[1024];
    int n = snprintf(line, sizeof line, "infprof: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    /* One line, whatever the message quotes (a path, a setting's value), escaped as the CLI
     * escapes (profiler/text.c): C0 and C1 controls, bytes that are not UTF-8, the bidirectional
     * and other hidden characters never reach the terminal raw. */
    char out[4 * sizeof line];
    size_t o = ip_text_escape(out, sizeof out - 1, line, len);
    out[o++] = '\n';
    ssize_t w = write(STDERR_FILENO, out, o);
    (void)w;
    errno = saved_errno;
}
