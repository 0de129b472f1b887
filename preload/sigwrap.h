/*
 * sigwrap.h: the program's handlers of the signals `infprof run` passes on, behind a trampoline
 * that notes their deliveries for the run (sigwrap.c, profiler/runsig.h).
 */
#ifndef INFPROF_SIGWRAP_H
#define INFPROF_SIGWRAP_H

#include <signal.h>

/* sigaction as the program calls it, through the real one: a handler of the program's wrapped,
 * and `old` as the program set it. */
int sigwrap_sigaction(int (*real)(int, const struct sigaction *, struct sigaction *), int sig,
                      const struct sigaction *act, struct sigaction *old);
/* After signal() or a relative set sig's handler (prev: what it returned): the handler wrapped,
 * and prev as the program set it. */
sighandler_t sigwrap_after_signal(int (*real)(int, const struct sigaction *, struct sigaction *),
                                  int sig, sighandler_t prev);

/* In a forked child: the table's lock free again (pthread_atfork, once attached). */
void sigwrap_atfork_child(void);

#endif
