/*
 * detect_sizes.h: forwards of one model at other sizes (a server's requests, each its own batch),
 * found by their allocations' pattern rather than their sizes (detect_sizes.c says how).
 */
#ifndef INFPROF_DETECT_SIZES_H
#define INFPROF_DETECT_SIZES_H

#include "detect_split.h"

#include <stddef.h>
#include <stdint.h>

/* The reports' tokens (bytes * 16 + device type) made their pattern only (sign * 16 + device
 * type); their sizes in bytes[0..n) (signed: an allocation, a free). */
void detect_sizes_tokens(struct rep *s, size_t n, int64_t *bytes);
/* ... and back. */
void detect_sizes_restore(struct rep *s, size_t n, const int64_t *bytes);

/* Whether the periods s[first + k p .. + p) of a stretch ending at n are the first one's forward
 * at other sizes: in at least 9 of 10 periods, at least half the allocations scaled by one factor
 * (within 3%: a batch of b makes each activation b times one input's). */
int detect_sizes_scaled(const int64_t *bytes, size_t first, size_t p, size_t n);

/* Where no period repeats: forwards cut wherever the allocated total comes back to its level
 * (the lowest of the phase's second half), kept where one order of allocations and frees (the
 * unit) makes 3 in 4 of the pieces of half its reports or more and half the reports, and its
 * repeats are the first one's scaled (a conv net whose batch-1 forwards take another path: 26
 * reports against 32). s holds the pattern's tokens. The iterations' first and last reports in
 * first[0..n) and last[0..n) (malloc'd), the unit's first report and length: n, 0 none. */
struct level_cut {
    size_t *first, *last, n;
    size_t unit_at, unit_len, copies;
};
int detect_sizes_levels(const struct rep *s, size_t n, const int64_t *bytes, struct level_cut *out);
void detect_sizes_levels_free(struct level_cut *c);

#endif
