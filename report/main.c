/*
 * main.c: the `infprof` command: dispatch to one subcommand per file (cmd_*.c) from one table.
 */
#include "cli.h"
#include "../profiler/runinfo.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct cli_command commands[] = {
    {"run", cmd_run, "profile a program: infprof run [-o FILE] [--force] [--] PROGRAM [ARGS]"},
    {"report", cmd_report, "print the report of one or more databases"},
    {"compare", cmd_compare, "two runs side by side: infprof compare BASE.db NEW.db"},
    {"info", cmd_info, "list every INFPROF_* setting, or describe a database"},
    {"export", cmd_export, "write a run as a Chrome trace for Perfetto: infprof export DB -o FILE"},
};

void cli_fail(const char *fmt, ...)
{
    fflush(stdout);
    va_list ap;
    va_start(ap, fmt);
    char msg[2048], line[8192];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, whatever the message quotes (a file name with a newline in it). */
    fmt_escape(line, sizeof line, msg);
    fprintf(stderr, "infprof: %s\n", line);
    exit(CLI_EXIT_USAGE);
}

const char *cli_self_dir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        dir[n > 0 ? n : 0] = 0;
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
    }
    return dir;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: infprof COMMAND [ARGS]\n\n"
                 "A profiler for PyTorch C++ (libtorch) inference on NVIDIA GPUs.\n\n"
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
        printf("infprof %s (database schema %d)\n", INFPROF_VERSION, INFPROF_SCHEMA_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    cli_fail("unknown command '%s' (try 'infprof --help')", argv[1]);
}
