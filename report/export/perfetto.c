/*
 * perfetto.c: `infprof export --format perfetto`: the run as a Perfetto-native trace (protobuf
 * TracePackets of TrackEvents, https://perfetto.dev/docs/reference/synthetic-track-event), which
 * ui.perfetto.dev and trace_processor open directly, well under 150 bytes per kernel where the
 * JSON trace takes several hundred (docs/export.md has the sizes of the H100 fixtures).
 *
 * Tracks: the host process with a track per thread (NVTX push/pop ranges and marks, cuDNN and
 * CUDA API calls, which nest there) and, under each thread, its phases and its iterations; each
 * start/end NVTX range on a track of its own (they may overlap anything); the GPU process with a
 * track per (device, stream) and a child track per overlap depth, its kernels, copies and
 * memsets with their arguments; tensor memory (allocated and reserved) and the CUDA allocator's
 * device memory as counters per device (perfetto_rows.c makes the events). Names and annotation
 * values are interned once per trace; kernel names are demangled. The sources are merged in
 * time order and slice ends are held back until their time comes, so the packets of every track
 * stand in time order in the file (one sequence, id 1).
 *
 * --max-mb caps the file: the host-side events are kept whole and GPU work is kept from the start
 * up to where the budget ends; what was left out is said on stderr and in the trace (a track
 * "infprof: trace cut").
 */
#include "perfetto.h"
#include "../base/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bytes a row takes, for the estimate and the cap (measured on the H100 fixtures: a slice's
 * begin 22 and end 14, a kernel's arguments 10 more; a memory row, one counter value, 20). */
#define SLICE_BYTES   38.0
#define GPU_BYTES     48.0
#define COUNTER_BYTES 20.0

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

/* One entry of an interned index (field `field` of InternedData), on the next packet. */
static void interned_entry(struct pf *w, uint32_t field, uint64_t iid, const char *text)
{
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, IID, iid);
    proto_str(&w->sub2, IID_NAME, text);
    proto_msg(&w->names, field, &w->sub2);
}

uint64_t pf_intern(struct pf *w, uint64_t key, const char *name)
{
    uint64_t *slot = ip_map_put(&w->iids, key);
    if (!slot) cli_fail("out of memory");
    if (*slot) return *slot;
    *slot = ++w->next_iid;
    interned_entry(w, ID_EVENT_NAMES, *slot, name);
    return *slot;
}

uint64_t pf_own_name(struct pf *w, uint64_t key, const char *name)
{
    return pf_intern(w, KEY_OWN(key), name);
}

uint64_t pf_intern_value(struct pf *w, uint64_t key, const char *value)
{
    uint64_t *slot = ip_map_put(&w->iids, key);
    if (!slot) cli_fail("out of memory");
    if (*slot) return *slot;
    *slot = ++w->next_value_iid; /* an index of its own */
    interned_entry(w, ID_STRING_VALUES, *slot, value);
    return *slot;
}

void pf_db_string(struct pf *w, int64_t id, const char *fallback, char *out, size_t n)
{
    sqlite3_stmt *st = db_prepare(w->c->db, "SELECT value FROM strings WHERE id = ?");
    sqlite3_bind_int64(st, 1, id);
    const unsigned char *v = db_step(st) ? sqlite3_column_text(st, 0) : NULL;
    snprintf(out, n, "%s", v ? (const char *)v : fallback);
    sqlite3_finalize(st);
}

uint64_t pf_intern_string(struct pf *w, int64_t id, const char *fallback, int kernel)
{
    uint64_t *known = ip_map_get(&w->iids, KEY_STRING(id));
    if (known && *known) return *known;
    char raw[4096], name[4096];
    pf_db_string(w, id, fallback, raw, sizeof raw);
    if (kernel)
        name_demangled(raw, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", raw);
    return pf_intern(w, KEY_STRING(id), name);
}

/* The annotation's name, interned on first use (fixed iids: ANN_*). */
static void annotation_name(struct pf *w, int ann)
{
    static const char *const names[ANN_COUNT] = {NULL, "iteration id", "launch", "bytes"};
    if (w->annotation_named & 1u << ann) return;
    w->annotation_named |= 1u << ann;
    interned_entry(w, ID_ANNOTATION_NAMES, (uint64_t)ann, names[ann]);
}

void pf_annotate_int(struct pf *w, int ann, int64_t v)
{
    annotation_name(w, ann);
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, DA_NAME_IID, (uint64_t)ann);
    proto_uint(&w->sub2, DA_INT, (uint64_t)v);
    proto_msg(&w->ev, TE_ANNOTATIONS, &w->sub2);
}

void pf_annotate_value(struct pf *w, int ann, uint64_t value_iid)
{
    annotation_name(w, ann);
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, DA_NAME_IID, (uint64_t)ann);
    proto_uint(&w->sub2, DA_STRING_IID, value_iid);
    proto_msg(&w->ev, TE_ANNOTATIONS, &w->sub2);
}

void pf_put_event(struct pf *w, int64_t ts, int interned)
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

/* ---- slice ends, in time order -------------------------------------------------------------- */

/* Whether end a goes out before end b: the earlier first; of equal ones, the later begun (the
 * inner slice of two that end together). */
static int end_before(const struct pf_end *a, const struct pf_end *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->seq > b->seq);
}

static void end_push(struct pf *w, struct pf_end e)
{
    if (w->nends == w->cap_ends) {
        size_t cap = w->cap_ends ? 2 * w->cap_ends : 256;
        struct pf_end *v = realloc(w->ends, cap * sizeof *v);
        if (!v) cli_fail("out of memory");
        w->ends = v, w->cap_ends = cap;
    }
    size_t i = w->nends++;
    while (i && end_before(&e, &w->ends[(i - 1) / 2])) {
        w->ends[i] = w->ends[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->ends[i] = e;
}

static struct pf_end end_pop(struct pf *w)
{
    struct pf_end top = w->ends[0], last = w->ends[--w->nends];
    size_t i = 0, n = w->nends;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= n) break;
        if (k + 1 < n && end_before(&w->ends[k + 1], &w->ends[k])) k++;
        if (!end_before(&w->ends[k], &last)) break;
        w->ends[i] = w->ends[k];
        i = k;
    }
    if (n) w->ends[i] = last;
    return top;
}

/* Every held end at or before t (those at t before a begin at t: touching slices). */
static void ends_until(struct pf *w, int64_t t)
{
    while (w->nends && w->ends[0].ts <= t) {
        struct pf_end e = end_pop(w);
        proto_reset(&w->ev);
        proto_uint(&w->ev, TE_TYPE, TYPE_END);
        proto_uint(&w->ev, TE_TRACK, e.track);
        pf_put_event(w, e.ts, 0);
    }
}

void pf_slice_begin(struct pf *w, uint64_t track, uint64_t name_iid, int64_t correlation)
{
    proto_uint(&w->ev, TE_TYPE, TYPE_BEGIN);
    proto_uint(&w->ev, TE_TRACK, track);
    proto_uint(&w->ev, TE_NAME_IID, name_iid);
    if (correlation > 0) proto_uint(&w->ev, TE_CORRELATION, (uint64_t)correlation);
}

void pf_slice_commit(struct pf *w, uint64_t track, int64_t start, int64_t end)
{
    w->events++;
    pf_put_event(w, start, 1);
    if (end >= 0) end_push(w, (struct pf_end){end < start ? start : end, ++w->seq, track});
}

/* ---- tracks, described on first use ------------------------------------------------------- */

/* The uuid of the track with this key; *fresh is set when it was just assigned (the caller
 * describes the track before its first event). */
uint64_t pf_track_of(struct pf *w, uint64_t key, int *fresh)
{
    uint64_t *uuid = ip_map_put(&w->tracks, key);
    if (!uuid) cli_fail("out of memory");
    *fresh = !*uuid;
    if (!*uuid) *uuid = ++w->next_uuid;
    return *uuid;
}

/* A TrackDescriptor packet: w->sub holds the process/thread/counter part (field `part`). It uses
 * w->ev and w->pkt: call it (through thread_track, stream_track, ...) before an event is begun. */
void pf_describe(struct pf *w, uint64_t uuid, uint64_t parent, const char *name, int part)
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
    pf_describe(w, pf_track_of(w, TRACK_HOST, &fresh), 0, NULL, TD_PROCESS);
    proto_uint(&w->sub, PD_PID, (uint64_t)c->gpu_pid);
    proto_str(&w->sub, PD_NAME, "GPU");
    pf_describe(w, pf_track_of(w, TRACK_GPU, &fresh), 0, NULL, TD_PROCESS);
    sqlite3_stmt *st = db_prepare(c->db, "SELECT tid, name_id FROM threads");
    while (db_step(st)) {
        uint64_t *slot = ip_map_put(&w->thread_names, (uint64_t)sqlite3_column_int64(st, 0));
        if (slot && sqlite3_column_type(st, 1) != SQLITE_NULL)
            *slot = (uint64_t)sqlite3_column_int64(st, 1) + 1;
    }
    sqlite3_finalize(st);
}

uint64_t pf_thread_track(struct pf *w, int64_t tid)
{
    int fresh;
    uint64_t uuid = pf_track_of(w, TRACK_THREAD(tid), &fresh);
    if (!fresh) return uuid;
    char plain[32], name[128];
    snprintf(plain, sizeof plain, "thread %lld", (long long)tid);
    uint64_t *sid = ip_map_get(&w->thread_names, (uint64_t)tid);
    if (sid && *sid)
        pf_db_string(w, (int64_t)*sid - 1, plain, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", plain);
    proto_uint(&w->sub, THD_PID, (uint64_t)w->c->host_pid);
    proto_uint(&w->sub, THD_TID, (uint64_t)tid);
    proto_str(&w->sub, THD_NAME, name);
    pf_describe(w, uuid, pf_track_of(w, TRACK_HOST, &fresh), NULL, TD_THREAD);
    return uuid;
}

/* A named track under a thread (its phases, its iterations). */
uint64_t pf_thread_child(struct pf *w, uint64_t key, int64_t tid, const char *what)
{
    uint64_t parent = pf_thread_track(w, tid);
    int fresh;
    uint64_t uuid = pf_track_of(w, key, &fresh);
    if (fresh) pf_describe(w, uuid, parent, what, 0);
    return uuid;
}

uint64_t pf_stream_track(struct pf *w, int64_t device, int64_t stream)
{
    int i = stream_index(w->c, device, stream);
    if (i < 0) return 0;
    int fresh;
    uint64_t uuid = pf_track_of(w, TRACK_STREAM(i), &fresh);
    if (fresh) {
        char name[64];
        snprintf(name, sizeof name, "GPU %lld stream %lld", (long long)device, (long long)stream);
        pf_describe(w, uuid, pf_track_of(w, TRACK_GPU, &fresh), name, 0);
    }
    return uuid;
}

uint64_t pf_counter_track(struct pf *w, uint64_t key, const char *name, int gpu)
{
    int fresh;
    uint64_t uuid = pf_track_of(w, TRACK_COUNTER(key), &fresh);
    if (fresh) {
        proto_uint(&w->sub, CD_UNIT, UNIT_SIZE_BYTES);
        pf_describe(w, uuid, pf_track_of(w, gpu ? TRACK_GPU : TRACK_HOST, &fresh), name,
                    TD_COUNTER);
    }
    return uuid;
}

/* ---- estimate, cap, write ----------------------------------------------------------------- */

static double row_bytes(int which)
{
    return which == SRC_MEMORY || which == SRC_DEVICE_MEMORY ? COUNTER_BYTES
           : which == SRC_GPU                                ? GPU_BYTES
                                                             : SLICE_BYTES;
}

static int64_t src_rows(const struct export_ctx *c, int which, int64_t limit)
{
    if (!pf_source_present(c, which)) return 0;
    char sql[2048], q[2200];
    pf_source_sql(c, which, limit, 0, sql, sizeof sql);
    snprintf(q, sizeof q, "SELECT count(*) FROM (%s)", sql);
    return db_int(c->db, q, 0);
}

double perfetto_estimate(struct export_ctx *c, double *events, double *bytes_of, double *events_of)
{
    double total = 512; /* descriptors of the processes */
    *events = 0;
    for (int i = 0; i < SRC_COUNT; i++) {
        events_of[i] = (double)src_rows(c, i, INT64_MAX); /* a slice, or a counter value */
        bytes_of[i] = events_of[i] * row_bytes(i);
        total += bytes_of[i];
        *events += events_of[i];
    }
    return total;
}

const char *perfetto_source_what(int i)
{
    return pf_source_what(i);
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
    for (int i = 0; i < SRC_COUNT; i++) {
        if (!pf_source_present(c, i)) continue;
        char sql[2048];
        pf_source_sql(c, i, INT64_MAX, 0, sql, sizeof sql);
        sqlite3_stmt *st = db_prepare(c->db, sql);
        while (db_step(st)) {
            int64_t t, end;
            pf_row_span(i, st, &t, &end);
            int64_t b = t <= 0 ? 0 : t >= span ? CAP_BUCKETS - 1 : t / (span / CAP_BUCKETS + 1);
            bytes[b] += row_bytes(i);
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

/* The sources merged in time order: each query in its own order, the row that starts first
 * next; of rows that start together, the longer (it holds the other), then the source order. */
struct cursor {
    sqlite3_stmt *st;
    int64_t start, end;
    int live;
};

static void cursor_step(struct cursor *k, int which)
{
    k->live = db_step(k->st);
    if (k->live) pf_row_span(which, k->st, &k->start, &k->end);
}

static void write_merged(struct pf *w, int64_t limit)
{
    struct cursor k[SRC_COUNT];
    memset(k, 0, sizeof k);
    for (int i = 0; i < SRC_COUNT; i++) {
        if (!pf_source_present(w->c, i)) continue;
        char sql[2048];
        pf_source_sql(w->c, i, limit, 1, sql, sizeof sql);
        k[i].st = db_prepare(w->c->db, sql);
        cursor_step(&k[i], i);
    }
    for (;;) {
        int next = -1;
        for (int i = 0; i < SRC_COUNT; i++)
            if (k[i].live && (next < 0 || k[i].start < k[next].start ||
                              (k[i].start == k[next].start && k[i].end > k[next].end)))
                next = i;
        if (next < 0) break;
        ends_until(w, k[next].start);
        pf_write_row(w, next, k[next].st);
        cursor_step(&k[next], next);
    }
    ends_until(w, INT64_MAX);
    for (int i = 0; i < SRC_COUNT; i++)
        if (k[i].st) sqlite3_finalize(k[i].st);
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
    write_merged(&w, limit);
    if (left_out > 0) {
        char what[160], at[32], cap[32];
        fmt_ns(at, sizeof at, (double)limit);
        fmt_bytes(cap, sizeof cap, max_mb * 1048576.0);
        snprintf(what, sizeof what, "%lld events from %s on left out (--max-mb: %s)",
                 (long long)left_out, at, cap);
        int fresh;
        uint64_t uuid = pf_track_of(&w, TRACK_CUT, &fresh);
        pf_describe(&w, uuid, pf_track_of(&w, TRACK_GPU, &fresh), "infprof: trace cut", 0);
        proto_uint(&w.ev, TE_TYPE, TYPE_INSTANT);
        proto_uint(&w.ev, TE_TRACK, uuid);
        proto_uint(&w.ev, TE_NAME_IID, pf_own_name(&w, 4, what));
        pf_put_event(&w, limit, 1);
        fprintf(stderr,
                "infprof: the trace was cut: %s; raise --max-mb, or cut by --phase or"
                " --from/--to\n",
                what);
    }
    *events = w.events;
    if (w.sig) sqlite3_finalize(w.sig);
    free(w.ends);
    proto_free(&w.pkt), proto_free(&w.ev), proto_free(&w.sub), proto_free(&w.sub2);
    proto_free(&w.names), proto_free(&w.out);
    ip_map_free(&w.iids), ip_map_free(&w.tracks), ip_map_free(&w.thread_names);
    ip_map_free(&w.lane_end);
    return w.bytes;
}
