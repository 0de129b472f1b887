/*
 * cudnn_ingest.c: the cuDNN collector, writer side: call events become cudnn_calls rows, plan
 * events cudnn_plans rows (with a readable list of the plan's nodes), and at the end the
 * collector's counters and status go to the run metadata. Each call is folded too
 * (cudnn_fold.c); the report joins calls to their kernels itself (cudnn_calls.ext_id ->
 * external_corr -> kernels) where the fold is missing or incomplete.
 */
#include "cudnn_config.h"
#include "registry.h"
#include "cudnn_internal.h"
#include "../profiler/config.h"
#include "../profiler/opname.h"
#include "../profiler/store.h"

#include <stdio.h>
#include <string.h>

const char *const ip_cudnn_node_names[IP_CUDNN_NODE_COUNT] = {
    "conv_fwd", "conv_bwd_data", "conv_bwd_filter", "pointwise",
    "matmul",   "bn_inference",  "bn_training",     "norm",
    "norm_bwd", "bn_stats",      "bn_bwd_weights",  "reduction",
    "sdpa_fwd", "sdpa_bwd",      "other",
};

static struct {
    struct ip_batch *calls, *plans;
    int64_t fn_ids[IP_CUDNN_FN_COUNT]; /* interned names, 0 not yet */
    uint64_t ncalls, nplans;
} cw;

void ip_cudnn_ingest_prepare(struct ip_store *s)
{
    /* A forked child's writer starts from a copy of the parent's state: start clean. */
    memset(&cw, 0, sizeof cw);
    cw.calls = ip_batch_open(s, "cudnn_calls", 14);
    cw.plans = ip_batch_open(s, "cudnn_plans", 7);
    ip_cudnn_fold_prepare();
}

static int64_t or_null(int known, int64_t v)
{
    return known ? v : IP_NULL;
}

static void on_call(struct ip_store *s, uint32_t tid, const struct ip_ev_cudnn_call *e)
{
    uint32_t fn = e->h.aux;
    if (fn >= IP_CUDNN_FN_COUNT) return;
    if (!cw.fn_ids[fn]) cw.fn_ids[fn] = ip_store_intern_static(s, ip_cudnn_fn_names[fn]);
    int64_t *row = ip_batch_row(cw.calls);
    row[0] = ip_store_rel(s, e->start);
    row[1] = e->end >= e->start ? (int64_t)(e->end - e->start) : 0;
    row[2] = tid;
    row[3] = e->phase;
    row[4] = cw.fn_ids[fn];
    row[5] = e->status;
    row[6] = (int64_t)e->handle;
    row[7] = or_null(e->flags & IP_CUDNN_CALL_HAS_STREAM, (int64_t)e->stream);
    row[8] = or_null(e->op_kind != IP_CUDNN_OP_NONE, e->op_kind);
    row[9] = or_null(e->dtype != 0, (int64_t)e->dtype - 1);
    row[10] = or_null(e->plan != 0, e->plan);
    row[11] = or_null(e->ext_id != 0, (int64_t)e->ext_id);
    row[12] = or_null(e->shape != 0, (int64_t)e->shape);
    row[13] = ip_opname_string(s, e->op);
    ip_cudnn_fold_call(s, fn, row, (int64_t)cw.ncalls);
    cw.ncalls++;
}

/* "conv_fwd+pointwise, 3 nodes" */
static void plan_detail(struct ip_cudnn_class c, char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    for (int k = 0; k < IP_CUDNN_NODE_COUNT && o < n; k++)
        if (c.mask & (1u << k))
            o += (size_t)snprintf(out + o, n - o, "%s%s", o ? "+" : "", ip_cudnn_node_names[k]);
    if (o < n && c.nops)
        snprintf(out + o, n - o, "%s%u node%s", o ? ", " : "", c.nops, c.nops == 1 ? "" : "s");
    if (!out[0]) snprintf(out, n, "not classified");
}

static void on_plan(struct ip_store *s, const struct ip_ev_cudnn_plan *e)
{
    struct ip_cudnn_class c = ip_cudnn_class_unpack(e->cls);
    char detail[256];
    plan_detail(c, detail, sizeof detail);
    int64_t *row = ip_batch_row(cw.plans);
    row[0] = e->h.aux;
    row[1] = c.kind;
    row[2] = or_null(c.dtype != 0, (int64_t)c.dtype - 1);
    row[3] = ip_store_intern(s, detail, strlen(detail));
    row[4] = ip_store_rel(s, e->ts);
    row[5] = or_null(e->shape != 0, (int64_t)e->shape);
    row[6] = c.source;
    cw.nplans++;
}

void ip_cudnn_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    if ((ev->type & 0xff) == IP_EV_CUDNN_CALL && ev->size >= sizeof(struct ip_ev_cudnn_call))
        on_call(s, tid, (const struct ip_ev_cudnn_call *)ev);
    else if ((ev->type & 0xff) == IP_EV_CUDNN_PLAN && ev->size >= sizeof(struct ip_ev_cudnn_plan))
        on_plan(s, (const struct ip_ev_cudnn_plan *)ev);
}

void ip_cudnn_ingest_finish(struct ip_store *s)
{
    ip_cudnn_fold_finish(s);
    struct ip_cudnn_counters *k = &ip_cudnn_counters;
    uint64_t missing = atomic_load(&k->missing);
    uint32_t first = atomic_load(&k->missing_first);
    ip_store_meta_int(s, "cudnn_calls", (int64_t)cw.ncalls);
    ip_store_meta_int(s, "cudnn_plans", (int64_t)cw.nplans);
    ip_store_meta_int(s, "cudnn_nested_calls", (int64_t)atomic_load(&k->nested));
    ip_store_meta_int(s, "cudnn_untracked", (int64_t)atomic_load(&k->table_full));
    ip_store_meta_int(s, "cudnn_unclassified_plans", (int64_t)atomic_load(&k->unclassified));
    ip_store_meta_int(s, "cudnn_missing_calls", (int64_t)missing);
    if (!ip_cfg_group_int(&ip_cudnn_cfg, IP_CUDNN_CFG_ON) || (!cw.ncalls && !missing)) return;
    char why[160] = "";
    if (missing && first && first <= IP_CUDNN_FN_COUNT)
        snprintf(why, sizeof why,
                 "; real cuDNN functions not found (first %s): %llu calls"
                 " answered CUDNN_STATUS_NOT_INITIALIZED",
                 ip_cudnn_fn_names[first - 1], (unsigned long long)missing);
    ip_collector_status(IP_COLLECTOR_CUDNN, "on", "%llu calls, %llu plans%s",
                        (unsigned long long)cw.ncalls, (unsigned long long)cw.nplans, why);
}
