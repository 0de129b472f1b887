"""Fork and exec: a forked child never writes into the parent's database (its own file, or none
with INFPROF_FORK=off); programs the process executes profile into their own files."""
import os
import signal
import sqlite3
import subprocess
import time
from harness import Case, main, prog


class ForkExec(Case):
    def ranges(self, db, text):
        return self.query(db, "SELECT count(*) FROM nvtx_ranges r JOIN strings s"
                              " ON s.id = r.text_id WHERE s.value = ?", text)[0][0]

    def test_fork_child_gets_its_own_file(self):
        r = self.run_prog([prog("host"), "fork"])
        self.assertEqual(r.rc, 0)
        self.assertIn(b"parent: child exited 5", r.out)
        dbs = r.dbs()
        self.assertEqual(len(dbs), 2, dbs)
        parent = r.db("infprof.db")
        child = r.db([d for d in dbs if d != "infprof.db"][0])
        self.assertEqual(self.ranges(parent, "child work"), 0)
        self.assertEqual(self.ranges(parent, "main work"), 10)
        self.assertEqual(self.ranges(child, "child work"), 5)
        self.assertEqual(self.ranges(child, "main work"), 0)
        self.assertEqual(self.meta(child, "role"), "fork_child")
        self.assertEqual(os.path.basename(child), "infprof-%d.db" % self.meta(child, "pid"))
        self.assertNotEqual(self.meta(child, "pid"), self.meta(parent, "pid"))

    def test_a_signal_during_the_finish_of_exit_leaves_its_status(self):
        # A multiprocessing Pool's terminate() sends SIGTERM to the workers it still finds alive:
        # their _exit(0), which our finish held for a few milliseconds, read -15 (killed) where
        # it reads 0 without us. The child's _exit(5) is held here on purpose (a reader holds its
        # database, so the close waits for it), and the SIGTERM sent while the child's thread
        # waits for the finish (its system call, /proc/PID/syscall, is futex): it ends with 5,
        # its database written, as it would have ended before the signal came without us.
        p = subprocess.Popen([prog("host"), "exitterm"], cwd=self.dir, env=self.env(),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        try:
            line = p.stdout.readline().decode()
            while line and not line.startswith("child "):  # the host's own first line
                line = p.stdout.readline().decode()
            self.assertTrue(line.startswith("child "), line)
            pid = int(line.split()[1])
            db = os.path.join(self.dir, "infprof-%d.db" % pid)
            deadline = time.monotonic() + 30
            while not os.path.exists(db + "-wal") and time.monotonic() < deadline:
                time.sleep(0.001)  # polling for a file the child's writer makes, not a wait
            reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM sqlite_master").fetchall()  # held: a reader
            p.stdin.write(b"x")
            p.stdin.flush()
            in_finish = False
            while time.monotonic() < deadline:
                try:
                    with open(f"/proc/{pid}/syscall") as f:
                        call = f.read().split()[0]
                except (FileNotFoundError, ProcessLookupError, IndexError):
                    break
                if call == "202":  # futex: waiting for the writer's finish (x86-64)
                    in_finish = True
                    break
            if not in_finish:
                self.skipTest("the child's finish was not seen waiting (not x86-64?)")
            os.kill(pid, signal.SIGTERM)
            reader.execute("COMMIT")
            reader.close()
            out = p.communicate(timeout=60)[0].decode()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdin.close()
            p.stdout.close()
        self.assertIn("child exited 5", out)
        self.assertEqual(self.meta(db, "end_reason"), "_exit")
        self.assertEqual(self.meta(db, "exit_status"), 5)
        self.assertEqual(self.ranges(db, "child work"), 5)

    def test_fork_off(self):
        r = self.run_prog([prog("host"), "fork"], INFPROF_FORK="off")
        self.assertEqual(r.rc, 0)
        self.assertEqual(r.dbs(), ["infprof.db"])
        self.assertEqual(self.ranges(r.db(), "child work"), 0)

    def test_executed_program_profiles_into_its_own_file(self):
        r = self.run_prog([prog("host"), "forkexec", prog("nvtx_ranges"), "4"])
        self.assertEqual(r.rc, 0)
        dbs = r.dbs()
        self.assertEqual(len(dbs), 2, dbs)
        child = r.db([d for d in dbs if d != "infprof.db"][0])
        self.assertEqual(self.meta(child, "role"), "descendant")
        self.assertEqual(self.query(child, "SELECT count(*) FROM iterations")[0][0], 4)
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM iterations")[0][0], 0)

    def test_exec_in_place(self):
        r = self.run_prog([prog("host"), "exec", prog("nvtx_ranges"), "2"])
        self.assertEqual(r.rc, 0)
        dbs = r.dbs()
        self.assertEqual(len(dbs), 2, dbs)
        before = r.db("infprof.db")
        self.assertEqual(self.meta(before, "end_reason"), "exec")
        self.assertEqual(self.ranges(before, "main work"), 10)
        after = r.db([d for d in dbs if d != "infprof.db"][0])
        self.assertEqual(self.meta(after, "pid"), self.meta(before, "pid"))
        self.assertEqual(self.query(after, "SELECT count(*) FROM iterations")[0][0], 2)

    def test_infprof_run_names_the_image_that_ended(self):
        # A launcher that execs the program (pyenv's shims are `#!/usr/bin/env bash` scripts
        # ending in exec): env, then bash, then the program, one process. infprof run named the
        # first image's database (env's: "no libtorch phase was seen") and wrote the exit status
        # there; now it names the program's, which holds the ranges and the status.
        shim = os.path.join(self.dir, "shim")
        with open(shim, "w") as f:
            f.write(f"#!/usr/bin/env bash\ntrue\nexec {prog('nvtx_ranges')} 3\n")
        os.chmod(shim, 0o755)
        r = self.cli("run", "-o", "s.db", "--", shim)
        self.assertEqual(r.rc, 0, r.err)
        said = r.err.decode().splitlines()
        self.assertIn("replaced itself with exec (2 images before the last", said[-2])
        named = said[-1].split("read it with: infprof report ")[1]
        self.assertNotEqual(os.path.basename(named), "s.db")
        self.assertEqual(self.meta(named, "end_reason"), "exit")
        self.assertEqual(self.meta(named, "exit_status"), 0)
        self.assertEqual(self.query(named, "SELECT count(*) FROM iterations")[0][0], 3)
        first = os.path.join(self.dir, "s.db")
        self.assertEqual(self.meta(first, "end_reason"), "exec")
        # A program that does not exec is named as before.
        r = self.cli("run", "-o", "p.db", "--", prog("nvtx_ranges"), "2")
        self.assertTrue(r.err.decode().startswith("infprof: wrote "), r.err)
        self.assertIn("read it with: infprof report " + os.path.join(self.dir, "p.db"),
                      r.err.decode())

    def test_the_command_to_read_it_pastes_for_any_name(self):
        # A name with a newline, a tab, a quote and a space: the line said to paste read
        # '...a b\x0ac...', a file that is not there. Now bash reads it as the file written.
        name = os.path.join(self.dir, "a b\nc 'd\t\u00e9.db")
        r = self.cli("run", "-o", name, "--", prog("nvtx_ranges"), "1")
        self.assertEqual(r.rc, 0, r.err)
        line = r.err.decode().splitlines()[-1]
        self.assertNotIn("\n", line.split("read it with: ")[1][:-1])
        cmd = line.split("read it with: ")[1].replace("infprof report ", "printf %s ", 1)
        said = subprocess.run(["bash", "-c", cmd], capture_output=True)
        self.assertEqual(said.stdout.decode(), name, cmd)
        self.assertTrue(os.path.exists(name))

    def test_follow_exec_off(self):
        r = self.run_prog([prog("host"), "forkexec", prog("nvtx_ranges"), "1"],
                          INFPROF_FOLLOW_EXEC=0)
        self.assertEqual(r.dbs(), ["infprof.db"])


if __name__ == "__main__":
    main()
