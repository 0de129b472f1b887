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

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), or 0. */
size_t fmt_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t avail = (size_t)(end - p);
    unsigned char c = p[0];
    if (c >= 0xc2 && c <= 0xdf) return avail >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if (avail < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
        if (c == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
        if (c == 0xed && p[1] > 0x9f) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (avail < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if (c == 0xf0 && p[1] < 0x90) return 0; /* overlong */
        if (c == 0xf4 && p[1] > 0x8f) return 0; /* past U+10FFFF */
        return 4;
    }
    return 0;
}

size_t fmt_utf8_cut(const char *s, size_t max)
{
    return ip_utf8_cut(s, strlen(s), max);
}

void fmt_label_cut(char *out, size_t n, const char *s, size_t max)
{
    ip_label_cut(out, n < max + 1 ? n : max + 1, s, strlen(s));
}

/* Characters a terminal or an editor does not show but obeys: the bidirectional controls
 * (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: "Trojan Source"), zero-width ones
 * (U+200B-U+200D, U+2060-U+2064, U+FEFF) and the line and paragraph separators
 * (U+2028-U+2029). */
static int fmt_invisible(unsigned cp)
{
    return cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

static unsigned fmt_code_point(const unsigned char *p, size_t len)
{
    if (len == 2) return (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    if (len == 3)
        return (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    return 0;
}

void fmt_escape(char *out, size_t n, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""),
                        *end = p + strlen((const char *)p);
    size_t o = 0;
    while (p < end && o + 7 < n) {
        size_t len = *p < 0x80 ? 1 : fmt_utf8_len(p, end);
        if (*p < 0x20 || *p == 0x7f || len == 0) {
            /* C0 controls, DEL, and bytes that are not UTF-8. */
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p++);
        } else if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
            /* C1 controls (U+0080..U+009F): a terminal reads U+009B as CSI. */
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", p[1]);
            p += 2;
        } else if ((len == 2 || len == 3) && fmt_invisible(fmt_code_point(p, len))) {
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", fmt_code_point(p, len));
            p += len;
        } else {
            if (o + len + 1 > n) break;
            memcpy(out + o, p, len);
            o += len;
            p += len;
        }
    }
    out[o] = 0;
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
