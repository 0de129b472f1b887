-- collectors/cpu.sql: the CPU time collector's table, created after schema/schema.sql
-- (conventions there); embedded at build time.

-- Schema 4 from 2026-11-26 (collectors/cpu.c, INFPROF_CPU_MS): the process's CPU time, read by
-- our writer thread every INFPROF_CPU_MS and at start and end. t: ns since t0. cpu_ns: the
-- process's CPU time since it started, every thread, user and system (CLOCK_PROCESS_CPUTIME_ID);
-- sys_ns: the system part of it (getrusage, microseconds); ours_ns: our writer thread's own
-- (CLOCK_THREAD_CPUTIME_ID: the database writes, the energy readings), part of cpu_ns.
CREATE TABLE cpu_samples (t INTEGER, cpu_ns INTEGER, sys_ns INTEGER, ours_ns INTEGER);

-- From 2026-11-30 (within schema 5: a database without it reads NULL): throttled_ns, the time the
-- process's cgroup CPU quota held it back since the start (cpu.stat's throttled time; NULL where
-- no quota was read). Meta cpus_allowed, cpu_quota_milli, cpu_periods, cpu_throttled_periods,
-- cpu_throttled_ns (collectors/cpu_limits.c).
ALTER TABLE cpu_samples ADD COLUMN throttled_ns INTEGER;
