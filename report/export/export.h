/*
 * export.h: the pieces of `infprof export` (cmd_export.c), which turns a database into a Chrome
 * trace that Perfetto opens: the streaming JSON writer (base/json.c), the trace's processes and
 * tracks (export_tracks.c), its events, one source per table (export_sources.c), and the
 * emitters that format one row each (export_events.c).
 *
 * Everything streams: rows are read one at a time and written through one buffer, so memory does
 * not grow with the number of rows. Only small dimension tables are held (launch signatures,
 * names of kernels and API functions, streams, threads).
 */
#ifndef INFPROF_EXPORT_H
#define INFPROF_EXPORT_H

#include "../base/cli.h"
#include "../base/json.h"
#include "../base/table.h"
#include "../run/run.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    const struct run_phases *phases; /* the run model (run.h), loaded once */
    struct json_out *w;
    uint64_t events;
    int64_t host_pid, gpu_pid;
    int64_t duration_ns; /* -1 unknown */
    /* the cut */
    int phase;        /* -1: all phases */
    int64_t from, to; /* [from, to) in ns; INT64_MIN / INT64_MAX when open */
    int flows;        /* launch -> GPU work arrows */
    int all_api;      /* every CUDA API call, the trivial ones too (--all-api) */
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
#define EXPORT_ITER_TID_BASE  2000000000 /* iteration track of thread T: T + this */
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
int emit_iteration(struct export_ctx *c, struct sqlite3_stmt *st);
int emit_operator(struct export_ctx *c, struct sqlite3_stmt *st);
/* CUPTI's copy and memory kinds as nsys names them ("HtoD", "Pageable"). */
const char *export_copy_kind(int64_t kind);
const char *export_memory_kind(int64_t kind);

/* The cut as SQL: " AND ..." keeping the rows of --phase, --from and --to that also start before
 * `limit` (INT64_MAX: none), for a table whose rows start at `start`, end at `end` and were in
 * phase `phase` (column expressions). Returns its length (export_sources.c). */
/* The CUDA API calls a trace keeps (" AND ..." on cuda_api t, "" with --all-api): every call of
 * 1 us or more, and every launch, copy, memset or graph call whatever its length. The rest
 * (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing: 90% of a real run's calls, a few
 * hundred ns each) are left out and counted (export_api_left_out). */
const char *export_api_filter(const struct export_ctx *c);
int64_t export_api_left_out(const struct export_ctx *c);
size_t export_cut_sql(const struct export_ctx *c, const char *start, const char *end,
                      const char *phase, int64_t limit, char *out, size_t n);

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
        json_lit(c->w, ",\n{");
    else
        json_lit(c->w, "\n{");
}

/* ---- the Perfetto-native trace (perfetto.c) ------------------------------------------------ */

/* Write it to f; max_mb > 0 caps it (GPU work past the cap left out, said on stderr and in the
 * trace). Returns the bytes written; *events: slices, instants and counter values. */
uint64_t perfetto_write(struct export_ctx *c, FILE *f, double max_mb, void (*on_error)(int err),
                        uint64_t *events);
/* Estimated bytes and events of each source (perfetto_source_what names them) and in all. */
#define PERFETTO_SOURCES 9
double perfetto_estimate(struct export_ctx *c, double *events, double *bytes_of, double *events_of);
const char *perfetto_source_what(int i);

/* ---- the trace file (export_file.c) ------------------------------------------------------- */

/* What `infprof export` was asked for (cmd_export.c parses it). */
struct export_opts {
    const char *db, *out, *phase;
    int force, flows, estimate_only;
    int all_api;  /* keep the CUDA API calls that take under 1 us and launch nothing */
    int perfetto; /* --format perfetto (or FILE ends in .pftrace / .perfetto-trace) */
    int direct;   /* FILE is a device or a pipe: written in place, never replaced */
    int64_t from, to;
    double max_mb;
};

/* Write the trace (or only print its estimate); exits 2 on bad input, returns the exit status. */
int export_run(const struct export_opts *o);

#endif
