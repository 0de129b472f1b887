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

#endif
