/*
 * export_tracks.c: the processes and tracks of an exported trace, and the small tables the events
 * are written from (export.h).
 *
 * Layout, chosen so that Perfetto's JSON importer shows it without nesting errors:
 *   - process "GPU" (pid = host pid + EXPORT_GPU_PID_BASE, never a real pid): one track per
 *     (device, stream), tid 1, 2, ... in (device, stream) order; memory counters per device;
 *   - the host process (its real pid): one track per thread (tid = the kernel's thread id) with
 *     CUDA API calls, cuDNN calls, NVTX push/pop ranges and marks, which nest by construction;
 *     beside it the thread's phases (tid + EXPORT_PHASE_TID_BASE), because a phase can change in
 *     the middle of an API call or an NVTX range, and slices on one track must nest strictly.
 * Start/end NVTX ranges may overlap anything and cross threads: they are async events of the
 * host process (export_events.c).
 */
#include "export.h"
#include "../base/names.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- names: string id -> quoted JSON string ----------------------------------------------- */

static uint64_t mix(int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

static void names_grow(struct export_ctx *c)
{
    size_t cap = c->names_cap ? c->names_cap * 2 : 256;
    struct name_slot *t = calloc(cap, sizeof *t);
    if (!t) cli_fail("out of memory");
    for (size_t i = 0; i < c->names_cap; i++) {
        if (!c->names[i].q.s) continue;
        size_t j = mix(c->names[i].id) & (cap - 1);
        while (t[j].q.s) j = (j + 1) & (cap - 1);
        t[j] = c->names[i];
    }
    free(c->names);
    c->names = t;
    c->names_cap = cap;
}

/* Only names written many times come here (kernels, API functions, cuDNN functions, domains):
 * their number is that of distinct functions, not of events. */
const struct qstr *name_of(struct export_ctx *c, int64_t id, const char *fallback)
{
    if ((c->names_used + 1) * 2 > c->names_cap) names_grow(c);
    size_t j = mix(id) & (c->names_cap - 1);
    for (; c->names[j].q.s; j = (j + 1) & (c->names_cap - 1))
        if (c->names[j].id == id) return &c->names[j].q;
    sqlite3_stmt *st = db_prepare(c->db, "SELECT value FROM strings WHERE id = ?");
    sqlite3_bind_int64(st, 1, id);
    const char *text = fallback;
    size_t len = strlen(fallback);
    char plain[4096];
    if (db_step(st) && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        text = (const char *)sqlite3_column_text(st, 0);
        len = (size_t)sqlite3_column_bytes(st, 0);
        if (!strncmp(text, "_Z", 2) && len < sizeof plain) { /* a kernel: as people read it */
            name_demangled(text, plain, sizeof plain);
            text = plain;
            len = strlen(plain);
        }
    }
    c->names[j].id = id;
    c->names[j].q.s = json_quote(text, len, &c->names[j].q.len);
    c->names_used++;
    sqlite3_finalize(st);
    return &c->names[j].q;
}

/* ---- GPU streams -------------------------------------------------------------------------- */

static int cmp_stream(const void *a, const void *b)
{
    const struct stream_track *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    return (x->stream > y->stream) - (x->stream < y->stream);
}

int stream_index(const struct export_ctx *c, int64_t device, int64_t stream)
{
    size_t lo = 0, hi = c->nstreams;
    struct stream_track key = {device, stream, 0, NULL, 0};
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = cmp_stream(&key, &c->streams[mid]);
        if (!r) return (int)mid;
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

static void load_streams(struct export_ctx *c)
{
    /* Distinct (device, stream) pairs: launch signatures are few; copies and memsets are read
     * once through SQLite's DISTINCT, which keeps only the distinct pairs. */
    sqlite3_stmt *st = db_prepare(c->db, "SELECT DISTINCT coalesce(device, 0), coalesce(stream, 0)"
                                         " FROM (SELECT device, stream FROM launch_sigs UNION ALL"
                                         " SELECT device, stream FROM memcpy UNION ALL"
                                         " SELECT device, stream FROM memset)");
    size_t cap = 0;
    while (db_step(st)) {
        if (c->nstreams == cap) {
            cap = cap ? cap * 2 : 16;
            c->streams = realloc(c->streams, cap * sizeof *c->streams);
            if (!c->streams) cli_fail("out of memory");
        }
        c->streams[c->nstreams++] = (struct stream_track){sqlite3_column_int64(st, 0),
                                                          sqlite3_column_int64(st, 1), 0, NULL, 0};
    }
    sqlite3_finalize(st);
    qsort(c->streams, c->nstreams, sizeof *c->streams, cmp_stream);
    for (size_t i = 0; i < c->nstreams; i++) {
        char buf[96];
        c->streams[i].tid = (int64_t)i + 1; /* tid 0 would be read as "the pid" */
        int n =
            snprintf(buf, sizeof buf, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)c->gpu_pid,
                     (long long)c->streams[i].tid);
        c->streams[i].prefix = strdup(buf);
        c->streams[i].prefix_len = (size_t)n;
        if (!c->streams[i].prefix) cli_fail("out of memory");
    }
}

/* ---- launch signatures -------------------------------------------------------------------- */

static void load_sigs(struct export_ctx *c)
{
    int64_t max_id = db_int(c->db, "SELECT max(id) FROM launch_sigs", 0);
    if (max_id < 0 || max_id > 100000000)
        cli_fail("%s is damaged (launch signature ids)", db_path_of(c->db));
    c->nsigs = (size_t)max_id + 1;
    c->sigs = calloc(c->nsigs, sizeof *c->sigs);
    if (!c->sigs) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(c->db, "SELECT id, name_id, coalesce(device, 0),"
                                         " coalesce(stream, 0), grid_x, grid_y, grid_z, block_x,"
                                         " block_y, block_z, registers, static_smem, dynamic_smem,"
                                         " graph_id, graph_node FROM launch_sigs");
    while (db_step(st)) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 0 || id > max_id) continue;
        struct sig_info *g = &c->sigs[id];
        int64_t v[15];
        for (int i = 0; i < 15; i++) v[i] = sqlite3_column_int64(st, i);
        g->used = 1;
        g->name = *name_of(c, v[1], "?");
        g->track = stream_index(c, v[2], v[3]);
        char tail[512];
        int n = snprintf(tail, sizeof tail,
                         ",\"device\":%lld,\"stream\":%lld,\"grid\":[%lld,%lld,%lld],"
                         "\"block\":[%lld,%lld,%lld],\"registers per thread\":%lld,"
                         "\"shared memory\":%lld",
                         (long long)v[2], (long long)v[3], (long long)v[4], (long long)v[5],
                         (long long)v[6], (long long)v[7], (long long)v[8], (long long)v[9],
                         (long long)v[10], (long long)(v[11] + v[12]));
        if (v[13] && n > 0 && n < (int)sizeof tail)
            n += snprintf(tail + n, sizeof tail - (size_t)n, ",\"graph\":%lld,\"graph node\":%lld",
                          (long long)v[13], (long long)v[14]);
        g->tail = strdup(tail);
        g->tail_len = strlen(tail);
        if (!g->tail) cli_fail("out of memory");
    }
    sqlite3_finalize(st);
}

/* ---- the rest ----------------------------------------------------------------------------- */

static void load_phases(struct export_ctx *c)
{
    for (int i = 0; i < c->phases->n; i++) {
        const struct phase_info *ph = &c->phases->v[i];
        if (ph->id < 0 || ph->id >= EXPORT_MAX_PHASES || c->phase_label[ph->id].s) continue;
        c->phase_label[ph->id].s =
            json_quote(ph->label, strlen(ph->label), &c->phase_label[ph->id].len);
    }
}

static void load_domains(struct export_ctx *c)
{
    int64_t max_id = db_int(c->db, "SELECT max(id) FROM nvtx_domains", 0);
    if (max_id < 0 || max_id > 1000000) max_id = 0;
    c->ndomains = (size_t)max_id + 1;
    c->domains = calloc(c->ndomains, sizeof *c->domains);
    if (!c->domains) cli_fail("out of memory");
    sqlite3_stmt *st = db_prepare(c->db, "SELECT id, name_id FROM nvtx_domains");
    while (db_step(st)) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id > 0 && id <= max_id) c->domains[id] = *name_of(c, sqlite3_column_int64(st, 1), "?");
    }
    sqlite3_finalize(st);
}

void tracks_load(struct export_ctx *c)
{
    if (!db_meta_int(c->db, "pid", &c->host_pid) || c->host_pid <= 0 || c->host_pid >= (1 << 22))
        c->host_pid = 1;
    c->gpu_pid = c->host_pid + EXPORT_GPU_PID_BASE;
    if (!db_meta_int(c->db, "duration_ns", &c->duration_ns)) c->duration_ns = -1;
    load_phases(c);
    load_streams(c);
    load_sigs(c);
    load_domains(c);
}

void tracks_free(struct export_ctx *c)
{
    for (size_t i = 0; i < c->names_cap; i++) free(c->names[i].q.s);
    for (size_t i = 0; i < c->nsigs; i++) free(c->sigs[i].tail);
    for (size_t i = 0; i < c->nstreams; i++) free(c->streams[i].prefix);
    for (int i = 0; i < EXPORT_MAX_PHASES; i++) free(c->phase_label[i].s);
    free(c->names);
    free(c->sigs);
    free(c->streams);
    free(c->domains);
}

/* ---- metadata events ---------------------------------------------------------------------- */

static void meta_event(struct export_ctx *c, const char *what, int64_t pid, int64_t tid,
                       const char *name, size_t len, int64_t sort)
{
    struct json_out *w = c->w;
    ev_open(c);
    json_lit(w, "\"ph\":\"M\",\"name\":\"");
    json_put(w, what, strlen(what));
    json_lit(w, "\",\"pid\":");
    json_int(w, pid);
    if (tid >= 0) {
        json_lit(w, ",\"tid\":");
        json_int(w, tid);
    }
    json_lit(w, ",\"args\":{");
    if (name) {
        json_lit(w, "\"name\":");
        json_str(w, name, len);
    } else {
        json_lit(w, "\"sort_index\":");
        json_int(w, sort);
    }
    json_lit(w, "}}");
}

static void name_and_sort(struct export_ctx *c, const char *kind, int64_t pid, int64_t tid,
                          const char *name, int64_t sort)
{
    char what[32];
    snprintf(what, sizeof what, "%s_name", kind);
    meta_event(c, what, pid, tid, name, strlen(name), 0);
    snprintf(what, sizeof what, "%s_sort_index", kind);
    meta_event(c, what, pid, tid, NULL, 0, sort);
}

void tracks_write_metadata(struct export_ctx *c)
{
    char buf[512];
    char *exe = db_meta_text(c->db, "executable");
    const char *base = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    name_and_sort(c, "process", c->host_pid, -1, base && *base ? base : "host", 0);
    free(exe);
    name_and_sort(c, "process", c->gpu_pid, -1, "GPU", 1);
    for (size_t i = 0; i < c->nstreams; i++) {
        snprintf(buf, sizeof buf, "GPU %lld stream %lld", (long long)c->streams[i].device,
                 (long long)c->streams[i].stream);
        name_and_sort(c, "thread", c->gpu_pid, c->streams[i].tid, buf, (int64_t)i);
    }
    /* Host threads: the main thread first, then by first appearance; each thread's phase track
     * right after it. Threads and phase spans are small tables. */
    sqlite3_stmt *st =
        db_prepare(c->db, "SELECT t.tid, s.value, EXISTS (SELECT 1 FROM phase_spans p"
                          " WHERE p.tid = t.tid) FROM (SELECT tid, name_id, first_ns FROM"
                          " threads UNION SELECT DISTINCT tid, NULL, NULL FROM phase_spans"
                          " WHERE tid NOT IN (SELECT tid FROM threads)) t LEFT JOIN strings"
                          " s ON s.id = t.name_id ORDER BY t.tid <> ?, t.first_ns IS NULL,"
                          " t.first_ns, t.tid");
    sqlite3_bind_int64(st, 1, c->host_pid);
    int64_t order = 0;
    while (db_step(st)) {
        int64_t tid = sqlite3_column_int64(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (name) {
            snprintf(buf, sizeof buf, "%s", name);
            meta_event(c, "thread_name", c->host_pid, tid, buf, strlen(buf), 0);
        } else {
            snprintf(buf, sizeof buf, "thread %lld", (long long)tid);
        }
        meta_event(c, "thread_sort_index", c->host_pid, tid, NULL, 0, order++);
        if (sqlite3_column_int(st, 2)) {
            size_t n = strlen(buf);
            snprintf(buf + n, sizeof buf - n, " %s", "phases");
            name_and_sort(c, "thread", c->host_pid, tid + EXPORT_PHASE_TID_BASE, buf, order++);
            buf[n] = 0;
            snprintf(buf + n, sizeof buf - n, " %s", "iterations");
            name_and_sort(c, "thread", c->host_pid, tid + EXPORT_ITER_TID_BASE, buf, order++);
        }
    }
    sqlite3_finalize(st);
}
