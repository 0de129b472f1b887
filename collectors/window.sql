-- collectors/window.sql: the recording windows' table, created after schema/schema.sql
-- (conventions there); embedded at build time.

-- Schema 5 from 2026-11-26 (profiler/window.c, collectors/window.c, docs/windows.md): each
-- window the run recorded in, in order (id 1, 2, ...): start and end (ns since t0; end NULL
-- while open), how it opened and closed (1 the run's start, 2 the delay, 3 the duration,
-- 4 `infprof window`, 5 the signal, 6 the NVTX capture range, 7 cudaProfilerStart/Stop, 8 the
-- run's end), and the outermost iterations in flight when it closed (not recorded: they ended
-- outside it). A database without the table recorded all along.
CREATE TABLE windows (
    id INTEGER PRIMARY KEY, start INTEGER, end INTEGER, opened_by INTEGER, closed_by INTEGER,
    open_at_close INTEGER
);
