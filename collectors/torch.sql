-- collectors/torch.sql: the libtorch collector's tables (tensor memory, operators, settings, the
-- DataLoader's waits), created after schema/schema.sql (conventions there); embedded at build
-- time.

-- Tensor memory from the PyTorch allocators' own reports (c10::reportMemoryUsageToProfiler):
-- bytes > 0 allocation, < 0 free; allocated/reserved are the allocator's totals after the event.
-- device_type follows c10::DeviceType (0 CPU, 1 CUDA).
CREATE TABLE tensor_memory (
    ts INTEGER, tid INTEGER, phase INTEGER, device_type INTEGER, device_index INTEGER,
    ptr INTEGER, bytes INTEGER, allocated INTEGER, reserved INTEGER
);

-- Schema 4, operators (INFPROF_OPERATORS=1, collectors/torch_ops.c): one row per PyTorch
-- operator call (RecordFunction scope FUNCTION). self: dur less the calls it made on its thread
-- (torch.profiler's self CPU time). phase: of the thread at its end; iter: the thread's outermost
-- open iteration then (0 none); depth: operators open around it (0 outermost).
CREATE TABLE torch_operators (
    start INTEGER, dur INTEGER, self INTEGER, tid INTEGER, phase INTEGER, iter INTEGER,
    depth INTEGER, name_id INTEGER
);

-- Operators sampled by iteration (INFPROF_OPERATORS=sampled, the default; meta
-- torch_operators_mode 'sampled' or 'all', torch_operators_every N): one row per outermost
-- iteration whose operators were all recorded, from start for dur (ns); iter: its id; tid: its
-- thread; phase: the thread's at its end. Without the table or the meta: every call ('all').
-- every (from 2026-11-29, session 15): the mean gap it was chosen at, one in `every` of its phase's
-- iterations then (1: the phase's second, always taken); with the budget, captures come in strata
-- of 256, each at twice the gap of the one before, and the report weighs each run of captures at
-- one gap by the iterations it stands for (report/run/operators_strata.c). 0 (with
-- INFPROF_OPERATORS_STRATUM=0) or NULL (an older database): every capture alike.
CREATE TABLE torch_operator_windows (
    start INTEGER, dur INTEGER, iter INTEGER, tid INTEGER, phase INTEGER, every INTEGER
);

-- Schema 4, operators (INFPROF_OPERATORS=1): op is the strings id of the thread's innermost
-- PyTorch operator when the allocator reported; NULL none. Added at the end.
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

-- Schema 5, gc_pauses (collectors/torch_python.c, from 2026-11-26): each pause of Python's garbage
-- collector of 20 us or longer on a thread (gc.callbacks, from our hooks: INFPROF_PYTHON=1):
-- thread, phase, start (ns since t0), dur, generation. Shorter ones are counted in the run
-- metadata (python_gc_short_pauses, python_gc_short_ns). The report names collections that
-- make iterations slow with them.
CREATE TABLE gc_pauses (tid INTEGER, phase INTEGER, start INTEGER, dur INTEGER, generation INTEGER);

-- Written while the calls are (collectors/torch_opsum.c, from 2026-11-29, within schema 5: a
-- database without meta 'torch_operator_sums' is read from torch_operators): the operator calls
-- per (phase at the call's end, name_id and outermost iteration, as torch_operators has
-- them): calls, self and dur summed (ns). A key may have several rows (the
-- writer's fixed table is written out when half full): a reader sums them. meta
-- 'torch_operator_sums': the calls they hold, written at finish.
CREATE TABLE torch_operator_sums (
    phase INTEGER, name_id INTEGER, iter INTEGER, calls INTEGER, self INTEGER, dur INTEGER
);

-- Allocator reports folded (collectors/torch_memfold.c, INFPROF_MEMORY_FOLD=1, the default, from
-- 2026-11-29 within schema 5: a database without the table has one row per report). Inside each
-- outermost iteration that is a forward call (a Python module call, a TorchScript or AOTInductor
-- call) whose operators were not captured, one thread's reports on one device in one phase are
-- folded: tensor_memory keeps its levels (rows with fold = the reports folded, ptr and bytes 0:
-- the lowest total, the highest, the lowest after the highest, the highest reserved and the
-- last, each at its own report's time), and one row here its allocations: iter, start and end
-- (its first and last reports, ns since t0), reports, allocs (of them bytes > 0), alloc_bytes,
-- largest1-3 (its three largest allocations, 0 none). A count of allocations is the rows of
-- tensor_memory with bytes > 0 plus allocs here.
ALTER TABLE tensor_memory ADD COLUMN fold INTEGER;
CREATE TABLE tensor_memory_folds (
    tid INTEGER, phase INTEGER, device_type INTEGER, device_index INTEGER, iter INTEGER,
    start INTEGER, end INTEGER, reports INTEGER, allocs INTEGER, alloc_bytes INTEGER,
    largest1 INTEGER, largest2 INTEGER, largest3 INTEGER
);
