"""Helpers shared by the export tests: build fixture databases, run `infprof export`, read the
trace exactly (times as Decimal, so nanoseconds are compared exactly), and check the rules
Perfetto's JSON importer relies on."""
import json
import lzma
import os
import shutil
from decimal import Decimal

from harness import Case, prog

UINT32 = 2 ** 32
PHASE_TID_BASE = 1000000000
GPU_PID_BASE = 1000000000


def ns(us):
    """A trace time (microseconds, decimal) back to integer nanoseconds, exactly."""
    v = Decimal(str(us)) * 1000
    assert v == v.to_integral_value(), us
    return int(v)


def load(path_or_bytes):
    if isinstance(path_or_bytes, bytes):
        data = path_or_bytes
    else:
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    return json.loads(data.decode("utf-8"), parse_float=Decimal)


H100 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "h100")


def h100_copy(directory, name):
    """A fresh copy of the H100 fixture `name` (tests/data/h100/NAME.db.xz) in directory."""
    db = os.path.join(directory, name + ".db")
    with lzma.open(os.path.join(H100, name + ".db.xz")) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return db


class ExportCase(Case):
    def fixture(self, *args, name="run.db"):
        r = self.run_prog([prog("fixture_export"), *args, name], preload=False, timeout=300)
        self.assertEqual(r.rc, 0, r.err.decode())
        return r.db(name)

    def export(self, db, *args, out="trace.json"):
        r = self.cli("export", db, "-o", out, *args)
        self.assertEqual(r.rc, 0, r.err.decode())
        path = os.path.join(self.dir, out)
        return load(path), path, r

    def assertPerfettoReadable(self, doc):
        """What Perfetto's JSON importer needs: see docs/export.md."""
        self.assertNotIn("displayTimeUnit", doc)  # Perfetto would read ts as that unit
        for e in doc["traceEvents"]:
            self.assertIn(e["ph"], "XBbeisfCM", e)
            self.assertIsInstance(e["pid"], int)
            self.assertTrue(0 < e["pid"] < UINT32, e)
            if "tid" in e:
                self.assertTrue(0 < e["tid"] < UINT32, e)  # 0 would mean "the pid"
            if e["ph"] != "M":
                ns(e["ts"])
            if e["ph"] == "X":
                self.assertGreaterEqual(ns(e["dur"]), 0)
            if e["ph"] in "be":
                self.assertIsInstance(e["id"], str)  # older importers need string ids
            if e["ph"] in "sf":
                self.assertIsInstance(e["id"], int)
        self.assertNested(doc)

    def assertNested(self, doc):
        """Slices on one track (pid, tid) nest strictly: a partial overlap is shown wrongly."""
        tracks = {}
        for e in doc["traceEvents"]:
            if e["ph"] in "XB":
                end = ns(e["ts"]) + ns(e["dur"]) if e["ph"] == "X" else float("inf")
                tracks.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), end, e["name"]))
        for key, slices in tracks.items():
            stack = []
            for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
                while stack and stack[-1][1] <= start:
                    stack.pop()
                if stack:
                    self.assertLessEqual(end, stack[-1][1],
                                         f"{name} overlaps {stack[-1][2]} on track {key}")
                stack.append((start, end, name))

    def events(self, doc, ph=None, cat=None):
        return [e for e in doc["traceEvents"]
                if (ph is None or e["ph"] == ph) and (cat is None or e.get("cat") == cat)]

    def track_names(self, doc):
        return {(e["pid"], e.get("tid")): e["args"]["name"] for e in doc["traceEvents"]
                if e["ph"] == "M" and e["name"] in ("thread_name", "process_name")}
