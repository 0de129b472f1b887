/*
 * phase_util.c: the small helpers every part of the run model uses (run.h): a phase by its id,
 * its short label, a device's name, the length of a union of intervals, and the one median and
 * p50 rule. Below phases.c, memory.c, steady.c and suspect.c, so that those can use them while
 * phases.c calls them.
 */
#include "run.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void device_name(int type, int index, char *out, size_t n)
{
    if (type == 0)
        snprintf(out, n, "cpu");
    else if (type == 1)
        snprintf(out, n, "cuda:%d", index);
    else
        snprintf(out, n, "device%d:%d", type, index);
}

static int cmp_interval(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

size_t intervals_merge(struct interval *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_interval);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start <= v[m].end) {
            if (v[i].end > v[m].end) v[m].end = v[i].end;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
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
    if (ph->short_as[0]) {
        snprintf(out, n, "%s", ph->short_as);
        return;
    }
    snprintf(out, n, "%s/%s", strcmp(ph->grad_mode, "inference_mode") ? ph->grad_mode : "inference",
             ph->autocast);
}

int phases_work_differs(const struct phase_info *x, const struct phase_info *y)
{
    return x->detected.period && y->detected.period && x->detected.from == y->detected.from &&
           x->detected.unit_sig != y->detected.unit_sig;
}

const struct phase_info *phase_by_id(const struct run_phases *p, int id)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i].id == id) return &p->v[i];
    return NULL;
}

int64_t phases_captured_apart(const struct run_phases *p)
{
    int64_t apart = 0;
    for (int i = 0; i < p->n; i++) apart += p->v[i].captured_apart;
    return apart;
}

void run_check(const struct run_phases *p)
{
#ifdef NDEBUG
    (void)p;
#else
    assert(p->n >= 0 && p->n <= REPORT_MAX_PHASES);
    assert(p->series.n >= 0 && p->series.n <= REPORT_MAX_SERIES);
    int64_t iters = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        for (int j = 0; j < i; j++) assert(p->v[j].id != ph->id);
        assert(ph->warmup >= 0 && ph->warmup <= ph->iterations);
        assert(ph->iterations == 0 ||
               (int64_t)ph->nsteady + ph->captured_apart == ph->iterations - ph->warmup);
        assert(ph->module_iterations <= ph->iterations);
        assert(!ph->nsteady || (ph->lat_p50 <= ph->lat_p95 && ph->lat_p95 <= ph->lat_p99));
        assert(ph->mem_dev >= -1 && ph->mem_dev < p->devices.n);
        iters += ph->iterations;
    }
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *se = &p->series.v[i];
        assert(se->phase >= 0 && se->phase < p->n);
        assert(se->warmup >= 0 &&
               (int64_t)se->nsteady + se->captured_apart + se->warmup == se->iterations);
        assert((int64_t)se->nits == se->iterations);
        assert(se->gap_data < 0 || se->gap_data <= se->gap_total);
    }
    for (size_t k = 0; k < p->niters; k++) {
        assert(p->iters[k].phase >= 0 && p->iters[k].phase < p->n);
        assert(p->iters[k].series >= -1 && p->iters[k].series < p->series.n);
    }
    assert((int64_t)p->niters == iters);
#endif
}
