"""Never harm the host (docs/guarantees.md): programs that close every descriptor and open files
of their own, that replace themselves with execl, execlp, execle (from a thread, at once). Each
runs with and without the library; the program's files, exit status and output are the same,
and the profile is whole or says plainly that it stopped."""
import os
import sqlite3
import subprocess
import time

from harness import LIB, Case, main, prog

DATA = bytes(range(256)) * 256  # 64 KiB of the program's own data


class Hostile(Case):
    def own_file(self):
        path = os.path.join(self.dir, "data.bin")
        with open(path, "wb") as f:
            f.write(DATA)
        return path

    def check_daemon(self, how):
        path = self.own_file()
        plain = self.run_prog([prog("hostile"), how, path], preload=False)
        self.assertEqual(plain.rc, 0, plain.err)
        r = self.run_prog([prog("hostile"), how, path], INFPROF_OUTPUT="p.db", timeout=60)
        self.assertUnnoticed(plain, r)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), DATA, "the program's own file was changed")
        # Our descriptors stayed ours: the profile is whole and finished.
        db = r.db("p.db")
        self.assertEqual(self.meta(db, "finished"), 1)
        self.assertEqual(self.meta(db, "write_errors"), 0)
        self.assertGreater(self.query(db, "SELECT count(*) FROM nvtx_ranges")[0][0], 100)
        self.assertFalse(os.path.exists(db + "-wal"))

    def test_close_every_descriptor(self):
        self.check_daemon("closeall")

    def test_close_range(self):
        self.check_daemon("closerange")

    def test_closefrom(self):
        self.check_daemon("closefrom")

    def check_exec(self, how):
        plain = self.run_prog([prog("hostile"), how], preload=False)
        r = self.run_prog([prog("hostile"), how], INFPROF_OUTPUT="e.db")
        self.assertUnnoticed(plain, r)
        db = r.db("e.db")
        # The exec finished the database first: metadata, closed, no WAL beside it.
        self.assertEqual(self.meta(db, "finished"), 1)
        self.assertEqual(self.meta(db, "end_reason"), "exec")
        self.assertFalse(os.path.exists(db + "-wal"))
        self.assertEqual(self.cli("report", db).rc, 0)

    def test_execl(self):
        self.check_exec("execl")

    def test_execlp(self):
        self.check_exec("execlp")

    def test_execle(self):
        self.check_exec("execle")

    def test_execl_from_a_thread_at_once(self):
        for _ in range(5):
            self.tearDown(), self.setUp()
            self.check_exec("execl-thread")


    def test_exit_status_of_a_returning_main(self):
        plain = self.run_prog([prog("hostile"), "return", "3"], preload=False)
        r = self.run_prog([prog("hostile"), "return", "3"], INFPROF_OUTPUT="r.db")
        self.assertUnnoticed(plain, r)
        self.assertEqual(r.rc, 3)
        self.assertEqual(self.meta(r.db("r.db"), "exit_status"), 3)


    def test_a_planted_companion_takes_the_name(self):
        # A planted -shm (one SQLite would open as the database's index): the name is taken,
        # the database goes to the next name, the planted file is never touched. (A database
        # that cannot be made at all: test_hostile2's too-many-open-files case.)
        os.symlink("/nonexistent/dir/shm", os.path.join(self.dir, "s.db-shm"))
        plain = self.run_prog(["/bin/true"], preload=False)
        r = self.run_prog(["/bin/true"], INFPROF_OUTPUT="s.db")
        self.assertEqual((r.rc, r.out), (plain.rc, plain.out))
        lines = r.err.decode().splitlines()
        self.assertEqual(lines, ["infprof: s.db-shm exists beside s.db and is kept; writing s-2.db"
                                 " instead"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "s.db")))
        self.assertEqual(self.meta(os.path.join(self.dir, "s-2.db"), "finished"), 1)
        self.assertTrue(os.path.islink(os.path.join(self.dir, "s.db-shm")))  # never touched

    def test_warning_arrives_before_the_program_closes_stderr(self):
        # /bin/echo closes stdout and stderr as it exits: a warning written later is lost.
        for _ in range(20):
            r = self.run_prog(["/bin/echo", "hi"], INFPROF_OUTPUT="/nonexistent/dir/x.db")
            self.assertEqual(r.out, b"hi\n")
            self.assertEqual(len(r.err.splitlines()), 1, r.err)
            self.assertIn(b"cannot create /nonexistent/dir/x.db", r.err)

    def test_control_characters_never_reach_the_terminal(self):
        r = self.run_prog(["/bin/true"], INFPROF_FORK="a\x1b[31mb\nc")
        line = r.err.decode()
        self.assertEqual(len(line.splitlines()), 1, line)
        self.assertNotIn("\x1b", line)
        self.assertIn("\\x1b[31mb\\x0ac", line)
        r = self.run_prog(["/bin/true"], INFPROF_OUTPUT="/nonexistent/a\nb.db")
        self.assertEqual(len(r.err.splitlines()), 1, r.err)
        bad = os.path.join(self.dir, "x\ny.db")
        with open(bad, "w") as f:
            f.write("not a database")
        for cmd in (["report", bad], ["info", bad]):
            e = self.cli(*cmd)
            self.assertOneErrorLine(e)

    def test_thousands_of_threads(self):
        n = 3000
        r = self.run_prog([prog("hostile"), "threads", str(n)], INFPROF_OUTPUT="t.db",
                          timeout=120)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("t.db")
        self.assertEqual(self.query(db, "SELECT count(*) FROM nvtx_ranges")[0][0], n)
        self.assertEqual(self.meta(db, "dropped_events"), 0)
        # Buffers start small: 16 KiB each (mapped, touched only as they fill), not 1 MiB.
        self.assertLessEqual(self.meta(db, "buffer_bytes_peak"), (n + 8) * 16384)

    def test_a_reader_holding_the_database_at_exit(self):
        signal = os.path.join(self.dir, "go")
        env = self.env(INFPROF_OUTPUT="w.db")
        p = subprocess.Popen([prog("hostile"), "waitfile", signal], cwd=self.dir, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        db = os.path.join(self.dir, "w.db")
        con = None
        for _ in range(3000):  # bounded: the database and its first commit appear
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
                con.execute("BEGIN")
                if con.execute("SELECT count(*) FROM meta").fetchone()[0]:
                    break
                con.rollback()
            except sqlite3.Error:
                pass
            time.sleep(0.01)
        open(signal, "w").close()
        out, err = p.communicate(timeout=60)
        con.close()
        self.assertEqual((p.returncode, out, err), (0, b"hostile waitfile: done\n", b""))
        self.assertEqual(self.meta(db, "write_errors"), 0)
        self.assertEqual(self.meta(db, "finished"), 1)

    def test_killed_mid_checkpoint_reads_what_was_committed(self):
        # A run killed (or out of disk) while a checkpoint had written page 1, with its larger
        # page count, before the pages that extend the file: the committed data is in the WAL.
        env = self.env(INFPROF_OUTPUT="k.db")
        p = subprocess.Popen([prog("hostile"), "waitfile", os.path.join(self.dir, "never")],
                             cwd=self.dir, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        db = os.path.join(self.dir, "k.db")
        try:
            for _ in range(3000):  # bounded: until the first commit is readable
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                    n = con.execute("SELECT count(*) FROM meta").fetchone()[0]
                    con.close()
                    if n:
                        break
                except sqlite3.Error:
                    pass
                time.sleep(0.01)
        finally:
            p.kill()
            p.wait()
        with open(db, "r+b") as f:
            head = bytearray(f.read(100))
            pages = int.from_bytes(head[28:32], "big")
            head[28:32] = (pages + 100).to_bytes(4, "big")
            head[92:96] = head[24:28]  # the page count is "valid"
            f.seek(0)
            f.write(head)
        r = self.report_json(db)
        self.assertEqual(r["run"]["finished"], 0)
        self.assertIn("did not finish", r["run"]["warnings"])

    def test_missing_tables_are_named(self):
        self.run_prog([prog("hostile"), "return", "0"], INFPROF_OUTPUT="m.db")
        db = os.path.join(self.dir, "m.db")
        con = sqlite3.connect(db)
        con.execute("DROP TABLE cudnn_calls")
        con.commit()
        con.close()
        r = self.report_json(db)
        self.assertIn("tables missing from the database: cudnn_calls", r["run"]["warnings"])
        text = self.cli("report", db).out.decode()
        self.assertIn("cudnn_calls", text)


if __name__ == "__main__":
    main()
