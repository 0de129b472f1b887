"""The report's cuDNN section, held to exact numbers on a fixture (tests/progs/fixture_cudnn.c)
that feeds known calls, plans, external correlation records and kernels through the real
pipeline: per operation/function/phase host time and the GPU time of the kernels each call
launched, plans, the precision mix of each phase, and the findings."""
import json
import os
import shutil
import sqlite3
from harness import Case, main, prog


class Report(Case):
    def setUp(self):
        super().setUp()
        r = self.run_prog([prog("fixture_cudnn"), "fx.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        self.db = r.db("fx.db")
        self.r = self.report_json(self.db)

    def test_calls(self):
        rows = {(x["op_kind"], x["function"], x["phase"]): x for x in self.r["cudnn"]}
        ex = rows[("conv_fwd", "cudnnBackendExecute", "no_grad | autocast off")]
        self.assertEqual((ex["calls"], ex["errors"], ex["host_total_ns"], ex["host_avg_ns"],
                          ex["host_p95_ns"], ex["gpu_time_ns"], ex["kernels"]),
                         (5, 1, 17500, 3500, 10000, 18000, 5))
        bn = rows[("bn_training", "cudnnBackendExecute", "no_grad | autocast off")]
        self.assertEqual((bn["calls"], bn["gpu_time_ns"], bn["kernels"]), (2, 1000, 2))
        att = rows[("attention", "cudnnBackendExecute", "grad | autocast off")]
        self.assertEqual(att["gpu_time_ns"], 9000)
        # Calls that pushed no correlation id have no GPU time: unknown, not 0.
        legacy = rows[("bn_training", "cudnnBatchNormalizationForwardTraining",
                       "inference_mode | autocast off")]
        self.assertEqual((legacy["calls"], legacy["gpu_time_ns"]), (1, None))
        fin = rows[("conv_fwd", "cudnnBackendFinalize", "no_grad | autocast off")]
        self.assertEqual((fin["calls"], fin["host_total_ns"]), (3, 75000))
        self.assertEqual(rows[(None, "cudnnCreate", "none")]["calls"], 1)
        self.assertEqual(len(rows), 9)

    def test_plans(self):
        p = [(x["plan"], x["op_kind"], x["dtype"], x["executes"], x["gpu_time_ns"], x["detail"])
             for x in self.r["cudnn_plans"]]
        self.assertEqual(p, [(1, "conv_fwd", "fp16", 4, 16000, "conv_fwd+pointwise, 2 nodes"),
                             (3, "attention", "bf16", 1, 9000, "sdpa_fwd, 1 node"),
                             (5, "conv_fwd", "fp16", 1, 2000, "conv_fwd+pointwise, 2 nodes"),
                             (2, "bn_training", "fp32", 3, 1500, "bn_training, 1 node"),
                             (4, "conv_fwd", "fp16", 0, None, "conv_fwd+pointwise, 2 nodes")])

    def test_precision_mix(self):
        p = {(x["phase"], x["op_kind"], x["dtype"]): x for x in self.r["cudnn_precision"]}
        conv = p[("no_grad | autocast off", "conv_fwd", "fp16")]
        self.assertEqual((conv["calls"], conv["gpu_time_ns"]), (6, 18000))
        self.assertAlmostEqual(conv["gpu_pct_of_phase"], 100 * 18000 / 19000, places=3)
        self.assertAlmostEqual(p[("grad | autocast off", "attention", "bf16")]["gpu_pct_of_phase"],
                               100 * 9000 / 9500, places=3)
        self.assertIsNone(p[("inference_mode | autocast off", "bn_training", "fp32")]
                          ["gpu_time_ns"])

    def test_findings(self):
        f = self.r["cudnn_findings"]
        want = {"bn_training_at_inference": 3, "algorithm_searches": 2,
                "algorithm_search_ns": 90000, "searched_shapes": 1, "heuristic_queries": 0,
                "plan_builds": 3, "plan_build_ns": 75000, "plan_shapes": 2,
                "max_plans_per_shape": 2, "researched_shapes": 1, "warm_up_end_ns": 190000,
                "late_searches": 2, "late_shapes": 1}
        self.assertEqual({k: f[k] for k in want}, want)
        self.assertIn("3 batch-norm training calls", f["bn_training_finding"])

    def test_text_csv_md(self):
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0)
        text = r.out.decode()
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)
        self.assertRegex(text, r"conv_fwd\s+BackendExecute\s+no_grad/off\s+5\s+1\s+17\.50us\s+"
                               r"3\.50us\s+10\.00us\s+18\.00us")
        csv = self.cli("report", "--format", "csv", self.db).out.decode()
        self.assertIn("# cudnn\nop_kind,function,phase,calls", csv)
        md = self.cli("report", "--format", "md", self.db).out.decode()
        self.assertIn("## cuDNN calls (per operation, function and phase)", md)

    def test_run_without_cudnn(self):
        r = self.run_prog(["/bin/true"])
        rep = self.report_json(r.db())
        self.assertEqual(rep["cudnn"], [])
        # A fixed shape: every cuDNN section is there, empty (docs/report.md).
        self.assertEqual((rep["cudnn_plans"], rep["cudnn_precision"]), ([], []))
        self.assertIsNone(rep["cudnn_findings"])
        self.assertEqual(rep["run"]["collector_cudnn"], "on: the program made no cuDNN call")
        # Text leaves an empty section out; the header says why the collector saw nothing.
        text = self.cli("report", r.db()).out.decode()
        self.assertNotIn("cuDNN calls", text)
        self.assertIn("cuDNN                  on: the program made no cuDNN call", text)


def edit(db, sql):
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()


class Folded(Case):
    """The writer's folds of the calls (collectors/cudnn_fold.c, cudnn_call_sums) stand for the
    calls: a run of 5,000 more convolutions (a kind folded into two rows; every seventh kernel
    ingested before its call; a new shape searched and built halfway; calls stored out of start
    order and at one start), given iterations, reports the same in every format from the folds as
    from the calls, and reads no call to do it."""

    def setUp(self):
        super().setUp()
        r = self.run_prog([prog("fixture_cudnn"), "fx.db", "5000"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        self.db = r.db("fx.db")
        # 50 iterations over the rounds, on the calls' thread, in no_grad (the fixture makes
        # none: the warm-up is then the iterations', as in a real run).
        edit(self.db, "INSERT INTO iterations(id, tid, phase, start, dur, source)"
                      " WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 49)"
                      " SELECT i + 1, (SELECT tid FROM cudnn_calls LIMIT 1), 4,"
                      " 400000 + i * 2000000, 1990000, 1 FROM k")
        self.rows = os.path.join(self.dir, "rows.db")
        shutil.copy(self.db, self.rows)
        edit(self.rows, "DELETE FROM meta WHERE key = 'cudnn_call_sums'")

    def reads(self, db):
        """The statements the report ran on the cuDNN tables."""
        r = self.cli("report", db, INFPROF_SQL_TRACE="1")
        self.assertEqual(r.rc, 0, r.err)
        return [x for x in r.err.decode().splitlines() if "cudnn_call" in x]

    def test_the_folds_are_written(self):
        self.assertEqual(self.meta(self.db, "cudnn_fold_lost"), 0)
        big = self.query(self.db, "SELECT calls, errors, linked, kernels, length(durs)"
                                  " FROM cudnn_call_sums WHERE plan = 1 AND calls > 100"
                                  " ORDER BY rowid")
        self.assertEqual(len(big), 2, big)
        self.assertEqual(big[0][0], 4096)
        self.assertEqual(big[0][4], 4096 * 8)
        self.assertEqual(sum(x[0] for x in big), 5004)
        self.assertEqual(sum(x[1] for x in big), 53)  # 1 of the first four, 52 of the rounds
        # every kernel of a linked call joined, the early ones too: the same as the rows' join
        folded = self.query(self.db, "SELECT sum(kernels), sum(gpu) FROM cudnn_call_sums")[0]
        joined = self.query(self.db, "SELECT count(*), sum(k.dur) FROM kernel_rows k JOIN"
                                     " external_corr e ON e.corr = k.corr AND e.kind = 4 JOIN"
                                     " cudnn_calls c ON c.ext_id = e.ext_id")[0]
        self.assertEqual(folded, joined)
        # the late search and plan build: a row each, their kernels in a row of calls 0
        self.assertEqual(self.query(self.db, "SELECT calls, tid IS NOT NULL, gpu, kernels FROM"
                                             " cudnn_call_sums WHERE shape = 888 ORDER BY rowid"),
                         [(1, 1, 0, 0), (1, 1, 0, 0), (0, 0, 5000, 2)])

    def test_every_output_the_same_as_from_the_calls(self):
        for fmt in ("text", "json", "csv", "md", "html"):
            a = self.cli("report", "--format", fmt, self.db)
            b = self.cli("report", "--format", fmt, self.rows)
            self.assertEqual(a.rc, 0, a.err)
            self.assertEqual(a.out, b.out, fmt)
        r = self.report_json(self.db)
        ex = [x for x in r["cudnn"] if x["function"] == "cudnnBackendExecute"
              and x["op_kind"] == "conv_fwd"][0]
        self.assertEqual((ex["calls"], ex["errors"], ex["kernels"]), (5005, 53, 5005))
        find = [x for x in r["cudnn"] if x["function"] == "cudnnFindConvolutionForwardAlgorithm"]
        self.assertEqual((find[0]["calls"], find[0]["gpu_time_ns"], find[0]["kernels"]),
                         (5, 5000, 2))
        f = r["cudnn_findings"]
        # shape 999 searched after use (its calls stored out of start order), 998 not (a tie in
        # start goes by the order stored), with 666 of the first calls
        self.assertEqual((f["algorithm_searches"], f["plan_builds"], f["late_searches"],
                          f["late_shapes"], f["researched_shapes"]), (5, 4, 4, 3, 2))

    def test_the_report_reads_the_folds_not_the_calls(self):
        folded = self.reads(self.db)
        self.assertTrue(any("FROM cudnn_call_sums" in x for x in folded), folded)
        self.assertFalse(any("FROM cudnn_calls" in x for x in folded), folded)
        self.assertTrue(any("FROM cudnn_calls" in x for x in self.reads(self.rows)))

    def assertReadsTheCalls(self, db):
        self.assertTrue(any("FROM cudnn_calls c" in x for x in self.reads(db)))

    def test_a_fold_that_lost_a_join_is_not_read(self):
        edit(self.db, "UPDATE meta SET value = 1 WHERE key = 'cudnn_fold_lost'")
        self.assertReadsTheCalls(self.db)
        self.assertEqual(self.cli("report", "--format", "json", self.db).out,
                         self.cli("report", "--format", "json", self.rows).out)

    def test_folds_that_do_not_add_up_to_the_calls_are_not_read(self):
        # A database edited by hand: the folds stand for every call or for none.
        edit(self.db, "DELETE FROM cudnn_call_sums WHERE rowid = (SELECT max(rowid) FROM"
                      " cudnn_call_sums WHERE calls > 1)")
        self.assertReadsTheCalls(self.db)
        self.assertEqual(self.cli("report", "--format", "json", self.db).out,
                         self.cli("report", "--format", "json", self.rows).out)

    def test_without_iterations_the_calls_are_read(self):
        # The warm-up is then the first half of the compute calls, which only the calls give.
        edit(self.db, "DELETE FROM iterations")
        self.assertReadsTheCalls(self.db)


if __name__ == "__main__":
    main()
