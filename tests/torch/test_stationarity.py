"""Verdicts that the run cannot support (report/run/iterations.c: level_shift, phases_overlap).
A phase whose steady iterations shift level mid-run (a machine that slowed down or sped up) gives
no verdict, and says so with the two levels; a faster phase some of whose iterations ran at the
slower one's speed gives its verdict with a caution. Iterations of known length: each is a
record_function("iteration") scope around a busy wait of the program's choosing (10 or 30 ms; a
wait never ends early, and on a loaded machine may end late, so the checks bound the levels from
below tightly and from above loosely: a CI run once read 10.15 -> 23.78 ms for sleeps of 10 and 20)."""
import json
import os
import re
import sqlite3
import unittest

from harness import Case, TORCH_PYTHON, main

PYTHON = TORCH_PYTHON
PROG = """
import sys, time, torch
def run(ctx, lengths):
    with ctx():
        for ms in lengths:
            with torch.autograd.profiler.record_function("iteration"):
                end = time.perf_counter() + ms / 1000
                while time.perf_counter() < end:
                    pass
what = sys.argv[1]
if what == "shift":
    run(torch.no_grad, [10] * 20)
    run(torch.inference_mode, [10] * 10 + [30] * 10)
elif what == "far":  # a shift far smaller than the difference (CI: int8 at 800us then 973us
    # against fp32's 31ms read "no verdict" beside 37.98x)
    run(torch.no_grad, [40] * 20)
    run(torch.inference_mode, [2] * 12 + [3] * 12)
elif what == "noisy":  # a stretch that slows and spreads (a second fresh-eyes check's busy
    # loops: 16.5 ms, MAD 0.7, then 35 ms, MAD 5.3): its MAD 5 ms, the step 15
    run(torch.no_grad, [10] * 20)
    run(torch.inference_mode, [10] * 12 + [18, 30, 20, 34, 22, 28, 19, 32, 24, 26, 21, 33])
elif what == "alone":
    run(torch.inference_mode, [10] * 10 + [30] * 10)
elif what == "alternate":
    run(torch.inference_mode, [3, 12] * 15)
elif what == "levels":  # the machine's speed moving in blocks (a fresh-eyes check's 425,
    # 353, 418 us): no warm-up made of the first block
    run(torch.inference_mode, [4.25] * 100 + [3.53] * 60 + [4.18] * 40)
elif what == "spread":
    import math, random
    random.seed(1)
    run(torch.inference_mode, [4 * math.exp(random.gauss(0, 0.3)) for _ in range(80)])
else:
    run(torch.no_grad, [30] * 20)
    run(torch.inference_mode, [30 if i % 5 == 4 else 10 for i in range(40)])
print("done")
"""


class Stationarity(Case):
    def report(self, what):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        prog = os.path.join(self.dir, "prog.py")
        with open(prog, "w") as f:
            f.write(PROG)
        r = self.run_prog([PYTHON, prog, what], timeout=120, INFPROF_OUTPUT=f"{what}.db")
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        return self.report_json(r.db(f"{what}.db"))

    def summary(self, what):
        return self.report(what)["summary"]

    def test_a_slower_first_block_that_comes_back_is_no_warm_up(self):
        # 100 iterations of 4.25 ms, 60 of 3.53, 40 of 4.18: the first block was taken for
        # warm-up (slower than the second half's median by more than 10%) and the p50 read at
        # the fast block's 3.5 ms where the program's median is 4.2. The slowness comes back
        # later, as a run: not warm-up.
        rep = self.report("levels")
        ph, = [p for p in rep["phases"] if p["iterations"]]
        self.assertLess(ph["warmup_iterations"], 5, ph)
        # The median of the lengths is 4.215 ms; busy waits end late, never early.
        self.assertGreater(ph["latency_p50_ns"], 4.15e6, ph)
        self.assertLess(ph["latency_p50_ns"], 4.6e6, ph)

    def test_a_level_shift_gives_no_verdict(self):
        rep = self.report("shift")
        s = rep["summary"]
        line = s["inference_vs_no_grad"]
        m = re.search(r"no verdict: inference/off shifted ([\d.]+)ms -> ([\d.]+)ms mid-run", line)
        self.assertIsNotNone(m, line)
        self.assertTrue(10 <= float(m.group(1)) < 16, line)
        self.assertTrue(30 <= float(m.group(2)) < 45, line)
        for word in ("faster", "slower", "no clear difference", "the same within"):
            self.assertNotIn(word, line)
        # The tables withhold what the Summary withholds: a ratio, no band, no verdict.
        iv = rep["inference_vs_no_grad"][0]
        self.assertEqual(iv["verdict"], "no verdict: inference/off shifted", iv)
        self.assertIsNone(iv.get("speedup_low"), iv)
        self.assertGreater(iv["speedup"], 0, iv)
        inf = [p for p in rep["phases"] if p["grad_mode"] == "inference_mode"]
        self.assertEqual(len(inf), 1, rep["phases"])
        self.assertEqual(inf[0]["verdict"], "no verdict: inference/off shifted", inf[0])
        self.assertIsNone(inf[0].get("throughput_ratio_low"), inf[0])

    def test_a_level_that_slows_and_spreads_is_a_shift(self):
        # The step (15 ms) is under 4 times the slow stretch's spread (5 ms), where the machine's
        # load made it: 4 times the steadier stretch's spread and twice the other's.
        line = self.summary("noisy")["inference_vs_no_grad"]
        m = re.search(r"no verdict: inference/off shifted ([\d.]+)ms -> ([\d.]+)ms mid-run", line)
        self.assertIsNotNone(m, line)
        self.assertTrue(10 <= float(m.group(1)) < 16 and 24 <= float(m.group(2)) < 40, line)

    def test_a_shift_smaller_than_the_difference_keeps_the_verdict(self):
        # inference_mode's 2 ms then 3 ms iterations against no_grad's 40: faster at either
        # level, by far more than the shift's 1.5x, so the verdict stands beside the shift.
        rep = self.report("far")
        line = rep["summary"]["inference_vs_no_grad"]
        m = re.search(r"x no_grad, faster \(95%: [\d.]+-[\d.]+x, one run\), more than"
                      r" inference/off's shift ([\d.]+)ms ->"
                      r" ([\d.]+)ms mid-run", line)
        self.assertIsNotNone(m, line)
        self.assertTrue(2 <= float(m.group(1)) < float(m.group(2)), line)
        iv = rep["inference_vs_no_grad"][0]
        self.assertEqual(iv["verdict"], "faster", iv)
        self.assertGreater(iv["speedup_low"], 1.5 * 1.03, iv)
        inf, = [p for p in rep["phases"] if p["grad_mode"] == "inference_mode"]
        self.assertEqual(inf["verdict"], "faster", inf)
        # The table says what the Summary names beside it: the shift's two levels.
        levels = (inf["shift_before_ns"] / 1e6, inf["shift_after_ns"] / 1e6)
        self.assertEqual(tuple(f"{x:.2f}" for x in levels), (m.group(1), m.group(2)), inf)

    def test_the_inference_mode_line_across_runs(self):
        # Two runs of one program, reported together: each run's inference_mode speed-up (its own
        # line's, "one run") and whether the verdict holds in both; 40 ms against 2-3 ms does.
        runs = []
        for k in range(2):
            self.report("far")
            runs.append(os.path.join(self.dir, f"far{k}.db"))
            os.rename(os.path.join(self.dir, "far.db"), runs[-1])
        own = [float(re.match(r"autocast off: ([\d.]+)x", self.report_json(db)["summary"]
                              ["inference_vs_no_grad"]).group(1)) for db in runs]
        r = self.cli("report", "--format", "json", *runs)
        self.assertEqual(r.rc, 0, r.err)
        line = json.loads(r.out)["job"]["inference_vs_no_grad"]
        self.assertEqual(line, "autocast off in 2 of 2 runs: %.2fx, %.2fx no_grad; faster in both"
                         % tuple(own), line)

    def test_every_second_slow_is_no_level_shift(self):
        # 3 and 12 ms in turn from start to end: each half's median is either level by an
        # iteration's chance and its spread 0, and it read "shifted 12ms -> 3ms mid-run" (a
        # fresh-eyes check, every 2nd forward slow). Two mixes of the same two levels: no shift.
        s = self.summary("alternate")
        # Each iteration's own length (the scope holds the busy wait and no more): a machine so
        # loaded that the short ones ran past the midpoint of the two (ctest -j3 beside other
        # work: "shifted 3.09ms -> 12.10ms") made other levels, and the test is not this one.
        con = sqlite3.connect(os.path.join(self.dir, "alternate.db"))
        durs = [d for (d,) in con.execute("SELECT dur FROM iterations ORDER BY start")]
        con.close()
        # Past 1.5x (4.5 ms) a short one is another level: a full ctest -j2 once read "shifted
        # 3.06ms -> 12.08ms" with no short one past 7.5 ms, and passed alone three times.
        stretched = sum(d > 4.5e6 for d in durs[0::2])
        if stretched > 2:
            self.skipTest(f"the machine is too loaded: {stretched} of the 3 ms iterations took"
                          f" over 4.5 ms")
        self.assertNotIn("shifted", s["fastest"], s["fastest"])
        self.assertRegex(s["fastest"], r"^inference/off, p50 ", s["fastest"])

    def test_every_second_slow_is_a_tail(self):
        # 3 and 12 ms in turn: each window of 11 around an iteration has either level as its
        # median, so no slow one stood out of its neighbours, and the Slow iterations section said
        # "(none)" under a p95 of 4x the p50 (a fresh-eyes check). Now the level around each is
        # its fast neighbours': every 12 ms one is slow, every 2nd.
        rep = self.report("alternate")
        t, = rep["tails"]
        own = [i for i in rep["iterations"] if i["steady"] or i["captured"]]
        slow = sum(i["latency_ns"] >= 9e6 for i in own)
        self.assertGreaterEqual(t["slow_iterations"], slow - 2, t)
        self.assertLessEqual(t["slow_iterations"], slow, t)
        self.assertRegex(t["pattern"], r"^every 2nd from #[01]\b", t)
        self.assertTrue(2.9e6 <= t["typical_mean_ns"] < 4.5e6, t)
        self.assertIn("every 2nd", rep["summary"]["tail"])

    def test_a_broad_spread_is_no_tail(self):
        # Lengths drawn from a lognormal of spread 0.3 around 4 ms: nothing is slow by design.
        # A first version of the rule above took any window with 3 iterations under its median /
        # 1.25 for two levels, and read 29 of 200 such forwards slow (a fresh-eyes check); two
        # levels need a gap between them. A loaded machine may stretch one or two.
        rep = self.report("spread")
        for t in rep["tails"]:
            self.assertLessEqual(t["slow_iterations"], 3, t)

    def test_captures_on_the_slow_ones_are_no_capture_cost(self):
        # The captured iterations against each uncaptured one around them: against the median of
        # the four, every 12 ms one read as 1.6x its neighbours (7.5 ms) and every 3 ms one as 0.4x;
        # where five of seven captures fell on 12 ms ones (chance: they are drawn at random gaps),
        # "ran up to 60% slower" of a capture of one operator call. The captures set on such
        # iterations here, five slow ones and two fast, each between uncaptured ones.
        self.report("alternate")
        db = os.path.join(self.dir, "alternate.db")
        con = sqlite3.connect(db)
        rows = con.execute("SELECT start, dur, id, tid, phase FROM iterations WHERE phase ="
                           " (SELECT max(phase) FROM iterations) ORDER BY start").fetchall()
        lat = [r[1] for r in rows]
        want = [k for k in (3, 9, 15, 21, 27) if lat[k] > 9e6] + \
               [k for k in (6, 18) if lat[k] < 6e6]
        if len(want) != 7:
            self.skipTest(f"the machine broke the alternation: {[round(x / 1e6) for x in lat]}")
        con.execute("DELETE FROM torch_operator_windows")
        con.executemany("INSERT INTO torch_operator_windows VALUES (?, ?, ?, ?, ?, 4)",
                        [rows[k] for k in want])
        con.commit()
        con.close()
        rep = self.report_json(db)
        line = rep["run"]["observer_cost"]
        m = re.search(r"captured ran (?:up to )?(\d+)% slower", line)
        self.assertTrue("captured ran no slower than the others" in line or
                        (m and int(m.group(1)) < 10), line)

    def test_iterations_at_the_other_phases_speed_give_a_caution(self):
        rep = self.report("overlap")
        s = rep["summary"]
        line = s["inference_vs_no_grad"]
        m = re.search(r"caution: (\d+) of (\d+) inference/off iterations at no_grad/off's"
                      r" ([\d.]+)ms", line)
        self.assertIsNotNone(m, line)
        # Of the steady ones (those captured for their operators apart): 8 of the 40 are at the
        # slower phase's 30 ms; a 10 ms one joins them only if the machine stalled it by 17 ms.
        # Captures fall at random: with 4 of 20, a CI run captured 3 of the 4 and the one left
        # was too few for a caution (the report's rule: 2, and a tenth of the steady ones).
        inf, = [x for x in rep["series"] if x["phase"] == "inference_mode | autocast off"]
        self.assertEqual(int(m.group(2)), inf["steady_iterations"], (line, inf))
        slow = [i for i in rep["iterations"] if i["phase"] == inf["phase"] and i["steady"]
                and i["latency_ns"] >= 25e6]
        self.assertTrue(1 <= int(m.group(1)) and abs(int(m.group(1)) - len(slow)) <= 2, line)
        self.assertTrue(30 <= float(m.group(3)) < 45, line)
        self.assertIn("caution", s["fastest"])

    def test_a_phase_alone_that_shifts_says_so(self):
        # No phase to compare with: the Fastest phase line still says its p50 is of two levels.
        line = self.summary("alone")["fastest"]
        m = re.search(r"\(the baseline\); it shifted ([\d.]+)ms -> ([\d.]+)ms mid-run \(the p50"
                      r" is of both levels\)", line)
        self.assertIsNotNone(m, line)
        self.assertTrue(10 <= float(m.group(1)) < 16, line)
        self.assertTrue(30 <= float(m.group(2)) < 45, line)


if __name__ == "__main__":
    main()
