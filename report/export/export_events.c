/*
 * export_events.c: the emitters of an exported trace's slices, one per table (export.h): GPU
 * work on its stream's track, API calls, cuDNN calls, NVTX ranges and phase spans on their
 * thread's tracks. Each formats one row of its source's SELECT (export_sources.c).
 *
 * Names follow the Chrome traces PyTorch's profiler (Kineto) writes where there is one
 * (categories "kernel", "gpu_memcpy", "cuda_runtime", "ac2g" flows; args "correlation", "grid",
 * "registers per thread"), so tools that read those find their way in ours.
 */
#include "export.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#define I64(st, i)     sqlite3_column_int64((st), (i))
#define IS_NULL(st, i) (sqlite3_column_type((st), (i)) == SQLITE_NULL)

static void phase_arg(struct export_ctx *c, int64_t phase)
{
    if (phase <= 0 || phase >= EXPORT_MAX_PHASES || !c->phase_label[phase].s) return;
    json_lit(c->w, ",\"phase\":");
    json_put(c->w, c->phase_label[phase].s, c->phase_label[phase].len);
}

static void int_arg(struct json_out *w, const char *key, int64_t v)
{
    json_lit(w, ",\"");
    json_put(w, key, strlen(key));
    json_lit(w, "\":");
    json_int(w, v);
}

/* pid, tid and ts of an event on a host thread track. */
static void host_where(struct export_ctx *c, int64_t tid, int64_t ts)
{
    json_lit(c->w, ",\"pid\":");
    json_int(c->w, c->host_pid);
    json_lit(c->w, ",\"tid\":");
    json_int(c->w, tid);
    json_lit(c->w, ",\"ts\":");
    json_us(c->w, ts);
}

/* --flows: an arrow from the API call that launched GPU work (columns col, col+1: its start and
 * thread) to the work. Kineto's "ac2g" flow events, bound to the enclosing slices. */
static void flow(struct export_ctx *c, sqlite3_stmt *st, int col, int64_t corr,
                 const struct stream_track *t, int64_t start)
{
    if (!c->flows || IS_NULL(st, col)) return;
    struct json_out *w = c->w;
    ev_open(c);
    json_lit(w, "\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":");
    json_int(w, corr);
    host_where(c, I64(st, col + 1), I64(st, col));
    json_lit(w, "}");
    ev_open(c);
    json_lit(w, "\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":");
    json_int(w, corr);
    json_put(w, t->prefix, t->prefix_len);
    json_us(w, start);
    json_lit(w, "}");
}

/* ---- GPU work ----------------------------------------------------------------------------- */

int emit_kernel(struct export_ctx *c, sqlite3_stmt *st)
{
    int64_t start = I64(st, 0), dur = I64(st, 1), sig = I64(st, 2), corr = I64(st, 3);
    if (sig < 0 || (size_t)sig >= c->nsigs || !c->sigs[sig].used || c->sigs[sig].track < 0)
        return 0; /* a kernel without its signature: nothing to place it on */
    const struct sig_info *g = &c->sigs[sig];
    const struct stream_track *t = &c->streams[g->track];
    struct json_out *w = c->w;
    ev_open(c);
    json_lit(w, "\"ph\":\"X\",\"cat\":\"kernel\",\"name\":");
    json_put(w, g->name.s, g->name.len);
    json_put(w, t->prefix, t->prefix_len);
    json_us(w, start);
    json_lit(w, ",\"dur\":");
    json_us(w, dur);
    json_lit(w, ",\"args\":{\"correlation\":");
    json_int(w, corr);
    json_put(w, g->tail, g->tail_len);
    phase_arg(c, I64(st, 4));
    /* The PyTorch operator innermost at its launch (kernel_rows.op), where one was recorded. */
    if (sqlite3_column_count(st) > 7 && !IS_NULL(st, 7)) {
        const unsigned char *op = sqlite3_column_text(st, 7);
        json_lit(w, ",\"operator\":");
        json_str(w, (const char *)op, strlen((const char *)op));
    }
    json_lit(w, "}}");
    flow(c, st, 5, corr, t, start);
    return 1;
}

const char *export_copy_kind(int64_t k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k >= 0 && k < 11 ? names[k] : "Unknown";
}

const char *export_memory_kind(int64_t k)
{
    static const char *const names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};
    return k >= 0 && k < 8 ? names[k] : "Unknown";
}

/* Shared by copies and memsets: track, times, and the args every GPU transfer has. */
static const struct stream_track *transfer_open(struct export_ctx *c, const char *cat,
                                                const char *name, int64_t device, int64_t stream,
                                                int64_t start, int64_t dur, int64_t corr,
                                                int64_t bytes)
{
    int i = stream_index(c, device, stream);
    if (i < 0) return NULL;
    const struct stream_track *t = &c->streams[i];
    struct json_out *w = c->w;
    ev_open(c);
    json_lit(w, "\"ph\":\"X\",\"cat\":\"");
    json_put(w, cat, strlen(cat));
    json_lit(w, "\",\"name\":");
    json_str(w, name, strlen(name));
    json_put(w, t->prefix, t->prefix_len);
    json_us(w, start);
    json_lit(w, ",\"dur\":");
    json_us(w, dur);
    json_lit(w, ",\"args\":{\"correlation\":");
    json_int(w, corr);
    int_arg(w, "device", device);
    int_arg(w, "stream", stream);
    int_arg(w, "bytes", bytes);
    if (dur > 0) {
        json_lit(w, ",\"memory bandwidth (GB/s)\":"); /* bytes per ns */
        json_fixed(w, (double)bytes / (double)dur, 3);
    }
    return t;
}

int emit_memcpy(struct export_ctx *c, sqlite3_stmt *st)
{
    char name[96];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", export_copy_kind(I64(st, 3)),
             export_memory_kind(I64(st, 4)), export_memory_kind(I64(st, 5)));
    int64_t start = I64(st, 0), corr = I64(st, 8);
    const struct stream_track *t = transfer_open(c, "gpu_memcpy", name, I64(st, 6), I64(st, 7),
                                                 start, I64(st, 1), corr, I64(st, 2));
    if (!t) return 0;
    if (!IS_NULL(st, 10)) int_arg(c->w, "peer device", I64(st, 10));
    phase_arg(c, I64(st, 9));
    json_lit(c->w, "}}");
    flow(c, st, 11, corr, t, start);
    return 1;
}

int emit_memset(struct export_ctx *c, sqlite3_stmt *st)
{
    char name[64];
    snprintf(name, sizeof name, "Memset (%s)", export_memory_kind(I64(st, 4)));
    int64_t start = I64(st, 0), corr = I64(st, 7);
    const struct stream_track *t = transfer_open(c, "gpu_memset", name, I64(st, 5), I64(st, 6),
                                                 start, I64(st, 1), corr, I64(st, 2));
    if (!t) return 0;
    int_arg(c->w, "value", I64(st, 3));
    phase_arg(c, I64(st, 8));
    json_lit(c->w, "}}");
    flow(c, st, 9, corr, t, start);
    return 1;
}

/* ---- host threads ------------------------------------------------------------------------- */

int emit_api(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    const struct qstr *name = name_of(c, I64(st, 3), "CUDA API call");
    ev_open(c);
    if (I64(st, 4) == 2)
        json_lit(w, "\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":");
    else
        json_lit(w, "\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":");
    json_put(w, name->s, name->len);
    host_where(c, I64(st, 2), I64(st, 0));
    json_lit(w, ",\"dur\":");
    json_us(w, I64(st, 1));
    json_lit(w, ",\"args\":{\"correlation\":");
    json_int(w, I64(st, 7));
    if (I64(st, 5)) int_arg(w, "return", I64(st, 5));
    phase_arg(c, I64(st, 6));
    json_lit(w, "}}");
    return 1;
}

int emit_cudnn(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    const struct qstr *name = name_of(c, I64(st, 4), "cuDNN call");
    ev_open(c);
    json_lit(w, "\"ph\":\"X\",\"cat\":\"cudnn\",\"name\":");
    json_put(w, name->s, name->len);
    host_where(c, I64(st, 2), I64(st, 0));
    json_lit(w, ",\"dur\":");
    json_us(w, I64(st, 1));
    json_lit(w, ",\"args\":{\"status\":");
    json_int(w, I64(st, 5));
    static const char *const keys[] = {"stream", "op kind", "dtype", "plan"};
    for (int i = 0; i < 4; i++)
        if (!IS_NULL(st, 6 + i)) int_arg(w, keys[i], I64(st, 6 + i));
    phase_arg(c, I64(st, 3));
    json_lit(w, "}}");
    return 1;
}

/* NVTX: push/pop ranges nest on their thread's track; start/end ranges may overlap anything and
 * end on another thread, so they are async events ("b"/"e", id as a string, which every Perfetto
 * version accepts); marks are instants. A range with no end is left open ("B" or "b" alone):
 * Perfetto shows it as not ended. */
int emit_nvtx(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    int64_t id = I64(st, 0), tid = I64(st, 1), domain = I64(st, 2), kind = I64(st, 3);
    int64_t start = I64(st, 4);
    int open = IS_NULL(st, 5);
    char idbuf[32];
    snprintf(idbuf, sizeof idbuf, "\"%llx\"", (unsigned long long)id);
    /* The name is written twice for a start/end range (its "b" and "e"): quote it once. */
    struct qstr name = {(char *)"\"(no text)\"", 11};
    char *quoted = NULL;
    if (!IS_NULL(st, 6))
        name.s = quoted = json_quote((const char *)sqlite3_column_text(st, 6),
                                     (size_t)sqlite3_column_bytes(st, 6), &name.len);
    ev_open(c);
    if (kind == 2)
        json_lit(w, "\"ph\":\"b\",\"cat\":\"nvtx\",\"name\":");
    else if (kind == 3)
        json_lit(w, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\",\"name\":");
    else if (open)
        json_lit(w, "\"ph\":\"B\",\"cat\":\"nvtx\",\"name\":");
    else
        json_lit(w, "\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":");
    json_put(w, name.s, name.len);
    if (kind == 2) {
        json_lit(w, ",\"id\":");
        json_put(w, idbuf, strlen(idbuf));
    }
    host_where(c, tid, start);
    if (kind == 1 && !open) {
        json_lit(w, ",\"dur\":");
        json_us(w, I64(st, 5) - start);
    }
    json_lit(w, ",\"args\":{\"range\":");
    json_int(w, id);
    if (domain > 0 && (size_t)domain < c->ndomains && c->domains[domain].s) {
        json_lit(w, ",\"domain\":");
        json_put(w, c->domains[domain].s, c->domains[domain].len);
    }
    if (I64(st, 7)) int_arg(w, "category", I64(st, 7));
    if (!IS_NULL(st, 8)) {
        char color[16];
        snprintf(color, sizeof color, "\"#%06llx\"", (unsigned long long)(I64(st, 8) & 0xffffff));
        json_lit(w, ",\"color\":");
        json_put(w, color, strlen(color));
    }
    phase_arg(c, I64(st, 9));
    json_lit(w, "}}");
    if (kind == 2 && !open) {
        ev_open(c);
        json_lit(w, "\"ph\":\"e\",\"cat\":\"nvtx\",\"name\":");
        json_put(w, name.s, name.len);
        json_lit(w, ",\"id\":");
        json_put(w, idbuf, strlen(idbuf));
        host_where(c, IS_NULL(st, 10) ? tid : I64(st, 10), I64(st, 5));
        json_lit(w, "}");
    }
    free(quoted);
    return 1;
}

/* An iteration (every source: TorchScript and AOTInductor calls, record_function scopes, NVTX
 * ranges), on its thread's iterations track beside its phases. */
int emit_iteration(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    int64_t start = I64(st, 2);
    ev_open(c);
    json_lit(w, "\"ph\":\"X\",\"cat\":\"iteration\",\"name\":");
    /* Its series' name (the model's class, the mark's text), else "iteration". */
    const unsigned char *series = sqlite3_column_text(st, 5);
    if (series)
        json_str(w, (const char *)series, strlen((const char *)series));
    else
        json_lit(w, "\"iteration\"");
    host_where(c, I64(st, 1) + EXPORT_ITER_TID_BASE, start);
    json_lit(w, ",\"dur\":");
    json_us(w, I64(st, 3));
    json_lit(w, ",\"args\":{\"iteration id\":");
    json_int(w, I64(st, 0));
    json_lit(w, ",\"source\":");
    json_int(w, I64(st, 4));
    /* iterations.source in words (0: detected by the report, report/run/iterations.c). */
    const char *name = iterations_source_text((int)I64(st, 4));
    json_lit(w, ",\"found as\":");
    json_str(w, name, strlen(name));
    phase_arg(c, I64(st, 6));
    json_lit(w, "}}");
    return 1;
}

/* A PyTorch operator call on its thread's own track, around the CUDA calls it made (as
 * torch.profiler's trace nests cpu_op and cuda_runtime). Columns: start, dur, tid, name, self,
 * depth, iteration, phase. */
int emit_operator(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    const unsigned char *name = sqlite3_column_text(st, 3);
    ev_open(c);
    json_lit(w, "\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":");
    if (name)
        json_str(w, (const char *)name, strlen((const char *)name));
    else
        json_lit(w, "\"operator\"");
    host_where(c, I64(st, 2), I64(st, 0));
    json_lit(w, ",\"dur\":");
    json_us(w, I64(st, 1));
    json_lit(w, ",\"args\":{\"self ns\":");
    json_int(w, I64(st, 4));
    int_arg(w, "depth", I64(st, 5));
    if (I64(st, 6)) int_arg(w, "iteration id", I64(st, 6));
    phase_arg(c, I64(st, 7));
    json_lit(w, "}}");
    return 1;
}

int emit_phase_span(struct export_ctx *c, sqlite3_stmt *st)
{
    struct json_out *w = c->w;
    int64_t phase = I64(st, 1), start = I64(st, 2);
    int open = IS_NULL(st, 3);
    ev_open(c);
    if (open)
        json_lit(w, "\"ph\":\"B\",\"cat\":\"phase\",\"name\":");
    else
        json_lit(w, "\"ph\":\"X\",\"cat\":\"phase\",\"name\":");
    if (phase > 0 && phase < EXPORT_MAX_PHASES && c->phase_label[phase].s)
        json_put(w, c->phase_label[phase].s, c->phase_label[phase].len);
    else
        json_lit(w, "\"phase unknown\"");
    host_where(c, I64(st, 0) + EXPORT_PHASE_TID_BASE, start);
    if (!open) {
        json_lit(w, ",\"dur\":");
        json_us(w, I64(st, 3) - start);
    }
    json_lit(w, ",\"args\":{\"phase id\":");
    json_int(w, phase);
    json_lit(w, "}}");
    return 1;
}
