-- The infprof database schema: the single source, embedded into the library and the CLI at build
-- time. Its version is PRAGMA user_version (bump it and add a note in docs/database.md on any
-- change; readers refuse versions newer than their own).
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

-- Tensor memory from the PyTorch allocators' own reports (c10::reportMemoryUsageToProfiler):
-- bytes > 0 allocation, < 0 free; allocated/reserved are the allocator's totals after the event.
-- device_type follows c10::DeviceType (0 CPU, 1 CUDA).
CREATE TABLE tensor_memory (
    ts INTEGER, tid INTEGER, phase INTEGER, device_type INTEGER, device_index INTEGER,
    ptr INTEGER, bytes INTEGER, allocated INTEGER, reserved INTEGER
);

-- The application's NVTX ranges. kind 1 push/pop, 2 start/end, 3 mark.
CREATE TABLE nvtx_domains (id INTEGER PRIMARY KEY, name_id INTEGER);
CREATE TABLE nvtx_ranges (
    id INTEGER PRIMARY KEY, tid INTEGER, domain INTEGER, kind INTEGER, start INTEGER,
    end INTEGER, text_id INTEGER, category INTEGER, color INTEGER, depth INTEGER,
    parent INTEGER, phase INTEGER, end_tid INTEGER
);

-- cuDNN calls seen by interposition (docs/cudnn.md). fn_id names the API function (strings);
-- status is the cudnnStatus_t the program got. op_kind: 1 convolution forward, 2 batch-norm
-- inference, 3 batch-norm training, 4 attention, 5 matmul, 6 pointwise, 7 other, 8 a plan that
-- could not be classified; NULL: the call is no operation (cudnnCreate, cudnnSetStream, ...).
-- dtype: cudnnDataType_t of the operation's input (0 fp32, 2 fp16, 9 bf16, ...), NULL unknown.
-- stream: the handle's stream (NULL unknown). plan: cudnn_plans.plan of a backend call. ext_id:
-- the external correlation id pushed to CUPTI (external_corr.ext_id, kind 4), NULL when none
-- was pushed. shape: a key of the operation's shapes (same key, same shapes), NULL unknown.
CREATE TABLE cudnn_calls (
    start INTEGER, dur INTEGER, tid INTEGER, phase INTEGER, fn_id INTEGER, status INTEGER,
    handle INTEGER, stream INTEGER, op_kind INTEGER, dtype INTEGER, plan INTEGER, ext_id INTEGER,
    shape INTEGER
);
-- One row per execution plan, classified once. detail_id: its nodes ('conv_fwd+pointwise,
-- 3 nodes'). first_ns: when it was classified. source: 1 from the descriptors the program built
-- it from, 2 read back from the plan, 0 not classified.
CREATE TABLE cudnn_plans (
    plan INTEGER, op_kind INTEGER, dtype INTEGER, detail_id INTEGER, first_ns INTEGER,
    shape INTEGER, source INTEGER
);

-- Events a thread could not record (its buffer full past INFPROF_BUFFER_WAIT_MS), by the phase
-- the thread was in, with the first and last such moment: the report names the phases and
-- iterations they touch. Phase changes, iterations and NVTX ranges are never among them.
CREATE TABLE event_drops (
    tid INTEGER, phase INTEGER, count INTEGER, first INTEGER, last INTEGER,
    PRIMARY KEY (tid, phase)
) WITHOUT ROWID;

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
-- Per CUDA API function (all phases): host time, and for launches the launch latency (API call
-- start to the start of the work it launched).
CREATE TABLE api_summary (
    name_id INTEGER, count INTEGER, total INTEGER, min INTEGER, max INTEGER, med INTEGER,
    stddev REAL, med_exact INTEGER, errors INTEGER, launches INTEGER, latency_total INTEGER,
    latency_min INTEGER, latency_max INTEGER, latency_med INTEGER
);

-- Schema 4, operators (INFPROF_OPERATORS=1, collectors/torch_ops.c): one row per PyTorch
-- operator call (RecordFunction scope FUNCTION). self: dur less the calls it made on its thread
-- (torch.profiler's self CPU time). phase: of the thread at its end; iter: the thread's outermost
-- open iteration then (0 none); depth: operators open around it (0 outermost).
CREATE TABLE torch_operators (
    start INTEGER, dur INTEGER, self INTEGER, tid INTEGER, phase INTEGER, iter INTEGER,
    depth INTEGER, name_id INTEGER
);

-- Schema 4, energy (collectors/nvml*.c, INFPROF_ENERGY_MS): readings of each GPU (gpu: NVML
-- index) and of the CPU (gpu -1: RAPL packages summed, cpufreq's mean clock in sm_clock), taken
-- by our sampler thread every INFPROF_ENERGY_MS, at every phase change and at start and end.
-- kind: 0 start, 1 periodic, 2 phase change, 3 end. t: ns since t0. energy_mj: the device's
-- cumulative counter (NVML: since the driver loaded). power_mw; sm_clock, mem_clock: MHz; temp:
-- degrees C; reasons: NVML's clock-event (throttle) reasons mask. NULL: not available.
CREATE TABLE energy_samples (
    gpu INTEGER, t INTEGER, kind INTEGER, energy_mj INTEGER, power_mw INTEGER,
    sm_clock INTEGER, mem_clock INTEGER, temp INTEGER, reasons INTEGER
);
-- Each GPU NVML showed: the CUDA device ordinal the process used it as (-1: not used), whether
-- it is in MIG mode, and why a figure is missing (status, empty when all is read).
CREATE TABLE energy_gpus (
    gpu INTEGER PRIMARY KEY, cuda_device INTEGER, name TEXT, uuid TEXT, mig INTEGER, status TEXT
);
-- Schema 4, operators carried by GPU work and memory (INFPROF_OPERATORS=1): op is the strings id
-- of the thread's innermost PyTorch operator when the kernel, copy or memset was issued, the cuDNN
-- call made or the allocator reported, NULL none (or operators not recorded). Added at the end.
ALTER TABLE kernel_rows ADD COLUMN op INTEGER;
ALTER TABLE memcpy ADD COLUMN op INTEGER;
ALTER TABLE memset ADD COLUMN op INTEGER;
ALTER TABLE cudnn_calls ADD COLUMN op INTEGER;
ALTER TABLE tensor_memory ADD COLUMN op INTEGER;

-- Schema 4, settings (collectors/torch_settings.c): each change of a libtorch setting the program
-- made (at::Context's setters: torch.backends.cudnn.benchmark, cudnn.allow_tf32, the float32
-- matmul precision / cuda.matmul.allow_tf32), when (t, ns since t0) and by which thread. name_id,
-- value_id: strings ('cudnn.benchmark', 'on'; 'matmul.precision', 'high'). A setting never set
-- has no row (the library's default). The report's series are told apart by them.
CREATE TABLE settings (t INTEGER, tid INTEGER, name_id INTEGER, value_id INTEGER);

-- Schema 5, input_waits (collectors/torch_iterations.c): each wait of a Python loop for its data,
-- the scope a torch.utils.data.DataLoader opens around __next__ (the batch made here, or taken
-- from its worker processes): thread, phase, start (ns since t0), dur. The report splits the time
-- between iterations into data loading and other host time with it.
CREATE TABLE input_waits (tid INTEGER, phase INTEGER, start INTEGER, dur INTEGER);

PRAGMA user_version = 5;
