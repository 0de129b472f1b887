"""The report on databases recorded on this CPU machine (tests/data/cpu, README there).

every5th-longer-noisy-nohooks, every10th-longer-noisy-nohooks: Python loops with the module hooks
off, every Nth forward longer and every forward randomly slower (a loaded machine): one detected
iteration a forward, the longer ones the tail (DetectedUnderNoise).

int8-fp32-one-after-other: one process's verdict between two loops, said to be one run's; a
tail no recorded cause explains, said once (OneAfterTheOther).

requests-in-a-batch-loaded: a server's batches of requests whose worker woke late under load:
the batches hold the calls (RequestsInABatchUnderLoad).

batch-sweep-bf16: one model at batch 1, 8 and 32 under no_grad, then batch 8 under
inference_mode and CPU autocast bf16: the Fastest line names no phase fastest over a pooled one,
the best batch against the next with a band, no memory saving across batch sizes (BatchSweep).

gc-every-50th, preempted-under-load: a collection every 50th forward, and a loop preempted by
the machine's other work: each cause in the words and figures the program's own truth gives
(TailCauses).

sampled-operators-mlp: operators sampled, 17 captured iterations measurably slower and so set
apart from the latencies, while every count (the Phases table's steady iterations, the combined
report of several processes, the Between table's gaps) keeps them as the steady iterations they
are. A debug build (CI's clang and ASan builds run this tier) once aborted on it: the run model's
invariant had forgotten them."""
import json
import os
import re
import shutil
import sqlite3

from harness import Case, main, unpack

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "cpu")


class DetectedUnderNoise(Case):
    def report(self, name):
        db = unpack(os.path.join(DATA, name + ".db.xz"), os.path.join(self.dir, name + ".db"))
        r = self.cli("report", "--format", "json", db)
        self.assertEqual(r.rc, 0, r.err)
        rep = json.loads(r.out)
        ph, = [p for p in rep["phases"] if p["iterations"]]
        self.assertEqual(ph["iteration_source"], "detected from the allocations")
        return rep, ph

    def test_every_fifth_longer(self):
        # 100 forwards, its own p50 46.88 ms (30th-70th percentile 37.22-56.45): before, one
        # iteration of 5 forwards, 19 of them at 231 ms.
        _, ph = self.report("every5th-longer-noisy-nohooks")
        self.assertGreaterEqual(ph["iterations"], 95, ph)
        self.assertGreater(ph["latency_p50_ns"], 0.95 * 37.22e6, ph)
        self.assertLess(ph["latency_p50_ns"], 1.05 * 56.45e6, ph)

    def test_every_tenth_longer(self):
        # Its longer forwards' mean 74.45 ms by its own timer, the others' median 44.28 ms:
        # before, each longer one and the next were one iteration, "every 9th, 120.3 ms".
        rep, ph = self.report("every10th-longer-noisy-nohooks")
        self.assertGreaterEqual(ph["iterations"], 89, ph)
        self.assertLess(abs(ph["latency_p50_ns"] / 44.28e6 - 1), 0.1, ph)
        t, = rep["tails"]
        self.assertRegex(t["pattern"], r"^every 10th from #\d", t)
        self.assertLess(abs(t["slow_mean_ns"] / 74.45e6 - 1), 0.1, t)


class OneAfterTheOther(Case):
    """int8-fp32-one-after-other: an MLP of width 64 and its int8 copy, 1,000 forwards each,
    one loop after the other (a fresh-eyes check's, 2026-11-30): this process read fp32 faster,
    the next one int8 (and so did plain runs): a verdict of one run says so."""

    def setUp(self):
        super().setUp()
        db = unpack(os.path.join(DATA, "int8-fp32-one-after-other.db.xz"),
                    os.path.join(self.dir, "a.db"))
        r = self.cli("report", "--format", "json", db)
        self.assertEqual(r.rc, 0, r.err)
        self.rep = json.loads(r.out)
        self.summary = self.rep["summary"]

    def test_the_verdict_is_of_one_run(self):
        m = re.match(r"^no_grad/off: Sequential fastest, p50 389\.16us: 1\.18x Sequential quantized"
                     r" \(458\.58us\), faster \(95%: (1\.\d\d)-(1\.\d\d)x, one run\)$",
                     self.summary["series"])
        self.assertIsNotNone(m, self.summary["series"])
        # The same pair as data, on the fastest configuration's row (one computation).
        rows = {x["series"]: x for x in self.rep["series"]}
        fast = rows["Sequential"]
        self.assertEqual((fast["speedup_against"], fast["verdict"]),
                         ("Sequential quantized", "faster"))
        self.assertEqual(f"{fast['speedup']:.2f}", "1.18")
        self.assertEqual((f"{fast['speedup_low']:.2f}", f"{fast['speedup_high']:.2f}"),
                         m.groups())
        self.assertIsNone(rows["Sequential quantized"]["verdict"])
        # The phase pools both: a script reads so (its p50 is none of theirs).
        ph, = [x for x in self.rep["phases"] if x["iterations"]]
        self.assertEqual(ph["series_count"], 2, ph)

    def test_a_tail_without_a_cause_is_said_once(self):
        # It read "no recorded cause explains the extra; a guess: no recorded cause; ...".
        tail = self.summary["tail"]
        self.assertIn("no recorded cause explains the extra; INFPROF_OPERATORS=1 times the"
                      " operators of each iteration", tail)
        self.assertEqual(tail.count("no recorded cause"), 1, tail)


class RequestsInABatchUnderLoad(Case):
    """requests-in-a-batch-loaded: a server's batch of four requests marked on its front thread,
    its worker's calls late and short under load: the batch's marks hold them (one a request)."""

    def test_the_batches_hold_their_requests_calls(self):
        db = unpack(os.path.join(DATA, "requests-in-a-batch-loaded.db.xz"),
                    os.path.join(self.dir, "a.db"))
        r = self.cli("report", "--format", "json", db)
        self.assertEqual(r.rc, 0, r.err)
        series = {(s["phase"], s["series"]): s["iterations"] for s in json.loads(r.out)["series"]}
        self.assertEqual(series, {("inference_mode | autocast off", "batch"): 30}, series)


class SampledOperators(Case):
    def setUp(self):
        super().setUp()
        self.db = unpack(os.path.join(DATA, "sampled-operators-mlp.db.xz"),
                         os.path.join(self.dir, "a.db"))

    def test_cut_operator_names_stay_readable_and_distinct(self):
        # The H200 run's operators at 100 columns (a 16-column name): the middle cut made
        # "aten::...olution" of three of them, and a hash tag then left "ate...tion #0b67".
        # Each is now cut where its text is its own ("aten::cud...tion", "aten::con...tion"), a
        # tag only where no cut is; the names a phase shows are distinct. This database's
        # operators renamed to the H200's.
        h200 = ["aten::cudnn_convolution", "aten::_convolution", "aten::convolution",
                "aten::cudnn_batch_norm", "aten::native_batch_norm", "aten::native_layer_norm",
                "aten::_batch_norm_impl_index", "aten::max_pool2d_with_indices"]
        con = sqlite3.connect(self.db)
        ids = [r[0] for r in con.execute("SELECT DISTINCT name_id FROM torch_operators"
                                         " ORDER BY name_id")]
        self.assertGreaterEqual(len(ids), len(h200))
        for i, name in zip(ids, h200):
            con.execute("UPDATE strings SET value = ? WHERE id = ?", (name, i))
        con.commit()
        con.close()
        text = self.cli("report", self.db, COLUMNS="80").out.decode()
        table = text.split("PyTorch operators by phase (self CPU time)\n")[1]
        table = table.split("\n  estimated")[0].splitlines()
        at = table[0].index("Operator")
        names = [line[at:].split("  ")[0] for line in table[1:]]
        self.assertEqual(len(names), 11, table)
        self.assertEqual(len(names), len(set(names)), names)
        cut = [n for n in names if "..." in n]
        self.assertGreaterEqual(len(cut), 6, names)
        self.assertFalse([n for n in names if "#" in n], names)
        self.assertIn("aten::cud...tion", names)
        self.assertIn("aten::con...tion", names)
        self.assertTrue(all(n.startswith("ate") for n in cut), names)

    def test_captures_early_in_a_run_do_not_weigh_its_latencies_late(self):
        # The first captures come dense (1 in 4, then spaced to a budget): here all 17 in the
        # run's first half, which ran at 1 ms an iteration, the second half at 2 ms, each capture
        # costing a quarter more (1.25 ms). Leaving them out gave a p50 of 2 ms, where every
        # iteration after the warm-up, the captures' own cost apart, says 1 ms; a server's
        # Requests p50 once read 18% over its own log's so. Each captured one now counts at its
        # time over what a capture adds in its series (1.25 ms / 1.25).
        before = self.report_json(self.db)
        ids = [i["id"] for i in sorted(before["iterations"], key=lambda i: i["start_ns"])]
        self.assertEqual(len(ids), 60)
        captured = ids[1:35:2]  # 17: the 2nd, 4th, ... 34th
        con = sqlite3.connect(self.db)
        row = con.execute("SELECT start, dur, tid, phase FROM iterations WHERE id = ?",
                          (ids[1],)).fetchone()
        con.execute("DELETE FROM torch_operator_windows")
        con.executemany("INSERT INTO torch_operator_windows(start, dur, iter, tid, phase)"
                        " VALUES (?, ?, ?, ?, ?)", [(row[0], row[1], i, row[2], row[3])
                                                    for i in captured])
        for k, i in enumerate(ids):
            con.execute("UPDATE iterations SET dur = ? WHERE id = ?",
                        (1_250_000 if i in captured else 1_000_000 if k < 35 else 2_000_000, i))
        con.commit()
        con.close()
        report = self.report_json(self.db)
        ph, = [p for p in report["phases"] if p["iterations"]]
        self.assertEqual(ph["captured_iterations"], 17, ph)
        rows = [i for i in report["iterations"] if i["phase"] == ph["label"]]
        truth = sorted(1_000_000 if i["captured"] else i["latency_ns"] for i in rows
                       if i["steady"] or i["captured"])
        self.assertEqual(truth[len(truth) // 2], 1_000_000)
        self.assertEqual(ph["latency_p50_ns"], 1_000_000, ph)
        series, = [x for x in report["series"] if x["phase"] == ph["label"]]
        self.assertEqual(series["latency_p50_ns"], 1_000_000, series)
        self.assertEqual(series["steady_iterations"], ph["steady_iterations"])

    def test_captured_iterations_are_counted_apart_everywhere(self):
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0, r.err)  # a debug build's run_check once aborted here
        report = self.report_json(self.db)
        ph, = [p for p in report["phases"] if p["iterations"]]
        # warm-up + steady + captured, three parts apart (steady once counted the captured too)
        self.assertEqual((ph["iterations"], ph["steady_iterations"], ph["warmup_iterations"],
                          ph["captured_iterations"]), (60, 42, 1, 17), ph)
        rows = [i for i in report["iterations"] if i["phase"] == ph["label"]]
        self.assertEqual(sum(i["captured"] for i in rows), 17)
        self.assertEqual(sum(i["steady"] for i in rows), 42)
        # The gaps after captured iterations are gaps all the same: one after each steady
        # iteration but the last (it once counted 41 here).
        between, = report["between"]
        self.assertEqual(between["gaps"], 58, between)
        # Two processes: the combined counts are the sums of each one's.
        b = os.path.join(self.dir, "b.db")
        shutil.copy(self.db, b)
        con = sqlite3.connect(b)  # another process (the same run twice is refused)
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'pid'")
        con.execute("UPDATE meta SET value = value + 1000000000 WHERE key = 'start_unix_ns'")
        con.commit()
        con.close()
        import json
        multi = json.loads(self.cli("report", "--format", "json", self.db, b).out)
        row, = [p for p in multi["combined_phases"] if p["label"] == ph["label"]]
        self.assertEqual((row["iterations"], row["steady_iterations"], row["captured_iterations"],
                          row["warmup_iterations"]), (120, 84, 34, 2), row)
        self.assertEqual(row["latency_p50_ns"], ph["latency_p50_ns"], (row, ph))
        procs = [p["steady_iterations"] for p in multi["processes"]]
        self.assertEqual(procs, [42, 42], multi["processes"])


def fixture_report(case, name):
    db = unpack(os.path.join(DATA, name + ".db.xz"), os.path.join(case.dir, name + ".db"))
    r = case.cli("report", "--format", "json", db)
    case.assertEqual(r.rc, 0, r.err)
    return json.loads(r.out), db


class BatchSweep(Case):
    """batch-sweep-bf16: batch_sweep.py (a fresh-eyes check's, 2026-12-01), its own timer while
    profiled: batch 1 p50 2.801 ms, batch 8 5.536 ms, batch 32 25.436 ms, bf16 at batch 8
    43.969 ms; loop rates 314.4, 1364.8 and 1281.0 items/s (eight runs of it put 8 or 32 first
    four times each)."""

    def test_no_phase_is_named_fastest_over_a_pooled_one(self):
        # It read "inference/bf16, p50 43.88ms; not ranked: not ranked: no_grad/off pools 3
        # series...": bf16 named fastest at 8x no_grad's batch-8 latency.
        rep, _ = fixture_report(self, "batch-sweep-bf16")
        self.assertEqual(rep["summary"]["fastest"],
                         "not ranked: no_grad/off pools 3 series, whose p50 mixes them (the Series"
                         " line has each); the other phase inference/bf16, p50 43.88ms")

    def test_the_best_batch_against_the_next_has_a_band(self):
        # "batch 8 gives the most items/s" named a winner the next run reversed.
        rep, _ = fixture_report(self, "batch-sweep-bf16")
        self.assertRegex(rep["summary"]["series"],
                         r"^no_grad/off: SmallCNN: batch 8 gives the most items/s, [0-9.]+x batch"
                         r" 1's, at [0-9.]+x its p50 \([0-9.]+ms\); 1\.0\dx batch 32's, no clear"
                         r" difference$")
        sweep = {r["batch"]: r for r in rep["batch_sweep"] if r["phase"].startswith("no_grad")}
        self.assertEqual(sorted(sweep), [1, 8, 32], rep["batch_sweep"])

    def test_no_memory_saving_across_batch_sizes(self):
        # "inference/bf16 needs 8.30MiB less (77%)": batch 8 against no_grad's batch 32.
        rep, _ = fixture_report(self, "batch-sweep-bf16")
        s = rep["summary"]
        self.assertIn("; no saving stated: no_grad/off's largest batch is 32, inference/bf16's 8",
                      s["memory"])
        self.assertIsNone(s["peak_allocated_saved_bytes"], s)
        for ph in rep["phases"]:
            if ph["grad_mode"] == "inference_mode":
                self.assertIsNone(ph["peak_allocated_saved_bytes"], ph)

    def test_cpu_autocast_says_what_is_known(self):
        # CPU autocast bf16 ran its convolutions in bf16 (8x slower); the Autocast line said only
        # that no CUDA ran, and the operators table "Precision float".
        rep, _ = fixture_report(self, "batch-sweep-bf16")
        self.assertIn("; on the CPU inference/bf16 made 2.00 casts an iteration against 1.00"
                      " without autocast (autocast's conversions to the type asked for and the"
                      " program's own; the operators' dtypes are not recorded",
                      rep["summary"]["autocast"])
        self.assertEqual({p["precision"] for p in rep["operator_phases"]}, {"float"})
        _, db = fixture_report(self, "batch-sweep-bf16")
        r = self.cli("report", "--section", "operator_phases", db)
        self.assertIn("else 'float' (fp32, bf16 and fp16 alike: the operators' dtypes are not"
                      " recorded)", " ".join(r.out.decode().split()))

    def test_findings_of_one_phase_are_not_counted_as_phases(self):
        rep, _ = fixture_report(self, "batch-sweep-bf16")
        faults = [a for a in rep["advice"] if a["rule"] == "page_faults"]
        self.assertEqual(len({a["phase"] for a in faults}), 1, faults)
        self.assertRegex(rep["summary"]["findings"], rf"^page_faults \({len(faults)} findings\): ")


class TailCauses(Case):
    def test_a_collection_in_some_slow_iterations_is_said_per_collection(self):
        # tail_causes.py b: gc.collect() every 50th forward, 60 of them at 55.99 ms each by the
        # program's own timer (gc_ms); it read "ran 25.63 ms in each slow iteration", the 60
        # averaged over 131 slow ones.
        rep, _ = fixture_report(self, "gc-every-50th")
        t, = rep["tails"]
        c, = [c for c in rep["tail_causes"] if c["cause"] == "gc"]
        m = re.search(r"ran in (\d+) of the (\d+) slow iterations, ([0-9.]+) ms in each of them",
                      c["detail"])
        self.assertTrue(m, c["detail"])
        self.assertEqual(int(m.group(1)), 60)
        self.assertEqual(int(m.group(2)), t["slow_iterations"])
        self.assertLess(abs(float(m.group(3)) / 55.99 - 1), 0.1, c["detail"])
        self.assertRegex(t["pattern"], r"^every 50th from #49", t)

    def test_no_cause_takes_more_than_its_series_extra(self):
        # A preempted loop (tail_causes.py e beside another tester's programs): the cause read
        # 2.22 ms under a series' extra of 1.84 ms.
        rep, _ = fixture_report(self, "preempted-under-load")
        for t in rep["tails"]:
            causes = [c for c in rep["tail_causes"] if c["series"] == t["series"]]
            self.assertTrue(causes, rep["tail_causes"])
            for c in causes:
                self.assertLessEqual(c["extra_ns"], t["extra_ns"], c)
                self.assertAlmostEqual(c["extra_ns"] / t["extra_ns"], c["share_pct"] / 100,
                                       places=3)
            self.assertEqual([c["cause"] for c in causes], ["preempted"], causes)

    def test_the_writers_cycle_in_the_slow_iterations_is_named(self):
        # Nothing injected: 42 of the 59 gaps between its slow iterations are multiples of the
        # writer's 100 ms cycle (the program kept both CPUs busy); they read as the machine's.
        rep, db = fixture_report(self, "preempted-under-load")
        t, = rep["tails"]
        self.assertEqual(t["writer_cycle_gaps"], 42, t)
        r = self.cli("report", db)
        self.assertIn("42 of the 59 gaps between them a multiple of infprof's writer cycle"
                      " (100 ms): the profile's own work took the CPU from the program",
                      " ".join(r.out.decode().split()))
        # A collection every 50th forward keeps no such cadence.
        rep, _ = fixture_report(self, "gc-every-50th")
        self.assertEqual([t["writer_cycle_gaps"] for t in rep["tails"]], [None], rep["tails"])


if __name__ == "__main__":
    main()
