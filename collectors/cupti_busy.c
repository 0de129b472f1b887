/*
 * cupti_busy.c: how long the GPU was busy on behalf of each phase: the union of the time
 * intervals of the phase's kernels, copies and sets (overlaps counted once), written at finish
 * to phase_gpu. The report divides it by the phase's wall time (GPU busy %).
 *
 * Records arrive nearly, not exactly, in time order (per stream, per buffer). Each phase keeps
 * its most recent disjoint intervals sorted (at most BUSY_WINDOW); a new interval merges into
 * them; when the window is full its older half leaves into the running total at once (one move
 * per BUSY_WINDOW / 2 intervals). The union is exact whenever records are never more than
 * BUSY_WINDOW / 2 intervals late.
 */
#include "cupti_internal.h"
#include "../profiler/phase.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <string.h>

#define BUSY_WINDOW 64

struct busy {
    uint64_t start[BUSY_WINDOW], end[BUSY_WINDOW]; /* sorted, disjoint */
    int n;
    uint64_t total; /* intervals that left the window */
    uint64_t work;  /* records counted */
};

static struct busy busy[IP_PHASE_COUNT];

void ip_cupti_busy_reset(void)
{
    memset(busy, 0, sizeof busy);
}

void ip_cupti_busy_add(int phase, uint64_t start, uint64_t end)
{
    if (phase < 0 || phase >= IP_PHASE_COUNT || end <= start) return;
    struct busy *b = &busy[phase];
    b->work++;
    if (b->n == BUSY_WINDOW) {
        int half = BUSY_WINDOW / 2;
        for (int k = 0; k < half; k++) b->total += b->end[k] - b->start[k];
        memmove(b->start, b->start + half, (size_t)(b->n - half) * sizeof *b->start);
        memmove(b->end, b->end + half, (size_t)(b->n - half) * sizeof *b->end);
        b->n -= half;
    }
    /* The common case: after everything seen so far. */
    if (!b->n || start > b->end[b->n - 1]) {
        b->start[b->n] = start;
        b->end[b->n] = end;
        b->n++;
        return;
    }
    /* First interval ending at or after start: everything before it is untouched. */
    int i = b->n;
    while (i > 0 && b->end[i - 1] >= start) i--;
    int j = i; /* [i, j) overlap or touch the new interval and merge into it */
    while (j < b->n && b->start[j] <= end) {
        if (b->start[j] < start) start = b->start[j];
        if (b->end[j] > end) end = b->end[j];
        j++;
    }
    /* Replace [i, j) by the merged interval. */
    memmove(b->start + i + 1, b->start + j, (size_t)(b->n - j) * sizeof *b->start);
    memmove(b->end + i + 1, b->end + j, (size_t)(b->n - j) * sizeof *b->end);
    b->start[i] = start;
    b->end[i] = end;
    b->n += 1 - (j - i);
}

void ip_cupti_busy_write(struct ip_store *s)
{
    sqlite3_stmt *st = ip_store_prepare(s, "INSERT OR REPLACE INTO phase_gpu(phase, busy_ns,"
                                           " work) VALUES (?,?,?)");
    for (int p = 0; st && p < IP_PHASE_COUNT; p++) {
        struct busy *b = &busy[p];
        if (!b->work) continue;
        uint64_t total = b->total;
        for (int k = 0; k < b->n; k++) total += b->end[k] - b->start[k];
        sqlite3_bind_int(st, 1, p);
        sqlite3_bind_int64(st, 2, (int64_t)total);
        sqlite3_bind_int64(st, 3, (int64_t)b->work);
        ip_store_step(s, st);
    }
}
