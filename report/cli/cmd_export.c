/*
 * cmd_export.c: `infprof export DB -o FILE`: the options; export/export_file.c writes the trace.
 */
#include "commands.h"
#include "../export/export.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void export_usage(FILE *out)
{
    fprintf(out,
            "usage: infprof export DB -o FILE [--format json|perfetto] [--phase LABEL]\n"
            "                      [--from T] [--to T] [--flows] [--all-api] [--max-mb N]\n\n"
            "Write the run as a trace for Perfetto (ui.perfetto.dev): a track per GPU stream,\n"
            "per host thread (with its phases and iterations), memory counters.\n"
            "  -o FILE       the trace; '-' for standard output; an existing FILE is an error\n"
            "  --format F    json: a Chrome trace (also chrome://tracing), the default;\n"
            "                perfetto: Perfetto's own protobuf, 100-180 bytes a kernel on real\n"
            "                runs, all included (the default for FILE.pftrace and\n"
            "                FILE.perfetto-trace; JSON: about 1-1.5 KB a kernel)\n"
            "  --force       overwrite an existing FILE\n"
            "  --phase LABEL only that phase: its spans and the GPU work launched in them\n"
            "                (labels as 'infprof report' prints them, e.g. 'no_grad/off')\n"
            "  --from T      only events that end at or after T (ns, or 1.5ms, 2s, 300us)\n"
            "  --to T        only events that start before T\n"
            "  --flows       arrows from each launch to the GPU work it started (JSON; bigger)\n"
            "  --all-api     every CUDA API call; by default those under 1 us that launch no\n"
            "                GPU work (cudaGetDevice and the like: most of a real run's calls)\n"
            "                are left out, and counted\n"
            "  --max-mb N    JSON: warn when the trace would be over N MiB; perfetto: keep it\n"
            "                under N MiB, leaving out every event past that point and saying\n"
            "                so (default 256; 0: no limit)\n"
            "  --estimate    print the estimated size and write nothing\n");
}

/* "1500000", "1.5ms", "2s", "300us", "10ns" -> ns. */
static int64_t parse_time(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mult = !strcmp(end, "") || !strcmp(end, "ns") ? 1
                  : !strcmp(end, "us")                   ? 1e3
                  : !strcmp(end, "ms")                   ? 1e6
                  : !strcmp(end, "s")                    ? 1e9
                                                         : -1;
    if (end == s || errno || mult < 0 || !isfinite(v) || v < 0 || v * mult > 9.2e18)
        cli_fail("%s needs a time such as 1500000 (ns), 300us, 1.5ms or 2s, not '%s'", opt, s);
    /* Whole nanoseconds are taken exactly, not through a double. */
    if (mult == 1 && strspn(s, "0123456789") == (size_t)(end - s)) return strtoll(s, NULL, 10);
    return llround(v * mult);
}

static double parse_mb(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < 0)
        cli_fail("--max-mb needs a size in MiB >= 0 (0: never warn), not '%s'", s);
    return v;
}

static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (!strncmp(a, name, n) && a[n] == '=') return a + n + 1;
    if (++*i == argc) cli_fail("%s needs a value (try 'infprof export --help')", name);
    return argv[*i];
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

static void parse_args(int argc, char **argv, struct export_opts *o)
{
    *o = (struct export_opts){.from = INT64_MIN, .to = INT64_MAX, .max_mb = 256, .perfetto = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            export_usage(stdout);
            exit(0);
        } else if (!strcmp(a, "-o") || is_opt(a, "--output")) {
            o->out = opt_value(argc, argv, &i, !strcmp(a, "-o") ? "-o" : "--output");
        } else if (!strcmp(a, "--force")) {
            o->force = 1;
        } else if (!strcmp(a, "--flows")) {
            o->flows = 1;
        } else if (!strcmp(a, "--all-api")) {
            o->all_api = 1;
        } else if (!strcmp(a, "--estimate")) {
            o->estimate_only = 1;
        } else if (is_opt(a, "--phase")) {
            o->phase = opt_value(argc, argv, &i, "--phase");
        } else if (is_opt(a, "--from")) {
            o->from = parse_time("--from", opt_value(argc, argv, &i, "--from"));
        } else if (is_opt(a, "--to")) {
            o->to = parse_time("--to", opt_value(argc, argv, &i, "--to"));
        } else if (is_opt(a, "--format")) {
            const char *v = opt_value(argc, argv, &i, "--format");
            if (!strcmp(v, "json"))
                o->perfetto = 0;
            else if (!strcmp(v, "perfetto"))
                o->perfetto = 1;
            else
                cli_fail("--format takes json or perfetto, not '%s'", v);
        } else if (is_opt(a, "--max-mb")) {
            o->max_mb = parse_mb(opt_value(argc, argv, &i, "--max-mb"));
        } else if (a[0] == '-' && a[1]) {
            cli_fail("unknown option '%s' (try 'infprof export --help')", a);
        } else if (o->db) {
            cli_fail("export reads one database at a time (got %s and %s)", o->db, a);
        } else {
            o->db = a;
        }
    }
    if (!o->db) cli_fail("no database given (usage: infprof export DB -o FILE)");
    if (!o->out && !o->estimate_only)
        cli_fail("no output file: give -o FILE (or -o - for standard output)");
    if (o->perfetto < 0) { /* from the file's name: Perfetto's own extensions */
        size_t n = o->out ? strlen(o->out) : 0;
        o->perfetto = (n > 8 && !strcmp(o->out + n - 8, ".pftrace")) ||
                      (n > 15 && !strcmp(o->out + n - 15, ".perfetto-trace"));
    }
    if (o->flows && o->perfetto)
        cli_fail("--flows is for the JSON trace; the Perfetto trace links GPU work to its launch"
                 " by correlation id");
    if (o->from != INT64_MIN && o->to != INT64_MAX && o->from >= o->to)
        cli_fail("--from must be before --to (got %lld ns and %lld ns)", (long long)o->from,
                 (long long)o->to);
}

int cmd_export(int argc, char **argv)
{
    struct export_opts o;
    parse_args(argc, argv, &o);
    return export_run(&o);
}
