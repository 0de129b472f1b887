/*
 * main.c: the `infprof` command: dispatch to one subcommand per file (cmd_*.c) from one table.
 */
#include "commands.h"
#include "../base/cli.h"
#include "../../profiler/runinfo.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef INFPROF_COMMIT /* CMakeLists.txt gives the checkout's commit */
#define INFPROF_COMMIT "unknown"
#endif

static const struct cli_command commands[] = {
    {"run", cmd_run, "profile a program: infprof run [-o FILE] [--force] [--] PROGRAM [ARGS]"},
    {"report", cmd_report, "print the report of one or more databases"},
    {"compare", cmd_compare, "two runs side by side: infprof compare BASE.db NEW.db"},
    {"info", cmd_info,
     "list every INFPROF_* setting (--rules: the advice rules), or describe a"
     " database"},
    {"export", cmd_export, "write a run as a Chrome trace for Perfetto: infprof export DB -o FILE"},
    {"views", cmd_views, "add Nsight Systems' table names to a database: infprof views DB"},
    {"window", cmd_window, "open or close a recording window: infprof window PID start|stop"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: infprof COMMAND [ARGS]\n\n"
                 "A profiler for PyTorch inference (C++ and Python) on NVIDIA GPUs and CPUs.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'infprof COMMAND --help' tells more. Without the CLI:\n"
                 "  LD_PRELOAD=/path/to/libinfprof.so ./app   (writes infprof.db)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("infprof %s (commit %s, database schema %d)\n", INFPROF_VERSION, INFPROF_COMMIT,
               INFPROF_SCHEMA_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    cli_fail("unknown command '%s' (try 'infprof --help')", argv[1]);
}
