/*
 * memory.c: the one definition of a phase's peak memory and of what a setting saves, read by
 * the Summary, the phase table, the advice and the multi-run report alike. A phase's peak is
 * the peak of live tensor bytes on its memory device (the run's first GPU, else the CPU), never
 * a sum over devices: CPU and GPU bytes do not add, and no program measures them together
 * (torch.cuda.max_memory_allocated is per device). Two phases whose largest batches differ save
 * nothing of each other, their peaks being their batches', nor a phase whose series ran other
 * models or batch sizes: its peak is one of theirs.
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
        /* A phase no thread that allocates there was in has no figure there (not 0). */
        ph->mem_dev = ph->has_memory && k >= 0 && (ph->dev_held & (1u << k)) ? k : -1;
        ph->peak_alloc = k >= 0 ? ph->dev_peak_alloc[k] : 0;
        ph->peak_reserved = k >= 0 && ph->has_reserved ? ph->dev_peak_reserved[k] : 0;
        ph->entry_alloc = k >= 0 ? ph->dev_entry_alloc[k] : 0;
    }
}

int64_t memory_held_after_peak(const struct phase_info *ph, int k)
{
    if (!ph || k < 0 || k >= REPORT_MAX_DEVICES || !(ph->dev_held & (1u << k))) return -1;
    int64_t v = ph->dev_entry_alloc[k];
    return v > 0 && v <= ph->dev_peak_alloc[k] ? v : -1;
}

/* A saving is the setting's only where about the same stayed held after both phases' peaks
 * (weights, inputs, what was kept from before; over a quarter of the saving apart, and 64 KiB, is
 * not): a dataset made between them, and kept, is no cost of the later phase's mode (it read
 * "-15.00MiB, -198.6%" for inference_mode). A peak's own activations are let go after it. */
static int64_t entry_moved(const struct phase_info *base, const struct phase_info *ph,
                           int64_t saved)
{
    int64_t moved = ph->entry_alloc - base->entry_alloc;
    int64_t m = moved < 0 ? -moved : moved, s = saved < 0 ? -saved : saved;
    return m > 65536 && m > s / 4 ? moved : 0;
}

int64_t memory_entry_moved(const struct phase_info *base, const struct phase_info *ph)
{
    if (!base || !ph || !ph->has_memory || !base->has_memory || ph->mem_dev < 0) return 0;
    return entry_moved(base, ph, base->peak_alloc - ph->peak_alloc);
}

int64_t memory_largest_batch(const struct phase_info *ph)
{
    int64_t b = -1;
    for (size_t i = 0; ph && ph->steady_batch && i < ph->nsteady; i++)
        if (ph->steady_batch[i] > b) b = ph->steady_batch[i];
    return b > 0 ? b : -1;
}

int memory_batches_differ(const struct phase_info *a, const struct phase_info *b)
{
    int64_t x = memory_largest_batch(a), y = memory_largest_batch(b);
    return x > 0 && y > 0 && x != y;
}

int memory_saving(const struct phase_info *base, const struct phase_info *ph, int64_t *bytes,
                  double *pct)
{
    if (!base || !ph || !ph->has_memory || !base->has_memory || ph->mem_dev < 0 ||
        base->peak_alloc <= 0)
        return 0;
    /* Peaks at other batch sizes: the batch's activations, not the setting ("inference/bf16
     * needs 8.30MiB less (77%)" at batch 8 against no_grad's batch 32, where at batch 8 it
     * saved 0.52 MiB; a fresh-eyes check). */
    if (memory_batches_differ(base, ph)) return 0;
    /* A phase whose series ran other models or batch sizes: its peak is one series', and the
     * other phase's may be another model's (an H200 run's "inference/fp16 needs 608.56MiB
     * less (47%)" set ResNet #2's peak against BERT's; ResNet against ResNet saved 25%; a
     * fresh-eyes check). */
    if (base->peak_mixed || ph->peak_mixed) return 0;
    *bytes = base->peak_alloc - ph->peak_alloc;
    *pct = 100.0 * (double)*bytes / (double)base->peak_alloc;
    return !entry_moved(base, ph, *bytes);
}
