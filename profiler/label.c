/*
 * label.c: program strings cut on a character boundary, with a hash of the whole text where cut
 * (label.h).
 */
#include "label.h"
#include "text.h"

#include <stdint.h>
#include <string.h>

size_t ip_utf8_cut(const char *s, size_t len, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t at = 0;
    while (at < len) {
        /* A byte that is not valid UTF-8 (text.c's rule) counts as one character. */
        size_t k = ip_text_utf8_len(p + at, p + len);
        if (!k) k = 1;
        if (at + k > max) break;
        at += k;
    }
    return at;
}

size_t ip_label_cut(char *out, size_t n, const char *s, size_t len)
{
    if (!n) return 0;
    if (len < n) {
        memcpy(out, s, len);
        out[len] = 0;
        return len;
    }
    uint32_t h = 2166136261u; /* FNV-1a of the whole text */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    static const char tail[] = "...~", hex[] = "0123456789abcdef";
    if (n < 16) { /* no room for the hash: a plain cut on a character */
        size_t keep = ip_utf8_cut(s, len, n - 1);
        memcpy(out, s, keep);
        out[keep] = 0;
        return keep;
    }
    size_t room = n - 1 - (sizeof tail - 1) - 6;
    size_t keep = ip_utf8_cut(s, len, room);
    memcpy(out, s, keep);
    memcpy(out + keep, tail, sizeof tail - 1);
    size_t o = keep + sizeof tail - 1;
    for (int d = 5; d >= 0; d--) out[o++] = hex[(h >> (4 * d)) & 0xf];
    out[o] = 0;
    return o;
}

size_t ip_label_wide(char *out, size_t n, const wchar_t *w)
{
    size_t o = 0;
    if (!n) return 0;
    for (; w && *w; w++) {
        uint32_t c = (uint32_t)*w;
        if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) c = 0xfffd;
        unsigned char b[4];
        size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (k == 1) {
            b[0] = (unsigned char)c;
        } else {
            for (size_t j = k - 1; j > 0; j--, c >>= 6) b[j] = (unsigned char)(0x80 | (c & 0x3f));
            b[0] = (unsigned char)((k == 2 ? 0xc0 : k == 3 ? 0xe0 : 0xf0) | c);
        }
        if (o + k > n - 1) break; /* cut on a character */
        memcpy(out + o, b, k);
        o += k;
    }
    out[o] = 0;
    return o;
}
