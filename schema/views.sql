-- Views with the names and columns of the Nsight Systems SQLite export (`nsys export --type
-- sqlite`), so SQL written for nsys reports runs on infprof databases. Embedded at build time,
-- created with the schema in every new database, and added to an older one by `infprof views`
-- (which runs this file again: each view is dropped first); additive: PRAGMA user_version is
-- unchanged.
--
-- Differences from nsys, all documented in docs/export.md:
--   * Times are ns since the run's t0 (nsys: since its session start). Absolute time: add meta
--     'start_unix_ns' (t0 in Unix time).
--   * globalPid = pid << 24 and globalTid = (pid << 24) | tid, as nsys serialises them with
--     hardware and VM id 0: (globalTid >> 24) & 0xFFFFFF is the pid, globalTid & 0xFFFFFF the tid.
--   * mangledName is the name CUPTI reports; demangledName and shortName (the base name, as nsys
--     forms it) come from kernel_names, which `infprof run` and `infprof views` fill after the
--     run (the preloaded library does not demangle); until then both are the mangled name.
--   * Columns we do not record are NULL (contextId of copies and memsets, busLocation, ...).
--   * The ENUM_* tables and META_DATA_EXPORT are views over constant rows.

-- A kernel name (strings id) -> its demangled name and its base name (strings ids).
CREATE TABLE IF NOT EXISTS kernel_names (
    name_id INTEGER PRIMARY KEY, demangled_id INTEGER, short_id INTEGER
);

DROP VIEW IF EXISTS StringIds;
DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL;
DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_RUNTIME;
DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_MEMCPY;
DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_MEMSET;
DROP VIEW IF EXISTS NVTX_EVENTS;
DROP VIEW IF EXISTS TARGET_INFO_GPU;
DROP VIEW IF EXISTS ThreadNames;
DROP VIEW IF EXISTS ENUM_CUDA_MEMCPY_OPER;
DROP VIEW IF EXISTS ENUM_CUDA_MEM_KIND;
DROP VIEW IF EXISTS ENUM_NSYS_EVENT_TYPE;
DROP VIEW IF EXISTS META_DATA_EXPORT;

CREATE VIEW StringIds AS SELECT id, value FROM strings;

CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
SELECT k.start AS start, k.start + k.dur AS "end", s.device AS deviceId, s.context AS contextId,
       NULL AS greenContextId, s.stream AS streamId, k.corr AS correlationId,
       (SELECT value FROM meta WHERE key = 'pid') << 24 AS globalPid,
       coalesce(n.demangled_id, s.name_id) AS demangledName,
       coalesce(n.short_id, s.name_id) AS shortName, s.name_id AS mangledName,
       NULL AS launchType, NULL AS cacheConfig, s.registers AS registersPerThread,
       s.grid_x AS gridX, s.grid_y AS gridY, s.grid_z AS gridZ,
       s.block_x AS blockX, s.block_y AS blockY, s.block_z AS blockZ,
       s.static_smem AS staticSharedMemory, s.dynamic_smem AS dynamicSharedMemory,
       NULL AS localMemoryPerThread, NULL AS localMemoryTotal, NULL AS gridId,
       NULL AS sharedMemoryExecuted, NULLIF(s.graph_node, 0) AS graphNodeId,
       NULLIF(s.graph_id, 0) AS graphId, NULL AS sharedMemoryLimitConfig
FROM kernels k JOIN launch_sigs s ON s.id = k.sig LEFT JOIN kernel_names n ON n.name_id = s.name_id;

-- nsys keeps runtime and driver calls in this one table; eventClass tells them apart
-- (0 runtime, 1 driver).
CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS
SELECT a.start AS start, a.start + a.dur AS "end", a.domain - 1 AS eventClass,
       ((SELECT value FROM meta WHERE key = 'pid') << 24) | a.tid AS globalTid,
       a.corr AS correlationId, a.name_id AS nameId, a.ret AS returnValue, NULL AS callchainId
FROM cuda_api a;

CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS
SELECT m.start AS start, m.start + m.dur AS "end", m.device AS deviceId, NULL AS contextId,
       NULL AS greenContextId, m.stream AS streamId, m.corr AS correlationId,
       (SELECT value FROM meta WHERE key = 'pid') << 24 AS globalPid, m.bytes AS bytes,
       m.copy_kind AS copyKind, NULL AS deprecatedSrcId, m.src_kind AS srcKind,
       m.dst_kind AS dstKind, m.device AS srcDeviceId, NULL AS srcContextId,
       coalesce(m.peer_device, m.device) AS dstDeviceId, NULL AS dstContextId,
       NULL AS migrationCause, m.graph_node AS graphNodeId, NULL AS virtualAddress
FROM memcpy m;

CREATE VIEW CUPTI_ACTIVITY_KIND_MEMSET AS
SELECT m.start AS start, m.start + m.dur AS "end", m.device AS deviceId, NULL AS contextId,
       NULL AS greenContextId, m.stream AS streamId, m.corr AS correlationId,
       (SELECT value FROM meta WHERE key = 'pid') << 24 AS globalPid, m.value AS value,
       m.bytes AS bytes, m.graph_node AS graphNodeId, m.memory_kind AS memKind
FROM memset m;

-- eventType: 59 push/pop range, 60 start/end range, 34 mark, 75 domain creation (text: the
-- domain's name). domainId 0 is the default domain. text and textId are both set.
CREATE VIEW NVTX_EVENTS AS
SELECT r.start AS start, CASE WHEN r.kind = 3 THEN NULL ELSE r.end END AS "end",
       CASE r.kind WHEN 1 THEN 59 WHEN 2 THEN 60 ELSE 34 END AS eventType,
       CASE WHEN r.kind = 2 THEN r.id END AS rangeId, NULLIF(r.category, 0) AS category,
       r.color AS color, s.value AS text,
       ((SELECT value FROM meta WHERE key = 'pid') << 24) | r.tid AS globalTid,
       ((SELECT value FROM meta WHERE key = 'pid') << 24) | r.end_tid AS endGlobalTid,
       r.text_id AS textId, r.domain AS domainId, NULL AS uint64Value, NULL AS int64Value,
       NULL AS doubleValue, NULL AS uint32Value, NULL AS int32Value, NULL AS floatValue,
       NULL AS jsonTextId, NULL AS jsonText, NULL AS binaryData
FROM nvtx_ranges r LEFT JOIN strings s ON s.id = r.text_id
UNION ALL
SELECT 0, NULL, 75, NULL, NULL, NULL, s.value, (SELECT value FROM meta WHERE key = 'pid') << 24,
       NULL, d.name_id, d.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM nvtx_domains d LEFT JOIN strings s ON s.id = d.name_id;

-- clockRate in Hz; memoryBandwidth in bytes/s (memory clock x 2 x bus width: the peak).
CREATE VIEW TARGET_INFO_GPU AS
SELECT 0 AS vmId, d.id AS id, d.name AS name, NULL AS busLocation, NULL AS isDiscrete,
       NULL AS l2CacheSize, d.global_memory_bytes AS totalMemory,
       d.memory_clock_khz * 1000 * 2 * d.memory_bus_width / 8 AS memoryBandwidth,
       d.clock_khz * 1000 AS clockRate, d.sm_count AS smCount, NULL AS pwGpuId, d.uuid AS uuid,
       NULL AS luid, NULL AS chipName, d.id AS cuDevice, NULL AS ctxId,
       d.cc_major AS computeMajor, d.cc_minor AS computeMinor
FROM devices d;

CREATE VIEW ThreadNames AS
SELECT t.name_id AS nameId, 0 AS priority,
       ((SELECT value FROM meta WHERE key = 'pid') << 24) | t.tid AS globalTid
FROM threads t WHERE t.name_id IS NOT NULL;

-- CUPTI's CUpti_ActivityMemcpyKind (cupti_activity.h), as nsys names and labels them.
CREATE VIEW ENUM_CUDA_MEMCPY_OPER(id, name, label) AS VALUES
    (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'), (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'), (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array'),
    (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host'), (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array'),
    (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device'), (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array'),
    (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'), (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host'),
    (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer');

-- CUPTI's CUpti_ActivityMemoryKind (srcKind, dstKind, memKind).
CREATE VIEW ENUM_CUDA_MEM_KIND(id, name, label) AS VALUES
    (0, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown'),
    (1, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
    (2, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
    (3, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
    (4, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array'),
    (5, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed'),
    (6, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static'),
    (7, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static');

-- The NVTX event types NVTX_EVENTS uses (eventType).
CREATE VIEW ENUM_NSYS_EVENT_TYPE(id, name, label) AS VALUES
    (34, 'NvtxMark', 'NVTX mark'), (59, 'NvtxPushPopRange', 'NVTX push/pop range'),
    (60, 'NvtxStartEndRange', 'NVTX start/end range'),
    (75, 'NvtxDomainCreate', 'NVTX domain creation');

CREATE VIEW META_DATA_EXPORT(name, value) AS VALUES
    ('EXPORT_PRODUCER', 'infprof'), ('EXPORT_SCHEMA_NAME', 'infprof views with nsys names'),
    ('EXPORT_SCHEMA_VERSION', '2'),
    ('TIMESTAMP_ORIGIN_UNIX_NS', (SELECT value FROM meta WHERE key = 'start_unix_ns'));
