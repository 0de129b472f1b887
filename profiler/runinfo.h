/*
 * runinfo.h: the run's own metadata: who ran (command, pid, host, start time), how it ended,
 * the counters of what was recorded and what was lost, and the threads seen. Writer thread only.
 */
#ifndef INFPROF_RUNINFO_H
#define INFPROF_RUNINFO_H

#include "events.h"

#include <stdint.h>

struct ip_store;

#define INFPROF_VERSION        "0.1.0"
#define INFPROF_SCHEMA_VERSION 5

/* At start, before main: what the run's metadata will say of the process (its command line). */
void ip_runinfo_capture(void);
void ip_runinfo_write_start(struct ip_store *s, const char *path, int role);
void ip_runinfo_write_counters(struct ip_store *s);
void ip_runinfo_write_end(struct ip_store *s, const char *reason, uint64_t end_ts);
void ip_runinfo_thread_seen(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);

#endif
