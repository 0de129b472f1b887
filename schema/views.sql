-- Views with the names and columns of the Nsight Systems SQLite export (`nsys export --type
-- sqlite`), so SQL written for nsys reports runs on infprof databases. Embedded at build time and
-- created with the schema in every new database; additive: PRAGMA user_version is unchanged.
--
-- Differences from nsys, all documented in docs/export.md:
--   * Times are ns since the run's t0 (nsys: since its session start). Absolute time: add meta
--     'start_unix_ns' (t0 in Unix time).
--   * globalPid = pid << 24 and globalTid = (pid << 24) | tid, as nsys serialises them with
--     hardware and VM id 0: (globalTid >> 24) & 0xFFFFFF is the pid, globalTid & 0xFFFFFF the tid.
--   * One kernel name is stored (what CUPTI reports): shortName, demangledName and mangledName
--     are the same string id.
--   * Columns we do not record are NULL (contextId of copies and memsets, busLocation, ...).

CREATE VIEW StringIds AS SELECT id, value FROM strings;

CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
SELECT k.start AS start, k.start + k.dur AS "end", s.device AS deviceId, s.context AS contextId,
       NULL AS greenContextId, s.stream AS streamId, k.corr AS correlationId,
       (SELECT value FROM meta WHERE key = 'pid') << 24 AS globalPid,
       s.name_id AS demangledName, s.name_id AS shortName, s.name_id AS mangledName,
       NULL AS launchType, NULL AS cacheConfig, s.registers AS registersPerThread,
       s.grid_x AS gridX, s.grid_y AS gridY, s.grid_z AS gridZ,
       s.block_x AS blockX, s.block_y AS blockY, s.block_z AS blockZ,
       s.static_smem AS staticSharedMemory, s.dynamic_smem AS dynamicSharedMemory,
       NULL AS localMemoryPerThread, NULL AS localMemoryTotal, NULL AS gridId,
       NULL AS sharedMemoryExecuted, NULLIF(s.graph_node, 0) AS graphNodeId,
       NULLIF(s.graph_id, 0) AS graphId, NULL AS sharedMemoryLimitConfig
FROM kernels k JOIN launch_sigs s ON s.id = k.sig;

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
