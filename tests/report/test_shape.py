"""A fixed shape of the machine-readable report (issue 25 item 8): `report --format json` has the
same keys, at the top and in every row of every section, and `--csv-dir` writes the same files
with the same header, for every run: the four H100 fixtures and a CPU run of the libtorch
sample. A section with nothing to say is an empty list (or null for an object), never a missing
key or file; the document says its json_schema_version; shares are percentages."""
import csv
import lzma
import os
import shutil
import unittest

from harness import BUILD, Case, main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h100")
FIXTURES = ["resnet50-b32-script", "convnet-b32-noeval", "transformer-b8",
            "resnet50-b1-python-eager"]
SAMPLE_INFER = os.path.join(BUILD, "bin", "infprof-sample-infer")


class Shape(Case):
    def databases(self):
        out = {}
        for name in FIXTURES:
            path = os.path.join(self.dir, name + ".db")
            with lzma.open(os.path.join(DATA, name + ".db.xz")) as src, \
                    open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
            out[name] = path
        if not os.path.exists(SAMPLE_INFER):
            raise unittest.SkipTest("infprof-sample-infer was not built (libtorch not found)")
        r = self.run_prog([SAMPLE_INFER, "--iters", "3", "--batch", "2", "--image", "32"],
                          timeout=300, INFPROF_OUTPUT=os.path.join(self.dir, "cpu.db"))
        self.assertEqual(r.rc, 0, r.err)
        out["cpu-sample"] = os.path.join(self.dir, "cpu.db")
        return out

    @staticmethod
    def keys(doc):
        """Top-level keys, and for each section the keys of its rows (or its object)."""
        shape = {}
        for key, value in doc.items():
            if isinstance(value, list):
                rows = {tuple(row) for row in value}
                shape[key] = ("list", rows.pop() if len(rows) == 1 else rows or None)
            elif isinstance(value, dict) or value is None:
                shape[key] = ("object", tuple(value) if value else None)
            else:
                shape[key] = (type(value).__name__,)
        return shape

    def test_same_keys_and_files_for_every_run(self):
        dbs = self.databases()
        top, rows, files = {}, {}, {}
        for name, db in dbs.items():
            doc = self.report_json(db)
            self.assertEqual(doc["json_schema_version"], 1)
            top[name] = list(doc)
            for key, (kind, *cols) in self.keys(doc).items():
                # A row's keys are the section's, whatever the run: a set of several is a bug.
                self.assertNotIsInstance(cols[0] if cols else None, set, (name, key))
                if cols and cols[0] is not None:
                    rows.setdefault(key, {})[name] = cols[0]
            out = os.path.join(self.dir, "csv-" + name)
            r = self.cli("report", "--csv-dir", out, db)
            self.assertEqual(r.rc, 0, r.err)
            files[name] = {}
            for f in sorted(os.listdir(out)):
                with open(os.path.join(out, f), newline="") as fh:
                    files[name][f] = next(csv.reader(fh), None)
        first = FIXTURES[0]
        for name in dbs:
            with self.subTest(run=name):
                self.assertEqual(top[name], top[first])
                self.assertEqual(sorted(files[name]), sorted(files[first]))
                for f, header in files[name].items():
                    self.assertEqual(header, files[first][f], f)
        for key, by_run in rows.items():
            with self.subTest(section=key):
                self.assertEqual(len(set(by_run.values())), 1, by_run)
        # The same files as JSON sections (every keyed section has its CSV file).
        self.assertEqual(sorted(files[first]),
                         sorted(k + ".csv" for k in top[first] if k != "json_schema_version"))

    def test_one_unit_for_shares_and_null_for_no_reserve(self):
        # Shares are percentages (0-100) everywhere, precision_mix included (it gave fractions
        # beside gpu_busy_pct's percent); the CPU allocator keeps no reserve: its reserved peak
        # is null, not 0 (docs/report.md).
        db = os.path.join(self.dir, "convnet.db")
        with lzma.open(os.path.join(DATA, "convnet-b32-noeval.db.xz")) as src, \
                open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        for p in self.report_json(db)["phases"]:
            with self.subTest(phase=p["label"]):
                if p["precision_mix"]:
                    self.assertAlmostEqual(sum(p["precision_mix"].values()), 100, places=2)
                self.assertIsNone(p["peak_reserved_by_device"]["cpu"])
                self.assertGreater(p["peak_allocated_by_device"]["cpu"], 0)
                self.assertGreater(p["peak_reserved_by_device"]["cuda:0"], 0)


if __name__ == "__main__":
    main()
