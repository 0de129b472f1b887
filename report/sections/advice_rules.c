/*
 * advice_rules.c: runs the advice rules (advice.h) over one run. Each rule lives in its own file
 * (advice_*.c) as a descriptor, registered in advice_registry.c; each looks for one known waste in
 * the run's own figures and appends a finding only when its evidence passes the threshold that
 * docs/report.md states. Here: the evidence several rules share (what kernel names say per
 * phase, from the names the run model reads once, run/kernels.c; cuDNN's findings), the loop over
 * the registry, and each rule's rank on the first screen.
 */
#include "advice.h"
#include "../base/json.h"
#include "sections.h"
#include "../run/kernels.h"

#include <stdlib.h>
#include <string.h>

/* ---- evidence from kernel names ----------------------------------------------------------- */

static void names_add(struct names *k, const char *name, int64_t count, int64_t total, int64_t min,
                      int64_t max)
{
    char low[1024];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] + 32 : name[n]);
    low[n] = 0;
    enum opclass op;
    classify_kernel(name, NULL, &op);
    if (advice_has(low, "backward") || advice_has(low, "dgrad") || advice_has(low, "wgrad") ||
        advice_has(low, "bn_bw"))
        k->backward += count;
    else if (op == OP_GEMM || op == OP_CONV || op == OP_ATTENTION)
        k->forward += count;
    if (op == OP_LAYOUT) k->layout += count, k->layout_ns += total;
    if (op == OP_DROPOUT) k->dropout += count, k->dropout_ns += total;
    /* Statistics over the batch are computed in training mode only (ATen, cuDNN legacy). */
    if (advice_has(low, "batch_norm_collect_statistics") || advice_has(low, "bn_fw_tr"))
        k->bn_train += count, k->bn_train_ns += total;
    if (max < SHORT_NS)
        k->under_10us += count;
    else if (min >= SHORT_NS && max < 10 * SHORT_NS)
        k->to_100us += count;
    else if (min >= 10 * SHORT_NS)
        k->over_100us += count;
    else
        k->mixed += count;
}

static void names_load(struct sqlite3 *db, const struct run_phases *p, struct names *out)
{
    memset(out, 0, sizeof *out * REPORT_MAX_PHASES);
    const struct kernels_run *r = run_kernels(db, p);
    for (int i = 0; i < p->n; i++)
        for (size_t j = 0; j < r->phase[i].n; j++) {
            const struct kernels_name *k = &r->phase[i].v[j];
            names_add(&out[i], k->name, k->count, k->total, k->min, k->max);
        }
}

void advice_find(struct sqlite3 *db, const struct run_phases *p, struct advice_list *l)
{
    struct advice_ctx *c = calloc(1, sizeof *c);
    if (!c) cli_fail("out of memory");
    c->db = db;
    c->p = p;
    static const struct cudnn_findings none; /* a DataLoader worker's: nothing is known */
    c->f = &none;
    /* A DataLoader worker makes batches: what it lost is said, no inference rule applies. */
    if (!p->dataloader_worker) {
        names_load(db, p, c->k);
        c->f = &run_cudnn(db, p)->findings;
    }
    /* The registry's order: run-wide rules first, then phase by phase, then run-wide again. */
    for (int stage = ADVICE_BEFORE; stage <= ADVICE_AFTER; stage++) {
        int phases = stage == ADVICE_PHASE ? p->n : 1;
        for (int i = 0; i < phases; i++)
            for (int r = 0; r < advice_rule_count; r++) {
                const struct advice_rule *rule = advice_rules[r];
                if ((int)rule->stage != stage) continue;
                if (p->dataloader_worker && strcmp(rule->name, "records_dropped")) continue;
                rule->run(c, stage == ADVICE_PHASE ? &p->v[i] : NULL, l);
            }
    }
    free(c);
    /* A finding about a phase whose figures lost events says so (suspect.c). */
    for (int i = 0; i < l->n; i++) {
        struct advice *a = &l->v[i];
        if (!a->phase || !a->phase->suspect) continue;
        advice_append(a->finding, sizeof a->finding, " Suspect: %s (events were lost).",
                      a->phase->suspect_why);
        advice_ev_text(a, "suspect", a->phase->suspect_why);
    }
}
