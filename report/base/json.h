/*
 * json.h: a streaming JSON writer (json.c) for documents too large to hold (the trace export),
 * and JSON string quoting for everything that writes JSON.
 */
#ifndef INFPROF_JSON_H
#define INFPROF_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct json_out {
    FILE *out; /* NULL: count only (the size estimate) */
    char *buf;
    size_t n, cap;
    uint64_t bytes;            /* written (or counted) so far, buffer included */
    void (*on_error)(int err); /* a write failed (errno); must not return */
};

void json_init(struct json_out *w, FILE *out);
void json_flush(struct json_out *w);
void json_free(struct json_out *w);
void json_put_slow(struct json_out *w, const char *s, size_t len);

static inline void json_put(struct json_out *w, const char *s, size_t len)
{
    if (w->n + len > w->cap) {
        json_put_slow(w, s, len);
        return;
    }
    memcpy(w->buf + w->n, s, len);
    w->n += len;
}

/* A string literal, copied as is (our own keys and punctuation). */
#define json_lit(w, s) json_put((w), (s), sizeof(s) - 1)

void json_int(struct json_out *w, int64_t v);
/* Nanoseconds as microseconds with up to three decimals: exact, no floating point. */
void json_us(struct json_out *w, int64_t ns);
/* A JSON string: quoted and escaped; control characters as \u00XX, bytes that are not valid
 * UTF-8 as U+FFFD, so any program string gives valid JSON. */
void json_str(struct json_out *w, const char *s, size_t len);
/* The same into a new malloc'ed string (for names written many times); its length in *len. */
char *json_quote(const char *s, size_t len, size_t *out_len);
/* A number with `decimals` digits after the point (rates). */
void json_fixed(struct json_out *w, double v, int decimals);

#endif
