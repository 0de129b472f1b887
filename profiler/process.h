/*
 * process.h: the facts about this process that the whole core reads and that only lifecycle.c
 * sets: the lifecycle state, when the run started (t0), the process's role in the session,
 * which pid owns the run, and the exit status the program chose.
 */
#ifndef INFPROF_PROCESS_H
#define INFPROF_PROCESS_H

#include <stdatomic.h>
#include <stdint.h>

enum ip_state { IP_STATE_UNINIT, IP_STATE_ACTIVE, IP_STATE_FINISHING, IP_STATE_DONE, IP_STATE_OFF };

/* Who this process is in the profiling session; it decides the output name (output.c). */
enum ip_role {
    IP_ROLE_ROOT,       /* the process infprof was started on: gets the configured name */
    IP_ROLE_DESCENDANT, /* a program it executed: NAME-PID.db */
    IP_ROLE_FORK_CHILD  /* a forked child: NAME-PID.db, created on its first event */
};

extern _Atomic int ip_state_v;
/* The thread that is finishing the run: while finishing, it alone still records (its collectors'
 * last records); every other thread's events stop at once, so the final drain never chases
 * producers that keep running during exit. */
extern __thread int ip_finisher __attribute__((tls_model("initial-exec")));
/* Events that came after the run stopped taking them (a library's NVTX in its destructor, other
 * threads during exit): counted, written as meta events_after_end. */
extern _Atomic uint64_t ip_events_after_end;

/* Threads of ours alive now (the writer, the energy sampler). */
extern _Atomic int ip_our_threads;

/* Outside every recording window (profiler/window.h): hooks keep their own state (NVTX stacks,
 * open iterations) but record nothing. */
extern _Atomic int ip_window_closed;

/* True while the run is on: what hooks need to keep their state (a range's stack, an iteration
 * that is open), windows or not. Cheap: one relaxed load. */
static inline int ip_active(void)
{
    int s = atomic_load_explicit(&ip_state_v, memory_order_relaxed);
    return s == IP_STATE_ACTIVE || (s == IP_STATE_FINISHING && ip_finisher);
}

/* True while hooks should record: the run is on and a window is open (always, unless the run
 * asked for windows). Two relaxed loads. */
static inline int ip_recording(void)
{
    return ip_active() && !atomic_load_explicit(&ip_window_closed, memory_order_relaxed);
}

/* A hook turned away an event because the run has ended (or is ending on another thread). */
static inline void ip_note_after_end(void)
{
    int s = atomic_load_explicit(&ip_state_v, memory_order_relaxed);
    if (s == IP_STATE_FINISHING || s == IP_STATE_DONE)
        atomic_fetch_add_explicit(&ip_events_after_end, 1, memory_order_relaxed);
}

/* ip_recording for an event that closes something opened before (an iteration's end): one turned
 * away because the run has ended is counted (ip_note_after_end), not lost silently. */
static inline int ip_recording_noted(void)
{
    if (ip_recording()) return 1;
    ip_note_after_end();
    return 0;
}

/* The run's start on the monotonic clock, and this process's role. */
uint64_t ip_t0(void);
enum ip_role ip_role(void);
void ip_process_begin(uint64_t t0, enum ip_role role);

/* The pid the run belongs to (a vfork child shares our memory but not our pid). */
void ip_process_take(void);
int ip_process_owns(void);

/* The program's main has begun (preload.c): every library loaded at start is initialised. */
void ip_process_main_began(void);
int ip_process_in_main(void);

/* Known exit status (from the exit hooks or main's return), -1 if unknown. */
void ip_process_set_exit_status(int status);
void ip_process_forget_exit_status(void);
int ip_process_exit_status(void);

#endif
