"""compare over several runs a side (docs/compare.md): `infprof run --repeat N`, and `infprof
compare BASE... -- NEW...` whose verdicts weigh a change against how much the runs of a side
differ (Welch's t on the logs of each run's median). fixture_compare's `latency` runs make series
at a p50 of the test's choosing, so the runs' spread is known exactly; one run a side says what it
cannot know."""
import math
import os
import sqlite3

from compare_common import Runs, build
from harness import main, prog


def welch(base, new):
    """The band by docs/compare.md's recipe, for the test to check the tool against."""
    lb, ln = [math.log(x) for x in base], [math.log(x) for x in new]
    mb, mn = sum(lb) / len(lb), sum(ln) / len(ln)
    vb = sum((x - mb) ** 2 for x in lb) / (len(lb) - 1)
    vn = sum((x - mn) ** 2 for x in ln) / (len(ln) - 1)
    qb, qn = vb / len(lb), vn / len(ln)
    se = math.sqrt(qb + qn)
    df = (qb + qn) ** 2 / (qb * qb / (len(lb) - 1) + qn * qn / (len(ln) - 1))
    t = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447}[min(int(df), 6)]
    d = mb - mn
    return math.exp(d), math.exp(d - t * se), math.exp(d + t * se)


class SeveralRuns(Runs):
    def side(self, name, p50s):
        return [build(self.root, f"{name}{i}", "latency", FIXTURE_P50_US=p, FIXTURE_ONE_SERIES=1)
                for i, p in enumerate(p50s)]

    def series_a(self, base, new):
        r = self.json_of("compare", *base, "--", *new)
        [row] = [x for x in r["series"] if x["series"] == "a"]
        return r, row

    def test_unchanged_runs_read_no_change(self):
        # A/A: three runs a side at 1000, 1020, 990 us and 1010, 995, 1005 us: the runs differ by
        # up to 3% within a side; no verdict of faster or slower.
        r, row = self.series_a(self.side("aa-b", [1000, 1020, 990]),
                               self.side("aa-n", [1010, 995, 1005]))
        self.assertEqual((row["runs_base"], row["runs_new"], row["band_from"]), (3, 3, "runs"))
        self.assertNotIn(row["verdict"], ("faster", "slower"), row)
        self.assertLess(row["speedup_lo"], 1)
        self.assertGreater(row["speedup_hi"], 1)
        self.assertEqual(r["compare"]["runs_base"], 3)
        self.assertTrue(r["summary"]["runs"].startswith("3 base, 3 new"), r["summary"])

    def test_a_regression_reads_slower_with_the_runs_band(self):
        base, new = [1000, 1020, 990], [1100, 1125, 1090]  # +10%
        base_dbs, new_dbs = self.side("up-b", base), self.side("up-n", new)
        r, row = self.series_a(base_dbs, new_dbs)
        self.assertEqual(row["verdict"], "slower", row)
        ratio, lo, hi = welch(base, new)
        self.assertAlmostEqual(row["speedup"], ratio, delta=0.002)
        self.assertAlmostEqual(row["speedup_lo"], lo, delta=0.002)
        self.assertAlmostEqual(row["speedup_hi"], hi, delta=0.002)
        self.assertEqual(row["run_p50s_base"], "1.00ms 1.02ms 990.00us")
        # The row's p50s and ratio are the runs' centres the band is of, not the first runs'
        # (which read 1.10x here by chance, and 1.27x beside a Summary's 1.03x on a real pair).
        self.assertEqual(row["latency_p50_ns_base"], row["p50_base_runs_ns"], row)
        self.assertEqual(row["latency_p50_ns_new"], row["p50_new_runs_ns"], row)
        self.assertAlmostEqual(row["latency_p50_ns_ratio"], 1 / ratio, delta=0.002)
        self.assertNotEqual(row["latency_p50_ns_base"], base[0] * 1000, row)
        self.assertRegex(r["summary"]["changes"],
                         r"^grad/off a slower, latency 1\.10x \(95%: [0-9.]+-[0-9.]+x, 3\+3 runs\)")
        # The HTML forest: the band, the point and one ring per run (six), each run against the
        # base runs' centre.
        import re
        h = self.cli("compare", "--format", "html", *base_dbs, "--", *new_dbs)
        self.assertEqual(h.rc, 0, h.err)
        page = h.out.decode()
        svg = page[page.index('id="chart-compare"'):]
        svg = svg[:svg.index("</svg>")]
        self.assertEqual(len(re.findall(r'<circle[^>]*fill="none"', svg)), 6, svg)
        self.assertIn("rings: each run", page)

    def test_one_run_on_a_side_gets_no_band_of_runs(self):
        # Two base runs that agree by chance against one new run: the new side's spread is not
        # known. An unchanged program's 2+1 runs read "loop rate slower, 0.95x (95%: 0.95-0.96x)"
        # from the base runs' agreement alone; now no verdict, said why.
        r, row = self.series_a(self.side("one-b", [1000, 1001]), self.side("one-n", [1040]))
        self.assertEqual(row["verdict"], "no verdict: a band of runs needs two or more a side with"
                                         " steady iterations", row)
        self.assertIsNone(row["speedup_lo"], row)
        self.assertNotIn(row["delivered_verdict"], ("faster", "slower"), row)
        self.assertTrue(r["summary"]["changes"].startswith("none:"), r["summary"])

    def with_off_cpu(self, name, p50_us, off_ms):
        # A run of series "a" whose iterations each spent off_ms off the CPU (None: no reading,
        # as a run whose steady iterations were too short to split).
        db = build(self.root, name, "latency", FIXTURE_P50_US=p50_us, FIXTURE_ONE_SERIES=1)
        if off_ms is not None:
            con = sqlite3.connect(db)
            con.execute("INSERT OR REPLACE INTO iteration_cpu(id, cpu_ns) SELECT id, dur - ?"
                        " FROM iterations", (int(off_ms * 1e6),))
            con.commit()
            con.close()
        return db

    def test_what_moved_needs_its_band_clear_of_zero(self):
        # An unchanged program's off-CPU time, two runs a side that know it: 0.04 and 0.15 ms
        # against 1.34 and 3.34 (a preempted VM; the third runs unknown). It read "What moved:
        # off the CPU +2.24ms per iteration", as large as a real 2 ms sleep; the band between
        # the runs reaches 0: nothing is named. Three runs a side that all moved by 2 ms are.
        base = [self.with_off_cpu(f"mb{i}", 20000, v) for i, v in enumerate([0.04, 0.15, None])]
        new = [self.with_off_cpu(f"mn{i}", 20000, v) for i, v in enumerate([1.34, 3.34, None])]
        r, row = self.series_a(base, new)
        self.assertIsNone(row["moved"], row)
        self.assertIsNone(r["summary"]["moved"], r["summary"])
        base = [self.with_off_cpu(f"sb{i}", 20000, v) for i, v in enumerate([0.1, 0.2, 0.15])]
        new = [self.with_off_cpu(f"sn{i}", 22000, v) for i, v in enumerate([2.1, 2.2, 2.15])]
        r, row = self.series_a(base, new)
        self.assertRegex(row["moved"] or "", r"^off the CPU \+2\.0[0-9]ms per iteration", row)

    def test_a_change_inside_the_runs_spread_is_no_verdict(self):
        # The base runs spread 8% (960-1040 us); the new ones are 4.5% slower on the mean: a
        # narrow band could still clear the floor, the spread says two runs differ by more.
        r, row = self.series_a(self.side("sp-b", [960, 1000, 1040, 1000]),
                               self.side("sp-n", [1045, 1046, 1044, 1045]))
        self.assertNotIn(row["verdict"], ("faster", "slower"), row)

    def test_a_change_near_the_floor_says_which_way_and_asks_for_runs(self):
        # +4%, the runs within 1% of each other: the band (about 0.951-0.972) excludes 1 but
        # reaches within the 3% floor: not "slower", and not silent about the way it leans.
        r, row = self.series_a(self.side("fl-b", [1000, 1005, 995]),
                               self.side("fl-n", [1040, 1045, 1035]))
        self.assertLess(row["speedup_hi"], 1, row)
        self.assertGreater(row["speedup_hi"], 1 / 1.03, row)
        self.assertEqual(row["verdict"], "no clear difference: slower, but the band reaches"
                                         " within 3% (more runs a side narrow it)", row)
        self.assertIn("more runs a side narrow it", r["summary"]["no_clear_difference"])

    def test_a_run_at_half_speed_is_left_out_and_said(self):
        # This VM's slow mode: one process at half speed (52.50 ms against 25.66 and 26.19). It
        # is left out of the band, marked, and the other runs still tell the +10%.
        r, row = self.series_a(self.side("half-b", [1000, 2050, 1010, 990]),
                               self.side("half-n", [1100, 1110, 1095, 1105]))
        self.assertEqual(row["run_p50s_base"], "1.00ms 2.05ms (left out) 1.01ms 990.00us", row)
        self.assertEqual((row["runs_base"], row["runs_new"]), (3, 4), row)
        self.assertEqual(row["verdict"], "slower", row)
        self.assertIn("3+4 runs", r["summary"]["changes"])
        # Said on the first screen too, not in JSON alone.
        self.assertIn("left out", r["summary"]["runs"])
        self.assertIn("base runs 1.00ms 2.05ms (left out)", r["summary"]["runs"])

    def test_one_run_a_side_says_so(self):
        a = build(self.root, "one-a", "latency", FIXTURE_P50_US=100, FIXTURE_ONE_SERIES=1)
        b = build(self.root, "one-b", "latency", FIXTURE_P50_US=120, FIXTURE_ONE_SERIES=1)
        r = self.json_of("compare", a, b)
        [row] = [x for x in r["series"] if x["series"] == "a"]
        self.assertEqual((row["verdict"], row["runs_base"], row["band_from"]),
                         ("slower", 1, "iterations"))
        self.assertTrue(r["summary"]["runs"].startswith("one a side:"), r["summary"])
        self.assertIn("--repeat", r["summary"]["runs"])
        self.assertIn("one run a side)", r["summary"]["changes"])
        text = self.text_lines("compare", a, b)
        self.assertIn("one run a side", text)

    def test_one_run_a_side_whose_level_wanders_reads_no_change(self):
        # A server's latency wanders with its load for seconds at a time, so one run's iterations
        # say less than their number: two runs of an unchanged thread-pool server read "faster,
        # 0.83x (95%: 0.78-0.90x)" and "slower, 1.20x (1.11-1.27x)" (a fresh-eyes check). Here
        # both runs are at 100 and 67 us by eighths, five eighths at one level in the base run and
        # at the other in the new one: their medians differ by half, and nothing changed.
        wander = dict(FIXTURE_P50_US=100, FIXTURE_ONE_SERIES=1, FIXTURE_ITERS=80)
        a = build(self.root, "wander-a", "latency", FIXTURE_LEVELS="100,67,100,67,100,100,67,100",
                  **wander)
        b = build(self.root, "wander-b", "latency", FIXTURE_LEVELS="67,100,67,100,67,67,100,67",
                  **wander)
        _, row = self.series_a([a], [b])
        self.assertEqual(row["band_from"], "iterations", row)
        self.assertNotIn(row["verdict"], ("faster", "slower"), row)
        self.assertLess(row["speedup_lo"], 1, row)
        self.assertGreater(row["speedup_hi"], 1.3, row)
        # A steady run at each level: the same half is a change (the stretches agree).
        c = build(self.root, "steady-a", "latency", FIXTURE_LEVELS="100,100,100,100,100,100,100,100",
                  **wander)
        d = build(self.root, "steady-b", "latency", FIXTURE_LEVELS="67,67,67,67,67,67,67,67", **wander)
        _, row = self.series_a([c], [d])
        self.assertEqual(row["verdict"], "faster", row)
        self.assertGreater(row["speedup_lo"], 1.4, row)

    def test_every_run_is_checked_not_only_the_first(self):
        # A copy of a run counted twice narrows the band: refused wherever it stands; the runs
        # past the first are held to the warnings the first ones are.
        import shutil
        base = self.side("cp-b", [1000, 1010])
        new = self.side("cp-n", [1100, 1110])
        copy = os.path.join(self.root, "copy.db")
        shutil.copy(base[1], copy)
        self.assertOneErrorLine(self.cli("compare", *base, copy, "--", *new), "same run")
        copy0 = os.path.join(self.root, "copy0.db")
        shutil.copy(base[0], copy0)
        self.assertOneErrorLine(self.cli("compare", *base, "--", new[0], copy0), "same run")
        other = build(self.root, "cp-other", "latency", "--other", FIXTURE_P50_US=1000,
                      FIXTURE_ONE_SERIES=1)
        r = self.json_of("compare", *base, other, "--", *new)
        self.assertIn("command lines differ", r["compare"]["warnings"])
        self.assertEqual(r["compare"]["base_files"], "; ".join(base + [other]))
        # The loop rate's band is the runs' too: its verdict, its point.
        [row] = [x for x in r["series"] if x["series"] == "a"]
        self.assertIsNotNone(row["delivered_speedup"], row)
        self.assertEqual(row["p50_base_runs_ns"] > 0, True, row)

    def test_a_mode_chosen_per_process_is_compared(self):
        # MODE=no_grad, then MODE=inference_mode, a process each: the runs share no phase, each
        # ran its iterations in one; they are compared as one phase named for both, and said (a
        # fresh-eyes check: "nothing to compare").
        base = build(self.root, "mode-b", "latency", FIXTURE_P50_US=1000, FIXTURE_ONE_SERIES=1,
                     FIXTURE_MODE="no_grad")
        new = build(self.root, "mode-n", "latency", FIXTURE_P50_US=800, FIXTURE_ONE_SERIES=1,
                    FIXTURE_MODE="inference")
        r = self.json_of("compare", base, new)
        both = "no_grad | autocast off -> inference_mode | autocast off"
        [row] = [x for x in r["series"] if x["series"] == "a"]
        self.assertEqual((row["phase"], row["verdict"]), (both, "faster"), row)
        self.assertAlmostEqual(row["latency_p50_ns_ratio"], 0.8, places=2)
        [ph] = [x for x in r["phases"] if x["label"] == both]
        self.assertEqual(ph["verdict"], "faster", ph)
        self.assertIn("the runs share no phase: base's no_grad | autocast off and new's"
                      " inference_mode | autocast off are compared as one phase",
                      r["compare"]["warnings"])
        text = self.cli("compare", base, new).out.decode()
        self.assertIn("no_grad->inference", text)
        self.assertNotIn("nothing to compare", text)
        # Two names too long together are named by what differs.
        bf = build(self.root, "mode-bf", "latency", FIXTURE_P50_US=1000, FIXTURE_ONE_SERIES=1,
                   FIXTURE_MODE="inference", FIXTURE_AUTOCAST="bf16")
        fp = build(self.root, "mode-fp", "latency", FIXTURE_P50_US=800, FIXTURE_ONE_SERIES=1,
                   FIXTURE_MODE="inference", FIXTURE_AUTOCAST="fp16")
        r = self.json_of("compare", bf, fp)
        [row] = [x for x in r["series"] if x["series"] == "a"]
        self.assertEqual((row["phase"], row["verdict"]),
                         ("inference_mode | autocast bf16 -> fp16", "faster"), row)
        # Runs that share their phase are compared by it, as before: no pairing said.
        same = build(self.root, "mode-s", "latency", FIXTURE_P50_US=800, FIXTURE_ONE_SERIES=1,
                     FIXTURE_MODE="no_grad")
        r = self.json_of("compare", base, same)
        self.assertNotIn("share no phase", r["compare"]["warnings"] or "")
        [row] = [x for x in r["series"] if x["series"] == "a"]
        self.assertEqual(row["phase"], "no_grad | autocast off")

    def test_usage_errors(self):
        a = build(self.root, "use-a", "latency", FIXTURE_ONE_SERIES=1)
        b = build(self.root, "use-b", "latency", FIXTURE_ONE_SERIES=1)
        self.assertOneErrorLine(self.cli("compare", a, b, a), "BASE... -- NEW...")
        self.assertOneErrorLine(self.cli("compare", a, b, "--"), "the new side has no database")
        self.assertOneErrorLine(self.cli("compare", "--", a, b), "the base side has no database")
        self.assertOneErrorLine(self.cli("compare", a, "--", b, "--", a), "one '--'")
        self.assertOneErrorLine(self.cli("compare", a, "--", b, a), "same database")


class Repeat(Runs):
    def test_repeat_names_each_run_and_stops_at_a_failure(self):
        r = self.cli("run", "--repeat", "3", "-o", "rep.db", "--", prog("host"))
        self.assertEqual(r.rc, 0, r.err)
        for name in ("rep.db", "rep.2.db", "rep.3.db"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, name)), (name, r.err))
        self.assertIn(b"infprof compare", r.err)
        self.assertIn(b"rep.2.db", r.err)
        # A failing program: its status, the runs after the first not made.
        r = self.cli("run", "--repeat", "3", "-o", "bad.db", "--", "sh", "-c", "exit 5")
        self.assertEqual(r.rc, 5)
        self.assertIn(b"run 1 of 3 exited with status 5", r.err)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "bad.2.db")))

    def test_repeat_without_a_name_takes_a_free_one(self):
        # No -o: a stale infprof.2.db (not ours) is left alone, and the runs go to the first
        # default name whose runs are all free.
        stale = os.path.join(self.dir, "infprof.2.db")
        open(stale, "w").close()
        r = self.cli("run", "--repeat", "2", "--", "/bin/true")
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(os.path.getsize(stale), 0)
        for name in ("infprof-2.db", "infprof-2.2.db"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, name)), (name, r.err))

    def test_repeat_checks_every_name_before_the_first_run(self):
        open(os.path.join(self.dir, "x.2.db"), "w").close()
        r = self.cli("run", "--repeat", "2", "-o", "x.db", "--", "sh", "-c", "echo ran")
        self.assertOneErrorLine(r, "x.2.db exists")
        self.assertEqual(r.out, b"")  # the program never ran
        self.assertFalse(os.path.exists(os.path.join(self.dir, "x.db")))
        self.assertOneErrorLine(self.cli("run", "--repeat", "0", "/bin/true"), "--repeat")
        self.assertOneErrorLine(self.cli("run", "--repeat", "2", "-o", "p-%p.db", "/bin/true"),
                                "pattern")


if __name__ == "__main__":
    main()
