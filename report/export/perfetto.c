/*
 * perfetto.c: `infprof export --format perfetto`: the run as a Perfetto-native trace (protobuf
 * TracePackets of TrackEvents, https://perfetto.dev/docs/reference/synthetic-track-event), which
 * ui.perfetto.dev and trace_processor open directly, about 60 bytes per kernel where the JSON
 * trace takes several hundred.
 *
 * Tracks: the host process with a track per thread (NVTX push/pop ranges and marks, cuDNN and
 * CUDA API calls, which nest there) and, under each thread, its phases and its iterations; each
 * start/end NVTX range on a track of its own (they may overlap anything); the GPU process with a
 * track per (device, stream), its kernels, copies and memsets in time order; tensor memory
 * (allocated and reserved) as counters per device. Names are interned once per trace; kernel
 * names are demangled. Packets are written as they are made (one sequence, id 1).
 *
 * --max-mb caps the file: the host-side events are kept whole and GPU work is kept from the start
 * up to where the budget ends; what was left out is said on stderr and in the trace (a track
 * "infprof: trace cut").
 */
#include "export.h"
#include "../base/names.h"
#include "../base/proto.h"
#include "../../profiler/map.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Field numbers of Perfetto's protos (protos/perfetto/trace/...), those written here. */
/* clang-format off */
enum {
    TRACE_PACKET = 1,                                          /* Trace */
    PKT_TIMESTAMP = 8, PKT_SEQ_ID = 10, PKT_TRACK_EVENT = 11,  /* TracePacket */
    PKT_INTERNED = 12, PKT_SEQ_FLAGS = 13, PKT_TRACK_DESCRIPTOR = 60,
    SEQ_CLEARED = 1,                                           /* TracePacket.SequenceFlags */
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4,   /* TrackDescriptor */
    TD_PARENT = 5, TD_COUNTER = 8,
    PD_PID = 1, PD_NAME = 6,                                   /* ProcessDescriptor */
    THD_PID = 1, THD_TID = 2, THD_NAME = 5,                    /* ThreadDescriptor */
    CD_UNIT = 3, UNIT_SIZE_BYTES = 3,                          /* CounterDescriptor */
    TE_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10,         /* TrackEvent */
    TE_TRACK = 11, TE_COUNTER = 30, TE_CORRELATION = 52,
    TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3,            /* TrackEvent.Type */
    TYPE_COUNTER = 4,
    ID_EVENT_NAMES = 2, ID_ANNOTATION_NAMES = 3,               /* InternedData */
    IID = 1, IID_NAME = 2,                                     /* EventName, DebugAnnotationName */
    DA_NAME_IID = 1, DA_INT = 4,                               /* DebugAnnotation */
};
/* clang-format on */

/* Track keys: a kind in the high bits, the thread id, stream index or device below. Each track
 * gets the next small uuid when first used (track_of), so that events name it in a byte or two. */
#define TRACK_HOST       1ull
#define TRACK_GPU        2ull
#define TRACK_THREAD(t)  (1ull << 40 | (uint64_t)(t))
#define TRACK_PHASES(t)  (2ull << 40 | (uint64_t)(t))
#define TRACK_ITERS(t)   (3ull << 40 | (uint64_t)(t))
#define TRACK_NVTX(id)   (4ull << 40 | (uint64_t)(id))
#define TRACK_STREAM(i)  (5ull << 40 | (uint64_t)(i))
#define TRACK_COUNTER(k) (6ull << 40 | (uint64_t)(k))
#define TRACK_CUT        7ull

/* Interning keys: string ids of the database, or our own names. */
#define KEY_STRING(id) ((uint64_t)(id) + 1)
#define KEY_OWN(i)     (1ull << 62 | (uint64_t)(i))

/* Bytes a row takes, for the estimate and the cap (measured on the H100 fixtures: a slice's
 * begin 22 and end 14; a tensor memory row, one counter value, 20). */
#define SLICE_BYTES   38.0
#define COUNTER_BYTES 20.0

struct pf {
    struct export_ctx *c;
    FILE *f;
    void (*on_error)(int err);
    struct proto_buf pkt, ev, sub, sub2, names, out;
    uint64_t bytes, events, next_iid, next_uuid; /* events: slices, instants, values */
    struct ip_map iids;                          /* interning key -> iid */
    struct ip_map tracks;                        /* track uuid -> 1 once described */
    struct ip_map thread_names;                  /* tid -> string id + 1 */
    struct ip_map lane_end;                      /* (stream index, lane) -> end of its last slice */
    int first;
};

/* ---- packets ------------------------------------------------------------------------------ */

static void put_packet(struct pf *w)
{
    proto_reset(&w->out);
    proto_msg(&w->out, TRACE_PACKET, &w->pkt);
    if (w->f && fwrite(w->out.b, 1, w->out.n, w->f) != w->out.n) w->on_error(errno ? errno : EIO);
    w->bytes += w->out.n;
    proto_reset(&w->pkt);
}

/* Sequence fields. Interned names live in the incremental state of sequence 1: the first packet
 * clears it, and every packet that names an interned string is on it. Packets that name none
 * (slice ends, counter values) carry no sequence fields: trace_processor reads them without
 * any state, and orders packets of equal timestamps as they stand in the file, whatever their
 * sequence. SEQ_NEEDS_INCREMENTAL_STATE is left out: it only tells a reader which packets to
 * skip after a loss, and a file has none. Together that is 6 bytes a kernel. */
static void sequence(struct pf *w, int interned)
{
    if (!interned && !w->first) return;
    proto_uint(&w->pkt, PKT_SEQ_ID, 1);
    if (w->first) proto_uint(&w->pkt, PKT_SEQ_FLAGS, SEQ_CLEARED);
    w->first = 0;
}

/* The iid of a name (interned on first use: the InternedData rides on the next packet). */
static uint64_t intern(struct pf *w, uint64_t key, const char *name)
{
    uint64_t *slot = ip_map_put(&w->iids, key);
    if (!slot) cli_fail("out of memory");
    if (*slot) return *slot;
    *slot = ++w->next_iid;
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, IID, *slot);
    proto_str(&w->sub2, IID_NAME, name);
    proto_msg(&w->names, ID_EVENT_NAMES, &w->sub2);
    return *slot;
}

/* The database's string `id` into out (fallback when it is missing). */
static void db_string(struct pf *w, int64_t id, const char *fallback, char *out, size_t n)
{
    sqlite3_stmt *st = db_prepare(w->c->db, "SELECT value FROM strings WHERE id = ?");
    sqlite3_bind_int64(st, 1, id);
    const unsigned char *v = db_step(st) ? sqlite3_column_text(st, 0) : NULL;
    snprintf(out, n, "%s", v ? (const char *)v : fallback);
    sqlite3_finalize(st);
}

/* A string of the database by id, interned (kernel: demangled). */
static uint64_t intern_string(struct pf *w, int64_t id, const char *fallback, int kernel)
{
    uint64_t *known = ip_map_get(&w->iids, KEY_STRING(id));
    if (known && *known) return *known;
    char raw[4096], name[4096];
    db_string(w, id, fallback, raw, sizeof raw);
    if (kernel)
        name_demangled(raw, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", raw);
    return intern(w, KEY_STRING(id), name);
}

/* One TrackEvent packet from w->ev, with any names interned since the last packet. interned:
 * the event names an interned string. */
static void put_event(struct pf *w, int64_t ts, int interned)
{
    proto_uint(&w->pkt, PKT_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts));
    sequence(w, interned);
    proto_msg(&w->pkt, PKT_TRACK_EVENT, &w->ev);
    if (w->names.n) { /* InternedData: the names first used by this event */
        proto_msg(&w->pkt, PKT_INTERNED, &w->names);
        proto_reset(&w->names);
    }
    put_packet(w);
    proto_reset(&w->ev);
}

static void slice_begin(struct pf *w, uint64_t track, uint64_t name_iid)
{
    proto_uint(&w->ev, TE_TYPE, TYPE_BEGIN);
    proto_uint(&w->ev, TE_TRACK, track);
    proto_uint(&w->ev, TE_NAME_IID, name_iid);
}

static void slice_end(struct pf *w, uint64_t track, int64_t ts)
{
    proto_uint(&w->ev, TE_TYPE, TYPE_END);
    proto_uint(&w->ev, TE_TRACK, track);
    put_event(w, ts, 0);
}

/* A whole slice [start, end) (end < 0: left open, Perfetto shows it as not ended). */
static void slice(struct pf *w, uint64_t track, int64_t start, int64_t end, uint64_t name_iid,
                  int64_t correlation)
{
    w->events++;
    slice_begin(w, track, name_iid);
    if (correlation > 0) proto_uint(&w->ev, TE_CORRELATION, (uint64_t)correlation);
    put_event(w, start, 1);
    if (end >= 0) slice_end(w, track, end < start ? start : end);
}

/* ---- tracks, described on first use ------------------------------------------------------- */

/* The uuid of the track with this key; *fresh is set when it was just assigned (the caller
 * describes the track before its first event). */
static uint64_t track_of(struct pf *w, uint64_t key, int *fresh)
{
    uint64_t *uuid = ip_map_put(&w->tracks, key);
    if (!uuid) cli_fail("out of memory");
    *fresh = !*uuid;
    if (!*uuid) *uuid = ++w->next_uuid;
    return *uuid;
}

/* A TrackDescriptor packet: w->sub holds the process/thread/counter part (field `part`). It uses
 * w->ev and w->pkt: call it (through thread_track, stream_track, ...) before an event is begun. */
static void describe(struct pf *w, uint64_t uuid, uint64_t parent, const char *name, int part)
{
    proto_reset(&w->ev);
    proto_uint(&w->ev, TD_UUID, uuid);
    if (parent) proto_uint(&w->ev, TD_PARENT, parent);
    if (name) proto_str(&w->ev, TD_NAME, name);
    if (part) proto_msg(&w->ev, (uint32_t)part, &w->sub);
    proto_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
    put_packet(w);
    proto_reset(&w->ev);
    proto_reset(&w->sub);
}

static void describe_processes(struct pf *w)
{
    struct export_ctx *c = w->c;
    char *cmd = db_meta_text(c->db, "command"), name[128] = "host";
    if (cmd && *cmd) { /* the program's file name */
        size_t len = strcspn(cmd, " ");
        cmd[len] = 0;
        const char *slash = strrchr(cmd, '/');
        snprintf(name, sizeof name, "%s", slash && slash[1] ? slash + 1 : cmd);
    }
    free(cmd);
    proto_uint(&w->sub, PD_PID, (uint64_t)c->host_pid);
    proto_str(&w->sub, PD_NAME, name);
    int fresh;
    describe(w, track_of(w, TRACK_HOST, &fresh), 0, NULL, TD_PROCESS);
    proto_uint(&w->sub, PD_PID, (uint64_t)c->gpu_pid);
    proto_str(&w->sub, PD_NAME, "GPU");
    describe(w, track_of(w, TRACK_GPU, &fresh), 0, NULL, TD_PROCESS);
    sqlite3_stmt *st = db_prepare(c->db, "SELECT tid, name_id FROM threads");
    while (db_step(st)) {
        uint64_t *slot = ip_map_put(&w->thread_names, (uint64_t)sqlite3_column_int64(st, 0));
        if (slot && sqlite3_column_type(st, 1) != SQLITE_NULL)
            *slot = (uint64_t)sqlite3_column_int64(st, 1) + 1;
    }
    sqlite3_finalize(st);
}

static uint64_t thread_track(struct pf *w, int64_t tid)
{
    int fresh;
    uint64_t uuid = track_of(w, TRACK_THREAD(tid), &fresh);
    if (!fresh) return uuid;
    char plain[32], name[128];
    snprintf(plain, sizeof plain, "thread %lld", (long long)tid);
    uint64_t *sid = ip_map_get(&w->thread_names, (uint64_t)tid);
    if (sid && *sid)
        db_string(w, (int64_t)*sid - 1, plain, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", plain);
    proto_uint(&w->sub, THD_PID, (uint64_t)w->c->host_pid);
    proto_uint(&w->sub, THD_TID, (uint64_t)tid);
    proto_str(&w->sub, THD_NAME, name);
    describe(w, uuid, track_of(w, TRACK_HOST, &fresh), NULL, TD_THREAD);
    return uuid;
}

/* A named track under a thread (its phases, its iterations). */
static uint64_t thread_child(struct pf *w, uint64_t key, int64_t tid, const char *what)
{
    uint64_t parent = thread_track(w, tid);
    int fresh;
    uint64_t uuid = track_of(w, key, &fresh);
    if (fresh) describe(w, uuid, parent, what, 0);
    return uuid;
}

static uint64_t stream_track(struct pf *w, int64_t device, int64_t stream)
{
    int i = stream_index(w->c, device, stream);
    if (i < 0) return 0;
    int fresh;
    uint64_t uuid = track_of(w, TRACK_STREAM(i), &fresh);
    if (fresh) {
        char name[64];
        snprintf(name, sizeof name, "GPU %lld stream %lld", (long long)device, (long long)stream);
        describe(w, uuid, track_of(w, TRACK_GPU, &fresh), name, 0);
    }
    return uuid;
}

static uint64_t counter_track(struct pf *w, int device_type, int device_index, int reserved)
{
    int fresh;
    uint64_t uuid =
        track_of(w,
                 TRACK_COUNTER(((uint64_t)device_type << 16 | (uint64_t)device_index) << 1 |
                               (uint64_t)reserved),
                 &fresh);
    if (fresh) {
        char dev[32], name[96];
        device_name(device_type, device_index, dev, sizeof dev);
        snprintf(name, sizeof name, "tensor memory %s %s", reserved ? "reserved" : "allocated",
                 dev);
        proto_uint(&w->sub, CD_UNIT, UNIT_SIZE_BYTES);
        describe(w, uuid, track_of(w, device_type == 1 ? TRACK_GPU : TRACK_HOST, &fresh), name,
                 TD_COUNTER);
    }
    return uuid;
}

/* ---- the events ----------------------------------------------------------------------------- */

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

#define OPEN_END       "9223372036854775807"
#define I64(st, i)     sqlite3_column_int64((st), (i))
#define IS_NULL(st, i) (sqlite3_column_type((st), (i)) == SQLITE_NULL)

/* The source queries, each with its cut and the cap's limit. */
static void source_sql(const struct export_ctx *c, int which, int64_t limit, char *sql, size_t n)
{
    switch (which) {
    case 0:
        snprintf(sql, n, "SELECT t.tid, t.phase, t.start, t.end FROM phase_spans t WHERE 1%s",
                 cut(c, "t.start", "coalesce(t.end, " OPEN_END ")", "t.phase", limit));
        break;
    case 1:
        snprintf(sql, n, "SELECT t.rowid, t.tid, t.start, t.dur FROM iterations t WHERE 1%s",
                 cut(c, "t.start", "t.start + coalesce(t.dur, 0)", "t.phase", limit));
        break;
    case 2:
        snprintf(sql, n,
                 "SELECT t.id, t.tid, t.kind, t.start, t.end, t.text_id FROM nvtx_ranges t"
                 " WHERE 1%s",
                 cut(c, "t.start", "coalesce(t.end, " OPEN_END ")", "t.phase", limit));
        break;
    case 3:
        snprintf(sql, n, "SELECT t.start, t.dur, t.tid, t.fn_id FROM cudnn_calls t WHERE 1%s",
                 cut(c, "t.start", "t.start + t.dur", "t.phase", limit));
        break;
    case 4:
        snprintf(sql, n,
                 "SELECT t.start, t.dur, t.tid, t.name_id, t.corr FROM cuda_api t WHERE 1%s%s",
                 export_api_filter(c), cut(c, "t.start", "t.start + t.dur", "t.phase", limit));
        break;
    case 5:
        snprintf(sql, n,
                 "SELECT t.ts, t.device_type, t.device_index, t.allocated, t.reserved"
                 " FROM tensor_memory t WHERE 1%s",
                 cut(c, "t.ts", "t.ts", "t.phase", limit));
        break;
    default: {
        const char *k = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        const char *m = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        const char *s = cut(c, "t.start", "t.start + t.dur", "t.phase", limit);
        snprintf(sql, n,
                 "SELECT 0, t.start, t.dur, coalesce(g.device, 0), coalesce(g.stream, 0),"
                 " g.name_id, t.corr, 0, 0, 0 FROM kernels t JOIN launch_sigs g ON g.id = t.sig"
                 " WHERE 1%s UNION ALL"
                 " SELECT 1, t.start, t.dur, coalesce(t.device, 0), coalesce(t.stream, 0), NULL,"
                 " t.corr, t.copy_kind, t.src_kind, t.dst_kind FROM memcpy t WHERE 1%s"
                 " UNION ALL"
                 " SELECT 2, t.start, t.dur, coalesce(t.device, 0), coalesce(t.stream, 0), NULL,"
                 " t.corr, t.memory_kind, 0, 0 FROM memset t WHERE 1%s",
                 k, m, s);
    }
    }
}

enum { SRC_PHASES, SRC_ITERS, SRC_NVTX, SRC_CUDNN, SRC_API, SRC_MEMORY, SRC_GPU, SRC_COUNT };
_Static_assert(SRC_COUNT == PERFETTO_SOURCES, "export.h counts the sources");
static const char *const src_what[SRC_COUNT] = {"phase spans", "iterations",     "NVTX ranges",
                                                "cuDNN calls", "CUDA API calls", "tensor memory",
                                                "GPU work"};
static const char *const src_table[SRC_COUNT] = {
    "phase_spans", "iterations", "nvtx_ranges", "cudnn_calls", "cuda_api", "tensor_memory", NULL};

static int64_t src_rows(const struct export_ctx *c, int which, int64_t limit)
{
    if (src_table[which] && !db_has_table(c->db, src_table[which])) return 0;
    char sql[2048], q[2200];
    source_sql(c, which, limit, sql, sizeof sql);
    snprintf(q, sizeof q, "SELECT count(*) FROM (%s)", sql);
    return db_int(c->db, q, 0);
}

static uint64_t own_name(struct pf *w, uint64_t key, const char *name)
{
    return intern(w, KEY_OWN(key), name);
}

static void write_phases(struct pf *w, sqlite3_stmt *st)
{
    const struct export_ctx *c = w->c;
    int64_t tid = I64(st, 0), phase = I64(st, 1);
    const struct phase_info *ph = phase_by_id(c->phases, (int)phase);
    uint64_t name = own_name(w, 0x100 + (uint64_t)phase, ph ? ph->label : "phase unknown");
    uint64_t track = thread_child(w, TRACK_PHASES(tid), tid, "phases");
    int64_t end = IS_NULL(st, 3) ? (c->duration_ns > 0 ? c->duration_ns : -1) : I64(st, 3);
    slice(w, track, I64(st, 2), end, name, 0);
}

static void write_iteration(struct pf *w, sqlite3_stmt *st)
{
    int64_t tid = I64(st, 1), start = I64(st, 2);
    uint64_t track = thread_child(w, TRACK_ITERS(tid), tid, "iterations");
    uint64_t name = own_name(w, 1, "iteration");
    if (!ip_map_get(&w->iids, KEY_OWN(2))) { /* the annotation's name, interned once */
        uint64_t *done = ip_map_put(&w->iids, KEY_OWN(2));
        if (!done) cli_fail("out of memory");
        *done = 1;
        proto_reset(&w->sub2);
        proto_uint(&w->sub2, IID, 1);
        proto_str(&w->sub2, IID_NAME, "iteration id");
        proto_msg(&w->names, ID_ANNOTATION_NAMES, &w->sub2);
    }
    w->events++;
    slice_begin(w, track, name);
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, DA_NAME_IID, 1);
    proto_uint(&w->sub2, DA_INT, (uint64_t)I64(st, 0));
    proto_msg(&w->ev, TE_ANNOTATIONS, &w->sub2);
    put_event(w, start, 1);
    slice_end(w, track, start + I64(st, 3));
}

static void write_nvtx(struct pf *w, sqlite3_stmt *st)
{
    int64_t id = I64(st, 0), tid = I64(st, 1), kind = I64(st, 2), start = I64(st, 3);
    int64_t end = IS_NULL(st, 4) ? -1 : I64(st, 4);
    uint64_t name =
        IS_NULL(st, 5) ? own_name(w, 3, "(no text)") : intern_string(w, I64(st, 5), "(no text)", 0);
    if (kind == 3) {                           /* a mark */
        uint64_t track = thread_track(w, tid); /* first: describing it uses w->ev */
        proto_uint(&w->ev, TE_TYPE, TYPE_INSTANT);
        proto_uint(&w->ev, TE_TRACK, track);
        proto_uint(&w->ev, TE_NAME_IID, name);
        put_event(w, start, 1);
        w->events++;
    } else if (kind == 2) { /* start/end: a track of its own under the process */
        int fresh;
        uint64_t uuid = track_of(w, TRACK_NVTX(id), &fresh);
        if (fresh) describe(w, uuid, track_of(w, TRACK_HOST, &fresh), "NVTX start/end range", 0);
        slice(w, uuid, start, end, name, 0);
    } else {
        slice(w, thread_track(w, tid), start, end, name, 0);
    }
}

static void write_call(struct pf *w, sqlite3_stmt *st, const char *fallback, int64_t corr)
{
    int64_t start = I64(st, 0);
    uint64_t name = intern_string(w, I64(st, 3), fallback, 0);
    slice(w, thread_track(w, I64(st, 2)), start, start + I64(st, 1), name, corr);
}

struct counter_last {
    int64_t allocated[2][32], reserved[2][32];
};

static void write_memory(struct pf *w, sqlite3_stmt *st, struct counter_last *last)
{
    int type = (int)I64(st, 1), index = (int)I64(st, 2);
    if (type < 0 || type > 1 || index < 0 || index >= 32) return;
    for (int r = 0; r < 2; r++) {
        int64_t v = I64(st, 3 + r),
                *prev = r ? &last->reserved[type][index] : &last->allocated[type][index];
        if (IS_NULL(st, 3 + r) || v == *prev) continue;
        *prev = v;
        uint64_t track = counter_track(w, type, index, r); /* first: describing uses w->ev */
        proto_uint(&w->ev, TE_TYPE, TYPE_COUNTER);
        proto_uint(&w->ev, TE_TRACK, track);
        proto_uint(&w->ev, TE_COUNTER, (uint64_t)v);
        put_event(w, I64(st, 0), 0);
        w->events++;
    }
}

/* Work on one stream may overlap (Hopper's programmatic dependent launch starts a kernel before
 * the previous one ends): begin/end pairs on one track would then pair crosswise. Each slice goes
 * on the first of the stream's lanes that is free at its start: lane 0 is the stream's track,
 * lane k a child track "overlap k" under it. Slices arrive in start order. */
#define GPU_LANES 16
static uint64_t lane_track(struct pf *w, int64_t device, int64_t stream, int64_t start, int64_t end)
{
    uint64_t base = stream_track(w, device, stream);
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
    uint64_t uuid = track_of(w, TRACK_STREAM(i) | (uint64_t)lane << 32, &fresh);
    if (fresh) {
        char name[80];
        snprintf(name, sizeof name, "GPU %lld stream %lld (overlap %d)", (long long)device,
                 (long long)stream, lane);
        describe(w, uuid, base, name, 0);
    }
    return uuid;
}

static void write_gpu(struct pf *w, sqlite3_stmt *st)
{
    int kind = (int)I64(st, 0);
    int64_t start = I64(st, 1), end = start + I64(st, 2);
    uint64_t track = lane_track(w, I64(st, 3), I64(st, 4), start, end), name;
    if (!track) return;
    if (kind == 0) {
        name = intern_string(w, I64(st, 5), "kernel", 1);
    } else if (kind == 1) {
        int64_t ck = I64(st, 7) & 0xff, sk = I64(st, 8) & 0xf, dk = I64(st, 9) & 0xf;
        char text[96];
        snprintf(text, sizeof text, "Memcpy %s (%s -> %s)", export_copy_kind(ck),
                 export_memory_kind(sk), export_memory_kind(dk));
        name = own_name(w, 0x10000 | (uint64_t)(ck << 8 | sk << 4 | dk), text);
    } else {
        int64_t mk = I64(st, 7) & 0xf;
        char text[64];
        snprintf(text, sizeof text, "Memset (%s)", export_memory_kind(mk));
        name = own_name(w, 0x20000 | (uint64_t)mk, text);
    }
    slice(w, track, start, end, name, I64(st, 6));
}

static void run_source(struct pf *w, int which, int64_t limit)
{
    if (src_table[which] && !db_has_table(w->c->db, src_table[which])) return;
    char sql[2048], q[2100];
    source_sql(w->c, which, limit, sql, sizeof sql);
    /* In time order (the column of the start), so that slices of one track that touch end
     * before the next begins. */
    static const int start_col[SRC_COUNT] = {3, 3, 4, 1, 1, 1, 2};
    snprintf(q, sizeof q, "%s ORDER BY %d", sql, start_col[which]);
    sqlite3_stmt *st = db_prepare(w->c->db, q);
    struct counter_last last;
    memset(&last, 0, sizeof last);
    while (db_step(st)) switch (which) {
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
            write_memory(w, st, &last);
            break;
        default:
            write_gpu(w, st);
        }
    sqlite3_finalize(st);
}

/* ---- estimate, cap, write ----------------------------------------------------------------- */

double perfetto_estimate(struct export_ctx *c, double *events, double *bytes_of, double *events_of)
{
    double total = 512; /* descriptors of the processes */
    *events = 0;
    for (int i = 0; i < SRC_COUNT; i++) {
        double rows = (double)src_rows(c, i, INT64_MAX);
        int counter = i == SRC_MEMORY;
        events_of[i] = rows; /* a slice, or a counter value (reserved memory changes seldom) */
        bytes_of[i] = rows * (counter ? COUNTER_BYTES : SLICE_BYTES);
        total += bytes_of[i];
        *events += events_of[i];
    }
    return total;
}

const char *perfetto_source_what(int i)
{
    return i >= 0 && i < SRC_COUNT ? src_what[i] : NULL;
}

/* The cap: the time before which everything fits in max_mb, from the rows' starts counted in
 * CAP_BUCKETS buckets of the run; INT64_MAX when all fits. *left_out: the rows after it. */
#define CAP_BUCKETS 4096
static int64_t cap_limit(struct export_ctx *c, double max_mb, int64_t *left_out)
{
    *left_out = 0;
    if (max_mb <= 0) return INT64_MAX;
    double ev, bytes_of[SRC_COUNT], events_of[SRC_COUNT], cap = max_mb * 1048576.0;
    if (perfetto_estimate(c, &ev, bytes_of, events_of) <= cap) return INT64_MAX;
    int64_t span = c->duration_ns > 0 ? c->duration_ns : 0;
    if (span <= 0) /* an unfinished run: its last start */
        span =
            db_int(c->db,
                   "SELECT max(m) FROM (SELECT max(start) AS m FROM kernels UNION ALL"
                   " SELECT max(start) FROM phase_spans UNION ALL SELECT max(start) FROM memcpy)",
                   0) +
            1;
    static double bytes[CAP_BUCKETS];
    static int64_t rows[CAP_BUCKETS];
    memset(bytes, 0, sizeof bytes);
    memset(rows, 0, sizeof rows);
    static const int start_col[SRC_COUNT] = {2, 2, 3, 0, 0, 0, 1};
    for (int i = 0; i < SRC_COUNT; i++) {
        if (src_table[i] && !db_has_table(c->db, src_table[i])) continue;
        char sql[2048];
        source_sql(c, i, INT64_MAX, sql, sizeof sql);
        sqlite3_stmt *st = db_prepare(c->db, sql);
        while (db_step(st)) {
            int64_t t = I64(st, start_col[i]);
            int64_t b = t <= 0 ? 0 : t >= span ? CAP_BUCKETS - 1 : t / (span / CAP_BUCKETS + 1);
            bytes[b] += i == SRC_MEMORY ? COUNTER_BYTES : SLICE_BYTES;
            rows[b]++;
        }
        sqlite3_finalize(st);
    }
    double sum = 512; /* the process and thread descriptors */
    int k = 0;
    while (k < CAP_BUCKETS && sum + bytes[k] <= cap) sum += bytes[k++];
    for (int b = k; b < CAP_BUCKETS; b++) *left_out += rows[b];
    return (int64_t)k * (span / CAP_BUCKETS + 1);
}

uint64_t perfetto_write(struct export_ctx *c, FILE *f, double max_mb, void (*on_error)(int),
                        uint64_t *events)
{
    struct pf w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.f = f;
    w.on_error = on_error;
    w.first = 1;
    int64_t left_out;
    int64_t limit = cap_limit(c, max_mb, &left_out);
    describe_processes(&w);
    for (int i = 0; i < SRC_COUNT; i++) run_source(&w, i, limit);
    if (left_out > 0) {
        char what[160], at[32], cap[32];
        fmt_ns(at, sizeof at, (double)limit);
        fmt_bytes(cap, sizeof cap, max_mb * 1048576.0);
        snprintf(what, sizeof what, "%lld events from %s on left out (--max-mb: %s)",
                 (long long)left_out, at, cap);
        int fresh;
        uint64_t uuid = track_of(&w, TRACK_CUT, &fresh);
        describe(&w, uuid, track_of(&w, TRACK_GPU, &fresh), "infprof: trace cut", 0);
        proto_uint(&w.ev, TE_TYPE, TYPE_INSTANT);
        proto_uint(&w.ev, TE_TRACK, uuid);
        proto_uint(&w.ev, TE_NAME_IID, own_name(&w, 4, what));
        put_event(&w, limit, 1);
        fprintf(stderr,
                "infprof: the trace was cut: %s; raise --max-mb, or cut by --phase or"
                " --from/--to\n",
                what);
    }
    *events = w.events;
    proto_free(&w.pkt), proto_free(&w.ev), proto_free(&w.sub), proto_free(&w.sub2);
    proto_free(&w.names), proto_free(&w.out);
    ip_map_free(&w.iids), ip_map_free(&w.tracks), ip_map_free(&w.thread_names);
    ip_map_free(&w.lane_end);
    return w.bytes;
}
