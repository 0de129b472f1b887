/*
 * memory.c: the one definition of a phase's peak memory and of what a setting saves, read by
 * the Summary, the phase table, the advice and the multi-run report alike. A phase's peak is
 * the peak of live tensor bytes on its memory device (the run's first GPU, else the CPU), never
 * a sum over devices: CPU and GPU bytes do not add, and no program measures them together
 * (torch.cuda.max_memory_allocated is per device).
 */
#include "run.h"

int run_memory_device(const struct run_devices *d)
{
    for (int k = 0; k < d->n; k++)
        if (d->type[k] != 0) return k;
    return d->n ? 0 : -1;
}

void phases_memory_peaks(struct run_phases *p)
{
    int k = run_memory_device(&p->devices);
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        ph->mem_dev = ph->has_memory ? k : -1;
        ph->peak_alloc = k >= 0 ? ph->dev_peak_alloc[k] : 0;
        ph->peak_reserved = k >= 0 && ph->has_reserved ? ph->dev_peak_reserved[k] : 0;
    }
}

int memory_saving(const struct phase_info *base, const struct phase_info *ph, int64_t *bytes,
                  double *pct)
{
    if (!base || !ph || !ph->has_memory || !base->has_memory || ph->mem_dev < 0 ||
        base->peak_alloc <= 0)
        return 0;
    *bytes = base->peak_alloc - ph->peak_alloc;
    *pct = 100.0 * (double)*bytes / (double)base->peak_alloc;
    return 1;
}
