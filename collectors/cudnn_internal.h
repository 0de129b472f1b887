/*
 * cudnn_internal.h: what the cuDNN collector's files share.
 *
 *   cudnn.c           app side: the interposed cuDNN functions and the per-call bookkeeping
 *                     (NVTX range, launch-event stamp, ring event)
 *   cudnn_real.c      app side: the real functions behind the wrappers, and the counters
 *   cudnn_classify.c  app side: descriptor and handle tables, classification of operation
 *                     graphs and execution plans, data types and shape keys
 *   cudnn_ingest.c    writer side: events -> cudnn_calls / cudnn_plans rows, metadata, status
 *   cudnn_fold.c      writer side: the calls folded per kind (cudnn_call_sums), with the GPU
 *                     time of their kernels, for a report that does not read every call
 *
 * Database codes (schema.sql): op_kind IP_CUDNN_OP_*, dtype is cudnnDataType_t (NULL unknown).
 */
#ifndef INFPROF_CUDNN_INTERNAL_H
#define INFPROF_CUDNN_INTERNAL_H

#include "../profiler/events.h"

#include <cudnn.h>
#include <stdatomic.h>
#include <stdint.h>

struct ip_store;

/* The functions we interpose, in the order of ip_cudnn_fn_names. */
enum ip_cudnn_fn {
    IP_CUDNN_FN_CREATE,
    IP_CUDNN_FN_DESTROY,
    IP_CUDNN_FN_SET_STREAM,
    IP_CUDNN_FN_BACKEND_FINALIZE,
    IP_CUDNN_FN_BACKEND_EXECUTE,
    IP_CUDNN_FN_CONV_FWD,
    IP_CUDNN_FN_CONV_BIAS_ACT_FWD,
    IP_CUDNN_FN_BN_FWD_INFERENCE,
    IP_CUDNN_FN_BN_FWD_TRAINING,
    IP_CUDNN_FN_BN_FWD_TRAINING_EX,
    IP_CUDNN_FN_FIND_CONV_FWD_ALGO,
    IP_CUDNN_FN_FIND_CONV_FWD_ALGO_EX,
    IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7,
    /* Tracked, never recorded as calls: they follow how plans are built. */
    IP_CUDNN_FN_BACKEND_CREATE_DESC,
    IP_CUDNN_FN_BACKEND_DESTROY_DESC,
    IP_CUDNN_FN_BACKEND_SET_ATTR,
    IP_CUDNN_FN_BACKEND_GET_ATTR,
    IP_CUDNN_FN_COUNT
};
#define IP_CUDNN_FN_RECORDED IP_CUDNN_FN_BACKEND_CREATE_DESC /* functions below: rows */

extern const char *const ip_cudnn_fn_names[IP_CUDNN_FN_COUNT];

/* Operation kinds (cudnn_calls.op_kind, cudnn_plans.op_kind). 0: the call is no operation. */
enum {
    IP_CUDNN_OP_NONE = 0,
    IP_CUDNN_OP_CONV_FWD = 1,
    IP_CUDNN_OP_BN_INFERENCE = 2,
    IP_CUDNN_OP_BN_TRAINING = 3,
    IP_CUDNN_OP_ATTENTION = 4,
    IP_CUDNN_OP_MATMUL = 5,
    IP_CUDNN_OP_POINTWISE = 6,
    IP_CUDNN_OP_OTHER = 7,
    IP_CUDNN_OP_UNKNOWN = 8, /* a plan we could not classify */
    IP_CUDNN_OP_COUNT
};

/* Backend operation node types, as bits of a graph's op mask (the plan's detail). */
enum {
    IP_CUDNN_NODE_CONV_FWD,
    IP_CUDNN_NODE_CONV_BWD_DATA,
    IP_CUDNN_NODE_CONV_BWD_FILTER,
    IP_CUDNN_NODE_POINTWISE,
    IP_CUDNN_NODE_MATMUL,
    IP_CUDNN_NODE_BN_INFERENCE, /* norm forward, batch norm, inference phase */
    IP_CUDNN_NODE_BN_TRAINING,  /* norm forward, batch norm, training phase */
    IP_CUDNN_NODE_NORM_OTHER,   /* layer, RMS, group, instance norm forward */
    IP_CUDNN_NODE_NORM_BWD,
    IP_CUDNN_NODE_BN_STATS, /* gen stats, BN finalize statistics (fused BN training) */
    IP_CUDNN_NODE_BN_BWD_WEIGHTS,
    IP_CUDNN_NODE_REDUCTION,
    IP_CUDNN_NODE_SDPA_FWD,
    IP_CUDNN_NODE_SDPA_BWD,
    IP_CUDNN_NODE_OTHER,
    IP_CUDNN_NODE_COUNT
};
extern const char *const ip_cudnn_node_names[IP_CUDNN_NODE_COUNT];

/* How a plan was classified (cudnn_plans.source). */
enum {
    IP_CUDNN_SRC_NONE = 0,  /* not classified */
    IP_CUDNN_SRC_BUILD = 1, /* from the descriptors the program built the plan from */
    IP_CUDNN_SRC_READ = 2,  /* read back from the plan with cudnnBackendGetAttribute */
};

/* A classification, packed so that it fits one atomic word of a table slot. 0: none. */
struct ip_cudnn_class {
    uint8_t kind;   /* IP_CUDNN_OP_* */
    uint8_t dtype;  /* cudnnDataType_t + 1, 0 unknown */
    uint8_t nops;   /* nodes in the graph */
    uint8_t source; /* IP_CUDNN_SRC_* */
    uint16_t mask;  /* IP_CUDNN_NODE_* bits */
};
uint64_t ip_cudnn_class_pack(struct ip_cudnn_class c);
struct ip_cudnn_class ip_cudnn_class_unpack(uint64_t v);

/* ---- ring events -------------------------------------------------------------------------- */

enum { IP_EV_CUDNN_CALL = 1, IP_EV_CUDNN_PLAN = 2 };

enum { IP_CUDNN_CALL_HAS_STREAM = 1 };

struct ip_ev_cudnn_call {
    struct ip_ev h; /* aux: enum ip_cudnn_fn */
    uint64_t start, end;
    uint64_t handle, stream;
    uint64_t ext_id; /* external correlation id pushed to CUPTI, 0 none */
    uint64_t shape;  /* shape key, 0 unknown */
    uint32_t plan;   /* our plan id, 0 none */
    int32_t status;
    uint8_t op_kind, dtype, phase, flags; /* dtype: cudnnDataType_t + 1 */
    uint32_t op; /* the thread's innermost PyTorch operator (opname.h), 0 none */
};

struct ip_ev_cudnn_plan {
    struct ip_ev h; /* aux: plan id */
    uint64_t ts;
    uint64_t shape;
    uint64_t cls; /* packed struct ip_cudnn_class */
};

/* ---- app side ----------------------------------------------------------------------------- */

/* cudnn_real.c. The real function behind each wrapper (resolved lazily, NULL when not found). */
void *ip_cudnn_real(enum ip_cudnn_fn fn);
/* A cuDNN function we call but do not wrap (descriptor getters), from the same library. */
void *ip_cudnn_real_sym(const char *name);
/* A wrapper whose real function is missing: counted, and the status the wrapper answers. */
cudnnStatus_t ip_cudnn_missing(enum ip_cudnn_fn fn);

/* Counters, read by the writer at finish. */
struct ip_cudnn_counters {
    _Atomic uint64_t nested;        /* calls made by cuDNN itself through an exported name */
    _Atomic uint64_t table_full;    /* descriptors or plans we could not track */
    _Atomic uint64_t unclassified;  /* plans executed without a classification */
    _Atomic uint64_t missing;       /* calls whose real function was not found */
    _Atomic uint32_t missing_first; /* enum ip_cudnn_fn + 1 of the first such call */
};
extern struct ip_cudnn_counters ip_cudnn_counters;

/* Tracking (cudnn_classify.c); all lock-free, callable from hooks. */
void ip_cudnn_track_create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t d);
void ip_cudnn_track_destroy(cudnnBackendDescriptor_t d);
void ip_cudnn_track_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, int64_t count,
                        const void *elements);
void ip_cudnn_track_get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, int64_t count,
                        const void *elements);
/* What a descriptor is known as: its class word (0 unknown), plan id and shape key. */
uint64_t ip_cudnn_desc_class(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape);
int ip_cudnn_desc_is_plan(cudnnBackendDescriptor_t d);
/* A finalized execution plan: classify it once (from what it was built from, else by reading
 * it back) and append its plan event. Returns its class word; *plan its id. */
uint64_t ip_cudnn_plan_classify(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape);
/* The plan of an execute: its class, classified now if never seen before. */
uint64_t ip_cudnn_plan_lookup(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape);

/* Handle -> stream. */
void ip_cudnn_handle_stream_set(cudnnHandle_t h, uint64_t stream);
void ip_cudnn_handle_forget(cudnnHandle_t h);
int ip_cudnn_handle_stream(cudnnHandle_t h, uint64_t *stream);

/* Legacy API: data type (+1, 0 unknown) of a tensor descriptor and a shape key of a
 * convolution (x, w, padding, strides, dilation). */
uint8_t ip_cudnn_tensor_dtype(cudnnTensorDescriptor_t t, uint64_t *shape);
uint64_t ip_cudnn_conv_shape(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, uint8_t *dtype);

void ip_cudnn_classify_atfork_child(void);

/* Append a call event as the wrappers do (also used by the fixture program). */
void ip_cudnn_emit_call(const struct ip_ev_cudnn_call *call);
/* Append a plan event for a class (also used by the fixture program). */
void ip_cudnn_emit_plan(uint32_t plan, uint64_t cls, uint64_t shape, uint64_t ts);

/* ---- writer side (cudnn_ingest.c) --------------------------------------------------------- */

void ip_cudnn_ingest_prepare(struct ip_store *s);
void ip_cudnn_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_cudnn_ingest_finish(struct ip_store *s);

/* ---- writer side (cudnn_fold.c): the calls folded per kind ------------------------------- */

void ip_cudnn_fold_prepare(void);
void ip_cudnn_fold_reset(void);
/* One call, as its cudnn_calls row (columns in that table's order), its function and its place
 * among the calls as stored (0, 1, ...). */
void ip_cudnn_fold_call(struct ip_store *s, uint32_t fn, const int64_t *row, int64_t seq);
/* The kinds' last rows and the meta (after CUPTI's last kernels). */
void ip_cudnn_fold_finish(struct ip_store *s);

#endif
