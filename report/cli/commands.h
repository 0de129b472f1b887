/*
 * commands.h: the subcommands of `infprof`, one file each (cmd_*.c), dispatched from main.c,
 * and the options `report` and `compare` share (options.c).
 */
#ifndef INFPROF_COMMANDS_H
#define INFPROF_COMMANDS_H

#include <stdio.h>

struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_views(int argc, char **argv);
int cmd_window(int argc, char **argv);
/* Add the nsys-named views to the database at path and fill its kernel names (cmd_views.c): 0,
 * *names filled; -1 with the reason in err. */
int views_write(const char *path, int *names, char *err, size_t n);

struct report_opts;
struct render_opts;
/* An option report and compare share at argv[*i] (--format, --top, --by-phase, --phase, --nvtx,
 * --wide, --section, --csv-dir, --names, --warmup): taken, with its value (*i moves past it); 0
 * when it is none of those (options.c). */
int report_option(int argc, char **argv, int *i, struct report_opts *o, struct render_opts *ro);

#endif
