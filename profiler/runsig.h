/*
 * runsig.h: a signal given once. `infprof run` passes on to its program the signals a
 * supervisor sends it (docker stop's SIGTERM, a kill: report/cli/cmd_run.c). A signal sent to
 * the whole process group (a shell's `kill %1`, systemd's control-group stop, timeout(1)) reaches
 * the program as well, and passing it on made the program's handler run twice: a server that
 * drained twice hung (a fresh-eyes check, 2026-12-01). So the run shares a page with its program
 * (a memfd, which the program's library opens through /proc/PARENT/fd: no file is left behind, no
 * descriptor is left open in the program), the library notes there each of these signals its
 * program's handlers get (preload/sigwrap.c), and the run passes one on only where the program
 * did not get it from the same sender itself.
 */
#ifndef INFPROF_RUNSIG_H
#define INFPROF_RUNSIG_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RUNSIG_ENV "INFPROF_RUN_SIGNALS"
/* The signals `infprof run` passes on, and the only ones noted (all under 32). */
#define RUNSIG_SET ((1u << SIGINT) | (1u << SIGTERM) | (1u << SIGHUP) | (1u << SIGQUIT))
/* How long the run waits for its program's note of a signal before passing it on: a signal a
 * group was sent reaches a program's handler within a scheduling slice (docker stop's grace is
 * 10 s). */
#define RUNSIG_WAIT_MS 100
/* A note this much older than the run's own receipt is of another sending. */
#define RUNSIG_RECENT_MS 200

#define RUNSIG_MAGIC 0x67737069u /* "ipsg" */
#define RUNSIG_NOTES 4

/* The page: written by the run's own child (its library), read by the run
 * (report/cli/run_signals.c). */
struct runsig_page {
    uint32_t magic;
    int32_t parent;           /* the run's pid: only its own child notes */
    _Atomic uint32_t handled; /* bit per signal: the child's handler is the program's own */
    /* Per signal, its last RUNSIG_NOTES receipts (a handler that raises the signal again notes
     * its own after the sender's): when (CLOCK_MONOTONIC ns, 0 none) and from whom (si_pid; 0
     * the kernel's or unknown); next: the count of notes, the slot of the next one. */
    _Atomic int64_t when[32][RUNSIG_NOTES];
    _Atomic int32_t from[32][RUNSIG_NOTES];
    _Atomic uint32_t next[32];
};

/* The notes' clock: CLOCK_MONOTONIC, the same in every process (profiler/clock.h's
 * ip_clock_gettime: async-signal-safe). */

/* The library, once at its start: map the page RUNSIG_ENV names when this process is the run's
 * own child (an image it exec'd too); 1 when mapped. */
int runsig_attach(void);
/* 1 when attached: the program's handlers of RUNSIG_SET are to be noted. */
int runsig_attached(void);
/* The program's own handler of sig is (on) or is no longer (0) behind our note (sigwrap.c). */
void runsig_handled(int sig, int on);
/* In a signal handler (async-signal-safe): this process got sig (from si). */
void runsig_note(int sig, const siginfo_t *si);

#endif
