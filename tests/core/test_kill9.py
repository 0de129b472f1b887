"""A run killed with SIGKILL leaves a valid database holding everything committed up to then
(the writer commits at least every second), and the report says the run did not finish."""
import os
import select
import signal
import sqlite3
import subprocess
import time
from harness import Case, main, prog


class Kill9(Case):
    def committed_ranges(self, db):
        try:
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=1)
            n = con.execute("SELECT count(*) FROM nvtx_ranges").fetchone()[0]
            con.close()
            return n
        except sqlite3.Error:
            return 0

    def readline(self, pipe, timeout):
        ready, _, _ = select.select([pipe], [], [], timeout)
        return pipe.readline() if ready else b"(nothing within %d s)" % timeout

    def test_kill9(self):
        db = os.path.join(self.dir, "k.db")
        # Unbuffered: select() must see every byte the program wrote, none hidden in a buffer.
        p = subprocess.Popen([prog("host"), "spin"], cwd=self.dir, stdout=subprocess.PIPE, bufsize=0,
                             env=self.env(INFPROF_OUTPUT="k.db"))
        try:
            self.assertEqual(self.readline(p.stdout, 30), b"host spin: start\n")
            self.assertEqual(self.readline(p.stdout, 30), b"spinning\n")
            # Wait (bounded) for a commit to land: the condition, not a fixed sleep. Polling
            # the live database is also what a user running `infprof report` on it does.
            deadline = time.monotonic() + 20
            while self.committed_ranges(db) == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            before = self.committed_ranges(db)
            self.assertGreater(before, 0, "nothing was committed within 20 s")
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait()
        self.assertEqual(p.returncode, -signal.SIGKILL)
        r = self.report_json(db)
        self.assertEqual(r["run"]["finished"], 0)
        self.assertIn("did not finish", r["run"]["warnings"])
        self.assertGreaterEqual(self.committed_ranges(db), before)


    def parent_of(self, pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None

    def run_true(self, tmp):
        from harness import CLI
        r = subprocess.run([CLI, "run", "-o", "t.db", "--force", "--", "true"], cwd=self.dir,
                           env=self.env(False, TMPDIR=tmp), capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_infprof_run_killed_takes_its_program(self):
        # A service manager kills the main pid, `infprof run`, with SIGKILL (which it cannot
        # forward): the program ends with it, as it would have alone. It used to live on,
        # orphaned, serving on its port.
        from harness import CLI
        tmp = os.path.join(self.dir, "tmp")
        os.mkdir(tmp)
        p = subprocess.Popen([CLI, "run", "-o", "r.db", "--", prog("host"), "spin"],
                             cwd=self.dir, stdout=subprocess.PIPE, bufsize=0,
                             env=self.env(False, TMPDIR=tmp))
        child = None
        try:
            self.assertEqual(self.readline(p.stdout, 30), b"host spin: start\n")
            self.assertEqual(self.readline(p.stdout, 30), b"spinning\n")
            child, = [int(d) for d in os.listdir("/proc") if d.isdigit() and
                      self.parent_of(int(d)) == p.pid]
            # Its list of the databases it will name (TMPDIR/infprof-run-*), aged an hour: a
            # run beside it leaves it, for it is in use (locked).
            listed, = os.listdir(tmp)
            hour_ago = time.time() - 3600
            os.utime(os.path.join(tmp, listed), (hour_ago, hour_ago))
            # Files of that name that a run did not make, aged alike, stay too (a fresh-eyes
            # check's were removed): another name; mode 0644; what no list holds; a hard link.
            theirs = os.path.join(self.dir, "theirs")
            with open(theirs, "w") as f:
                f.write("hello\n")
            os.link(theirs, os.path.join(tmp, "infprof-run-HARDLK"))
            for name, mode, text in (("infprof-run-not-ours", 0o600, ""),
                                     ("infprof-run-MODE64", 0o644, ""),
                                     ("infprof-run-HELLOX", 0o600, "hello\n")):
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
                os.chmod(os.path.join(tmp, name), mode)
            siblings = sorted(f for f in os.listdir(tmp) if f != listed)
            for name in siblings:
                os.utime(os.path.join(tmp, name), (hour_ago, hour_ago))
            self.run_true(tmp)
            self.assertEqual(sorted(os.listdir(tmp)), sorted([listed, *siblings]))
            pidfd = os.pidfd_open(child)
            p.kill()
            p.wait(timeout=30)
            ready, _, _ = select.select([pidfd], [], [], 30)  # readable when it has ended
            os.close(pidfd)
            self.assertTrue(ready, "the program outlived infprof run by 30 s")
            # Killed, it could not remove its list (one was left in /tmp by each such kill):
            # the next `infprof run` does, and leaves a name not of its making.
            self.assertEqual(sorted(os.listdir(tmp)), sorted([listed, *siblings]))
            self.run_true(tmp)
            self.assertEqual(sorted(os.listdir(tmp)), siblings)
        finally:
            p.kill()
            p.wait()
            if child:  # never left spinning, whatever the outcome
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass


if __name__ == "__main__":
    main()
