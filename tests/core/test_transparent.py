"""The host program never notices us: same exit status, same stdout and stderr bytes, for plain
programs, threads, fork, signals, _exit and abort; and a valid database behind each run."""
import os
import signal
from harness import Case, main, prog


class Transparent(Case):
    def same(self, argv, **extra):
        """Run without and with the library; everything the program shows must match."""
        plain = self.run_prog(argv, preload=False)
        traced = self.run_prog(argv, **extra)
        self.assertEqual(traced.rc, plain.rc, argv)
        self.assertEqual(traced.out, plain.out, argv)
        self.assertEqual(traced.err, plain.err, argv)
        return traced

    def valid_db(self, run, name="infprof.db"):
        db = run.db(name)
        r = self.cli("report", db)
        self.assertEqual(r.rc, 0, r.err)
        return db

    def ranges(self, db, text):
        return self.query(db, "SELECT count(*) FROM nvtx_ranges r JOIN strings s"
                              " ON s.id = r.text_id WHERE s.value = ?", text)[0][0]

    def test_true(self):
        r = self.same(["/bin/true"])
        db = self.valid_db(r)
        self.assertEqual(self.meta(db, "finished"), 1)
        self.assertIn("did not initialise CUDA", self.meta(db, "collector.cupti"))

    def test_shell_exit_status(self):
        r = self.same(["sh", "-c", "echo x; echo y >&2; exit 7"])
        self.assertEqual(r.rc, 7)
        self.assertEqual(r.out, b"x\n")
        self.valid_db(r)

    def test_threads(self):
        r = self.same([prog("host"), "threads"])
        self.assertEqual(r.rc, 3)
        db = self.valid_db(r)
        self.assertEqual(self.ranges(db, "thread work"), 400)
        self.assertEqual(self.ranges(db, "main work"), 10)
        self.assertEqual(self.query(db, "SELECT count(DISTINCT tid) FROM nvtx_ranges")[0][0], 5)

    def test_exit_and_underscore_exit(self):
        r = self.same([prog("host"), "exit"])
        self.assertEqual(r.rc, 9)
        self.assertEqual(self.meta(self.valid_db(r), "exit_status"), 9)
        self.tearDown(), self.setUp()
        r = self.same([prog("host"), "_exit"])
        self.assertEqual(r.rc, 4)
        db = self.valid_db(r)
        self.assertEqual(self.meta(db, "end_reason"), "_exit")
        self.assertEqual(self.ranges(db, "main work"), 10)

    def test_signals_flush_then_default_action(self):
        # Every signal whose default action ends the program (SIGALRM, SIGUSR1, SIGXFSZ and the
        # others read "the run did not finish writing", their -wal left beside the database).
        raised = [(f"raise {int(s)}", s) for s in (
            signal.SIGALRM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU, signal.SIGXFSZ,
            signal.SIGVTALRM)]
        for mode, sig in [("sigterm", signal.SIGTERM), ("sigint", signal.SIGINT),
                          ("abort", signal.SIGABRT), ("segv", signal.SIGSEGV)] + raised:
            with self.subTest(mode=mode):
                self.tearDown(), self.setUp()
                r = self.same([prog("host"), *mode.split()])
                self.assertEqual(r.rc, -sig)
                db = self.valid_db(r)
                self.assertEqual(self.meta(db, "end_reason"), "signal " + sig.name)
                self.assertEqual(self.ranges(db, "main work"), 10)
                self.assertEqual(sorted(os.listdir(self.dir)), ["infprof.db"], mode)

    def test_signal_handlers_are_invisible(self):
        r = self.same([prog("host"), "sigquery"])
        self.assertIn(b"SIGINT handler is default", r.out)
        self.assertIn(b"SIGTERM handler was default", r.out)

    def test_disabled_leaves_no_trace(self):
        r = self.same([prog("host"), "threads"], INFPROF_ENABLE=0)
        self.assertEqual(r.dbs(), [])


if __name__ == "__main__":
    main()
