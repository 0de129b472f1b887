"""GPU work carries the PyTorch operator that launched it (tests/progs/ops_fixture.c: operator
scopes opened through the operator collector's own callbacks, replayed CUPTI records): kernels,
copies and memsets get their thread's innermost operator in both attribution modes (launch
callbacks, and API records looked up in the thread's history), none outside operators; cuDNN calls
and the kernels launched inside them carry it too (the fake libcudnn.so.9); past the
64-deep operator stack the deepest operator kept is carried and the overflow is counted."""
import shutil
import sqlite3

from harness import Case, main, prog

NESTED = {"outer": "aten::conv2d", "inner": "aten::cudnn_convolution", "after": "aten::conv2d",
          "none": None}


class OperatorsOnGpuWork(Case):
    def fixture(self, scenario, **env):
        name = f"{scenario}-{len(env)}.db"
        r = self.run_prog([prog("ops_fixture"), scenario, name], preload=False,
                          INFPROF_OPERATORS="1", **env)
        self.assertEqual(r.rc, 0, r.err)
        return r.db(name)

    def kernels(self, db):
        return dict(self.query(db, "SELECT n.value, o.value FROM kernel_rows k"
                                   " JOIN launch_sigs g ON g.id = k.sig"
                                   " JOIN strings n ON n.id = g.name_id"
                                   " LEFT JOIN strings o ON o.id = k.op"))

    def check_nested(self, db):
        self.assertEqual(self.kernels(db), NESTED)
        op = "SELECT o.value FROM {} t JOIN strings o ON o.id = t.op"
        self.assertEqual(self.query(db, op.format("memcpy")), [("aten::cudnn_convolution",)])
        self.assertEqual(self.query(db, op.format("memset")), [("aten::cudnn_convolution",)])
        self.assertEqual(self.meta(db, "cupti_unattributed_records"), 0)
        self.assertEqual(self.meta(db, "torch_operator_names_overflow"), 0)

    def test_launch_callbacks(self):
        db = self.fixture("nested")
        self.assertEqual(self.meta(db, "cupti_attribution"), "callbacks")
        self.check_nested(db)

    def test_records_mode(self):
        db = self.fixture("nested", INFPROF_ATTRIBUTION="records")
        self.assertEqual(self.meta(db, "cupti_attribution"), "records")
        self.check_nested(db)

    def test_kernels_launched_inside_a_cudnn_call(self):
        # The cuDNN call and the kernel it launches both carry the operator that made the call;
        # the same call outside any operator carries none.
        for env in ({}, {"INFPROF_ATTRIBUTION": "records"}):
            with self.subTest(**env):
                db = self.fixture("cudnn", **env)
                self.assertEqual(self.query(db, "SELECT k.corr, o.value FROM kernel_rows k"
                                                " LEFT JOIN strings o ON o.id = k.op"
                                                " ORDER BY k.corr"),
                                 [(1, "aten::cudnn_convolution"), (2, None), (3, None)])
                self.assertEqual(self.query(db, "SELECT f.value, o.value FROM cudnn_calls c"
                                                " JOIN strings f ON f.id = c.fn_id"
                                                " LEFT JOIN strings o ON o.id = c.op"
                                                " WHERE f.value = 'cudnnConvolutionForward'"
                                                " ORDER BY c.start"),
                                 [("cudnnConvolutionForward", "aten::cudnn_convolution"),
                                  ("cudnnConvolutionForward", None)])

    def test_report_gpu_time_per_operator(self):
        # Kernel durations are 1000 ns x correlation id: conv2d launched "outer" (1) and "after"
        # (5) itself, cudnn_convolution "inner" (2); "none" (6) counts for no operator.
        for env in ({}, {"INFPROF_ATTRIBUTION": "records"}):
            with self.subTest(**env):
                r = self.report_json(self.fixture("nested", **env))
                ops = {o["operator"]: o for o in r["operators"]}
                self.assertEqual(ops["aten::conv2d"]["gpu_ns"], 6000)
                self.assertEqual(ops["aten::conv2d"]["kernels_per_call"], 2)
                self.assertEqual(ops["aten::cudnn_convolution"]["gpu_ns"], 2000)
                self.assertEqual(ops["aten::cudnn_convolution"]["kernels_per_call"], 1)
                [ph] = r["operator_phases"]
                self.assertEqual((ph["kernels"], ph["gpu_ns"], ph["suspect"]), (3, 8000, None))

    def test_writer_folds_what_the_report_read_from_every_kernel(self):
        # collectors/cupti_fold.c: kernel time over the run (buckets that widen) and per phase
        # and operator, written at finish, equal to what the rows give; the report reads them
        # and prints the same as from the rows (a database without them).
        for env in ({}, {"INFPROF_ATTRIBUTION": "records"}):
            with self.subTest(**env):
                db = self.fixture("long", **env)
                by_op = self.query(db, "SELECT g.phase, k.op, count(*), sum(k.dur)"
                                       " FROM kernel_rows k JOIN launch_sigs g ON g.id = k.sig"
                                       " WHERE k.op IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2")
                self.assertEqual(len(by_op), 4)  # two operators in two phases
                self.assertEqual(self.query(db, "SELECT phase, op, kernels, ns FROM"
                                                " operator_kernels ORDER BY 1, 2"), by_op)
                # 40 s of kernels: 1 ms buckets widen to 2 ms past 16.4 s, 4 ms past 32.8 s.
                width = self.meta(db, "kernel_time.width_ns")
                self.assertEqual(width, 4000000)
                want = {}
                for start, dur in self.query(db, "SELECT start, dur FROM kernel_rows"
                                                 " WHERE start < 1 << 62"):
                    s, e = max(start, 0), start + dur
                    b = s // width
                    while b * width < e:
                        lo, hi = b * width, (b + 1) * width
                        want[b] = want.get(b, 0) + min(e, hi) - max(s, lo)
                        b += 1
                self.assertEqual(dict(self.query(db, "SELECT bucket, ns FROM kernel_time")),
                                 {b: v for b, v in want.items() if v})
                rows_only = db + ".rows.db"
                shutil.copy(db, rows_only)
                con = sqlite3.connect(rows_only)
                con.executescript("DROP TABLE kernel_time; DROP TABLE operator_kernels;"
                                  " DELETE FROM meta WHERE key = 'kernel_time.width_ns';")
                con.close()
                self.assertEqual(self.cli("report", db).out, self.cli("report", rows_only).out)
                folded, rows = self.report_json(db), self.report_json(rows_only)
                # The timeline's buckets are whole multiples of the writer's: exact sums.
                gpu = folded["gpu_timeline"]
                step = gpu[1]["t_ns"] - gpu[0]["t_ns"]
                self.assertEqual(step % width, 0)
                for g in gpu:
                    ns = sum(v for b, v in want.items() if g["t_ns"] <= b * width < g["t_ns"] + step)
                    self.assertAlmostEqual(g["busy_pct"], min(100, 100 * ns / step), delta=0.5)
                self.assertGreater(sum(g["busy_pct"] for g in gpu), 0)
                for r in (folded, rows):
                    r["run"].pop("file", None)
                    r.pop("gpu_timeline")
                    for k in ("memory_timeline", "power_timeline", "clock_timeline",
                              "cpu_timeline"):
                        r.pop(k)
                self.assertEqual(folded, rows)

    def test_report_marks_overflow_suspect(self):
        db = self.fixture("deep")
        [ph] = self.report_json(db)["operator_phases"]
        self.assertEqual(ph["suspect"], "nested past 64")
        text = self.cli("report", db)
        self.assertEqual(text.rc, 0)
        self.assertIn(b"suspect: 6 operator calls nested deeper than 64", text.out)

    def test_more_names_than_the_table(self):
        # 2100 distinct operator names, each launching one kernel named like it: the first 2048
        # names are carried, the other 52 kernels carry none and are counted.
        db = self.fixture("names")
        rows = self.query(db, "SELECT n.value, o.value FROM kernel_rows k"
                              " JOIN launch_sigs g ON g.id = k.sig JOIN strings n ON n.id = g.name_id"
                              " LEFT JOIN strings o ON o.id = k.op")
        self.assertEqual(len(rows), 2100)
        self.assertEqual(sum(1 for k, o in rows if o == k), 2048)
        self.assertEqual(sum(1 for k, o in rows if o is None), 52)
        self.assertEqual(self.meta(db, "torch_operator_names_overflow"), 52)

    def test_operators_off_carry_nothing(self):
        r = self.run_prog([prog("ops_fixture"), "nested", "off.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("off.db")
        self.assertEqual(self.query(db, "SELECT count(*), count(op) FROM kernel_rows"), [(4, 0)])

    def test_deeper_than_the_stack(self):
        for env in ({}, {"INFPROF_ATTRIBUTION": "records"}):
            with self.subTest(**env):
                db = self.fixture("deep", **env)
                self.assertEqual(self.kernels(db), {"deepest": "aten::level64", "none": None})
                self.assertEqual(self.meta(db, "torch_operator_overflow"), 6)
                self.assertEqual(self.query(db, "SELECT count(*), max(depth) FROM"
                                                " torch_operators"), [(64, 63)])


if __name__ == "__main__":
    main()
