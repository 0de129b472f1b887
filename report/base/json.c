/*
 * json.c: the streaming JSON writer (json.h), made for `infprof export`. One buffer, flushed
 * with fwrite when full; numbers formatted by hand (snprintf would be the export's main cost at
 * ten million events); strings escaped so that any bytes a program gave us (control characters,
 * invalid UTF-8) make valid JSON. With no FILE the writer only counts: the size estimate runs
 * the very code that writes.
 */
#include "json.h"
#include "cli.h"
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define JSON_BUF (1u << 20)

void json_init(struct json_out *w, FILE *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->cap = JSON_BUF;
    w->buf = malloc(w->cap);
    if (!w->buf) cli_fail("out of memory");
}

void json_flush(struct json_out *w)
{
    if (w->out && w->n && fwrite(w->buf, 1, w->n, w->out) != w->n) {
        int err = errno ? errno : EIO;
        if (w->on_error) w->on_error(err);
        cli_fail("writing the trace failed: %s", strerror(err));
    }
    w->bytes += w->n;
    w->n = 0;
}

void json_free(struct json_out *w)
{
    free(w->buf);
    w->buf = NULL;
}

void json_put_slow(struct json_out *w, const char *s, size_t len)
{
    json_flush(w);
    if (len <= w->cap) {
        memcpy(w->buf, s, len);
        w->n = len;
        return;
    }
    /* Longer than the buffer (a huge NVTX text): straight through. */
    if (w->out && fwrite(s, 1, len, w->out) != len) {
        int err = errno ? errno : EIO;
        if (w->on_error) w->on_error(err);
        cli_fail("writing the trace failed: %s", strerror(err));
    }
    w->bytes += len;
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* Digits of v (v >= 0) at the end of a 20-byte buffer; returns the first digit. */
static char *digits(uint64_t v, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void json_int(struct json_out *w, int64_t v)
{
    char buf[24], *end = buf + sizeof buf;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *p = digits(u, end);
    if (v < 0) *--p = '-';
    json_put(w, p, (size_t)(end - p));
}

void json_us(struct json_out *w, int64_t ns)
{
    char buf[32], *end = buf + sizeof buf;
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(u % 1000);
    char *tail = end;
    if (frac) {
        /* Three decimals without the trailing zeros: 1500 ns -> "1.5". */
        char d[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                     (char)('0' + frac % 10)};
        int keep = d[2] != '0' ? 3 : d[1] != '0' ? 2 : 1;
        for (int i = keep - 1; i >= 0; i--) *--tail = d[i];
        *--tail = '.';
    }
    char *p = digits(u / 1000, tail);
    if (ns < 0) *--p = '-';
    json_put(w, p, (size_t)(end - p));
}

void json_fixed(struct json_out *w, double v, int decimals)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (n <= 0 || n >= (int)sizeof buf || v != v) {
        json_lit(w, "null");
        return;
    }
    json_put(w, buf, (size_t)n);
}

/* ---- strings ------------------------------------------------------------------------------ */

void json_str(struct json_out *w, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + len, *run = p;
    json_lit(w, "\"");
    while (p < end) {
        unsigned char c = *p;
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
            if (c < 0x80) {
                p++;
                continue;
            }
            size_t n = fmt_utf8_len(p, end);
            if (n) {
                p += n;
                continue;
            }
        }
        json_put(w, (const char *)run, (size_t)(p - run));
        if (c == '"') {
            json_lit(w, "\\\"");
        } else if (c == '\\') {
            json_lit(w, "\\\\");
        } else if (c == '\n') {
            json_lit(w, "\\n");
        } else if (c == '\t') {
            json_lit(w, "\\t");
        } else if (c == '\r') {
            json_lit(w, "\\r");
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            json_put(w, e, sizeof e);
        } else {
            json_lit(w, "\\ufffd"); /* a byte that is not UTF-8: the replacement character */
        }
        p++;
        run = p;
    }
    json_put(w, (const char *)run, (size_t)(p - run));
    json_lit(w, "\"");
}

char *json_quote(const char *s, size_t len, size_t *out_len)
{
    /* Worst case: every byte becomes \ufffd (6 bytes), plus the quotes. */
    struct json_out w = {0};
    w.cap = len * 6 + 2;
    w.buf = malloc(w.cap + 1);
    if (!w.buf) cli_fail("out of memory");
    json_str(&w, s, len);
    w.buf[w.n] = 0;
    *out_len = w.n;
    return w.buf;
}
