"""Allocator reports folded per forward iteration (INFPROF_MEMORY_FOLD=1, the default;
collectors/torch_memfold.c, torch_ingest.c, report/run/memrows.c) on tests/progs/memfold.py,
whose allocations are the same run after run: three unmarked loops in two phases, one forward
that enters autocast (its thread's phase changes mid-iteration), one that makes a large
temporary every 13th call, outputs kept between iterations. Against the same program with every
report a row (INFPROF_MEMORY_FOLD=0):
- every report is accounted for (rows not folded + the folds' reports), and the folds hold most;
- each iteration's allocations (count, bytes, largest), each phase's, and the highest and lowest
  totals are the same;
- the report's memory figures (the memory section, each phase's and series' peak, the operator
  at a peak) are the same;
- a fold never straddles a phase change: the autocast forwards have a fold per phase;
- the operators' captured iterations keep their reports whole;
- on tests/progs/memfold_hostile.py, forwards left without their end (one that raises, a thread
  ending inside its forward, os._exit inside one, a fork inside one whose child leaves with
  os._exit), a shared-memory block received by one thread while another is inside its forward,
  and phases entered inside a forward (one without a report, one with a single report):
  the same exit status and output, every report and allocation accounted for in each process, and
  the same memory figures (a fresh-eyes check found each of them wrong in the first version)."""
import glob
import os
import tempfile
import unittest

from harness import TORCH_PYTHON, main
from torchlib import SAMPLE_INFER, TORCH_MODES, TorchCase, need

PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs")
PROG = os.path.join(PROGS, "memfold.py")
HOSTILE = os.path.join(PROGS, "memfold_hostile.py")
N = 60


class MemoryFold(TorchCase):
    """The two runs are made once, for every case of the class (a minute on this machine)."""

    @classmethod
    def setUpClass(cls):
        cls._shared = tempfile.TemporaryDirectory(prefix="infprof-test-memfold-")
        cls.runs = {}

    @classmethod
    def tearDownClass(cls):
        cls._shared.cleanup()

    def profile(self, fold, name):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        db = os.path.join(self._shared.name, name)
        r = self.run_prog([TORCH_PYTHON, PROG, str(N)], timeout=300, INFPROF_OUTPUT=db,
                          INFPROF_MEMORY_FOLD=str(fold), INFPROF_OPERATORS_EVERY="4",
                          INFPROF_OPERATORS_BUDGET="0",
                          # the two runs capture the same iterations: their figures compared
                          INFPROF_OPERATORS_SEED="1")
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(r.out.strip(), str(3 * N).encode())
        return db

    def both(self):
        if not self.runs:
            self.runs[0] = self.profile(0, "rows.db")
            self.runs[1] = self.profile(1, "folded.db")
        return self.runs[0], self.runs[1]

    def per_iteration(self, db, folded):
        """iteration id -> (allocations, bytes, largest) of its thread inside its window."""
        rows = self.query(db, """
            SELECT i.id, count(*), sum(m.bytes), max(m.bytes) FROM iterations i
            JOIN tensor_memory m ON m.tid = i.tid AND m.ts BETWEEN i.start AND i.start + i.dur
            WHERE m.bytes > 0 GROUP BY i.id""")
        got = {i: [n, b, big] for i, n, b, big in rows}
        if folded:
            for i, n, b, big in self.query(db, """SELECT iter, sum(allocs), sum(alloc_bytes),
                                                  max(largest1) FROM tensor_memory_folds
                                                  GROUP BY iter"""):
                g = got.setdefault(i, [0, 0, 0])
                g[0] += n
                g[1] += b
                g[2] = max(g[2], big)
        return {i: tuple(v) for i, v in got.items() if v[0]}

    def test_every_report_is_accounted_for(self):
        rows, folded = self.both()
        total = self.query(rows, "SELECT count(*) FROM tensor_memory")[0][0]
        real, levels = self.query(folded, "SELECT sum(fold IS NULL), sum(fold IS NOT NULL)"
                                          " FROM tensor_memory")[0]
        folds, reports = self.query(folded, "SELECT count(*), sum(reports)"
                                            " FROM tensor_memory_folds")[0]
        self.assertEqual(real + reports, total)
        self.assertGreater(reports, total / 2)  # 3 loops of 60: about 3 in 4 iterations folded
        self.assertLessEqual(levels, 4 * folds)
        self.assertEqual(int(self.meta(folded, "tensor_memory_folded_reports")), reports)
        self.assertEqual(int(self.meta(folded, "tensor_memory_folds")), folds)
        self.assertEqual(self.meta(folded, "tensor_memory_mode"), "folded per forward iteration")
        self.assertEqual(self.meta(rows, "tensor_memory_mode"), "every report")
        self.assertEqual(self.query(rows, "SELECT count(*) FROM tensor_memory_folds")[0][0], 0)

    def test_allocations_and_totals_are_the_same(self):
        rows, folded = self.both()
        a, b = self.per_iteration(rows, False), self.per_iteration(folded, True)
        self.assertEqual(len(a), 3 * N)
        self.assertEqual(a, b)
        q = ("SELECT (SELECT count(*) FROM tensor_memory WHERE bytes > 0),"
             " (SELECT sum(bytes) FROM tensor_memory WHERE bytes > 0),"
             " max(allocated), min(allocated) FROM tensor_memory")
        r0 = self.query(rows, q)[0]
        r1 = self.query(folded, q)[0]
        f = self.query(folded, "SELECT sum(allocs), sum(alloc_bytes) FROM tensor_memory_folds")[0]
        self.assertEqual((r1[0] + f[0], r1[1] + f[1], r1[2], r1[3]), r0)

    def test_the_report_says_the_same(self):
        rows, folded = self.both()
        a, b = self.report_json(rows), self.report_json(folded)
        self.assertTrue(a["memory"])
        self.assertEqual(a["memory"], b["memory"])

        def mem(section):
            return [{k: v for k, v in row.items()  # not a saving against another phase: timing's
                     if any(w in k for w in ("peak", "alloc", "mem")) and "saved" not in k}
                    for row in section]
        self.assertEqual(mem(a["phases"]), mem(b["phases"]))

        # The series of both runs, by phase and name: Mixed enters autocast inside its forward,
        # and a forward that spends most of its time in bf16 (one or two of 60, by timing) is a
        # series of that phase in one run and not in the other.
        def by_key(rep):
            return {(x["phase"], x["series"]): x for x in rep["series"] if x["iterations"] >= 10}
        sa, sb = by_key(a), by_key(b)
        self.assertEqual(sorted(sa), sorted(sb))
        self.assertEqual(len(sa), 3, sorted(sa))
        self.assertEqual(mem([sa[k] for k in sorted(sa)]), mem([sb[k] for k in sorted(sa)]))
        self.assertTrue(any(v for row in mem(sa.values()) for v in row.values()))
        self.assertEqual(mem(a["operator_phases"]), mem(b["operator_phases"]))
        text = self.cli("report", folded)
        self.assertEqual(text.rc, 0, text.err)

    def test_a_fold_never_straddles_a_phase_change(self):
        _, folded = self.both()
        # The autocast forwards (the third loop): a fold per phase they pass through, in order.
        mixed = self.query(folded, """SELECT iter, count(DISTINCT phase), count(*)
                                      FROM tensor_memory_folds GROUP BY iter
                                      HAVING count(DISTINCT phase) > 1""")
        self.assertGreater(len(mixed), N / 2, mixed)
        self.assertTrue(all(n >= 3 for _, _, n in mixed), mixed)  # out, in autocast, out again

    def test_captured_iterations_keep_their_reports(self):
        _, folded = self.both()
        windows = self.query(folded, "SELECT iter FROM torch_operator_windows")
        self.assertGreater(len(windows), 10)
        ids = ",".join(str(i) for (i,) in windows)
        self.assertEqual(self.query(folded, "SELECT count(*) FROM tensor_memory_folds"
                                            f" WHERE iter IN ({ids})")[0][0], 0)
        # and their reports are rows, with their operators
        self.assertGreater(self.query(folded, f"""
            SELECT count(*) FROM tensor_memory m JOIN iterations i ON m.tid = i.tid
            AND m.ts BETWEEN i.start AND i.start + i.dur
            WHERE i.id IN ({ids}) AND m.fold IS NULL AND m.op IS NOT NULL""")[0][0], 0)


class FoldCompare(TorchCase):
    """What a run with folding and one without are compared on."""

    def accounts(self, db):
        """(reports, allocations, bytes allocated) of one database, folds included."""
        real, allocs, nbytes = self.query(db, "SELECT count(*), coalesce(sum(bytes > 0), 0),"
                                              " coalesce(sum(max(bytes, 0)), 0) FROM"
                                              " tensor_memory WHERE fold IS NULL")[0]
        f = self.query(db, "SELECT coalesce(sum(reports), 0), coalesce(sum(allocs), 0),"
                           " coalesce(sum(alloc_bytes), 0) FROM tensor_memory_folds")[0]
        return real + f[0], allocs + f[1], nbytes + f[2]

    @staticmethod
    def memory(report):
        """The memory section, and each phase's peak and the operator at it (not what one phase
        saves against another: which phases are compared depends on the run's timing)."""
        def peaks(row):
            return {k: v for k, v in row.items() if "peak" in k and "saved" not in k}
        return report["memory"], [peaks(p) for p in report["phases"]], [
            peaks(p) for p in report["operator_phases"]]


class HostileFold(FoldCompare):
    def case(self, name, rc=0, operators="0"):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        got = {}
        for fold in (0, 1):
            d = os.path.join(self.dir, f"{name}{fold}")
            os.mkdir(d)
            r = self.run_prog([TORCH_PYTHON, HOSTILE, name], timeout=300, cwd=d,
                              INFPROF_OUTPUT=os.path.join(d, "run.db"),
                              INFPROF_MEMORY_FOLD=str(fold), INFPROF_OPERATORS=operators)
            if r.rc != 0 and b"No module named 'torch'" in r.err:
                raise unittest.SkipTest("python3 has no torch")
            self.assertEqual(r.rc, rc, r.err)
            main_db = os.path.join(d, "run.db")  # then its children's (run-PID.db), in order
            dbs = [main_db] + sorted(glob.glob(os.path.join(d, "run-*.db")),
                                     key=lambda p: int(p.rsplit("-", 1)[1][:-3]))
            if fold:  # it did fold (or the comparison below would say nothing)
                self.assertGreater(int(self.meta(dbs[0], "tensor_memory_folded_reports")), 0)
            got[fold] = (r.out, [(self.accounts(db), self.memory(self.report_json(db)))
                                 for db in dbs])
        self.assertEqual(got[0][0], got[1][0])  # the program's output
        self.assertEqual(got[0][1], got[1][1])  # per process: accounts and the memory section
        return got[1][1]

    def test_a_forward_that_raises(self):
        (accounts, _), = self.case("raise")
        self.assertGreaterEqual(accounts[1], 3 + 50)  # at least each forward's output

    def test_a_thread_that_ends_inside_its_forward(self):
        self.case("thread_exit")

    def test_exit_inside_a_forward(self):
        (accounts, (memory, _, _)), = self.case("exit_inside", rc=4)
        self.assertEqual(max(m["largest_bytes"] for m in memory), 4 * 999999)

    def test_a_fork_inside_a_forward(self):
        procs = self.case("fork_inside")
        self.assertEqual(len(procs), 2)
        child = [m for _, (mem, _, _) in procs for m in mem if 77777 * 4 in m["largest3_bytes"]]
        self.assertTrue(child, procs)

    def test_a_shared_block_while_another_thread_is_inside_its_forward(self):
        procs = self.case("shared")
        self.assertTrue(any(m["peak_allocated_bytes"] >= 8_000_000
                            for _, (mem, _, _) in procs for m in mem), procs)

    def test_a_thread_inside_its_forward_at_the_end(self):
        # Its fold is written by the finish on the exiting thread (a second fresh-eyes check: the
        # 100 MB peak of a daemon thread's forward read 32 B).
        (_, (memory, _, _)), = self.case("daemon")
        self.assertEqual(max(m["peak_allocated_bytes"] for m in memory) // 1000000, 20)

    def test_sigterm_inside_a_forward(self):
        (_, (memory, _, _)), = self.case("sigterm", rc=-15)
        self.assertEqual(max(m["largest_bytes"] for m in memory), 20_000_000)
        # The forward the signal cut short is said to be open at the end, not to have raised.
        lost = self.report_json(os.path.join(self.dir, "sigterm1", "run.db"))["summary"]["lost"]
        self.assertIn("1 module call was still open when the program ended (signal SIGTERM)",
                      lost)

    def test_a_long_forward_is_folded_in_parts(self):
        # A level is known only at a fold's points: a timeline would hold a fold's highest until
        # its next point, so no fold lasts past 1 ms (the forwards here last 20 ms).
        procs = self.case("long")
        db = os.path.join(self.dir, "long1", "run.db")
        spans = self.query(db, "SELECT count(*), max(end - start) FROM tensor_memory_folds")[0]
        self.assertGreater(spans[0], 5 * 3, spans)  # several a forward
        self.assertLess(spans[1], 1_000_000, spans)
        self.assertTrue(procs)

    def test_phases_entered_inside_a_forward(self):
        # Every operator recorded: each report has its operator, and a fold keeps the one at its
        # highest (a fold of one report lost it in the first version).
        (_, (memory, phases, ops)), = self.case("phases", operators="1")
        self.assertEqual(len(memory), 3, memory)  # no_grad, grad (the program's too) and bf16
        self.assertTrue([o for o in ops if o.get("memory_peak_operator")], ops)


class MarkedFold(FoldCompare):
    """Iterations marked by the program fold as module calls do (the observer of every
    outermost iteration's edges, collectors/torch_memfold.c): the bundled C++ sample's NVTX
    ranges, and record_function scopes named "iteration" around each forward of
    tests/progs/memfold.py (the Python hooks off: the scopes are the iterations). Every report
    accounted for, the same memory figures as one row per report."""

    def compare(self, argv, source, **env):
        got = {}
        for fold in (0, 1):
            db = os.path.join(self.dir, f"marked{fold}.db")
            r = self.run_prog(argv, timeout=300, INFPROF_OUTPUT=db, INFPROF_MEMORY_FOLD=str(fold),
                              **env)
            if r.rc != 0 and b"No module named 'torch'" in r.err:
                raise unittest.SkipTest("python3 has no torch")
            self.assertEqual(r.rc, 0, r.err)
            self.assertEqual({s for (s,) in self.query(db, "SELECT DISTINCT source FROM"
                                                           " iterations")}, {source})
            folds = self.query(db, "SELECT count(*) FROM tensor_memory_folds")[0][0]
            self.assertTrue(folds > 0 if fold else folds == 0, (fold, folds))
            rep = self.report_json(db)
            # Series of 10 iterations or more: timing may make a short one of a few forwards
            # in one run and not the other (a loaded machine: one more series, peak 33,472).
            series = [{k: v for k, v in row.items() if "peak" in k and "saved" not in k}
                      for row in rep["series"] if row["iterations"] >= 10]
            got[fold] = (self.accounts(db), self.memory(rep), series)
        self.assertEqual(got[0], got[1])
        self.assertTrue(got[1][1][0], got)  # a memory section to compare
        self.assertTrue(any(v for row in got[1][2] for v in row.values()), got)  # series peaks

    def test_nvtx_ranges_of_the_cpp_sample(self):
        # Operators off: which iterations a sampled capture keeps whole (and so which operator
        # is at a peak) is chance and timing; one full run of the suite read two apart.
        self.compare([need(SAMPLE_INFER), "--device", "cpu", "--iters", "12", "--image", "32",
                      "--modes", "no_grad,inference_mode", "--precisions", "off"], 2,
                     INFPROF_OPERATORS="0")

    def test_nvtx_ranges_ended_on_another_thread_do_not_fold(self):
        # A start/end range may end on another thread: this one's iteration then never ends
        # here, and a fold would take every later report of the thread (each iteration's
        # allocations read 0). Such iterations keep their reports as rows: each iteration holds
        # its own (i + 1) x 64 KiB.
        for fold in (0, 1):
            db = os.path.join(self.dir, f"loose{fold}.db")
            r = self.run_prog([need(TORCH_MODES), "loose", "10"], timeout=120, INFPROF_OUTPUT=db,
                              INFPROF_MEMORY_FOLD=str(fold), INFPROF_OPERATORS="0")
            self.assertEqual(r.rc, 0, r.err)
            self.assertEqual(self.query(db, "SELECT count(*) FROM tensor_memory_folds")[0][0], 0)
            got = self.query(db, """
                SELECT max(m.bytes) FROM iterations i JOIN tensor_memory m ON m.tid = i.tid
                AND m.ts BETWEEN i.start AND i.start + i.dur WHERE m.bytes > 0
                GROUP BY i.id ORDER BY i.start""")
            self.assertEqual([b for (b,) in got], [(k + 1) * 65536 for k in range(10)], fold)

    def test_record_function_scopes(self):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        self.compare([TORCH_PYTHON, PROG, "30", "cpu", "scope"], 3, INFPROF_PYTHON="0",
                     INFPROF_OPERATORS="0")


if __name__ == "__main__":
    main()
