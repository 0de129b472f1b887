"""`infprof report --columns SECTION=COL,...` (report/render/render_columns.c): a section shown with
the columns a user picks, in that order, as perf report's -F picks its fields; each one the data
table's own column (its JSON key), so text, Markdown, CSV and JSON read the same figures. An
unknown section or column exits 2 with one line that lists what there is. Read on the H200
fixture (tests/data/h200)."""
import csv
import io
import json
import lzma
import os
import re
import shutil
import tempfile

from harness import Case, main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h200", "energy-cpu.db.xz")
PICK = "series=series,iterations,warmup_iterations,captured_iterations,latency_p50_ns"


class Columns(Case):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="infprof-columns-")
        cls.db = os.path.join(cls.tmp, "h200.db")
        with lzma.open(DATA) as src, open(cls.db, "wb") as dst:
            shutil.copyfileobj(src, dst)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ok(self, *args):
        r = self.cli("report", *args, COLUMNS="100")
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(r.err, b"")
        return r.out.decode()

    def test_the_picked_columns_in_every_format_are_the_sections_own(self):
        whole = {(s["phase"], s["series"]): s for s in self.report_json(self.db)["series"]}
        keys = PICK.split("=")[1].split(",")
        doc = json.loads(self.ok("--format", "json", "--columns", PICK, self.db))
        self.assertEqual(len(doc["series"]), len(whole))
        for row, want in zip(doc["series"], whole.values()):
            self.assertEqual(list(row), keys)  # only these, in this order
            self.assertEqual(row, {k: want[k] for k in keys})
        self.assertIn("phases", doc)  # the other sections keep every column
        self.assertIn("latency_p95_ns", doc["phases"][0])
        rows = list(csv.reader(io.StringIO(
            self.ok("--format", "csv", "--section", "series", "--columns", PICK, self.db))))
        self.assertEqual(rows[0], keys)
        self.assertEqual([r[1] for r in rows[1:]], [str(s["iterations"]) for s in whole.values()])
        text = self.ok("--columns", PICK, self.db)
        table = text.split("\nSeries (")[1].split("\n\n")[0].splitlines()
        # Text titles where the column has one (Warm-up, Captured, p50), else the key.
        self.assertRegex(table[1], r"^  Series\s+iterations\s+Warm-up\s+Captured\s+p50$")
        self.assertEqual(len(table), 2 + len(whole))  # no note: the view gave way
        self.assertRegex(table[2], r"^  ResNet\s+381\s+5\s+94\s+4\.93ms$")
        md = self.ok("--format", "md", "--columns", PICK, self.db)
        self.assertIn("| Series | iterations | Warm-up | Captured | p50 |", md)

    def test_two_sections_and_a_section_with_views(self):
        # phases: a data table whose text is three views (overview, warm-up, against the
        # baseline); picked columns replace them with one table.
        text = self.ok("--columns", "phases=label,iterations,latency_p50_ns",
                       "--columns", "series=series", self.db)
        self.assertNotIn("\nPhases against ", text)
        self.assertNotIn("\nWarm-up (left out", text)
        phases = text.split("\nPhases (grad mode / autocast)\n")[1].split("\n\n")[0]
        self.assertRegex(phases.splitlines()[0], r"^  label\s+iterations\s+p50$")
        self.assertIn("inference_mode | autocast bf16", phases)
        self.assertRegex(text.split("\nSeries (")[1].split("\n\n")[0].splitlines()[1],
                         r"^  Series$")

    def test_a_wrong_name_is_one_line_listing_the_names(self):
        long = "series=" + ",".join(["label"] * 400)
        for args, want in (
                (["series=foo"], r"series=\.\.\.: no column 'foo' in series \(columns: phase,"
                                 r" series,"),
                (["sereis=series"], r"sereis=\.\.\.: no such section \(sections: summary, run,"),
                (["series"], r"needs SECTION=COLUMN,COLUMN"),
                (["series="], r"series=: no column named \(columns: phase, series,"),
                (["series=series,iterations,iterations"],
                 r"series=\.\.\.: column 'iterations' named twice"),
                (["series=series", "--columns", "series=phase"],
                 r"series=\.\.\.: given twice \(one list per section\)"),
                # a long list: the reason still in the line (it was cut off past 2 KB)
                ([long], r"series=\.\.\.: no column 'label' in series \(columns:")):
            r = self.cli("report", "--columns", *args, self.db)
            self.assertEqual(r.rc, 2, args[0][:40])
            self.assertEqual(r.out, b"", args[0][:40])
            err = r.err.decode()
            self.assertEqual(err.count("\n"), 1, err)
            self.assertRegex(err, r"^infprof: --columns " + want, args[0][:40])
            self.assertLess(len(err), 2000, args[0][:40])
        r = self.cli("report", "--format", "html", "--columns", PICK, self.db)
        self.assertEqual(r.rc, 2)
        self.assertIn("not html", r.err.decode())

if __name__ == "__main__":
    main()
