/*
 * advice_faults.c: the advice rule page_faults (docs/report.md): a series whose thread takes
 * many page faults every iteration, with the system time they cost (report/run/series_cpu.c,
 * from each iteration's getrusage reading: profiler/iteration.c). A CPU model's allocator that
 * hands its large blocks back to the system after each forward (glibc's malloc maps a block past
 * its mmap threshold afresh, or trims the top of its heap) faults every page in again the next
 * time: a conv net's 0.51 ms forward read 1.07 ms so, 350 faults a forward, in half the runs of
 * the same program (the heap's layout decides; the fresh-eyes check of 2026-11-29). A profiler's
 * own work moves that layout: another conv net trimmed every forward in 6 of 6 runs under us and
 * 4 of 4 under torch.profiler, in 1 of 6 alone (2026-11-30). Keeping the memory in the process
 * ends it either way. Which series: report/run/series_faults.c.
 */
#include "advice.h"

#include <stdio.h>

/* glibc's malloc maps a block of this size or more afresh whatever its settings (its dynamic
 * threshold stops there: DEFAULT_MMAP_THRESHOLD_MAX on 64-bit), so only reusing it helps. */
#define FAULTS_MMAP_MAX (32ll << 20)

/* The largest CPU allocation of the series' phase (its three largest, phases.c); 0 unknown. */
static int64_t largest_cpu(const struct run_phases *p, const struct phase_info *ph)
{
    for (int d = 0; d < p->devices.n; d++)
        if (p->devices.type[d] == 0) return ph->dev_largest[d][0];
    return 0;
}

static void run_page_faults(const struct advice_ctx *c, const struct phase_info *unused,
                            struct advice_list *l)
{
    (void)unused;
    const struct run_phases *p = c->p;
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        if (!s->heap_faults) continue; /* report/run/series_faults.c */
        const struct phase_info *ph = &p->v[s->phase];
        int64_t big = largest_cpu(p, ph);
        struct advice *a = advice_add(l, "page_faults", ph);
        if (!a) return;
        char name[400], sys[32], lat[32], cost[96] = "";
        advice_series_name(p, s, name, sizeof name);
        advice_ns_text(lat, sizeof lat, (double)s->lat_mean);
        if (s->sys_mean >= 0)
            snprintf(cost, sizeof cost, ", %s of system time (%.0f%% of its mean latency %s)",
                     advice_ns_text(sys, sizeof sys, (double)s->sys_mean),
                     100.0 * (double)s->sys_mean / (double)s->lat_mean, lat);
        /* Faults in some iterations only (every 10th making a large tensor): the mean is not
         * every iteration's (a fresh-eyes check read "after each iteration" for a loop whose
         * typical one took 7). */
        int some = s->faults_at_p50 >= 0 && 4 * s->faults_at_p50 < s->faults_mean;
        char where[96] = "";
        if (some)
            snprintf(where, sizeof where,
                     " on average, most of them in some iterations (%.0f in"
                     " one at its p50)",
                     s->faults_at_p50);
        /* Its return read: a name of 400 bytes may cut the words, as anywhere a name is long
         * (a release build's -Wformat-truncation otherwise). */
        if (snprintf(
                a->finding, sizeof a->finding,
                "%s took %.0f page faults an iteration%s%s: its memory is handed back to the"
                " system %s and faulted in again (glibc's malloc maps a large block afresh each"
                " time, or trims the top of its heap). Whether it trims depends on the heap's"
                " layout, which a profiler's own work moves: a conv net faulted so in every run"
                " under infprof or torch.profiler and in 1 of 6 alone, its forward 1.6-2.5x slower,"
                " and a small CNN faulted as much alone as profiled; count them in the program "
                "alone"
                " (resource.getrusage's ru_minflt around the loop) before acting",
                name, s->faults_mean, where, cost,
                some ? "after those iterations" : "after each iteration") < 0)
            a->finding[0] = 0;
        advice_ev_text(a, "series", s->name);
        advice_ev_num(a, "faults_per_iteration", s->faults_mean);
        if (s->sys_mean >= 0) {
            advice_ev_int(a, "sys_per_iteration_ns", s->sys_mean);
            a->saving_ns = s->sys_mean * (int64_t)s->nsteady;
        }
        advice_ev_int(a, "latency_mean_ns", s->lat_mean);
        if (big >= FAULTS_MMAP_MAX) {
            char b[32];
            snprintf(a->try_, sizeof a->try_,
                     "reuse the large tensor instead of making it each iteration (a buffer kept"
                     " between calls, an out= argument): glibc maps every block of 32 MiB or more"
                     " afresh whatever its settings (the largest here: %s), jemalloc or tcmalloc"
                     " may keep it; smaller blocks: MALLOC_MMAP_THRESHOLD_=16777216"
                     " MALLOC_TRIM_THRESHOLD_=268435456 in the environment",
                     advice_bytes_text(b, sizeof b, (double)big));
            advice_ev_int(a, "largest_cpu_allocation_bytes", big);
        } else {
            snprintf(a->try_, sizeof a->try_,
                     "keep the memory in the process: MALLOC_MMAP_THRESHOLD_=16777216"
                     " MALLOC_TRIM_THRESHOLD_=268435456 (or MALLOC_TOP_PAD_=67108864) in the"
                     " environment, or preload jemalloc or tcmalloc; then compare the p50 (a conv"
                     " net's forward went from 1.07 ms to 0.51 ms, its faults from 350 to none)");
        }
    }
}

const struct advice_rule advice_rule_page_faults = {
    "page_faults", 45, ADVICE_AFTER, run_page_faults,
    "a series' steady iterations took 64 page faults or more each on average, with system time a"
    " tenth of their mean latency or more (256 faults where the system time is unknown), and did"
    " not keep the memory they faulted in (the CPU tensor memory grew by less than half of it);"
    " a CPU allocation of 32 MiB or more is named, which glibc maps afresh whatever its settings"};
