/*
 * operators.c: per phase and operator name, the calls, self and total CPU time, calls per
 * iteration and share of the phase's operator time, from torch_operators (operators.h). Self
 * time sums to the time spent in operators, so shares add to 100 per phase. Per phase: the casts
 * (aten::_to_copy: what autocast inserts before each converted operator, and .to() calls) and
 * whether quantized operators (quantized::*) did more of the GEMM/conv work than float ones
 * (aten::addmm, mm, bmm, *convolution*): the phase's operator precision is then int8.
 * GPU time per operator: the kernels whose launch carried the operator as its thread's innermost
 * (kernel_rows.op), by the phase of their launch; kernels per call = those kernels / its calls.
 * Memory: the innermost operator of the allocator report that first reached the phase's highest
 * allocated total (tensor_memory.op), among the reports that carry one.
 * Sampled runs (operators.h): only the operators of the captured iterations are read; each
 * phase's figures are scaled by its counted iterations over its captured ones, and each
 * operator's self time per iteration has a 99% error from the spread of its per-iteration self
 * time over the captured iterations (a sample drawn without replacement: the finite-population
 * correction makes it 0 where every iteration was captured).
 */
#include "operators.h"
#include "run.h"
#include "operators_iters.h"
#include "memrows.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_float_gemm(const char *n)
{
    return !strcmp(n, "aten::addmm") || !strcmp(n, "aten::mm") || !strcmp(n, "aten::bmm") ||
           !strcmp(n, "aten::baddbmm") ||
           (!strncmp(n, "aten::", 6) && strstr(n, "convolution") && !strstr(n, "quantized"));
}

/* Each phase's layers in training form (op_phase.dropout_train, bn_train): aten::bernoulli_ is
 * dropout's only where dropout ran, so at most one per dropout call counts. */
static void op_training_forms(struct run_operators *r)
{
    for (int k = 0; k < r->nphases; k++) {
        struct op_phase *p = &r->phases[k];
        int64_t bernoulli = 0, dropout = 0;
        for (int i = 0; i < r->n; i++) {
            const struct op_figure *f = &r->v[i];
            if (f->phase != p->phase) continue;
            if (!strcmp(f->name, "aten::native_dropout")) p->dropout_train += f->calls;
            if (!strcmp(f->name, "aten::bernoulli_")) bernoulli += f->calls;
            if (!strcmp(f->name, "aten::dropout") || !strcmp(f->name, "aten::feature_dropout") ||
                !strcmp(f->name, "aten::alpha_dropout"))
                dropout += f->calls;
            if (!strcmp(f->name, "aten::_native_batch_norm_legit")) p->bn_train += f->calls;
        }
        p->dropout_train += bernoulli < dropout ? bernoulli : dropout;
    }
}

static void op_phases_load(sqlite3 *db, struct run_operators *r)
{
    sqlite3_stmt *st =
        db_prepare(db, pool_printf("SELECT %s, count(*) FROM iterations WHERE %s GROUP BY 1",
                                   iterations_phase(db), iterations_counted(db)));
    for (int i = 0; i < r->n; i++) {
        const struct op_figure *f = &r->v[i];
        if (!r->nphases || r->phases[r->nphases - 1].phase != f->phase) {
            if (!(r->phases = realloc(r->phases, (size_t)(r->nphases + 1) * sizeof *r->phases)))
                cli_fail("out of memory");
            memset(&r->phases[r->nphases], 0, sizeof *r->phases);
            r->phases[r->nphases++].phase = f->phase;
        }
        struct op_phase *p = &r->phases[r->nphases - 1];
        p->calls += f->calls;
        p->calls_in_iter += f->calls_in_iter;
        p->self_ns += f->self_ns;
        p->kernels += f->kernels;
        p->gpu_ns += f->gpu_ns;
        if (!strcmp(f->name, "aten::_to_copy")) {
            p->casts += f->calls;
            p->casts_in_iter += f->calls_in_iter;
            p->cast_ns += f->total_ns;
        }
        if (!strncmp(f->name, "quantized::", 11))
            p->int8_ns += f->self_ns;
        else if (is_float_gemm(f->name))
            p->float_ns += f->self_ns;
    }
    while (db_step(st))
        for (int k = 0; k < r->nphases; k++)
            if (r->phases[k].phase == sqlite3_column_int(st, 0))
                r->phases[k].iterations = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    for (int k = 0; k < r->nphases; k++) r->phases[k].err_pct = -1;
    for (int k = 0; k < r->nphases; k++)
        r->phases[k].int8 = r->phases[k].int8_ns > r->phases[k].float_ns;
    op_training_forms(r);
}

/* Kernel time by (phase of the launch, innermost operator); operators are matched by name. */
static void op_gpu_load(sqlite3 *db, struct run_operators *r)
{
    if (!db_has_column(db, "kernel_rows", "op")) return;
    r->gpu = 1;
    /* Folded by the writer at finish (collectors/cupti_fold.c), else from every kernel row. */
    int64_t width = 0;
    int folded =
        db_has_table(db, "operator_kernels") && db_meta_int(db, "kernel_time.width_ns", &width);
    sqlite3_stmt *st = db_prepare(db, folded ? "SELECT o.phase, s.value, o.kernels, o.ns"
                                               " FROM operator_kernels o JOIN strings s"
                                               " ON s.id = o.op"
                                             : "SELECT g.phase, s.value, count(*), sum(k.dur)"
                                               " FROM kernel_rows k JOIN launch_sigs g"
                                               " ON g.id = k.sig JOIN strings s ON s.id = k.op"
                                               " WHERE k.op IS NOT NULL GROUP BY g.phase, k.op");
    while (db_step(st)) {
        int phase = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        for (int i = 0; name && i < r->n; i++)
            if (r->v[i].phase == phase && !strcmp(r->v[i].name, name)) {
                r->v[i].kernels += sqlite3_column_int64(st, 2);
                r->v[i].gpu_ns += sqlite3_column_int64(st, 3);
                break;
            }
    }
    sqlite3_finalize(st);
}

/* The operator at each phase's memory peak: the first allocator report that reached the peak as
 * memory.c defines it (on the run's memory device, the phase's peak_alloc), and its operator. */
static void op_peak_load(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    if (!db_has_column(db, "tensor_memory", "op")) return;
    /* Sampled, the reports that carry an operator: those of the captured iterations. */
    const struct mem_rows *m = mem_rows_get(db, p);
    sqlite3_stmt *st = db_prepare(db, "SELECT value FROM strings WHERE id = ?");
    for (int k = 0; k < r->nphases; k++) {
        const struct phase_info *ph = phase_by_id(p, r->phases[k].phase);
        if (!ph || ph->mem_dev < 0 || ph->peak_alloc <= 0) continue;
        const struct mem_row *first = NULL;
        for (size_t i = 0; i < m->n; i++) {
            const struct mem_row *x = &m->v[i];
            if (x->phase != ph->id || x->type != p->devices.type[ph->mem_dev] ||
                x->index != p->devices.index[ph->mem_dev] || x->allocated != ph->peak_alloc ||
                (r->sampled && !x->op))
                continue;
            if (!first || x->ts < first->ts) first = x;
        }
        if (!first || !first->op) continue;
        sqlite3_bind_int64(st, 1, first->op);
        if (db_step(st) && sqlite3_column_text(st, 0))
            snprintf(r->phases[k].peak_op, sizeof r->phases[k].peak_op, "%s",
                     (const char *)sqlite3_column_text(st, 0));
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

const char *operators_rate_words(int64_t every, int64_t spaced, int64_t budget)
{
    if (spaced > 0 && budget > 0)
        /* "63 captures spaced", beside "327 captured", read as though the counts should add up
         * (a fresh-eyes check): the spaced ones are some of the captures. */
        return pool_printf("1 iteration in %lld, later fewer where captures cost more than"
                           " %g%% of the time (%lld of the captures chosen further apart)",
                           (long long)every, (double)budget / 1000, (long long)spaced);
    return pool_printf("1 iteration in %lld", (long long)every);
}

int64_t operators_budget(int has_milli, int64_t milli, int has_pct, int64_t pct)
{
    return has_milli ? milli : has_pct ? pct * 1000 : 0;
}

const char *operators_rate_text(const struct run_operators *r)
{
    return operators_rate_words(r->every, r->spaced, r->budget);
}

const char *operators_mode_text(const struct run_operators *r, const struct op_phase *ph)
{
    if (!r->n) return "";
    if (!r->sampled) return "every call";
    if (!ph) return operators_rate_text(r);
    return pool_printf("%lld of %lld iterations", (long long)ph->captured,
                       (long long)ph->iterations);
}

void operators_load(sqlite3 *db, const struct run_phases *p, struct run_operators *r)
{
    memset(r, 0, sizeof *r);
    if (!db_has_table(db, "torch_operators")) return;
    r->present = 1;
    r->sampled = !db_operators_every_call(db) && db_has_table(db, "torch_operator_windows") &&
                 db_int(db, "SELECT EXISTS (SELECT 1 FROM torch_operators)", 0);
    if (r->sampled) {
        if (!db_meta_int(db, "torch_operators_every", &r->every)) r->every = 0;
        int64_t milli = 0, pct = 0;
        int has_milli = db_meta_int(db, "torch_operators_budget_milli", &milli);
        int has_pct = db_meta_int(db, "torch_operators_budget_pct", &pct);
        r->budget = operators_budget(has_milli, milli, has_pct, pct);
        if (!db_meta_int(db, "torch_operator_windows_spaced", &r->spaced)) r->spaced = 0;
        operators_sampled_rows(db, p, r);
    } else {
        const char *sql = pool_printf(
            "WITH o AS %s,"
            " ph AS (SELECT phase, sum(self) AS self FROM o GROUP BY phase),"
            " it AS (SELECT %s AS phase, count(*) AS n FROM iterations WHERE %s GROUP BY 1)"
            " SELECT o.phase, s.value, sum(o.calls), sum(o.self), sum(o.dur),"
            " sum(CASE WHEN o.iter > 0 THEN o.calls END),"
            " coalesce(it.n, 0), ph.self, sum(CASE WHEN o.iter > 0 THEN o.self END)"
            " FROM o JOIN strings s ON s.id = o.name_id"
            " JOIN ph ON ph.phase = o.phase LEFT JOIN it ON it.phase = o.phase"
            " GROUP BY o.phase, o.name_id ORDER BY o.phase, sum(o.self) DESC",
            iterations_operator_calls(db), iterations_phase(db), iterations_counted(db));
        sqlite3_stmt *st = db_prepare(db, sql);
        while (db_step(st)) {
            struct op_figure *f = operators_add(r);
            f->phase = sqlite3_column_int(st, 0);
            const unsigned char *name = sqlite3_column_text(st, 1);
            snprintf(f->name, sizeof f->name, "%s", name ? (const char *)name : "?");
            f->calls = sqlite3_column_int64(st, 2);
            f->self_ns = sqlite3_column_int64(st, 3);
            f->total_ns = sqlite3_column_int64(st, 4);
            int64_t in_iter = sqlite3_column_int64(st, 5), iters = sqlite3_column_int64(st, 6);
            f->calls_in_iter = in_iter;
            f->calls_per_iter = iters > 0 ? (double)in_iter / (double)iters : -1;
            f->self_per_iter = iters > 0 ? (double)sqlite3_column_int64(st, 8) / (double)iters : -1;
            int64_t phase_self = sqlite3_column_int64(st, 7);
            f->self_share = phase_self > 0 ? 100.0 * (double)f->self_ns / (double)phase_self : 0;
        }
        sqlite3_finalize(st);
        op_gpu_load(db, r);
    }
    op_phases_load(db, r);
    if (r->sampled) operators_sampled_finish(db, p, r);
    op_peak_load(db, p, r);
    db_meta_int(db, "torch_operator_overflow", &r->overflow);
    if (r->sampled) {
        const struct op_iters *x = op_iters_get(db, p);
        r->uncounted = x ? x->outside : 0;
        r->moved = x ? x->moved : 0;
    }
}

void operators_free(struct run_operators *r)
{
    free(r->v);
    free(r->phases);
    memset(r, 0, sizeof *r);
}

static void operators_drop(void *r)
{
    operators_free(r);
    free(r);
}

const struct run_model run_model_operators = {"operators", operators_drop, 0};

const struct run_operators *run_operators(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_operators);
    if (!*slot) {
        struct run_operators *r = malloc(sizeof *r);
        if (!r) cli_fail("out of memory");
        operators_load(db, p, r);
        *slot = r;
    }
    return *slot;
}
