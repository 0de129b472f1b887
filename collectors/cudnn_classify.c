/*
 * cudnn_classify.c: what a cuDNN call works on: the kind of operation, its data type and a shape
 * key (cudnn_internal.h). App side, lock-free, no allocation: everything lives in two fixed
 * open-addressing tables keyed by pointer (backend descriptors, handles).
 *
 * Backend plans are classified once, when they are finalized (or on their first execute when we
 * never saw them built), and the class is cached in the plan's slot. Two sources:
 *  - build: the program's own cudnnBackendSetAttribute calls. cuDNN 9.19 does not give an
 *    operation graph's nodes back (GetAttribute(CUDNN_ATTR_OPERATIONGRAPH_OPS) returns
 *    CUDNN_STATUS_NOT_SUPPORTED, checked on the build machine), so we classify the graph when the
 *    program sets its nodes, reading each node's tensors with cudnnBackendGetAttribute, and carry
 *    that class along the links the program sets: graph -> engine heuristics / engine -> engine
 *    config -> plan (heuristics results are followed through GetAttribute).
 *  - read: walking the finalized plan with cudnnBackendGetAttribute (plan -> engine config ->
 *    engine -> graph -> nodes), for plans built before we saw them, with a cuDNN that returns
 *    the nodes.
 * Our own calls into cuDNN go to the real functions directly, never through our wrappers.
 */
#include "registry.h"
#include "cudnn_internal.h"
#include "../profiler/clock.h"
#include "../profiler/ring.h"

#include <string.h>

/* ---- class words -------------------------------------------------------------------------- */

uint64_t ip_cudnn_class_pack(struct ip_cudnn_class c)
{
    return (uint64_t)c.kind | (uint64_t)c.dtype << 8 | (uint64_t)c.nops << 16 |
           (uint64_t)c.source << 24 | (uint64_t)c.mask << 32;
}

struct ip_cudnn_class ip_cudnn_class_unpack(uint64_t v)
{
    return (struct ip_cudnn_class){(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                                   (uint8_t)(v >> 24), (uint16_t)(v >> 32)};
}

/* ---- pointer tables ----------------------------------------------------------------------- */

struct slot {
    _Atomic uint64_t key;   /* 0 empty, 1 deleted */
    _Atomic uint64_t info;  /* descriptors: type + 1 | plan id << 32; handles: stream */
    _Atomic uint64_t cls;   /* descriptors: class word; handles: 1 */
    _Atomic uint64_t shape; /* descriptors: shape key */
};

#define DESC_SLOTS   16384
#define HANDLE_SLOTS 1024
#define PROBE_MAX    64
#define DELETED      1u

static struct slot desc_table[DESC_SLOTS];
static struct slot handle_table[HANDLE_SLOTS];
static _Atomic uint32_t next_plan_id = 1;

static uint64_t hash_ptr(uint64_t p)
{
    return (p >> 4) * 0x9e3779b97f4a7c15ull >> 20;
}

static struct slot *slot_find(struct slot *t, uint64_t n, const void *ptr)
{
    uint64_t key = (uint64_t)(uintptr_t)ptr, h = hash_ptr(key);
    if (key <= DELETED) return NULL;
    for (uint64_t i = 0; i < PROBE_MAX; i++) {
        struct slot *s = &t[(h + i) & (n - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key) return s;
        if (k == 0) return NULL;
    }
    return NULL;
}

/* The slot of ptr, claimed when absent; NULL when the table is full around it (counted). A slot
 * left by a descriptor destroyed while we were not looking is taken over as it is. */
static struct slot *slot_claim(struct slot *t, uint64_t n, const void *ptr)
{
    uint64_t key = (uint64_t)(uintptr_t)ptr, h = hash_ptr(key);
    if (key <= DELETED) return NULL;
    for (int attempt = 0; attempt < 4; attempt++) {
        struct slot *deleted = NULL;
        for (uint64_t i = 0; i < PROBE_MAX; i++) {
            struct slot *s = &t[(h + i) & (n - 1)];
            uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
            if (k == key) return s;
            if (k == DELETED && !deleted) deleted = s;
            if (k != 0 && i + 1 < PROBE_MAX) continue;
            struct slot *target = deleted ? deleted : (k == 0 ? s : NULL);
            uint64_t expect = deleted ? DELETED : 0;
            if (!target) break;
            /* Slots are zeroed when released, so a claimed slot starts clean. */
            if (atomic_compare_exchange_strong(&target->key, &expect, key)) return target;
            break; /* another thread took it: look again */
        }
    }
    atomic_fetch_add(&ip_cudnn_counters.table_full, 1);
    return NULL;
}

static void slot_release(struct slot *s)
{
    atomic_store(&s->info, 0);
    atomic_store(&s->cls, 0);
    atomic_store(&s->shape, 0);
    atomic_store_explicit(&s->key, DELETED, memory_order_release);
}

/* ---- handles ------------------------------------------------------------------------------ */

void ip_cudnn_handle_stream_set(cudnnHandle_t h, uint64_t stream)
{
    struct slot *s = slot_claim(handle_table, HANDLE_SLOTS, h);
    if (!s) return;
    atomic_store(&s->info, stream);
    atomic_store_explicit(&s->cls, 1, memory_order_release);
}

void ip_cudnn_handle_forget(cudnnHandle_t h)
{
    struct slot *s = slot_find(handle_table, HANDLE_SLOTS, h);
    if (s) slot_release(s);
}

int ip_cudnn_handle_stream(cudnnHandle_t h, uint64_t *stream)
{
    struct slot *s = slot_find(handle_table, HANDLE_SLOTS, h);
    if (!s || !atomic_load_explicit(&s->cls, memory_order_acquire)) return 0;
    *stream = atomic_load(&s->info);
    return 1;
}

/* ---- shape keys --------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, int64_t v)
{
    for (int i = 0; i < 8; i++) h = (h ^ (uint8_t)((uint64_t)v >> (8 * i))) * 0x100000001b3ull;
    return h;
}

#define FNV_START 0xcbf29ce484222325ull

/* Shape keys are stored as SQLite integers: 63 bits, never 0 (0 means unknown). */
static uint64_t shape_final(uint64_t h)
{
    h &= INT64_MAX;
    return h ? h : 1;
}

/* ---- the real functions we call ----------------------------------------------------------- */

typedef cudnnStatus_t (*create_fn)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
typedef cudnnStatus_t (*destroy_fn)(cudnnBackendDescriptor_t);
typedef cudnnStatus_t (*get_fn)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                                cudnnBackendAttributeType_t, int64_t, int64_t *, void *);

struct backend {
    create_fn create;
    destroy_fn destroy;
    get_fn get;
};

static int backend_get(struct backend *b)
{
    b->create = (create_fn)ip_cudnn_real(IP_CUDNN_FN_BACKEND_CREATE_DESC);
    b->destroy = (destroy_fn)ip_cudnn_real(IP_CUDNN_FN_BACKEND_DESTROY_DESC);
    b->get = (get_fn)ip_cudnn_real(IP_CUDNN_FN_BACKEND_GET_ATTR);
    return b->create && b->destroy && b->get;
}

/* ---- backend nodes ------------------------------------------------------------------------ */

struct node_info {
    int node; /* IP_CUDNN_NODE_* */
    uint8_t dtype;
    uint64_t shape;
};

/* A descriptor type's node, or -1 when it is no operation. */
static int node_of_type(int type)
{
    switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        return IP_CUDNN_NODE_CONV_FWD;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        return IP_CUDNN_NODE_CONV_BWD_DATA;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        return IP_CUDNN_NODE_CONV_BWD_FILTER;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        return IP_CUDNN_NODE_POINTWISE;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR:
        return IP_CUDNN_NODE_MATMUL;
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
        return IP_CUDNN_NODE_NORM_OTHER;
    case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
        return IP_CUDNN_NODE_NORM_BWD;
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR:
        return IP_CUDNN_NODE_BN_STATS;
    case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
        return IP_CUDNN_NODE_BN_BWD_WEIGHTS;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        return IP_CUDNN_NODE_REDUCTION;
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        return IP_CUDNN_NODE_SDPA_FWD;
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
        return IP_CUDNN_NODE_SDPA_BWD;
    case CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR:
        return IP_CUDNN_NODE_OTHER;
    default:
        return -1;
    }
}

/* The tensors that say what a node computes on: its main input first (data type, shape). */
static void node_inputs(int type, cudnnBackendAttributeName_t in[2])
{
    in[0] = in[1] = (cudnnBackendAttributeName_t)-1;
    switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
        in[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
        in[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
        in[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
        break;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_POINTWISE_XDESC;
        break;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_MATMUL_ADESC;
        in[1] = CUDNN_ATTR_OPERATION_MATMUL_BDESC;
        break;
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_NORM_FWD_XDESC;
        break;
    case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_NORM_BWD_XDESC;
        break;
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_GENSTATS_XDESC;
        break;
    case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC;
        break;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_REDUCTION_XDESC;
        break;
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC;
        in[1] = CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC;
        break;
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
        in[0] = CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC;
        in[1] = CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC;
        break;
    default:
        break;
    }
}

/* Read a finalized node: its kind (batch norm phase), its input's data type, a shape key. */
static struct node_info node_read(struct backend *b, int type, cudnnBackendDescriptor_t op,
                                  cudnnBackendDescriptor_t tensor)
{
    struct node_info n = {node_of_type(type), 0, 0};
    int64_t count;
    if (type == CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR) {
        cudnnBackendNormMode_t mode = CUDNN_LAYER_NORM;
        cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_INFERENCE;
        if (b->get(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &count,
                   &mode) == CUDNN_STATUS_SUCCESS &&
            mode == CUDNN_BATCH_NORM) {
            b->get(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &count,
                   &phase);
            n.node = phase == CUDNN_NORM_FWD_TRAINING ? IP_CUDNN_NODE_BN_TRAINING
                                                      : IP_CUDNN_NODE_BN_INFERENCE;
        }
    }
    cudnnBackendAttributeName_t in[2];
    node_inputs(type, in);
    uint64_t h = FNV_START;
    for (int i = 0; i < 2 && tensor; i++) {
        if ((int)in[i] < 0) continue;
        if (b->get(op, in[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &tensor) !=
            CUDNN_STATUS_SUCCESS)
            continue;
        cudnnDataType_t dt;
        int64_t dims[CUDNN_DIM_MAX], ndims = 0;
        if (i == 0 && b->get(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &count,
                             &dt) == CUDNN_STATUS_SUCCESS)
            n.dtype = (uint8_t)(dt + 1);
        if (b->get(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, CUDNN_DIM_MAX, &ndims,
                   dims) != CUDNN_STATUS_SUCCESS)
            continue;
        for (int64_t k = 0; k < ndims && k < CUDNN_DIM_MAX; k++) h = fnv(h, dims[k]);
        n.shape = 1;
    }
    /* Same key, same computation: the node, its data type and its inputs' dimensions. */
    if (n.shape) n.shape = fnv(fnv(h, n.node), n.dtype);
    return n;
}

/* The graph's kind: the node that decides it, by precedence; its data type is the graph's. */
static struct ip_cudnn_class graph_class(const struct node_info *n, int count, uint64_t *shape)
{
    static const struct {
        int node, kind;
    } order[] = {
        {IP_CUDNN_NODE_SDPA_FWD, IP_CUDNN_OP_ATTENTION},
        {IP_CUDNN_NODE_SDPA_BWD, IP_CUDNN_OP_ATTENTION},
        {IP_CUDNN_NODE_CONV_FWD, IP_CUDNN_OP_CONV_FWD},
        {IP_CUDNN_NODE_CONV_BWD_DATA, IP_CUDNN_OP_OTHER},
        {IP_CUDNN_NODE_CONV_BWD_FILTER, IP_CUDNN_OP_OTHER},
        {IP_CUDNN_NODE_BN_TRAINING, IP_CUDNN_OP_BN_TRAINING},
        {IP_CUDNN_NODE_BN_STATS, IP_CUDNN_OP_BN_TRAINING},
        {IP_CUDNN_NODE_BN_INFERENCE, IP_CUDNN_OP_BN_INFERENCE},
        {IP_CUDNN_NODE_MATMUL, IP_CUDNN_OP_MATMUL},
    };
    struct ip_cudnn_class c = {IP_CUDNN_OP_OTHER, 0, (uint8_t)count, IP_CUDNN_SRC_BUILD, 0};
    uint64_t h = FNV_START;
    int all_pointwise = count > 0, decided = -1, matmuls = 0, first_matmul = -1;
    for (int i = 0; i < count; i++) {
        c.mask |= (uint16_t)(1u << n[i].node);
        all_pointwise &= n[i].node == IP_CUDNN_NODE_POINTWISE;
        if (n[i].node == IP_CUDNN_NODE_MATMUL && !matmuls++) first_matmul = i;
        h = fnv(h, (int64_t)n[i].shape);
    }
    /* Attention as cudnn-frontend composes it without an SDPA node: Q.K^T, a softmax (its max
     * and sum are reductions) and a second matmul with V. */
    if (matmuls >= 2 && (c.mask & 1u << IP_CUDNN_NODE_REDUCTION))
        decided = first_matmul, c.kind = IP_CUDNN_OP_ATTENTION;
    for (size_t k = 0; k < sizeof order / sizeof order[0] && decided < 0; k++)
        for (int i = 0; i < count && decided < 0; i++)
            if (n[i].node == order[k].node) decided = i, c.kind = (uint8_t)order[k].kind;
    if (decided < 0 && all_pointwise) c.kind = IP_CUDNN_OP_POINTWISE;
    if (count) c.dtype = n[decided < 0 ? 0 : decided].dtype;
    *shape = shape_final(h);
    return c;
}

#define GRAPH_MAX_NODES 16

/* ---- build: following the program's own descriptors ---------------------------------------- */

static int tracked_type(int type)
{
    return node_of_type(type) >= 0 || type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR ||
           type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR || type == CUDNN_BACKEND_ENGINE_DESCRIPTOR ||
           type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR ||
           type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
}

static int slot_type(struct slot *s)
{
    return (int)(atomic_load(&s->info) & 0xff) - 1;
}

void ip_cudnn_track_create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t d)
{
    if (!tracked_type((int)type)) return;
    struct slot *s = slot_claim(desc_table, DESC_SLOTS, d);
    if (!s) return;
    atomic_store(&s->cls, 0);
    atomic_store(&s->shape, 0);
    atomic_store(&s->info, (uint64_t)type + 1);
}

void ip_cudnn_track_destroy(cudnnBackendDescriptor_t d)
{
    struct slot *s = slot_find(desc_table, DESC_SLOTS, d);
    if (s) slot_release(s);
}

static void copy_class(cudnnBackendDescriptor_t to, cudnnBackendDescriptor_t from)
{
    struct slot *f = slot_find(desc_table, DESC_SLOTS, from);
    uint64_t cls = f ? atomic_load(&f->cls) : 0;
    if (!cls) return;
    struct slot *t = slot_find(desc_table, DESC_SLOTS, to);
    if (!t) return;
    atomic_store(&t->shape, atomic_load(&f->shape));
    atomic_store(&t->cls, cls);
}

static void classify_graph(cudnnBackendDescriptor_t graph, int64_t count,
                           const cudnnBackendDescriptor_t *ops)
{
    struct slot *g = slot_find(desc_table, DESC_SLOTS, graph);
    struct backend b;
    if (!g || !backend_get(&b)) return;
    cudnnBackendDescriptor_t tensor = NULL;
    if (b.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &tensor) != CUDNN_STATUS_SUCCESS) tensor = NULL;
    struct node_info n[GRAPH_MAX_NODES];
    int k = 0;
    for (int64_t i = 0; i < count && k < GRAPH_MAX_NODES; i++) {
        struct slot *op = slot_find(desc_table, DESC_SLOTS, ops[i]);
        int type = op ? slot_type(op) : -1;
        if (node_of_type(type) < 0)
            n[k++] = (struct node_info){IP_CUDNN_NODE_OTHER, 0, 0};
        else
            n[k++] = node_read(&b, type, ops[i], tensor);
    }
    if (tensor) b.destroy(tensor);
    uint64_t shape;
    struct ip_cudnn_class c = graph_class(n, k, &shape);
    atomic_store(&g->shape, shape);
    atomic_store(&g->cls, ip_cudnn_class_pack(c));
}

void ip_cudnn_track_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, int64_t count,
                        const void *elements)
{
    if (count < 1 || !elements) return;
    const cudnnBackendDescriptor_t *e = elements;
    switch (name) {
    case CUDNN_ATTR_OPERATIONGRAPH_OPS:
        classify_graph(d, count, e);
        break;
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINECFG_ENGINE:
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        copy_class(d, e[0]);
        break;
    default:
        break;
    }
}

void ip_cudnn_track_get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, int64_t count,
                        const void *elements)
{
    if (name != CUDNN_ATTR_ENGINEHEUR_RESULTS || !elements) return;
    const cudnnBackendDescriptor_t *e = elements;
    for (int64_t i = 0; i < count; i++) copy_class(e[i], d);
}

/* ---- read: walking a finalized plan back to its nodes -------------------------------------- */

static const int node_types[] = {
    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR,
};

/* One step down: the descriptor (of type `type`) that `from`'s attribute points to. */
static cudnnBackendDescriptor_t follow(struct backend *b, cudnnBackendDescriptor_t from,
                                       cudnnBackendAttributeName_t attr, int type)
{
    cudnnBackendDescriptor_t to = NULL;
    int64_t count = 0;
    if (!from || b->create((cudnnBackendDescriptorType_t)type, &to) != CUDNN_STATUS_SUCCESS)
        return NULL;
    if (b->get(from, attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &to) == CUDNN_STATUS_SUCCESS &&
        count >= 1)
        return to;
    b->destroy(to);
    return NULL;
}

/* The graph's nodes: cuDNN fills only descriptors of the right type, so each node's type is
 * found by trying the node types in turn with the ones before it already known. */
static int read_nodes(struct backend *b, cudnnBackendDescriptor_t graph,
                      cudnnBackendDescriptor_t *ops, int *types)
{
    int64_t n = 0;
    if (b->get(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL) !=
            CUDNN_STATUS_SUCCESS ||
        n < 1)
        return 0;
    if (n > GRAPH_MAX_NODES) n = GRAPH_MAX_NODES;
    int k = 0;
    for (; k < n; k++) {
        types[k] = -1;
        for (size_t t = 0; t < sizeof node_types / sizeof *node_types && types[k] < 0; t++) {
            int64_t got = 0;
            if (b->create((cudnnBackendDescriptorType_t)node_types[t], &ops[k]) !=
                CUDNN_STATUS_SUCCESS)
                continue;
            if (b->get(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, k + 1,
                       &got, ops) == CUDNN_STATUS_SUCCESS &&
                got > k)
                types[k] = node_types[t];
            else
                b->destroy(ops[k]);
        }
        if (types[k] < 0) break;
    }
    return k;
}

static uint64_t read_back(cudnnBackendDescriptor_t plan, uint64_t *shape)
{
    struct backend b;
    if (!backend_get(&b)) return 0;
    cudnnBackendDescriptor_t cfg = follow(&b, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                          CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendDescriptor_t engine =
        follow(&b, cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t graph = follow(&b, engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                            CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnBackendDescriptor_t ops[GRAPH_MAX_NODES], tensor = NULL;
    int types[GRAPH_MAX_NODES];
    int n = graph ? read_nodes(&b, graph, ops, types) : 0;
    uint64_t cls = 0;
    if (n > 0) {
        struct node_info info[GRAPH_MAX_NODES];
        if (b.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &tensor) != CUDNN_STATUS_SUCCESS)
            tensor = NULL;
        for (int i = 0; i < n; i++) info[i] = node_read(&b, types[i], ops[i], tensor);
        struct ip_cudnn_class c = graph_class(info, n, shape);
        c.source = IP_CUDNN_SRC_READ;
        cls = ip_cudnn_class_pack(c);
        if (tensor) b.destroy(tensor);
    }
    for (int i = 0; i < n; i++) b.destroy(ops[i]);
    if (graph) b.destroy(graph);
    if (engine) b.destroy(engine);
    if (cfg) b.destroy(cfg);
    return cls;
}

/* ---- plans -------------------------------------------------------------------------------- */

void ip_cudnn_emit_plan(uint32_t plan, uint64_t cls, uint64_t shape, uint64_t ts)
{
    struct ip_ring *r;
    struct ip_ev_cudnn_plan *e = ip_ring_begin(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CUDNN, IP_EV_CUDNN_PLAN), sizeof *e, plan};
    e->ts = ts;
    e->shape = shape;
    e->cls = cls;
    ip_ring_commit(r, sizeof *e);
}

uint64_t ip_cudnn_desc_class(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape)
{
    struct slot *s = slot_find(desc_table, DESC_SLOTS, d);
    *plan = 0;
    *shape = 0;
    if (!s) return 0;
    uint64_t cls = atomic_load_explicit(&s->cls, memory_order_acquire);
    *plan = (uint32_t)(atomic_load(&s->info) >> 32);
    *shape = atomic_load(&s->shape);
    return cls;
}

int ip_cudnn_desc_is_plan(cudnnBackendDescriptor_t d)
{
    struct slot *s = slot_find(desc_table, DESC_SLOTS, d);
    return s && slot_type(s) == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
}

uint64_t ip_cudnn_plan_classify(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape)
{
    struct slot *s = slot_claim(desc_table, DESC_SLOTS, d);
    uint64_t cls = s ? atomic_load(&s->cls) : 0;
    *shape = s ? atomic_load(&s->shape) : 0;
    if (!cls) cls = read_back(d, shape);
    if (!cls)
        cls = ip_cudnn_class_pack(
            (struct ip_cudnn_class){IP_CUDNN_OP_UNKNOWN, 0, 0, IP_CUDNN_SRC_NONE, 0});
    *plan = 0;
    if (!s) {
        atomic_fetch_add(&ip_cudnn_counters.unclassified, 1);
        return cls;
    }
    *plan = atomic_fetch_add(&next_plan_id, 1);
    atomic_store(&s->shape, *shape);
    atomic_store(&s->cls, cls);
    atomic_store_explicit(&s->info,
                          (uint64_t)*plan << 32 | (CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR + 1),
                          memory_order_release);
    ip_cudnn_emit_plan(*plan, cls, *shape, ip_clock_now());
    return cls;
}

uint64_t ip_cudnn_plan_lookup(cudnnBackendDescriptor_t d, uint32_t *plan, uint64_t *shape)
{
    uint64_t cls = ip_cudnn_desc_class(d, plan, shape);
    if (*plan || !d) return cls;
    return ip_cudnn_plan_classify(d, plan, shape);
}

/* ---- legacy descriptors ------------------------------------------------------------------- */

typedef cudnnStatus_t (*tensor_get_fn)(const cudnnTensorDescriptor_t, int, cudnnDataType_t *, int *,
                                       int[], int[]);
typedef cudnnStatus_t (*filter_get_fn)(const cudnnFilterDescriptor_t, int, cudnnDataType_t *,
                                       cudnnTensorFormat_t *, int *, int[]);
typedef cudnnStatus_t (*conv_get_fn)(const cudnnConvolutionDescriptor_t, int, int *, int[], int[],
                                     int[], cudnnConvolutionMode_t *, cudnnDataType_t *);

uint8_t ip_cudnn_tensor_dtype(cudnnTensorDescriptor_t t, uint64_t *shape)
{
    tensor_get_fn get = (tensor_get_fn)ip_cudnn_real_sym("cudnnGetTensorNdDescriptor");
    cudnnDataType_t dt;
    int n = 0, dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    if (!t || !get || get(t, CUDNN_DIM_MAX, &dt, &n, dims, strides) != CUDNN_STATUS_SUCCESS)
        return 0;
    uint64_t h = fnv(FNV_START, dt);
    for (int i = 0; i < n && i < CUDNN_DIM_MAX; i++) h = fnv(h, dims[i]);
    if (shape) *shape = shape_final(h);
    return (uint8_t)(dt + 1);
}

uint64_t ip_cudnn_conv_shape(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, uint8_t *dtype)
{
    uint64_t h = 0;
    *dtype = ip_cudnn_tensor_dtype(x, &h);
    if (!*dtype) return 0;
    filter_get_fn fget = (filter_get_fn)ip_cudnn_real_sym("cudnnGetFilterNdDescriptor");
    conv_get_fn cget = (conv_get_fn)ip_cudnn_real_sym("cudnnGetConvolutionNdDescriptor");
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int n = 0, v[3][CUDNN_DIM_MAX];
    if (w && fget && fget(w, CUDNN_DIM_MAX, &dt, &fmt, &n, v[0]) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < n && i < CUDNN_DIM_MAX; i++) h = fnv(h, v[0][i]);
    cudnnConvolutionMode_t mode;
    if (conv && cget &&
        cget(conv, CUDNN_DIM_MAX - 2, &n, v[0], v[1], v[2], &mode, &dt) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < n && i < CUDNN_DIM_MAX - 2; i++)
            h = fnv(fnv(fnv(h, v[0][i]), v[1][i]), v[2][i]);
    return shape_final(h);
}

void ip_cudnn_classify_atfork_child(void)
{
    /* Descriptors and handles stay valid in the child (its memory is a copy); plan ids too, but
     * the child's database has no plan rows yet: forget that plans were classified. */
    for (size_t i = 0; i < DESC_SLOTS; i++) {
        uint64_t info = atomic_load(&desc_table[i].info);
        if (info >> 32) atomic_store(&desc_table[i].info, info & 0xffffffffu);
    }
}
