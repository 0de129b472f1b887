/*
 * cmd_report.c: `infprof report [options] FILE...`: the report of a run, in text (default), JSON,
 * CSV or Markdown. The sections are built by sections.c and phases.c into the table model and
 * rendered by table.c, so every format carries the same content. Several files (one per process
 * or rank) go to report_multi.c: each process's sections, then the combined ones.
 */
#include "compare.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report_usage(FILE *out)
{
    fprintf(out, "usage: infprof report [--format text|json|csv|md] [--top N] [--wide]\n"
                 "                      [--baseline PHASE] [--by-phase] [--phase PHASE]\n"
                 "                      [--nvtx RANGE] [--warmup N] FILE [FILE...]\n\n"
                 "  Several files (one per process or rank): each process's report, then the\n"
                 "  phases, kernels and memory of all of them combined.\n\n"
                 "  --format F  text (default), json, csv or md\n"
                 "  --baseline PHASE  the phase others are compared with (default: grad/off, or\n"
                 "              the first phase that ran the model), as 'no_grad/bf16' or\n"
                 "              'no_grad | autocast bf16'\n"
                 "  --section K only the section K (JSON key; in CSV a tidy table pandas reads)\n"
                 "  --csv-dir D one tidy CSV file per section, D/<section>.csv\n"
                 "  --names S   kernel names: short (text's default; JSON and CSV give them in\n"
                 "              full), full (demangled) or mangled (as CUPTI gives them)\n"
                 "  --warmup N  the first N iterations of each phase are warm-up (default: found\n"
                 "              from the data, docs/report.md)\n"
                 "  --top N     kernels, API calls and ranges listed (default 20 in text and md,"
                 " all in json and csv; 0: all)\n"
                 "  --by-phase  kernels per phase\n"
                 "  --phase P   kernels of phase P only\n"
                 "  --nvtx R    kernels launched inside NVTX ranges named R (a glob; one file)\n"
                 "  --wide      do not shorten long names\n");
}

static int parse_count(const char *opt, const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 1000000000)
        cli_fail("%s needs a whole number >= 0, not '%s'", opt, s);
    return (int)v;
}

int report_option(int argc, char **argv, int *i, struct report_opts *o, struct render_opts *ro)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
        if (++*i == argc) cli_fail("--format needs a value (text, json, csv or md)");
        ro->format = parse_format(argv[*i]);
    } else if (!strncmp(a, "--format=", 9)) {
        ro->format = parse_format(a + 9);
    } else if (!strcmp(a, "--top")) {
        if (++*i == argc) cli_fail("--top needs a number");
        o->top = parse_count("--top", argv[*i]);
    } else if (!strcmp(a, "--by-phase")) {
        o->by_phase = 1;
    } else if (!strcmp(a, "--phase")) {
        if (++*i == argc) cli_fail("--phase needs a phase, e.g. 'no_grad/bf16'");
        o->phase = argv[*i];
    } else if (!strcmp(a, "--nvtx")) {
        if (++*i == argc) cli_fail("--nvtx needs a range name (a glob: * and ?)");
        o->nvtx = argv[*i];
    } else if (!strcmp(a, "--wide")) {
        ro->wide = 1;
    } else if (!strcmp(a, "--section")) {
        if (++*i == argc) cli_fail("--section needs a section's key (phases, kernels, ...)");
        ro->section = argv[*i];
    } else if (!strcmp(a, "--csv-dir")) {
        if (++*i == argc) cli_fail("--csv-dir needs a directory");
        ro->csv_dir = argv[*i];
        ro->format = OUT_CSV;
    } else if (!strcmp(a, "--names")) {
        if (++*i == argc) cli_fail("--names needs short, full or mangled");
        const char *v = argv[*i];
        if (!strcmp(v, "short"))
            names_set_style(NAMES_SHORT);
        else if (!strcmp(v, "full"))
            names_set_style(NAMES_FULL);
        else if (!strcmp(v, "mangled"))
            names_set_style(NAMES_MANGLED);
        else
            cli_fail("--names takes short, full or mangled, not '%s'", v);
    } else if (!strcmp(a, "--warmup")) {
        if (++*i == argc) cli_fail("--warmup needs a number of iterations");
        iterations_set_warmup(parse_count("--warmup", argv[*i]));
    } else {
        return 0;
    }
    return 1;
}

void report_defaults(struct report_opts *o, struct render_opts *ro)
{
    if (o->top < 0) o->top = ro->format == OUT_TEXT || ro->format == OUT_MD ? 20 : 0;
    ro->color = ro->format == OUT_TEXT && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    o->format = ro->format;
}

int cmd_report(int argc, char **argv)
{
    struct render_opts ro = {OUT_TEXT, 0, 0, 100, NULL, NULL};
    struct report_opts o = {.top = -1};
    char **paths = calloc((size_t)argc, sizeof *paths);
    int npaths = 0;
    if (!paths) cli_fail("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            report_usage(stdout);
            free(paths);
            return 0;
        } else if (report_option(argc, argv, &i, &o, &ro)) {
            continue;
        } else if (!strcmp(a, "--baseline")) {
            if (++i == argc) cli_fail("--baseline needs a phase label, e.g. 'grad/off'");
            o.baseline = argv[i];
        } else if (a[0] == '-' && a[1]) {
            cli_fail("unknown option '%s' (try 'infprof report --help')", a);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths) cli_fail("no database given (usage: infprof report [options] FILE)");
    report_defaults(&o, &ro);
    if (npaths > 1) {
        int rc = report_several(paths, npaths, &o, &ro);
        free(paths);
        return rc;
    }

    struct sqlite3 *db = db_open(paths[0]);
    free(paths);
    struct run_phases phases;
    phases_load(db, &phases);
    struct table *t[32];
    int n = report_build(db, &phases, &o, t, (int)(sizeof t / sizeof t[0]));
    render(stdout, t, n, &ro);
    for (int i = 0; i < n; i++) table_free(t[i]);
    db_close(db);
    return fflush(stdout) == 0 ? 0 : 1;
}

int report_build(struct sqlite3 *db, const struct run_phases *phases, const struct report_opts *o,
                 struct table **t, int max)
{
    int n = 0;
    if (max < 32) cli_fail("internal: room for 32 report tables needed");
    t[n++] = section_summary(db, phases, baseline_of(phases, o->baseline));
    t[n++] = section_run(db);
    n += section_phases(db, phases, o, t + n);
    t[n++] = section_precision(phases);
    t[n++] = section_operations(phases);
    t[n++] = section_memory(phases);
    t[n++] = section_kernels(db, phases, o);
    t[n++] = section_memops_time(db);
    t[n++] = section_memops_size(db);
    t[n++] = section_segments(db);
    t[n++] = section_api(db, o);
    t[n++] = section_cuda_activity(db);
    n += section_cudnn(db, o, t + n, max - n - 1);
    t[n++] = section_nvtx(db, o);
    n += section_advice(db, phases, o->format, t + n);
    /* Beyond the run, the phases and the kernels, a section with nothing to say stays out of
     * text and Markdown (the run header says which collectors were off and why). */
    for (int i = 0; i < n; i++)
        if (t[i]->key && strcmp(t[i]->key, "run") && strcmp(t[i]->key, "phases") &&
            strcmp(t[i]->key, "kernels") && strcmp(t[i]->key, "summary"))
            t[i]->optional = 1;
    return n;
}
