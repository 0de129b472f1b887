"""Golden files for the reports of more than one database (issue 53): `infprof compare` of two
fixture runs and `infprof report` of both together (a report of several processes), in text,
JSON, CSV and Markdown (golden_runs/{compare,multi}.EXT). The runs are fixture_advice's
tail-malloc and tail-sync: synthetic records, the same figures on every run; what legitimately
differs between two runs is normalised and nothing else: each run's command, pid, host, start,
duration, output path, version and own cost, the "pid N on HOST" process names (and in text the
width of the columns they set), and the timelines, whose buckets follow the run's wall time.

Regenerate after an intended change with INFPROF_UPDATE_GOLDEN=1 (as golden_util.py says)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import Case, main, prog

sys.path.insert(0, os.path.dirname(__file__))
import golden_util  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_runs")
FORMATS = {"text": "txt", "json": "json", "csv": "csv", "md": "md"}
KEYS = golden_util.RUN_KEYS
TITLES = golden_util.RUN_TITLES + golden_util.RUN_ANY_TITLES
RUNS = ("tail-malloc", "tail-sync")


def normalise(fmt, text):
    text = re.sub(r"pid \d+ on [A-Za-z0-9_.-]+", "pid <pid> on <host>", text)
    if fmt == "json":
        doc = json.loads(text)
        for k in [k for k in doc if k.endswith("_timeline")]:
            del doc[k]
        text = json.dumps(doc, indent=2, ensure_ascii=False)
        return re.sub(r'^(\s*)"(' + "|".join(KEYS) + r')": .*?(,?)$', r'\1"\2": "<\2>"\3', text,
                      flags=re.M)
    if fmt == "csv":
        out, header, skip = [], None, False
        for line in text.split("\n"):
            if line.startswith("# ") or not line:
                skip = line.endswith("_timeline")
                header = None
                if not skip:
                    out.append(line)
                continue
            if skip:
                continue
            if header is None:
                header = line.split(",")
                out.append(line)
                continue
            row = golden_util._csv_fields(line)
            if len(row) == len(header):
                row = [f"<{h}>" if h in KEYS and v else v for h, v in zip(header, row)]
            out.append(",".join(row))
        return "\n".join(out)
    out, wrapped = [], False
    for line in text.split("\n"):
        if wrapped and fmt == "text" and re.match(r"^ {6,}\S", line):
            continue  # a normalised value's continuation lines
        wrapped = False
        for t in TITLES:
            if fmt == "text" and re.match(rf"^  {t}\s{{2,}}\S", line):
                line = re.sub(r"^(  \S.*?\s{2,})\S.*$", rf"\g<1><{t}>", line)
                wrapped = True
            elif fmt == "md" and line.startswith(f"| {t} | "):
                line = f"| {t} | <{t}> |"
        # The process names set some columns' widths: the spacing is not held, the cells are.
        out.append(re.sub(r" {2,}", "  ", line) if fmt == "text" else re.sub(r" +\|", " |", line))
    return "\n".join(out)


def setUpModule():
    global DBDIR
    DBDIR = tempfile.mkdtemp(prefix="infprof-golden-runs-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_") and
           k != "LD_PRELOAD"}
    env["INFPROF_ENERGY_MS"] = "0"
    for name in RUNS:
        p = subprocess.run([prog("fixture_advice"), name, name + ".db"], cwd=DBDIR,
                           capture_output=True, timeout=60, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"fixture_advice {name}: {p.returncode} {p.stderr.decode()}")


def tearDownModule():
    shutil.rmtree(DBDIR, ignore_errors=True)


class GoldenRuns(Case):
    def check(self, what, *args):
        for fmt, ext in FORMATS.items():
            with self.subTest(what=what, format=fmt):
                r = subprocess.run([self.cli_path(), *args[:1], "--format", fmt, *args[1:]],
                                   cwd=DBDIR, capture_output=True, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr.decode())
                golden_util.check(self, os.path.join(GOLDEN, f"{what}.{ext}"),
                                  normalise(fmt, r.stdout.decode()))

    def cli_path(self):
        return os.path.join(os.environ.get("INFPROF_BUILD", "build"), "bin", "infprof")

    def test_compare(self):
        self.check("compare", "compare", *(n + ".db" for n in RUNS))

    def test_report_of_two_processes(self):
        self.check("multi", "report", *(n + ".db" for n in RUNS))

    def test_the_normaliser_leaves_the_figures(self):
        # What it replaces is the run's identity only: a figure of the fixture stays.
        r = subprocess.run([self.cli_path(), "compare", "--format", "json",
                            *(n + ".db" for n in RUNS)], cwd=DBDIR, capture_output=True)
        got = normalise("json", r.stdout.decode())
        self.assertIn('"pid": "<pid>"', got)
        self.assertRegex(got, r'"latency_p50_ns[^"]*": \d+')


if __name__ == "__main__":
    main()
