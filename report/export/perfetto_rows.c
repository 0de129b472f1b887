/*
 * perfetto_rows.c: the database's rows as Perfetto events (perfetto.c writes them): phases and
 * iterations under their thread, NVTX ranges and marks, cuDNN and CUDA API calls on the thread
 * tracks, tensor memory and device memory as counters, kernels, copies and memsets on their
 * stream's lanes with their arguments (a kernel's launch: grid, block, registers, shared memory
 * and phase, one interned string per launch signature; a transfer's bytes). A kernel's iteration
 * is not an argument (7 bytes a kernel): the iterations track above shows it, as in the JSON.
 */
#include "perfetto_rows.h"
#include "../base/names.h"

#include <stdlib.h>
#include <string.h>

#define OPEN_END       "9223372036854775807"
#define I64(st, i)     sqlite3_column_int64((st), (i))
#define IS_NULL(st, i) (sqlite3_column_type((st), (i)) == SQLITE_NULL)

/* export_cut_sql into one of a few buffers that live until the next few calls. */
static const char *cut(const struct export_ctx *c, const char *start, const char *end,
                       const char *phase, int64_t limit)
{
    static char sql[4][320];
    static int turn;
    char *s = sql[turn++ % 4];
    export_cut_sql(c, start, end, phase, limit, s, sizeof sql[0]);
    return s;
}

static const char *const src_what[SRC_COUNT] = {
    "phase spans",   "iterations",    "NVTX ranges",       "cuDNN calls", "CUDA API calls",
    "tensor memory", "device memory", "PyTorch operators", "GPU work"};
static const char *const src_table[SRC_COUNT] = {
    "phase_spans",   "iterations",      "nvtx_ranges",     "cudnn_calls", "cuda_api",
    "tensor_memory", "memory_segments", "torch_operators", "kernels"};
/* The columns of each row's start and of its duration or end (-1: none). */
static const int start_col[SRC_COUNT] = {2, 2, 3, 0, 0, 0, 0, 0, 1};

const char *pf_source_what(int which)
{
    return which >= 0 && which < SRC_COUNT ? src_what[which] : NULL;
}

int pf_source_present(const struct export_ctx *c, int which)
{
    return db_has_table(c->db, src_table[which]);
}

void pf_source_sql(const struct export_ctx *c, int which, int64_t limit, int ordered, char *sql,
                   size_t n)
{
    /* In time order, and of rows that start together the longer first (it holds the other). */
    static const char *const order[SRC_COUNT] = {" ORDER BY 3, coalesce(4, " OPEN_END ") DESC",
                                                 " ORDER BY 3, 4 DESC",
                                                 " ORDER BY 4, coalesce(5, " OPEN_END ") DESC",
                                                 " ORDER BY 1, 2 DESC",
                                                 " ORDER BY 1, 2 DESC",
                                                 " ORDER BY 1",
                                                 " ORDER BY 1, 5",
                                                 " ORDER BY 1, 2 DESC",
                                                 " ORDER BY 2, 3 DESC"};
    const char *o = ordered ? order[which] : "";
    switch (which) {
    case SRC_PHASES:
        snprintf(sql, n, "SELECT t.tid, t.phase, t.start, t.end FROM phase_spans t WHERE 1%s%s",
                 cut(c, "t.start", "coalesce(t.end, " OPEN_END ")", "t.phase", limit), o);
        break;
    case SRC_ITERS:
        snprintf(sql, n,
                 "SELECT t.rowid, t.tid, t.start, t.dur, t.series, t.name FROM iterations t"
                 " WHERE 1%s%s",
                 cut(c, "t.start", "t.start + coalesce(t.dur, 0)", "t.phase", limit), o);
        break;
    case SRC_NVTX:
        snprintf(sql, n,
                 "SELECT t.id, t.tid, t.kind, t.start, t.end, t.text_id FROM nvtx_ranges t"
                 " WHERE 1%s%s",
                 cut(c, "t.start", "coalesce(t.end, " OPEN_END ")", "t.phase", limit), o);
        break;
    case SRC_CUDNN:
        snprintf(sql, n, "SELECT t.start, t.dur, t.tid, t.fn_id FROM cudnn_calls t WHERE 1%s%s",
                 cut(c, "t.start", "t.start + t.dur", "t.phase", limit), o);
        break;
    case SRC_API:
        snprintf(sql, n,
                 "SELECT t.start, t.dur, t.tid, t.name_id, t.corr FROM cuda_api t WHERE 1%s%s%s",
                 export_api_filter(c), cut(c, "t.start", "t.start + t.dur", "t.phase", limit), o);
        break;
    case SRC_MEMORY:
        snprintf(sql, n,
                 "SELECT t.ts, t.device_type, t.device_index, t.allocated, t.reserved"
                 " FROM tensor_memory t WHERE " DB_TENSOR_TOTALS "%s%s",
                 cut(c, "t.ts", "t.ts", "t.phase", limit), o);
        break;
    case SRC_DEVICE_MEMORY: /* the running sum over every row, then the cut */
        snprintf(sql, n,
                 "SELECT t.ts, t.device, t.total, t.phase, t.r FROM (SELECT ts, device, phase,"
                 " rowid AS r, sum(CASE op WHEN 1 THEN bytes WHEN 2 THEN -bytes ELSE 0 END)"
                 " OVER (PARTITION BY device ORDER BY ts, rowid) AS total FROM memory_segments"
                 " WHERE memory_kind = 3) t WHERE 1%s%s",
                 cut(c, "t.ts", "t.ts", "t.phase", limit), o);
        break;
    case SRC_OPS:
        snprintf(sql, n,
                 "SELECT t.start, t.dur, t.tid, t.name_id, t.iter FROM torch_operators t"
                 " WHERE 1%s%s",
                 cut(c, "t.start", "t.start + t.dur", "t.phase", limit), o);
        break;
    default: {
        /* A kernel's operator (kernel_rows.op, schema 4): column 11. */
        int op = db_has_column(c->db, "kernel_rows", "op");
        const char *k = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        const char *m = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        const char *s = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        snprintf(sql, n,
                 "SELECT 0, t.start, t.dur, coalesce(g.device, 0), coalesce(g.stream, 0),"
                 " g.name_id, t.corr, t.sig, 0, 0, 0, %s FROM kernels t JOIN launch_sigs g"
                 " ON g.id = t.sig%s WHERE 1%s UNION ALL"
                 " SELECT 1, t.start, t.dur, coalesce(t.device, 0), coalesce(t.stream, 0), NULL,"
                 " t.corr, t.copy_kind, t.src_kind, t.dst_kind, t.bytes, NULL FROM memcpy t"
                 " WHERE 1%s UNION ALL"
                 " SELECT 2, t.start, t.dur, coalesce(t.device, 0), coalesce(t.stream, 0), NULL,"
                 " t.corr, t.memory_kind, 0, 0, t.bytes, NULL FROM memset t WHERE 1%s%s",
                 op ? "r.op" : "NULL", op ? " JOIN kernel_rows r ON r.rowid = t.rowid" : "", k, m,
                 s, o);
    }
    }
}

void pf_row_span(int which, sqlite3_stmt *st, int64_t *start, int64_t *end)
{
    int s = start_col[which];
    *start = I64(st, s);
    switch (which) {
    case SRC_PHASES:
    case SRC_NVTX:
        *end = IS_NULL(st, s + 1) ? INT64_MAX : I64(st, s + 1);
        break;
    case SRC_ITERS:
    case SRC_CUDNN:
    case SRC_API:
    case SRC_OPS:
    case SRC_GPU:
        *end = *start + I64(st, s + 1);
        break;
    default:
        *end = *start;
    }
}

static void write_phases(struct pf *w, sqlite3_stmt *st)
{
    const struct export_ctx *c = w->c;
    int64_t tid = I64(st, 0), phase = I64(st, 1);
    const struct phase_info *ph = phase_by_id(c->phases, (int)phase);
    uint64_t name = pf_own_name(w, 0x100 + (uint64_t)phase, ph ? ph->label : "phase unknown");
    uint64_t track = pf_thread_child(w, TRACK_PHASES(tid), tid, "phases");
    int64_t end = IS_NULL(st, 3) ? (c->duration_ns > 0 ? c->duration_ns : -1) : I64(st, 3);
    pf_slice_begin(w, track, name, 0);
    pf_slice_commit(w, track, I64(st, 2), end);
}

static void write_iteration(struct pf *w, sqlite3_stmt *st)
{
    int64_t tid = I64(st, 1), start = I64(st, 2);
    uint64_t track = pf_thread_child(w, TRACK_ITERS(tid), tid, "iterations");
    /* Named after its series (the report's shadow table, iterations_shadow), else "iteration". */
    const char *series = (const char *)sqlite3_column_text(st, 5);
    uint64_t name = series ? pf_own_name(w, 0x200000 + (uint64_t)I64(st, 4), series)
                           : pf_own_name(w, 1, "iteration");
    pf_slice_begin(w, track, name, 0);
    pf_annotate_int(w, ANN_ITERATION_ID, I64(st, 0));
    pf_slice_commit(w, track, start, start + I64(st, 3));
}

static void write_nvtx(struct pf *w, sqlite3_stmt *st)
{
    int64_t id = I64(st, 0), tid = I64(st, 1), kind = I64(st, 2), start = I64(st, 3);
    int64_t end = IS_NULL(st, 4) ? -1 : I64(st, 4);
    uint64_t name = IS_NULL(st, 5) ? pf_own_name(w, 3, "(no text)")
                                   : pf_intern_string(w, I64(st, 5), "(no text)", 0);
    if (kind == 3) {                              /* a mark */
        uint64_t track = pf_thread_track(w, tid); /* first: describing it uses w->ev */
        proto_uint(&w->ev, TE_TYPE, TYPE_INSTANT);
        proto_uint(&w->ev, TE_TRACK, track);
        proto_uint(&w->ev, TE_NAME_IID, name);
        pf_put_event(w, start, 1);
        w->events++;
        return;
    }
    uint64_t track;
    if (kind == 2) { /* start/end: a track of its own under the process */
        int fresh;
        track = pf_track_of(w, TRACK_NVTX(id), &fresh);
        if (fresh)
            pf_describe(w, track, pf_track_of(w, TRACK_HOST, &fresh), "NVTX start/end range", 0);
    } else {
        track = pf_thread_track(w, tid);
    }
    pf_slice_begin(w, track, name, 0);
    pf_slice_commit(w, track, start, end);
}

static void write_call(struct pf *w, sqlite3_stmt *st, const char *fallback, int64_t corr)
{
    int64_t start = I64(st, 0);
    uint64_t track = pf_thread_track(w, I64(st, 2));
    pf_slice_begin(w, track, pf_intern_string(w, I64(st, 3), fallback, 0), corr);
    pf_slice_commit(w, track, start, start + I64(st, 1));
}

static void counter_value(struct pf *w, uint64_t track, int64_t ts, int64_t v)
{
    proto_uint(&w->ev, TE_TYPE, TYPE_COUNTER);
    proto_uint(&w->ev, TE_TRACK, track);
    proto_uint(&w->ev, TE_COUNTER, (uint64_t)v);
    pf_put_event(w, ts, 0);
    w->events++;
}

/* Tensor memory (allocated and reserved) per device, each value where it changed. */
static void write_memory(struct pf *w, sqlite3_stmt *st)
{
    int type = (int)I64(st, 1), index = (int)I64(st, 2);
    int slot = index < 0 ? 0 : index; /* the CPU's device index is -1 */
    if (type < 0 || type > 1 || slot >= 32) return;
    for (int r = 0; r < 2; r++) {
        int64_t v = I64(st, 3 + r);
        if (IS_NULL(st, 3 + r) || v == w->tensor_last[r][type][slot] - 1) continue;
        w->tensor_last[r][type][slot] = v + 1;
        char dev[32], name[96];
        device_name(type, index, dev, sizeof dev);
        snprintf(name, sizeof name, "tensor memory %s %s", r ? "reserved" : "allocated", dev);
        uint64_t key = ((uint64_t)type << 16 | (uint64_t)slot) << 1 | (uint64_t)r;
        counter_value(w, pf_counter_track(w, key, name, type == 1), I64(st, 0), v);
    }
}

/* Device memory the CUDA allocator holds (CUPTI memory records), the JSON trace's "GPU n device
 * memory": the running sum per device, computed in SQL. */
static void write_device_memory(struct pf *w, sqlite3_stmt *st)
{
    int64_t device = I64(st, 1);
    if (device < 0 || device >= 64) return;
    char name[64];
    snprintf(name, sizeof name, "GPU %lld device memory", (long long)device);
    counter_value(w, pf_counter_track(w, 1ull << 32 | (uint64_t)device, name, 1), I64(st, 0),
                  I64(st, 2));
}

/* Work on one stream may overlap (Hopper's programmatic dependent launch starts a kernel before
 * the previous one ends): begin/end pairs on one track would then pair crosswise. Each slice goes
 * on the first of the stream's lanes that is free at its start: lane 0 is the stream's track,
 * lane k a child track "overlap k" under it. Slices arrive in start order. */
#define GPU_LANES 16
static uint64_t lane_track(struct pf *w, int64_t device, int64_t stream, int64_t start, int64_t end)
{
    uint64_t base = pf_stream_track(w, device, stream);
    int i = stream_index(w->c, device, stream);
    if (!base || i < 0) return 0;
    int lane = 0;
    uint64_t *last = NULL;
    for (; lane < GPU_LANES; lane++) {
        last = ip_map_put(&w->lane_end, ((uint64_t)i << 8 | (uint64_t)lane) + 1); /* never 0 */
        if (!last) cli_fail("out of memory");
        if (*last == 0 || (int64_t)(*last - 1) <= start) break;
    }
    if (lane == GPU_LANES) lane = GPU_LANES - 1; /* deeper than 16: the last lane, nested */
    *last = (uint64_t)end + 1;
    if (!lane) return base;
    int fresh;
    uint64_t uuid = pf_track_of(w, TRACK_STREAM(i) | (uint64_t)lane << 32, &fresh);
    if (fresh) {
        char name[80];
        snprintf(name, sizeof name, "GPU %lld stream %lld (overlap %d)", (long long)device,
                 (long long)stream, lane);
        pf_describe(w, uuid, base, name, 0);
    }
    return uuid;
}

/* A kernel's launch as one interned string: its phase, grid, block, registers, shared memory
 * (one per launch signature: the annotation costs a few bytes a kernel). */
static uint64_t launch_value(struct pf *w, int64_t sig)
{
    uint64_t *known = ip_map_get(&w->iids, KEY_VALUE(sig));
    if (known && *known) return *known;
    if (!w->sig)
        w->sig = db_prepare(w->c->db,
                            "SELECT grid_x, grid_y, grid_z, block_x, block_y, block_z, registers,"
                            " coalesce(static_smem, 0) + coalesce(dynamic_smem, 0), phase"
                            " FROM launch_sigs WHERE id = ?");
    sqlite3_reset(w->sig);
    sqlite3_bind_int64(w->sig, 1, sig);
    char text[256] = "?";
    if (db_step(w->sig)) {
        int64_t v[9];
        for (int i = 0; i < 9; i++) v[i] = sqlite3_column_int64(w->sig, i);
        const struct phase_info *ph = phase_by_id(w->c->phases, (int)v[8]);
        char phase[32] = "phase unknown";
        if (ph) phase_short_label(ph, phase, sizeof phase);
        snprintf(text, sizeof text,
                 "grid %lldx%lldx%lld, block %lldx%lldx%lld, %lld registers, %lld B shared, %s",
                 (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3],
                 (long long)v[4], (long long)v[5], (long long)v[6], (long long)v[7], phase);
    }
    return pf_intern_value(w, KEY_VALUE(sig), text);
}

/* An operator's name as an annotation value, interned once. */
static uint64_t op_value(struct pf *w, int64_t id)
{
    uint64_t *known = ip_map_get(&w->iids, KEY_OP(id));
    if (known && *known) return *known;
    if (!w->op) w->op = db_prepare(w->c->db, "SELECT value FROM strings WHERE id = ?");
    sqlite3_reset(w->op);
    sqlite3_bind_int64(w->op, 1, id);
    char text[256] = "?";
    if (db_step(w->op) && sqlite3_column_text(w->op, 0))
        snprintf(text, sizeof text, "%s", (const char *)sqlite3_column_text(w->op, 0));
    return pf_intern_value(w, KEY_OP(id), text);
}

/* A PyTorch operator call: on its thread's "operators" track, nested as it ran. */
static void write_op(struct pf *w, sqlite3_stmt *st)
{
    int64_t start = I64(st, 0), tid = I64(st, 2);
    uint64_t track = pf_thread_child(w, TRACK_OPS(tid), tid, "operators");
    pf_slice_begin(w, track, pf_intern_string(w, I64(st, 3), "operator", 0), 0);
    if (I64(st, 4)) pf_annotate_int(w, ANN_ITERATION_ID, I64(st, 4));
    pf_slice_commit(w, track, start, start + I64(st, 1));
}

static void write_gpu(struct pf *w, sqlite3_stmt *st)
{
    int kind = (int)I64(st, 0);
    int64_t start = I64(st, 1), end = start + I64(st, 2);
    uint64_t track = lane_track(w, I64(st, 3), I64(st, 4), start, end), name, launch = 0;
    if (!track) return;
    if (kind == 0) {
        name = pf_intern_string(w, I64(st, 5), "kernel", 1);
        launch = launch_value(w, I64(st, 7));
    } else if (kind == 1) {
        int64_t ck = I64(st, 7) & 0xff, sk = I64(st, 8) & 0xf, dk = I64(st, 9) & 0xf;
        char text[96];
        snprintf(text, sizeof text, "Memcpy %s (%s -> %s)", export_copy_kind(ck),
                 export_memory_kind(sk), export_memory_kind(dk));
        name = pf_own_name(w, 0x10000 | (uint64_t)(ck << 8 | sk << 4 | dk), text);
    } else {
        int64_t mk = I64(st, 7) & 0xf;
        char text[64];
        snprintf(text, sizeof text, "Memset (%s)", export_memory_kind(mk));
        name = pf_own_name(w, 0x20000 | (uint64_t)mk, text);
    }
    pf_slice_begin(w, track, name, I64(st, 6));
    if (kind == 0) {
        pf_annotate_value(w, ANN_LAUNCH, launch);
        if (!IS_NULL(st, 11)) pf_annotate_value(w, ANN_OPERATOR, op_value(w, I64(st, 11)));
    } else {
        pf_annotate_int(w, ANN_BYTES, I64(st, 10));
    }
    pf_slice_commit(w, track, start, end);
}

void pf_write_row(struct pf *w, int which, sqlite3_stmt *st)
{
    switch (which) {
    case SRC_PHASES:
        write_phases(w, st);
        break;
    case SRC_ITERS:
        write_iteration(w, st);
        break;
    case SRC_NVTX:
        write_nvtx(w, st);
        break;
    case SRC_CUDNN:
        write_call(w, st, "cuDNN call", 0);
        break;
    case SRC_API:
        write_call(w, st, "CUDA API call", I64(st, 4));
        break;
    case SRC_MEMORY:
        write_memory(w, st);
        break;
    case SRC_DEVICE_MEMORY:
        write_device_memory(w, st);
        break;
    case SRC_OPS:
        write_op(w, st);
        break;
    default:
        write_gpu(w, st);
    }
}

_Static_assert(SRC_COUNT == PERFETTO_SOURCES, "export.h counts the sources");
