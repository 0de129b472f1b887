"""Shared helpers for infprof's tests: run programs with and without the library, read the
database, run the CLI. Standard library only; paths come from the environment ctest sets."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("INFPROF_BUILD", os.path.join(os.path.dirname(__file__), "../../build"))
LIB = os.path.join(BUILD, "lib", "libinfprof.so")
CLI = os.path.join(BUILD, "bin", "infprof")
PROGS = os.path.join(BUILD, "tests")


def prog(name):
    return os.path.join(PROGS, name)


def python_with(*modules):
    """The first Python that has these modules: $INFPROF_TEST_PYTHON, Debian's /usr/bin/python3
    (CI: python3-torch 1.13), then python3 on PATH (a GPU machine's, with PyTorch 2.x); None
    when no Python has them. Found without importing them."""
    probe = ("import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None"
             " for m in sys.argv[1:]))")
    for py in (os.environ.get("INFPROF_TEST_PYTHON"), "/usr/bin/python3", shutil.which("python3")):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", probe, *modules], capture_output=True).returncode == 0:
            return py
    return None


# The Python the torch tests run (Debian's where it has torch); the tests skip without one.
TORCH_PYTHON = python_with("torch") or "/usr/bin/python3"


# What differs between two runs of the same program without us: the time, thread id and
# addresses that libraries print (c10's and glog's "[W1122 21:09:21.123456789 12345 file.cpp:7]",
# pointers). Masked before a program's streams are compared with and without the library.
_UNSTABLE = [
    (re.compile(rb"\b([WEIF])\d{4} \d\d:\d\d:\d\d\.\d+( +\d+)? "), rb"\1<time> "),
    (re.compile(rb"0x[0-9a-fA-F]{6,}"), b"0x<address>"),
]


def unpack(xz, dst):
    """A fixture database (tests/data/*.db.xz) unpacked to dst, for a test to read or edit."""
    import lzma
    with lzma.open(xz) as src, open(dst, "wb") as out:
        shutil.copyfileobj(src, out)
    return dst


def sanitized():
    """The build was made with sanitizers (INFPROF_SANITIZE in its CMake cache)."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            return bool(re.search(r"^INFPROF_SANITIZE:STRING=\S", f.read(), re.M))
    except OSError:
        return False


def resum_operators(con):
    """After a test edits torch_operators: the writer's sums of them (torch_operator_sums,
    collectors/torch_opsum.c), which the report reads in their place, made again from the
    calls, as the writer would have folded them."""
    if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'torch_operator_sums'").fetchone():
        return
    con.execute("DELETE FROM torch_operator_sums")
    con.execute("INSERT INTO torch_operator_sums(phase, name_id, iter, calls, self, dur)"
                " SELECT phase, name_id, iter, count(*), sum(self), sum(dur) FROM torch_operators"
                " GROUP BY phase, name_id, iter")
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('torch_operator_sums',"
                " (SELECT count(*) FROM torch_operators))")


def stable(stream):
    for pattern, repl in _UNSTABLE:
        stream = pattern.sub(repl, stream)
    return stream


class Run:
    def __init__(self, proc, cwd):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.cwd = cwd

    def dbs(self):
        return sorted(f for f in os.listdir(self.cwd) if f.endswith(".db"))

    def db(self, name="infprof.db"):
        return os.path.join(self.cwd, name)


class Case(unittest.TestCase):
    """A test case with its own scratch directory."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="infprof-test-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def env(self, preload=True, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("INFPROF_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH",
                                                            "CUDA_INJECTION64_PATH", "COLUMNS")}
        if preload:
            env["LD_PRELOAD"] = LIB
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run_prog(self, argv, preload=True, timeout=60, cwd=None, **extra):
        cwd = cwd or self.dir
        p = subprocess.run(argv, cwd=cwd, env=self.env(preload, **extra), capture_output=True,
                           timeout=timeout)
        return Run(p, cwd)

    def run_torch(self, source, db, timeout=300, **extra):
        """The Python program `source`, run under us by TORCH_PYTHON into db: its result, exit
        status 0 asserted; the test skips where no Python has torch."""
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        r = self.run_prog([TORCH_PYTHON, "-c", source], timeout=timeout, INFPROF_OUTPUT=db,
                          **extra)
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        return r

    def cli(self, *args, timeout=120, **extra):
        p = subprocess.run([CLI, *args], cwd=self.dir, env=self.env(False, **extra),
                           capture_output=True, timeout=timeout)
        return Run(p, self.dir)

    def report_json(self, db, *options):
        r = self.cli("report", "--format", "json", *options, db)
        self.assertEqual(r.rc, 0, r.err.decode())
        return json.loads(r.out)

    def query(self, db, sql, *args):
        # As `infprof report` opens it (report/base/db.c): a run killed mid-way leaves its last
        # commits in the -wal file, whose index only a read-write connection can rebuild.
        mode = "rw" if os.path.exists(db + "-wal") else "ro"
        con = sqlite3.connect(f"file:{db}?mode={mode}", uri=True)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def meta(self, db, key):
        rows = self.query(db, "SELECT value FROM meta WHERE key = ?", key)
        return rows[0][0] if rows else None

    def assertUnnoticed(self, plain, traced):
        """The program notices nothing: the same exit status and the same bytes on stdout and
        stderr as without the library, once what two plain runs differ in is masked."""
        self.assertEqual((traced.rc, stable(traced.out), stable(traced.err)),
                         (plain.rc, stable(plain.out), stable(plain.err)))

    def assertOneErrorLine(self, r, *words):
        """An infprof CLI input error: exit 2, one line on stderr naming the problem."""
        self.assertEqual(r.rc, 2, (r.out, r.err))
        lines = r.err.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("infprof: "), lines)
        for w in words:
            self.assertIn(w, lines[0])


def main():
    unittest.main(verbosity=2)
