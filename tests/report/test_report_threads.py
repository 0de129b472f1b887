"""The report reads its largest tables with several threads (report/base/db_scan.c): each reads a
range of rowids through its own connection, and the ranges are joined in rowid order. Whatever the
number of threads (INFPROF_REPORT_THREADS), the report is the same, byte for byte: on a real GPU
run (the H100 ResNet-18 fixture, its allocator reports, kernels, cuDNN calls and external ids
copied sixteen times over, so that each table passes the 65,536 rowids below which one thread
reads), with rowids the program left sparse, far apart, or near 2^63, and on a live run's file
(a -wal beside it), which one thread reads; a view put in a table's place (no rowids) read whole;
under an address-space limit, what a thread cannot read read by the report's own connection. A
page damaged in the middle of a table fails the report on one line whichever thread meets it,
and a wrong INFPROF_REPORT_THREADS is named, whatever the database."""
import json
import os
import re
import resource
import sqlite3
import subprocess

from harness import CLI, Case, main, sanitized, unpack

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h100")
TABLES = ("tensor_memory", "kernel_rows", "cudnn_calls", "external_corr")


class ReportThreads(Case):
    def setUp(self):
        super().setUp()
        self.db = unpack(os.path.join(DATA, "resnet18-b8-python-cuda.db.xz"),
                         os.path.join(self.dir, "big.db"))
        con = sqlite3.connect(self.db)
        with con:
            for table in TABLES:
                for _ in range(4):
                    con.execute(f"INSERT INTO {table} SELECT * FROM {table}")
        self.rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        con.close()

    def reports(self, db, threads):
        out = []
        for fmt in ("text", "json"):
            r = self.cli("report", "--format", fmt, db, INFPROF_REPORT_THREADS=str(threads),
                         COLUMNS="200")
            self.assertEqual(r.rc, 0, r.err)
            out.append(r.out)
        return out

    def ranges(self, db, threads):
        """Each table's scan ranges as the report's own connection bound them (INFPROF_SQL_TRACE
        traces that connection: its range is the first)."""
        r = self.cli("report", "--format", "json", db, INFPROF_REPORT_THREADS=str(threads),
                     INFPROF_SQL_TRACE="1")
        self.assertEqual(r.rc, 0, r.err)
        got = {}
        for line in r.err.decode().splitlines():
            m = re.search(r"FROM (?:\w+ c|(\w+)) .*rowid BETWEEN (-?\d+) AND (-?\d+)", line)
            if m:
                table = m.group(1) or "cudnn_calls"
                got.setdefault(table, (int(m.group(2)), int(m.group(3))))
        return got

    def test_every_number_of_threads_gives_the_same_report(self):
        for table, n in self.rows.items():
            self.assertGreater(n, 65536, table)
        one = self.reports(self.db, 1)
        self.assertIn(b"cuDNN", one[0])
        for threads in (2, 3, 7):
            self.assertEqual(self.reports(self.db, threads), one, threads)
        # Two threads split each table (the first range is this thread's); one reads it whole.
        split = self.ranges(self.db, 2)
        for table in TABLES:
            lo, hi = split[table]
            self.assertEqual(lo, 1, table)
            self.assertLess(hi, self.rows[table], table)
        self.assertEqual(self.ranges(self.db, 1)["tensor_memory"], (-2**63, 2**63 - 1))

    def test_sparse_and_far_rowids_and_a_live_file(self):
        con = sqlite3.connect(self.db)
        with con:
            # Gaps: the ranges hold fewer rows than rowids and are moved together.
            con.execute("DELETE FROM tensor_memory WHERE rowid % 3 = 0")
            # Rowids 2^30 apart: each thread grows its own array, joined after.
            con.execute("UPDATE kernel_rows SET rowid = 1073741824 WHERE rowid = 5")
            # Past 2^40 apart, near 2^63: one thread.
            con.execute("UPDATE cudnn_calls SET rowid = 9000000000000000000 WHERE rowid = 7")
            # Below 1: the ranges start there.
            con.execute("UPDATE external_corr SET rowid = -5 WHERE rowid = 9")
        con.close()
        one = self.reports(self.db, 1)
        self.assertEqual(self.reports(self.db, 3), one)
        got = self.ranges(self.db, 3)
        self.assertEqual(got["tensor_memory"][0], 1)
        self.assertEqual(got["kernel_rows"][0], 1)
        self.assertEqual(got["cudnn_calls"], (-2**63, 2**63 - 1))
        self.assertEqual(got["external_corr"][0], -5)
        # A run still being written: its connections could see different commits.
        open(self.db + "-wal", "wb").close()
        try:
            self.assertEqual(self.ranges(self.db, 3)["tensor_memory"], (-2**63, 2**63 - 1))
            self.assertEqual(self.reports(self.db, 3), one)
        finally:
            os.unlink(self.db + "-wal")

    def test_a_damaged_page_fails_on_one_line_whichever_thread_reads_it(self):
        con = sqlite3.connect(self.db)
        pages = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name ="
                                           " 'tensor_memory' AND pagetype = 'leaf'"
                                           " ORDER BY pageno")]
        size = con.execute("PRAGMA page_size").fetchone()[0]
        con.close()
        page = pages[len(pages) * 3 // 4]  # a leaf the second of two threads reads
        with open(self.db, "r+b") as f:
            f.seek((page - 1) * size)
            f.write(b"\xff" * size)
        for threads in (1, 2):
            r = self.cli("report", self.db, INFPROF_REPORT_THREADS=str(threads))
            self.assertOneErrorLine(r, "is damaged", os.path.basename(self.db))

    def test_a_wrong_number_of_threads_is_named(self):
        # no table a thread would cut
        small = unpack(os.path.join(DATA, "transformer-b8.db.xz"), os.path.join(self.dir, "s.db"))
        for db in (self.db, small):
            for bad in ("0", "two", "65", "+2", " 2", "2 ", "-1"):
                r = self.cli("report", db, INFPROF_REPORT_THREADS=bad)
                self.assertOneErrorLine(r, "INFPROF_REPORT_THREADS", bad.strip())

    def test_a_view_in_a_tables_place_is_read_whole(self):
        # A view has no rowids (SQLite gives NULL): a range of them would find no row.
        con = sqlite3.connect(self.db)
        with con:
            con.execute("ALTER TABLE tensor_memory RENAME TO tm_rows")
            con.execute("CREATE VIEW tensor_memory AS SELECT * FROM tm_rows")
        con.close()
        ref = self.reports(self.db, 1)
        self.assertEqual(self.reports(self.db, 3), ref)
        memory = json.loads(ref[1])["memory"]
        self.assertTrue(memory and any(r["peak_allocated_bytes"] for r in memory), memory)

    def test_an_address_space_limit_reads_on_one_connection(self):
        # Each reader thread's connection would allocate in a malloc arena of its own (64 MB of
        # address space reserved, kept after the thread ends): under `ulimit -v` the readers
        # share the report's arena, and a range a thread cannot read is read by the report's
        # connection, as with one thread. Every limit from 100 to 300 MB in steps of 5: with
        # arenas of their own, some windows failed "out of memory" where limits below and above
        # them passed (155-165, 225 and 285-290 MB on one machine; 120 MB on CI's).
        if sanitized():
            self.skipTest("a sanitized build reserves its shadow memory: no address-space limit"
                          " fits it")
        one = self.reports(self.db, 1)[1]
        env = self.env(False, INFPROF_REPORT_THREADS="8")
        failed = []
        for mb in range(100, 301, 5):
            def capped(limit=mb << 20):
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            p = subprocess.run([CLI, "report", "--format", "json", self.db], env=env,
                               capture_output=True, preexec_fn=capped, timeout=120)
            if (p.returncode, p.stderr) != (0, b"") or p.stdout != one:
                failed.append((mb, p.returncode, p.stderr[:80]))
        self.assertEqual(failed, [])

if __name__ == "__main__":
    main()
