/*
 * text.c: program strings made safe for a person to read (text.h).
 */
#include "text.h"

#include <stdio.h>
#include <string.h>

size_t ip_text_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t avail = (size_t)(end - p);
    unsigned char c = p[0];
    if (c < 0x80) return 1;
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

static unsigned code_point(const unsigned char *p, size_t len)
{
    if (len == 1) return p[0];
    if (len == 2) return (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    if (len == 3)
        return (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    return (unsigned)(p[0] & 0x07) << 18 | (unsigned)(p[1] & 0x3f) << 12 |
           (unsigned)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
}

/* Unicode 15's format characters (category Cf), as ranges. */
static const unsigned format_chars[][2] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
    {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},
    {0x200b, 0x200f},   {0x202a, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
    {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
    {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f},
};

/* Combining marks a name may not start with (the common blocks). */
static int combining(unsigned cp)
{
    return (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x1ab0 && cp <= 0x1aff) ||
           (cp >= 0x1dc0 && cp <= 0x1dff) || (cp >= 0x20d0 && cp <= 0x20ff) ||
           (cp >= 0xfe20 && cp <= 0xfe2f);
}

int ip_text_hidden(unsigned cp, int first)
{
    for (size_t i = 0; i < sizeof format_chars / sizeof format_chars[0]; i++)
        if (cp >= format_chars[i][0] && cp <= format_chars[i][1]) return 1;
    return cp == 0x2028 || cp == 0x2029 || cp == 0x034f || /* separators, CGJ */
           (cp >= 0xfe00 && cp <= 0xfe0f) ||               /* variation selectors */
           (cp >= 0xe0100 && cp <= 0xe01ef) ||             /* and their supplement */
           cp == 0x115f || cp == 0x1160 || cp == 0x3164 || cp == 0xffa0 || /* Hangul fillers */
           (first && combining(cp));
}

size_t ip_text_escape(char *out, size_t n, const char *s, size_t len)
{
    if (!n) return 0;
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *end = p + (s ? len : 0);
    size_t o = 0;
    int first = 1;
    while (p < end) {
        size_t k = ip_text_utf8_len(p, end);
        char esc[16];
        size_t e = 0;
        unsigned cp = k ? code_point(p, k) : 0;
        if (!k || cp < 0x20 || cp == 0x7f)
            e = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *p), k = 1; /* C0, DEL, not UTF-8 */
        else if ((cp >= 0x80 && cp < 0xa0) || ip_text_hidden(cp, first))
            e = (size_t)snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
        if (o + (e ? e : k) + 1 > n) break;
        if (e)
            memcpy(out + o, esc, e), o += e;
        else
            memcpy(out + o, p, k), o += k;
        p += k;
        first = 0;
    }
    out[o] = 0;
    return o;
}
