/*
 * log.c: formatting of the library's stderr lines (see log.h). Safe to call from any thread; it
 * never allocates (the line is built on the stack), escapes control characters so that a line
 * stays one line, and writes with a single write(2).
 */
#include "log.h"

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
    /* One line, whatever the message quotes (a path, a setting's value): control characters
     * are escaped, never written raw to the terminal. */
    char out[4 * sizeof line];
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < sizeof out; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '\n';
    ssize_t w = write(STDERR_FILENO, out, o);
    (void)w;
    errno = saved_errno;
}
