/*
 * series_faults.c: which series fault in, every iteration, memory that the allocator handed
 * back to the system after the one before (glibc's malloc maps a large block afresh each time,
 * or trims the top of its heap). One definition for the advice rule page_faults (what to set)
 * and the Our cost line (what such faults say of the profile: whether glibc trims depends on the
 * heap's layout, which a profiler's own work moves; docs/report.md, page_faults).
 *
 * A series' steady iterations take FAULTS_MIN page faults or more each on average, with system
 * time FAULTS_SYS_SHARE of their mean latency or more (FAULTS_NO_SYS faults where the system
 * time is unknown: a run too short for it), and did not keep what they faulted in: the CPU
 * tensor memory grew by less than half of it (a list that grows, a cache, faults once, and no
 * allocator setting saves it: 1 MiB kept a forward read 257 faults, a fresh-eyes check).
 */
#include "memrows.h"
#include "run.h"

#define FAULTS_MIN       64.0  /* a steady iteration's mean page faults: 256 KiB of new pages */
#define FAULTS_SYS_SHARE 0.10  /* and the system time a tenth of its mean latency */
#define FAULTS_NO_SYS    256.0 /* where the system time is unknown (too short a run), these */
#define FAULTS_PAGE      4096.0

/* The CPU tensor memory series s's iterations kept, per steady iteration (the CPU total after
 * its last iteration less before its first); -1 unknown. */
static double kept_per_iteration(struct sqlite3 *db, const struct run_phases *p,
                                 const struct series_info *s)
{
    const struct mem_rows *m = mem_rows_get(db, p);
    int64_t a = mem_rows_level_at(m, 0, s->start - 1), b = mem_rows_level_at(m, 0, s->end);
    if (a < 0 || b < 0 || !s->nits) return -1;
    return (double)(b - a) / (double)s->nits;
}

void series_heap_faults(struct sqlite3 *db, struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++) {
        struct series_info *s = &p->series.v[i];
        s->heap_faults = 0;
        if (s->faults_mean < FAULTS_MIN || !s->nsteady || s->lat_mean <= 0) continue;
        if (s->sys_mean >= 0 ? (double)s->sys_mean < FAULTS_SYS_SHARE * (double)s->lat_mean
                             : s->faults_mean < FAULTS_NO_SYS)
            continue;
        double kept = kept_per_iteration(db, p, s);
        if (kept >= 0 && 2 * kept >= s->faults_mean * FAULTS_PAGE) continue;
        s->heap_faults = 1;
    }
}
