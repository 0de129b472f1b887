/*
 * export_events.c: the events of an exported trace, one source per table (export.h). Each source
 * is one SELECT streamed row by row, with the cut (--phase, --from/--to) in its WHERE clause, and
 * an emitter that formats one row. The size estimate runs the same emitters on rows sampled by
 * rowid into a counting writer.
 *
 * Names follow the Chrome traces PyTorch's profiler (Kineto) writes where there is one
 * (categories "kernel", "gpu_memcpy", "cuda_runtime", "ac2g" flows; args "correlation", "grid",
 * "registers per thread"), so tools that read those find their way in ours.
 */
#include "export.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct source {
    const char *what;  /* for messages */
    const char *table; /* aliased t in sql */
    const char *sql;   /* SELECT ... FROM table t ... WHERE 1 */
    const char *flows_sql; /* the same with the launching call's start and thread (--flows) */
    const char *start, *end, *phase; /* cut expressions; start NULL: the emitter cuts */
    const char *order;
    int (*emit)(struct export_ctx *c, sqlite3_stmt *st); /* 1 when it wrote something */
    void (*reset)(struct export_ctx *c);                 /* state, before a pass */
    void (*prologue)(struct export_ctx *c);              /* events before the rows (writing) */
    void (*epilogue)(struct export_ctx *c);              /* events after the rows (writing) */
};

#define I64(st, i) sqlite3_column_int64((st), (i))
#define IS_NULL(st, i) (sqlite3_column_type((st), (i)) == SQLITE_NULL)

static int in_cut(const struct export_ctx *c, int64_t start, int64_t end, int phase)
{
    if (c->phase >= 0 && phase != c->phase) return 0;
    return start < c->to && end >= c->from;
}

static void phase_arg(struct export_ctx *c, int64_t phase)
{
    if (phase <= 0 || phase >= EXPORT_MAX_PHASES || !c->phase_label[phase].s) return;
    jw_lit(c->w, ",\"phase\":");
    jw_put(c->w, c->phase_label[phase].s, c->phase_label[phase].len);
}

static void int_arg(struct jw *w, const char *key, int64_t v)
{
    jw_lit(w, ",\"");
    jw_put(w, key, strlen(key));
    jw_lit(w, "\":");
    jw_int(w, v);
}

/* pid, tid and ts of an event on a host thread track. */
static void host_where(struct export_ctx *c, int64_t tid, int64_t ts)
{
    jw_lit(c->w, ",\"pid\":");
    jw_int(c->w, c->host_pid);
    jw_lit(c->w, ",\"tid\":");
    jw_int(c->w, tid);
    jw_lit(c->w, ",\"ts\":");
    jw_us(c->w, ts);
}

/* --flows: an arrow from the API call that launched GPU work (columns col, col+1: its start and
 * thread) to the work. Kineto's "ac2g" flow events, bound to the enclosing slices. */
static void flow(struct export_ctx *c, sqlite3_stmt *st, int col, int64_t corr,
                 const struct stream_track *t, int64_t start)
{
    if (!c->flows || IS_NULL(st, col)) return;
    struct jw *w = c->w;
    ev_open(c);
    jw_lit(w, "\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":");
    jw_int(w, corr);
    host_where(c, I64(st, col + 1), I64(st, col));
    jw_lit(w, "}");
    ev_open(c);
    jw_lit(w, "\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"launch\",\"id\":");
    jw_int(w, corr);
    jw_put(w, t->prefix, t->prefix_len);
    jw_us(w, start);
    jw_lit(w, "}");
}

/* ---- GPU work ----------------------------------------------------------------------------- */

static int emit_kernel(struct export_ctx *c, sqlite3_stmt *st)
{
    int64_t start = I64(st, 0), dur = I64(st, 1), sig = I64(st, 2), corr = I64(st, 3);
    if (sig < 0 || (size_t)sig >= c->nsigs || !c->sigs[sig].used || c->sigs[sig].track < 0)
        return 0; /* a kernel without its signature: nothing to place it on */
    const struct sig_info *g = &c->sigs[sig];
    const struct stream_track *t = &c->streams[g->track];
    struct jw *w = c->w;
    ev_open(c);
    jw_lit(w, "\"ph\":\"X\",\"cat\":\"kernel\",\"name\":");
    jw_put(w, g->name.s, g->name.len);
    jw_put(w, t->prefix, t->prefix_len);
    jw_us(w, start);
    jw_lit(w, ",\"dur\":");
    jw_us(w, dur);
    jw_lit(w, ",\"args\":{\"correlation\":");
    jw_int(w, corr);
    jw_put(w, g->tail, g->tail_len);
    phase_arg(c, I64(st, 4));
    jw_lit(w, "}}");
    flow(c, st, 5, corr, t, start);
    return 1;
}

static const char *copy_kind(int64_t k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k >= 0 && k < 11 ? names[k] : "Unknown";
}

static const char *memory_kind(int64_t k)
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
    struct jw *w = c->w;
    ev_open(c);
    jw_lit(w, "\"ph\":\"X\",\"cat\":\"");
    jw_put(w, cat, strlen(cat));
    jw_lit(w, "\",\"name\":");
    jw_str(w, name, strlen(name));
    jw_put(w, t->prefix, t->prefix_len);
    jw_us(w, start);
    jw_lit(w, ",\"dur\":");
    jw_us(w, dur);
    jw_lit(w, ",\"args\":{\"correlation\":");
    jw_int(w, corr);
    int_arg(w, "device", device);
    int_arg(w, "stream", stream);
    int_arg(w, "bytes", bytes);
    if (dur > 0) {
        jw_lit(w, ",\"memory bandwidth (GB/s)\":"); /* bytes per ns */
        jw_fixed(w, (double)bytes / (double)dur, 3);
    }
    return t;
}

static int emit_memcpy(struct export_ctx *c, sqlite3_stmt *st)
{
    char name[96];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_kind(I64(st, 3)),
             memory_kind(I64(st, 4)), memory_kind(I64(st, 5)));
    int64_t start = I64(st, 0), corr = I64(st, 8);
    const struct stream_track *t = transfer_open(c, "gpu_memcpy", name, I64(st, 6), I64(st, 7),
                                                 start, I64(st, 1), corr, I64(st, 2));
    if (!t) return 0;
    if (!IS_NULL(st, 10)) int_arg(c->w, "peer device", I64(st, 10));
    phase_arg(c, I64(st, 9));
    jw_lit(c->w, "}}");
    flow(c, st, 11, corr, t, start);
    return 1;
}

static int emit_memset(struct export_ctx *c, sqlite3_stmt *st)
{
    char name[64];
    snprintf(name, sizeof name, "Memset (%s)", memory_kind(I64(st, 4)));
    int64_t start = I64(st, 0), corr = I64(st, 7);
    const struct stream_track *t = transfer_open(c, "gpu_memset", name, I64(st, 5), I64(st, 6),
                                                 start, I64(st, 1), corr, I64(st, 2));
    if (!t) return 0;
    int_arg(c->w, "value", I64(st, 3));
    phase_arg(c, I64(st, 8));
    jw_lit(c->w, "}}");
    flow(c, st, 9, corr, t, start);
    return 1;
}

/* ---- host threads ------------------------------------------------------------------------- */

static int emit_api(struct export_ctx *c, sqlite3_stmt *st)
{
    struct jw *w = c->w;
    const struct qstr *name = name_of(c, I64(st, 3), "CUDA API call");
    ev_open(c);
    if (I64(st, 4) == 2)
        jw_lit(w, "\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":");
    else
        jw_lit(w, "\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":");
    jw_put(w, name->s, name->len);
    host_where(c, I64(st, 2), I64(st, 0));
    jw_lit(w, ",\"dur\":");
    jw_us(w, I64(st, 1));
    jw_lit(w, ",\"args\":{\"correlation\":");
    jw_int(w, I64(st, 7));
    if (I64(st, 5)) int_arg(w, "return", I64(st, 5));
    phase_arg(c, I64(st, 6));
    jw_lit(w, "}}");
    return 1;
}

static int emit_cudnn(struct export_ctx *c, sqlite3_stmt *st)
{
    struct jw *w = c->w;
    const struct qstr *name = name_of(c, I64(st, 4), "cuDNN call");
    ev_open(c);
    jw_lit(w, "\"ph\":\"X\",\"cat\":\"cudnn\",\"name\":");
    jw_put(w, name->s, name->len);
    host_where(c, I64(st, 2), I64(st, 0));
    jw_lit(w, ",\"dur\":");
    jw_us(w, I64(st, 1));
    jw_lit(w, ",\"args\":{\"status\":");
    jw_int(w, I64(st, 5));
    static const char *const keys[] = {"stream", "op kind", "dtype", "plan"};
    for (int i = 0; i < 4; i++)
        if (!IS_NULL(st, 6 + i)) int_arg(w, keys[i], I64(st, 6 + i));
    phase_arg(c, I64(st, 3));
    jw_lit(w, "}}");
    return 1;
}

/* NVTX: push/pop ranges nest on their thread's track; start/end ranges may overlap anything and
 * end on another thread, so they are async events ("b"/"e", id as a string, which every Perfetto
 * version accepts); marks are instants. A range with no end is left open ("B" or "b" alone):
 * Perfetto shows it as not ended. */
static int emit_nvtx(struct export_ctx *c, sqlite3_stmt *st)
{
    struct jw *w = c->w;
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
        jw_lit(w, "\"ph\":\"b\",\"cat\":\"nvtx\",\"name\":");
    else if (kind == 3)
        jw_lit(w, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\",\"name\":");
    else if (open)
        jw_lit(w, "\"ph\":\"B\",\"cat\":\"nvtx\",\"name\":");
    else
        jw_lit(w, "\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":");
    jw_put(w, name.s, name.len);
    if (kind == 2) {
        jw_lit(w, ",\"id\":");
        jw_put(w, idbuf, strlen(idbuf));
    }
    host_where(c, tid, start);
    if (kind == 1 && !open) {
        jw_lit(w, ",\"dur\":");
        jw_us(w, I64(st, 5) - start);
    }
    jw_lit(w, ",\"args\":{\"range\":");
    jw_int(w, id);
    if (domain > 0 && (size_t)domain < c->ndomains && c->domains[domain].s) {
        jw_lit(w, ",\"domain\":");
        jw_put(w, c->domains[domain].s, c->domains[domain].len);
    }
    if (I64(st, 7)) int_arg(w, "category", I64(st, 7));
    if (!IS_NULL(st, 8)) {
        char color[16];
        snprintf(color, sizeof color, "\"#%06llx\"", (unsigned long long)(I64(st, 8) & 0xffffff));
        jw_lit(w, ",\"color\":");
        jw_put(w, color, strlen(color));
    }
    phase_arg(c, I64(st, 9));
    jw_lit(w, "}}");
    if (kind == 2 && !open) {
        ev_open(c);
        jw_lit(w, "\"ph\":\"e\",\"cat\":\"nvtx\",\"name\":");
        jw_put(w, name.s, name.len);
        jw_lit(w, ",\"id\":");
        jw_put(w, idbuf, strlen(idbuf));
        host_where(c, IS_NULL(st, 10) ? tid : I64(st, 10), I64(st, 5));
        jw_lit(w, "}");
    }
    free(quoted);
    return 1;
}

static int emit_phase_span(struct export_ctx *c, sqlite3_stmt *st)
{
    struct jw *w = c->w;
    int64_t phase = I64(st, 1), start = I64(st, 2);
    int open = IS_NULL(st, 3);
    ev_open(c);
    if (open)
        jw_lit(w, "\"ph\":\"B\",\"cat\":\"phase\",\"name\":");
    else
        jw_lit(w, "\"ph\":\"X\",\"cat\":\"phase\",\"name\":");
    if (phase > 0 && phase < EXPORT_MAX_PHASES && c->phase_label[phase].s)
        jw_put(w, c->phase_label[phase].s, c->phase_label[phase].len);
    else
        jw_lit(w, "\"phase unknown\"");
    host_where(c, I64(st, 0) + EXPORT_PHASE_TID_BASE, start);
    if (!open) {
        jw_lit(w, ",\"dur\":");
        jw_us(w, I64(st, 3) - start);
    }
    jw_lit(w, ",\"args\":{\"phase id\":");
    jw_int(w, phase);
    jw_lit(w, "}}");
    return 1;
}

/* ---- memory counters ---------------------------------------------------------------------- */

static void counter_open(struct export_ctx *c, int64_t pid, const char *name, int64_t ts)
{
    struct jw *w = c->w;
    ev_open(c);
    jw_lit(w, "\"ph\":\"C\",\"name\":");
    jw_str(w, name, strlen(name));
    jw_lit(w, ",\"pid\":");
    jw_int(w, pid);
    jw_lit(w, ",\"tid\":");
    jw_int(w, pid);
    jw_lit(w, ",\"ts\":");
    jw_us(w, ts);
    jw_lit(w, ",\"args\":{");
}

/* Tensor memory as the PyTorch allocators report it (totals after each event). Row columns:
 * ts, device_type, device_index, allocated, reserved. */
static int tensor_point(struct export_ctx *c, sqlite3_stmt *st, int64_t ts)
{
    if (IS_NULL(st, 3) && IS_NULL(st, 4)) return 0;
    char name[64];
    int gpu = I64(st, 1) == 1;
    if (gpu)
        snprintf(name, sizeof name, "GPU %lld tensors", (long long)I64(st, 2));
    else
        snprintf(name, sizeof name, "CPU tensors");
    counter_open(c, gpu ? c->gpu_pid : c->host_pid, name, ts);
    const char *sep = "";
    if (!IS_NULL(st, 3)) {
        jw_lit(c->w, "\"allocated\":");
        jw_int(c->w, I64(st, 3));
        sep = ",";
    }
    if (!IS_NULL(st, 4)) {
        jw_put(c->w, sep, strlen(sep));
        jw_lit(c->w, "\"reserved\":");
        jw_int(c->w, I64(st, 4));
    }
    jw_lit(c->w, "}}");
    return 1;
}

static int emit_tensor(struct export_ctx *c, sqlite3_stmt *st)
{
    return tensor_point(c, st, I64(st, 0));
}

/* A window starting mid-run: each counter's value when it opens, so the plot starts right. */
static void tensor_prologue(struct export_ctx *c)
{
    if (c->from == INT64_MIN) return;
    sqlite3_stmt *st = db_prepare(c->db, "SELECT max(ts), device_type, device_index, allocated,"
                                         " reserved FROM tensor_memory WHERE ts < ?"
                                         " GROUP BY device_type, device_index");
    sqlite3_bind_int64(st, 1, c->from);
    while (db_step(st)) tensor_point(c, st, c->from);
    sqlite3_finalize(st);
}

#define SEG_DEVICES 64
static struct {
    int64_t sum[SEG_DEVICES];
    uint8_t seen[SEG_DEVICES], opened[SEG_DEVICES];
} seg;

static void segments_reset(struct export_ctx *c)
{
    (void)c;
    memset(&seg, 0, sizeof seg);
}

static void segment_point(struct export_ctx *c, int64_t device, int64_t ts)
{
    char name[64];
    snprintf(name, sizeof name, "GPU %lld device memory", (long long)device);
    counter_open(c, c->gpu_pid, name, ts);
    jw_lit(c->w, "\"bytes\":");
    jw_int(c->w, seg.sum[device]);
    jw_lit(c->w, "}}");
}

/* Device memory reserved through the CUDA allocator (CUPTI memory records, op 1 allocation,
 * 2 release): a running sum per device, so every row is read in time order and only those in
 * the cut are written. Row columns: ts, op, bytes, device, phase. */
static int emit_segment(struct export_ctx *c, sqlite3_stmt *st)
{
    int64_t ts = I64(st, 0), device = I64(st, 3);
    if (device < 0 || device >= SEG_DEVICES) return 0;
    int wrote = 0;
    if (ts > c->from && seg.seen[device] && !seg.opened[device] && c->from != INT64_MIN &&
        c->phase < 0) {
        segment_point(c, device, c->from);
        seg.opened[device] = 1;
        wrote = 1;
    }
    seg.sum[device] += I64(st, 1) == 1 ? I64(st, 2) : -I64(st, 2);
    seg.seen[device] = 1;
    if (!in_cut(c, ts, ts, (int)I64(st, 4))) return wrote;
    seg.opened[device] = 1;
    segment_point(c, device, ts);
    return 1;
}

/* A window after a device's last change: its value when the window opens. */
static void segments_epilogue(struct export_ctx *c)
{
    if (c->from == INT64_MIN || c->phase >= 0) return;
    for (int d = 0; d < SEG_DEVICES; d++)
        if (seg.seen[d] && !seg.opened[d]) segment_point(c, d, c->from);
}

/* ---- the sources -------------------------------------------------------------------------- */

#define WITH_LAUNCH(cols, table) \
    "SELECT " cols ", a.start, a.tid FROM " table " t LEFT JOIN cuda_api a ON a.corr = t.corr WHERE 1"

static const struct source sources[] = {
    {"kernels", "kernels", "SELECT t.start, t.dur, t.sig, t.corr, t.phase FROM kernels t WHERE 1",
     WITH_LAUNCH("t.start, t.dur, t.sig, t.corr, t.phase", "kernels"), "t.start",
     "t.start + t.dur", "t.phase", NULL, emit_kernel, NULL, NULL, NULL},
    {"copies", "memcpy",
     "SELECT t.start, t.dur, t.bytes, t.copy_kind, t.src_kind, t.dst_kind, t.device, t.stream,"
     " t.corr, t.phase, t.peer_device FROM memcpy t WHERE 1",
     WITH_LAUNCH("t.start, t.dur, t.bytes, t.copy_kind, t.src_kind, t.dst_kind, t.device,"
                 " t.stream, t.corr, t.phase, t.peer_device",
                 "memcpy"),
     "t.start", "t.start + t.dur", "t.phase", NULL, emit_memcpy, NULL, NULL, NULL},
    {"memsets", "memset",
     "SELECT t.start, t.dur, t.bytes, t.value, t.memory_kind, t.device, t.stream, t.corr,"
     " t.phase FROM memset t WHERE 1",
     WITH_LAUNCH("t.start, t.dur, t.bytes, t.value, t.memory_kind, t.device, t.stream, t.corr,"
                 " t.phase",
                 "memset"),
     "t.start", "t.start + t.dur", "t.phase", NULL, emit_memset, NULL, NULL, NULL},
    {"CUDA API calls", "cuda_api",
     "SELECT t.start, t.dur, t.tid, t.name_id, t.domain, t.ret, t.phase, t.corr FROM cuda_api t"
     " WHERE 1",
     NULL, "t.start", "t.start + t.dur", "t.phase", NULL, emit_api, NULL, NULL, NULL},
    {"cuDNN calls", "cudnn_calls",
     "SELECT t.start, t.dur, t.tid, t.phase, t.fn_id, t.status, t.stream, t.op_kind, t.dtype,"
     " t.plan FROM cudnn_calls t WHERE 1",
     NULL, "t.start", "t.start + t.dur", "t.phase", NULL, emit_cudnn, NULL, NULL, NULL},
    {"NVTX ranges", "nvtx_ranges",
     "SELECT t.id, t.tid, t.domain, t.kind, t.start, t.end, s.value, t.category, t.color,"
     " t.phase, t.end_tid FROM nvtx_ranges t LEFT JOIN strings s ON s.id = t.text_id WHERE 1",
     NULL, "t.start", "coalesce(t.end, 9223372036854775807)", "t.phase", NULL, emit_nvtx, NULL, NULL, NULL},
    {"phase spans", "phase_spans",
     "SELECT t.tid, t.phase, t.start, t.end FROM phase_spans t WHERE 1", NULL, "t.start",
     "coalesce(t.end, 9223372036854775807)", "t.phase", NULL, emit_phase_span, NULL, NULL, NULL},
    {"tensor memory", "tensor_memory",
     "SELECT t.ts, t.device_type, t.device_index, t.allocated, t.reserved FROM tensor_memory t"
     " WHERE 1",
     NULL, "t.ts", "t.ts", "t.phase", NULL, emit_tensor, NULL, tensor_prologue, NULL},
    {"device memory", "memory_segments",
     "SELECT t.ts, t.op, t.bytes, t.device, t.phase FROM memory_segments t WHERE t.memory_kind = 3",
     NULL, NULL, NULL, NULL, " ORDER BY t.ts", emit_segment, segments_reset, NULL, segments_epilogue},
};

int sources_count(void)
{
    return (int)(sizeof sources / sizeof sources[0]);
}

const struct source *source_at(int i)
{
    return &sources[i];
}

const char *source_what(const struct source *s)
{
    return s->what;
}

static char *source_sql(const struct export_ctx *c, const struct source *s, int sample)
{
    char *sql = malloc(2048);
    if (!sql) cli_fail("out of memory");
    size_t n = (size_t)snprintf(sql, 2048, "%s", c->flows && s->flows_sql ? s->flows_sql : s->sql);
    if (s->start && c->phase >= 0)
        n += (size_t)snprintf(sql + n, 2048 - n, " AND %s = %d", s->phase, c->phase);
    if (s->start && c->to != INT64_MAX)
        n += (size_t)snprintf(sql + n, 2048 - n, " AND %s < %lld", s->start, (long long)c->to);
    if (s->start && c->from != INT64_MIN)
        n += (size_t)snprintf(sql + n, 2048 - n, " AND %s >= %lld", s->end, (long long)c->from);
    if (sample)
        snprintf(sql + n, 2048 - n, " AND t.rowid = ?");
    else if (s->order)
        snprintf(sql + n, 2048 - n, "%s", s->order);
    return sql;
}

void source_write(struct export_ctx *c, const struct source *s)
{
    if (s->reset) s->reset(c);
    if (s->prologue) s->prologue(c);
    char *sql = source_sql(c, s, 0);
    sqlite3_stmt *st = db_prepare(c->db, sql);
    free(sql);
    while (db_step(st)) s->emit(c, st);
    sqlite3_finalize(st);
    if (s->epilogue) s->epilogue(c);
}

void source_estimate(struct export_ctx *c, const struct source *s, int samples, double *bytes,
                     double *events)
{
    char q[128];
    snprintf(q, sizeof q, "SELECT max(rowid) FROM %s", s->table);
    int64_t rows = db_int(c->db, q, 0);
    *bytes = *events = 0;
    if (rows <= 0) return;
    int64_t probes = rows < samples ? rows : samples;
    struct jw count, *saved = c->w;
    uint64_t saved_events = c->events;
    jw_init(&count, NULL);
    c->w = &count;
    c->events = 1; /* every sampled event pays its separator */
    if (s->reset) s->reset(c);
    /* Prologue and epilogue events are written once, not per row: counted as they are. */
    if (s->prologue) s->prologue(c);
    double bytes0 = (double)(count.bytes + count.n), events0 = (double)(c->events - 1);
    char *sql = source_sql(c, s, 1);
    sqlite3_stmt *st = db_prepare(c->db, sql);
    free(sql);
    for (int64_t k = 0; k < probes; k++) {
        sqlite3_bind_int64(st, 1, 1 + (int64_t)((double)k * (double)rows / (double)probes));
        if (db_step(st)) s->emit(c, st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    double bytes1 = (double)(count.bytes + count.n), events1 = (double)(c->events - 1);
    if (s->epilogue) s->epilogue(c);
    double bytes2 = (double)(count.bytes + count.n), events2 = (double)(c->events - 1);
    double scale = (double)rows / (double)probes;
    *bytes = (bytes1 - bytes0) * scale + bytes0 + (bytes2 - bytes1);
    *events = (events1 - events0) * scale + events0 + (events2 - events1);
    jw_free(&count);
    c->w = saved;
    c->events = saved_events;
}
