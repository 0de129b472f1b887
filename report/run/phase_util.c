/*
 * phase_util.c: the small helpers every part of the run model uses (run.h): a phase by its id,
 * its short label, and the length of a union of intervals. Below phases.c, memory.c, steady.c
 * and suspect.c, so that those can use them while phases.c calls them.
 */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_interval(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

int64_t union_length(struct interval *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_interval);
    int64_t total = 0, cur_start = 0, cur_end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (v[i].start > cur_end) {
            if (cur_end != INT64_MIN) total += cur_end - cur_start;
            cur_start = v[i].start;
            cur_end = v[i].end;
        } else if (v[i].end > cur_end) {
            cur_end = v[i].end;
        }
    }
    if (cur_end != INT64_MIN) total += cur_end - cur_start;
    return total;
}

void phase_short_label(const struct phase_info *ph, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", strcmp(ph->grad_mode, "inference_mode") ? ph->grad_mode : "inference",
             ph->autocast);
}

const struct phase_info *phase_by_id(const struct run_phases *p, int id)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i].id == id) return &p->v[i];
    return NULL;
}
