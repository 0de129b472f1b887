"""Series (report/run/iterations.c, sec_series.c): a program that tries several configurations
in one process, each forward marked record_function("iteration <label>"), gets one series per
label, each with its own warm-up and latency, against the program's own timer around each
forward (p50 within 5% + 0.5 ms); a slower second model is never the first one's warm-up; the
batch sweep lists each batch. Python on Debian's CPU torch 1.13 (tests/progs/series_prog.py)."""
import os
import unittest

from harness import Case, main

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "series_prog.py")
PYTHON = "/usr/bin/python3"


class Series(Case):
    def run_program(self, what):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        r = self.run_prog([PYTHON, PROG, what], timeout=300, INFPROF_OUTPUT=f"{what}.db")
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        own, self.raw = {}, {}
        for line in r.out.decode().splitlines():
            label, *times = line.split()
            self.raw[label] = [int(t) for t in times]
            own[label] = sorted(int(t) for t in times[2:])  # its own two warm-up forwards out
        report = self.report_json(r.db(f"{what}.db"))
        return own, report

    def rows(self, report, key):
        self.assertIn(key, report)
        return report[key]

    def check_series(self, own, rows):
        got = {r["series"]: r for r in rows}
        self.assertEqual(sorted(got), sorted(own))
        # Within 5% + 0.5 ms of the program's 40th-60th percentile (its p50 on a quiet machine;
        # the two medians are of nearly, not exactly, the same forwards: test_unmarked.py).
        for label, times in own.items():
            lo, hi = times[int(0.4 * (len(times) - 1))], times[-(-6 * (len(times) - 1) // 10)]
            ours = got[label]["latency_p50_ns"]
            self.assertGreater(ours, 0.95 * lo - 500_000, (label, ours, lo, hi))
            self.assertLess(ours, 1.05 * hi + 500_000, (label, ours, lo, hi))
        return got

    def test_batch_sizes_are_series_and_a_sweep(self):
        own, report = self.run_program("batch")
        got = self.check_series(own, self.rows(report, "series"))
        self.assertEqual([got[f"batch={b}"]["batch"] for b in (1, 8, 64)], [1, 8, 64])
        sweep = self.rows(report, "batch_sweep")
        self.assertEqual([r["batch"] for r in sweep], [1, 8, 64])
        self.assertIsNone(sweep[0]["throughput_gain"])
        for r in sweep[1:]:
            self.assertGreater(r["latency_cost"], 1)

    def test_a_second_model_is_not_warm_up(self):
        own, report = self.run_program("int8")
        got = self.check_series(own, self.rows(report, "series"))
        # The fp32 model's 25 forwards are a series of their own (pooled with the int8 one they
        # were all warm-up), and an iteration is set apart as warm-up only where the program's
        # own timer saw it slower than its steady forwards too: its first two on a quiet
        # machine, a few more when a loaded one slows the start (a CI run: 4).
        for label in ("fp32", "int8"):
            raw, row = self.raw[label], got[label]
            self.assertEqual(row["steady_iterations"] + row["warmup_iterations"], len(raw))
            steady = sorted(raw[len(raw) // 2:])[len(raw[len(raw) // 2:]) // 2]
            for k in range(row["warmup_iterations"]):
                self.assertGreater(raw[k], 1.05 * steady, (label, k, raw, row))
        self.assertEqual(self.rows(report, "batch_sweep"), [])


if __name__ == "__main__":
    main()
