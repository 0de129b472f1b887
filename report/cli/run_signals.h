/*
 * run_signals.h: `infprof run`'s side of the page that gives its program a signal once
 * (profiler/runsig.h; run_signals.c).
 */
#ifndef INFPROF_RUN_SIGNALS_H
#define INFPROF_RUN_SIGNALS_H

#include "../../profiler/runsig.h"

/* A new page, and the value of RUNSIG_ENV for the program ("PID:FD") in env; NULL (env empty)
 * when none could be made: then every signal is passed on, as before. */
struct runsig_page *run_signals_create(char *env, size_t n);
/* In the run's signal handler (async-signal-safe): 1 when its child `child` got `sig` from
 * `sender` itself (noted since `since_ns`, CLOCK_MONOTONIC, or still pending there), waiting up to
 * RUNSIG_WAIT_MS for the note where the program's own handler has it; 0: pass it on (at once
 * where the program has no handler of its own). */
int run_signals_child_got(struct runsig_page *pg, pid_t child, int sig, pid_t sender,
                          int64_t since_ns);

#endif
