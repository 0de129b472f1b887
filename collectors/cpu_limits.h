/*
 * cpu_limits.h: the CPUs the process may use and its cgroup's CPU quota (cpu_limits.c), for the
 * CPU time collector (cpu.c). Writer thread only.
 */
#ifndef INFPROF_CPU_LIMITS_H
#define INFPROF_CPU_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct ip_store;

/* Meta cpus_allowed and cpu_quota_milli; cpu.stat opened and read (the counts start here). */
void ip_cpu_limits_prepare(struct ip_store *s);
/* The time the quota held the process back since the start, ns; -1 unknown or no quota. */
int64_t ip_cpu_limits_throttled_ns(void);
/* Meta cpu_periods, cpu_throttled_periods, cpu_throttled_ns; words for the collector's status
 * ("; the cgroup's CPU quota, ...": empty where there is no quota). */
void ip_cpu_limits_finish(struct ip_store *s, char *words, size_t size);

#endif
