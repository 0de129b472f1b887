"""Recording windows (docs/windows.md; profiler/window.c, collectors/window.c): a run records only
inside the windows asked for, each a row of table windows, and the report says so and reads one
with --window N. Every way to ask: the program's own NVTX capture range and
cudaProfilerStart/Stop, a delay and a duration, `infprof window PID start|stop` against a running
program (sent when the program's own output says it has reached an iteration, never after a
sleep), and a signal (refused where the program was started with it ignored)."""
import os
import signal
import subprocess

from harness import CLI, Case, main, prog


class Windows(Case):
    def windows(self, db):
        return self.query(db, "SELECT id, start, end, opened_by, closed_by, open_at_close"
                              " FROM windows ORDER BY id")

    def iterations(self, db):
        return self.query(db, "SELECT start, start + dur FROM iterations ORDER BY start")

    def assert_inside(self, db, wins):
        # Each began inside a window; one in flight when it closed ends later (its NVTX range,
        # pushed inside, is closed whenever its pop comes): no more of them than were counted.
        late = 0
        for s, e in self.iterations(db):
            w = [x for x in wins if x[1] <= s <= x[2]]
            self.assertTrue(w, (s, e, wins))
            late += e > w[0][2]
        # (A window may close in the microseconds between an iteration's end and its record.)
        self.assertLessEqual(late, sum(x[5] + 1 for x in wins), wins)

    def test_nvtx_capture_range(self):
        db = os.path.join(self.dir, "c.db")
        r = self.run_prog([prog("window_prog"), "capture"], INFPROF_OUTPUT=db,
                          INFPROF_CAPTURE_RANGE="nvtx:capture")
        self.assertEqual(r.rc, 0, r.err)
        wins = self.windows(db)
        self.assertEqual([(w[0], w[3], w[4]) for w in wins], [(1, 6, 6), (2, 6, 6)], wins)
        # Iterations 10-19 and 30-39 of 40, nothing of the others.
        self.assertEqual(len(self.iterations(db)), 20)
        self.assert_inside(db, wins)
        report = self.report_json(db)
        self.assertRegex(report["summary"]["windows"],
                         r"^recorded in 2 windows, [0-9.]+ms of the run's [0-9.]+ms \(opened by"
                         r" the NVTX capture range\)")
        self.assertEqual([w["iterations"] for w in report["windows"]], [10, 10])
        one = self.report_json(db, "--window", "2")
        self.assertRegex(one["summary"]["windows"], r"^window 2 of 2 only \(--window 2\)")
        bad = self.cli("report", "--window", "3", db)
        self.assertEqual(bad.rc, 2)
        self.assertIn("this run has windows 1 to 2", bad.err.decode())

    def test_cuda_profiler_api(self):
        db = os.path.join(self.dir, "p.db")
        r = self.run_prog([prog("profiler_api")], INFPROF_OUTPUT=db,
                          INFPROF_CAPTURE_RANGE="cudaProfilerApi")
        self.assertEqual(r.rc, 0, r.err)
        # The real calls were made (their answer passed on: no driver here) and opened a window.
        self.assertRegex(r.out.decode(), r"start \d+\nstop \d+")
        wins = self.windows(db)
        self.assertEqual([(w[0], w[3], w[4]) for w in wins], [(1, 7, 7)], wins)
        self.assertEqual(len(self.iterations(db)), 10)
        self.assert_inside(db, wins)

    def test_delay_and_duration(self):
        db = os.path.join(self.dir, "d.db")
        r = self.run_prog([CLI, "run", "-o", db, "--delay", "0.1", "--duration", "0.1", "--",
                           prog("window_prog"), "plain", "5", "60"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        (wid, s, e, opened, closed, _), = self.windows(db)
        self.assertEqual((opened, closed), (2, 3))
        # Opened at the writer's next wake after the delay, closed at its next wake after the
        # duration: within 100 ms of each on an idle machine, 112 ms on a loaded one (ctest -j3
        # beside other work); bounded so as to fail where the delay or duration were ignored.
        self.assertGreaterEqual(s, 100_000_000)
        self.assertLess(s, 600_000_000)
        self.assertGreaterEqual(e - s, 100_000_000)
        self.assertLess(e - s, 600_000_000)
        self.assert_inside(db, self.windows(db))
        # About 20 iterations of 5 ms of spinning fill 100 ms; a loaded machine leaves a
        # quarter of the CPU to the program (4 in the window, under ctest -j3).
        self.assertGreater(len(self.iterations(db)), 1)

    def start_program(self, db, **env):
        p = subprocess.Popen([prog("window_prog"), "plain", "5", "400"], cwd=self.dir,
                             env=self.env(True, INFPROF_OUTPUT=db, **env), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p

    def reach(self, p, i):
        """Read the program's output until its iteration i is done."""
        while True:
            line = p.stdout.readline().decode()
            self.assertTrue(line, "the program ended early")
            if line.startswith(f"own {i} "):
                return

    def test_infprof_window_requests(self):
        db = os.path.join(self.dir, "w.db")
        wdir = os.path.join(self.dir, "req")
        os.mkdir(wdir)
        p = self.start_program(db, INFPROF_WINDOW_START="closed", INFPROF_WINDOW_DIR=wdir)
        for at, what, answer in ((20, "start", "opened window 1"), (60, "stop", "closed window 1"),
                                 (61, "stop", "already closed"), (100, "start", "opened window 2"),
                                 (140, "stop", "closed window 2")):
            self.reach(p, at)
            r = self.cli("window", str(p.pid), what, "--wait", "10", INFPROF_WINDOW_DIR=wdir)
            self.assertEqual(r.rc, 0, r.err)
            self.assertEqual(r.out.decode().strip(), f"infprof: process {p.pid}: {answer}")
        # A live database reads, and says the run is still going.
        text = self.cli("report", db).out.decode()
        self.assertIn(f"the run is still going (process {p.pid})", text)
        p.stdout.read()
        self.assertEqual(p.wait(timeout=60), 0)
        wins = self.windows(db)
        self.assertEqual([(w[0], w[3], w[4]) for w in wins], [(1, 4, 4), (2, 4, 4)], wins)
        self.assert_inside(db, wins)
        n = len(self.iterations(db))
        self.assertGreater(n, 40)
        self.assertLess(n, 160)  # nothing outside: 80 of 400 at most, give or take the polling
        self.assertEqual(os.listdir(wdir), [])  # requests and answers taken away
        # No process: a clear error; a process that does not answer: says why.
        r = self.cli("window", "999999999", "start")
        self.assertEqual(r.rc, 2)
        r = self.cli("window", str(os.getpid()), "start", "--wait", "0.2",
                     INFPROF_WINDOW_DIR=wdir)
        self.assertEqual(r.rc, 1)
        self.assertIn("did not answer", r.err.decode())
        self.assertEqual(os.listdir(wdir), [])

    def test_signal(self):
        db = os.path.join(self.dir, "s.db")
        p = self.start_program(db, INFPROF_WINDOW_START="closed", INFPROF_WINDOW_SIGNAL="12")
        self.reach(p, 20)
        os.kill(p.pid, signal.SIGUSR2)
        self.reach(p, 60)
        os.kill(p.pid, signal.SIGUSR2)
        p.stdout.read()
        self.assertEqual(p.wait(timeout=60), 0)
        wins = self.windows(db)
        self.assertEqual([(w[0], w[3], w[4]) for w in wins], [(1, 5, 5)], wins)
        self.assert_inside(db, wins)
        self.assertGreater(len(self.iterations(db)), 10)

    def test_signal_refused_when_the_program_has_it(self):
        # Started with the signal ignored: it is the program's, not ours to take.
        db = os.path.join(self.dir, "r.db")
        p = subprocess.run([prog("window_prog"), "plain", "1", "5"], cwd=self.dir,
                           env=self.env(True, INFPROF_OUTPUT=db, INFPROF_WINDOW_SIGNAL="12"),
                           capture_output=True, timeout=60,
                           preexec_fn=lambda: signal.signal(signal.SIGUSR2, signal.SIG_IGN))
        self.assertEqual(p.returncode, 0, p.stderr)
        header = self.report_json(db)["run"]
        self.assertIn("signal 12 refused: the program already handles it",
                      header["collector_window"])


if __name__ == "__main__":
    main()
