"""Where the database goes: infprof.db then infprof-2.db, never an overwrite; %p and %h; and
`infprof run`: environment, exit status, --force, errors before the program starts."""
import os
import socket
from harness import Case, LIB, main, prog


class Names(Case):
    def test_default_never_overwrites(self):
        for _ in range(3):
            self.assertEqual(self.run_prog(["/bin/true"]).rc, 0)
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["infprof-2.db", "infprof-3.db", "infprof.db"])

    def test_explicit_existing_warns_and_takes_fresh_name(self):
        with open(os.path.join(self.dir, "run.db"), "w") as f:
            f.write("keep me")
        r = self.run_prog(["/bin/true"], INFPROF_OUTPUT="run.db")
        self.assertEqual(r.rc, 0)
        with open(os.path.join(self.dir, "run.db")) as f:
            self.assertEqual(f.read(), "keep me")
        self.assertIn(b"run.db exists and is kept; writing", r.err)
        self.assertTrue(os.path.exists(r.db("run-2.db")))

    def test_patterns(self):
        r = self.run_prog(["/bin/true"], INFPROF_OUTPUT="p-%p-%h-%%.db")
        db = r.dbs()[0]
        pid = self.meta(r.db(db), "pid")
        self.assertEqual(db, "p-%d-%s-%%.db" % (pid, socket.gethostname()))


class RunCommand(Case):
    def test_run_returns_status_and_says_where(self):
        r = self.cli("run", "-o", "a.db", "--", "sh", "-c", "echo hi; exit 6")
        self.assertEqual(r.rc, 6)
        self.assertEqual(r.out, b"hi\n")
        self.assertIn(f"infprof: wrote {self.dir}/a.db".encode(), r.err)
        self.assertEqual(self.meta(os.path.join(self.dir, "a.db"), "exit_status"), 6)

    def test_run_signal_status(self):
        r = self.cli("run", "-o", "s.db", prog("host"), "sigterm")
        self.assertEqual(r.rc, -15)  # it dies of the program's signal, as timeout(1) does
        db = os.path.join(self.dir, "s.db")
        self.assertEqual(self.meta(db, "exit_status"), 143)
        self.assertEqual(self.meta(db, "end_reason"), "signal SIGTERM")

    def test_run_default_names(self):
        self.assertEqual(self.cli("run", "/bin/true").rc, 0)
        self.assertEqual(self.cli("run", "/bin/true").rc, 0)
        self.assertEqual(sorted(os.listdir(self.dir)), ["infprof-2.db", "infprof.db"])

    def test_run_existing_is_an_error_unless_forced(self):
        path = os.path.join(self.dir, "a.db")
        with open(path, "w") as f:
            f.write("keep me")
        r = self.cli("run", "-o", "a.db", "sh", "-c", "echo ran")
        self.assertOneErrorLine(r, "a.db exists", "--force")
        self.assertEqual(r.out, b"")
        with open(path) as f:
            self.assertEqual(f.read(), "keep me")
        r = self.cli("run", "-o", "a.db", "--force", "sh", "-c", "echo ran")
        self.assertEqual(r.rc, 0)
        self.assertEqual(r.out, b"ran\n")
        self.assertEqual(self.meta(path, "format"), "infprof")

    def test_run_unwritable(self):
        self.assertOneErrorLine(self.cli("run", "-o", "/nonexistent/x.db", "/bin/true"),
                                "/nonexistent")

    def test_run_missing_program(self):
        r = self.cli("run", "-o", "m.db", "/no/such/program")
        self.assertEqual(r.rc, 127)
        self.assertIn(b"cannot run /no/such/program", r.err)

    def test_run_prepends_preload(self):
        r = self.cli("run", "-o", "e.db", "sh", "-c", "echo $LD_PRELOAD",
                     LD_PRELOAD="libm.so.6")
        self.assertEqual(r.rc, 0)
        self.assertEqual(r.out.decode().strip(), os.path.realpath(LIB) + ":libm.so.6")

    def test_run_lists_child_databases(self):
        r = self.cli("run", "-o", "p.db", prog("host"), "forkexec", prog("nvtx_ranges"), "1")
        self.assertEqual(r.rc, 0)
        self.assertIn(f"and 1 for the processes it started: {self.dir}/p-".encode(), r.err)


if __name__ == "__main__":
    main()
