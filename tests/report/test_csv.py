"""CSV that pandas reads: one tidy table per section, with --section (to stdout) or --csv-dir
(a file per section), the same rows as the JSON document. Read with Debian's python3-pandas."""
import io
import json
import lzma
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import Case, main, python_with

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h100", "convnet-b32-noeval.db.xz")
PYTHON = python_with("pandas")  # CI: Debian's, with python3-pandas (scripts/deps.sh)

READ = """
import glob, json, os, sys
import pandas
out = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    frame = pandas.read_csv(path)
    out[os.path.basename(path)[:-4]] = [len(frame), list(frame.columns)]
print(json.dumps(out))
"""


class Csv(Case):
    def test_every_section_loads_with_pandas(self):
        if not PYTHON:
            self.skipTest("no Python with pandas (CI installs python3-pandas: scripts/deps.sh)")
        db = os.path.join(self.dir, "c.db")
        with lzma.open(DATA) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        out = os.path.join(self.dir, "csv")
        r = self.cli("report", "--csv-dir", out, db)
        self.assertEqual(r.rc, 0, r.err)
        p = subprocess.run([PYTHON, "-c", READ, out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        frames = json.loads(p.stdout)
        doc = self.report_json(db)
        for key, value in doc.items():
            if key == "run" or key == "summary":  # one object: one row
                self.assertEqual(frames[key][0], 1, key)
            elif isinstance(value, list) and value:
                self.assertEqual(frames[key][0], len(value), key)
                self.assertEqual(frames[key][1], list(value[0].keys()), key)
        self.assertIn("phases", frames)
        # One section to stdout: the same tidy table.
        one = self.cli("report", "--format", "csv", "--section", "phases", db)
        self.assertEqual(one.rc, 0)
        with open(os.path.join(out, "phases.csv"), "rb") as f:
            self.assertEqual(one.out, f.read())
        # Never over an existing file.
        again = self.cli("report", "--csv-dir", out, db)
        self.assertOneErrorLine(again, "kept")


if __name__ == "__main__":
    main()
