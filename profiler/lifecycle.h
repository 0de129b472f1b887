/*
 * lifecycle.h: the one lifecycle of the library: uninit -> active -> finishing -> done (or off),
 * and the one idempotent finish, reached from atexit, the destructor, fatal signals, _exit and
 * exec.
 */
#ifndef INFPROF_LIFECYCLE_H
#define INFPROF_LIFECYCLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum ip_state { IP_STATE_UNINIT, IP_STATE_ACTIVE, IP_STATE_FINISHING, IP_STATE_DONE, IP_STATE_OFF };

/* Who this process is in the profiling session; it decides the output name (output.c). */
enum ip_role {
    IP_ROLE_ROOT,       /* the process infprof was started on: gets the configured name */
    IP_ROLE_DESCENDANT, /* a program it executed: NAME-PID.db */
    IP_ROLE_FORK_CHILD  /* a forked child: NAME-PID.db, created on its first event */
};

extern _Atomic int ip_state_v;

/* True while hooks should record. Cheap: one relaxed load. */
static inline int ip_recording(void)
{
    int s = atomic_load_explicit(&ip_state_v, memory_order_relaxed);
    return s == IP_STATE_ACTIVE || s == IP_STATE_FINISHING;
}

struct ip_start_opts {
    const char *output;        /* overrides INFPROF_OUTPUT (benchmarks, tests) */
    int install_process_hooks; /* atexit, signals, fork handlers, environment */
};

/* Start the pipeline (reads the configuration; starts the writer thread). 0 on success. */
int ip_lifecycle_start(const struct ip_start_opts *opts);
/* Finish once: stop collectors (unless from_signal), write the last events, close. */
void ip_lifecycle_finish(const char *reason, int from_signal);

uint64_t ip_t0(void);
enum ip_role ip_role(void);
/* The pid the lifecycle belongs to (a vfork child shares our memory but not our pid). */
int ip_lifecycle_owns_process(void);

/* Known exit status (from _exit or exit hooks), -1 if unknown. */
void ip_lifecycle_set_exit_status(int status);
int ip_lifecycle_exit_status(void);

/* The real path of the shared library infprof runs from (libinfprof.so), for the injection
 * variables; -1 when the core is linked into the program itself (tests, benchmarks), where
 * there is no library for CUDA or NVTX to load. */
int ip_lifecycle_library_path(char *out, size_t n);

/* Is this signal handler ours (so that sigaction can hide it from the program)? */
int ip_lifecycle_signal_is_ours(int sig);
void ip_lifecycle_signal_released(int sig);

#endif
