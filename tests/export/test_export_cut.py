"""Cutting a trace: --phase keeps what each thread did while in that phase and the GPU work it
launched then; --from/--to keep the events that overlap the window (times in ns or with units).
Every count is checked against the database with the same definition, table by table."""
from export_common import ExportCase, ns
from harness import main

BIG = 2 ** 63 - 1
# (event categories, table, end expression) for the row-per-event sources.
SOURCES = [
    (("kernel",), "kernels", "start + dur"),
    (("gpu_memcpy",), "memcpy", "start + dur"),
    (("gpu_memset",), "memset", "start + dur"),
    (("cuda_runtime", "cuda_driver"), "cuda_api", "start + dur"),
    (("cudnn",), "cudnn_calls", "start + dur"),
    (("phase",), "phase_spans", f"coalesce(end, {BIG})"),
]


class Cuts(ExportCase):
    def setUp(self):
        super().setUp()
        self.db = self.fixture("rich")

    def expected(self, phase=None, lo=None, hi=None):
        want = {}
        for cats, table, end in SOURCES + [(("nvtx",), "nvtx_ranges", f"coalesce(end, {BIG})")]:
            where = ["1"]
            if phase is not None:
                where.append(f"phase = {phase}")
            if hi is not None:
                where.append(f"start < {hi}")
            if lo is not None:
                where.append(f"{end} >= {lo}")
            n = self.query(self.db, f"SELECT count(*) FROM {table} WHERE {' AND '.join(where)}")
            want[cats] = n[0][0]
        return want

    def got(self, doc):
        got = {}
        for cats, _, _ in SOURCES + [(("nvtx",), None, None)]:
            # One event per row: start/end NVTX ranges count by their "b".
            got[cats] = len([e for e in doc["traceEvents"]
                             if e.get("cat") in cats and e["ph"] in "XBib"])
        return got

    def test_phase(self):
        doc, _, _ = self.export(self.db, "--phase", "no_grad | autocast fp16")
        self.assertPerfettoReadable(doc)
        self.assertEqual(self.got(doc), self.expected(phase=5))
        labels = {e["args"]["phase"] for e in doc["traceEvents"] if "phase" in e.get("args", {})}
        self.assertEqual(labels, {"no_grad | autocast fp16"})
        kernels = sorted(e["args"]["correlation"] for e in self.events(doc, "X", "kernel"))
        self.assertEqual(kernels, [4, 5, 6])  # the second thread's launches, on device 1
        (span,) = self.events(doc, "X", "phase")
        self.assertEqual(span["name"], "no_grad | autocast fp16")
        self.assertEqual(doc["otherData"]["cut"]["phase"], "no_grad | autocast fp16")
        tensors = [e["args"] for e in self.events(doc, "C") if e["name"].endswith("tensors")]
        self.assertEqual(tensors, [{"allocated": 2048, "reserved": 2097152}])
        # The phase by its id gives the same trace.
        by_id, _, _ = self.export(self.db, "--phase", "5", out="by_id.json")
        self.assertEqual(by_id["traceEvents"], doc["traceEvents"])

    def test_other_phase(self):
        doc, _, _ = self.export(self.db, "--phase", "grad | autocast off")
        self.assertEqual(self.got(doc), self.expected(phase=1))
        kernels = sorted(e["args"]["correlation"] for e in self.events(doc, "X", "kernel"))
        self.assertEqual(kernels, [1, 2, 3, 7])
        self.assertEqual(len(self.events(doc, "X", "gpu_memcpy")), 1)

    def test_window(self):
        doc, _, _ = self.export(self.db, "--from", "11us", "--to", "0.03ms")
        self.assertPerfettoReadable(doc)
        self.assertEqual(self.got(doc), self.expected(lo=11000, hi=30000))
        kernels = sorted(e["args"]["correlation"] for e in self.events(doc, "X", "kernel"))
        self.assertEqual(kernels, [1, 2, 3])  # 1 ends exactly at 11 us: it overlaps
        for e in self.events(doc, "X"):
            self.assertLess(ns(e["ts"]), 30000)
            self.assertGreaterEqual(ns(e["ts"]) + ns(e["dur"]), 11000)
        self.assertEqual(doc["otherData"]["cut"], {"phase": None, "from_ns": 11000,
                                                   "to_ns": 30000})
        # Units: the same window in plain ns.
        plain, _, _ = self.export(self.db, "--from", "11000", "--to", "30000", out="ns.json")
        self.assertEqual(plain["traceEvents"], doc["traceEvents"])

    def test_window_starts_counters_at_their_value(self):
        doc, _, _ = self.export(self.db, "--from", "10us", "--to", "12000")
        series = {}
        for e in self.events(doc, "C"):
            series.setdefault(e["name"], []).append((ns(e["ts"]), e["args"]))
        # Device memory: 1 MiB allocated at 9 us, before the window: the plot opens at 1 MiB.
        self.assertEqual(series["GPU 0 device memory"],
                         [(10000, {"bytes": 1 << 20}), (11000, {"bytes": 3 << 20})])
        self.assertEqual(series["GPU 0 tensors"],
                         [(10000, {"allocated": 4096, "reserved": 1048576})])

    def test_phase_and_window(self):
        doc, _, _ = self.export(self.db, "--phase", "grad | autocast off", "--to", "15000")
        self.assertEqual(self.got(doc), self.expected(phase=1, hi=15000))
        self.assertEqual(sorted(e["args"]["correlation"] for e in self.events(doc, "X", "kernel")),
                         [1, 2])

    def test_window_after_the_run(self):
        # Left: what never ended (open ranges and spans) and each counter's last value.
        doc, _, _ = self.export(self.db, "--from", "1000s")
        self.assertTrue(self.track_names(doc))
        rest = [e for e in doc["traceEvents"] if e["ph"] != "M"]
        self.assertEqual(sorted(e["name"] for e in rest if e["ph"] == "B"), ["never popped"])
        counters = [e for e in rest if e["ph"] == "C"]
        self.assertEqual(len(rest), 1 + len(counters))
        self.assertEqual({ns(e["ts"]) for e in counters}, {1000 * 10 ** 9})
        self.assertEqual({e["name"] for e in counters},
                         {"GPU 0 tensors", "GPU 1 tensors", "CPU tensors",
                          "GPU 0 device memory"})
        self.assertEqual([e["args"] for e in counters if e["name"] == "GPU 0 device memory"],
                         [{"bytes": 2 << 20}])


if __name__ == "__main__":
    main()
