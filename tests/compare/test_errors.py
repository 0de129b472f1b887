"""Input errors of `infprof compare` and of reports over several databases: one line on stderr,
exit status 2, nothing on stdout: a missing or foreign file, a newer schema, a database compared
with itself (the same file, a link to it, a copy of it), the wrong number of files, options that
do not apply."""
import os
import shutil
import sqlite3

from compare_common import Runs, edit_copy
from harness import main


class Errors(Runs):
    def assertRefused(self, args, *words):
        r = self.cli(*args)
        self.assertOneErrorLine(r, *words)
        self.assertEqual(r.out, b"")

    def foreign_files(self):
        missing = os.path.join(self.dir, "missing.db")
        text = os.path.join(self.dir, "notes.txt")
        with open(text, "w") as f:
            f.write("not a database\n" * 20)
        other_sqlite = os.path.join(self.dir, "other.sqlite")
        con = sqlite3.connect(other_sqlite)
        con.execute("CREATE TABLE t(x)")
        con.commit()
        con.close()
        newer = edit_copy(self.base, os.path.join(self.dir, "newer.db"), "PRAGMA user_version = 99")
        return [(missing, ("cannot open", missing)), (text, ("not an infprof database",)),
                (other_sqlite, ("not an infprof one",)), (newer, ("newer infprof", "schema 99"))]

    def test_bad_files(self):
        for path, words in self.foreign_files():
            for args in (("compare", self.base, path), ("compare", path, self.base),
                         ("report", self.base, path), ("report", path, self.new, self.base)):
                with self.subTest(args=args):
                    self.assertRefused(args, *words)

    def test_database_with_itself(self):
        self.assertRefused(("compare", self.base, self.base), "same database")
        link = os.path.join(self.dir, "link.db")
        os.symlink(self.base, link)
        self.assertRefused(("compare", self.base, link), "same database")
        copy = os.path.join(self.dir, "copy.db")
        shutil.copy(self.base, copy)
        self.assertRefused(("compare", copy, self.base), "hold the same run")
        self.assertRefused(("report", self.base, self.new, link), "same database")
        self.assertRefused(("report", self.base, self.new, copy), "hold the same run")

    def test_number_of_files(self):
        self.assertRefused(("compare",), "needs two databases")
        self.assertRefused(("compare", self.base), "needs two databases")
        self.assertRefused(("compare", self.base, self.new, self.other), "two databases",
                           self.other)

    def test_options(self):
        self.assertRefused(("compare", "--baseline", "grad/off", self.base, self.new),
                           "unknown option '--baseline'")
        self.assertRefused(("compare", "--format", "xml", self.base, self.new), "unknown format")
        self.assertRefused(("compare", "--top", "-1", self.base, self.new), "--top")
        self.assertRefused(("compare", "--phase", "no_grad/bf16", self.base, self.new),
                           "'no_grad/bf16' is not a phase", "'grad/off'", "'inference/bf16'")
        self.assertRefused(("report", "--phase", "no_grad/bf16", self.base, self.new),
                           "'no_grad/bf16' is not a phase")
        self.assertRefused(("report", "--nvtx", "iter*", self.base, self.new),
                           "--nvtx reads one database")

    def test_help(self):
        r = self.cli("compare", "--help")
        self.assertEqual(r.rc, 0)
        self.assertIn(b"usage: infprof compare", r.out)
        self.assertIn(b"compare", self.cli("--help").out)


if __name__ == "__main__":
    main()
