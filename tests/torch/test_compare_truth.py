"""infprof compare against known truth (issue 36): the same Python program with a known 2 ms
regression inside its forward reads "slower" with a band that excludes 1.0 and a p50 difference
of 2 ms, marked (record_function) and unmarked (module calls); the same program twice unchanged
reads neither faster nor slower in at least 9 of 10 pairs. The loop rate (delivered throughput,
waits included) the same: slower with the regression, and slower alone when only the wait for the
next input grows (a slower data pipeline, the model as fast)."""
import json
import os
import unittest

from harness import TORCH_PYTHON, Case, main

PYTHON = TORCH_PYTHON
PROGRAM = """import os, sys, time, torch
torch.set_num_threads(1)
mark = sys.argv[1] == "marked"
extra = float(os.environ.get("REGRESS_MS", "0")) / 1000
wait = float(os.environ.get("WAIT_MS", "0")) / 1000  # between iterations: the next input
sleep = float(os.environ.get("SLEEP_MS", "0")) / 1000  # off the CPU, inside the forward
class MLP(torch.nn.Module):  # CLASS_NAME renames it (a series is named by its class)
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                       torch.nn.Linear(512, 256))
    def forward(self, x):
        if sleep:
            time.sleep(sleep)
        if extra:  # the regression: busy, inside the forward
            t = time.perf_counter() + extra
            while time.perf_counter() < t:
                pass
        return self.net(x)
if os.environ.get("CLASS_NAME"):
    MLP = type(os.environ["CLASS_NAME"], (MLP,), {})
model, x = MLP().eval(), torch.randn(32, 256)
own = []  # the program's own timer around each forward
with torch.inference_mode():
    for i in range(60):
        if wait:
            t = time.perf_counter() + wait
            while time.perf_counter() < t:
                pass
        t0 = time.perf_counter()
        if mark:
            with torch.autograd.profiler.record_function("iteration"):
                model(x)
        else:
            model(x)
        own.append(time.perf_counter() - t0)
print("own p50 %.9f" % sorted(own[10:])[len(own[10:]) // 2])
"""


class CompareTruth(Case):
    def setUp(self):
        super().setUp()
        self.own = {}
        self.prog = os.path.join(self.dir, "prog.py")
        with open(self.prog, "w") as f:
            f.write(PROGRAM)

    def run_once(self, name, how, **env):
        r = self.run_prog([PYTHON, self.prog, how], timeout=300, INFPROF_OUTPUT=name, **env)
        if b"No module named 'torch'" in r.err:
            self.skipTest("no Python with torch")
        self.assertEqual(r.rc, 0, r.err)
        self.own[name] = float(r.out.decode().split("own p50 ")[1])
        return r.db(name)

    def series(self, base, new):
        r = self.report_json_compare(base, new)
        rows = [x for x in r["series"] if x["status"] == "both"]
        self.assertEqual(len(rows), 1, r["series"])
        return rows[0], r["summary"]

    def report_json_compare(self, base, new):
        import json
        r = self.cli("compare", "--format", "json", base, new)
        self.assertEqual(r.rc, 0, r.err)
        return json.loads(r.out)

    def test_a_2ms_regression_reads_slower(self):
        for how in ("marked", "unmarked"):
            with self.subTest(how=how):
                base = self.run_once(f"b-{how}.db", how)
                new = self.run_once(f"n-{how}.db", how, REGRESS_MS=2)
                row, summary = self.series(base, new)
                # The delta against the program's own (the machine's speed varies between two
                # runs: 1.58 ms for the 2 ms added once under ctest -j2, the program's own timer
                # agreeing).
                own = (self.own[f"n-{how}.db"] - self.own[f"b-{how}.db"]) * 1e9
                self.assertLess(abs(row["latency_p50_ns_delta"] - own), 0.05 * abs(own) + 300_000,
                                (how, row, own))
                if own < 1_000_000:  # ctest -j3 beside other work: forwards of 15 ms, not 1
                    self.skipTest(f"the machine is too loaded: the program's own timer read the"
                                  f" 2 ms added as {own / 1e6:.2f} ms")
                self.assertEqual(row["verdict"], "slower", (how, row))
                self.assertLess(row["speedup_hi"], 1.0, (how, row))  # the band excludes 1.0
                self.assertGreater(row["latency_p50_ns_delta"], 1_000_000, (how, row))
                self.assertIn("slower", summary["changes"])
                self.assertEqual(row["delivered_verdict"], "slower", (how, row))
                self.assertLess(row["delivered_speedup_hi"], 1.0, (how, row))

    def test_a_sleep_is_named_as_time_off_the_cpu(self):
        # issue 51: a 10 ms sleep inside forward() is what moved, "off the CPU +10 ms per
        # iteration" (iteration_cpu), first on the first screen's What moved, whatever the wall
        # latency's verdict; the time on the CPU did not move by as much.
        import re
        # Both runs sleep, so that each run's steady iterations span over half a second: the
        # CPU split of a shorter run is unknown (test_a_short_run_has_no_cpu_split).
        for how in ("marked", "unmarked"):
            base = self.run_once(f"s0-{how}.db", how, SLEEP_MS=15)
            new = self.run_once(f"s1-{how}.db", how, SLEEP_MS=25)
            row, summary = self.series(base, new)
            m = re.match(r"off the CPU \+([0-9.]+)ms", row["moved"] or "")
            self.assertTrue(m, (how, row["moved"]))
            # The sleep, give or take what preemption added to either run's time off the CPU: on
            # a loaded 2-core machine 9.66 and 9.03 ms were seen (full ctest -j2 runs).
            self.assertGreater(float(m.group(1)), 8.5, (how, row["moved"]))
            self.assertLess(float(m.group(1)), 11.5, (how, row["moved"]))
            self.assertIn("off the CPU +", summary["moved"])
            self.assertLess(abs(row["cpu_per_iteration_ns_delta"]), 2_000_000, (how, row))

    def test_a_short_run_has_no_cpu_split(self):
        # 60 forwards of tens of microseconds: the thread's CPU account moves at the scheduler's
        # ticks, so the split read 0 on the CPU and everything off it; now unknown.
        script = os.path.join(self.dir, "short.py")
        with open(script, "w") as f:
            f.write("import torch\nm = torch.nn.Linear(32, 4).eval()\nx = torch.randn(4, 32)\n"
                    "with torch.no_grad():\n    for _ in range(60):\n        m(x)\n")
        r = self.run_prog([PYTHON, script], timeout=300, INFPROF_OUTPUT="short.db")
        self.assertEqual(r.rc, 0, r.err)
        [s] = self.report_json(r.db("short.db"))["series"]
        self.assertEqual(s["iterations"], 60, s)
        self.assertIsNone(s["cpu_per_iteration_ns"], s)
        self.assertIsNone(s["off_cpu_per_iteration_ns"], s)

    def script_series(self, name, text):
        """Runs the Python program `text` profiled: its printed output and its one series."""
        script = os.path.join(self.dir, name + ".py")
        with open(script, "w") as f:
            f.write(text)
        r = self.run_prog([PYTHON, script], timeout=300, INFPROF_OUTPUT=name + ".db")
        self.assertEqual(r.rc, 0, r.err)
        [s] = self.report_json(r.db(name + ".db"))["series"]
        return r.out, s

    def test_a_thread_that_blocks_between_iterations_is_on_the_cpu_in_them(self):
        # Compute-only forwards, a 2 ms sleep in every 10th gap: the thread's CPU account catches
        # up when it blocks, in the gap, so the iterations' own readings held almost none of
        # their CPU (a fresh-eyes check, 2026-11-29: 5.2 us on the CPU and 51 us off it, 9%).
        # An iteration without a context switch never left the CPU (report/run/itercpu.c): on
        # the CPU for most of their time. The program's own thread clock, read once around the
        # loop, says what it spent.
        out, s = self.script_series(
            "gapsleep", "import json, time, torch\n"
                        "torch.set_num_threads(1)\n"
                        "m = torch.nn.Sequential(*[torch.nn.Linear(128, 128) for _ in range(4)])"
                        ".eval()\n"
                        "x = torch.randn(8, 128)\n"
                        "n = fwd = 0\n"
                        "with torch.no_grad():\n"
                        "    c0, end = time.thread_time(), time.perf_counter() + 1.5\n"
                        "    while time.perf_counter() < end:\n"
                        "        t0 = time.perf_counter_ns()\n"
                        "        m(x)\n"
                        "        fwd += time.perf_counter_ns() - t0\n"
                        "        n += 1\n"
                        "        if n % 10 == 0:\n"
                        "            time.sleep(0.002)\n"
                        "    cpu = time.thread_time() - c0\n"
                        "print(json.dumps({'n': n, 'fwd_ns': fwd / n, 'cpu_s': cpu}))\n")
        own = json.loads(out)
        on, off = s["cpu_per_iteration_ns"], s["off_cpu_per_iteration_ns"]
        self.assertIsNotNone(on, s)
        # On the CPU for most of each forward, never more than it lasted; the whole loop's CPU,
        # by its own clock, bounds the iterations'. A loaded machine preempts some: the share
        # the program's own clocks allow the forwards at most (ctest -j3 beside other work:
        # 491 us of CPU a forward, gaps included, in 794 us, 0.62; ours 0.59).
        most = own["cpu_s"] * 1e9 / own["n"] / own["fwd_ns"]
        self.assertGreater(on / (on + off), min(0.6, 0.75 * most), (s, own))
        self.assertLessEqual(on * own["n"], own["cpu_s"] * 1e9 * 1.05, (s, own))

    def test_a_forward_that_sleeps_after_a_gap_that_computes_is_off_the_cpu(self):
        # A forward with a 1 ms sleep inside, after a gap that computes 1 ms and then sleeps 1 ms:
        # a first version of the above gave the gap's CPU to the forward, up to its room, which
        # was its sleep: 100% on the CPU (the slow iterations' causes went with it).
        _, s = self.script_series(
            "gapwork", "import json, time, torch\n"
                        "torch.set_num_threads(1)\n"
                        "class M(torch.nn.Module):\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.l = torch.nn.Linear(128, 128)\n"
                        "    def forward(self, x):\n"
                        "        time.sleep(0.001)\n"
                        "        return self.l(x)\n"
                        "m, x, n = M().eval(), torch.randn(8, 128), 0\n"
                        "with torch.no_grad():\n"
                        "    end = time.perf_counter() + 3\n"
                        "    while time.perf_counter() < end:\n"
                        "        t = time.perf_counter() + 0.001\n"
                        "        while time.perf_counter() < t:\n"
                        "            pass\n"
                        "        time.sleep(0.001)\n"
                        "        m(x)\n"
                        "        n += 1\n"
                        "print(json.dumps({'n': n}))\n")
        on, off = s["cpu_per_iteration_ns"], s["off_cpu_per_iteration_ns"]
        self.assertIsNotNone(on, s)
        # Its sleep off the CPU (1 ms of a forward of about 1.1 ms).
        self.assertGreater(off, 700_000, s)

    def test_a_renamed_wrapper_keeps_its_operators_matched(self):
        # issue 51: the base's "MLP" matched to the new run's "Slow" (each the only series of its
        # phase): its operators follow that match, compared, not all removed and all added.
        base = self.run_once("r0.db", "unmarked")
        new = self.run_once("r1.db", "unmarked", CLASS_NAME="Slow")
        r = self.report_json_compare(base, new)
        [row] = [x for x in r["series"] if x["status"] == "both"]
        self.assertEqual((row["series"], row["new_series"]), ("MLP", "Slow"), row)
        ops = r["operator_series"]
        self.assertTrue(ops, r["operator_series"])
        both = [x for x in ops if x["status"] == "both"]
        self.assertEqual([x for x in ops if x["status"] != "both"], [], ops)
        self.assertIn("aten::linear", {x["operator"] for x in both})

    def test_a_slower_input_reads_loop_slower_model_not(self):
        base = self.run_once("w0.db", "unmarked")
        new = self.run_once("w1.db", "unmarked", WAIT_MS=2)
        row, summary = self.series(base, new)
        # The model itself may run a little slower between waits (its caches gone cold), and a
        # loaded machine may slow one run (ours read 1.157x once under ctest -j2 beside other
        # work): its latency ratio is the program's own within 5%, and the loop rate is what
        # changed, far more than the latency explains.
        own = self.own["w1.db"] / self.own["w0.db"]
        self.assertLess(abs(row["latency_p50_ns_ratio"] / own - 1), 0.05, (row, own))
        if "shifted level mid-run" in (row["delivered_verdict"] or ""):
            # The report's own word that a run's speed moved (ctest -j3 beside other work): the
            # loop rates of the two runs are no measure of the wait then.
            self.skipTest("the machine's speed moved mid-run: " + row["delivered_verdict"])
        # The loop rate the program's own timer and the 2 ms wait predict, not a fixed 0.8 (CI
        # read 0.855 for a run whose model was 9% faster than the base's: 0.867 predicted).
        want = self.own["w0.db"] / (self.own["w1.db"] + 0.002)
        if want > 0.85:  # forwards of 24 ms, not 1-2, under ctest -j3 beside other work
            self.skipTest(f"the machine is too loaded: the 2 ms wait is {1 - want:.0%} of the"
                          f" loop by the program's own timer")
        self.assertLess(abs(row["delivered_per_s_ratio"] / want - 1), 0.08, (row, want))
        self.assertLess(row["delivered_per_s_ratio"], 0.95, row)
        self.assertLess(row["delivered_per_s_ratio"] * row["latency_p50_ns_ratio"], 0.9, row)
        self.assertEqual(row["delivered_verdict"], "slower", row)
        self.assertLessEqual(row["delivered_speedup_lo"], row["delivered_per_s_ratio"], row)
        self.assertGreaterEqual(row["delivered_speedup_hi"], row["delivered_per_s_ratio"], row)
        self.assertIn("loop rate slower", summary["changes"])

    def test_unchanged_reads_no_change_9_of_10(self):
        # This machine (a VM) changes speed between processes: the program's own timer has seen
        # one run 15% slower than the one before it, unchanged. A verdict there is about the
        # machine and true of the runs; so a "faster" or "slower" must agree with the program's
        # own timer, and among the pairs whose own timers agree within 2% at most one may read a
        # change. One run first, left out: a first run after other work reads slower.
        self.run_once("warm.db", "unmarked")
        base = self.run_once("u0.db", "unmarked")
        changed, loop, stable = [], [], 0
        for k in range(1, 11):
            row, _ = self.series(base, self.run_once(f"u{k}.db", "unmarked"))
            own = self.own[f"u{k}.db"] / self.own["u0.db"]  # new / base latency, the program's
            if row["verdict"] in ("faster", "slower"):
                self.assertEqual(row["verdict"], "slower" if own > 1 else "faster", (k, own, row))
                self.assertGreater(abs(own - 1), 0.015, (k, own, row))
            if abs(own - 1) > 0.02:
                continue
            stable += 1
            if row["verdict"] in ("faster", "slower"):
                changed.append((k, row["verdict"], row["speedup_lo"], row["speedup_hi"]))
            if row["delivered_verdict"] in ("faster", "slower"):
                loop.append((k, row["delivered_verdict"], row["delivered_speedup_lo"],
                             row["delivered_speedup_hi"]))
        if stable < 5:
            self.skipTest(f"the machine changed speed between runs: {10 - stable} of 10 runs"
                          " more than 2% off the base by the program's own timer")
        self.assertLessEqual(len(changed), 1, changed)
        self.assertLessEqual(len(loop), 1, loop)


if __name__ == "__main__":
    if not os.path.exists(PYTHON):
        raise unittest.SkipTest("no Python")
    main()
