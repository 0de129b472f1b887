/*
 * options.c: the options `infprof report` and `infprof compare` share (commands.h): the format,
 * --top, --by-phase, --phase, --nvtx, --wide, --section, --columns, --csv-dir, --names and
 * --warmup.
 */
#include "commands.h"
#include "../base/cli.h"
#include "../base/names.h"
#include "../run/detect.h"
#include "../render/render.h"

#include <stdlib.h>
#include <string.h>

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
        if (++*i == argc)
            cli_fail("--format needs a value (%s)", output_format_names(", ", " or "));
        ro->out = parse_format(argv[*i]);
        ro->format = ro->out->views;
    } else if (!strncmp(a, "--format=", 9)) {
        ro->out = parse_format(a + 9);
        ro->format = ro->out->views;
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
    } else if (!strcmp(a, "--columns")) {
        if (++*i == argc)
            cli_fail("--columns needs SECTION=COLUMN,COLUMN,... (e.g. series=series,"
                     "latency_p50_ns)");
        if (ro->ncolumns == RENDER_COLUMN_SPECS)
            cli_fail("--columns: at most %d sections", RENDER_COLUMN_SPECS);
        ro->columns[ro->ncolumns++] = argv[*i];
    } else if (!strcmp(a, "--csv-dir")) {
        if (++*i == argc) cli_fail("--csv-dir needs a directory");
        ro->csv_dir = argv[*i];
        ro->out = parse_format("csv");
        ro->format = OUT_CSV;
    } else if (!strcmp(a, "--names")) {
        if (++*i == argc) cli_fail("--names needs short, full or mangled");
        const char *v = argv[*i];
        if (!strcmp(v, "short"))
            ro->names = NAMES_SHORT;
        else if (!strcmp(v, "full"))
            ro->names = NAMES_FULL;
        else if (!strcmp(v, "mangled"))
            ro->names = NAMES_MANGLED;
        else
            cli_fail("--names takes short, full or mangled, not '%s'", v);
    } else if (!strcmp(a, "--detect")) {
        if (++*i == argc) cli_fail("--detect needs kernels, operators or allocations");
        if (!strcmp(argv[*i], "kernels"))
            o->run.detect = DETECT_KERNELS;
        else if (!strcmp(argv[*i], "operators"))
            o->run.detect = DETECT_OPERATORS;
        else if (!strcmp(argv[*i], "allocations"))
            o->run.detect = DETECT_ALLOCATIONS;
        else
            cli_fail("--detect takes kernels, operators or allocations, not '%s'", argv[*i]);
    } else if (!strcmp(a, "--warmup")) {
        if (++*i == argc) cli_fail("--warmup needs a number of iterations");
        o->run.warmup = parse_count("--warmup", argv[*i]);
        o->run.warmup_given = 1;
    } else {
        return 0;
    }
    return 1;
}
