/*
 * export_file.c: `infprof export`'s trace file (export.h): the run as a Chrome trace (JSON) that
 * Perfetto opens, cut by phase (--phase) or time window (--from, --to); the size is estimated
 * before anything is written, with a warning over --max-mb (256 MiB: viewers give up near there).
 *
 * The output is written to a temporary file beside FILE and renamed into place at the end, so a
 * failed or interrupted export never leaves half a trace, and an existing FILE is replaced only
 * with --force (never silently, even if it appears while we write).
 */
#include "export.h"
#include "../../profiler/runinfo.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT_SAMPLES 4096

/* ---- the output file ---------------------------------------------------------------------- */

static char tmp_path[PATH_MAX];
static const char *out_path;

static void on_signal(int sig)
{
    if (tmp_path[0]) unlink(tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_write_error(int err)
{
    if (tmp_path[0]) unlink(tmp_path);
    tmp_path[0] = 0;
    cli_fail("cannot write %s: %s (choose another path with -o)", out_path, strerror(err));
}

/* Before any work: an existing file needs --force, the directory must be writable, and the
 * trace must not replace the database it is read from. A device or a pipe (/dev/null, a FIFO)
 * is written in place: renaming a file over it would replace the device node. */
static void check_output(struct export_opts *o)
{
    struct stat st, dbst;
    if (stat(o->out, &st) == 0) {
        if (S_ISDIR(st.st_mode)) cli_fail("%s is a directory; give a file name with -o", o->out);
        if (!S_ISREG(st.st_mode)) {
            o->direct = 1;
            return;
        }
        if (stat(o->db, &dbst) == 0 && st.st_dev == dbst.st_dev && st.st_ino == dbst.st_ino)
            cli_fail("%s is the database being exported; choose another name with -o", o->out);
        if (!o->force)
            cli_fail("%s exists; choose another name with -o, or add --force to overwrite it",
                     o->out);
    }
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", o->out);
    const char *dir = dirname(copy);
    if (access(dir, W_OK) != 0)
        cli_fail("cannot write %s: directory %s: %s (choose another path with -o)", o->out, dir,
                 strerror(errno));
}

static FILE *open_output(const struct export_opts *o)
{
    if (!strcmp(o->out, "-")) return stdout;
    if (o->direct) {
        FILE *f = fopen(o->out, "w");
        if (!f)
            cli_fail("cannot write %s: %s (choose another path with -o)", o->out, strerror(errno));
        return f;
    }
    char copy[PATH_MAX], base_copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", o->out);
    snprintf(base_copy, sizeof base_copy, "%s", o->out);
    snprintf(tmp_path, sizeof tmp_path, "%s/.%s.XXXXXX", dirname(copy), basename(base_copy));
    int fd = mkstemp(tmp_path);
    if (fd < 0) {
        tmp_path[0] = 0;
        cli_fail("cannot write %s: %s (choose another path with -o)", o->out, strerror(errno));
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    FILE *f = fdopen(fd, "w");
    if (!f) on_write_error(errno);
    return f;
}

/* Put the finished file in place: rename over the old one with --force; otherwise link, which
 * fails rather than replace a file that appeared meanwhile. */
static void finish_output(const struct export_opts *o, FILE *f)
{
    if (f == stdout) {
        if (fflush(stdout) != 0) cli_fail("writing the trace to standard output failed");
        return;
    }
    if (fclose(f) != 0) on_write_error(errno ? errno : EIO);
    if (o->direct) return;
    int rc;
    if (o->force) {
        rc = rename(tmp_path, o->out);
    } else {
        rc = link(tmp_path, o->out);
        if (rc != 0 && errno != EEXIST && access(o->out, F_OK) != 0)
            rc = rename(tmp_path, o->out); /* a file system without hard links */
        else if (rc == 0)
            unlink(tmp_path);
    }
    if (rc != 0) {
        int err = errno;
        unlink(tmp_path);
        tmp_path[0] = 0;
        if (err == EEXIST)
            cli_fail("%s appeared while the trace was written; add --force to overwrite it",
                     o->out);
        cli_fail("cannot write %s: %s (choose another path with -o)", o->out, strerror(err));
    }
    tmp_path[0] = 0;
}

/* ---- the document ------------------------------------------------------------------------- */

/* --phase: a phase's label, its short label ("no_grad/bf16"), its id, or "none". */
static int resolve_phase(struct sqlite3 *db, const struct run_phases *p, const char *label)
{
    if (!strcmp(label, "none")) return 0;
    char list[1024] = "";
    size_t n = 0;
    int i = phases_match(p, label);
    if (i >= 0) return p->v[i].id;
    for (i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        char id[16];
        snprintf(id, sizeof id, "%d", ph->id);
        if (!strcmp(id, label)) return ph->id;
        if (n + strlen(ph->label) + 8 < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", ph->label);
    }
    char shown[256];
    fmt_escape(shown, sizeof shown, label);
    if (!n)
        cli_fail("%s has no phases (no libtorch phase was seen); cut by time with --from/--to",
                 db_path_of(db));
    cli_fail("no phase '%s' in %s; its phases are %s", shown, db_path_of(db), list);
}

static void meta_member(struct export_ctx *c, const char *key, const char *meta_key)
{
    char *v = db_meta_text(c->db, meta_key);
    if (!v) return;
    json_lit(c->w, ",\n\"");
    json_put(c->w, key, strlen(key));
    json_lit(c->w, "\":");
    int64_t i;
    if (db_meta_int(c->db, meta_key, &i))
        json_int(c->w, i);
    else
        json_str(c->w, v, strlen(v));
    free(v);
}

static void write_footer(struct export_ctx *c, const struct export_opts *o)
{
    struct json_out *w = c->w;
    json_lit(w, "\n],\n\"otherData\":{\"generator\":\"infprof export\",\n\"database\":");
    json_str(w, o->db, strlen(o->db));
    meta_member(c, "infprof_version", "infprof_version");
    meta_member(c, "command", "command");
    meta_member(c, "start_unix_ns", "start_unix_ns");
    meta_member(c, "t0_monotonic_ns", "t0_monotonic_ns");
    meta_member(c, "duration_ns", "duration_ns");
    json_lit(w, ",\n\"times\":\"ns since the run's t0 (start_unix_ns is t0 in Unix time)\"");
    json_lit(w, ",\n\"host_pid\":");
    json_int(w, c->host_pid);
    json_lit(w, ",\"gpu_pid\":");
    json_int(w, c->gpu_pid);
    json_lit(w, ",\"phase_tid_base\":");
    json_int(w, EXPORT_PHASE_TID_BASE);
    json_lit(w, ",\n\"cut\":{\"phase\":");
    if (c->phase >= 0)
        json_str(w, o->phase, strlen(o->phase));
    else
        json_lit(w, "null");
    json_lit(w, ",\"from_ns\":");
    if (c->from != INT64_MIN)
        json_int(w, c->from);
    else
        json_lit(w, "null");
    json_lit(w, ",\"to_ns\":");
    if (c->to != INT64_MAX)
        json_int(w, c->to);
    else
        json_lit(w, "null");
    json_lit(w, "}}}\n");
}

static void write_all(struct export_ctx *c, const struct export_opts *o, int with_sources)
{
    json_lit(c->w, "{\"traceEvents\":[");
    tracks_write_metadata(c);
    for (int i = 0; with_sources && i < sources_count(); i++) source_write(c, source_at(i));
    write_footer(c, o);
}

/* Bytes and events: the metadata and frame exactly, each source from a sample of its rows. */
static double estimate(struct export_ctx *c, const struct export_opts *o, double *events,
                       double *bytes_of, double *events_of)
{
    struct json_out count;
    json_init(&count, NULL);
    c->w = &count;
    c->events = 0;
    write_all(c, o, 0);
    json_flush(&count);
    double total = (double)count.bytes;
    *events = (double)c->events;
    json_free(&count);
    for (int i = 0; i < sources_count(); i++) {
        source_estimate(c, source_at(i), EXPORT_SAMPLES, &bytes_of[i], &events_of[i]);
        total += bytes_of[i];
        *events += events_of[i];
    }
    return total;
}

static void print_estimate(const struct export_opts *o, double bytes, double events,
                           const double *bytes_of, const double *events_of)
{
    char b[32];
    fmt_bytes(b, sizeof b, bytes);
    printf("%s trace of %s: about %s (%.0f bytes), %.0f events\n",
           o->perfetto ? "Perfetto" : "JSON", o->db, b, bytes, events);
    int n = o->perfetto ? PERFETTO_SOURCES : sources_count();
    for (int i = 0; i < n; i++) {
        if (events_of[i] < 0.5) continue;
        fmt_bytes(b, sizeof b, bytes_of[i]);
        printf("  %-16s %12s %12.0f events\n",
               o->perfetto ? perfetto_source_what(i) : source_what(source_at(i)), b, events_of[i]);
    }
}

static void warn_size(struct export_ctx *c, const struct export_opts *o, double bytes)
{
    char b[32], limit[32], dur[64] = "";
    fmt_bytes(b, sizeof b, bytes);
    fmt_bytes(limit, sizeof limit, o->max_mb * 1048576.0);
    if (c->duration_ns > 0) {
        char d[24];
        fmt_ns(d, sizeof d, (double)c->duration_ns);
        snprintf(dur, sizeof dur, " (the run lasted %s)", d);
    }
    int color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    fprintf(stderr,
            "infprof: %swarning:%s the trace will be about %s, over %s, where trace viewers"
            " fail; cut it with --phase LABEL or --from T --to T%s (writing it anyway)\n",
            color ? "\033[33m" : "", color ? "\033[0m" : "", b, limit, dur);
}

int export_run(const struct export_opts *opts)
{
    struct export_opts o = *opts;
    if (o.out && !o.estimate_only && strcmp(o.out, "-") != 0) check_output(&o);
    out_path = o.out;

    struct export_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db_open(o.db);
    static struct run_phases phases; /* large: not on the stack */
    phases_load(c.db, &phases, NULL); /* the report's defaults */
    iterations_shadow(c.db, &phases); /* detected iterations too; a mark wins, as in the report */
    c.phases = &phases;
    c.phase = o.phase ? resolve_phase(c.db, &phases, o.phase) : -1;
    c.from = o.from;
    c.to = o.to;
    c.flows = o.flows;
    c.all_api = o.all_api;
    tracks_load(&c);

    double events, bytes_of[16], events_of[16];
    double bytes = o.perfetto ? perfetto_estimate(&c, &events, bytes_of, events_of)
                              : estimate(&c, &o, &events, bytes_of, events_of);
    if (o.estimate_only) {
        print_estimate(&o, bytes, events, bytes_of, events_of);
        tracks_free(&c);
        db_close(c.db);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (!o.perfetto && o.max_mb > 0 && bytes > o.max_mb * 1048576.0) warn_size(&c, &o, bytes);
    /* An arrow starts at the launch's API call, which only a run with API records kept. */
    char db_shown[PATH_MAX];
    snprintf(db_shown, sizeof db_shown, "%s", o.db);
    cli_escape_into(db_shown, sizeof db_shown);
    if (o.flows && !db_int(c.db, "SELECT EXISTS (SELECT 1 FROM cuda_api)", 0))
        fprintf(stderr,
                "infprof: --flows: %s kept no CUDA API calls (INFPROF_CUDA_API=0, the"
                " default): the trace has no launch arrows; profile with"
                " INFPROF_CUDA_API=1 for them\n",
                db_shown);

    FILE *f = open_output(&o);
    uint64_t written;
    if (o.perfetto) {
        written = perfetto_write(&c, f, o.max_mb, on_write_error, &c.events);
        if (fflush(f) != 0) on_write_error(errno);
    } else {
        struct json_out w;
        json_init(&w, f);
        w.on_error = on_write_error;
        c.w = &w;
        c.events = 0;
        write_all(&c, &o, 1);
        json_flush(&w);
        written = w.bytes;
        json_free(&w);
    }
    finish_output(&o, f);

    char b[32], shown[PATH_MAX];
    fmt_bytes(b, sizeof b, (double)written);
    snprintf(shown, sizeof shown, "%s", f == stdout ? "the trace to standard output" : o.out);
    cli_escape_into(shown, sizeof shown); /* a name with ESC in it reaches no terminal raw */
    fprintf(stderr,
            "infprof: wrote %s (%llu events, %s); open it with Perfetto (ui.perfetto.dev)\n", shown,
            (unsigned long long)c.events, b);
    int64_t left = export_api_left_out(&c);
    if (left)
        fprintf(stderr,
                "infprof: %lld CUDA API calls under 1 us that launched nothing (cudaGetDevice and"
                " the like) left out; --all-api keeps them\n",
                (long long)left);
    tracks_free(&c);
    db_close(c.db);
    return 0;
}
