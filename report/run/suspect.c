/*
 * suspect.c: which phases' figures cannot be trusted, and why, decided once for every output. A
 * phase is suspect when its thread lost events (event_drops, schema 2 on) or when its kernels
 * per iteration are out of line with its twins (the phases run at the same autocast setting):
 * lost iteration marks or a lost phase change put one phase's kernels under too few iterations
 * or under another phase (an older build's ResNet-50 fixture: 1,474 kernels per iteration in
 * inference/fp16 against 297 in grad/fp16). Kernels are GPU records, iteration marks host
 * events: losing the latter only ever raises the ratio, so the lowest twin is the reference.
 */
#include "run.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* Out of line: more than this many times the kernels per iteration of the lowest twin. The
 * fixtures' intact phases differ by at most 1.14x (resnet18 no_grad/bf16 against inference). */
#define SUSPECT_KERNEL_RATIO 1.5

static double per_iteration(const struct phase_info *ph)
{
    return ph->has_kernels && ph->iterations > 0 && ph->kernels > 0
               ? (double)ph->kernels / (double)ph->iterations
               : 0;
}

static void mark(struct phase_info *ph, const char *why)
{
    size_t o = strlen(ph->suspect_why);
    ph->suspect = 1;
    snprintf(ph->suspect_why + o, sizeof ph->suspect_why - o, "%s%s", o ? "; " : "", why);
}

void phases_suspect(struct sqlite3 *db, struct run_phases *p)
{
    char why[128];
    if (db_has_table(db, "event_drops")) {
        sqlite3_stmt *st =
            db_prepare(db, "SELECT phase, sum(count) FROM event_drops GROUP BY phase");
        while (db_step(st)) {
            const struct phase_info *c = phase_by_id(p, sqlite3_column_int(st, 0));
            int64_t n = sqlite3_column_int64(st, 1);
            if (!c || n <= 0) continue;
            snprintf(why, sizeof why, "%lld events lost in the phase", (long long)n);
            mark(&p->v[c - p->v], why);
        }
        sqlite3_finalize(st);
    }
    for (int i = 0; i < p->n; i++) {
        struct phase_info *ph = &p->v[i];
        double mine = per_iteration(ph);
        const struct phase_info *low = NULL;
        for (int j = 0; j < p->n; j++) {
            const struct phase_info *o = &p->v[j];
            if (j == i || strcmp(o->autocast, ph->autocast) || per_iteration(o) <= 0) continue;
            if (!low || per_iteration(o) < per_iteration(low)) low = o;
        }
        if (!low || mine <= SUSPECT_KERNEL_RATIO * per_iteration(low)) continue;
        char a[32];
        phase_short_label(low, a, sizeof a);
        snprintf(why, sizeof why, "%.0f kernels per iteration against %.0f in %s", mine,
                 per_iteration(low), a);
        mark(ph, why);
    }
}
