"""infprof report A.db B.db ...: each process's sections, labelled, and the combined ones. Exact
combined figures: summed counts and totals, medians and latency percentiles taken again from
every launch and iteration (never averaged), throughput over the union of the iterations on the
wall clock, the largest per-process peak per phase, and per shared device the peak of the sum."""
import csv
import io
import json
import lzma
import os
import shutil
import sqlite3

from compare_common import MIB, Runs, build_overlapping
from harness import main, prog

GRAD, NO_GRAD, INFER = ("grad | autocast off", "no_grad | autocast fp16",
                        "inference_mode | autocast bf16")
UUID = "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"


class MultiJson(Runs):
    def setUp(self):
        super().setUp()
        self.r = self.json_of("report", self.base, self.new)
        self.label = {p: "pid %d on %s" % (self.meta(p, "pid"), self.meta(p, "host"))
                      for p in (self.base, self.new)}

    def test_runs_and_per_process_rows(self):
        self.assertEqual([(x["process"], x["file"], x["pid"]) for x in self.r["runs"]],
                         [(self.label[p], p, self.meta(p, "pid")) for p in (self.base, self.new)])
        per = {}
        for k in self.r["kernels"]:
            per.setdefault(k["process"], {})[k["name"]] = k
        self.assertEqual(sorted(per[self.label[self.base]]),
                         ["gemm_fp16", "gemm_fp32", "old_kernel", "relu"])
        self.assertEqual(per[self.label[self.new]]["gemm_fp32"]["med_ns"], 1000)
        phases = [(x["process"], x["label"]) for x in self.r["phases"]]
        self.assertEqual(phases, [(self.label[self.base], GRAD), (self.label[self.base], NO_GRAD),
                                  (self.label[self.new], GRAD), (self.label[self.new], INFER)])
        # The answer first, as in the text: the job, the processes, the combined sections.
        self.assertEqual(list(self.r)[:6],
                         ["json_schema_version", "job", "processes", "combined_phases",
                          "combined_kernels", "combined_memory"])

    def test_the_documented_sql_over_several_databases(self):
        # docs/report.md's SQLite query over two ranks' files (ATTACH and a union), run as the
        # documentation gives it: each rank's iteration count and lower-median host time.
        import re
        import shutil
        import sqlite3
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "report.md"),
                  encoding="utf-8") as f:
            doc = f.read()
        sql = re.search(r"<!-- test: several databases in SQLite -->\n```sql\n(.*?)```", doc,
                        re.S).group(1)
        for i, p in enumerate((self.base, self.new)):
            shutil.copy(p, os.path.join(self.dir, f"rank{i}.db"))
        con = sqlite3.connect(":memory:")
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            *attach, query = [x for x in sql.split(";") if x.strip()]
            for a in attach:
                con.execute(a)
            got = con.execute(query).fetchall()
        finally:
            os.chdir(cwd)
            con.close()
        want = []
        for i, p in enumerate((self.base, self.new)):
            durs = sorted(d for (d,) in self.query(p, "SELECT dur FROM iterations"))
            want.append((f"rank{i}", len(durs), durs[(len(durs) - 1) // 2] / 1e6))
        self.assertEqual(sorted(got), sorted(want))
        self.assertEqual([r[2] for r in got], sorted((w[2] for w in want), reverse=True))

    def test_combined_kernels_exact_medians(self):
        k = {x["name"]: x for x in self.r["combined_kernels"]}
        g = k["gemm_fp32"]
        # 1000, 3000, 2000 and 500, 1500, 1000 ns: the median of all six is 1250 (the medians'
        # mean would be 1500); the sample deviation of all six is sqrt(4e6 / 5).
        self.assertEqual((g["instances"], g["total_ns"], g["avg_ns"], g["med_ns"], g["min_ns"],
                          g["max_ns"], g["stddev_ns"], g["processes"]),
                         (6, 9000, 1500, 1250, 500, 3000, 894, 2))
        self.assertEqual((k["relu"]["instances"], k["relu"]["med_ns"], k["relu"]["processes"]),
                         (4, 200, 2))
        self.assertEqual((k["new_kernel"]["med_ns"], k["new_kernel"]["processes"]), (800, 1))
        self.assertEqual((k["gemm_fp16"]["med_ns"], k["gemm_fp16"]["stddev_ns"]), (600, 141))
        self.assertEqual([x["name"] for x in self.r["combined_kernels"]][:3],
                         ["gemm_fp32", "gemm_fp16", "new_kernel"])
        self.assertAlmostEqual(g["time_pct"], 100 * 9000 / 12750, places=3)

    def test_combined_phases(self):
        p = {x["label"]: x for x in self.r["combined_phases"]}
        self.assertEqual(list(p), [GRAD, NO_GRAD, INFER])
        g = p[GRAD]
        # Iterations 1, 2, 3, 4 us and 0.5, 1, 1.5, 2 us: nearest-rank percentiles of all 8.
        self.assertEqual((g["processes"], g["iterations"], g["latency_p50_ns"],
                          g["latency_p95_ns"], g["latency_p99_ns"]), (2, 8, 1500, 4000, 4000))
        # One run after the other: 8 iterations in 10 + 5 us of iteration time.
        self.assertAlmostEqual(g["throughput_per_s"], 8e9 / 15000, delta=1)
        self.assertAlmostEqual(g["items_per_s"] / (16e9 / 15000), 1, places=5)
        self.assertEqual((g["kernels"], g["gpu_time_ns"]), (13, 6900 + 4250))
        self.assertEqual((g["peak_allocated_max_bytes"], g["peak_allocated_max_process"],
                          g["peak_reserved_max_bytes"]),
                         (8 * MIB, self.label[self.base], 8 * MIB))
        self.assertEqual((p[NO_GRAD]["processes"], p[NO_GRAD]["iterations"],
                          p[NO_GRAD]["latency_p50_ns"], p[NO_GRAD]["items_per_s"]),
                         (1, 2, 500, None))
        self.assertEqual((p[INFER]["processes"], p[INFER]["peak_allocated_max_bytes"]),
                         (1, 3 * MIB))

    def test_combined_memory_one_after_the_other(self):
        # The same GPU (one UUID) on one host, never at the same time: the larger peak.
        self.assertEqual(self.r["combined_memory"],
                         [{"host": self.meta(self.base, "host"), "device": "cuda:0", "uuid": UUID,
                           "processes": 2, "peak_allocated_bytes": 8 * MIB,
                           "peak_reserved_bytes": 8 * MIB,
                           "largest_process_peak_bytes": 8 * MIB}])


class MultiOptions(Runs):
    def test_by_phase(self):
        r = self.json_of("report", "--by-phase", self.base, self.new)
        k = {(x["phase"], x["name"]): x for x in r["combined_kernels"]}
        self.assertEqual((k[(GRAD, "gemm_fp32")]["med_ns"], k[(GRAD, "gemm_fp32")]["processes"]),
                         (1250, 2))
        self.assertEqual(k[(NO_GRAD, "gemm_fp16")]["processes"], 1)
        self.assertEqual([x["phase"] for x in r["combined_kernels"]],
                         [GRAD] * 5 + [NO_GRAD, INFER])

    def test_phase_of_some_processes(self):
        r = self.json_of("report", "--phase", "inference/bf16", self.base, self.new)
        self.assertEqual([(x["name"], x["processes"]) for x in r["combined_kernels"]],
                         [("gemm_bf16", 1)])
        self.assertEqual([x["name"] for x in r["kernels"]], ["gemm_bf16"])
        text = self.text_lines("report", "--phase", "inference/bf16", self.base, self.new)
        self.assertIn("All processes: CUDA kernels of phase inference_mode | autocast bf16", text)

    def test_top(self):
        r = self.json_of("report", "--top", "1", self.base, self.new)
        self.assertEqual([x["name"] for x in r["combined_kernels"]], ["gemm_fp32"])
        # The medians still come from every launch of every process.
        self.assertEqual(r["combined_kernels"][0]["med_ns"], 1250)

    def test_three_processes(self):
        r = self.json_of("report", self.base, self.new, self.other)
        k = {x["name"]: x for x in r["combined_kernels"]}
        # base and other launch the same gemm_fp32: 1, 3, 2 us twice, plus 0.5, 1.5, 1 us.
        self.assertEqual((k["gemm_fp32"]["instances"], k["gemm_fp32"]["med_ns"],
                          k["gemm_fp32"]["processes"]), (9, 1500, 3))
        self.assertEqual((k["old_kernel"]["instances"], k["old_kernel"]["med_ns"],
                          k["old_kernel"]["processes"]), (2, 500, 2))
        # other's GPU is another one (its own UUID): its memory is not added to the H100's.
        mem = {x["uuid"]: x for x in r["combined_memory"]}
        self.assertEqual(len(mem), 2)
        self.assertEqual((mem[UUID]["processes"], mem[UUID]["peak_allocated_bytes"]),
                         (2, 8 * MIB))


class MultiOverlap(Runs):
    def test_peak_of_the_sum_on_a_shared_gpu(self):
        first, second = build_overlapping(self.dir, "base", "new")
        r = self.json_of("report", first, second)
        # The first run still holds 4 MiB when the second reaches 6 MiB: 10 MiB at once, not
        # the larger peak (8) nor the sum of peaks (14); reserved 8 + 8.
        self.assertEqual([(m["processes"], m["peak_allocated_bytes"], m["peak_reserved_bytes"],
                           m["largest_process_peak_bytes"]) for m in r["combined_memory"]],
                         [(2, 10 * MIB, 16 * MIB, 8 * MIB)])


    def test_memory_readings_merged_past_the_budget(self):
        # Past INFPROF_MULTI_MEM_POINTS changes a device (about 1 M readings over all the
        # processes by default, so that a thousand stay bounded), a process's readings are
        # merged into that many intervals at their highest totals: the peak of the sum is then
        # an upper bound (here at most the sum of the peaks), the largest process's exact, and
        # the note says so.
        first, second = build_overlapping(self.dir, "base", "new")
        import json
        out = self.cli("report", "--format", "json", first, second, INFPROF_MULTI_MEM_POINTS="2")
        self.assertEqual(out.rc, 0, out.err)
        m, = json.loads(out.out)["combined_memory"]
        self.assertGreaterEqual(m["peak_allocated_bytes"], 10 * MIB)
        self.assertLessEqual(m["peak_allocated_bytes"], 16 * MIB)
        self.assertEqual(m["largest_process_peak_bytes"], 8 * MIB)
        text = self.cli("report", first, second, INFPROF_MULTI_MEM_POINTS="2").out.decode()
        self.assertRegex(text, r"the sums\s+are\s+upper\s+bounds\s+within\s+that")
        exact = self.cli("report", first, second).out.decode()
        self.assertNotIn("upper bounds", exact)


class MultiRenderings(Runs):
    def test_text(self):
        text = self.text_lines("report", "--each", self.base, self.new)
        lb = "pid %d on %s" % (self.meta(self.base, "pid"), self.meta(self.base, "host"))
        ln = "pid %d on %s" % (self.meta(self.new, "pid"), self.meta(self.new, "host"))
        # The answer first (the Summary over all processes, the processes side by side, the
        # combined sections), then with --each the run headers and each process's sections.
        order = ["Summary (all processes)", "Processes (each one's main phase",
                 "All processes: phases (merged by label)",
                 "All processes: CUDA kernels (all phases)",
                 "All processes: tensor memory per device", "Run 1 of 2: " + lb,
                 "Run 2 of 2: " + ln, lb + ": Phases (grad mode",
                 lb + ": CUDA kernels (all phases)", ln + ": Phases (grad mode",
                 ln + ": CUDA kernels (all phases)"]
        at = [text.find(s) for s in order]
        self.assertNotIn(-1, at, [s for s, i in zip(order, at) if i < 0])
        self.assertEqual(at, sorted(at))
        self.assertRegex(text, r"70\.6\s+9\.00us\s+6\s+1\.50us\s+1\.25us\s+2\s+gemm_fp32")
        self.assertRegex(text, r"grad/off\s+2\s+8\s+533333\s+1\.50us\s+4\.00us\s+13\s+11\.15us"
                               r"\s+8\.00MiB")
        self.assertIn("evil\\x1b[31m_kernel\\x0a", text)

    def test_csv_and_markdown(self):
        out = self.cli("report", "--format", "csv", self.base, self.new).out.decode()
        sections = {}
        for block in out.strip().split("\n\n"):
            lines = block.splitlines()
            sections[lines[0][2:]] = list(csv.DictReader(io.StringIO("\n".join(lines[1:]))))
        self.assertEqual(len(sections["runs"]), 2)
        self.assertEqual(sections["runs"][1]["file"], self.new)
        self.assertEqual(len(sections["kernels"]), 9)
        g = [x for x in sections["combined_kernels"] if x["name"] == "gemm_fp32"][0]
        self.assertEqual((g["instances"], g["total_ns"], g["med_ns"], g["processes"]),
                         ("6", "9000", "1250", "2"))
        self.assertNotIn("\x1b", out)
        md = self.cli("report", "--format", "md", self.base, self.new).out.decode()
        self.assertIn("## All processes: CUDA kernels (all phases)", md)
        self.assertIn("| 70.6 | 9.00us | 6 | 1.50us | 1.25us | 2 | gemm_fp32 |", md)
        self.assertNotIn("\x1b", md)

    def test_fork_child_is_labelled_by_role(self):
        r = self.run_prog([prog("host"), "fork"])
        self.assertEqual(r.rc, 0, r.err)
        child = [d for d in r.dbs() if d != "infprof.db"][0]
        rep = self.json_of("report", r.db("infprof.db"), r.db(child))
        labels = [x["process"] for x in rep["runs"]]
        self.assertEqual(labels[1], "pid %d on %s (fork_child)"
                         % (self.meta(r.db(child), "pid"), self.meta(r.db(child), "host")))
        self.assertFalse(labels[0].endswith(")"), labels[0])
        # No CUDA, no libtorch: nothing to combine, nothing made up.
        self.assertEqual((rep["combined_kernels"], rep["combined_memory"]), ([], []))
        self.text_lines("report", r.db("infprof.db"), r.db(child))
        self.assertNotIn("whose parents lead outside them", rep["job"]["processes"])

    def test_an_earlier_runs_child_is_named(self):
        # infprof run --force rewrites its output, not an earlier run's children's files: a
        # report of the output and every child file beside it merged another run's child into
        # this one's job, silently (a fresh-eyes check). Now the Summary says which.
        first = self.cli("run", "-o", "f.db", "--", prog("host"), "fork")
        second = self.cli("run", "--force", "-o", "f.db", "--", prog("host"), "fork")
        self.assertEqual((first.rc, second.rc), (0, 0), (first.err, second.err))
        children = sorted(d for d in os.listdir(self.dir) if d.startswith("f-") and
                          d.endswith(".db"))
        self.assertEqual(len(children), 2, os.listdir(self.dir))
        parent = self.meta(os.path.join(self.dir, "f.db"), "pid")
        stale = [c for c in children
                 if self.meta(os.path.join(self.dir, c), "ppid") != parent]
        self.assertEqual(len(stale), 1, children)
        rep = self.json_of("report", os.path.join(self.dir, "f.db"),
                           *[os.path.join(self.dir, c) for c in children])
        said = rep["job"]["processes"]
        self.assertIn("1 forked process whose parents lead outside them (pid %d)"
                      % self.meta(os.path.join(self.dir, stale[0]), "pid"), said)


class MultiSpilled(Runs):
    def test_rows_past_memory_come_back_from_disk(self):
        """Twelve copies of the H100 conv-net fixture (each its own pid): the rows of all
        processes past 4,096 in a section wait in a temporary file (report_multi.c,
        table_spill.c) and come back in order: the JSON and CSV are those of --each, which
        keeps every table in memory."""
        src = os.path.join(self.dir, "convnet.db")
        with lzma.open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                    "h100", "convnet-b32-noeval.db.xz")) as f, \
                open(src, "wb") as out:
            shutil.copyfileobj(f, out)
        paths = []
        for i in range(12):
            p = os.path.join(self.dir, f"rank{i:02d}.db")
            shutil.copy(src, p)
            con = sqlite3.connect(p)
            with con:
                con.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (1000 + i,))
            con.close()
            paths.append(p)
        lean = self.cli("report", "--format", "json", *paths)
        each = self.cli("report", "--each", "--format", "json", *paths)
        self.assertEqual((lean.rc, each.rc), (0, 0), lean.err + each.err)
        a, b = json.loads(lean.out), json.loads(each.out)
        self.assertEqual(list(a), list(b))
        for key in a:
            self.assertEqual(a[key], b[key], key)
        # The spill was taken: sections of more rows than memory holds.
        self.assertGreater(len(a["memory_timeline"]), 4096)
        self.assertEqual({x["process"] for x in a["memory_timeline"]},
                         {x["process"] for x in a["runs"]})
        lean = self.cli("report", "--format", "csv", *paths)
        each = self.cli("report", "--each", "--format", "csv", *paths)
        self.assertEqual(lean.out, each.out)
        # The names launched over 4,096 times in all: their median from a uniform sample of
        # 4,096 (as the single-run report's), said under the table, and near the exact one
        # (twelve copies of one run: the median of one copy's launches).
        one = {k["name"]: k for k in self.report_json(src)["kernels"]}
        big = [k for k in a["combined_kernels"] if k["instances"] > 4096]
        self.assertTrue(big)
        for k in big:
            exact = one[k["name"]]  # exact: under 4,096 launches in one copy
            self.assertLessEqual(exact["instances"], 4096)
            self.assertEqual(k["instances"], 12 * exact["instances"])
            self.assertLess(abs(k["med_ns"] - exact["med_ns"]), 0.02 * exact["med_ns"],
                            (k["name"], exact["med_ns"]))
        # The rows wait in $TMPDIR (not /tmp whatever it says): one that cannot hold them is
        # named, with the fix, and nothing is printed.
        bad = self.cli("report", "--format", "json", *paths,
                       TMPDIR=os.path.join(self.dir, "no-such-dir"))
        self.assertEqual((bad.rc, bad.out), (2, b""))
        self.assertIn("cannot make a temporary file in %s" % os.path.join(self.dir, "no-such-dir"),
                      bad.err.decode())
        self.assertIn("set TMPDIR to a writable directory", bad.err.decode())
        text = self.cli("report", *paths).out.decode()
        self.assertRegex(" ".join(text.split()), r"the median of %d names? launched over 4,096"
                         r" times from a uniform sample of 4,096 launches" % len(big))


class MultiSeries(Runs):
    def test_the_series_line_across_runs(self):
        # Three runs of two configurations: a at 100 us; b at 200, 50, then 200 us. Each run's
        # Series line gives its own verdict with a band of its own iterations ("one run"); the
        # report of the three gives each run's ratio of the same pair and says no verdict holds
        # in every run (a fresh-eyes check: an int8 MLP against fp32, one loop after the
        # other, "fp32 faster" in one process and "int8 faster" in the next).
        from compare_common import build
        runs = [build(self.root, f"rep{i}", "latency", FIXTURE_P50_US=100, FIXTURE_B_PCT=pct)
                for i, pct in enumerate((200, 50, 200))]
        two = r"(?:1\.9\d|2\.0\d)x"  # 200 us over 100, within the fixture's 2%
        one = self.json_of("report", runs[1])["summary"]["series"]
        self.assertRegex(one, rf"^grad/off: b fastest, p50 [\d.]+us: {two} a \([\d.]+us\),"
                         r" faster \(95%: [\d.]+-[\d.]+x, one run\)$")
        job = self.json_of("report", *runs)["job"]
        self.assertRegex(job["series"], rf"^grad/off: a against b in 3 of 3 runs: {two},"
                         rf" 0\.[45]\dx, {two}; faster in 2, slower in 1: no verdict holds in"
                         r" every run$")
        # Where every run agrees, the line says so; a pair in one run alone has no line.
        job = self.json_of("report", runs[0], runs[2])["job"]
        self.assertRegex(job["series"],
                         rf"^grad/off: a against b in 2 of 2 runs: {two}, {two}; faster in both$")
        # Another command's labels may name other work: said.
        other = build(self.root, "cmd2", "latency", "--other", FIXTURE_P50_US=100,
                      FIXTURE_B_PCT=200)
        self.assertTrue(self.json_of("report", runs[0], other)["job"]["series"].endswith(
            "faster in both (the runs ran other commands: a name may be other work in each)"))
        alone = build(self.root, "alone", "latency", FIXTURE_ONE_SERIES=1)
        self.assertIsNone(self.json_of("report", runs[0], alone)["job"]["series"])
        text = self.cli("report", *runs).out.decode()
        self.assertIn("  Series ", text)


if __name__ == "__main__":
    main()
