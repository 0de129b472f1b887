/*
 * cupti_busy.c: how long the GPU was busy on behalf of each phase: the union of the time
 * intervals of the phase's kernels, copies and sets (overlaps counted once), written at finish
 * to phase_gpu. The report divides it by the phase's wall time (GPU busy %).
 *
 * Records arrive nearly, not exactly, in time order (per stream, per buffer). Each phase keeps
 * its most recent disjoint intervals sorted (at most BUSY_WINDOW); a new interval merges into
 * them; the oldest leaves the window into the running total. The union is exact whenever
 * records are never more than BUSY_WINDOW intervals late.
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
    /* First interval ending at or after start: everything before it is untouched. */
    int i = b->n;
    while (i > 0 && b->end[i - 1] >= start) i--;
    int j = i; /* [i, j) overlap or touch the new interval and merge into it */
    while (j < b->n && b->start[j] <= end) {
        if (b->start[j] < start) start = b->start[j];
        if (b->end[j] > end) end = b->end[j];
        j++;
    }
    if (j == i && b->n == BUSY_WINDOW) {
        /* Full: the oldest interval leaves the window (or the new one, if it is older still). */
        if (i == 0) {
            b->total += end - start;
            return;
        }
        b->total += b->end[0] - b->start[0];
        memmove(b->start, b->start + 1, (size_t)(b->n - 1) * sizeof *b->start);
        memmove(b->end, b->end + 1, (size_t)(b->n - 1) * sizeof *b->end);
        b->n--;
        i--, j--;
    }
    /* Replace [i, j) by the merged interval. */
    int shift = 1 - (j - i);
    memmove(b->start + i + 1, b->start + j, (size_t)(b->n - j) * sizeof *b->start);
    memmove(b->end + i + 1, b->end + j, (size_t)(b->n - j) * sizeof *b->end);
    b->start[i] = start;
    b->end[i] = end;
    b->n += shift;
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
