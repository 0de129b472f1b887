"""`infprof info` lists every INFPROF_* setting from the library's own tables (the core's and each
collector's, in its own file), and describes a database; every command answers --help and
--version."""
import glob
import os
import re
import subprocess
from harness import Case, main, prog

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SOURCES = [os.path.join(ROOT, "profiler", "config.c")] + sorted(
    glob.glob(os.path.join(ROOT, "collectors", "*_config.c")))


def setting_names():
    names = set()
    for path in SOURCES:
        with open(path, encoding="utf-8") as f:
            names |= set(re.findall(r'"(INFPROF_[A-Z_]+)"', f.read()))
    return names


class Info(Case):
    def test_every_setting_is_listed(self):
        names = setting_names()
        self.assertGreater(len(names), 30)
        r = self.cli("info")
        self.assertEqual(r.rc, 0)
        listed = set(re.findall(r"^(INFPROF_[A-Z_]+)=", r.out.decode(), re.M))
        self.assertEqual(listed, names)

    def test_configuration_doc_lists_every_setting(self):
        names = setting_names()
        with open(os.path.join(ROOT, "docs", "configuration.md"), encoding="utf-8") as f:
            doc = f.read()
        documented = set(re.findall(r"^\| `(INFPROF_[A-Z_]+)`", doc, re.M))
        self.assertEqual(documented, names)

    def test_rules_listed_as_documented(self):
        """`infprof info --rules` lists every registered advice rule, ranked, each with when it
        fires; docs/report.md's table of rules names the same ones."""
        r = self.cli("info", "--rules")
        self.assertEqual(r.rc, 0, r.err)
        listed = re.findall(r"^ *(\d+)  ([a-z0-9_]+) \((run|phase)\)\n {5}\S", r.out.decode(), re.M)
        ranks = [int(rank) for rank, _, _ in listed]
        self.assertEqual(ranks, sorted(ranks))
        with open(os.path.join(ROOT, "docs", "report.md"), encoding="utf-8") as f:
            documented = set(re.findall(r"^\| `([a-z0-9_]+)` \| .* \| (?:-|`saving_ns`.*) \|$",
                                        f.read(), re.M))
        self.assertEqual({name for _, name, _ in listed}, documented)
        self.assertGreaterEqual(len(listed), 11)
        self.assertEqual(self.cli("info", "--bogus").rc, 2)

    def test_database(self):
        self.run_prog([prog("nvtx_ranges"), "1"], INFPROF_OUTPUT="i.db")
        r = self.cli("info", "i.db")
        self.assertEqual(r.rc, 0, r.err)
        self.assertIn(b"schema version 5", r.out)
        self.assertRegex(r.out.decode(), r"nvtx_ranges\s+5")

    def test_help_and_version(self):
        for args in (["--help"], ["run", "--help"], ["report", "--help"], ["info", "--help"]):
            r = self.cli(*args)
            self.assertEqual(r.rc, 0, args)
            self.assertIn(b"usage:", r.out)
        r = self.cli("--version")
        self.assertEqual(r.rc, 0)
        # The version project() gives, and the commit the build was configured at (issue 55).
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            version = re.search(r"project\(infprof VERSION ([0-9.]+)", f.read()).group(1)
        got = re.match(r"^infprof (\S+) \(commit (\S+), database schema \d+\)$",
                       r.out.decode().strip())
        self.assertTrue(got, r.out)
        self.assertEqual(got.group(1), version)
        # A commit of this checkout (the build may have been configured at an earlier one).
        known = subprocess.run(["git", "-C", ROOT, "cat-file", "-e", got.group(2) + "^{commit}"],
                               capture_output=True)
        in_git = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True)
        if in_git.returncode == 0:
            self.assertEqual(known.returncode, 0, got.group(2))


if __name__ == "__main__":
    main()
