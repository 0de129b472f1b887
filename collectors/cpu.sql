-- collectors/cpu.sql: the CPU time collector's table, created after schema/schema.sql
-- (conventions there); embedded at build time.

-- Schema 4 from 2026-11-26 (collectors/cpu.c, INFPROF_CPU_MS): the process's CPU time, read by
-- our writer thread every INFPROF_CPU_MS and at start and end. t: ns since t0. cpu_ns: the
-- process's CPU time since it started, every thread, user and system (CLOCK_PROCESS_CPUTIME_ID);
-- sys_ns: the system part of it (getrusage, microseconds); ours_ns: our writer thread's own
-- (CLOCK_THREAD_CPUTIME_ID: the database writes, the energy readings), part of cpu_ns.
CREATE TABLE cpu_samples (t INTEGER, cpu_ns INTEGER, sys_ns INTEGER, ours_ns INTEGER);
