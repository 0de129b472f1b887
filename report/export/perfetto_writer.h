/*
 * perfetto_writer.h: the Perfetto writer's primitives (perfetto_writer.c: packets, interning,
 * tracks, time order), for perfetto_rows.c (the database's rows as events) and perfetto.c (the
 * sources merged in time order, the estimate, the cap). Not for other files: export.h declares
 * the writer's entry points.
 */
#ifndef INFPROF_PERFETTO_WRITER_H
#define INFPROF_PERFETTO_WRITER_H

#include "export.h"
#include "../base/proto.h"
#include "../../profiler/map.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

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
    ID_STRING_VALUES = 29,
    IID = 1, IID_NAME = 2,               /* EventName, DebugAnnotationName, InternedString */
    DA_NAME_IID = 1, DA_INT = 4, DA_STRING_IID = 17,           /* DebugAnnotation */
};
/* clang-format on */

/* Debug annotation names (DebugAnnotationName iids, interned on first use). */
enum { ANN_ITERATION_ID = 1, ANN_LAUNCH, ANN_BYTES, ANN_OPERATOR, ANN_COUNT };

/* Track keys: a kind in the high bits, the thread id, stream index or device below. Each track
 * gets the next small uuid when first used (pf_track_of), so that events name it in a byte or
 * two. */
#define TRACK_HOST       1ull
#define TRACK_GPU        2ull
#define TRACK_THREAD(t)  (1ull << 40 | (uint64_t)(t))
#define TRACK_PHASES(t)  (2ull << 40 | (uint64_t)(t))
#define TRACK_ITERS(t)   (3ull << 40 | (uint64_t)(t))
#define TRACK_NVTX(id)   (4ull << 40 | (uint64_t)(id))
#define TRACK_STREAM(i)  (5ull << 40 | (uint64_t)(i))
#define TRACK_COUNTER(k) (6ull << 40 | (uint64_t)(k))
#define TRACK_CUT        7ull
#define TRACK_OPS(t)     (8ull << 40 | (uint64_t)(t))

/* Interning keys: string ids of the database, our own names, interned annotation values. */
#define KEY_STRING(id) ((uint64_t)(id) + 1)
#define KEY_OWN(i)     (1ull << 62 | (uint64_t)(i))
#define KEY_VALUE(i)   (2ull << 62 | (uint64_t)(i))
#define KEY_OP(id)     (3ull << 62 | (uint64_t)(id)) /* an operator's name as a value */

/* A slice end not yet written: ends go out in time order, among the begins (perfetto.c). */
struct pf_end {
    int64_t ts;
    uint64_t seq, track; /* seq: the begin's order; of equal ends the later begun goes first */
};

struct pf {
    struct export_ctx *c;
    FILE *f;
    void (*on_error)(int err);
    struct proto_buf pkt, ev, sub, sub2, names, out;
    uint64_t bytes, events, next_iid, next_value_iid, next_uuid; /* events: slices, ... */
    struct ip_map iids;                                          /* interning key -> iid */
    struct ip_map tracks;                                        /* track key -> uuid */
    struct ip_map thread_names;                                  /* tid -> string id + 1 */
    struct ip_map lane_end; /* (stream index, lane) -> end of its last slice + 1 */
    struct pf_end *ends;    /* a heap, earliest first */
    size_t nends, cap_ends;
    uint64_t seq;
    unsigned annotation_named; /* bit k: annotation name k written */
    int first;
    sqlite3_stmt *sig; /* a launch signature's grid, block, ... by id (perfetto_rows.c) */
    sqlite3_stmt *op;  /* a string by id: the operator a kernel carries (perfetto_rows.c) */
    int64_t tensor_last[2][2][32]; /* tensor memory's last value + 1, [reserved][type][index] */
};

/* ---- perfetto_writer.c ---------------------------------------------------------------------- */

/* The iid of an event name (interned on first use: the InternedData rides on the next packet). */
uint64_t pf_intern(struct pf *w, uint64_t key, const char *name);
/* The iid of one of our own event names. */
uint64_t pf_own_name(struct pf *w, uint64_t key, const char *name);
/* The iid of a database string (kernel: demangled). */
uint64_t pf_intern_string(struct pf *w, int64_t id, const char *fallback, int kernel);
/* The iid of an interned annotation string value. */
uint64_t pf_intern_value(struct pf *w, uint64_t key, const char *value);
/* Append to w->ev a debug annotation: annotation name `ann` (ANN_*) with an int or an interned
 * string value (value_iid > 0). */
void pf_annotate_int(struct pf *w, int ann, int64_t v);
void pf_annotate_value(struct pf *w, int ann, uint64_t value_iid);
/* The database's string `id` into out (fallback when it is missing). */
void pf_db_string(struct pf *w, int64_t id, const char *fallback, char *out, size_t n);

/* An event begun in w->ev goes out at ts (interned: it names an interned string). */
void pf_put_event(struct pf *w, int64_t ts, int interned);
/* A slice: pf_slice_begin fills w->ev (annotations may follow), pf_slice_commit writes its begin
 * at start and queues its end (end < 0: left open, Perfetto shows it as not ended). */
void pf_slice_begin(struct pf *w, uint64_t track, uint64_t name_iid, int64_t correlation);
void pf_slice_commit(struct pf *w, uint64_t track, int64_t start, int64_t end);
/* Every held end at or before t (those at t before a begin at t: touching slices). */
void pf_ends_until(struct pf *w, int64_t t);

/* Tracks, described on first use. Call before an event is begun: describing uses w->ev. */
uint64_t pf_track_of(struct pf *w, uint64_t key, int *fresh);
/* The host and GPU processes, and the threads' names for their tracks. */
void pf_describe_processes(struct pf *w);
void pf_describe(struct pf *w, uint64_t uuid, uint64_t parent, const char *name, int part);
uint64_t pf_thread_track(struct pf *w, int64_t tid);
uint64_t pf_thread_child(struct pf *w, uint64_t key, int64_t tid, const char *what);
uint64_t pf_stream_track(struct pf *w, int64_t device, int64_t stream);
/* A counter track: name, under the GPU process (gpu) or the host one. */
uint64_t pf_counter_track(struct pf *w, uint64_t key, const char *name, int gpu);

#endif
