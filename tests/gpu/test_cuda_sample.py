"""On a GPU: the CUDA C sample (samples/cuda/cuda_sample.cu) under the library. The database holds
exactly the sample's kernels, graph nodes, copies, memset and allocations, nothing dropped, and
the recorded durations of the timed kernel agree with what the kernel measured itself.
Skips (77) without a device or without the sample (no nvcc at configure time)."""
import json
import os
import shutil
import tempfile
import unittest

from harness import Case, main, prog, stable
from gpu_common import require_gpu, sample, write_section

SAMPLE = sample("cuda_sample")


class CudaSample(Case):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="infprof-gpu-")
        runner = Case("run")
        runner.dir = cls.tmp
        cls.plain = runner.run_prog([SAMPLE], preload=False, timeout=300)
        # Full mode: every API call recorded too, so each record can be joined to its call.
        cls.traced = runner.run_prog([SAMPLE], timeout=300, INFPROF_MODE="full")
        cls.manifest = json.loads(cls.traced.out) if cls.traced.rc == 0 else None
        cls.db = cls.traced.db()
        cls.default = runner.run_prog([SAMPLE], timeout=300, INFPROF_OUTPUT="default.db")
        cls.default_db = cls.default.db("default.db")
        cls.records = runner.run_prog([SAMPLE], timeout=300, INFPROF_OUTPUT="records.db",
                                      INFPROF_ATTRIBUTION="records")
        cls.records_db = cls.records.db("records.db")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def q(self, sql, *args):
        return self.query(self.db, sql, *args)

    def test_00_program_unaffected(self):
        self.assertEqual(self.plain.rc, 0, self.plain.err)
        self.assertEqual(self.traced.rc, 0, self.traced.err)
        self.assertEqual(stable(self.traced.err), stable(self.plain.err))
        # The same work, told the same way; only the timings differ from run to run.
        timings = ("spin_event_us", "spin_self_ns")
        plain = {k: v for k, v in json.loads(self.plain.out).items() if k not in timings}
        traced = {k: v for k, v in self.manifest.items() if k not in timings}
        self.assertEqual(plain, traced)

    def test_collection_clean(self):
        self.assertTrue(self.meta(self.db, "collector.cupti").startswith("on: "),
                        self.meta(self.db, "collector.cupti"))
        for key in ("cupti_dropped_records", "cupti_buffers_refused", "cupti_buffer_errors",
                    "cupti_invalid_records", "cupti_records_not_stored", "dropped_events"):
            self.assertEqual(self.meta(self.db, key), 0, key)
        # Every kernel and copy is tied to the API call (and thread) that issued it.
        for table in ("kernels", "memcpy", "memset"):
            orphans = self.q(f"SELECT count(*) FROM {table} w LEFT JOIN cuda_api a"
                             " ON a.corr = w.corr WHERE a.corr IS NULL")[0][0]
            self.assertEqual(orphans, 0, table)

    def test_default_mode_keeps_every_record_attributed(self):
        self.assertEqual(self.default.rc, 0, self.default.err)
        q = lambda sql: self.query(self.default_db, sql)[0][0]
        self.assertEqual(q("SELECT count(*) FROM kernels"), sum(self.manifest["kernels"].values()))
        self.assertEqual(q("SELECT count(*) FROM memcpy"),
                         sum(c["count"] for c in self.manifest["copies"]))
        self.assertEqual(q("SELECT count(*) FROM cuda_api"), 0)  # no API records by default
        for key in ("cupti_unattributed_records", "cupti_dropped_records", "dropped_events"):
            self.assertEqual(self.meta(self.default_db, key), 0, key)

    def test_records_mode_attributes_what_the_callbacks_do(self):
        # INFPROF_ATTRIBUTION=records: no launch callback; every kernel and copy still finds its
        # call, the same kernels per stream and phase as the full run, and latency per launch.
        self.assertEqual(self.records.rc, 0, self.records.err)
        self.assertEqual(stable(self.records.err), stable(self.plain.err))
        self.assertEqual(self.meta(self.records_db, "cupti_attribution"), "records")
        for key in ("cupti_unattributed_records", "cupti_records_wait_expired",
                    "cupti_history_gone", "cupti_dropped_records", "dropped_events"):
            self.assertEqual(self.meta(self.records_db, key), 0, key)
        by = "SELECT g.stream, g.phase, count(*) FROM kernels k JOIN launch_sigs g ON g.id = k.sig" \
             " GROUP BY 1, 2 ORDER BY 1, 2"
        self.assertEqual(self.query(self.records_db, by), self.q(by))
        self.assertEqual(self.query(self.records_db, "SELECT count(*) FROM memcpy")[0][0],
                         sum(c["count"] for c in self.manifest["copies"]))
        api = self.report_json(self.records_db)["cuda_api"]
        self.assertEqual(sum(a["launches"] or 0 for a in api
                             if a["name"].startswith("cudaGraphLaunch")),
                         self.manifest["graph_launches"])
        waited = self.meta(self.records_db, "cupti_records_waited")
        write_section("cuda_sample: records mode (INFPROF_ATTRIBUTION=records)",
                      ["| | |", "|---|---:|", f"| records that waited for their call | {waited} |"])

    def test_kernels_exact(self):
        got = dict(self.q("SELECT s.value, count(*) FROM kernels k JOIN launch_sigs g"
                          " ON g.id = k.sig JOIN strings s ON s.id = g.name_id GROUP BY s.value"))
        self.assertEqual(got, self.manifest["kernels"])
        rows = [f"| {k} | {v} | {got.get(k)} |" for k, v in self.manifest["kernels"].items()]
        write_section("cuda_sample: kernels",
                      ["| kernel | launched | recorded |", "|---|---:|---:|"] + rows)

    def test_graph_nodes_and_launches(self):
        g = self.q("SELECT count(*), count(DISTINCT g.graph_node), count(DISTINCT k.corr) FROM"
                   " kernels k JOIN launch_sigs g ON g.id = k.sig WHERE g.graph_id != 0")[0]
        self.assertEqual(g, (self.manifest["graph_kernels"], self.manifest["graph_nodes"],
                             self.manifest["graph_launches"]))
        launches = self.q("SELECT count(*) FROM graph_launches l JOIN cuda_api a ON a.corr ="
                          " l.corr JOIN strings s ON s.id = a.name_id WHERE s.value LIKE"
                          " 'cudaGraphLaunch%'")[0][0]
        self.assertEqual(launches, self.manifest["graph_launches"])

    def test_copies_and_memset_exact(self):
        got = self.q("SELECT copy_kind, CASE copy_kind WHEN 1 THEN src_kind WHEN 2 THEN dst_kind"
                     " END, sum(bytes), count(*) FROM memcpy GROUP BY 1, 2 ORDER BY 1, 2")
        want = {}
        for c in self.manifest["copies"]:
            b, n = want.get((c["kind"], c["host"]), (0, 0))
            want[(c["kind"], c["host"])] = (b + c["bytes"] * c["count"], n + c["count"])
        self.assertEqual(sorted(got, key=lambda r: (r[0], r[1] or 0)),
                         sorted([(*k, *v) for k, v in want.items()],
                                key=lambda r: (r[0], r[1] or 0)))
        m = self.manifest["memsets"][0]
        self.assertEqual(self.q("SELECT sum(bytes), count(*) FROM memset"),
                         [(m["bytes"] * m["count"], m["count"])])
        write_section("cuda_sample: copies", ["| copy kind | host memory | bytes | count |",
                                              "|---:|---:|---:|---:|"]
                      + [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in got])

    def test_allocations(self):
        a = self.q("SELECT count(*), sum(m.bytes) FROM memory_segments m JOIN cuda_api a ON"
                   " a.corr = m.corr JOIN strings s ON s.id = a.name_id WHERE m.op = 1 AND"
                   " s.value = 'cudaMalloc'")[0]
        want = self.manifest["device_allocations"]
        self.assertEqual(a, (want["count"], want["bytes"]))
        self.assertEqual(self.q("SELECT count(*) FROM memory_segments WHERE op = 1 AND"
                                " is_async = 1")[0][0], 1)  # cudaMallocAsync

    def test_durations_agree_with_the_kernel_itself(self):
        """CUPTI's start and end bracket the kernel's whole life on the GPU; the kernel's own
        first and last reads of the global timer lie inside that span, a launch's set-up and
        tear-down (a few microseconds) apart. CUDA events are shown beside them: they also hold
        the gaps between the event records and the kernel, so they are no reference."""
        durs = [r[0] for r in self.q("SELECT k.dur FROM kernels k JOIN launch_sigs g ON g.id ="
                                     " k.sig JOIN strings s ON s.id = g.name_id WHERE s.value ="
                                     " 'k_spin' ORDER BY k.start")]
        selfs = self.manifest["spin_self_ns"]
        events = [us * 1000 for us in self.manifest["spin_event_us"]]
        self.assertEqual(len(durs), len(selfs))
        rows = ["| # | kernel's own timer (ns) | CUPTI (ns) | CUPTI - own (ns) | CUDA events (ns) |",
                "|---:|---:|---:|---:|---:|"]
        for i, (d, k, e) in enumerate(zip(durs, selfs, events)):
            rows.append(f"| {i} | {k} | {d} | {d - k:+d} | {e:.0f} |")
        write_section("cuda_sample: k_spin durations, CUPTI vs the kernel's own timer", rows)
        for d, k in zip(durs, selfs):
            self.assertGreaterEqual(k, self.manifest["spin_ns"])
            # Inside CUPTI's span (the global timer ticks in up to 1 us steps on some GPUs) ...
            self.assertGreaterEqual(d + 1000, k, (d, k))
            # ... and no more than a launch's set-up and tear-down longer.
            self.assertLessEqual(d - k, 5000, (d, k))

    def test_devices_and_versions(self):
        dev = self.q("SELECT name, sm_count, global_memory_bytes, cc_major FROM devices")
        self.assertGreaterEqual(len(dev), 1)
        name, sms, mem, major = dev[0]
        self.assertTrue(name and sms > 0 and mem > 0 and major >= 7, dev)
        for key in ("cuda_driver_version", "cuda_runtime_version", "cupti_api_version"):
            self.assertIsNotNone(self.meta(self.db, key), key)
        write_section("cuda_sample: device", [f"{name}, {sms} SMs, {mem} bytes, cc {major}.x;"
                      f" driver {self.meta(self.db, 'cuda_driver_version')}, runtime"
                      f" {self.meta(self.db, 'cuda_runtime_version')}, CUPTI API"
                      f" {self.meta(self.db, 'cupti_api_version')}"])

    def test_report(self):
        r = self.report_json(self.db)
        api = {a["name"]: a for a in r["cuda_api"]}
        k = self.manifest["kernels"]
        graph = self.manifest["graph_launches"]
        plain_launches = k["k_add"] + k["k_scale"] + k["k_spin"] - 3 * graph
        # <<<>>> goes through cudaLaunchKernel (or a variant of it): count them all.
        launch = [a for n, a in api.items() if n.startswith("cudaLaunchKernel")]
        self.assertEqual(sum(a["launches"] for a in launch), plain_launches)
        self.assertTrue(all(a["latency_med_ns"] is not None for a in launch if a["launches"]))
        graphs = [a for n, a in api.items() if n.startswith("cudaGraphLaunch")]
        self.assertEqual(sum(a["launches"] for a in graphs), graph)
        text = self.cli("report", self.db).out.decode()
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)
        write_section("cuda_sample: infprof report", ["```", text.rstrip(), "```"])


if __name__ == "__main__":
    require_gpu(SAMPLE)
    main()
