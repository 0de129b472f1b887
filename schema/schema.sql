-- The infprof database schema, the core's part: run metadata, strings, threads, phases,
-- iterations and drops. Each collector's tables are in its own fragment (collectors/<name>.sql,
-- named by its descriptor), created after this one and before schema/views.sql; all are embedded
-- into the library at build time. Its version is PRAGMA user_version (bump it and add a note in
-- docs/database.md on any change to any fragment; readers refuse versions newer than their own).
--
-- Conventions
--   * Times are nanoseconds relative to the run's t0 (meta 't0_monotonic_ns', CLOCK_MONOTONIC);
--     host events and GPU records share that clock (CUPTI is given our timestamp function).
--   * Durations are nanoseconds. Names and texts are ids into `strings`.
--   * `phase` is an id into `phases` (0: no libtorch phase known). `tid` is the kernel thread id.
--   * Hot tables (kernel_rows, cuda_api, tensor_memory) carry no index: they are written append-only
--     and summarised at the end of the run into *_summary tables.

CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
-- Threads that recorded: name_id is the name the thread had when it first recorded (its
-- PR_GET_NAME; a name set later is not seen), first_ns when the writer first saw it.
CREATE TABLE threads (tid INTEGER PRIMARY KEY, name_id INTEGER, first_ns INTEGER);
-- Phases: one per (grad mode, autocast) pair seen; ids are fixed: 1 + 3*grad + autocast.
CREATE TABLE phases (
    id INTEGER PRIMARY KEY,
    grad_mode TEXT NOT NULL,   -- grad | no_grad | inference_mode
    autocast TEXT NOT NULL,    -- off | fp16 | bf16
    label TEXT NOT NULL        -- 'inference_mode | autocast bf16', the NVTX range name we emit
);
-- One row per span of time a thread spent in one phase (end NULL: still open at the end).
CREATE TABLE phase_spans (
    tid INTEGER NOT NULL, phase INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER,
    cuda_autocast INTEGER, cpu_autocast INTEGER   -- dtype codes: 0 off, 5 fp16, 15 bf16
);
-- Iterations: a TorchScript Method call (source 1); an NVTX range (2) or a libtorch
-- record_function user scope (3) named like INFPROF_ITERATION_RANGE; an AOTInductor model run
-- (4: AOTIModelPackageLoader or AOTIModelContainerRunner, run or boxed_run). batch from the
-- name's 'batch=N', else INFPROF_BATCH.
-- start/dur are the host call. gpu_end: when the last GPU work launched inside it finished
-- (kernels, copies, memsets whose launch carried its id, kernel_rows.iter); NULL when none was
-- seen or the run did not finish (the report then takes it from kernel_rows). gpu_items: how
-- many. Schema 1 had neither id nor gpu_end nor gpu_items.
-- label_id (schema 4): the mark's own name (strings), the NVTX range's or the record_function
-- scope's text ('iteration batch=8 int8'); NULL for TorchScript and AOTInductor calls. The
-- report's series are a phase and this label (docs/report.md, "Series").
CREATE TABLE iterations (
    id INTEGER PRIMARY KEY, tid INTEGER, phase INTEGER, start INTEGER, dur INTEGER,
    source INTEGER, batch INTEGER, nvtx INTEGER, gpu_end INTEGER, gpu_items INTEGER,
    label_id INTEGER
);
-- Each outermost iteration's thread while it ran (profiler/iteration.c, from 2026-11-26 within
-- schema 5: a database without it reads as one where none was read): its CPU time (ns) and
-- context switches, voluntary (it waited: a lock, the GIL, I/O, a synchronisation) and
-- involuntary (preempted), from getrusage(RUSAGE_THREAD). The CPU time is the scheduler's account
-- at each edge, a tick (1-4 ms) behind at most: exact in sums and means, coarse for one short
-- iteration (from 2026-11-26, fourth session; before, CLOCK_THREAD_CPUTIME_ID, which preempted
-- the program at the edges of a loaded CPU). From 2026-11-29 (session 15) an iteration that
-- begins within 20 us of its thread's last one's end starts from that end's reading: its CPU
-- time is that span's scaled to the iteration's share of it, its switches the span's. A thread
-- that blocks between iterations catches its account up in the gap. gap_cpu_ns, gap_voluntary,
-- gap_involuntary (from 2026-11-29, session 15): the same from the thread's last iteration's end
-- to this one's begin (NULL: none read apart, a chained begin or the thread's first), from which
-- the report tells what the account still owed at each iteration (report/run/itercpu.c). NULL:
-- unreadable. minflt, majflt, sys_ns (from 2026-11-29, session 16): the thread's page faults
-- (minor, major) and system time over the same reading as cpu_ns, a chained one's whole (its gap
-- of a few microseconds included): a forward whose allocator hands memory back to the system
-- and takes it again pays a fault a page.
CREATE TABLE iteration_cpu (id INTEGER PRIMARY KEY, cpu_ns INTEGER, voluntary INTEGER,
                            involuntary INTEGER, gap_cpu_ns INTEGER, gap_voluntary INTEGER,
                            gap_involuntary INTEGER, minflt INTEGER, majflt INTEGER,
                            sys_ns INTEGER);
-- Events a thread could not record (its buffer full past INFPROF_BUFFER_WAIT_MS), by the phase
-- the thread was in, with the first and last such moment: the report names the phases and
-- iterations they touch. Phase changes, iterations and NVTX ranges are never among them.
CREATE TABLE event_drops (
    tid INTEGER, phase INTEGER, count INTEGER, first INTEGER, last INTEGER,
    PRIMARY KEY (tid, phase)
) WITHOUT ROWID;

PRAGMA user_version = 5;
