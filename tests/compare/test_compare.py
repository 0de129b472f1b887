"""infprof compare BASE NEW: two runs of known figures side by side. Kernels matched by name (and
phase), phases by label, memory by phase and device; base, new, delta, % and ratios exact in
JSON and CSV, the same in Markdown and text; rows of one run only added or removed; rows ordered
by the absolute change of GPU time."""
import csv
import io
import os
import re

from compare_common import MIB, Runs, build, edit_copy
from harness import main

GRAD, NO_GRAD, INFER = ("grad | autocast off", "no_grad | autocast fp16",
                        "inference_mode | autocast bf16")
EVIL = "evil\x1b[31m_kernel\n"


class CompareJson(Runs):
    def setUp(self):
        super().setUp()
        self.r = self.json_of("compare", self.base, self.new)

    def test_members(self):
        self.assertEqual(list(self.r), ["json_schema_version", "base", "new", "compare", "summary",
                                        "phases", "series", "memory", "operators", "operator_series",
                                        "energy",
                                        "kernels", "memory_ops_time", "memory_ops_size",
                                        "cuda_api", "nvtx"])
        self.assertEqual(self.r["compare"], {"base_file": self.base, "new_file": self.new,
                                             "warnings": None, "runs_base": 1, "runs_new": 1,
                                             "base_files": self.base, "new_files": self.new})
        self.assertEqual(self.r["base"]["pid"], self.meta(self.base, "pid"))
        self.assertEqual(self.r["new"]["pid"], self.meta(self.new, "pid"))
        self.assertEqual(self.r["base"]["command"], self.r["new"]["command"])

    def test_kernels_by_absolute_change_of_gpu_time(self):
        k = self.r["kernels"]
        self.assertEqual([(x["name"], x["status"], x["total_ns_delta"]) for x in k],
                         [("gemm_fp32", "both", -3000), ("gemm_fp16", "removed", -1200),
                          ("new_kernel", "added", 800), ("old_kernel", "removed", -500),
                          ("gemm_bf16", "added", 400), (EVIL, "added", 50),
                          ("relu", "both", 0)])

    def test_kernel_figures(self):
        k = {x["name"]: x for x in self.r["kernels"]}
        g = k["gemm_fp32"]
        want = {"total_ns": (6000, 3000, -3000, -50.0), "instances": (3, 3, 0, 0.0),
                "avg_ns": (2000, 1000, -1000, -50.0), "med_ns": (2000, 1000, -1000, -50.0),
                "min_ns": (1000, 500, -500, -50.0), "max_ns": (3000, 1500, -1500, -50.0),
                "stddev_ns": (1000, 500, -500, -50.0)}
        for fig, (b, n, d, pct) in want.items():
            self.assertEqual((g[fig + "_base"], g[fig + "_new"], g[fig + "_delta"],
                              g[fig + "_pct"]), (b, n, d, pct), fig)
        # Time % within each run: 6000 of 8100 ns, 3000 of 4650 ns.
        self.assertAlmostEqual(g["time_pct_base"], 100 * 6000 / 8100, places=3)
        self.assertAlmostEqual(g["time_pct_new"], 100 * 3000 / 4650, places=3)
        # One side only: the other side is absent (null); totals and counts change by all of it,
        # figures of a distribution (median, ...) have no delta.
        old = k["old_kernel"]
        self.assertEqual((old["total_ns_base"], old["total_ns_new"], old["total_ns_delta"],
                          old["total_ns_pct"]), (500, None, -500, -100.0))
        self.assertEqual((old["instances_delta"], old["med_ns_base"], old["med_ns_delta"]),
                         (-1, 500, None))
        new = k["new_kernel"]
        self.assertEqual((new["total_ns_base"], new["total_ns_new"], new["total_ns_delta"],
                          new["total_ns_pct"], new["med_ns_new"], new["med_ns_delta"]),
                         (None, 800, 800, None, 800, None))
        relu = k["relu"]
        self.assertEqual((relu["total_ns_delta"], relu["total_ns_pct"], relu["med_ns_base"]),
                         (0, 0.0, 200))

    def test_phases_matched_by_label(self):
        p = {x["label"]: x for x in self.r["phases"]}
        self.assertEqual(list(p), [GRAD, NO_GRAD, INFER])  # the base run's order, then added
        self.assertEqual({l: x["status"] for l, x in p.items()},
                         {GRAD: "both", NO_GRAD: "removed", INFER: "added"})
        g = p[GRAD]
        # Iterations of 1-4 us against 0.5-2 us, back to back 10 us apart: twice the throughput.
        self.assertEqual((g["iterations_base"], g["iterations_new"], g["iterations_delta"]),
                         (4, 4, 0))
        self.assertEqual((g["throughput_per_s_base"], g["throughput_per_s_new"]),
                         (400000, 800000))
        self.assertEqual((g["throughput_per_s_ratio"], g["throughput_per_s_pct"]), (2.0, 100.0))
        self.assertEqual((g["latency_p50_ns_base"], g["latency_p50_ns_new"],
                          g["latency_p50_ns_delta"], g["latency_p50_ns_ratio"]),
                         (2000, 1000, -1000, 0.5))
        self.assertEqual((g["latency_p95_ns_base"], g["latency_p95_ns_new"],
                          g["latency_p95_ns_ratio"]), (4000, 2000, 0.5))
        self.assertEqual((g["kernels_base"], g["kernels_new"], g["kernels_delta"]), (6, 7, 1))
        self.assertEqual((g["gpu_time_ns_base"], g["gpu_time_ns_new"], g["gpu_time_ns_delta"]),
                         (6900, 4250, -2650))
        self.assertAlmostEqual(g["gpu_time_ns_pct"], -2650 / 6900 * 100, places=3)
        self.assertEqual((g["peak_allocated_bytes_base"], g["peak_allocated_bytes_new"],
                          g["peak_allocated_bytes_delta"], g["peak_allocated_bytes_pct"]),
                         (8 * MIB, 6 * MIB, -2 * MIB, -25.0))
        gone = p[NO_GRAD]
        self.assertEqual((gone["iterations_base"], gone["iterations_new"],
                          gone["iterations_delta"], gone["throughput_per_s_ratio"]),
                         (2, None, -2, None))
        self.assertEqual((gone["gpu_time_ns_delta"], gone["gpu_time_ns_pct"]), (-1200, -100.0))
        came = p[INFER]
        self.assertEqual((came["kernels_new"], came["gpu_time_ns_delta"],
                          came["latency_p50_ns_new"], came["peak_allocated_bytes_new"]),
                         (1, 400, 900, 3 * MIB))

    def test_memory_by_phase_and_device(self):
        m = {(x["label"], x["device"]): x for x in self.r["memory"]}
        g = m[(GRAD, "cuda:0")]
        self.assertEqual((g["status"], g["peak_allocated_bytes_delta"],
                          g["peak_reserved_bytes_base"], g["peak_reserved_bytes_new"],
                          g["peak_reserved_bytes_delta"], g["peak_reserved_bytes_pct"]),
                         ("both", -2 * MIB, 8 * MIB, 8 * MIB, 0, 0.0))
        self.assertEqual((g["allocations_base"], g["allocations_new"], g["allocated_bytes_delta"],
                          g["largest_bytes_base"], g["largest_bytes_new"]),
                         (2, 2, -2 * MIB, 4 * MIB, 3 * MIB))
        self.assertEqual(m[(NO_GRAD, "cuda:0")]["status"], "removed")
        self.assertEqual(m[(INFER, "cuda:0")]["status"], "added")

    def test_api_and_nvtx(self):
        api = self.r["cuda_api"]
        self.assertEqual([(a["name"], a["calls_base"], a["calls_new"], a["total_ns_delta"])
                          for a in api], [("cudaLaunchKernel", 8, 8, 0)])
        nv = {x["range"]: x for x in self.r["nvtx"]}
        self.assertEqual((nv["iteration batch=2"]["total_ns_base"],
                          nv["iteration batch=2"]["total_ns_new"],
                          nv["iteration batch=2"]["total_ns_pct"]), (10000, 5000, -50.0))
        self.assertEqual([x["range"] for x in self.r["nvtx"]], ["iteration batch=2", "iteration"])


class CompareVerdicts(Runs):
    """Latency verdicts by the report's own method (a 95% band of the speed-up, bootstrap):
    fixture_compare's `latency` runs, two series at a p50 of the test's choosing (40 iterations
    each, the same +-2% pattern), so each verdict is known."""

    def pair(self, base_us, new_us):
        name = f"{base_us}-{new_us}"
        a = build(self.root, f"a{name}", "latency", FIXTURE_P50_US=base_us)
        b = build(self.root, f"b{name}", "latency", FIXTURE_P50_US=new_us)
        return self.json_of("compare", a, b), self.text_lines("compare", a, b)

    def test_slower(self):
        r, text = self.pair(100, 120)
        rows = {x["series"]: x for x in r["series"]}
        for name, p50 in (("a", 100_000), ("b", 200_000)):
            x = rows[name]
            self.assertEqual(x["verdict"], "slower", x)
            self.assertLess(x["speedup_hi"], 1, x)  # base latency over new: below 1, slower
            self.assertAlmostEqual(x["latency_p50_ns_ratio"], 1.2, places=2)
            self.assertEqual(x["latency_p50_ns_delta"], p50 // 5)
            # Time between iterations, compared too: 10 us after each in both runs.
            self.assertEqual((x["between_p50_ns_base"], x["between_p50_ns_new"]), (10000, 10000))
        # The phase pools both series: its p50 is neither's, so no verdict.
        self.assertEqual([x["verdict"] for x in r["phases"]], ["no verdict: pools series"])
        # Nor a ratio of the two pooled p50s (two runs of one program read "Latency 6.51x").
        ph, = r["phases"]
        for k in ("latency_p50_ns_ratio", "latency_p95_ns_ratio", "throughput_per_s_ratio",
                  "latency_p50_ns_pct"):
            self.assertIsNone(ph[k], k)
        self.assertIsNotNone(ph["latency_p50_ns_base"])  # the figures themselves stay
        changes = r["summary"]["changes"]
        self.assertTrue(changes.startswith("grad/off a slower, latency 1.20x (95%: "), changes)
        self.assertIn("p50 200.00us -> 240.00us (+40.00us)", changes)
        self.assertIsNone(r["summary"]["same"])
        self.assertIn("Summary: the changes the data supports", text.splitlines()[0])

    def test_a_longer_wait_for_input_is_a_slower_loop_not_a_slower_model(self):
        # The same latencies; 100 us after each iteration instead of 10 (a slower data
        # pipeline): the loop rate is slower, with its band, the latency the same.
        a = build(self.root, "gap-a", "latency", FIXTURE_P50_US=100)
        b = build(self.root, "gap-b", "latency", FIXTURE_P50_US=100, FIXTURE_GAP_US=100)
        r = self.json_of("compare", a, b)
        rows = {x["series"]: x for x in r["series"]}
        for name, p50 in (("a", 100), ("b", 200)):
            x = rows[name]
            self.assertEqual(x["verdict"], "the same within 1%", x)
            self.assertEqual(x["delivered_verdict"], "slower", x)
            # Each cycle: p50 + 10 us before, p50 + 100 us after (the last iteration's wait is
            # outside the loop's wall time, so the rate's ratio is a little above).
            self.assertAlmostEqual(x["delivered_per_s_ratio"], (p50 + 10) / (p50 + 100), delta=0.02)
            self.assertLessEqual(x["delivered_speedup_lo"], x["delivered_per_s_ratio"])
            self.assertGreaterEqual(x["delivered_speedup_hi"], x["delivered_per_s_ratio"])
            self.assertLess(x["delivered_speedup_hi"], 1 / 1.01)
        self.assertIn("grad/off a loop rate slower, 0.5", r["summary"]["changes"])
        self.assertIn("latency the same within 1%, between p50 10.00us -> 100.00us",
                      r["summary"]["changes"])
        # Unchanged waits: the loop rates the same too, and nothing on the first screen.
        r, _ = self.pair(100, 100.3)
        self.assertEqual({x["series"]: x["delivered_verdict"] for x in r["series"]},
                         {"a": "the same within 1%", "b": "the same within 1%"})
        self.assertNotIn("loop rate", r["summary"]["changes"])

    def test_a_loop_slower_far_beyond_its_latency_is_named(self):
        # 10% slower a call, and ten times the wait between calls: the latency's change does not
        # say it all, so the loop rate's has a line of its own on the first screen.
        a = build(self.root, "both-a", "latency", FIXTURE_P50_US=100)
        b = build(self.root, "both-b", "latency", FIXTURE_P50_US=110, FIXTURE_GAP_US=200)
        r = self.json_of("compare", a, b)
        x = {s["series"]: s for s in r["series"]}["a"]
        self.assertEqual((x["verdict"], x["delivered_verdict"]), ("slower", "slower"))
        self.assertIn("grad/off a slower, latency 1.10x", r["summary"]["changes"])
        self.assertIn("grad/off a loop rate slower, 0.3", r["summary"]["changes"])
        # A model change alone (the wait the same): the latency's line says it, once.
        r, _ = self.pair(100, 130)
        self.assertNotIn("loop rate", r["summary"]["changes"])

    def test_a_batch_change_gives_no_latency_verdict_and_compares_items(self):
        # Batch 8 at 100 us a call, then batch 16 at 150 us: 1.5x the latency is no regression
        # (each item takes 0.75x the time). No latency verdict, said why; the loop rate, per item,
        # is faster.
        a = build(self.root, "bat-a", "latency", FIXTURE_P50_US=100, INFPROF_BATCH=8)
        b = build(self.root, "bat-b", "latency", FIXTURE_P50_US=150, INFPROF_BATCH=16)
        r = self.json_of("compare", a, b)
        x = {s["series"]: s for s in r["series"]}["a"]
        self.assertEqual((x["batch_base"], x["batch_new"]), (8, 16))
        self.assertEqual(x["verdict"], "no verdict: the batch changed 8 -> 16, items/s compares"
                                       " them")
        self.assertIsNone(x["speedup_lo"])
        self.assertEqual(x["delivered_verdict"], "faster", x)
        # (100 + 10) us per 8 items against (150 + 10) per 16: 1.375x the items a second.
        self.assertAlmostEqual(x["delivered_per_s_ratio"], 110 / 8 / (160 / 16), delta=0.02)
        self.assertIn("grad/off a loop rate faster, 1.3", r["summary"]["changes"])
        self.assertIn("per item, at batch 16 against 8", r["summary"]["changes"])
        # The change is said as a figure, not judged.
        self.assertIn("grad/off a (latency 1.50x, p50 100.00us -> 150.00us (+50.00us); the batch"
                      " changed 8 -> 16", r["summary"]["no_verdict"])

    def test_a_batch_change_of_a_phase_of_one_series_is_no_phase_verdict_either(self):
        # The phase's only series changed batch: the phase (the same iterations) is no more
        # slower than its series is (it read "slower, 1.99x" in the Phases table).
        a = build(self.root, "one-a", "latency", FIXTURE_P50_US=100, INFPROF_BATCH=8,
                  FIXTURE_ONE_SERIES=1)
        b = build(self.root, "one-b", "latency", FIXTURE_P50_US=150, INFPROF_BATCH=16,
                  FIXTURE_ONE_SERIES=1)
        r = self.json_of("compare", a, b)
        row = {x["label"]: x for x in r["phases"]}["grad | autocast off"]
        self.assertEqual(row["verdict"], "no verdict: the batch changed 8 -> 16, items/s"
                                         " compares them")
        self.assertIsNone(row["speedup_lo"])

    def test_faster(self):
        r, _ = self.pair(100, 80)
        self.assertEqual({x["series"]: x["verdict"] for x in r["series"]},
                         {"a": "faster", "b": "faster"})
        self.assertIn("grad/off b faster, latency 0.80x", r["summary"]["changes"])

    def test_the_same(self):
        r, _ = self.pair(100, 100.4)
        self.assertEqual({x["series"]: x["verdict"] for x in r["series"]},
                         {"a": "the same within 1%", "b": "the same within 1%"})
        self.assertTrue(r["summary"]["changes"].startswith("none: "), r["summary"])
        self.assertEqual(r["summary"]["same"], "grad/off a; grad/off b")

    def test_a_series_renamed_by_a_setting_is_matched_and_said_so(self):
        # The new run names its first series "a tf32=on" (a setting changed): the only series of
        # grad/off without a partner by name in each run, so the same configuration.
        a = build(self.root, "ren-a", "latency", FIXTURE_P50_US=100)
        b = build(self.root, "ren-b", "latency", FIXTURE_P50_US=120, FIXTURE_RENAME=1)
        r = self.json_of("compare", a, b)
        rows = {x["series"]: x for x in r["series"]}
        self.assertEqual(sorted(rows), ["a", "b"])
        self.assertEqual((rows["a"]["status"], rows["a"]["new_series"], rows["a"]["verdict"]),
                         ("both", "a tf32=on", "slower"))
        self.assertIsNone(rows["b"]["new_series"])
        text = " ".join(self.text_lines("compare", a, b).split())
        self.assertIn("'a' (base) matched to 'a tf32=on' (new), each the only series of its"
                      " phase without a partner by name", text)

    def test_four_iterations_a_side_halved_is_no_verdict(self):
        # base and new: 4 iterations in grad/off (1-4 us, then 0.5-2 us): the p50 halves, but a
        # 95% band of a median needs six iterations a side, so no verdict (the ratio alone said
        # 0.50x with nothing to weigh it; a bootstrap of four reads false changes 6% of the time).
        r = self.json_of("compare", self.base, self.new)
        row = {x["label"]: x for x in r["phases"]}["grad | autocast off"]
        self.assertEqual(row["verdict"], "no verdict: too few iterations")
        self.assertIsNone(row["speedup_lo"])
        self.assertEqual(r["summary"]["no_verdict"], "grad/off batch=2 (latency 0.50x, p50 2.00us"
                         " -> 1.00us (-1.00us); too few iterations)")
        self.assertTrue(r["summary"]["changes"].startswith("none: "))
        self.assertIn("some unjudged (No verdict)", r["summary"]["changes"])

    def test_a_change_under_1pct_is_the_same(self):
        # 0.8% slower with a band that excludes 1 (the pattern is exact): between two runs that
        # is no change worth the name (two processes of one program differ that much).
        r, _ = self.pair(100, 100.8)
        self.assertEqual({x["series"]: x["verdict"] for x in r["series"]},
                         {"a": "the same within 1%", "b": "the same within 1%"})

    def test_a_series_that_shifted_mid_run_is_no_verdict(self):
        # Series a doubles its latency halfway through the new run: a band over all of it would
        # read a confident "slower"; the series, as its phase, gets no verdict.
        a = build(self.root, "sh-a", "latency", FIXTURE_P50_US=100)
        b = build(self.root, "sh-b", "latency", FIXTURE_P50_US=100, FIXTURE_SHIFT=1)
        r = self.json_of("compare", a, b)
        rows = {x["series"]: x["verdict"] for x in r["series"]}
        self.assertEqual(rows["a"], "no verdict: the new run's iterations shifted level mid-run")
        self.assertEqual(rows["b"], "the same within 1%")

    def test_a_shift_smaller_than_the_change_keeps_the_verdict(self):
        # Series a at 1 ms in the base run, 100 then 200 us in the new: faster at either level,
        # by more than the shift's 2x, so the shift withholds nothing.
        a = build(self.root, "far-a", "latency", FIXTURE_P50_US=1000)
        b = build(self.root, "far-b", "latency", FIXTURE_P50_US=100, FIXTURE_SHIFT=1)
        r = self.json_of("compare", a, b)
        rows = {x["series"]: x for x in r["series"]}
        self.assertEqual(rows["a"]["verdict"], "faster", rows["a"])
        self.assertGreater(rows["a"]["speedup_lo"], 2 * 1.03, rows["a"])
        self.assertEqual(rows["b"]["verdict"], "faster", rows["b"])

    def test_the_series_line_keeps_a_verdict_past_a_shift(self):
        # Within a run the same: a at 100 then 200 us against b's 2 ms is faster at either level
        # (CI: int8 at 800 then 973 us against fp32's 31 ms read "no verdict" beside 37.98x).
        far = build(self.root, "line-far", "latency", FIXTURE_P50_US=100, FIXTURE_SHIFT=1,
                    FIXTURE_B_PCT=2000)
        near = build(self.root, "line-near", "latency", FIXTURE_P50_US=100, FIXTURE_SHIFT=1)
        line = self.json_of("report", far)["summary"]["series"]
        self.assertRegex(line, r"^grad/off: a fastest, p50 [\d.]+us: [\d.]+x b \(2\.00ms\),"
                         r" faster \(95%: [\d.]+-[\d.]+x, one run\), more than a's shift"
                         r" 100\.00us ->"
                         r" 200\.00us mid-run$")
        # b at twice a's first level: the shift could make all of it, so no verdict.
        line = self.json_of("report", near)["summary"]["series"]
        self.assertRegex(line, r", no verdict: a shifted 100\.00us -> 200\.00us mid-run$")


class CompareOptions(Runs):
    def test_by_phase(self):
        r = self.json_of("compare", "--by-phase", self.base, self.new)
        rows = [(x["phase"], x["name"], x["status"], x["total_ns_delta"]) for x in r["kernels"]]
        # Grouped by phase in the base run's order (new phases last), by change within each.
        self.assertEqual(rows, [(GRAD, "gemm_fp32", "both", -3000),
                                (GRAD, "new_kernel", "added", 800),
                                (GRAD, "old_kernel", "removed", -500),
                                (GRAD, EVIL, "added", 50),
                                (GRAD, "relu", "both", 0),
                                (NO_GRAD, "gemm_fp16", "removed", -1200),
                                (INFER, "gemm_bf16", "added", 400)])

    def test_phase(self):
        r = self.json_of("compare", "--phase", "grad/off", self.base, self.new)
        self.assertEqual([x["name"] for x in r["kernels"]],
                         ["gemm_fp32", "new_kernel", "old_kernel", EVIL, "relu"])
        # Time % within the phase: 6000 of 6900 ns.
        self.assertAlmostEqual(r["kernels"][0]["time_pct_base"], 100 * 6000 / 6900, places=3)
        # A phase of one run only: its kernels are all added.
        r = self.json_of("compare", "--phase", "inference_mode | autocast bf16", self.base,
                         self.new)
        self.assertEqual([(x["name"], x["status"]) for x in r["kernels"]],
                         [("gemm_bf16", "added")])

    def test_top(self):
        r = self.json_of("compare", "--top", "2", self.base, self.new)
        self.assertEqual([x["name"] for x in r["kernels"]], ["gemm_fp32", "gemm_fp16"])
        text = self.text_lines("compare", "--top", "2", self.base, self.new)
        self.assertIn("5 more kernel names not shown (--top 0 shows all)", text)
        # Text shows 20 by default, JSON all; --top 0 all.
        self.assertEqual(len(self.json_of("compare", "--top", "0", self.base,
                                          self.new)["kernels"]), 7)

    def test_swapped_sides_negate(self):
        a = {x["name"]: x for x in self.json_of("compare", self.base, self.new)["kernels"]}
        b = {x["name"]: x for x in self.json_of("compare", self.new, self.base)["kernels"]}
        for name in a:
            self.assertEqual(a[name]["total_ns_delta"], -b[name]["total_ns_delta"], name)
        self.assertEqual((b["old_kernel"]["status"], b["new_kernel"]["status"]),
                         ("added", "removed"))


class CompareRenderings(Runs):
    def test_csv(self):
        out = self.cli("compare", "--format", "csv", self.base, self.new).out.decode()
        sections = {}
        for block in out.strip().split("\n\n"):
            lines = block.splitlines()
            self.assertTrue(lines[0].startswith("# "), lines[0])
            sections[lines[0][2:]] = list(csv.DictReader(io.StringIO("\n".join(lines[1:]))))
        self.assertEqual(list(sections), ["base", "new", "compare", "summary", "phases", "series",
                                          "memory", "operators", "operator_series", "energy",
                                          "kernels",
                                          "memory_ops_time", "memory_ops_size", "cuda_api",
                                          "nvtx"])
        k = {row["name"]: row for row in sections["kernels"]}
        g = k["gemm_fp32"]
        self.assertEqual((g["status"], g["total_ns_base"], g["total_ns_new"], g["total_ns_delta"],
                          g["total_ns_pct"], g["med_ns_base"], g["med_ns_new"]),
                         ("both", "6000", "3000", "-3000", "-50", "2000", "1000"))
        old = k["old_kernel"]
        self.assertEqual((old["status"], old["total_ns_base"], old["total_ns_new"],
                          old["total_ns_delta"], old["total_ns_pct"]),
                         ("removed", "500", "", "-500", "-100"))
        self.assertIn("evil\\x1b[31m_kernel\\x0a", k)  # escaped, never raw
        self.assertNotIn("\x1b", out)
        ph = {row["label"]: row for row in sections["phases"]}
        self.assertEqual((ph[GRAD]["throughput_per_s_ratio"], ph[GRAD]["latency_p50_ns_ratio"]),
                         ("2", "0.5"))

    def test_markdown(self):
        md = self.cli("compare", "--format", "md", self.base, self.new).out.decode()
        self.assertIn("## CUDA kernels, by change in GPU time", md)
        self.assertIn("| 6.00us | 3.00us | -3.00us | -50.0 | 3 | 3 |  | gemm_fp32 |", md)
        self.assertIn("| 500ns | - | -500ns | -100.0 | 1 | - | removed | old_kernel |", md)
        self.assertIn("| - | 800ns | 800ns | - | - | 1 | added | new_kernel |", md)
        self.assertIn("| grad/off |  | 2.00us | 1.00us | -1.00us | 0.50x | 2.00x |"
                      " no verdict: too few iterations |", md)
        self.assertIn("| inference/bf16 | added | - | 900ns | - | - | - | - |", md)
        # The path as Markdown shows it: an underscore that could make emphasis escaped.
        shown = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", self.base)
        self.assertIn("## Base: " + shown, md)
        self.assertNotIn("\x1b", md)

    def test_text(self):
        text = self.text_lines("compare", self.base, self.new)
        self.assertIn("Base: " + self.base, text)
        # Phases in the base run's order, then those of the new run only.
        self.assertRegex(text, r"\n  grad/off .*\n  no_grad/fp16 .*\n  inference/bf16 ")
        self.assertIn("New: " + self.new, text)
        self.assertNotIn("Warnings", text)  # nothing doubtful
        for row in (r"6\.00us\s+3\.00us\s+-3\.00us\s+-50\.0\s+3\s+3\s+gemm_fp32",
                    r"500ns\s+-\s+-500ns\s+-100\.0\s+1\s+-\s+removed\s+old_kernel",
                    r"-\s+800ns\s+800ns\s+-\s+-\s+1\s+added\s+new_kernel",
                    r"grad/off\s+2\.00us\s+1\.00us\s+-1\.00us\s+0\.50x\s+2\.00x\s+"
                    r"no verdict: too few",
                    r"no_grad/fp16\s+removed\s+500ns\s+-\s+-\s+-\s+-\s+-\n",
                    r"grad/off\s+6\.90us\s+4\.25us\s+-2\.65us\s+-38\.4\s+8\.00MiB\s+6\.00MiB\s+"
                    r"-25\.0",
                    r"grad/off\s+cuda:0\s+8\.00MiB\s+6\.00MiB\s+-2\.00MiB\s+-25\.0",
                    r"inference/bf16\s+cuda:0\s+added\s+-\s+3\.00MiB\s+-\s+-\n"):
            self.assertRegex(text, row)
        self.assertIn("evil\\x1b[31m_kernel\\x0a", text)
        # The kernel table in GPU-time order, as in JSON.
        names = re.findall(r"^ .*\s(gemm_fp32|gemm_fp16|new_kernel|old_kernel|gemm_bf16|relu)$",
                           text.split("CUDA kernels, by change")[1].split("\n\n")[0],
                           re.MULTILINE)
        self.assertEqual(names, ["gemm_fp32", "gemm_fp16", "new_kernel", "old_kernel",
                                 "gemm_bf16", "relu"])

    def test_text_by_phase_fits(self):
        text = self.text_lines("compare", "--by-phase", self.base, self.new)
        self.assertRegex(text, r"no_grad/fp16\s+1\.20us\s+-\s+-1\.20us\s+-100\.0\s+removed\s+"
                               r"gemm_fp16")
        # Markdown: every table fits but the first screen's, whose cells a table row cannot
        # wrap (a viewer wraps them).
        md = self.cli("compare", "--format", "md", "--by-phase", self.base, self.new)
        self.assertEqual(md.rc, 0, md.err)
        first, rest = md.out.decode().split("\n## Base", 1)
        self.assertTrue(first.startswith("## Summary: the changes the data supports"), first)
        for line in rest.splitlines():
            self.assertLessEqual(len(line), 100, line)


class CompareWarnings(Runs):
    def warnings(self, base, new):
        return self.json_of("compare", base, new)["compare"]["warnings"] or ""

    def test_different_gpu_and_lost_records(self):
        w = self.warnings(self.base, self.other)
        self.assertIn("the runs used different GPUs", w)
        self.assertIn("the new run lost records (3 CUDA records)", w)
        self.assertNotIn("command lines", w)
        text = self.text_lines("compare", self.base, self.other)
        self.assertIn("Warnings: the comparison may mislead", text)
        self.assertRegex(text, r"\n  !  the runs used different GPUs")
        self.assertIn("Fake A100", text)

    def test_different_command_line(self):
        longer = build(self.dir, "longer", "new", "--batch", "16")
        w = self.warnings(self.base, longer)
        self.assertEqual(w, "the command lines differ (the new one adds '--batch 16'): the runs"
                            " may not do the same work")
        # Where a word differs, the first such pair (a fresh-eyes check compared two runs whose
        # only difference was their output file, and read "may not do the same work" alone).
        other = build(self.dir, "other", "new", "--batch", "8")
        self.assertEqual(self.warnings(longer, other),
                         "the command lines differ ('16' against '8', nothing else): the runs may"
                         " not do the same work")
        third = build(self.dir, "third", "new", "--size", "8")
        self.assertEqual(self.warnings(longer, third),
                         "the command lines differ (first '--batch' against '--size', and more):"
                         " the runs may not do the same work")

    def test_unfinished_and_dropped(self):
        killed = edit_copy(self.new, os.path.join(self.dir, "killed.db"),
                           "UPDATE meta SET value = 0 WHERE key = 'finished'",
                           "UPDATE meta SET value = 7 WHERE key = 'dropped_events'")
        w = self.warnings(self.base, killed)
        self.assertIn("the new run did not finish", w)
        self.assertIn("the new run lost records (7 events)", w)
        self.assertIn("the base run did not finish", self.warnings(killed, self.base))


if __name__ == "__main__":
    main()
