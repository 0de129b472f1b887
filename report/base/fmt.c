/*
 * fmt.c: the escaping and units every rendering shares (table.h): program strings made safe for
 * a terminal (control characters and bytes that are not UTF-8 shown as escapes), nanoseconds
 * and bytes in human units.
 */
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../profiler/label.h"
#include "../../profiler/text.h"

size_t fmt_utf8_len(const unsigned char *p, const unsigned char *end)
{
    return *p < 0x80 ? 0 : ip_text_utf8_len(p, end); /* as it always was: multi-byte only */
}

size_t fmt_utf8_cut(const char *s, size_t max)
{
    return ip_utf8_cut(s, strlen(s), max);
}

void fmt_label_cut(char *out, size_t n, const char *s, size_t max)
{
    ip_label_cut(out, n < max + 1 ? n : max + 1, s, strlen(s));
}

/* One rule for every output and the library's own lines (profiler/text.c). */
void fmt_escape(char *out, size_t n, const char *s)
{
    ip_text_escape(out, n, s ? s : "", s ? strlen(s) : 0);
}

void fmt_ns(char *out, size_t n, double ns)
{
    double a = fabs(ns);
    if (a < 1e3)
        snprintf(out, n, "%.0fns", ns);
    else if (a < 1e6)
        snprintf(out, n, "%.2fus", ns / 1e3);
    else if (a < 1e9)
        snprintf(out, n, "%.2fms", ns / 1e6);
    else
        snprintf(out, n, "%.3fs", ns / 1e9);
}

void fmt_bytes(char *out, size_t n, double b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double a = fabs(b);
    int u = 0;
    while (a >= 1024 && u < 4) a /= 1024, b /= 1024, u++;
    if (u == 0)
        snprintf(out, n, "%.0fB", b);
    else
        snprintf(out, n, "%.2f%s", b, units[u]);
}
