"""Synthetic CUPTI records through the real pipeline (replay): the database and the report hold
exactly what was fed in: counts, durations, statistics, attribution to phases and threads."""
import json
import os
import pty
from harness import CLI, Case, main, prog


class FixtureBasic(Case):
    def setUp(self):
        super().setUp()
        r = self.run_prog([prog("fixture"), "basic", "basic.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        self.db = r.db("basic.db")

    def test_rows(self):
        q = self.query
        self.assertEqual(q(self.db, "SELECT count(*) FROM kernels")[0][0], 6)
        self.assertEqual(q(self.db, "SELECT count(*) FROM launch_sigs")[0][0], 3)
        self.assertEqual(q(self.db, "SELECT sum(dur) FROM kernels")[0][0], 7300)
        self.assertEqual(q(self.db, "SELECT phase, count(*), sum(dur) FROM kernels GROUP BY phase"),
                         [(1, 3, 6000), (5, 3, 1300)])
        self.assertEqual(q(self.db, "SELECT bytes, dur, copy_kind, phase FROM memcpy"),
                         [(4096, 800, 1, 1)])
        # Every API call is tied to its thread; launches of the second thread to its phase.
        self.assertEqual(q(self.db, "SELECT count(DISTINCT tid) FROM cuda_api")[0][0], 2)
        self.assertEqual(q(self.db, "SELECT corr, phase, dur FROM cuda_api ORDER BY corr"),
                         [(1, 1, 3000), (2, 1, 3000), (3, 1, 3000), (4, 5, 3000), (5, 5, 3000),
                          (6, 5, 3000), (10, 1, 1000)])
        self.assertEqual(self.meta(self.db, "cupti_dropped_records"), 3)

    def test_summary(self):
        rows = self.query(self.db, "SELECT s.value, k.count, k.total, k.min, k.max, k.med,"
                                   " k.stddev, k.med_exact FROM kernel_summary k JOIN strings s"
                                   " ON s.id = k.name_id WHERE k.phase = -1 ORDER BY k.total DESC")
        self.assertEqual(rows[0], ("gemm_fp32", 3, 6000, 1000, 3000, 2000, 1000.0, 1))
        self.assertEqual(rows[1][:6], ("gemm_fp16", 2, 1200, 500, 700, 600))
        api = self.query(self.db, "SELECT s.value, a.count, a.launches, a.latency_min,"
                                  " a.latency_max FROM api_summary a JOIN strings s"
                                  " ON s.id = a.name_id ORDER BY s.value")
        self.assertEqual(api, [("cudaLaunchKernel", 6, 6, 4000, 4000),
                               ("cudaMemcpyAsync", 1, 1, 2000, 2000)])

    def test_report_json(self):
        r = self.report_json(self.db)
        k = {x["name"]: x for x in r["kernels"]}
        self.assertEqual(k["gemm_fp32"]["total_ns"], 6000)
        self.assertEqual(k["gemm_fp32"]["instances"], 3)
        self.assertEqual(k["gemm_fp32"]["med_ns"], 2000)
        self.assertEqual(k["gemm_fp32"]["stddev_ns"], 1000)
        self.assertAlmostEqual(k["gemm_fp32"]["time_pct"], 6000 / 7300 * 100, places=3)
        self.assertIn("evil\x1b[31m_kernel\n", k)  # exact in JSON (escaped by the encoder)
        phases = {p["label"]: p for p in r["phases"]}
        self.assertEqual(set(phases), {"grad | autocast off", "no_grad | autocast fp16"})
        p = phases["no_grad | autocast fp16"]
        self.assertEqual((p["grad_mode"], p["autocast"], p["kernels"], p["gpu_time_ns"]),
                         ("no_grad", "fp16", 3, 1300))
        # Not measured is null, never a made-up 0.
        for key in ("iterations", "latency_p50_ns", "latency_p95_ns", "peak_allocated_bytes",
                    "peak_reserved_bytes"):
            self.assertIsNone(p[key], key)
        self.assertEqual(r["run"]["cupti_dropped_records"], 3)
        self.assertIn("3 CUPTI records dropped", r["run"]["warnings"])

    def test_unfinished_run_reports_the_same_kernels(self):
        # A run killed before its end has no summary: the report computes it from the rows.
        import shutil
        import sqlite3
        killed = self.db + ".killed.db"
        shutil.copy(self.db, killed)
        con = sqlite3.connect(killed)
        con.execute("DELETE FROM kernel_summary")
        con.execute("UPDATE meta SET value = 0 WHERE key = 'finished'")
        con.commit()
        con.close()
        want, got = self.report_json(self.db), self.report_json(killed)
        self.assertEqual(got["kernels"], want["kernels"])
        self.assertEqual([(p["label"], p["kernels"], p["gpu_time_ns"]) for p in got["phases"]],
                         [(p["label"], p["kernels"], p["gpu_time_ns"]) for p in want["phases"]])
        self.assertEqual(self.query(killed, "SELECT count(*) FROM kernel_summary")[0][0], 0)

    def test_detect_operators_without_operators_says_so(self):
        # --detect operators on a run without INFPROF_OPERATORS=1: it used to fall back to the
        # kernels and allocations in silence; now one line on stderr says so (the report as
        # without the option, exit 0).
        plain = self.cli("report", "--format", "json", self.db)
        r = self.cli("report", "--format", "json", "--detect", "operators", self.db)
        self.assertEqual((r.rc, r.out), (0, plain.out))
        self.assertEqual(r.err.decode(), "infprof: --detect operators: this run did not record"
                         " every PyTorch operator call (INFPROF_OPERATORS=1 records them; sampled"
                         " ones are those of live iterations only); a phase without marked"
                         " iterations is searched in its kernels and allocations instead\n")
        self.assertEqual(plain.err, b"")

    def test_report_text_escapes_control_characters(self):
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0)
        self.assertNotIn(b"\x1b", r.out)
        self.assertIn(b"evil\\x1b[31m_kernel\\x0a", r.out)
        text = r.out.decode()
        # Text: time %, total, instances, avg, median, max (min and stddev in JSON and CSV).
        self.assertRegex(text, r"82\.2\s+6\.00us\s+3\s+2\.00us\s+2\.00us\s+3\.00us\s+gemm_fp32")
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)

    def test_csv_and_md_carry_the_same(self):
        csv = self.cli("report", "--format", "csv", self.db).out.decode()
        self.assertIn("# kernels\nphase,time_pct,total_ns,instances", csv)
        self.assertIn(',6000,3,2000,2000,1000,3000,1000,"gemm_fp32"', csv)
        self.assertNotIn("\x1b", csv)
        md = self.cli("report", "--format", "md", self.db).out.decode()
        self.assertIn("## CUDA kernels (all phases)", md)
        self.assertIn("| gemm_fp32 |", md)


class Colour(Case):
    def on_terminal(self, db, **env):
        """The report as it appears on a pseudo-terminal."""
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(self.dir)
            os.execve(CLI, [CLI, "report", db], self.env(False, **env))
        out = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        return out

    def test_colour_only_on_a_terminal_and_not_with_no_color(self):
        r = self.run_prog([prog("fixture"), "basic", "c.db"], preload=False)
        self.assertEqual(r.rc, 0)
        db = r.db("c.db")
        tty = self.on_terminal(db)
        self.assertIn(b"\x1b[1mRun\x1b[0m", tty)
        self.assertIn(b"\x1b[33m3 CUPTI records dropped", tty)
        self.assertNotIn(b"\x1b[31m", tty)  # the kernel name's own escape stays escaped
        self.assertNotIn(b"\x1b[", self.on_terminal(db, NO_COLOR="1"))
        self.assertNotIn(b"\x1b[", self.cli("report", db).out)  # a pipe: no colour


class FixtureBusy(Case):
    def test_gpu_busy_is_the_union_of_the_work(self):
        r = self.run_prog([prog("fixture"), "busy", "busy.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("busy.db")
        self.assertEqual(self.query(db, "SELECT phase, busy_ns, work FROM phase_gpu"),
                         [(9, 9400, 5)])
        phase = self.report_json(db)["phases"][0]
        self.assertEqual(phase["gpu_busy_ns"], 9400)
        self.assertEqual(phase["gpu_time_ns"], 4000 + 5000 + 1000 + 1000 + 400)
        self.assertAlmostEqual(phase["gpu_busy_pct"], 100.0 * 9400 / phase["wall_ns"], places=4)

    def test_basic_busy(self):
        r = self.run_prog([prog("fixture"), "basic", "b.db"], preload=False)
        self.assertEqual(self.query(r.db("b.db"), "SELECT phase, busy_ns, work FROM phase_gpu"
                                                  " ORDER BY phase"), [(1, 6800, 4), (5, 1300, 3)])


class FixtureNvtx(Case):
    scenario = "nvtx"

    def setUp(self):
        super().setUp()
        r = self.run_prog([prog("fixture"), self.scenario, "n.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        self.db = r.db("n.db")

    def kernels(self, *args):
        r = self.cli("report", "--format", "json", *args, self.db)
        self.assertEqual(r.rc, 0, r.err)
        return {k["name"]: (k["instances"], k["total_ns"]) for k in json.loads(r.out)["kernels"]}

    def test_kernels_inside_ranges(self):
        self.assertEqual(self.kernels("--nvtx", "step"),
                         {"gemm_a": (2, 2000), "gemm_b": (1, 2000), "softmax": (1, 500)})
        self.assertEqual(self.kernels("--nvtx", "enc*"), {"gemm_a": (1, 1000), "gemm_b": (1, 2000)})
        self.assertEqual(self.kernels("--nvtx", "nothing"), {})
        self.assertEqual(len(self.kernels()), 4)

    def test_nvtx_section_projects_gpu_time_up_the_nesting(self):
        ranges = {r["range"]: r for r in self.report_json(self.db)["nvtx"]}
        self.assertEqual((ranges["step"]["instances"], ranges["step"]["gpu_kernels"],
                          ranges["step"]["gpu_time_ns"]), (2, 4, 4500))
        self.assertEqual((ranges["encoder"]["gpu_kernels"], ranges["encoder"]["gpu_time_ns"]),
                         (2, 3000))


class FixtureNvtxNoApi(FixtureNvtx):
    """The same at the default settings: no CUDA API records, so each kernel's launching range
    comes from its own row (kernel_rows.nvtx), as the launch callback saw it."""
    scenario = "nvtx-noapi"

    def test_no_api_rows(self):
        self.assertEqual(self.query(self.db, "SELECT count(*) FROM cuda_api"), [(0,)])


if __name__ == "__main__":
    main()
