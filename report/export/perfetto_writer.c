/*
 * perfetto_writer.c: the Perfetto writer's primitives (perfetto.c drives them, perfetto_rows.c
 * makes events with them): TracePackets on one sequence, names and annotation values interned
 * once per trace, slices whose ends are held back and written in time order, and tracks (the
 * host process, a thread, a thread's phases and iterations, a GPU stream, a counter) described
 * on first use.
 */
#include "perfetto_writer.h"
#include "../base/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
 * clears it. Every TrackEvent packet carries the sequence id, slice ends and counter values too:
 * trace_processor's tokenizer drops a TrackEvent packet without one (track_event_tokenizer.cc,
 * "TrackEvent packet without trusted_packet_sequence_id"), which an earlier writer of ours did,
 * to save 2 bytes a packet. SEQ_NEEDS_INCREMENTAL_STATE is left out: it only tells a reader which
 * packets to skip after a loss, and a file has none. */
static void sequence(struct pf *w, int interned)
{
    (void)interned;
    proto_uint(&w->pkt, PKT_SEQ_ID, 1);
    if (w->first) proto_uint(&w->pkt, PKT_SEQ_FLAGS, SEQ_CLEARED);
    w->first = 0;
}

/* A string field of the trace: valid UTF-8 as protobuf's string type wants, and nothing a
 * person reading it could be deceived by (report/base/fmt.c's rule: \xNN, \uNNNN). The bytes went
 * in raw: 6 names not UTF-8 and 18 with ESC sequences in one run, where the JSON trace escaped
 * them. */
static void trace_str(struct proto_buf *p, uint32_t field, const char *s)
{
    char safe[4 * 4096 + 8];
    fmt_escape(safe, sizeof safe, s);
    proto_str(p, field, safe);
}

/* One entry of an interned index (field `field` of InternedData), on the next packet. */
static void interned_entry(struct pf *w, uint32_t field, uint64_t iid, const char *text)
{
    proto_reset(&w->sub2);
    proto_uint(&w->sub2, IID, iid);
    trace_str(&w->sub2, IID_NAME, text);
    proto_msg(&w->names, field, &w->sub2);
}

/* The iid of text under key in the index `field` of InternedData, whose iids *next counts:
 * interned on first use (the entry rides on the next packet). */
static uint64_t intern_in(struct pf *w, uint64_t key, const char *text, uint32_t field,
                          uint64_t *next)
{
    uint64_t *slot = ip_map_put(&w->iids, key);
    if (!slot) cli_fail("out of memory");
    if (*slot) return *slot;
    *slot = ++*next;
    interned_entry(w, field, *slot, text);
    return *slot;
}

uint64_t pf_intern(struct pf *w, uint64_t key, const char *name)
{
    return intern_in(w, key, name, ID_EVENT_NAMES, &w->next_iid);
}

uint64_t pf_own_name(struct pf *w, uint64_t key, const char *name)
{
    return pf_intern(w, KEY_OWN(key), name);
}

uint64_t pf_intern_value(struct pf *w, uint64_t key, const char *value)
{
    return intern_in(w, key, value, ID_STRING_VALUES, &w->next_value_iid); /* its own index */
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
    static const char *const names[ANN_COUNT] = {NULL, "iteration id", "launch", "bytes",
                                                 "operator"};
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
void pf_ends_until(struct pf *w, int64_t t)
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
    if (name) trace_str(&w->ev, TD_NAME, name);
    if (part) proto_msg(&w->ev, (uint32_t)part, &w->sub);
    proto_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
    put_packet(w);
    proto_reset(&w->ev);
    proto_reset(&w->sub);
}

void pf_describe_processes(struct pf *w)
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
    trace_str(&w->sub, PD_NAME, name);
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
    trace_str(&w->sub, THD_NAME, name);
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
