-- collectors/cupti.sql: the CUPTI collector's tables (devices, kernels, copies, sets, memory
-- segments, CUDA API calls, their end-of-run summaries), created after schema/schema.sql
-- (conventions there) and before schema/views.sql; embedded at build time.

CREATE TABLE devices (
    id INTEGER PRIMARY KEY, name TEXT, sm_count INTEGER, global_memory_bytes INTEGER,
    cc_major INTEGER, cc_minor INTEGER, clock_khz INTEGER, memory_clock_khz INTEGER,
    memory_bus_width INTEGER, uuid TEXT
);

-- Launch signatures: everything about a kernel launch that repeats, stored once.
CREATE TABLE launch_sigs (
    id INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, device INTEGER, stream INTEGER,
    grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,
    block_z INTEGER, registers INTEGER, static_smem INTEGER, dynamic_smem INTEGER,
    graph_id INTEGER, graph_node INTEGER, context INTEGER,
    phase INTEGER              -- the launching thread's phase: a launch in another phase is
                               -- another signature, so kernel rows stay 4 integers
);

-- One row per kernel execution: the narrowest row that keeps every fact (about 25 bytes on
-- disk); read it through the view `kernels`. iter: the iteration (iterations.id) whose host call
-- launched it, NULL outside iterations (schema 1 had no iter). nvtx: the launching thread's
-- innermost NVTX push/pop range (nvtx_ranges.id), NULL none (schema 2 and older had no nvtx:
-- cuda_api.nvtx, when API records were kept).
CREATE TABLE kernel_rows (
    start INTEGER, dur INTEGER, sig INTEGER, corr INTEGER, iter INTEGER, nvtx INTEGER
);

CREATE VIEW kernels AS
SELECT k.rowid AS rowid, k.start AS start, k.dur AS dur, k.sig AS sig, k.corr AS corr,
       g.phase AS phase, g.name_id AS name_id, g.device AS device, g.stream AS stream,
       k.iter AS iter, k.nvtx AS nvtx
FROM kernel_rows k JOIN launch_sigs g ON g.id = k.sig;

-- copy_kind, src_kind, dst_kind: CUPTI's CUpti_ActivityMemcpyKind / CUpti_ActivityMemoryKind.
CREATE TABLE memcpy (
    start INTEGER, dur INTEGER, bytes INTEGER, copy_kind INTEGER, src_kind INTEGER,
    dst_kind INTEGER, flags INTEGER, device INTEGER, stream INTEGER, corr INTEGER,
    phase INTEGER, graph_node INTEGER, peer_device INTEGER
);

CREATE TABLE memset (
    start INTEGER, dur INTEGER, bytes INTEGER, value INTEGER, memory_kind INTEGER, flags INTEGER,
    device INTEGER, stream INTEGER, corr INTEGER, phase INTEGER, graph_node INTEGER
);

-- Device memory segments (reserved memory): op 1 allocation, 2 release (CUPTI MEMORY2).
CREATE TABLE memory_segments (
    ts INTEGER, op INTEGER, memory_kind INTEGER, address INTEGER, bytes INTEGER, device INTEGER,
    stream INTEGER, corr INTEGER, phase INTEGER, is_async INTEGER, pool_address INTEGER,
    pool_type INTEGER
);

CREATE TABLE memory_pools (
    ts INTEGER, op INTEGER, pool_type INTEGER, address INTEGER, size INTEGER, utilized INTEGER,
    release_threshold INTEGER, device INTEGER, corr INTEGER
);

CREATE TABLE sync (
    start INTEGER, dur INTEGER, type INTEGER, context INTEGER, stream INTEGER, event_id INTEGER,
    corr INTEGER, phase INTEGER
);

-- CUDA runtime (domain 1) and driver (domain 2) API calls; nvtx is the innermost push/pop range
-- of the calling thread for launches.
CREATE TABLE cuda_api (
    corr INTEGER PRIMARY KEY, start INTEGER, dur INTEGER, tid INTEGER, name_id INTEGER,
    cbid INTEGER, domain INTEGER, ret INTEGER, phase INTEGER, nvtx INTEGER
);

CREATE TABLE external_corr (corr INTEGER, kind INTEGER, ext_id INTEGER);

CREATE TABLE graph_launches (
    start INTEGER, dur INTEGER, device INTEGER, stream INTEGER, graph_id INTEGER, corr INTEGER,
    phase INTEGER
);

-- Written when the run finishes (the report recomputes them from the rows when they are absent).
-- phase -1 is all phases together. med_exact 0: the median is from a uniform sample of 8192.
-- stddev is the sample standard deviation (n - 1), as nsys prints it.
CREATE TABLE kernel_summary (
    name_id INTEGER, phase INTEGER, count INTEGER, total INTEGER, min INTEGER, max INTEGER,
    med INTEGER, stddev REAL, med_exact INTEGER
);

-- Per phase: how long the GPU was busy with its work (the union of the intervals of its kernels,
-- copies and sets) and how many such records there were.
CREATE TABLE phase_gpu (phase INTEGER PRIMARY KEY, busy_ns INTEGER, work INTEGER);

-- Written at finish (from 2026-11-28, within schema 5: a database without them is read from
-- kernel_rows), so that a report does not read every kernel row: the kernels' time over the run
-- in buckets of meta 'kernel_time.width_ns' (bucket b is [b * width, (b + 1) * width) since t0;
-- a kernel over two buckets counts in both, split; buckets without kernels are left out), and
-- per (phase of the launch, innermost operator: a strings id) the kernels and their time.
CREATE TABLE kernel_time (bucket INTEGER PRIMARY KEY, ns INTEGER);
CREATE TABLE operator_kernels (phase INTEGER, op INTEGER, kernels INTEGER, ns INTEGER);

-- Per CUDA API function (all phases): host time, and for launches the launch latency (API call
-- start to the start of the work it launched).
CREATE TABLE api_summary (
    name_id INTEGER, count INTEGER, total INTEGER, min INTEGER, max INTEGER, med INTEGER,
    stddev REAL, med_exact INTEGER, errors INTEGER, launches INTEGER, latency_total INTEGER,
    latency_min INTEGER, latency_max INTEGER, latency_med INTEGER
);

-- Schema 4, operators carried by GPU work and memory (INFPROF_OPERATORS=1): op is the strings id
-- of the thread's innermost PyTorch operator when the kernel, copy or memset was issued, the cuDNN
-- call made or the allocator reported, NULL none (or operators not recorded). Added at the end.
ALTER TABLE kernel_rows ADD COLUMN op INTEGER;
ALTER TABLE memcpy ADD COLUMN op INTEGER;
ALTER TABLE memset ADD COLUMN op INTEGER;
