/*
 * sec_cudnn.c: the report's cuDNN section (sections.h), from cudnn_calls and cudnn_plans:
 *  - calls per operation kind, API function and phase: count, errors, host time (total, avg,
 *    p95) and the GPU time of the kernels the calls launched (cudnn_calls.ext_id ->
 *    external_corr (kind 4, CUSTOM1) -> kernels.corr);
 *  - execution plans: what each is, how often it ran, its host and GPU time;
 *  - the precision mix of each phase's cuDNN work;
 *  - findings only this collector sees: batch-norm training during no_grad/inference_mode,
 *    convolution algorithm search (benchmark mode) and whether it recurs.
 * GPU time is null (not 0) when no call of a row could be linked to its kernels (no CUPTI).
 */
#include "sections.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* cudnn_calls.op_kind codes (collectors/cudnn_internal.h). */
enum {
    CK_NONE,
    CK_CONV,
    CK_BN_INF,
    CK_BN_TRAIN,
    CK_ATTN,
    CK_MATMUL,
    CK_PW,
    CK_OTHER,
    CK_UNK,
    CK_COUNT
};
static const char *const op_names[CK_COUNT] = {
    NULL,     "conv_fwd",  "bn_inference", "bn_training",  "attention",
    "matmul", "pointwise", "other",        "unclassified",
};

static const char *dtype_name(int dt)
{
    static const char *const names[] = {
        "fp32",     "fp64", "fp16",  "int8",   "int32",    "int8x4",   "uint8",    "uint8x4",
        "int8x32",  "bf16", "int64", "bool",   "fp8_e4m3", "fp8_e5m2", "fp8_fast", "fp8_e8m0",
        "fp4_e2m1", "int4", "uint4", "uint32", "cfp32",    "cfp64",
    };
    return dt >= 0 && dt < (int)(sizeof names / sizeof *names) ? names[dt] : "other";
}

/* "cudnnBatchNormalizationForwardTrainingEx" -> "BNFwdTrainingEx": text keeps to 100 columns. */
static const char *fn_short(const char *fn)
{
    static const struct {
        const char *full, *brief;
    } map[] = {
        {"cudnnConvolutionForward", "ConvFwd"},
        {"cudnnConvolutionBiasActivationForward", "ConvBiasActFwd"},
        {"cudnnBatchNormalizationForwardInference", "BNFwdInference"},
        {"cudnnBatchNormalizationForwardTraining", "BNFwdTraining"},
        {"cudnnBatchNormalizationForwardTrainingEx", "BNFwdTrainingEx"},
        {"cudnnFindConvolutionForwardAlgorithm", "FindConvAlgo"},
        {"cudnnFindConvolutionForwardAlgorithmEx", "FindConvAlgoEx"},
        {"cudnnGetConvolutionForwardAlgorithm_v7", "GetConvAlgo_v7"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(fn, map[i].full)) return map[i].brief;
    return strncmp(fn, "cudnn", 5) ? fn : fn + 5;
}

enum fn_role { ROLE_OTHER, ROLE_COMPUTE, ROLE_SEARCH, ROLE_HEURISTIC, ROLE_FINALIZE };

static enum fn_role role_of(const char *fn)
{
    if (!strcmp(fn, "cudnnBackendExecute") || !strcmp(fn, "cudnnConvolutionForward") ||
        !strcmp(fn, "cudnnConvolutionBiasActivationForward") ||
        !strncmp(fn, "cudnnBatchNormalizationForward", 30))
        return ROLE_COMPUTE;
    if (!strncmp(fn, "cudnnFindConvolutionForwardAlgorithm", 36)) return ROLE_SEARCH;
    if (!strcmp(fn, "cudnnGetConvolutionForwardAlgorithm_v7")) return ROLE_HEURISTIC;
    if (!strcmp(fn, "cudnnBackendFinalize")) return ROLE_FINALIZE;
    return ROLE_OTHER;
}

/* ---- the calls, loaded once --------------------------------------------------------------- */

struct call {
    int64_t start, dur, status, gpu, kernels, shape, plan;
    int op, phase, dtype, linked, fn; /* fn: index into fns */
};

struct calls {
    struct call *v;
    int n;
    char **fns; /* distinct function names */
    int nfns;
    const struct run_phases *phases; /* the run model: labels by phase id */
};

static int fn_index(struct calls *c, const char *name)
{
    for (int i = 0; i < c->nfns; i++)
        if (!strcmp(c->fns[i], name)) return i;
    c->fns = realloc(c->fns, sizeof *c->fns * (size_t)(c->nfns + 1));
    if (!c->fns || !(c->fns[c->nfns] = strdup(name))) cli_fail("out of memory");
    return c->nfns++;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
    int found = db_step(st) && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return found;
}

static void calls_load(sqlite3 *db, const struct run_phases *p, struct calls *c)
{
    memset(c, 0, sizeof *c);
    c->phases = p;
    if (!db_has_table(db, "cudnn_calls")) return;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT c.start, c.dur, c.status, g.gpu, g.nk, %s, c.plan, c.op_kind, c.phase,"
             " c.dtype, c.ext_id IS NOT NULL, s.value FROM cudnn_calls c"
             " JOIN strings s ON s.id = c.fn_id LEFT JOIN (SELECT e.ext_id AS ext,"
             " sum(k.dur) AS gpu, count(*) AS nk FROM external_corr e JOIN kernels k"
             " ON k.corr = e.corr WHERE e.kind = 4 GROUP BY e.ext_id) g ON g.ext = c.ext_id"
             " ORDER BY c.start",
             has_column(db, "cudnn_calls", "shape") ? "c.shape" : "NULL");
    sqlite3_stmt *st = db_prepare(db, sql);
    int cap = 0;
    while (db_step(st)) {
        if (c->n == cap &&
            !(c->v = realloc(c->v, sizeof *c->v * (size_t)(cap = cap ? cap * 2 : 256))))
            cli_fail("out of memory");
        struct call *k = &c->v[c->n++];
        k->start = sqlite3_column_int64(st, 0);
        k->dur = sqlite3_column_int64(st, 1);
        k->status = sqlite3_column_int64(st, 2);
        k->gpu = sqlite3_column_int64(st, 3);
        k->kernels = sqlite3_column_int64(st, 4);
        k->shape = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 5);
        k->plan = sqlite3_column_type(st, 6) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 6);
        k->op = sqlite3_column_type(st, 7) == SQLITE_NULL ? CK_NONE : sqlite3_column_int(st, 7);
        if (k->op < 0 || k->op >= CK_COUNT) k->op = CK_OTHER;
        k->phase = sqlite3_column_int(st, 8);
        k->dtype = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 9);
        k->linked = sqlite3_column_int(st, 10);
        k->fn = fn_index(c, (const char *)sqlite3_column_text(st, 11));
    }
    sqlite3_finalize(st);
}

static void calls_free(struct calls *c)
{
    for (int i = 0; i < c->nfns; i++) free(c->fns[i]);
    free(c->fns);
    free(c->v);
}

static const char *phase_label(const struct calls *c, int id)
{
    const struct phase_info *ph = id > 0 ? phase_by_id(c->phases, id) : NULL;
    return ph ? ph->label : "none";
}

/* "no_grad/off", as the phase table prints it. */
static void phase_short(const struct calls *c, int id, char *out, size_t n)
{
    const struct phase_info *ph = id > 0 ? phase_by_id(c->phases, id) : NULL;
    if (ph)
        phase_short_label(ph, out, n);
    else
        snprintf(out, n, "none");
}

/* ---- aggregation -------------------------------------------------------------------------- */

struct group {
    int64_t key[3]; /* what rows are grouped by */
    int64_t calls, errors, total, gpu, kernels, linked;
    struct ip_stats host;
};

struct groups {
    struct group *v;
    int n, cap;
};

static struct group *group_of(struct groups *g, int64_t a, int64_t b, int64_t c)
{
    for (int i = 0; i < g->n; i++)
        if (g->v[i].key[0] == a && g->v[i].key[1] == b && g->v[i].key[2] == c) return &g->v[i];
    if (g->n == g->cap &&
        !(g->v = realloc(g->v, sizeof *g->v * (size_t)(g->cap = g->cap ? g->cap * 2 : 32))))
        cli_fail("out of memory");
    struct group *x = &g->v[g->n++];
    memset(x, 0, sizeof *x);
    x->key[0] = a, x->key[1] = b, x->key[2] = c;
    ip_stats_init(&x->host, 0);
    return x;
}

static void group_add(struct group *x, const struct call *k)
{
    x->calls++;
    x->errors += k->status != 0;
    x->total += k->dur;
    ip_stats_add(&x->host, k->dur);
    if (k->linked) x->linked++, x->gpu += k->gpu, x->kernels += k->kernels;
}

static void groups_free(struct groups *g)
{
    for (int i = 0; i < g->n; i++) ip_stats_free(&g->v[i].host);
    free(g->v);
}

static int cmp_key(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    for (int i = 0; i < 3; i++) {
        /* An operation kind of 0 (no operation) sorts last. */
        int64_t p = i == 0 && !x->key[0] ? CK_COUNT : x->key[i],
                q = i == 0 && !y->key[0] ? CK_COUNT : y->key[i];
        if (p != q) return (p > q) - (p < q);
    }
    return 0;
}

static int cmp_gpu(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->gpu != y->gpu) return (x->gpu < y->gpu) - (x->gpu > y->gpu);
    if (x->calls != y->calls) return (x->calls < y->calls) - (x->calls > y->calls);
    return (x->key[0] > y->key[0]) - (x->key[0] < y->key[0]);
}

/* ---- tables ------------------------------------------------------------------------------- */

static struct table *calls_table(const struct calls *c)
{
    struct table *t = table_new("cudnn", "cuDNN calls (per operation, function and phase)");
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "function", NULL, COL_TEXT);
    table_col(t, NULL, "Function", COL_NAME);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "errors", "Err", COL_INT);
    table_col(t, "host_total_ns", "Host", COL_NS);
    table_col(t, "host_avg_ns", "Avg", COL_NS);
    table_col(t, "host_p95_ns", "p95", COL_NS);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "kernels", NULL, COL_INT);
    struct groups g = {0};
    int linked = 0;
    for (int i = 0; i < c->n; i++) {
        const struct call *k = &c->v[i];
        group_add(group_of(&g, k->op, k->fn, k->phase), k);
        linked |= k->linked;
    }
    if (g.n) qsort(g.v, (size_t)g.n, sizeof *g.v, cmp_key);
    char buf[64];
    for (int i = 0; i < g.n; i++) {
        struct group *x = &g.v[i];
        const char *fn = c->fns[x->key[1]];
        table_row(t);
        if (x->key[0]) table_set_text(t, 0, op_names[x->key[0]]);
        table_set_text(t, 1, fn);
        table_set_text(t, 2, fn_short(fn));
        table_set_text(t, 3, phase_label(c, (int)x->key[2]));
        phase_short(c, (int)x->key[2], buf, sizeof buf);
        table_set_text(t, 4, buf);
        table_set_int(t, 5, x->calls);
        table_set_int(t, 6, x->errors);
        table_set_int(t, 7, x->total);
        table_set_num(t, 8, (double)x->total / (double)x->calls);
        ip_stats_median(&x->host, NULL);
        table_set_int(t, 9, ip_stats_percentile(&x->host, 95));
        if (x->linked) table_set_int(t, 10, x->gpu), table_set_int(t, 11, x->kernels);
    }
    if (!c->n)
        t->note = "no cuDNN call was recorded (the program does not use cuDNN, or INFPROF_CUDNN=0)";
    else if (!linked)
        t->note = "GPU: no call could be linked to its kernels (CUPTI was not recording)";
    groups_free(&g);
    return t;
}

static struct table *plans_table(sqlite3 *db, const struct calls *c, const struct report_opts *o)
{
    struct table *t = table_new("cudnn_plans", "cuDNN execution plans");
    table_col(t, "plan", "Plan", COL_INT);
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "dtype", "Type", COL_TEXT);
    table_col(t, "executes", "Runs", COL_INT);
    table_col(t, "host_total_ns", "Host", COL_NS);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "kernels", NULL, COL_INT);
    table_col(t, "source", NULL, COL_TEXT);
    table_col(t, "first_ns", NULL, COL_NS);
    table_col(t, "detail", "Nodes", COL_NAME);
    struct groups g = {0};
    /* No cuDNN call: the table stays, empty (a fixed shape), and an older database need not
     * have cudnn_plans at all. */
    sqlite3_stmt *st = !c->n ? NULL
                             : db_prepare(db, "SELECT p.plan, p.op_kind, p.dtype, s.value,"
                                              " p.first_ns, p.source FROM cudnn_plans p LEFT JOIN"
                                              " strings s ON s.id = p.detail_id");
    struct plan_row {
        int64_t plan, first;
        int op, dtype, source;
        char detail[256];
    } *rows = NULL;
    int n = 0;
    while (st && db_step(st)) {
        if (!(rows = realloc(rows, sizeof *rows * (size_t)(n + 1)))) cli_fail("out of memory");
        struct plan_row *r = &rows[n++];
        r->plan = sqlite3_column_int64(st, 0);
        r->op = sqlite3_column_int(st, 1);
        r->dtype = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
        snprintf(r->detail, sizeof r->detail, "%s",
                 sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
        r->first = sqlite3_column_int64(st, 4);
        r->source = sqlite3_column_int(st, 5);
        group_of(&g, r->plan, 0, 0);
    }
    sqlite3_finalize(st);
    for (int i = 0; i < c->n; i++)
        if (c->v[i].plan && role_of(c->fns[c->v[i].fn]) == ROLE_COMPUTE)
            group_add(group_of(&g, c->v[i].plan, 0, 0), &c->v[i]);
    if (g.n) qsort(g.v, (size_t)g.n, sizeof *g.v, cmp_gpu);
    int shown = o->top && o->top < g.n ? o->top : g.n;
    static const char *const sources[] = {"none", "build", "read"};
    for (int i = 0; i < shown; i++) {
        struct group *x = &g.v[i];
        struct plan_row *r = NULL;
        for (int k = 0; k < n && !r; k++)
            if (rows[k].plan == x->key[0]) r = &rows[k];
        table_row(t);
        table_set_int(t, 0, x->key[0]);
        table_set_int(t, 3, x->calls);
        table_set_int(t, 4, x->total);
        if (x->linked) table_set_int(t, 5, x->gpu), table_set_int(t, 6, x->kernels);
        if (!r) continue;
        if (r->op > 0 && r->op < CK_COUNT) table_set_text(t, 1, op_names[r->op]);
        if (r->dtype >= 0) table_set_text(t, 2, dtype_name(r->dtype));
        table_set_text(t, 7, sources[r->source >= 0 && r->source < 3 ? r->source : 0]);
        table_set_int(t, 8, r->first);
        table_set_text(t, 9, r->detail);
    }
    static char note[96];
    if (shown < g.n) {
        snprintf(note, sizeof note, "%d more plans not shown (--top 0 shows all)", g.n - shown);
        t->note = note;
    }
    free(rows);
    groups_free(&g);
    return t;
}

static struct table *precision_table(const struct calls *c)
{
    struct table *t = table_new("cudnn_precision", "cuDNN precision by phase");
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "op_kind", "Op", COL_TEXT);
    table_col(t, "dtype", "Type", COL_TEXT);
    table_col(t, "calls", "Calls", COL_INT);
    table_col(t, "gpu_time_ns", "GPU", COL_NS);
    table_col(t, "gpu_pct_of_phase", "GPU% of phase", COL_PCT);
    struct groups g = {0};
    for (int i = 0; i < c->n; i++) {
        const struct call *k = &c->v[i];
        if (k->op != CK_NONE && role_of(c->fns[k->fn]) == ROLE_COMPUTE)
            group_add(group_of(&g, k->phase, k->op, k->dtype), k);
    }
    if (g.n) qsort(g.v, (size_t)g.n, sizeof *g.v, cmp_key);
    char buf[64];
    for (int i = 0; i < g.n; i++) {
        struct group *x = &g.v[i];
        int64_t phase_gpu = 0, phase_linked = 0;
        for (int k = 0; k < g.n; k++)
            if (g.v[k].key[0] == x->key[0]) phase_gpu += g.v[k].gpu, phase_linked += g.v[k].linked;
        table_row(t);
        table_set_text(t, 0, phase_label(c, (int)x->key[0]));
        phase_short(c, (int)x->key[0], buf, sizeof buf);
        table_set_text(t, 1, buf);
        table_set_text(t, 2, op_names[x->key[1]]);
        table_set_text(t, 3, x->key[2] >= 0 ? dtype_name((int)x->key[2]) : "unknown");
        table_set_int(t, 4, x->calls);
        if (x->linked) table_set_int(t, 5, x->gpu);
        if (phase_linked && phase_gpu > 0)
            table_set_num(t, 6, 100.0 * (double)x->gpu / (double)phase_gpu);
    }
    groups_free(&g);
    return t;
}

/* ---- findings ----------------------------------------------------------------------------- */

struct shape_seen {
    int64_t shape, first_compute, first_search;
    int searches, after_use, plans, late;
};

static struct shape_seen *shape_of(struct shape_seen **v, int *n, int64_t shape)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i].shape == shape) return &(*v)[i];
    if (!(*v = realloc(*v, sizeof **v * (size_t)(*n + 1)))) cli_fail("out of memory");
    struct shape_seen *s = &(*v)[(*n)++];
    *s = (struct shape_seen){shape, -1, -1, 0, 0, 0, 0};
    return s;
}

/* Warm-up: the first iteration when iterations are known, else the first half of the cuDNN
 * compute calls. Searches after it mean shapes that keep changing while the program runs. */
static int64_t warm_up_end(sqlite3 *db, const struct calls *c)
{
    int64_t end = db_int(db, "SELECT min(start + dur) FROM iterations", -1);
    if (end >= 0) return end;
    int compute = 0, seen = 0;
    for (int i = 0; i < c->n; i++) compute += role_of(c->fns[c->v[i].fn]) == ROLE_COMPUTE;
    for (int i = 0; i < c->n; i++)
        if (role_of(c->fns[c->v[i].fn]) == ROLE_COMPUTE && ++seen > compute / 2)
            return c->v[i].start;
    return INT64_MAX;
}

/* Each phase's own warm-up: the end of its first iteration. A phase is a new setting (autocast's
 * new dtype, another grad mode): its first searches and plans are its warm-up, not a shape that
 * changed. -1 where the phase has no iteration (the run's warm-up then applies). */
static void phase_warm_ends(sqlite3 *db, int64_t *end)
{
    for (int i = 0; i < REPORT_MAX_PHASES; i++) end[i] = -1;
    sqlite3_stmt *st = db_prepare(db, "SELECT phase, min(start + dur) FROM iterations GROUP BY"
                                      " phase");
    while (db_step(st)) {
        int ph = sqlite3_column_int(st, 0);
        if (ph >= 0 && ph < REPORT_MAX_PHASES) end[ph] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
}

/* The findings (sections.h), from the loaded calls. */
static void findings_compute(sqlite3 *db, const struct calls *c, struct cudnn_findings *f)
{
    memset(f, 0, sizeof *f);
    f->calls = c->n;
    f->warm_end = warm_up_end(db, c);
    int64_t warm[REPORT_MAX_PHASES];
    phase_warm_ends(db, warm);
    int nshapes = 0;
    struct shape_seen *shapes = NULL;
    for (int i = 0; i < c->n; i++) {
        const struct call *k = &c->v[i];
        enum fn_role role = role_of(c->fns[k->fn]);
        int build = role == ROLE_FINALIZE && k->plan;
        /* Phases 4..9 are no_grad and inference_mode (phase.h). */
        if (role == ROLE_COMPUTE && k->op == CK_BN_TRAIN && k->phase >= 4) {
            f->bn_train++;
            if (k->phase < REPORT_MAX_PHASES) f->bn_train_by_phase[k->phase]++;
        }
        if (role == ROLE_COMPUTE && k->op == CK_CONV) f->conv_computes++;
        if (role == ROLE_HEURISTIC) f->heuristics++;
        if (role == ROLE_SEARCH) f->searches++, f->search_ns += k->dur;
        /* Plan build time has one definition: the host time of every cudnnBackendFinalize
         * (operation graphs, engine configs and plans: what building a plan costs), the sum of
         * the calls table's BackendFinalize rows; plan_builds counts the plans. */
        if (role == ROLE_FINALIZE) f->build_ns += k->dur;
        if (build) f->builds++;
        int64_t end = k->phase >= 0 && k->phase < REPORT_MAX_PHASES && warm[k->phase] >= 0
                          ? warm[k->phase]
                          : f->warm_end;
        int late = k->start > end;
        if ((role == ROLE_SEARCH || build) && late) f->late++, f->late_ns += k->dur;
        if (!k->shape || (role != ROLE_COMPUTE && role != ROLE_SEARCH && !build)) continue;
        struct shape_seen *s = shape_of(&shapes, &nshapes, k->shape);
        if (role == ROLE_COMPUTE) {
            if (s->first_compute < 0) s->first_compute = k->start;
            continue;
        }
        s->searches += role == ROLE_SEARCH;
        s->plans += build;
        s->after_use += s->first_compute >= 0;
        if (s->first_search < 0) s->first_search = k->start, s->late = late;
    }
    for (int i = 0; i < nshapes; i++) {
        f->searched += shapes[i].searches > 0;
        f->researched += shapes[i].after_use > 0;
        f->plan_shapes += shapes[i].plans > 0;
        if (shapes[i].plans > f->max_plans) f->max_plans = shapes[i].plans;
        f->late_shapes += shapes[i].late;
    }
    free(shapes);
}

int cudnn_findings_load(struct sqlite3 *db, const struct run_phases *p, struct cudnn_findings *f)
{
    struct calls c;
    calls_load(db, p, &c);
    findings_compute(db, &c, f);
    calls_free(&c);
    return f->calls;
}

static struct table *findings_table(const struct cudnn_findings *f)
{
    struct table *t = table_new("cudnn_findings", "cuDNN findings");
    t->object = 1;
    static const struct {
        const char *key, *title;
        enum col_type type;
    } cols[] = {
        {"bn_training_at_inference", "BN training in no_grad/inference", COL_INT},
        {"algorithm_searches", "Algorithm searches (find)", COL_INT},
        {"algorithm_search_ns", "Search time", COL_NS},
        {"searched_shapes", "Shapes searched", COL_INT},
        {"heuristic_queries", "Heuristic queries (v7)", COL_INT},
        {"plan_builds", "Plans built", COL_INT},
        {"plan_build_ns", "Plan build time", COL_NS},
        {"plan_shapes", "Shapes with plans", COL_INT},
        {"max_plans_per_shape", "Plans per shape (max)", COL_INT},
        {"researched_shapes", "Shapes searched again after use", COL_INT},
        {"warm_up_end_ns", NULL, COL_NS},
        {"late_searches", "Searches after warm-up", COL_INT},
        {"late_shapes", "New shapes after warm-up", COL_INT},
        {"bn_training_finding", "Model in train() mode?", COL_TEXT},
        {"search_finding", "Benchmark mode", COL_TEXT},
        {"recurrence_finding", "Changing shapes", COL_TEXT},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        table_col(t, cols[i].key, cols[i].title, cols[i].type);
    table_row(t);
    int64_t v[] = {f->bn_train, f->searches, f->search_ns,   f->searched,  f->heuristics,
                   f->builds,   f->build_ns, f->plan_shapes, f->max_plans, f->researched,
                   f->warm_end, f->late,     f->late_shapes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (i != 10 || f->warm_end != INT64_MAX) table_set_int(t, (int)i, v[i]); /* 10: warm-up */
    char text[128], a[32];
    if (f->bn_train) {
        snprintf(text, sizeof text, "%lld batch-norm training calls at inference",
                 (long long)f->bn_train);
        table_set_text(t, 13, text);
    }
    if (f->searches || f->max_plans > 1) {
        fmt_ns(a, sizeof a, (double)(f->search_ns + f->build_ns));
        snprintf(text, sizeof text, "%lld searches, %lld plans for %d shapes, %s",
                 (long long)f->searches, (long long)f->builds, f->searched + f->plan_shapes, a);
        table_set_text(t, 14, text);
    }
    if (f->researched || f->late_shapes) {
        snprintf(text, sizeof text, "%d shapes searched again, %d new after warm-up", f->researched,
                 f->late_shapes);
        table_set_text(t, 15, text);
    }
    return t;
}

int section_cudnn(struct sqlite3 *db, const struct run_phases *p, const struct report_opts *o,
                  struct table **out, int max)
{
    struct calls c;
    calls_load(db, p, &c);
    int n = 0;
    if (n < max) out[n++] = calls_table(&c);
    /* Every table whether or not cuDNN ran: JSON keys and CSV files do not depend on the run
     * (empty lists, a null findings object). */
    if (n < max) out[n++] = plans_table(db, &c, o);
    if (n < max) out[n++] = precision_table(&c);
    if (n < max) {
        struct cudnn_findings f;
        memset(&f, 0, sizeof f);
        if (c.n) findings_compute(db, &c, &f);
        out[n++] = findings_table(&f);
        if (!c.n) out[n - 1]->nrows = 0;
    }
    calls_free(&c);
    return n;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int cudnn_build(const struct section_ctx *c, struct table **out, int max)
{
    return section_cudnn(c->db, c->p, c->o, out, max);
}

const struct report_section sec_cudnn = {
    .key = "cudnn", .build = cudnn_build, .shown_empty = 0, .compare = NULL};
