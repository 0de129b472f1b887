/*
 * cudnn_run.c: the run model's cuDNN figures (cudnn_run.h): cudnn_calls and cudnn_plans read once,
 * the calls grouped the ways the cuDNN section shows them, and the findings that section and the
 * advice rules share (computed here once per report, not once per reader).
 */
#include "cudnn_run.h"
#include "run.h"
#include "kernrows.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum cudnn_role role_of(const char *fn)
{
    if (!strcmp(fn, "cudnnBackendExecute") || !strcmp(fn, "cudnnConvolutionForward") ||
        !strcmp(fn, "cudnnConvolutionBiasActivationForward") ||
        !strncmp(fn, "cudnnBatchNormalizationForward", 30))
        return CUDNN_ROLE_COMPUTE;
    if (!strncmp(fn, "cudnnFindConvolutionForwardAlgorithm", 36)) return CUDNN_ROLE_SEARCH;
    if (!strcmp(fn, "cudnnGetConvolutionForwardAlgorithm_v7")) return CUDNN_ROLE_HEURISTIC;
    if (!strcmp(fn, "cudnnBackendFinalize")) return CUDNN_ROLE_FINALIZE;
    return CUDNN_ROLE_OTHER;
}

/* ---- the rows ----------------------------------------------------------------------------- */

static int fn_index(struct cudnn_run *r, const char *name)
{
    for (int i = 0; i < r->nfns; i++)
        if (!strcmp(r->fns[i], name)) return i;
    r->fns = realloc(r->fns, sizeof *r->fns * (size_t)(r->nfns + 1));
    if (!r->fns || !(r->fns[r->nfns] = strdup(name))) cli_fail("out of memory");
    return r->nfns++;
}

/* The kernels each linked call launched, summed by its external id: the external correlation
 * records (kind 4, cuDNN's) joined with every kernel by correlation id, here, not by SQLite
 * (its automatic index over 371 k kernels and a sorted GROUP BY took 0.7 s of the H200
 * fixture's report). */
struct ext_pair {
    int64_t corr, ext; /* corr first: rstats_cmp_i64 orders by it */
    size_t sum;        /* its external id's place in the sums */
};
struct ext_sum {
    int64_t ext, gpu, kernels; /* ext first */
};

static void pair_decode(sqlite3_stmt *st, void *row, void *ctx)
{
    (void)ctx;
    *(struct ext_pair *)row =
        (struct ext_pair){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), 0};
}

static struct ext_sum *linked_load(sqlite3 *db, const struct run_phases *p, size_t *nsums)
{
    *nsums = 0;
    if (!db_has_table(db, "external_corr")) return NULL;
    size_t np;
    struct ext_pair *pv = db_scan(db, "external_corr",
                                  "SELECT corr, ext_id FROM external_corr WHERE kind = 4 AND corr"
                                  " IS NOT NULL AND ext_id IS NOT NULL AND rowid BETWEEN ?1 AND ?2",
                                  sizeof *pv, pair_decode, NULL, &np);
    if (!np) return NULL;
    /* The table is written in the order of the ids (corr, then ext): then nothing is sorted, and
     * the kernels, in corr order too, meet their pairs walking. Any other order is sorted or
     * searched. */
    int by_corr = 1, by_ext = 1;
    for (size_t i = 1; i < np; i++) {
        by_corr &= pv[i].corr >= pv[i - 1].corr;
        by_ext &= pv[i].ext >= pv[i - 1].ext;
    }
    if (!by_corr) qsort(pv, np, sizeof *pv, rstats_cmp_i64);
    /* Every external id once, in order, for the sums; each pair's sum. */
    struct ext_sum *sv = malloc(np * sizeof *sv);
    if (!sv) cli_fail("out of memory");
    size_t ns = 0;
    if (by_corr && by_ext) {
        for (size_t i = 0; i < np; i++) {
            if (!ns || sv[ns - 1].ext != pv[i].ext) sv[ns++] = (struct ext_sum){pv[i].ext, 0, 0};
            pv[i].sum = ns - 1;
        }
    } else {
        for (size_t i = 0; i < np; i++) sv[i] = (struct ext_sum){pv[i].ext, 0, 0};
        qsort(sv, np, sizeof *sv, rstats_cmp_i64);
        for (size_t i = 0; i < np; i++)
            if (!ns || sv[ns - 1].ext != sv[i].ext) sv[ns++] = sv[i];
        for (size_t i = 0; i < np; i++)
            pv[i].sum =
                (size_t)((struct ext_sum *)bsearch(&pv[i].ext, sv, ns, sizeof *sv, rstats_cmp_i64) -
                         sv);
    }
    const struct kern_rows *kr = kern_rows_get(db, p);
    size_t at = 0; /* the first pair of corr at least the last kernel's */
    int64_t last = INT64_MIN;
    for (size_t j = 0; j < kr->n; j++) {
        if (kr->v[j].sig < 0 || !kr->v[j].corr) continue; /* the kernels view's, with an id */
        int64_t corr = kr->v[j].corr;
        if (corr >= last) {
            while (at < np && pv[at].corr < corr) at++;
        } else { /* out of order: searched */
            struct ext_pair *x = bsearch(&corr, pv, np, sizeof *pv, rstats_cmp_i64);
            if (!x) continue;
            while (x > pv && x[-1].corr == corr) x--;
            at = (size_t)(x - pv);
        }
        last = corr;
        for (size_t x = at; x < np && pv[x].corr == corr; x++) {
            sv[pv[x].sum].gpu += kr->v[j].dur;
            sv[pv[x].sum].kernels++;
        }
    }
    free(pv);
    *nsums = ns;
    return sv;
}

/* The functions' string ids seen so far, each with its index into cudnn_run.fns (-1: the strings
 * table has no such id): a lookup per function, not a join per call. */
struct fn_ids {
    struct {
        int64_t id;
        int fn;
    } * v;
    int n;
    struct cudnn_run *r;
};

static int fn_of(sqlite3 *db, struct fn_ids *m, int64_t id)
{
    for (int i = 0; i < m->n; i++)
        if (m->v[i].id == id) return m->v[i].fn;
    sqlite3_stmt *st = db_prepare(db, "SELECT value FROM strings WHERE id = ?");
    sqlite3_bind_int64(st, 1, id);
    int fn = -1;
    if (db_step(st)) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        fn = fn_index(m->r, t ? (const char *)t : "?");
    }
    sqlite3_finalize(st);
    if (!(m->v = realloc(m->v, (size_t)(m->n + 1) * sizeof *m->v))) cli_fail("out of memory");
    m->v[m->n].id = id, m->v[m->n++].fn = fn;
    return fn;
}

/* By start, a tie in the order read (the calls are written in time order: sorted at once). */
static int cmp_call_start(const void *a, const void *b)
{
    const struct cudnn_call *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* By start, a tie by seq (unique, 1...): each start and seq packed into one key where the
 * run's span leaves room, radix-sorted, the calls then moved once (the writer's folds are a
 * percent out of order; sorting 600 k of them by qsort took a twentieth of a 10x run's report);
 * else qsort. */
static void calls_sort(struct cudnn_call *v, size_t n)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int top = 0; /* the largest seq (unique, at least 1) */
    for (size_t i = 0; i < n; i++) {
        if (v[i].start < lo) lo = v[i].start;
        if (v[i].start > hi) hi = v[i].start;
        if (v[i].seq > top) top = v[i].seq;
    }
    int bits = 1;
    while (bits < 40 && ((int64_t)1 << bits) <= top) bits++;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    int64_t *key =
        bits < 40 && span < ((uint64_t)1 << (62 - bits)) ? malloc(n * sizeof *key) : NULL;
    struct cudnn_call *out = key ? malloc(n * sizeof *out) : NULL;
    int32_t *at = out ? malloc(((size_t)top + 1) * sizeof *at) : NULL; /* seq -> index */
    if (!at) {
        free(key), free(out);
        qsort(v, n, sizeof *v, cmp_call_start);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        key[i] = (int64_t)(((uint64_t)v[i].start - (uint64_t)lo) << bits | (uint64_t)v[i].seq);
        at[v[i].seq] = (int32_t)i;
    }
    rstats_sort_i64(key, n);
    for (size_t i = 0; i < n; i++) out[i] = v[at[key[i] & (((int64_t)1 << bits) - 1)]];
    memcpy(v, out, n * sizeof *v);
    free(at), free(out), free(key);
}

struct sums {
    const struct ext_sum *v;
    size_t n;
};

/* One call (db_scan: on a reader thread, reading the linked sums only). */
static void call_decode(sqlite3_stmt *st, void *row, void *ctx)
{
    const struct sums *s = ctx;
    struct cudnn_call *k = row;
    memset(k, 0, sizeof *k);
    k->start = sqlite3_column_int64(st, 0);
    k->dur = sqlite3_column_int64(st, 1);
    k->calls = 1;
    k->errors = sqlite3_column_int64(st, 2) != 0;
    int64_t ext = sqlite3_column_int64(st, 3);
    const struct ext_sum *e = sqlite3_column_type(st, 3) != SQLITE_NULL && s->n
                                  ? bsearch(&ext, s->v, s->n, sizeof *s->v, rstats_cmp_i64)
                                  : NULL;
    k->gpu = e ? e->gpu : 0;
    k->kernels = e ? e->kernels : 0;
    k->shape = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 4);
    k->plan = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 5);
    k->op = sqlite3_column_type(st, 6) == SQLITE_NULL ? CUDNN_OP_NONE : sqlite3_column_int(st, 6);
    if (k->op < 0 || k->op >= CUDNN_OP_COUNT) k->op = CUDNN_OP_OTHER;
    k->phase = sqlite3_column_int(st, 7);
    k->dtype = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 8);
    k->linked = sqlite3_column_int(st, 9);
    k->fn_id = sqlite3_column_type(st, 10) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 10);
}

static void calls_order(sqlite3 *db, struct cudnn_run *r);

static void calls_load(sqlite3 *db, const struct run_phases *p, struct cudnn_run *r)
{
    if (!db_has_table(db, "cudnn_calls")) return;
    struct sums sums;
    sums.v = linked_load(db, p, &sums.n);
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT c.start, c.dur, c.status, c.ext_id, %s, c.plan, c.op_kind, c.phase,"
             " c.dtype, c.ext_id IS NOT NULL, c.fn_id FROM cudnn_calls c"
             " WHERE rowid BETWEEN ?1 AND ?2",
             db_has_column(db, "cudnn_calls", "shape") ? "c.shape" : "NULL");
    size_t n;
    r->v = db_scan(db, "cudnn_calls", sql, sizeof *r->v, call_decode, &sums, &n);
    free((void *)sums.v);
    if (n > INT_MAX) cli_fail("%zu cuDNN calls: more than this report reads", n);
    r->n = (int)n;
    calls_order(db, r);
}

/* The writer's folds (cudnn_call_sums), each a struct cudnn_call weighed by its calls. */
static void fold_decode(sqlite3_stmt *st, void *row, void *ctx)
{
    (void)ctx;
    struct cudnn_call *k = row;
    memset(k, 0, sizeof *k);
    k->fn_id = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 0);
    k->op = sqlite3_column_type(st, 1) == SQLITE_NULL ? CUDNN_OP_NONE : sqlite3_column_int(st, 1);
    if (k->op < 0 || k->op >= CUDNN_OP_COUNT) k->op = CUDNN_OP_OTHER;
    k->phase = sqlite3_column_int(st, 2);
    k->plan = sqlite3_column_type(st, 3) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 3);
    k->dtype = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
    k->shape = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 5);
    k->calls = sqlite3_column_int64(st, 6);
    k->errors = sqlite3_column_int64(st, 7);
    k->dur = sqlite3_column_int64(st, 8);
    /* a fold of kernels only (calls 0) has no start (the findings pass it by); the others are
     * ordered by their first call's start, a tie by its place among the calls as stored: as the
     * calls themselves are (calls_order) */
    k->start = k->calls ? sqlite3_column_int64(st, 9) : 0;
    k->seq = k->calls ? (int)sqlite3_column_int64(st, 10) + 1 : 0;
    k->linked = sqlite3_column_int64(st, 11);
    k->gpu = sqlite3_column_int64(st, 12);
    k->kernels = sqlite3_column_int64(st, 13);
    size_t bytes = (size_t)sqlite3_column_bytes(st, 14);
    const void *blob = sqlite3_column_blob(st, 14);
    if (blob && bytes >= sizeof *k->durs) {
        k->ndurs = bytes / sizeof *k->durs;
        if (!(k->durs = malloc(k->ndurs * sizeof *k->durs))) cli_fail("out of memory");
        memcpy(k->durs, blob, k->ndurs * sizeof *k->durs);
    }
}

/* 1 when the folds were read; 0 (nothing read) where they do not add up to the calls. */
static int folds_load(sqlite3 *db, struct cudnn_run *r)
{
    size_t n;
    r->v = db_scan(db, "cudnn_call_sums",
                   "SELECT fn_id, op_kind, phase, plan, dtype, shape, calls, errors, host,"
                   " first_start, first_seq, linked, gpu, kernels, durs FROM cudnn_call_sums"
                   " WHERE rowid BETWEEN ?1 AND ?2",
                   sizeof *r->v, fold_decode, NULL, &n);
    if (n > INT_MAX) cli_fail("%zu cuDNN folds: more than this report reads", n);
    r->n = (int)n;
    r->folded = 1;
    /* The folds stand for every call the writer stored, or not at all (a database edited by
     * hand); a fold of kernels only is placed after every call (a unique place each). */
    int64_t calls = 0, last = 0;
    for (int i = 0; i < r->n; i++) {
        calls += r->v[i].calls;
        if (r->v[i].seq > last) last = r->v[i].seq;
    }
    for (int i = 0; i < r->n; i++)
        if (!r->v[i].calls) r->v[i].seq = (int)++last;
    if (calls != db_int(db, "SELECT value FROM meta WHERE key = 'cudnn_calls'", -1) ||
        last > INT_MAX - 1) {
        for (int i = 0; i < r->n; i++) free(r->v[i].durs);
        free(r->v);
        r->v = NULL;
        r->n = r->folded = 0;
        return 0;
    }
    calls_order(db, r);
    return 1;
}

/* The writer's folds stand for the calls where it folded every call and joined every kernel
 * (meta cudnn_fold_lost 0; a run that did not finish has no such meta). */
static int folds_usable(sqlite3 *db)
{
    return db_has_table(db, "cudnn_call_sums") &&
           db_int(db, "SELECT count(*) FROM meta WHERE key = 'cudnn_call_sums'", 0) == 1 &&
           db_int(db, "SELECT value FROM meta WHERE key = 'cudnn_fold_lost'", -1) == 0;
}

/* The calls (or folds) in time order, their functions numbered in the order of their first call;
 * those whose function's name is not stored left out. */
static void calls_order(sqlite3 *db, struct cudnn_run *r)
{
    int sorted = 1;
    for (int i = 0; i < r->n; i++) {
        if (!r->folded) r->v[i].seq = i + 1; /* a fold's is its first call's (fold_decode) */
        if (i && (r->v[i].start < r->v[i - 1].start ||
                  (r->v[i].start == r->v[i - 1].start && r->v[i].seq < r->v[i - 1].seq)))
            sorted = 0;
    }
    if (!sorted) calls_sort(r->v, (size_t)r->n);
    /* The functions numbered in the order of their first call; a call whose function's name is
     * not stored is left out, as the join with strings left it out. */
    struct fn_ids names = {NULL, 0, r};
    /* (a fold of kernels only, calls 0, comes with a call of its function: numbered by that) */
    for (int i = 0; r->folded && i < r->n; i++)
        if (r->v[i].calls && r->v[i].fn_id) fn_of(db, &names, r->v[i].fn_id);
    int kept = 0;
    for (int i = 0; i < r->n; i++) {
        struct cudnn_call *k = &r->v[i];
        int fn = k->fn_id ? fn_of(db, &names, k->fn_id) : -1;
        if (fn < 0) {
            free(k->durs);
            continue;
        }
        k->fn = fn;
        k->role = role_of(r->fns[fn]);
        r->linked |= k->linked != 0;
        r->v[kept++] = *k;
    }
    r->n = kept;
    free(names.v);
}

/* Read only when some call was recorded: an older database need not have cudnn_plans at all. */
static void plans_load(sqlite3 *db, struct cudnn_run *r)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT p.plan, p.op_kind, p.dtype, s.value, p.first_ns,"
                                      " p.source FROM cudnn_plans p LEFT JOIN strings s"
                                      " ON s.id = p.detail_id");
    while (db_step(st)) {
        if (!(r->plans = realloc(r->plans, sizeof *r->plans * (size_t)(r->nplans + 1))))
            cli_fail("out of memory");
        struct cudnn_plan *x = &r->plans[r->nplans++];
        x->plan = sqlite3_column_int64(st, 0);
        x->op = sqlite3_column_int(st, 1);
        x->dtype = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
        snprintf(x->detail, sizeof x->detail, "%s",
                 sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
        x->first_ns = sqlite3_column_int64(st, 4);
        x->source = sqlite3_column_int(st, 5);
    }
    sqlite3_finalize(st);
}

/* ---- groups ------------------------------------------------------------------------------- */

/* The host times of one group's calls, for its p95. */
struct times {
    int64_t *v;
    size_t n, cap;
};

/* Groups being summed: each one's host times apart (host[i] is v[i]'s) where `p95` asks for
 * them (the calls table prints it; plans and the precision mix do not). */
struct acc {
    struct cudnn_group *v;
    struct times *host;
    int n, cap, p95;
};

static int group_of(struct acc *g, int64_t a, int64_t b, int64_t c)
{
    for (int i = 0; i < g->n; i++)
        if (g->v[i].key[0] == a && g->v[i].key[1] == b && g->v[i].key[2] == c) return i;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 32;
        g->v = realloc(g->v, sizeof *g->v * (size_t)g->cap);
        g->host = realloc(g->host, sizeof *g->host * (size_t)g->cap);
        if (!g->v || !g->host) cli_fail("out of memory");
    }
    struct cudnn_group *x = &g->v[g->n];
    memset(x, 0, sizeof *x);
    x->key[0] = a, x->key[1] = b, x->key[2] = c;
    x->gpu_pct = -1;
    x->plan_row = -1;
    g->host[g->n] = (struct times){NULL, 0, 0};
    return g->n++;
}

static void times_add(struct times *t, const int64_t *v, size_t n)
{
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->n + n) cap *= 2;
        if (!(t->v = realloc(t->v, cap * sizeof *t->v))) cli_fail("out of memory");
        t->cap = cap;
    }
    memcpy(t->v + t->n, v, n * sizeof *v);
    t->n += n;
}

/* A call, or a fold weighed by its calls (a fold of kernels only adds its kernels). */
static void group_add(struct acc *g, int i, const struct cudnn_call *k)
{
    struct cudnn_group *x = &g->v[i];
    x->calls += k->calls;
    x->errors += k->errors;
    x->host_total += k->dur;
    if (g->p95 && k->calls)
        times_add(&g->host[i], k->durs ? k->durs : &k->dur, k->durs ? k->ndurs : 1);
    /* an unlinked call has no kernels (gpu and kernels 0) */
    x->linked += k->linked, x->gpu += k->gpu, x->kernels += k->kernels;
}

/* The groups' host figures, then the groups in `cmp`'s order into *out (the sums kept). */
static void group_end(struct acc *g, int (*cmp)(const void *, const void *),
                      struct cudnn_group **out, int *n)
{
    for (int i = 0; i < g->n; i++) {
        struct cudnn_group *x = &g->v[i];
        if (x->calls) {
            x->host_avg = (double)x->host_total / (double)x->calls;
            x->host_p95 = rstats_rank_i64(g->host[i].v, g->host[i].n, 95);
        }
        free(g->host[i].v);
    }
    free(g->host);
    if (g->n) qsort(g->v, (size_t)g->n, sizeof *g->v, cmp);
    *out = g->v;
    *n = g->n;
}

static int cmp_key(const void *a, const void *b)
{
    const struct cudnn_group *x = a, *y = b;
    for (int i = 0; i < 3; i++) {
        /* An operation kind of 0 (no operation) sorts last. The precision list's key[0] is a
         * phase id, whose 0 (no phase) sorts the same way: as the report has always ordered it. */
        int64_t p = i == 0 && !x->key[0] ? CUDNN_OP_COUNT : x->key[i],
                q = i == 0 && !y->key[0] ? CUDNN_OP_COUNT : y->key[i];
        if (p != q) return (p > q) - (p < q);
    }
    return 0;
}

static int cmp_gpu(const void *a, const void *b)
{
    const struct cudnn_group *x = a, *y = b;
    if (x->gpu != y->gpu) return (x->gpu < y->gpu) - (x->gpu > y->gpu);
    if (x->calls != y->calls) return (x->calls < y->calls) - (x->calls > y->calls);
    return (x->key[0] > y->key[0]) - (x->key[0] < y->key[0]);
}

static void group_calls(struct cudnn_run *r)
{
    struct acc g = {0};
    g.p95 = 1;
    for (int i = 0; i < r->n; i++) {
        const struct cudnn_call *k = &r->v[i];
        group_add(&g, group_of(&g, k->op, k->fn, k->phase), k);
    }
    group_end(&g, cmp_key, &r->by_call, &r->nby_call);
}

/* Every plan cudnn_plans holds (executed or not), and every plan a compute call ran. */
static void group_plans(struct cudnn_run *r)
{
    struct acc g = {0};
    for (int i = 0; i < r->nplans; i++) group_of(&g, r->plans[i].plan, 0, 0);
    for (int i = 0; i < r->n; i++)
        if (r->v[i].plan && r->v[i].role == CUDNN_ROLE_COMPUTE)
            group_add(&g, group_of(&g, r->v[i].plan, 0, 0), &r->v[i]);
    group_end(&g, cmp_gpu, &r->by_plan, &r->nby_plan);
    for (int i = 0; i < r->nby_plan; i++)
        for (int k = 0; k < r->nplans && r->by_plan[i].plan_row < 0; k++)
            if (r->plans[k].plan == r->by_plan[i].key[0]) r->by_plan[i].plan_row = k;
}

static void group_precision(struct cudnn_run *r)
{
    struct acc g = {0};
    for (int i = 0; i < r->n; i++) {
        const struct cudnn_call *k = &r->v[i];
        if (k->op != CUDNN_OP_NONE && k->role == CUDNN_ROLE_COMPUTE)
            group_add(&g, group_of(&g, k->phase, k->op, k->dtype), k);
    }
    group_end(&g, cmp_key, &r->precision, &r->nprecision);
    for (int i = 0; i < r->nprecision; i++) {
        struct cudnn_group *x = &r->precision[i];
        int64_t phase_gpu = 0, phase_linked = 0;
        for (int k = 0; k < r->nprecision; k++)
            if (r->precision[k].key[0] == x->key[0])
                phase_gpu += r->precision[k].gpu, phase_linked += r->precision[k].linked;
        if (phase_linked && phase_gpu > 0) x->gpu_pct = 100.0 * (double)x->gpu / (double)phase_gpu;
    }
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

/* Warm-up, as the iterations define it (iterations.c: found from the data, or --warmup), per
 * series (a loop of its own: a model, a batch size): from its first iteration's start to its last
 * warm-up iteration's end, and never before its first iteration ends (the first call of a shape
 * searches there, however fast it was). The iterations are those the report counts (marks,
 * module calls, detected loops). A search is late when it falls inside a series' span (its first
 * start to its last end) past the warm-up of every series running then: between loops, a new
 * loop's set-up is no change of shapes. */
struct warm_span {
    int64_t first, warm_end, last;
};

static struct warm_span *series_warm_spans(const struct run_phases *p)
{
    struct warm_span *w = malloc((size_t)(p->series.n ? p->series.n : 1) * sizeof *w);
    if (!w) cli_fail("out of memory");
    for (int i = 0; i < p->series.n; i++) w[i] = (struct warm_span){-1, -1, -1};
    for (size_t k = 0; k < p->niters; k++) {
        const struct run_iter *x = &p->iters[k];
        if (x->series < 0 || x->series >= p->series.n) continue;
        struct warm_span *s = &w[x->series];
        int64_t e = x->start + x->lat;
        if (s->first < 0 || x->start < s->first) s->first = x->start;
        if (e > s->last) s->last = e;
        if (s->warm_end < 0 || (x->start == s->first && e > s->warm_end)) s->warm_end = e;
    }
    /* then the warm-up iterations' ends (the first iteration's is known by now) */
    for (size_t k = 0; k < p->niters; k++) {
        const struct run_iter *x = &p->iters[k];
        if (x->series < 0 || x->series >= p->series.n || x->steady || x->captured) continue;
        int64_t e = x->start + x->lat;
        if (e > w[x->series].warm_end) w[x->series].warm_end = e;
    }
    return w;
}

/* A call at t is late: inside a series' span past its warm-up, and in no series' warm-up. */
static int after_warm_up(const struct warm_span *w, int n, int64_t t)
{
    int inside = 0;
    for (int i = 0; i < n; i++) {
        if (w[i].first < 0 || t < w[i].first || t > w[i].last) continue;
        if (t <= w[i].warm_end) return 0;
        inside = 1;
    }
    return inside;
}

/* Some series has iterations: the warm-up is theirs, not the calls'. */
static int warm_spans_known(const struct run_phases *p)
{
    if (!p->niters) return 0;
    struct warm_span *w = series_warm_spans(p);
    int known = 0;
    for (int i = 0; i < p->series.n && !known; i++) known = w[i].first >= 0;
    free(w);
    return known;
}

/* The run's warm-up (the figure the cuDNN table shows): the earliest series' end of warm-up;
 * without iterations the first half of the cuDNN compute calls, every call after it late. */
static int64_t warm_up_end(const struct cudnn_run *r, const struct warm_span *w, int n)
{
    int64_t end = -1;
    for (int i = 0; i < n; i++)
        if (w[i].first >= 0 && (end < 0 || w[i].warm_end < end)) end = w[i].warm_end;
    if (end >= 0) return end;
    int compute = 0, seen = 0;
    for (int i = 0; i < r->n; i++) compute += r->v[i].role == CUDNN_ROLE_COMPUTE;
    for (int i = 0; i < r->n; i++)
        if (r->v[i].role == CUDNN_ROLE_COMPUTE && ++seen > compute / 2) return r->v[i].start;
    return INT64_MAX;
}

/* The shapes' figures, summed into the findings. */
static void shapes_sum(const struct shape_seen *shapes, int n, struct cudnn_findings *f)
{
    for (int i = 0; i < n; i++) {
        f->searched += shapes[i].searches > 0;
        f->researched += shapes[i].after_use > 0;
        f->plan_shapes += shapes[i].plans > 0;
        if (shapes[i].plans > f->max_plans) f->max_plans = shapes[i].plans;
        f->late_shapes += shapes[i].late;
    }
}

static void findings_compute(const struct run_phases *p, const struct cudnn_run *r,
                             struct cudnn_findings *f)
{
    memset(f, 0, sizeof *f);
    struct warm_span *spans = series_warm_spans(p);
    int nspans = p->niters ? p->series.n : 0;
    f->warm_end = warm_up_end(r, spans, nspans);
    int nshapes = 0;
    struct shape_seen *shapes = NULL;
    for (int i = 0; i < r->n; i++) {
        const struct cudnn_call *k = &r->v[i];
        if (!k->calls) continue; /* a fold of kernels only */
        f->calls += (int)k->calls;
        enum cudnn_role role = k->role;
        /* The searches, heuristic queries and plan builds are a row each where folded too. */
        int build = role == CUDNN_ROLE_FINALIZE && k->plan;
        /* Phases 4..9 are no_grad and inference_mode (phase.h). */
        if (role == CUDNN_ROLE_COMPUTE && k->op == CUDNN_OP_BN_TRAIN && k->phase >= 4) {
            f->bn_train += k->calls;
            if (k->phase < REPORT_MAX_PHASES) f->bn_train_by_phase[k->phase] += k->calls;
        }
        if (role == CUDNN_ROLE_COMPUTE && k->op == CUDNN_OP_CONV) f->conv_computes += k->calls;
        if (role == CUDNN_ROLE_HEURISTIC) f->heuristics += k->calls;
        if (role == CUDNN_ROLE_SEARCH) f->searches += k->calls, f->search_ns += k->dur;
        /* Plan build time has one definition: the host time of every cudnnBackendFinalize
         * (operation graphs, engine configs and plans: what building a plan costs), the sum of
         * the calls table's BackendFinalize rows; plan_builds counts the plans. */
        if (role == CUDNN_ROLE_FINALIZE) f->build_ns += k->dur;
        if (build) f->builds += k->calls;
        int late = nspans ? after_warm_up(spans, nspans, k->start) : k->start > f->warm_end;
        if ((role == CUDNN_ROLE_SEARCH || build) && late) f->late++, f->late_ns += k->dur;
        if (!k->shape || (role != CUDNN_ROLE_COMPUTE && role != CUDNN_ROLE_SEARCH && !build))
            continue;
        struct shape_seen *s = shape_of(&shapes, &nshapes, k->shape);
        if (role == CUDNN_ROLE_COMPUTE) {
            if (s->first_compute < 0) s->first_compute = k->start;
            continue;
        }
        s->searches += role == CUDNN_ROLE_SEARCH;
        s->plans += build;
        s->after_use += s->first_compute >= 0;
        if (s->first_search < 0) s->first_search = k->start, s->late = late;
    }
    shapes_sum(shapes, nshapes, f);
    free(shapes);
    free(spans);
}

/* ---- the run model's part ----------------------------------------------------------------- */

void cudnn_run_free(struct cudnn_run *r)
{
    if (!r) return;
    for (int i = 0; i < r->nfns; i++) free(r->fns[i]);
    for (int i = 0; r->folded && i < r->n; i++) free(r->v[i].durs);
    free(r->fns), free(r->v), free(r->by_call), free(r->by_plan), free(r->plans);
    free(r->precision);
    free(r);
}

static void cudnn_drop(void *r)
{
    cudnn_run_free(r);
}

const struct run_model run_model_cudnn = {"cudnn", cudnn_drop, 0};

const struct cudnn_run *run_cudnn(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_cudnn);
    if (!*slot) {
        struct cudnn_run *r = calloc(1, sizeof *r);
        if (!r) cli_fail("out of memory");
        /* The writer's folds where they stand for the calls and the warm-up is the iterations'
         * (without iterations it is half the compute calls, which only the calls give). */
        if (!folds_usable(db) || !warm_spans_known(p) || !folds_load(db, r)) calls_load(db, p, r);
        /* No call: no plan is read and the findings stay 0 (nothing is known), but every list
         * is there, empty. */
        if (r->n) {
            plans_load(db, r);
            findings_compute(p, r, &r->findings);
        }
        group_calls(r);
        group_plans(r);
        group_precision(r);
        *slot = r;
    }
    return *slot;
}

static int cmp_search(const void *a, const void *b)
{
    const struct cudnn_search *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static void searches_drop(void *x)
{
    struct cudnn_searches *c = x;
    if (c) free(c->v);
    free(c);
}

const struct run_model run_model_cudnn_searches = {"cudnn_searches", searches_drop, 1};

static void search_decode(sqlite3_stmt *st, void *row, void *ctx)
{
    (void)ctx;
    struct cudnn_search *x = row;
    x->start = sqlite3_column_int64(st, 0);
    x->dur = sqlite3_column_int64(st, 1);
    x->tid = sqlite3_column_int64(st, 2);
}

const struct cudnn_searches *cudnn_searches_get(sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_cudnn_searches);
    if (*slot) return *slot;
    struct cudnn_searches *c = calloc(1, sizeof *c);
    if (!c) cli_fail("out of memory");
    *slot = c;
    if (!db_has_table(db, "cudnn_calls")) return c;
    /* Where folded, these calls are a row each (tid set) of the folds (collectors/cudnn_fold.c). */
    int folded = folds_usable(db);
    c->v = db_scan(db, folded ? "cudnn_call_sums" : "cudnn_calls",
                   folded ? "SELECT first_start, host, tid FROM cudnn_call_sums WHERE tid IS NOT"
                            " NULL AND fn_id IN (SELECT id FROM strings WHERE value LIKE"
                            " 'cudnnFind%' OR value LIKE 'cudnnGet%Algorithm%' OR value ="
                            " 'cudnnBackendFinalize') AND rowid BETWEEN ?1 AND ?2"
                          : "SELECT start, dur, tid FROM cudnn_calls WHERE fn_id IN (SELECT id FROM"
                            " strings WHERE value LIKE 'cudnnFind%' OR value LIKE"
                            " 'cudnnGet%Algorithm%' OR value = 'cudnnBackendFinalize') AND rowid"
                            " BETWEEN ?1 AND ?2",
                   sizeof *c->v, search_decode, NULL, &c->n);
    int sorted = 1;
    for (size_t i = 1; i < c->n && sorted; i++) sorted = c->v[i].start >= c->v[i - 1].start;
    if (!sorted) qsort(c->v, c->n, sizeof *c->v, cmp_search);
    return c;
}
