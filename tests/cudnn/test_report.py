"""The report's cuDNN section, held to exact numbers on a fixture (tests/progs/fixture_cudnn.c)
that feeds known calls, plans, external correlation records and kernels through the real
pipeline: per operation/function/phase host time and the GPU time of the kernels each call
launched, plans, the precision mix of each phase, and the findings."""
import json
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


if __name__ == "__main__":
    main()
