/*
 * cmd_report.c: `infprof report [options] FILE...`: the report of a run, in text (default), JSON,
 * CSV or Markdown. The run is read by run/ and its sections built by
 * sections/build.c into the table model, rendered by render/render.c, so every format carries the
 * same content. Several files (one per process or rank) go to multi/: each process's sections,
 * then the combined ones.
 */
#include "commands.h"
#include "../run/windows.h"
#include "../render/render.h"
#include "../run/detect.h"
#include "../multi/multi.h"
#include "../sections/sections.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report_usage(FILE *out)
{
    fprintf(out,
            "usage: infprof report [--format %s] [--top N] [--wide]\n"
            "                      [--baseline PHASE] [--by-phase] [--phase PHASE]\n"
            "                      [--nvtx RANGE] [--warmup N] [--window N]\n"
            "                      [--detect kernels|operators|allocations]\n"
            "                      [--section K | --csv-dir D] [--columns K=C,C...]\n"
            "                      [--names S] FILE [FILE...]\n\n"
            "  Several files (one per process or rank): a Summary over all of them, the\n"
            "  processes side by side (the straggler named), their phases, kernels and memory\n"
            "  combined; --each adds each process's own report.\n\n"
            "  --format F  %s (the first is the default)\n"
            "  --baseline PHASE  the phase others are compared with (default: grad/off, or\n"
            "              the first phase that ran the model), as 'no_grad/bf16' or\n"
            "              'no_grad | autocast bf16'\n"
            "  --section K only the section K (JSON key; in CSV a tidy table pandas reads)\n"
            "  --csv-dir D one tidy CSV file per section, D/<section>.csv\n"
            "  --columns K=C,C...  section K with columns C only, in that order (their JSON\n"
            "              keys: series=series,iterations,latency_p50_ns), in text, md, csv\n"
            "              and json; again for another section; a wrong name lists them\n"
            "  --names S   kernel names: short (text's default; JSON and CSV give them in\n"
            "              full), full (demangled) or mangled (as CUPTI gives them)\n"
            "  --each      several files: each process's own report after the combined one\n"
            "  --warmup N  the first N iterations of each phase are warm-up (default: found\n"
            "              from the data, docs/report.md)\n"
            "  --detect S  where iterations of a phase with no mark are looked for first:\n"
            "              kernels (default; GPU time), operators or allocations (host\n"
            "              time); the others are tried after it\n"
            "  --top N     kernels, API calls and ranges listed (default 20 in text and\n"
            "              md, all in json and csv; 0: all)\n"
            "  --by-phase  kernels per phase\n"
            "  --phase P   kernels of phase P only\n"
            "  --nvtx R    kernels launched inside NVTX ranges named R (a glob; one file)\n"
            "  --window N  only recording window N (the Windows section lists them; one file)\n"
            "  --wide      do not shorten long names\n",
            output_format_names("|", "|"), output_format_names(", ", " or "));
}

int cmd_report(int argc, char **argv)
{
    struct render_opts ro = {.format = OUT_TEXT, .width = render_text_width()};
    struct report_opts o = {.top = -1, .run = RUN_OPTIONS_DEFAULT};
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
        } else if (!strcmp(a, "--each")) {
            o.each = 1;
        } else if (!strcmp(a, "--window")) {
            char *end;
            if (++i == argc || (o.run.window = (int)strtol(argv[i], &end, 10)) < 1 || *end)
                cli_fail("--window needs a window number, 1 or more (the Windows section lists"
                         " them)");
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
    if (o.run.window && npaths > 1)
        cli_fail("--window N reads one database's window N (got %d databases)", npaths);
    report_defaults(&o, &ro);
    db_scan_threads(); /* a wrong INFPROF_REPORT_THREADS: one line, whatever the tables */
    if (npaths > 1) {
        int rc = report_several(paths, npaths, &o, &ro);
        free(paths);
        return rc;
    }

    struct sqlite3 *db = db_open(paths[0]);
    free(paths);
    const char *missing = detect_prefer_missing(db, o.run.detect);
    if (missing) fprintf(stderr, "infprof: %s\n", missing);
    struct run_phases phases;
    phases_load(db, &phases, &o.run);
    struct table *t[REPORT_TABLES];
    int n = report_build(db, &phases, &o, t, (int)(sizeof t / sizeof t[0]));
    render(stdout, t, n, &ro);
    for (int i = 0; i < n; i++) table_free(t[i]);
    db_close(db);
    return fflush(stdout) == 0 ? 0 : 1;
}
