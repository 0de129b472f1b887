"""The views with the Nsight Systems export's names: SQL written for nsys reports runs on our
databases and gives the exact numbers fed in. Every new database has them; the schema version
is unchanged."""
import sqlite3

from export_common import ExportCase
from harness import main, prog

NSYS_COLUMNS = {
    "StringIds": ["id", "value"],
    "CUPTI_ACTIVITY_KIND_KERNEL": [
        "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
        "demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
        "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"],
    "CUPTI_ACTIVITY_KIND_RUNTIME": ["start", "end", "eventClass", "globalTid", "correlationId",
                                    "nameId", "returnValue"],
    "CUPTI_ACTIVITY_KIND_MEMCPY": ["start", "end", "deviceId", "streamId", "correlationId",
                                   "globalPid", "bytes", "copyKind", "srcKind", "dstKind"],
    "CUPTI_ACTIVITY_KIND_MEMSET": ["start", "end", "deviceId", "streamId", "correlationId",
                                   "globalPid", "value", "bytes", "memKind"],
    "NVTX_EVENTS": ["start", "end", "eventType", "rangeId", "category", "color", "text",
                    "globalTid", "endGlobalTid", "textId", "domainId"],
    "TARGET_INFO_GPU": ["id", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
                        "clockRate", "memoryBandwidth", "uuid"],
    "ThreadNames": ["nameId", "priority", "globalTid"],
}


class NsysViews(ExportCase):
    def setUp(self):
        super().setUp()
        self.db = self.fixture("rich")
        self.con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        self.con.text_factory = lambda b: b.decode("utf-8", "replace")
        self.pid = self.meta(self.db, "pid")

    def tearDown(self):
        self.con.close()
        super().tearDown()

    def q(self, sql):
        return self.con.execute(sql).fetchall()

    def test_columns_have_nsys_names(self):
        for view, cols in NSYS_COLUMNS.items():
            have = [r[1] for r in self.q(f"PRAGMA table_info({view})")]
            self.assertEqual([c for c in cols if c not in have], [], view)
        self.assertEqual(self.q("PRAGMA user_version"), [(4,)])

    def test_kernel_summary(self):
        rows = self.q("SELECT s.value, count(*), sum(k.end - k.start) FROM"
                      " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
                      " GROUP BY 1 ORDER BY 3 DESC")
        self.assertEqual(rows[:3], [("gemm_fp32", 3, 6000), ("gemm_fp16", 2, 1200),
                                    ("triton_kernel", 1, 300)])
        self.assertEqual(rows[3][1:], (1, 100))
        self.assertEqual(self.q("SELECT DISTINCT gridX, gridY, blockX, registersPerThread,"
                                " staticSharedMemory, dynamicSharedMemory, demangledName ="
                                " shortName FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                         [(80, 2, 256, 64, 1024, 2048, 1)])
        self.assertEqual(self.q("SELECT deviceId, streamId, count(*) FROM"
                                " CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2"),
                         [(0, 7, 4), (1, 13, 3)])

    def test_api_summary_and_launch_latency(self):
        rows = self.q("SELECT s.value, r.eventClass, count(*), sum(r.end - r.start) FROM"
                      " CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
                      " GROUP BY 1, 2 ORDER BY 1")
        self.assertEqual(rows, [("cuLaunchKernel", 1, 1, 1000), ("cudaLaunchKernel", 0, 6, 6000),
                                ("cudaMemcpyAsync", 0, 1, 1000), ("cudaMemsetAsync", 0, 1, 1000)])
        lat = self.q("SELECT DISTINCT k.start - r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN"
                     " CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId")
        self.assertEqual(lat, [(1500,)])

    def test_serialised_ids(self):
        tids = self.q("SELECT DISTINCT (globalTid >> 24) & 0xFFFFFF, globalTid & 0xFFFFFF FROM"
                      " CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY 2")
        want = self.query(self.db, "SELECT DISTINCT ?, tid FROM cuda_api ORDER BY 2", self.pid)
        self.assertEqual(tids, want)
        self.assertEqual(len(tids), 2)
        self.assertEqual(self.q("SELECT DISTINCT (globalPid >> 24) & 0xFFFFFF, globalPid &"
                                " 0xFFFFFF FROM CUPTI_ACTIVITY_KIND_KERNEL"), [(self.pid, 0)])
        names = self.q("SELECT s.value, t.globalTid & 0xFFFFFF FROM ThreadNames t JOIN"
                       " StringIds s ON s.id = t.nameId")
        # Both threads, the second short-lived: its name is taken when it begins recording.
        self.assertEqual(names, [("fixture_export", tid) for _, tid in tids])

    def test_nvtx_events(self):
        pushpop = self.q("SELECT text, end - start, domainId FROM NVTX_EVENTS WHERE eventType = 59"
                         " ORDER BY start")
        self.assertEqual(pushpop, [('step "1" \\ batch=2', 23000, 0), ("never popped", None, 0),
                                   ("infer", 5600, 0)])
        (se,) = self.q("SELECT text, end - start, rangeId IS NOT NULL, domainId,"
                       " endGlobalTid & 0xFFFFFF <> globalTid & 0xFFFFFF FROM NVTX_EVENTS"
                       " WHERE eventType = 60")
        self.assertEqual(se, ("async load", 20000, 1, 1, 1))
        self.assertEqual(self.q("SELECT text, start, end FROM NVTX_EVENTS WHERE eventType = 34"),
                         [("ready", 20000, None)])
        self.assertEqual(self.q("SELECT text, domainId FROM NVTX_EVENTS WHERE eventType = 75"),
                         [("app", 1)])
        # text and textId agree, so both nsys query styles work.
        self.assertEqual(self.q("SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON"
                                " s.id = n.textId WHERE s.value <> n.text"), [(0,)])

    def test_kernels_inside_nvtx_ranges(self):
        # GPU time of the work launched inside each push/pop range (nsys nvtx_gpu_proj_sum style).
        rows = self.q("SELECT n.text, count(k.correlationId), sum(k.end - k.start) FROM"
                      " NVTX_EVENTS n JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid ="
                      " n.globalTid AND r.start >= n.start AND r.end <= n.end JOIN"
                      " CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId"
                      " WHERE n.eventType = 59 GROUP BY n.text ORDER BY n.text")
        self.assertEqual(rows, [("infer", 3, 1300), ('step "1" \\ batch=2', 3, 6000)])

    def test_copies_memsets_devices(self):
        self.assertEqual(self.q("SELECT copyKind, srcKind, dstKind, sum(bytes), sum(end - start),"
                                " srcDeviceId, dstDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                                " GROUP BY copyKind"), [(1, 1, 3, 4096, 800, 0, 0)])
        self.assertEqual(self.q("SELECT bytes, value, memKind, end - start, correlationId FROM"
                                " CUPTI_ACTIVITY_KIND_MEMSET"), [(1024, 0, 3, 200, 31)])
        self.assertEqual(self.q("SELECT id, name, smCount, totalMemory, computeMajor,"
                                " computeMinor, clockRate, memoryBandwidth, uuid FROM"
                                " TARGET_INFO_GPU ORDER BY id")[0],
                         (0, "Fake GPU 0", 132, 85899345920, 9, 0, 1980000000,
                          2619000 * 1000 * 2 * 5120 // 8, "GPU-0000"))

    def test_every_new_database_has_them(self):
        # A database the preloaded library wrote for a real program.
        r = self.run_prog([prog("nvtx_ranges"), "3"], INFPROF_OUTPUT="nv.db")
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("nv.db")
        views = {v for (v,) in self.query(db, "SELECT name FROM sqlite_master WHERE type = 'view'")}
        self.assertEqual(views, set(NSYS_COLUMNS) | {"kernels"})
        self.assertEqual(self.query(db, "PRAGMA user_version"), [(4,)])
        counts = self.query(db, "SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY 1")
        self.assertEqual(counts, [(34, 1), (59, 7), (60, 1), (75, 1)])
        # The example from the issue on the core fixture.
        r = self.run_prog([prog("fixture"), "basic", "basic.db"], preload=False)
        con = sqlite3.connect(r.db("basic.db"))
        con.text_factory = bytes
        rows = con.execute("SELECT s.value, count(*), sum(k.end - k.start) FROM"
                           " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
                           " GROUP BY 1 ORDER BY 1").fetchall()
        con.close()
        self.assertEqual(rows, [(b"evil\x1b[31m_kernel\n", 1, 100), (b"gemm_fp16", 2, 1200),
                                (b"gemm_fp32", 3, 6000)])


if __name__ == "__main__":
    main()
