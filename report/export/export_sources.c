/*
 * export_sources.c: where an exported trace's events come from (export.h): one source per table,
 * each one SELECT streamed row by row with the cut (--phase, --from/--to) in its WHERE clause and
 * an emitter for one row (export_events.c, and the memory counters here). The size estimate runs
 * the same emitters on rows sampled by rowid into a counting writer.
 */
#include "export.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct source {
    const char *what;      /* for messages */
    const char *table;     /* aliased t in sql; a database without it: the source is empty */
    const char *sql;       /* SELECT ... FROM table t ... WHERE 1 */
    const char *flows_sql; /* the same with the launching call's start and thread (--flows) */
    const char *op_sql, *op_flows_sql; /* kernels: the same with the operator (schema 4) */
    const char *start, *end, *phase;   /* cut expressions; start NULL: the emitter cuts */
    const char *order;
    int (*emit)(struct export_ctx *c, sqlite3_stmt *st); /* 1 when it wrote something */
    void (*reset)(struct export_ctx *c);                 /* state, before a pass */
    void (*prologue)(struct export_ctx *c);              /* events before the rows (writing) */
    void (*epilogue)(struct export_ctx *c);              /* events after the rows (writing) */
};

#define I64(st, i)     sqlite3_column_int64((st), (i))
#define IS_NULL(st, i) (sqlite3_column_type((st), (i)) == SQLITE_NULL)

static int in_cut(const struct export_ctx *c, int64_t start, int64_t end, int phase)
{
    if (c->phase >= 0 && phase != c->phase) return 0;
    return start < c->to && end >= c->from;
}

/* ---- memory counters ---------------------------------------------------------------------- */

static void counter_open(struct export_ctx *c, int64_t pid, const char *name, int64_t ts)
{
    struct json_out *w = c->w;
    ev_open(c);
    json_lit(w, "\"ph\":\"C\",\"name\":");
    json_str(w, name, strlen(name));
    json_lit(w, ",\"pid\":");
    json_int(w, pid);
    json_lit(w, ",\"tid\":");
    json_int(w, pid);
    json_lit(w, ",\"ts\":");
    json_us(w, ts);
    json_lit(w, ",\"args\":{");
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
        json_lit(c->w, "\"allocated\":");
        json_int(c->w, I64(st, 3));
        sep = ",";
    }
    if (!IS_NULL(st, 4)) {
        json_put(c->w, sep, strlen(sep));
        json_lit(c->w, "\"reserved\":");
        json_int(c->w, I64(st, 4));
    }
    json_lit(c->w, "}}");
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
    sqlite3_stmt *st =
        db_prepare(c->db, "SELECT max(ts), device_type, device_index, allocated,"
                          " reserved FROM tensor_memory WHERE ts < ? AND " DB_TENSOR_TOTALS
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
    json_lit(c->w, "\"bytes\":");
    json_int(c->w, seg.sum[device]);
    json_lit(c->w, "}}");
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

#define WITH_LAUNCH(cols, table)                                                                   \
    "SELECT " cols ", a.start, a.tid FROM " table                                                  \
    " t LEFT JOIN cuda_api a ON a.corr = t.corr WHERE 1"

static const struct source sources[] = {
    {.what = "kernels",
     .table = "kernels",
     .sql = "SELECT t.start, t.dur, t.sig, t.corr, t.phase FROM kernels t WHERE 1",
     .flows_sql = WITH_LAUNCH("t.start, t.dur, t.sig, t.corr, t.phase", "kernels"),
     .op_sql = "SELECT t.start, t.dur, t.sig, t.corr, t.phase, NULL, NULL, o.value FROM kernels t"
               " JOIN kernel_rows r ON r.rowid = t.rowid LEFT JOIN strings o ON o.id = r.op"
               " WHERE 1",
     .op_flows_sql = "SELECT t.start, t.dur, t.sig, t.corr, t.phase, a.start, a.tid, o.value"
                     " FROM kernels t LEFT JOIN cuda_api a ON a.corr = t.corr"
                     " JOIN kernel_rows r ON r.rowid = t.rowid LEFT JOIN strings o ON o.id = r.op"
                     " WHERE 1",
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_kernel},
    {.what = "copies",
     .table = "memcpy",
     .sql = "SELECT t.start, t.dur, t.bytes, t.copy_kind, t.src_kind, t.dst_kind, t.device,"
            " t.stream, t.corr, t.phase, t.peer_device FROM memcpy t WHERE 1",
     .flows_sql = WITH_LAUNCH("t.start, t.dur, t.bytes, t.copy_kind, t.src_kind, t.dst_kind,"
                              " t.device, t.stream, t.corr, t.phase, t.peer_device",
                              "memcpy"),
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_memcpy},
    {.what = "memsets",
     .table = "memset",
     .sql = "SELECT t.start, t.dur, t.bytes, t.value, t.memory_kind, t.device, t.stream, t.corr,"
            " t.phase FROM memset t WHERE 1",
     .flows_sql = WITH_LAUNCH("t.start, t.dur, t.bytes, t.value, t.memory_kind, t.device,"
                              " t.stream, t.corr, t.phase",
                              "memset"),
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_memset},
    {.what = "CUDA API calls",
     .table = "cuda_api",
     .sql = "SELECT t.start, t.dur, t.tid, t.name_id, t.domain, t.ret, t.phase, t.corr"
            " FROM cuda_api t WHERE 1",
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_api},
    {.what = "cuDNN calls",
     .table = "cudnn_calls",
     .sql = "SELECT t.start, t.dur, t.tid, t.phase, t.fn_id, t.status, t.stream, t.op_kind,"
            " t.dtype, t.plan FROM cudnn_calls t WHERE 1",
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_cudnn},
    {.what = "NVTX ranges",
     .table = "nvtx_ranges",
     .sql = "SELECT t.id, t.tid, t.domain, t.kind, t.start, t.end, s.value, t.category, t.color,"
            " t.phase, t.end_tid FROM nvtx_ranges t LEFT JOIN strings s ON s.id = t.text_id"
            " WHERE 1",
     .start = "t.start",
     .end = "coalesce(t.end, 9223372036854775807)",
     .phase = "t.phase",
     .emit = emit_nvtx},
    {.what = "phase spans",
     .table = "phase_spans",
     .sql = "SELECT t.tid, t.phase, t.start, t.end FROM phase_spans t WHERE 1",
     .start = "t.start",
     .end = "coalesce(t.end, 9223372036854775807)",
     .phase = "t.phase",
     .emit = emit_phase_span},
    {.what = "iterations",
     .table = "iterations",
     .sql = "SELECT t.rowid, t.tid, t.start, t.dur, t.source, t.name, t.phase FROM iterations t"
            " WHERE 1", /* the report's shadow (iterations_shadow): its series' names */
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_iteration},
    {.what = "PyTorch operators",
     .table = "torch_operators",
     .sql = "SELECT t.start, t.dur, t.tid, s.value, t.self, t.depth, t.iter, t.phase"
            " FROM torch_operators t LEFT JOIN strings s ON s.id = t.name_id WHERE 1",
     .start = "t.start",
     .end = "t.start + t.dur",
     .phase = "t.phase",
     .emit = emit_operator},
    {.what = "tensor memory",
     .table = "tensor_memory",
     .sql = "SELECT t.ts, t.device_type, t.device_index, t.allocated, t.reserved"
            " FROM tensor_memory t WHERE " DB_TENSOR_TOTALS,
     .start = "t.ts",
     .end = "t.ts",
     .phase = "t.phase",
     .emit = emit_tensor,
     .prologue = tensor_prologue},
    /* A running sum: every row in time order, the emitter cuts. */
    {.what = "device memory",
     .table = "memory_segments",
     .sql = "SELECT t.ts, t.op, t.bytes, t.device, t.phase FROM memory_segments t"
            " WHERE t.memory_kind = 3",
     .order = " ORDER BY t.ts",
     .emit = emit_segment,
     .reset = segments_reset,
     .epilogue = segments_epilogue},
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

size_t export_cut_sql(const struct export_ctx *c, const char *start, const char *end,
                      const char *phase, int64_t limit, char *out, size_t n)
{
    size_t o = 0;
    int64_t before = c->to < limit ? c->to : limit;
    out[0] = 0;
    if (c->phase >= 0 && o < n)
        o += (size_t)snprintf(out + o, n - o, " AND %s = %d", phase, c->phase);
    if (before != INT64_MAX && o < n)
        o += (size_t)snprintf(out + o, n - o, " AND %s < %lld", start, (long long)before);
    if (c->from != INT64_MIN && o < n)
        o += (size_t)snprintf(out + o, n - o, " AND %s >= %lld", end, (long long)c->from);
    return o < n ? o : n - 1;
}

#define API_KEPT                                                                                   \
    " AND (t.dur >= 1000 OR t.name_id IN (SELECT id FROM strings WHERE value LIKE '%Launch%'"      \
    " OR value LIKE '%Memcpy%' OR value LIKE '%Memset%' OR value LIKE '%Graph%'))"

const char *export_api_filter(const struct export_ctx *c)
{
    return c->all_api ? "" : API_KEPT;
}

int64_t export_api_left_out(const struct export_ctx *c)
{
    if (c->all_api || !db_has_table(c->db, "cuda_api")) return 0;
    char cut[400], sql[1024];
    export_cut_sql(c, "t.start", "t.start + t.dur", "t.phase", INT64_MAX, cut, sizeof cut);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM cuda_api t WHERE NOT (1%s)%s", API_KEPT, cut);
    return db_int(c->db, sql, 0);
}

static char *source_sql(const struct export_ctx *c, const struct source *s, int sample)
{
    char *sql = malloc(2048);
    if (!sql) cli_fail("out of memory");
    int op = s->op_sql && db_has_column(c->db, "kernel_rows", "op");
    const char *base = c->flows && s->flows_sql ? (op ? s->op_flows_sql : s->flows_sql)
                                                : (op ? s->op_sql : s->sql);
    size_t n = (size_t)snprintf(sql, 2048, "%s", base);
    if (!strcmp(s->table, "cuda_api"))
        n += (size_t)snprintf(sql + n, 2048 - n, "%s", export_api_filter(c));
    if (s->start) n += export_cut_sql(c, s->start, s->end, s->phase, INT64_MAX, sql + n, 2048 - n);
    if (sample)
        snprintf(sql + n, 2048 - n, " AND t.rowid = ?");
    else if (s->order)
        snprintf(sql + n, 2048 - n, "%s", s->order);
    return sql;
}

void source_write(struct export_ctx *c, const struct source *s)
{
    if (!db_has_table(c->db, s->table)) return;
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
    /* Rows are probed evenly over the table's rowids (ids of API calls and NVTX ranges need
     * not start at 1); with no more rows than samples, every row is read and the estimate is
     * exact. */
    *bytes = *events = 0;
    if (!db_has_table(c->db, s->table)) return;
    char q[160];
    snprintf(q, sizeof q, "SELECT min(rowid) FROM %s", s->table);
    int64_t first = db_int(c->db, q, 0);
    snprintf(q, sizeof q, "SELECT max(rowid) FROM %s", s->table);
    int64_t last = db_int(c->db, q, 0);
    *bytes = *events = 0;
    if (last < first || (first == 0 && last == 0)) return;
    int64_t rows = last - first + 1;
    int64_t probes = rows < samples ? rows : samples;
    struct json_out count, *saved = c->w;
    uint64_t saved_events = c->events;
    json_init(&count, NULL);
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
        sqlite3_bind_int64(st, 1, first + (int64_t)((double)k * (double)rows / (double)probes));
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
    json_free(&count);
    c->w = saved;
    c->events = saved_events;
}
