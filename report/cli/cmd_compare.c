/*
 * cmd_compare.c: `infprof compare [options] BASE NEW`: two runs side by side. Here: the
 * options; compare/ reads both runs and matches their sections row by row.
 */
#include "commands.h"
#include "../render/render.h"
#include "../compare/compare.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void compare_usage(FILE *out)
{
    fprintf(out,
            "usage: infprof compare [--format %s] [--top N] [--wide]\n"
            "                       [--by-phase] [--phase PHASE] [--nvtx RANGE]\n"
            "                       [--section K | --csv-dir D] [--columns K=C,C...] BASE NEW\n"
            "       infprof compare [options] BASE1 BASE2 ... -- NEW1 NEW2 ...\n\n"
            "The sections of two runs side by side: for each phase, kernel name, memory\n"
            "figure, API function, memory operation and NVTX range the base value, the new\n"
            "value, the delta, the change in %% (and new/base for throughput and latency);\n"
            "rows in one run only are 'added' or 'removed'.\n"
            "With several runs a side (infprof run --repeat N), each phase's and series'\n"
            "verdict weighs the change against how much the runs of a side differ\n"
            "(docs/compare.md); the other sections compare the first run of each side.\n\n"
            "  --format F  %s (the first is the default)\n"
            "  --top N     rows per section, largest change first (default 20 in text and\n"
            "              md, all in json and csv; 0: all)\n"
            "  --by-phase  kernels matched by name and phase\n"
            "  --phase P   kernels of phase P only ('no_grad/bf16' or its full label)\n"
            "  --nvtx R    kernels launched inside NVTX ranges named R (a glob)\n"
            "  --warmup N  the first N iterations of each series are warm-up (both sides)\n"
            "  --detect S  where unmarked iterations are looked for first (kernels,\n"
            "              operators or allocations), as in infprof report\n"
            "  --section K only the section K (JSON key)\n"
            "  --csv-dir D one tidy CSV file per section, D/<section>.csv\n"
            "  --columns K=C,C...  section K with columns C only, in that order (JSON keys)\n"
            "  --wide      do not shorten long names\n",
            output_format_names("|", "|"), output_format_names(", ", " or "));
}

int cmd_compare(int argc, char **argv)
{
    struct render_opts ro = {.format = OUT_TEXT, .width = render_text_width()};
    struct report_opts o = {.top = -1, .run = RUN_OPTIONS_DEFAULT};
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths) cli_fail("out of memory");
    int npaths = 0, split = -1; /* split: where NEW's runs begin (after --) */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            compare_usage(stdout);
            free(paths);
            return 0;
        } else if (!strcmp(a, "--")) {
            if (split >= 0) cli_fail("compare takes one '--' (BASE... -- NEW...)");
            split = npaths;
        } else if (report_option(argc, argv, &i, &o, &ro)) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            cli_fail("unknown option '%s' (try 'infprof compare --help')", a);
        } else {
            paths[npaths++] = a;
        }
    }
    if (split < 0) {
        if (npaths > 2)
            cli_fail("compare takes two databases, BASE and NEW (got a third: %s); several runs"
                     " a side are BASE... -- NEW...",
                     paths[2]);
        if (npaths < 2) cli_fail("compare needs two databases (usage: infprof compare BASE NEW)");
        split = 1;
    }
    if (split == 0 || split == npaths)
        cli_fail("compare BASE... -- NEW...: %s side has no database",
                 split == 0 ? "the base" : "the new");
    report_defaults(&o, &ro);
    db_scan_threads(); /* a wrong INFPROF_REPORT_THREADS: one line, whatever the tables */
    static struct compare_runs runs;
    struct table *t[COMPARE_OUT_TABLES];
    int k = compare_runs(&runs, paths, split, paths + split, npaths - split, &o, t);
    render(stdout, t, k, &ro);
    compare_runs_free(&runs, t, k);
    free(paths);
    return fflush(stdout) == 0 ? 0 : 1;
}
