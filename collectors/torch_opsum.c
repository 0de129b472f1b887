/*
 * torch_opsum.c: the operator calls folded while they are written, so that a report reads sums,
 * not every call (issue 49: a report's cost should not grow with the run). Per (phase at the
 * call's end, operator name, outermost iteration) the calls, their self time and their time, in
 * a fixed table of OPSUM_SLOTS; when half full it is written out as torch_operator_sums rows and
 * emptied, so one key may have several rows: a reader sums them (exact either way). At finish
 * the rest is written and meta 'torch_operator_sums' says how many calls the rows hold; a
 * database without it (older, a run that never finished, a store that failed a write) is read
 * from torch_operators.
 *
 * Writer thread only. No table (its allocation failed): no meta, and the report reads the rows.
 */
#include "torch_internal.h"
#include "../profiler/store.h"

#include <stdlib.h>
#include <string.h>

#define OPSUM_SLOTS 16384 /* a power of two; written out at half */

struct opsum {
    int64_t iter, name; /* name: a strings id, as the call's row has it */
    int64_t calls, self, dur;
    int32_t phase, used;
};

static struct {
    struct opsum *t;
    size_t n;
    int64_t calls; /* folded since prepare */
    int failed;    /* the table could not be had: nothing folded, no meta */
    struct ip_batch *rows;
} sum;

void ip_torch_opsum_prepare(struct ip_store *s)
{
    free(sum.t);
    memset(&sum, 0, sizeof sum);
    sum.rows = ip_batch_open(s, "torch_operator_sums", 6);
}

static uint64_t opsum_hash(int64_t iter, int64_t name, int32_t phase)
{
    uint64_t h = (uint64_t)iter * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)name * 0xc2b2ae3d27d4eb4full + (uint64_t)(uint32_t)phase;
    return h ^ (h >> 31);
}

static void opsum_flush(void)
{
    for (size_t i = 0; sum.t && sum.n && i < OPSUM_SLOTS; i++) {
        const struct opsum *e = &sum.t[i];
        if (!e->used) continue;
        int64_t *row = ip_batch_row(sum.rows);
        row[0] = e->phase;
        row[1] = e->name; /* as torch_operators.name_id has it (0: a name not stored) */
        row[2] = e->iter;
        row[3] = e->calls;
        row[4] = e->self;
        row[5] = e->dur;
    }
    if (sum.t) memset(sum.t, 0, OPSUM_SLOTS * sizeof *sum.t);
    sum.n = 0;
}

void ip_torch_opsum_add(int32_t phase, int64_t name, int64_t iter, int64_t self, int64_t dur)
{
    if (sum.failed || !sum.rows) return;
    if (!sum.t && !(sum.t = calloc(OPSUM_SLOTS, sizeof *sum.t))) {
        sum.failed = 1;
        return;
    }
    if (sum.n * 2 >= OPSUM_SLOTS) opsum_flush();
    size_t j = opsum_hash(iter, name, phase) & (OPSUM_SLOTS - 1);
    struct opsum *e = &sum.t[j];
    while (e->used && !(e->iter == iter && e->name == name && e->phase == phase))
        e = &sum.t[j = (j + 1) & (OPSUM_SLOTS - 1)];
    if (!e->used) {
        *e = (struct opsum){.iter = iter, .name = name, .phase = phase, .used = 1};
        sum.n++;
    }
    e->calls++;
    e->self += self;
    e->dur += dur;
    sum.calls++;
}

void ip_torch_opsum_finish(struct ip_store *s)
{
    if (sum.failed || !sum.rows) return;
    opsum_flush();
    ip_batch_flush(sum.rows);
    /* A store that failed a write may lack some sums' rows: then the report reads the calls. */
    if (!ip_store_errors(s)) ip_store_meta_int(s, "torch_operator_sums", sum.calls);
    free(sum.t);
    sum.t = NULL;
}
