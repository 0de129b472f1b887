"""Runs for the compare tier, built once per test class by tests/progs/fixture_compare.c through
the real pipeline. Each run writes run.db in its own directory, so two scenarios have the same
command line unless a test adds arguments on purpose."""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from harness import Case, prog

MIB = 1024 * 1024


def fixture_env(scenario, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("INFPROF_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH",
                                                        "CUDA_INJECTION64_PATH")}
    env["FIXTURE_SCENARIO"] = scenario
    env.update({k: str(v) for k, v in extra.items()})
    return env


def build(root, name, scenario, *args, **env):
    """fixture_compare in root/name; returns the database's path."""
    d = os.path.join(root, name)
    os.makedirs(d)
    p = subprocess.run([prog("fixture_compare"), "run.db", *args], cwd=d,
                       env=fixture_env(scenario, **env), capture_output=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("fixture_compare %s: %r" % (scenario, p.stderr))
    return os.path.join(d, "run.db")


def build_overlapping(root, first, second):
    """Two runs whose lifetimes overlap: the first holds its allocations (4 MiB live after an
    8 MiB peak) until the second has finished."""
    d1, d2 = os.path.join(root, "overlap1"), os.path.join(root, "overlap2")
    os.makedirs(d1)
    a = subprocess.Popen([prog("fixture_compare"), "run.db"], cwd=d1,
                         env=fixture_env(first, FIXTURE_WAIT=1), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if a.stdout.readline() != b"ready\n":
            raise AssertionError("fixture_compare did not get ready")
        second_db = build(root, "overlap2", second)
        a.stdin.write(b"go\n")
        a.stdin.close()
        if a.wait(timeout=60) != 0:
            raise AssertionError("fixture_compare %s failed" % first)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
        a.stdout.close()
        a.stderr.close()
    return os.path.join(d1, "run.db"), second_db


def edit_copy(src, dst, *sql):
    """A copy of a database with some metadata changed (what a killed run or a newer infprof
    would have written)."""
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    try:
        for s in sql:
            con.execute(s)
        con.commit()
    finally:
        con.close()
    return dst


class Runs(Case):
    """base, new and other built once for the class."""

    @classmethod
    def setUpClass(cls):
        cls._root = tempfile.TemporaryDirectory(prefix="infprof-compare-")
        root = cls._root.name
        cls.base = build(root, "base", "base")
        cls.new = build(root, "new", "new")
        cls.other = build(root, "other", "other")
        cls.root = root

    @classmethod
    def tearDownClass(cls):
        cls._root.cleanup()

    def text_lines(self, *args):
        r = self.cli(*args)
        self.assertEqual(r.rc, 0, r.err.decode())
        for fmt_bytes in (b"\x1b", b"\xc2\x9b"):
            self.assertNotIn(fmt_bytes, r.out)
        text = r.out.decode()
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)
        return text

    def json_of(self, *args):
        import json
        r = self.cli(*args, "--format", "json")
        self.assertEqual(r.rc, 0, r.err.decode())
        return json.loads(r.out)


unittest.TestCase.maxDiff = None
