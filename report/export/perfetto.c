/*
 * perfetto.c: `infprof export --format perfetto`: the run as a Perfetto-native trace (protobuf
 * TracePackets of TrackEvents, https://perfetto.dev/docs/reference/synthetic-track-event), which
 * ui.perfetto.dev and trace_processor open directly, 100-180 bytes per kernel where the
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
 * --max-mb caps the file: every event is kept from the start up to the time where the budget
 * ends, none after it; what was left out is said on stderr and in the trace (a track
 * "infprof: trace cut").
 */
#include "perfetto_rows.h"

#include <stdlib.h>
#include <string.h>

/* Bytes a row takes, for the estimate and the cap (measured on the H100 fixtures: a slice's
 * begin 22 and end 16, a kernel's arguments 10 more; a memory row, one counter value, 22; a little
 * over, so that the cap holds). */
#define SLICE_BYTES   41.0
#define GPU_BYTES     52.0
#define COUNTER_BYTES 23.0

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
        pf_ends_until(w, k[next].start);
        pf_write_row(w, next, k[next].st);
        cursor_step(&k[next], next);
    }
    pf_ends_until(w, INT64_MAX);
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
    pf_describe_processes(&w);
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
    if (w.op) sqlite3_finalize(w.op);
    free(w.ends);
    proto_free(&w.pkt), proto_free(&w.ev), proto_free(&w.sub), proto_free(&w.sub2);
    proto_free(&w.names), proto_free(&w.out);
    ip_map_free(&w.iids), ip_map_free(&w.tracks), ip_map_free(&w.thread_names);
    ip_map_free(&w.lane_end);
    return w.bytes;
}
