/*
 * export.h: the pieces of `infprof export` (cmd_export.c), which turns a database into a Chrome
 * trace that Perfetto opens: a streaming JSON writer (export_json.c), the trace's processes and
 * tracks (export_tracks.c), its events, one source per table (export_sources.c), and the
 * emitters that format one row each (export_events.c).
 *
 * Everything streams: rows are read one at a time and written through one buffer, so memory does
 * not grow with the number of rows. Only small dimension tables are held (launch signatures,
 * names of kernels and API functions, streams, threads).
 */
#ifndef INFPROF_EXPORT_H
#define INFPROF_EXPORT_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the JSON writer (export_json.c) ------------------------------------------------------ */

struct jw {
    FILE *out; /* NULL: count only (the size estimate) */
    char *buf;
    size_t n, cap;
    uint64_t bytes;            /* written (or counted) so far, buffer included */
    void (*on_error)(int err); /* a write failed (errno); must not return */
};

void jw_init(struct jw *w, FILE *out);
void jw_flush(struct jw *w);
void jw_free(struct jw *w);
void jw_put_slow(struct jw *w, const char *s, size_t len);

static inline void jw_put(struct jw *w, const char *s, size_t len)
{
    if (w->n + len > w->cap) {
        jw_put_slow(w, s, len);
        return;
    }
    memcpy(w->buf + w->n, s, len);
    w->n += len;
}

/* A string literal, copied as is (our own keys and punctuation). */
#define jw_lit(w, s) jw_put((w), (s), sizeof(s) - 1)

void jw_int(struct jw *w, int64_t v);
/* Nanoseconds as microseconds with up to three decimals: exact, no floating point. */
void jw_us(struct jw *w, int64_t ns);
/* A JSON string: quoted and escaped; control characters as \u00XX, bytes that are not valid
 * UTF-8 as U+FFFD, so any program string gives valid JSON. */
void jw_str(struct jw *w, const char *s, size_t len);
/* The same into a new malloc'ed string (for names written many times); its length in *len. */
char *json_quote(const char *s, size_t len, size_t *out_len);
/* A number with `decimals` digits after the point (rates). */
void jw_fixed(struct jw *w, double v, int decimals);

/* ---- the export's state ------------------------------------------------------------------- */

#define EXPORT_MAX_PHASES 10 /* ids 0..9, as phase.h */

struct qstr { /* a quoted JSON string, ready to copy */
    char *s;
    size_t len;
};

struct sig_info {
    int used;
    struct qstr name; /* shared with the name cache */
    int track;        /* index into streams */
    char *tail;       /* the args that never change for this signature */
    size_t tail_len;
};

struct stream_track {
    int64_t device, stream;
    int64_t tid;
    char *prefix; /* ,"pid":P,"tid":T,"ts": */
    size_t prefix_len;
};

struct name_slot {
    int64_t id;
    struct qstr q;
};

struct export_ctx {
    struct sqlite3 *db;
    struct jw *w;
    uint64_t events;
    int64_t host_pid, gpu_pid;
    int64_t duration_ns; /* -1 unknown */
    /* the cut */
    int phase;        /* -1: all phases */
    int64_t from, to; /* [from, to) in ns; INT64_MIN / INT64_MAX when open */
    int flows;        /* launch -> GPU work arrows */
    /* dimensions */
    struct qstr phase_label[EXPORT_MAX_PHASES];
    struct sig_info *sigs;
    size_t nsigs; /* sigs[id], id < nsigs */
    struct stream_track *streams;
    size_t nstreams;
    struct name_slot *names; /* string id -> quoted value (open addressing) */
    size_t names_cap, names_used;
    struct qstr *domains; /* nvtx domain id -> quoted name */
    size_t ndomains;
};

/* Tracks (export_tracks.c). */
#define EXPORT_PHASE_TID_BASE 1000000000 /* phase track of thread T: T + this (T < 2^22) */
#define EXPORT_GPU_PID_BASE   1000000000 /* the GPU process: host pid + this */
void tracks_load(struct export_ctx *c);
void tracks_free(struct export_ctx *c);
/* The metadata events: process and thread names and their order. */
void tracks_write_metadata(struct export_ctx *c);
const struct qstr *name_of(struct export_ctx *c, int64_t string_id, const char *fallback);
int stream_index(const struct export_ctx *c, int64_t device, int64_t stream);

/* Emitters of one row each (export_events.c), 1 when they wrote an event. */
int emit_kernel(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_memcpy(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_memset(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_api(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_cudnn(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_nvtx(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_phase_span(struct export_ctx *c, struct sqlite3_stmt *st);

/* Event sources (export_sources.c): one per table. */
struct source;
int sources_count(void);
const struct source *source_at(int i);
const char *source_what(const struct source *s);
/* Write every event of the source that is in the cut. */
void source_write(struct export_ctx *c, const struct source *s);
/* Estimate the bytes and events the source would write, from up to `samples` rows read by
 * rowid (exact when the table has no more rows than that). */
void source_estimate(struct export_ctx *c, const struct source *s, int samples, double *bytes,
                     double *events);

/* Start an event: the separator and the opening brace. */
static inline void ev_open(struct export_ctx *c)
{
    if (c->events++)
        jw_lit(c->w, ",\n{");
    else
        jw_lit(c->w, "\n{");
}

#endif
