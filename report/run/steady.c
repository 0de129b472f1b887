/*
 * steady.c: the GPU figures of a phase's steady state, over its steady iterations only (the
 * warm-up apart, as latency and throughput are): the kernels launched inside them, their GPU
 * time, and how busy the GPU was over the iterations' windows. A phase's Kernels and GPU time are
 * whole-phase figures (set-up and warm-up included); these are what a column or an advice line
 * labelled steady state quotes (issue 25: launch_bound quoted "busy 1.7% of 246 ms" where the
 * steady iterations were about 40% busy).
 */
#include "run.h"
#include "kernrows.h"

#include <sqlite3.h>
#include <stdlib.h>

/* Index of the steady iteration whose window [start, start + latency] holds t, or -1 (the
 * windows sorted by start: iterations of one phase run one after the other). */
static long window_of(const struct phase_info *ph, int64_t t)
{
    size_t lo = 0, hi = ph->nsteady;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ph->steady_start[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0;) {
        if (t <= ph->steady_start[k] + ph->steady[k]) return (long)k;
        if (lo - k > 4) break; /* overlapping windows are few: look a little way back */
    }
    return -1;
}

void phases_steady_gpu(struct sqlite3 *db, struct run_phases *p)
{
    if (!db_has_table(db, "kernel_rows")) return;
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        if (!ph->nsteady || !ph->has_kernels) continue;
        struct interval *win = malloc(ph->nsteady * sizeof *win);
        if (!win) cli_fail("out of memory");
        for (size_t k = 0; k < ph->nsteady; k++)
            win[k] = (struct interval){ph->steady_start[k], ph->steady_start[k] + ph->steady[k]};
        ph->steady_window = union_length(win, ph->nsteady);
        free(win);
        struct interval *v = NULL;
        size_t n = 0, cap = 0;
        const struct kern_rows *kr = kern_rows_get(db, p);
        size_t rows = 0; /* the phase's kernel rows, in its iterations or not */
        for (size_t j = 0; j < kr->n; j++) {
            const struct kern_row *x = &kr->v[j];
            if (x->sig < 0 || krow_phase(kr, x) != ph->id) continue;
            rows++;
            int64_t s = x->start, d = x->dur;
            long k = window_of(ph, s);
            if (k < 0) continue;
            ph->steady_kernels++;
            ph->steady_gpu_time += d;
            int64_t end = ph->steady_start[k] + ph->steady[k];
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                if (!(v = realloc(v, cap * sizeof *v))) cli_fail("out of memory");
            }
            v[n++] = (struct interval){s, s + d < end ? s + d : end};
        }
        ph->steady_gpu_busy = union_length(v, n);
        free(v);
        /* Kernels counted (the writer's summary) but none of their rows kept (a database cut
         * down, a file-size limit reached): the steady figures are unknown, not 0 (a trimmed
         * H200 run read "GPU busy 0.0%" beside 100,553 kernels, and its advice "100% idle"). */
        if (!rows && ph->kernels > 0) continue;
        ph->has_steady_gpu = 1;
    }
}
