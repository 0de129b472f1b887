"""The CPU time collector (collectors/cpu.c) and the report's CPU cores busy over time
(report/run/timeline.c, the cpu_timeline table, the HTML page's CPU chart), against the program's
own measure: tests/progs/cpu_burn.c spins one thread, then two, then sleeps, each stage an NVTX
range, and prints the cores it kept busy in each (its process CPU time over the stage's wall
time). Ours, within each stage, must agree; off (INFPROF_CPU_MS=0) it reads nothing and says
so; a database from before it (the H100 fixtures) gets a page that says why there is no chart.

And each iteration's CPU time (table iteration_cpu) is read without the thread's CPU clock: such a
read preempts, on an EEVDF kernel, a thread that has used its slice (profiler/iteration.c)."""
import os
from harness import LIB, Case, main, prog

STAGE_MS = 600
PERIOD_MS = 50


class CpuTime(Case):
    def burn(self, **env):
        db = os.path.join(self.dir, "cpu.db")
        r = self.run_prog([prog("cpu_burn"), str(STAGE_MS)], INFPROF_OUTPUT=db, **env)
        self.assertEqual(r.rc, 0, r.err)
        own = {line.split()[0]: float(line.split()[1]) for line in r.out.decode().splitlines()}
        return db, own

    def test_cores_per_stage_against_the_program(self):
        db, own = self.burn(INFPROF_CPU_MS=str(PERIOD_MS))
        report = self.report_json(db)
        rows = report["cpu_timeline"]
        self.assertGreater(len(rows), 20, rows)
        self.assertEqual({r["device"] for r in rows}, {"cpu"})
        spans = {name: (start, end) for name, start, end in
                 self.query(db, "SELECT s.value, r.start, r.end FROM nvtx_ranges r"
                                " JOIN strings s ON s.id = r.text_id")}
        self.assertEqual(set(spans), {"one", "two", "idle"}, spans)
        for name, (start, end) in spans.items():
            # Buckets whose reading interval (the PERIOD_MS before the reading, which falls in
            # the bucket) lies inside the stage.
            inside = [r["program_cores"] for r in rows
                      if r["t_ns"] >= start + (PERIOD_MS + 20) * 1_000_000
                      and r["t_ns"] <= end - 10_000_000]
            self.assertGreaterEqual(len(inside), 5, (name, rows))
            ours = sum(inside) / len(inside)
            self.assertAlmostEqual(ours, own[name], delta=0.1 * own[name] + 0.05,
                                   msg=(name, ours, own[name], inside))
            # Our writer's own share is apart, and small (inside the stage: the run's last
            # reading, at the finish, holds its writing of the database: 0.11 once under load;
            # one reading of a loaded full ctest -j2 read 0.065, the stage's mean 0.010).
            mine = [r["infprof_cores"] for r in rows if start <= r["t_ns"] <= end - 10_000_000]
            self.assertLess(sum(mine) / len(mine), 0.02, mine)
            self.assertLess(max(mine), 0.1, mine)
        self.assertEqual(report["run"]["collector_cpu"], f"on: every {PERIOD_MS} ms")
        meta = dict(self.query(db, "SELECT key, value FROM meta"))
        self.assertEqual(int(meta["cpu_readings_dropped"]), 0)
        # The page draws it, with its text equivalent.
        html = self.cli("report", "--format", "html", db)
        self.assertEqual(html.rc, 0, html.err)
        page = html.out.decode()
        chart = page[page.index('id="chart-cpu"'):]
        chart = chart[:chart.index("</figure>")]
        self.assertIn("<svg", chart)
        self.assertRegex(chart, r"cpu, the program: highest [0-9.]+ cores")

    def test_never_more_cores_than_the_machine_has(self):
        # An H200 run's page drew 32.4 cores busy on a 16-core host: its writer thread's clock
        # (ours, taken out of the program's) started again from 0 mid-run, and 4.4 s of ours
        # were given back to the program in one 137 ms reading. The CPUs online are kept; a
        # reading above them is left out and counted, and a thread's clock going back is read
        # from its new start.
        import shutil
        import sqlite3
        db, _ = self.burn(INFPROF_CPU_MS=str(PERIOD_MS))
        online = dict(self.query(db, "SELECT key, value FROM meta"))["cpus_online"]
        self.assertEqual(int(online), os.cpu_count())
        report = self.report_json(db)
        # (JSON's figures are rounded to 9 digits: their sum may pass by 1e-9)
        self.assertLessEqual(max(r["program_cores"] + r["infprof_cores"]
                                 for r in report["cpu_timeline"]), int(online) + 1e-6)
        self.assertIsNone(report["run"]["warnings"])
        hostile = os.path.join(self.dir, "hostile.db")
        shutil.copy(db, hostile)
        con = sqlite3.connect(hostile)
        (n,), = con.execute("SELECT count(*) FROM cpu_samples")
        # Ours runs up 10 s by the middle reading, then its clock starts again (a new writer);
        # and one reading claims 50 cores more than it could.
        con.execute("UPDATE cpu_samples SET ours_ns = ours_ns + 10000000000"
                    " WHERE rowid < (SELECT min(rowid) + ? FROM cpu_samples)", (n // 2,))
        con.execute("UPDATE cpu_samples SET cpu_ns = cpu_ns + 50 * ?"
                    " WHERE rowid >= (SELECT min(rowid) + ? FROM cpu_samples)",
                    (PERIOD_MS * 1_000_000, n * 3 // 4))
        con.commit()
        con.close()
        report = self.report_json(hostile)
        cores = [r["program_cores"] + r["infprof_cores"] for r in report["cpu_timeline"]]
        self.assertLessEqual(max(cores), int(online) + 1e-6, report["cpu_timeline"])
        self.assertRegex(report["run"]["warnings"] or "",
                         rf"^1 CPU time readings? above the {online} CPUs online were left out of"
                         r" every figure$")

    def test_a_period_under_the_clock_step_is_raised(self):
        # The process's CPU clock moves in scheduler ticks (4 ms on a 250 Hz kernel): read every
        # 1 ms, a one-thread spin showed 3.9 cores, then none. Raised to 20 ms, it stays near 1.
        db, own = self.burn(INFPROF_CPU_MS="1")
        report = self.report_json(db)
        self.assertRegex(report["run"]["collector_cpu"],
                         r"^on: every 20 ms \(INFPROF_CPU_MS=1 raised")
        start, end = self.query(db, "SELECT r.start, r.end FROM nvtx_ranges r JOIN strings s"
                                    " ON s.id = r.text_id WHERE s.value = 'one'")[0]
        one = [r["program_cores"] for r in report["cpu_timeline"]
               if start + 30_000_000 <= r["t_ns"] <= end - 10_000_000]
        self.assertGreater(len(one), 10, one)
        self.assertLess(max(one), 1.35, (one, own))

    def test_off(self):
        db, _ = self.burn(INFPROF_CPU_MS="0")
        self.assertEqual(self.query(db, "SELECT count(*) FROM cpu_samples"), [(0,)])
        report = self.report_json(db)
        self.assertEqual(report["cpu_timeline"], [])
        self.assertEqual(report["run"]["collector_cpu"], "off: INFPROF_CPU_MS=0")
        page = self.cli("report", "--format", "html", db).out.decode()
        chart = page[page.index('id="chart-cpu"'):]
        self.assertIn("no chart: no CPU time was read (INFPROF_CPU_MS=0",
                      chart[:chart.index("</figure>")])


class IterationEdges(Case):
    def test_no_cpu_clock_read_at_an_iterations_edges(self):
        # 200 NVTX-marked iterations; a preloaded shim counts the CPU-clock reads of the main
        # thread (tests/progs/cpuclock_shim.c). Before 2026-11-26 (fourth session) each edge
        # read it: 400 reads, and on a loaded CPU a 4 ms preemption at each of them
        # (tests/torch/test_series.py read 72% time between iterations against the program's 1%).
        db = os.path.join(self.dir, "edges.db")
        r = self.run_prog([prog("nvtx_ranges"), "200", "iteration"], preload=False,
                          LD_PRELOAD=f"{prog('cpuclock_shim.so')} {LIB}", INFPROF_OUTPUT=db)
        self.assertEqual(r.rc, 0, r.err)
        reads = [line for line in r.err.decode().splitlines()
                 if line.startswith("cpu_clock_reads ")]
        self.assertEqual(len(reads), 1, r.err)
        self.assertEqual(reads[0], "cpu_clock_reads 0", r.err)
        # The CPU time is still read, from the scheduler's account (getrusage), for each one.
        self.assertEqual(self.query(db, "SELECT count(*) FROM iterations")[0][0], 200)
        rows = self.query(db, "SELECT count(*), min(cpu_ns), sum(cpu_ns IS NULL),"
                              " min(involuntary) FROM iteration_cpu")[0]
        self.assertEqual(rows[0], 200, rows)
        self.assertGreaterEqual(rows[1], 0, rows)
        self.assertEqual(rows[2], 0, rows)
        self.assertGreaterEqual(rows[3], 0, rows)

    def test_tight_iterations_read_the_account_once_each(self):
        # Iterations of 40 us with a computed gap of 12 us between them: each begins within
        # 20 us of the last one's end, and starts from that end's reading (profiler/iteration.c,
        # issue 49). Before 2026-11-29 (session 15) two getrusage calls an iteration; read
        # chained without scaling, their CPU time would be the gap's too: 52 us in 40, 1.3x.
        db = os.path.join(self.dir, "gap.db")
        r = self.run_prog([prog("iter_gap"), "600", "40", "12"], preload=False,
                          LD_PRELOAD=f"{prog('cpuclock_shim.so')} {LIB}", INFPROF_OUTPUT=db)
        self.assertEqual(r.rc, 0, r.err)
        n = int(r.out.decode().split()[1])
        self.assertGreater(n, 1000, r.out)
        reads = [int(line.split()[1]) for line in r.err.decode().splitlines()
                 if line.startswith("thread_rusage_reads ")]
        self.assertEqual(len(reads), 1, r.err)
        # One an iteration, and a few more where a preemption made a gap longer (a loaded
        # machine), never two each.
        self.assertGreaterEqual(reads[0], n, (reads, n))
        self.assertLess(reads[0], 1.25 * n, (reads, n))
        cpu, host, k = self.query(db, "SELECT sum(c.cpu_ns), sum(i.dur), count(*) FROM"
                                      " iteration_cpu c JOIN iterations i USING (id)")[0]
        self.assertEqual(k, n, (k, n))
        # The thread computes throughout: CPU time is its host time, within the account's ticks
        # (4 ms in 480 ms), less what a loaded machine took off the CPU, which the program's own
        # clocks measure (ctest -j3 beside other work left it 0.33, then 0.15 of its wall time).
        share = float(r.out.decode().split()[3])
        self.assertLess(cpu / host, 1.06, (cpu, host))
        self.assertGreater(cpu / host, 0.75 * share - 0.05, (cpu, host, share))


if __name__ == "__main__":
    main()
