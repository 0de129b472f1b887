/*
 * advice_lost.c: the advice rule records_dropped (docs/report.md, "Advice"): events, CUPTI records
 * or database rows were lost, so every figure undercounts; what to raise, with its value now.
 * Ranked first on the first screen: every other answer rests on the data.
 */
#include "advice.h"
#include "../run/runfacts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "now 2" when the run set the variable (meta config.NAME), else "default 16". */
static const char *setting(const struct runfacts *r, const char *name, const char *fallback,
                           char *out, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "config.%s", name);
    const char *v = runfacts_text(r, key);
    snprintf(out, n, "%s %s", v ? "now" : "default", v ? v : fallback);
    return out;
}

static void rule_dropped(const struct advice_ctx *c, const struct phase_info *ph,
                         struct advice_list *l)
{
    (void)ph;
    const struct run_phases *p = c->p;
    static const struct {
        const char *key, *one, *many;
    } counters[] = {
        {"dropped_events", "host event dropped", "host events dropped"},
        {"cupti_dropped_records", "CUPTI record dropped", "CUPTI records dropped"},
        {"cupti_buffers_refused", "CUPTI buffer request refused (the pool was empty)",
         "CUPTI buffer requests refused (the pool was empty)"},
        {"cupti_buffer_errors", "CUPTI buffer not read to the end",
         "CUPTI buffers not read to the end"},
        {"cupti_records_not_stored", "CUPTI record not stored", "CUPTI records not stored"},
        {"write_errors", "database write failed", "database writes failed"},
    };
    /* The run model's counters, in this order (RUN_LOST_EVENTS .. RUN_LOST_WRITE_ERRORS). */
    int64_t v[6] = {0}, any = 0;
    for (int i = 0; i < 6; i++) v[i] = p->lost[i], any |= v[i];
    if (!any) return;
    struct advice *a = advice_add(l, "records_dropped", NULL);
    if (!a) return;
    snprintf(a->finding, sizeof a->finding, "Records were lost:");
    for (int i = 0; i < 6; i++) {
        if (v[i])
            advice_append(a->finding, sizeof a->finding, " %lld %s,", (long long)v[i],
                          advice_plural(v[i], counters[i].one, counters[i].many));
        advice_ev_int(a, counters[i].key, v[i]);
    }
    advice_append(a->finding, sizeof a->finding,
                  " so the figures of this report undercount the run.");
    const struct runfacts *r = run_facts(c->db, p);
    char s1[48], s2[48], s3[48];
    if (v[0]) {
        if (r->drops[0])
            advice_append(a->finding, sizeof a->finding, " Events were dropped %s.", r->drops);
        if (runfacts_stop_fix(r)) /* dropped after recording stopped: its cause's fix */
            advice_append(a->try_, sizeof a->try_, "%s; ", runfacts_stop_fix(r));
        else
            advice_append(a->try_, sizeof a->try_,
                          "raise INFPROF_BUFFER_MB (%s) or INFPROF_BUFFER_WAIT_MS; ",
                          setting(r, "INFPROF_BUFFER_MB", "256", s1, sizeof s1));
    }
    if (v[1] || v[2])
        advice_append(a->try_, sizeof a->try_,
                      "raise INFPROF_CUPTI_BUFFERS (%s) or INFPROF_CUPTI_BUFFER_KB (%s); ",
                      setting(r, "INFPROF_CUPTI_BUFFERS", "16", s2, sizeof s2),
                      setting(r, "INFPROF_CUPTI_BUFFER_KB", "4096", s3, sizeof s3));
    if (v[3])
        advice_append(a->try_, sizeof a->try_,
                      "run again (no setting recovers a buffer CUPTI could not read); ");
    if (v[4] || v[5])
        advice_append(a->try_, sizeof a->try_,
                      "write the database (INFPROF_OUTPUT) to a disk with free space; ");
    a->try_[strlen(a->try_) - 2] = 0;
}

const struct advice_rule advice_rule_dropped = {
    "records_dropped", 10, ADVICE_BEFORE, rule_dropped,
    "events, CUPTI records or database rows were lost (any counter above 0)"};
