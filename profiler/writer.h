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

/* Start the thread. role: enum ip_role; lazy: create the database only once there is an event
 * (a forked child that only execs leaves no file). 0 on success. */
int ip_writer_start(const char *pattern, int role, int lazy, uint64_t t0);
/* Ask for a cycle now. */
void ip_writer_wake(void);
/* Ask for the final cycle (reason goes to meta 'end_reason') and wait up to timeout_ms.
 * Returns 0 when the database was closed in time. Callable from a signal handler. */
int ip_writer_stop(const char *reason, uint64_t timeout_ms);
/* The database path (empty until created). */
const char *ip_writer_path(void);
int ip_writer_running(void);

void ip_writer_atfork_prepare(void);
void ip_writer_atfork_parent(void);
/* In the child: the thread is gone; forget it (the lifecycle starts a new one). */
void ip_writer_atfork_child(void);

#endif
