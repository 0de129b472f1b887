/*
 * writer.h: the writer thread, the only owner of the SQLite connection. It wakes every
 * INFPROF_FLUSH_MS (or when asked), drains the rings and the collectors into batched inserts, and
 * commits at least every IP_WRITER_COMMIT_MS. It blocks every signal, so the program's handlers
 * run on the program's threads.
 */
#ifndef INFPROF_WRITER_H
#define INFPROF_WRITER_H

#include <stdint.h>

#define IP_WRITER_COMMIT_MS 500
/* While a backlog drains: a commit at least this often, each one small. */
#define IP_WRITER_BACKLOG_COMMIT_MS 50
/* How long the start waits for the database to be created. */
#define IP_WRITER_BOOT_WAIT_MS 1000

/* Start the thread. role: enum ip_role; lazy: create the database only once there is an event
 * (a forked child that only execs leaves no file). 0 on success. */
int ip_writer_start(const char *pattern, int role, int lazy, uint64_t t0);
/* Ask for a cycle now (and bring back a writer that left for a fork). */
void ip_writer_wake(void);
/* A writer that left for a fork comes back (writer.c: deferred in Python 3.12 and later). */
int ip_writer_resume(void);
/* Ask for the final cycle (reason goes to meta 'end_reason') and wait up to timeout_ms.
 * Returns 0 when the database was closed in time. Callable from a signal handler. */
int ip_writer_stop(const char *reason, uint64_t timeout_ms);
/* The database path (empty until created). */
const char *ip_writer_path(void);
int ip_writer_running(void);

/* After the finish and every destructor: events turned away since the database was closed (a
 * library's NVTX in its destructor) are counted in it (meta events_after_end), by a short-lived
 * thread of ours; at most 200 ms. */
void ip_writer_count_late(void);

/* The program's main thread called pthread_exit: the writer ends the process once the program's
 * last thread is gone (polled every IP_WRITER_ORPHAN_POLL_MS). */
void ip_writer_main_thread_ended(void);
#define IP_WRITER_ORPHAN_POLL_MS 5

void ip_writer_atfork_prepare(void);
void ip_writer_atfork_parent(void);
/* In the child: the thread is gone; forget it (the lifecycle starts a new one). */
void ip_writer_atfork_child(void);

#endif
