"""The report on databases recorded on this CPU machine (tests/data/cpu, README there).

sampled-operators-mlp: operators sampled, 17 captured iterations measurably slower and so set
apart from the latencies, while every count (the Phases table's steady iterations, the combined
report of several processes, the Between table's gaps) keeps them as the steady iterations they
are. A debug build (CI's clang and ASan builds run this tier) once aborted on it: the run model's
invariant had forgotten them."""
import lzma
import os
import shutil
import sqlite3

from harness import Case, main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "cpu")


class SampledOperators(Case):
    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.dir, "a.db")
        with lzma.open(os.path.join(DATA, "sampled-operators-mlp.db.xz")) as f, \
                open(self.db, "wb") as out:
            shutil.copyfileobj(f, out)

    def test_captured_iterations_count_as_steady_everywhere(self):
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0, r.err)  # a debug build's run_check once aborted here
        report = self.report_json(self.db)
        ph, = [p for p in report["phases"] if p["iterations"]]
        self.assertEqual((ph["iterations"], ph["steady_iterations"], ph["warmup_iterations"]),
                         (60, 59, 1), ph)
        rows = [i for i in report["iterations"] if i["phase"] == ph["label"]]
        captured = sum(i["captured"] for i in rows)
        self.assertEqual(captured, 17)
        self.assertEqual(sum(i["steady"] for i in rows), 59 - captured)
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
        self.assertEqual((row["iterations"], row["steady_iterations"]), (120, 118), row)
        self.assertEqual(row["latency_p50_ns"], ph["latency_p50_ns"], (row, ph))
        procs = [p["steady_iterations"] for p in multi["processes"]]
        self.assertEqual(procs, [59, 59], multi["processes"])


if __name__ == "__main__":
    main()
