/*
 * advice.h: what the Advice section's files share (sec_advice.c: the section and its renderings;
 * advice_rules.c: the shared evidence and the loop over the rules; advice_*.c: one rule or two
 * each, a descriptor apiece; advice_registry.c: the list; advice_build.c: what rules build
 * findings with). A rule appends a finding with its measured figures; the section renders the
 * list.
 */
#ifndef INFPROF_ADVICE_H
#define INFPROF_ADVICE_H

#include "sections.h"
#include "../run/cudnn_run.h"

#include <stddef.h>
#include <stdint.h>

/* A threshold the rules' shared evidence uses (advice_rules.c: kernel names per phase); each
 * rule's own are in its file, as docs/report.md states them. */
#define SHORT_NS 10000 /* launch_bound: a short kernel, every launch under 10 us */

struct advice {
    const char *rule;
    const struct phase_info *phase; /* NULL: the whole run */
    char finding[1024], evidence[1024], try_[512];
    int64_t saving_ns, saving_bytes; /* < 0: none grounded */
};

struct advice_list {
    struct advice v[64];
    int n;
};

/* What kernel names say per phase, beyond the precision mix. */
struct names {
    int64_t backward, layout, layout_ns, dropout, dropout_ns, bn_train, bn_train_ns;
    int64_t forward;                                 /* GEMM, conv and attention launches */
    int64_t under_10us, to_100us, over_100us, mixed; /* launches by their name's min and max */
};

/* Builders (advice_build.c). */
struct advice *advice_add(struct advice_list *l, const char *rule, const struct phase_info *ph);
void advice_ev_int(struct advice *a, const char *key, int64_t v);
void advice_ev_num(struct advice *a, const char *key, double v);
void advice_ev_text(struct advice *a, const char *key, const char *s);
const char *advice_ns_text(char *buf, size_t n, double ns);
const char *advice_bytes_text(char *buf, size_t n, double b);
double advice_pct(int64_t part, int64_t whole);
/* A series as findings name it: its phase's short label, then its name ("no_grad/off MLP"). */
const char *advice_series_name(const struct run_phases *p, const struct series_info *s, char *buf,
                               size_t n);
const char *advice_plural(int64_t n, const char *one, const char *many);
int advice_has(const char *s, const char *word);
int advice_append(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What a rule reads: the run, its model, and the evidence several rules share (advice_rules.c). */
struct advice_ctx {
    struct sqlite3 *db;
    const struct run_phases *p;
    struct names k[REPORT_MAX_PHASES]; /* per phase, index as in p->v */
    const struct cudnn_findings *f;    /* the run model's (run/cudnn_run.h), read once per report */
};

/* A rule: its own file holds its code and this descriptor, and advice_registry.c one line naming
 * it. rank: its place on the first screen's Findings line, lowest first (lost data, then settings
 * that make the answers wrong, then speed). stage: run-wide before the phases, once per phase
 * (phase by phase, every such rule for a phase before the next phase), or run-wide after; within
 * a stage, the registry's order is the Advice section's. ph: the phase (ADVICE_PHASE), else
 * NULL. */
enum advice_stage { ADVICE_BEFORE, ADVICE_PHASE, ADVICE_AFTER };
struct advice_rule {
    const char *name;
    int rank; /* on the first screen's Findings line, lowest first */
    enum advice_stage stage;
    void (*run)(const struct advice_ctx *c, const struct phase_info *ph, struct advice_list *l);
    const char *when; /* when it fires, with its thresholds, in a line (infprof info --rules) */
};
extern const struct advice_rule *const advice_rules[];
extern const int advice_rule_count;

/* Run every registered rule over one run (advice_rules.c). */
void advice_find(struct sqlite3 *db, const struct run_phases *p, struct advice_list *l);

#endif
