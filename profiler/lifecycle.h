/*
 * lifecycle.h: the one lifecycle of the library: uninit -> active -> finishing -> done (or off),
 * and the one idempotent finish, reached from the destructor (at exit), fatal signals, _exit,
 * quick_exit and exec.
 */
#ifndef INFPROF_LIFECYCLE_H
#define INFPROF_LIFECYCLE_H

#include "collector.h"
#include "process.h"

#include <stddef.h>

struct ip_start_opts {
    const char *output;        /* overrides INFPROF_OUTPUT (benchmarks, tests) */
    int install_process_hooks; /* atexit, signals, fork handlers, environment */
    /* The collectors, indexed by the high byte of their event types (collector.h); the
     * preloaded library passes collectors/registry.c's table, tests and benchmarks theirs. */
    const struct ip_collector *const *collectors;
    int n_collectors;
};

/* Start the pipeline (reads the configuration; starts the writer thread). 0 on success. */
int ip_lifecycle_start(const struct ip_start_opts *opts);
/* The same from the preloaded library's constructor: the resource limits checked on the calling
 * thread (rlimits.h), then the start on a short-lived thread of ours (its own stack, every
 * signal blocked), joined before returning. */
int ip_lifecycle_start_aside(const struct ip_start_opts *opts);
/* 1 when the start ran on a thread inside a dlopen (the boot thread could not take the loader's
 * lock): until that dlopen returns, no thread of ours can load a library (NVML: nvml.c). */
int ip_lifecycle_started_in_loader(void);
/* The program's main is about to run (preload.c): tell the collectors. */
void ip_lifecycle_main_begins(void);
/* Finish once: stop collectors (unless from_signal), write the last events, close. */
void ip_lifecycle_finish(const char *reason, int from_signal);
/* _exit is called, or a fatal signal came: each collector's exit_now on this thread, unless it is
 * inside a hook of ours (a signal handler that interrupted one) or has no ring yet (one is not
 * made in a signal handler). */
void ip_lifecycle_exit_now(void);
/* _exit(status) finishes the run: a fatal signal that comes meanwhile waits for the finish and
 * ends the process with that status, as it would have ended without us before the signal came. */
void ip_lifecycle_exit_begins(int status);
/* A fatal signal's finish waits at most this long: the process dies on time, the database
 * keeping its last commit. */
#define IP_SIGNAL_FINISH_MS 100
/* The finish at exit, from the library's destructor: after every atexit handler (a library's
 * NVTX in its own atexit handler is recorded), before the destructors that follow ours, whose
 * events are counted as after the end. */
void ip_lifecycle_exit_finish(void);
/* A second thread in exit() while a first one's exit finishes the run: wait (at most
 * INFPROF_FINISH_TIMEOUT_MS) until the database is written, then let it go on as glibc would
 * (two exits at once ended the process in the second one's _exit, the database unwritten). */
void ip_lifecycle_wait_finished(void);

/* The real path of the shared library infprof runs from (libinfprof.so), for the injection
 * variables; -1 when the core is linked into the program itself (tests, benchmarks), where
 * there is no library for CUDA or NVTX to load. */
int ip_lifecycle_library_path(char *out, size_t n);

/* Is this signal handler ours (so that sigaction can hide it from the program)? */
int ip_lifecycle_signal_is_ours(int sig);
/* The program set SIG_DFL on `sig`: where it is one we watch, our flush-then-default handler
 * goes back in its place (the program still reads SIG_DFL). 1 when it did. */
int ip_lifecycle_signal_keep(int sig);
void ip_lifecycle_signal_released(int sig);

#endif
