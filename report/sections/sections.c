/*
 * sections.c: the report's core sections as tables: the run header, the phase table and the
 * kernel summary (nsys cuda_gpu_kern_sum columns).
 */
#include "sections.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void device_name(int type, int index, char *out, size_t n)
{
    if (type == 0)
        snprintf(out, n, "cpu");
    else if (type == 1)
        snprintf(out, n, "cuda:%d", index);
    else
        snprintf(out, n, "device%d:%d", type, index);
}

void phase_cells(struct table *t, const struct phase_info *ph, int full, int shrt)
{
    char s[32] = "(no phase)";
    if (ph) phase_short_label(ph, s, sizeof s);
    table_set_text(t, full, ph ? ph->label : "(no phase)");
    table_set_text(t, shrt, s);
}

static void meta_text_col(struct table *t, struct sqlite3 *db, int col, const char *key)
{
    char *v = db_meta_text(db, key);
    if (v) table_set_text(t, col, v);
    free(v);
}

static int meta_int_col(struct table *t, struct sqlite3 *db, int col, const char *key)
{
    int64_t v;
    if (!db_meta_int(db, key, &v)) return 0;
    table_set_int(t, col, v);
    return 1;
}

static void version_text(int64_t v, char *out, size_t n)
{
    snprintf(out, n, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
}

/* "NVIDIA H100 (sm_90, 132 SMs, 79.19GiB)" for each device, joined. */
static void gpus_text(struct sqlite3 *db, char *out, size_t n)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT id, name, cc_major, cc_minor, sm_count,"
                                      " global_memory_bytes FROM devices ORDER BY id");
    size_t o = 0;
    out[0] = 0;
    while (db_step(st) && o + 64 < n) {
        char mem[32];
        fmt_bytes(mem, sizeof mem, (double)sqlite3_column_int64(st, 5));
        o += (size_t)snprintf(out + o, n - o, "%s%d: %s (sm_%d%d, %d SMs, %s)", o ? "; " : "",
                              sqlite3_column_int(st, 0), sqlite3_column_text(st, 1),
                              sqlite3_column_int(st, 2), sqlite3_column_int(st, 3),
                              sqlite3_column_int(st, 4), mem);
    }
    sqlite3_finalize(st);
}

/* Where events were dropped: "grad/off 120, no_grad/off 80; up to 7 iterations touched". */
void drops_where(struct sqlite3 *db, char *out, size_t n)
{
    out[0] = 0;
    if (!db_has_table(db, "event_drops")) return;
    size_t o = 0;
    sqlite3_stmt *st = db_prepare(
        db, "SELECT coalesce(CASE p.grad_mode WHEN 'inference_mode' THEN 'inference' ELSE"
            " p.grad_mode END || '/' || p.autocast, 'no phase'), sum(d.count) FROM event_drops d"
            " LEFT JOIN phases p ON p.id = d.phase GROUP BY d.phase ORDER BY 2 DESC");
    while (db_step(st) && o + 48 < n)
        o += (size_t)snprintf(out + o, n - o, "%s%s %lld", o ? ", " : "in ",
                              sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM iterations i WHERE %s AND EXISTS (SELECT 1 FROM"
             " event_drops d WHERE d.tid = i.tid AND d.first <= i.start + i.dur"
             " AND d.last >= i.start)",
             iterations_counted(db));
    int64_t iters = db_int(db, sql, 0);
    if (iters && o + 48 < n)
        snprintf(out + o, n - o, "; up to %lld %s touched", (long long)iters,
                 iters == 1 ? "iteration" : "iterations");
}

static void warnings_text(struct sqlite3 *db, char *out, size_t n)
{
    size_t o = 0;
    int64_t v;
    out[0] = 0;
#define WARN(...) (o += (size_t)snprintf(out + o, o < n ? n - o : 0, __VA_ARGS__))
    if (!db_meta_int(db, "finished", &v) || !v)
        WARN("%sthe run did not finish writing (killed, or still running): figures cover what"
             " was committed",
             o ? "; " : "");
    if (db_meta_int(db, "dropped_events", &v) && v) {
        char where[256];
        drops_where(db, where, sizeof where);
        WARN("%s%lld events dropped, the writer falling behind (%s%sraise INFPROF_BUFFER_MB or"
             " INFPROF_BUFFER_WAIT_MS)",
             o ? "; " : "", (long long)v, where, where[0] ? "; " : "");
    }
    if (db_meta_int(db, "cupti_dropped_records", &v) && v)
        WARN("%s%lld CUPTI records dropped (raise INFPROF_CUPTI_BUFFERS or _BUFFER_KB)",
             o ? "; " : "", (long long)v);
    if (db_meta_int(db, "cupti_buffers_refused", &v) && v)
        WARN("%s%lld CUPTI buffer requests refused: the pool was empty", o ? "; " : "",
             (long long)v);
    if (db_meta_int(db, "cupti_buffer_errors", &v) && v)
        WARN("%s%lld CUPTI buffers could not be read to the end (their last records are lost)",
             o ? "; " : "", (long long)v);
    if (db_meta_int(db, "cupti_records_not_stored", &v) && v)
        WARN("%s%lld CUPTI records could not be stored", o ? "; " : "", (long long)v);
    if (db_meta_int(db, "disk_reserve_stop_ns", &v))
        WARN("%srecording stopped %.1f s into the run: the disk fell below the free space left to"
             " the program (INFPROF_DISK_RESERVE_MB); what followed is counted as dropped",
             o ? "; " : "", v / 1e9);
    if (db_meta_int(db, "finish_cut_ns", &v))
        WARN("%sthe finish ran out of time (INFPROF_FINISH_TIMEOUT_MS) at %.1f s: the events still"
             " buffered then are counted as dropped, not stored",
             o ? "; " : "", v / 1e9);
    if (db_meta_int(db, "events_after_end", &v) && v)
        WARN("%s%lld NVTX ranges or marks came after the run ended (a library's destructor or"
             " atexit handler, other threads during exit): counted, not stored",
             o ? "; " : "", (long long)v);
    if (db_meta_int(db, "duplicate_rows", &v) && v)
        WARN("%s%lld rows with a duplicate key were not stored", o ? "; " : "", (long long)v);
    if (db_meta_int(db, "write_errors", &v) && v) {
        int64_t rows = 0;
        db_meta_int(db, "rows_not_written", &rows);
        WARN("%s%lld database writes failed", o ? "; " : "", (long long)v);
        if (rows)
            WARN(" (%lld rows not written: a full disk or a file size limit?)", (long long)rows);
    }
    /* Tables of the schema the database says it has, gone (edited, or cut short): named. */
    static const char *const tables[] = {
        "phases",      "phase_spans", "iterations",    "kernel_rows", "launch_sigs",
        "memcpy",      "memset",      "tensor_memory", "nvtx_ranges", "cuda_api",
        "cudnn_calls", "strings",     "event_drops"};
    int64_t version = db_int(db, "PRAGMA user_version", 0);
    char missing[256] = "";
    size_t m = 0;
    for (size_t i = 0; i < sizeof tables / sizeof *tables && m + 32 < sizeof missing; i++) {
        if (version < 2 && !strcmp(tables[i], "event_drops")) continue;
        if (!db_has_table(db, tables[i]))
            m +=
                (size_t)snprintf(missing + m, sizeof missing - m, "%s%s", m ? ", " : "", tables[i]);
    }
    if (m)
        WARN("%stables missing from the database: %s (edited, or cut short): what they held is"
             " not in this report",
             o ? "; " : "", missing);
    char *cupti = db_meta_text(db, "collector.cupti");
    /* A program that never used CUDA lost nothing; anything else off or passive is a gap. */
    if (cupti && strncmp(cupti, "on", 2) != 0 && !strstr(cupti, "did not initialise CUDA"))
        WARN("%sCUDA activity not recorded (%s)", o ? "; " : "", cupti);
    free(cupti);
#undef WARN
}

struct table *section_run(struct sqlite3 *db, const struct run_phases *p)
{
    struct table *t = table_new("run", "Run");
    t->object = 1;
    static const struct {
        const char *key, *title;
        enum col_type type;
    } cols[] = {
        {"command", "Command", COL_TEXT},
        {"pid", "PID", COL_INT},
        {"host", "Host", COL_TEXT},
        {"start_time", "Started", COL_TEXT},
        {"start_unix_ns", NULL, COL_INT},
        {"duration_ns", "Duration", COL_NS},
        {"end_reason", "Ended by", COL_TEXT},
        {"exit_status", "Exit status", COL_INT},
        {"finished", NULL, COL_INT},
        {"gpus", "GPU", COL_TEXT},
        {"cuda_driver", "CUDA driver", COL_TEXT},
        {"cuda_runtime", "CUDA runtime", COL_TEXT},
        {"torch_api", NULL, COL_TEXT}, /* long: JSON only; "libtorch hooks" says on or off */
        {"collector_cupti", "CUPTI", COL_TEXT},
        {"collector_torch", "libtorch hooks", COL_TEXT},
        {"collector_nvtx", "NVTX", COL_TEXT},
        {"collector_cudnn", "cuDNN", COL_TEXT},
        {"collector_energy", "Energy", COL_TEXT},
        {"python_module_hooks", "Python modules", COL_TEXT},
        {"settings", "Settings", COL_TEXT},
        {"events_recorded", "Events", COL_INT},
        {"kernels", "Kernels", COL_INT},
        {"dropped_events", "Dropped events", COL_INT},
        {"cupti_dropped_records", "Dropped CUPTI records", COL_INT},
        {"cupti_buffers_refused", NULL, COL_INT},
        {"write_errors", NULL, COL_INT},
        {"warnings", "Warnings", COL_TEXT},
        {"infprof_version", NULL, COL_TEXT},
        {"output_path", NULL, COL_TEXT},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        table_col(t, cols[i].key, cols[i].title, cols[i].type);
    table_row(t);
    char buf[2048];
    int c = 0;
    meta_text_col(t, db, c++, "command");
    meta_int_col(t, db, c++, "pid");
    meta_text_col(t, db, c++, "host");
    int64_t start;
    if (db_meta_int(db, "start_unix_ns", &start)) {
        time_t secs = (time_t)(start / 1000000000);
        struct tm tm;
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", localtime_r(&secs, &tm));
        table_set_text(t, c, buf);
        table_set_int(t, c + 1, start);
    }
    c += 2;
    meta_int_col(t, db, c++, "duration_ns");
    meta_text_col(t, db, c++, "end_reason");
    meta_int_col(t, db, c++, "exit_status");
    if (!meta_int_col(t, db, c, "finished")) table_set_int(t, c, 0);
    c++;
    gpus_text(db, buf, sizeof buf);
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    int64_t v;
    if (db_meta_int(db, "cuda_driver_version", &v))
        version_text(v, buf, sizeof buf), table_set_text(t, c, buf);
    c++;
    if (db_meta_int(db, "cuda_runtime_version", &v))
        version_text(v, buf, sizeof buf), table_set_text(t, c, buf);
    c++;
    meta_text_col(t, db, c++, "torch_api");
    meta_text_col(t, db, c++, "collector.cupti");
    meta_text_col(t, db, c++, "collector.torch");
    meta_text_col(t, db, c++, "collector.nvtx");
    meta_text_col(t, db, c++, "collector.cudnn");
    meta_text_col(t, db, c++, "collector.energy");
    meta_text_col(t, db, c++, "python_module_hooks"); /* Python processes only */
    /* The libtorch settings the program set (report/run/settings.c). */
    const struct run_settings *set = &p->settings;
    if (set->constant[0] || set->varying[0]) {
        snprintf(buf, sizeof buf, "%s%s%s%s", set->constant,
                 set->constant[0] && set->varying[0] ? "; " : "",
                 set->varying[0] ? "changed between iterations (in the series names): " : "",
                 set->varying);
        table_set_text(t, c, buf);
    }
    c++;
    meta_int_col(t, db, c++, "events_recorded");
    /* From the end-of-run summary when there is one: counting rows scans the whole table. */
    int64_t kernels = db_int(db, "SELECT sum(count) FROM kernel_summary WHERE phase = -1", -1);
    table_set_int(t, c++, kernels >= 0 ? kernels : db_int(db, "SELECT count(*) FROM kernels", 0));
    meta_int_col(t, db, c++, "dropped_events");
    meta_int_col(t, db, c++, "cupti_dropped_records");
    meta_int_col(t, db, c++, "cupti_buffers_refused");
    meta_int_col(t, db, c++, "write_errors");
    warnings_text(db, buf, sizeof buf);
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    meta_text_col(t, db, c++, "infprof_version");
    meta_text_col(t, db, c++, "output_path");
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int run_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_run(c->db, c->p);
    return 1;
}

const struct report_section sec_run = {
    .key = "run", .build = run_build, .shown_empty = 1, .compare = NULL};
