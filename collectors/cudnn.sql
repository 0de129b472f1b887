-- collectors/cudnn.sql: the cuDNN collector's tables (calls seen by interposition, execution
-- plans), created after schema/schema.sql (conventions there); embedded at build time.

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

-- Schema 4, operators (INFPROF_OPERATORS=1): op is the strings id of the thread's innermost
-- PyTorch operator when the call was made; NULL none. Added at the end.
ALTER TABLE cudnn_calls ADD COLUMN op INTEGER;

-- The calls folded per kind by the writer (collectors/cudnn_fold.c), for a report that does not
-- read every call: a kind is the function, operation, phase, plan, data type and shape, coded as
-- in cudnn_calls. calls, errors, host (ns): its calls since its row before; first_start: the
-- earliest one's start, first_seq its place among the calls as stored in cudnn_calls (0, 1, ...:
-- a tie in start goes by it); linked: those that pushed an ext_id; gpu, kernels: the kernels such
-- calls launched (their GPU time, ns); durs: each call's host time, int64 in the machine's byte
-- order, at most 4096 a row (fewer where the writer let go of the times it held: 262,144 over all
-- kinds). Algorithm searches, v7 heuristic queries and cudnnBackendFinalize get a row each (tid
-- set, calls 1); their kernels go to a row of their kind with calls 0. Written as the run goes
-- and at the end; meta cudnn_call_sums counts the rows and cudnn_fold_lost what could not be
-- folded or joined (then the report reads cudnn_calls).
CREATE TABLE cudnn_call_sums (
    fn_id INTEGER, op_kind INTEGER, phase INTEGER, plan INTEGER, dtype INTEGER, shape INTEGER,
    calls INTEGER, errors INTEGER, host INTEGER, first_start INTEGER, first_seq INTEGER,
    tid INTEGER, linked INTEGER, gpu INTEGER, kernels INTEGER, durs BLOB
);
