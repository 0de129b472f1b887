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

struct runsig_page;

/* The run: a new page, and the value of RUNSIG_ENV for its program ("PID:FD") in env; NULL (env
 * empty) when none could be made: then every signal is passed on, as before. */
struct runsig_page *runsig_create(char *env, size_t n);
/* The run, in its signal handler (async-signal-safe): 1 when its child `child` got `sig` from
 * `sender` itself (noted since `since_ns`, CLOCK_MONOTONIC, or still pending there), waiting up to
 * RUNSIG_WAIT_MS for the note where the program's own handler has it; 0: pass it on (at once
 * where the program has no handler of its own). */
int runsig_child_got(struct runsig_page *pg, pid_t child, int sig, pid_t sender, int64_t since_ns);
int64_t runsig_now_ns(void);

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
