/*
 * operators.h: the run's PyTorch operator figures (torch_operators), read once per report by
 * operators.c (run_operators); every output reads them here. Recorded one of two ways (meta
 * torch_operators_mode): every call ('all', INFPROF_OPERATORS=1, and every database before the
 * sampled mode), or every call of some whole iterations ('sampled', the default): the figures are
 * then estimates, each phase's observed ones times its iterations over those it captured, with a
 * 99% sampling error.
 */
#ifndef INFPROF_RUN_OPERATORS_H
#define INFPROF_RUN_OPERATORS_H

#include <stdint.h>

struct sqlite3;

#include "operators_model.h"

/* Reads the figures; r->present 0 (and nothing allocated) without the table. */
struct run_phases;
/* p: the run model (the operator at each phase's memory peak, as memory.c defines the peak). */
void operators_load(struct sqlite3 *db, const struct run_phases *p, struct run_operators *r);
void operators_free(struct run_operators *r);
/* The figures, read on first use and kept with the run model (run.h's lazy part). */
const struct run_operators *run_operators(struct sqlite3 *db, const struct run_phases *p);
/* How the run's operators were recorded, in words ("every call", "1 iteration in 4: 25 of
 * 100"), for notes; "" none recorded. */
const char *operators_mode_text(const struct run_operators *r, const struct op_phase *ph);
/* The sampled rate in words: "1 iteration in 4", with how the budget spaced later ones. */
const char *operators_rate_text(const struct run_operators *r);
/* The same from the meta's numbers (torch_operators_every, _windows_spaced, the budget below). */
const char *operators_rate_words(int64_t every, int64_t spaced, int64_t budget);
/* The budget in thousandths of a percent: meta torch_operators_budget_milli (from 2026-11-30),
 * else torch_operators_budget_pct (whole percents, before), else 0 (a fixed rate). */
int64_t operators_budget(int has_milli, int64_t milli, int has_pct, int64_t pct);

#endif
