/*
 * detect_split.h: a detected period that holds several forwards, cut into them (detect_split.c
 * says how); the sequence element detect.c searches.
 */
#ifndef INFPROF_DETECT_SPLIT_H
#define INFPROF_DETECT_SPLIT_H

#include <stddef.h>
#include <stdint.h>

struct rep {
    int64_t ts, end, token;
    int64_t key; /* the cut goes before the offset whose median key is lowest */
};

/* An allocator report's token: its size in bytes (negative: a free) and its device type. */
static inline int64_t rep_token(int64_t bytes, int64_t type)
{
    return bytes * 16 + type;
}
static inline int64_t rep_type(int64_t token)
{
    return token & 15;
}
static inline int64_t rep_bytes(int64_t token)
{
    return (token - rep_type(token)) / 16;
}

/* The pieces of one period of allocator reports t[0..p), t[0] the first report after a cut
 * (`level`: the allocated total there): where the period is a forward repeated with another
 * between (every 20th request longer), the start offsets of its forwards in at[0..k) (at[0] 0)
 * and *alike, how many of them are the repeated one, *unit_at and *unit_len the offset and length
 * of its first copy: k, at least 2; 0 when the period is one forward (or more pieces than cap). */
#define SPLIT_PIECES_MAX 256
size_t detect_split(const struct rep *t, size_t p, int64_t level, size_t *at, size_t cap,
                    size_t *alike, size_t *unit_at, size_t *unit_len);

#endif
