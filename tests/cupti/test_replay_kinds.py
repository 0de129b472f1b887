"""CUPTI records of every kind the collector reads, through the real buffer-completion path
(tests/progs/cupti_fixture.c): the database and the report hold exactly what was fed in:
counts, bytes, durations, attribution to thread and phase, graph nodes, launch latency."""
from harness import Case, main, prog

GRAD, INFER_BF16, NO_GRAD = 1, 9, 4
HTOD, DTOH, DTOD, PTOP = 1, 2, 8, 10
PAGEABLE, PINNED, DEVICE = 1, 2, 3


class Kinds(Case):
    def setUp(self):
        super().setUp()
        r = self.run_prog([prog("cupti_fixture"), "kinds", "kinds.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        self.db = r.db("kinds.db")

    def q(self, sql, *args):
        return self.query(self.db, sql, *args)

    def kernels_by_name(self):
        return self.q("SELECT s.value, k.corr, k.phase, k.start, k.dur, g.graph_id, g.graph_node,"
                      " g.grid_x, g.block_x, g.registers, g.static_smem, g.dynamic_smem, g.stream"
                      " FROM kernels k JOIN launch_sigs g ON g.id = k.sig JOIN strings s"
                      " ON s.id = g.name_id ORDER BY k.start")

    def test_kernels(self):
        rows = self.kernels_by_name()
        self.assertEqual([(r[0], r[1], r[2], r[3], r[4]) for r in rows], [
            ("k_main", 110, GRAD, 255000, 10000),
            ("k_main", 111, GRAD, 273000, 20000),
            ("g_k1", 120, GRAD, 405000, 3000),
            ("g_k2", 120, GRAD, 408500, 1500),
            ("g_k1", 121, GRAD, 423000, 3000),
            ("g_k2", 121, GRAD, 426500, 2000),
            ("drv_kernel", 201, INFER_BF16, 510000, 5000),
        ])
        self.assertEqual(rows[0][7:], (108, 128, 32, 1024, 4096, 7))
        # Graph kernels carry their graph and node; others none.
        self.assertEqual({(r[0], r[5], r[6]) for r in rows},
                         {("k_main", 0, 0), ("g_k1", 9, 1001), ("g_k2", 9, 1002),
                          ("drv_kernel", 0, 0)})
        # One signature per distinct launch: k_main, g_k1, g_k2, drv_kernel.
        self.assertEqual(self.q("SELECT count(*) FROM launch_sigs")[0][0], 4)
        # The untimed kernel is counted, not stored.
        self.assertEqual(self.meta(self.db, "cupti_invalid_records"), 1)

    def test_copies_and_memsets(self):
        self.assertEqual(self.q("SELECT corr, bytes, dur, copy_kind, src_kind, dst_kind, flags,"
                                " phase, device, peer_device FROM memcpy ORDER BY start"), [
            (103, 1048576, 100000, HTOD, PAGEABLE, DEVICE, 0, GRAD, 0, None),
            (104, 1048576, 50000, HTOD, PINNED, DEVICE, 1, GRAD, 0, None),
            (105, 524288, 30000, DTOH, DEVICE, PINNED, 1, GRAD, 0, None),
            (106, 4096, 2000, DTOD, DEVICE, DEVICE, 0, GRAD, 0, None),
            (107, 4096, 4000, DTOD, DEVICE, DEVICE, 0, GRAD, 0, None),
            (108, 8192, 6000, PTOP, DEVICE, DEVICE, 0, GRAD, 0, 1),
            # found through its runtime correlation id: the second thread's phase
            (140, 2048, 700, DTOH, DEVICE, PAGEABLE, 0, INFER_BF16, 0, None),
        ])
        self.assertEqual(self.q("SELECT corr, bytes, dur, phase, graph_node FROM memset"
                                " ORDER BY start"), [
            (109, 65536, 1500, GRAD, None),
            (120, 1024, 200, GRAD, 1003),
            (121, 1024, 200, GRAD, 1003),
            (999, 256, 100, 0, None),  # issued by nobody we saw: stored, phase unknown
        ])
        self.assertEqual(self.meta(self.db, "cupti_unattributed_records"), 1)

    def test_memory_segments_and_pools(self):
        self.assertEqual(self.q("SELECT ts, op, memory_kind, address, bytes, stream, corr, phase,"
                                " is_async, pool_address, pool_type FROM memory_segments"
                                " ORDER BY ts"), [
            (2000, 1, DEVICE, 0x100000, 1048576, None, 101, GRAD, 0, None, 0),
            (4000, 1, DEVICE, 0x200000, 2097152, 7, 102, GRAD, 1, 0xA000000, 1),
            (600500, 2, DEVICE, 0x100000, 1048576, None, 150, GRAD, 0, None, 0),
            (602200, 2, DEVICE, 0x200000, 2097152, 7, 151, GRAD, 1, 0xA000000, 1),
        ])
        self.assertEqual(self.q("SELECT ts, op, pool_type, address, size, utilized, corr"
                                " FROM memory_pools"),
                         [(3900, 1, 1, 0xA000000, 33554432, 2097152, 102)])

    def test_sync_external_graphs_devices(self):
        self.assertEqual(self.q("SELECT start, dur, type, context, stream, corr, phase FROM sync"
                                " ORDER BY start"),
                         [(300500, 49000, 3, 1, 7, 112, GRAD),
                          (355500, 4000, 4, 1, None, 113, GRAD)])
        self.assertEqual(self.q("SELECT corr, kind, ext_id FROM external_corr"), [(110, 4, 42)])
        # Graph launches span their nodes: first start to last end.
        self.assertEqual(self.q("SELECT start, dur, device, stream, graph_id, corr, phase"
                                " FROM graph_launches ORDER BY start"),
                         [(405000, 5400, 0, 7, 9, 120, GRAD), (423000, 5800, 0, 7, 9, 121, GRAD)])
        self.assertEqual(self.q("SELECT id, name, sm_count, global_memory_bytes, cc_major,"
                                " cc_minor, clock_khz, memory_clock_khz, uuid FROM devices"),
                         [(0, "Fixture GPU", 132, 85899345920, 9, 0, 1980000, None,
                           "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f")])

    def test_api_calls_and_attribution(self):
        rows = self.q("SELECT a.corr, s.value, a.start, a.dur, a.domain, a.phase, a.tid"
                      " FROM cuda_api a JOIN strings s ON s.id = a.name_id ORDER BY a.corr")
        by_corr = {r[0]: r for r in rows}
        self.assertEqual(len(rows), 19)
        # cudaMemcpy and the driver call inside it share id 103: one row, the runtime call's.
        self.assertEqual(by_corr[103][1:6], ("cudaMemcpy", 5000, 105000, 1, GRAD))
        self.assertEqual(self.meta(self.db, "cupti_api_same_corr"), 1)
        self.assertEqual(by_corr[201][1:6], ("cuLaunchKernel", 500000, 3000, 2, INFER_BF16))
        # Two threads; each call belongs to the thread that made it.
        main_tid = by_corr[110][6]
        self.assertEqual({r[6] for r in rows if r[0] in (140, 201)} & {main_tid}, set())
        self.assertEqual(len({r[6] for r in rows}), 2)
        self.assertEqual(self.q("SELECT count(*) FROM kernels k JOIN cuda_api a ON a.corr = k.corr"
                                " WHERE a.tid = ?", main_tid)[0][0], 6)

    def test_api_summary_and_latency(self):
        api = {r[0]: r[1:] for r in self.q(
            "SELECT s.value, a.count, a.total, a.errors, a.launches, a.latency_min,"
            " a.latency_max, a.latency_med FROM api_summary a JOIN strings s ON s.id = a.name_id")}
        self.assertEqual(api["cudaLaunchKernel"], (2, 4000, 0, 2, 3000, 5000, 4000))
        self.assertEqual(api["cudaGraphLaunch"], (2, 2000, 0, 2, 3000, 5000, 4000))
        self.assertEqual(api["cuLaunchKernel"], (1, 3000, 0, 1, 10000, 10000, 10000))
        self.assertEqual(api["cudaMemcpy"], (1, 105000, 0, 1, 1000, 1000, 1000))
        self.assertEqual(api["cuMemcpyHtoD"], (1, 99500, 0, 0, None, None, None))
        self.assertEqual(api["cudaMemcpyAsync"], (5, 5000, 0, 5, 1500, 2000, 2000))
        self.assertEqual(api["cudaMalloc"], (1, 2000, 0, 0, None, None, None))
        self.assertEqual(len(api), 14)

    def test_report_json(self):
        r = self.report_json(self.db)
        ops = [(o["operation"], o["host_memory"], o["count"], o["total_ns"], o["med_ns"])
               for o in r["memory_ops_time"]]
        self.assertEqual(ops, [
            ("[CUDA memcpy Host-to-Device]", "pageable", 1, 100000, 100000),
            ("[CUDA memcpy Host-to-Device]", "pinned", 1, 50000, 50000),
            ("[CUDA memcpy Device-to-Host]", "pinned", 1, 30000, 30000),
            ("[CUDA memcpy Device-to-Device]", None, 2, 6000, 3000),
            ("[CUDA memcpy Peer-to-Peer]", None, 1, 6000, 6000),
            ("[CUDA memset]", None, 4, 2000, 200),
            ("[CUDA memcpy Device-to-Host]", "pageable", 1, 700, 700),
        ])
        self.assertAlmostEqual(r["memory_ops_time"][0]["time_pct"], 100000 / 194700 * 100, 3)
        size = {(o["operation"], o["host_memory"]): o for o in r["memory_ops_size"]}
        m = size[("[CUDA memset]", None)]
        self.assertEqual((m["total_bytes"], m["count"], m["min_bytes"], m["max_bytes"],
                          m["med_bytes"]), (67840, 4, 256, 65536, 1024))
        self.assertEqual(r["memory_segments"], [{
            "device": 0, "memory_kind": "device", "allocations": 2, "async_allocations": 1,
            "allocated_bytes": 3145728, "releases": 2, "released_bytes": 3145728,
            "peak_bytes": 3145728}])
        api = {a["name"]: a for a in r["cuda_api"]}
        a = api["cudaLaunchKernel"]
        self.assertEqual((a["calls"], a["total_ns"], a["launches"], a["latency_med_ns"],
                          a["latency_min_ns"], a["latency_max_ns"], a["latency_avg_ns"]),
                         (2, 4000, 2, 4000, 3000, 5000, 4000))
        self.assertIsNone(api["cudaMalloc"]["latency_med_ns"])  # issued no timed work
        c = r["cuda_activity"]
        self.assertEqual((c["records"], c["dropped_records"], c["invalid_records"],
                          c["unattributed_records"], c["api_same_corr"], c["buffer_errors"]),
                         (48, 0, 1, 1, 1, 0))
        self.assertEqual(r["run"]["gpus"], "0: Fixture GPU (sm_90, 132 SMs, 80.00GiB)")

    def test_report_text_csv_md(self):
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0, r.err)
        text = r.out.decode()
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)
        self.assertRegex(text, r"51\.4\s+100\.00us\s+1\s+100\.00us.*memcpy HtoD pageable")
        self.assertRegex(text, r"1\.0\s+2\.00us\s+4\s+500ns\s+200ns\s+100ns\s+1\.50us.*memset")
        self.assertRegex(text, r"4\.00us\s+2\s+2\.00us\s+2\.00us\s+2\.00us\s+4\.00us\s+5\.00us\s+"
                               r"cudaLaunchKernel")
        self.assertRegex(text, r"cuda:0\s+device\s+2\s+1\s+3\.00MiB\s+2\s+3\.00MiB\s+3\.00MiB")
        self.assertIn("1 records without valid times", text)
        csv = self.cli("report", "--format", "csv", self.db).out.decode()
        self.assertIn("# memory_ops_time\ntime_pct,total_ns,count,avg_ns,med_ns,min_ns,max_ns,"
                      "stddev_ns,operation,host_memory\n", csv)
        self.assertIn(',"[CUDA memcpy Device-to-Device]",\n', csv)
        md = self.cli("report", "--format", "md", self.db).out.decode()
        self.assertIn("## CUDA API calls", md)
        self.assertIn("| memcpy DtoH pinned |", md)


class Late(Case):
    """API records a writer cycle after the work they issued: the issue callback's event
    already tied the work to its thread's phase and gave the call's start."""

    def test_attribution_does_not_wait_for_api_records(self):
        r = self.run_prog([prog("cupti_fixture"), "late", "late.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("late.db")
        self.assertEqual(self.meta(db, "cupti_buffers_completed"), 2)
        self.assertEqual(self.query(db, "SELECT corr, phase, start, dur FROM kernels"
                                        " ORDER BY corr"),
                         [(301, NO_GRAD, 6000, 1000), (303, 0, 12000, 1000)])
        self.assertEqual(self.query(db, "SELECT corr, phase FROM memcpy"), [(302, NO_GRAD)])
        # The orphan kernel's call was never seen issuing: counted.
        self.assertEqual(self.meta(db, "cupti_unattributed_records"), 1)
        lat = self.query(db, "SELECT s.value, a.count, a.launches, a.latency_min FROM api_summary"
                             " a JOIN strings s ON s.id = a.name_id ORDER BY s.value")
        self.assertEqual(lat, [("cudaLaunchKernel", 2, 1, 5000), ("cudaMemcpyAsync", 1, 1, 1000)])
        self.assertEqual(self.query(db, "SELECT corr, phase FROM cuda_api WHERE corr < 303"),
                         [(301, NO_GRAD), (302, NO_GRAD)])


class Records(Case):
    """INFPROF_ATTRIBUTION=records: no callback on the launching thread; the API records of the
    issuing calls, matched to each thread's history by time, attribute the kernels, even though
    they arrive a writer cycle after them."""

    def fixture(self, **env):
        # A kernel waits for its call at most four CUPTI flush periods: made long, so that a
        # loaded machine cannot turn waiting into expiry.
        r = self.run_prog([prog("cupti_fixture"), "records", "records.db"], preload=False,
                          INFPROF_ATTRIBUTION="records", INFPROF_CUPTI_FLUSH_MS="60000", **env)
        self.assertEqual(r.rc, 0, r.err)
        return r.db("records.db")

    def test_kernels_find_phase_iteration_and_cudnn_call_by_time(self):
        db = self.fixture()
        iters = self.query(db, "SELECT id, phase, source, batch FROM iterations")
        self.assertEqual(len(iters), 1)
        it = iters[0][0]
        self.assertEqual(iters[0][1:], (NO_GRAD, 2, 4))
        INFER = 7
        self.assertEqual(self.query(db, "SELECT corr, phase, iter FROM kernels ORDER BY corr"), [
            (401, NO_GRAD, None), (402, NO_GRAD, it), (403, NO_GRAD, it), (404, NO_GRAD, it),
            (405, INFER, None), (406, GRAD, None),
            (407, 0, None),  # its call never came: unattributed, never another phase
        ])
        # The kernel launched inside the cuDNN call is tied to it, as its external correlation.
        self.assertEqual(self.query(db, "SELECT corr, kind, ext_id FROM external_corr"),
                         [(404, 4, 77)])  # kind 4: CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1
        # Every kernel waited for its call; the orphan waited until the end.
        self.assertEqual(self.meta(db, "cupti_records_waited"), 7)
        self.assertEqual(self.meta(db, "cupti_records_wait_expired"), 1)
        self.assertEqual(self.meta(db, "cupti_unattributed_records"), 1)
        self.assertEqual(self.meta(db, "cupti_history_gone"), 0)
        # The API records only attribute: no API table, as with the callbacks.
        self.assertEqual(self.query(db, "SELECT count(*) FROM cuda_api")[0][0], 0)
        # Iteration GPU completion comes from the same attribution.
        self.assertEqual(self.query(db, "SELECT gpu_items FROM iterations"), [(3,)])
        # So does each kernel's launching NVTX range.
        self.assertEqual(self.query(db, "SELECT k.corr, s.value FROM kernels k LEFT JOIN"
                                        " nvtx_ranges r ON r.id = k.nvtx LEFT JOIN strings s"
                                        " ON s.id = r.text_id ORDER BY k.corr"),
                         [(401, None), (402, "iteration batch=4"), (403, "encoder"),
                          (404, "encoder"), (405, None), (406, None), (407, None)])

    def test_with_api_records_the_calls_carry_their_nvtx_range(self):
        db = self.fixture(INFPROF_CUDA_API="1")
        rows = self.query(db, "SELECT a.corr, a.phase, s.value FROM cuda_api a LEFT JOIN"
                              " nvtx_ranges r ON r.id = a.nvtx LEFT JOIN strings s ON s.id = r.text_id"
                              " ORDER BY a.corr")
        self.assertEqual(rows, [(401, NO_GRAD, None), (402, NO_GRAD, "iteration batch=4"),
                                (403, NO_GRAD, "encoder"), (404, NO_GRAD, "encoder"),
                                (405, 7, None), (406, GRAD, None)])


class Errors(Case):
    def test_unreadable_record_refused_buffer_dropped_records(self):
        r = self.run_prog([prog("cupti_fixture"), "errors", "errors.db"], preload=False,
                          INFPROF_CUPTI_BUFFERS=2)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("errors.db")
        names = self.query(db, "SELECT s.value FROM kernels k JOIN launch_sigs g ON g.id = k.sig"
                               " JOIN strings s ON s.id = g.name_id ORDER BY k.start")
        # e3 came after the record CUPTI could not read: lost with the rest of that buffer.
        self.assertEqual(names, [("e1",), ("e2",), ("e4",)])
        keys = ("cupti_buffer_errors", "cupti_buffers_refused", "cupti_dropped_records",
                "cupti_records")
        self.assertEqual(tuple(self.meta(db, k) for k in keys), (1, 1, 5, 3))
        rep = self.report_json(db)
        warnings = rep["run"]["warnings"]
        self.assertIn("5 CUPTI records dropped", warnings)
        self.assertIn("1 CUPTI buffer requests refused", warnings)
        self.assertIn("1 CUPTI buffers could not be read to the end",
                      rep["cuda_activity"]["warnings"])
        text = self.cli("report", db).out.decode()
        self.assertIn("5 CUPTI records dropped", text)
        self.assertIn("1 CUPTI buffers could not be read to the end", text)


if __name__ == "__main__":
    main()
