/*
 * runinfo.c: run metadata and counters (runinfo.h). Keys are documented in docs/database.md.
 */
#include "runinfo.h"
#include "clock.h"
#include "config.h"
#include "collector.h"
#include "map.h"
#include "ring.h"
#include "store.h"
#include "process.h"

#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ip_map threads_seen;
static sqlite3_stmt *st_thread, *st_drop;

/* /proc/self/cmdline as it was when the library started, before main (read then, not by the
 * writer later: its descriptor, for a moment, would be a number the program's next open would
 * not get). */
static char cmdline_raw[8192];
static ssize_t cmdline_len;

void ip_runinfo_capture(void)
{
    FILE *f = fopen("/proc/self/cmdline", "re");
    if (!f) return;
    cmdline_len = (ssize_t)fread(cmdline_raw, 1, sizeof cmdline_raw - 1, f);
    fclose(f);
    cmdline_raw[cmdline_len > 0 ? cmdline_len : 0] = 0;
}

/* The command line, arguments quoted where a shell would need it. */
static void read_cmdline(char *out, size_t n)
{
    out[0] = 0;
    const char *raw = cmdline_raw;
    ssize_t len = cmdline_len;
    if (len <= 0) return;
    size_t o = 0;
    for (ssize_t i = 0; i < len && o + 4 < n;) {
        const char *arg = raw + i;
        size_t alen = strlen(arg);
        int quote = alen == 0 || strpbrk(arg, " \t\n'\"\\$`*?;&|<>()[]{}") != NULL;
        if (o) out[o++] = ' ';
        if (quote) out[o++] = '\'';
        for (size_t k = 0; k < alen && o + 5 < n; k++) {
            if (arg[k] == '\'' && quote) {
                memcpy(out + o, "'\\''", 4);
                o += 4;
            } else {
                out[o++] = arg[k];
            }
        }
        if (quote) out[o++] = '\'';
        i += (ssize_t)alen + 1;
    }
    out[o] = 0;
}

/* The rank of a distributed job, as its launcher set it in the environment (torchrun and
 * torch.distributed: RANK and WORLD_SIZE; else Slurm's, Open MPI's or PMI's): what a report of
 * several processes names them by. Nothing when none is set or it is not a number. */
static void write_dist_rank(struct ip_store *s)
{
    static const char *const ranks[][2] = {{"RANK", "WORLD_SIZE"},
                                           {"SLURM_PROCID", "SLURM_NTASKS"},
                                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           {"PMI_RANK", "PMI_SIZE"}};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        const char *v = getenv(ranks[i][0]), *w = getenv(ranks[i][1]);
        char *end;
        long r = v && *v ? strtol(v, &end, 10) : -1;
        if (r < 0 || *end) continue;
        ip_store_meta_int(s, "dist_rank", r);
        ip_store_meta_text(s, "dist_rank_from", ranks[i][0]);
        long n = w && *w ? strtol(w, &end, 10) : -1;
        if (n > 0 && !*end) ip_store_meta_int(s, "dist_world_size", n);
        return;
    }
}

void ip_runinfo_write_start(struct ip_store *s, const char *path, int role)
{
    static const char *const roles[] = {"root", "descendant", "fork_child"};
    char buf[PATH_MAX + 64];
    ip_map_free(&threads_seen);
    st_drop = ip_store_prepare(s, "INSERT INTO event_drops(tid, phase, count, first, last)"
                                  " VALUES (?,?,?,?,?) ON CONFLICT(tid, phase) DO UPDATE SET"
                                  " count = excluded.count, first = min(first, excluded.first),"
                                  " last = max(last, excluded.last)");
    st_thread = ip_store_prepare(s, "INSERT OR IGNORE INTO threads(tid, name_id, first_ns)"
                                    " VALUES (?,?,?)");
    ip_store_meta_text(s, "format", "infprof");
    ip_store_meta_int(s, "schema_version", INFPROF_SCHEMA_VERSION);
    ip_store_meta_text(s, "infprof_version", INFPROF_VERSION);
    ip_store_meta_text(s, "sqlite_version", sqlite3_libversion());
    read_cmdline(buf, sizeof buf);
    ip_store_meta_text(s, "command", buf);
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    ip_store_meta_text(s, "executable", buf);
    ip_store_meta_int(s, "pid", getpid());
    ip_store_meta_int(s, "ppid", getppid());
    if (gethostname(buf, 256) == 0) {
        buf[255] = 0;
        ip_store_meta_text(s, "host", buf);
    }
    if (getcwd(buf, sizeof buf)) ip_store_meta_text(s, "cwd", buf);
    ip_store_meta_text(s, "output_path", path);
    ip_store_meta_text(s, "role", roles[role]);
    write_dist_rank(s);
    uint64_t t0 = ip_t0();
    ip_store_meta_int(s, "t0_monotonic_ns", (int64_t)t0);
    ip_store_meta_int(s, "start_unix_ns", (int64_t)(ip_clock_realtime() - (ip_clock_now() - t0)));
    /* Settings given in the environment: the value used, and a rejected one beside it; the
     * core's, then each collector's. */
    for (int k = -1; k < ip_collector_count(); k++) {
        const struct ip_collector *c = k < 0 ? NULL : ip_collector_at(k);
        const struct ip_cfg_group *g = k < 0 ? &ip_cfg_core : c ? c->settings : NULL;
        for (int i = 0; g && i < g->n; i++) {
            if (!ip_cfg_group_is_set(g, i)) continue;
            const char *raw = getenv(g->entries[i].name);
            snprintf(buf, sizeof buf, "config.%s", g->entries[i].name);
            ip_store_meta_text(s, buf, ip_cfg_group_str(g, i));
            if (raw && strcmp(raw, ip_cfg_group_str(g, i)) != 0) {
                snprintf(buf, sizeof buf, "config.%s.rejected", g->entries[i].name);
                ip_store_meta_text(s, buf, raw);
            }
        }
    }
}

static void write_drop(void *ctx, uint32_t tid, int phase, uint64_t count, uint64_t first,
                       uint64_t last)
{
    struct ip_store *s = ctx;
    if (!st_drop) return;
    sqlite3_bind_int64(st_drop, 1, tid);
    sqlite3_bind_int(st_drop, 2, phase);
    sqlite3_bind_int64(st_drop, 3, (int64_t)count);
    sqlite3_bind_int64(st_drop, 4, ip_store_rel(s, first));
    sqlite3_bind_int64(st_drop, 5, ip_store_rel(s, last));
    ip_store_step(s, st_drop);
}

void ip_runinfo_write_counters(struct ip_store *s)
{
    struct ip_ring_totals t;
    ip_ring_totals(&t);
    ip_store_meta_int(s, "events_recorded", (int64_t)t.appended);
    ip_store_meta_int(s, "dropped_events", (int64_t)t.dropped);
    ip_store_meta_int(s, "threads_recording", (int64_t)t.threads);
    ip_store_meta_int(s, "events_lost_no_buffer", (int64_t)t.lost);
    ip_store_meta_int(s, "buffer_waits", (int64_t)t.waits);
    ip_store_meta_int(s, "buffer_wait_ns", (int64_t)t.waited_ns);
    ip_store_meta_int(s, "buffer_bytes_peak", (int64_t)t.peak_mapped);
    ip_store_meta_int(s, "buffer_budget_bytes", (int64_t)t.budget);
    ip_store_meta_int(s, "buffer_blocks_past_budget", (int64_t)t.overcommit);
    if (t.dropped) ip_ring_drops(write_drop, s);
    ip_store_meta_int(s, "write_errors", (int64_t)ip_store_errors(s));
    ip_store_meta_int(s, "rows_not_written", (int64_t)ip_store_rows_lost(s));
    ip_store_meta_int(s, "duplicate_rows", (int64_t)ip_store_duplicates(s));
    char key[64], status[512];
    for (int i = 0; i < ip_collector_count(); i++) {
        const struct ip_collector *c = ip_collector_at(i);
        if (!c || !c->name) continue;
        snprintf(key, sizeof key, "collector.%s", c->name);
        ip_collector_status_copy(i, status, sizeof status);
        ip_store_meta_text(s, key, status);
    }
}

void ip_runinfo_write_end(struct ip_store *s, const char *reason, uint64_t end_ts)
{
    ip_runinfo_write_counters(s);
    ip_store_meta_int(s, "rows_written", (int64_t)(ip_store_rows(s) - ip_store_rows_lost(s)));
    ip_store_meta_int(s, "duration_ns", ip_store_rel(s, end_ts));
    ip_store_meta_text(s, "end_reason", reason ? reason : "exit");
    int status = ip_process_exit_status();
    if (status >= 0) ip_store_meta_int(s, "exit_status", status);
    ip_store_meta_int(s, "finished", 1);
}

void ip_runinfo_thread_seen(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    (void)ev;
    uint64_t *seen = ip_map_put(&threads_seen, tid);
    if (!seen || *seen) return;
    *seen = 1;
    char name[16];
    ip_ring_thread_name(tid, name);
    sqlite3_bind_int64(st_thread, 1, tid);
    if (name[0]) sqlite3_bind_int64(st_thread, 2, ip_store_intern(s, name, strlen(name)));
    sqlite3_bind_int64(st_thread, 3, ip_store_rel(s, ip_clock_now()));
    ip_store_step(s, st_thread);
}
