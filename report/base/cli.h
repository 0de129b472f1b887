/*
 * cli.h: how every part of the `infprof` command fails on bad input (one line on stderr,
 * prefixed "infprof:", exit 2) and where the running binary lives (cli.c).
 */
#ifndef INFPROF_REPORT_CLI_H
#define INFPROF_REPORT_CLI_H

#include <stddef.h>

/* Exit codes: 0 fine, 2 usage or input error (one line on stderr, prefixed "infprof:"). */
#define CLI_EXIT_USAGE 2
void cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
const char *cli_self_dir(void); /* directory of the running infprof binary */
/* A path or name about to be printed, escaped in place (control and invisible characters,
 * fmt_escape), cut to fit n. */
void cli_escape_into(char *buf, size_t n);

#endif
