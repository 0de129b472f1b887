"""`infprof export` as a command: -o is required, an existing file is never replaced without
--force (not even the database itself), an unwritable path is one clear line and exit status 2,
'-o -' writes to standard output, and no temporary file is left behind."""
import os

from export_common import ExportCase, load
from harness import main


class ExportCommand(ExportCase):
    def setUp(self):
        super().setUp()
        self.db = self.fixture("rich")

    def leftovers(self):
        return [f for f in os.listdir(self.dir) if f.startswith(".")]

    def test_usage_errors(self):
        self.assertOneErrorLine(self.cli("export", self.db), "-o FILE")
        self.assertOneErrorLine(self.cli("export", "-o", "t.json"), "no database")
        self.assertOneErrorLine(self.cli("export", self.db, "-o"), "-o needs a value")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--bogus"),
                                "unknown option '--bogus'")
        self.assertOneErrorLine(self.cli("export", self.db, "x.db", "-o", "t.json"), "one database")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--from", "soon"),
                                "--from", "'soon'", "1.5ms")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--to", "5parsecs"),
                                "--to")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--from", "-3"),
                                "--from")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--from", "2ms",
                                         "--to", "1ms"), "--from must be before --to")
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "t.json", "--max-mb", "lots"),
                                "--max-mb")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "t.json")))

    def test_unknown_phase_lists_the_phases(self):
        r = self.cli("export", self.db, "-o", "t.json", "--phase", "warp\x1b[2Jspeed")
        self.assertOneErrorLine(r, "no phase 'warp\\x1b[2Jspeed'",
                                "'grad | autocast off', 'no_grad | autocast fp16'")

    def test_bad_database(self):
        self.assertOneErrorLine(self.cli("export", "nope.db", "-o", "t.json"), "nope.db",
                                "No such file")
        with open(os.path.join(self.dir, "notes.txt"), "w") as f:
            f.write("not a database\n" * 20)
        self.assertOneErrorLine(self.cli("export", "notes.txt", "-o", "t.json"), "not an SQLite")

    def test_existing_file_needs_force(self):
        path = os.path.join(self.dir, "t.json")
        with open(path, "w") as f:
            f.write("precious")
        r = self.cli("export", self.db, "-o", "t.json")
        self.assertOneErrorLine(r, "t.json exists", "--force")
        self.assertEqual(open(path).read(), "precious")
        r = self.cli("export", self.db, "-o", "t.json", "--force")
        self.assertEqual(r.rc, 0, r.err)
        self.assertTrue(load(path)["traceEvents"])
        self.assertEqual(self.leftovers(), [])

    def test_never_the_database_itself(self):
        before = open(self.db, "rb").read()
        r = self.cli("export", self.db, "-o", self.db, "--force")
        self.assertOneErrorLine(r, "is the database being exported")
        self.assertEqual(open(self.db, "rb").read(), before)

    def test_unwritable_paths(self):
        r = self.cli("export", self.db, "-o", "/nonexistent/dir/t.json")
        self.assertOneErrorLine(r, "cannot write /nonexistent/dir/t.json", "choose another path")
        os.mkdir(os.path.join(self.dir, "sub"))
        self.assertOneErrorLine(self.cli("export", self.db, "-o", "sub"), "sub is a directory")
        self.assertEqual(self.leftovers(), [])

    def test_devices_are_written_in_place(self):
        # A device is written, never replaced (renaming over it would replace the node), and
        # needs no --force. /dev/full fails every write: one line, exit status 2.
        for dev in ("/dev/null", "/dev/full"):
            if not os.path.exists(dev):
                self.skipTest(f"no {dev}")
        r = self.cli("export", self.db, "-o", "/dev/null")
        self.assertEqual(r.rc, 0, r.err)
        r = self.cli("export", self.db, "-o", "/dev/full")
        self.assertOneErrorLine(r, "cannot write /dev/full", "No space left")
        r = self.cli("export", self.db, "-o", "/dev/full", "--force")
        self.assertOneErrorLine(r, "cannot write /dev/full")
        self.assertTrue(os.path.exists("/dev/full") and not os.path.isfile("/dev/full"))

    def test_stdout(self):
        r = self.cli("export", self.db, "-o", "-")
        self.assertEqual(r.rc, 0, r.err)
        doc = load(r.out)
        file_doc, _, _ = self.export(self.db)
        self.assertEqual(doc, file_doc)
        self.assertIn(b"standard output", r.err)

    def test_summary_line_and_help(self):
        _, path, r = self.export(self.db)
        lines = r.err.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertRegex(lines[0], r"^infprof: wrote .*trace\.json \(\d+ events, [\d.]+KiB\)")
        self.assertEqual(oct(os.stat(path).st_mode & 0o777), oct(0o666 & ~self.umask()))
        h = self.cli("export", "--help")
        self.assertEqual(h.rc, 0)
        self.assertIn(b"--phase LABEL", h.out)
        listed = self.cli("--help")
        self.assertIn(b"export", listed.out)

    @staticmethod
    def umask():
        m = os.umask(0)
        os.umask(m)
        return m


if __name__ == "__main__":
    main()
