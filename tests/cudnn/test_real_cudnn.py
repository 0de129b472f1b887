"""The real libcudnn.so.9 of the CUDA install, called by a program linked with -lcudnn: under the
library the program gets the same results, and every call is in the database with its status.
Without a GPU cudnnCreate fails (1001), which is what a machine without a GPU gives; backend
descriptors up to the engine are still built on the host, so the classification is checked
against real cuDNN descriptors."""
import os
from harness import Case, main, prog
from cudnn_common import calls


class RealCudnn(Case):
    def setUp(self):
        super().setUp()
        if not os.path.exists(prog("cudnn_real")):
            self.skipTest("no libcudnn.so.9 found at build time")
        self.plain = self.run_prog([prog("cudnn_real")], preload=False)
        self.traced = self.run_prog([prog("cudnn_real")])
        self.db = self.traced.db()
        # "name   status" lines, in order
        self.printed = [(l[:28].strip(), int(l[28:])) for l in self.plain.out.decode().splitlines()
                        if l[28:].strip().lstrip("-").isdigit()]

    def status(self, name):
        return [s for n, s in self.printed if n == name]

    def test_program_sees_the_same(self):
        self.assertUnnoticed(self.plain, self.traced)

    def test_calls_recorded_with_their_status(self):
        c = {r["fn"]: r for r in calls(self, self.db)}
        self.assertEqual(c["cudnnCreate"]["status"], self.status("cudnnCreate(&h)")[0])
        self.assertEqual(c["cudnnSetStream"]["status"], self.status("cudnnSetStream(h, NULL)")[0])
        self.assertEqual(c["cudnnDestroy"]["status"], self.status("cudnnDestroy(h)")[0])
        self.assertEqual(c["cudnnBackendExecute"]["status"], self.status("execute")[0])
        self.assertEqual(c["cudnnConvolutionForward"]["status"],
                         self.status("convolution forward")[0])
        self.assertEqual(c["cudnnFindConvolutionForwardAlgorithm"]["status"],
                         self.status("find algorithm")[0])
        self.assertEqual(c["cudnnBatchNormalizationForwardInference"]["status"],
                         self.status("bn inference")[0])
        fin = [r["status"] for r in calls(self, self.db, "cudnnBackendFinalize")]
        want = [s for n, s in self.printed if n.startswith("finalize")]
        self.assertEqual(fin, want)
        if self.status("cudnnCreate(&h)")[0] != 0:
            self.assertEqual(c["cudnnCreate"]["status"], 1001)  # CUDNN_STATUS_NOT_INITIALIZED
        self.assertEqual(self.meta(self.db, "cudnn_missing_calls"), 0)
        self.assertEqual(self.meta(self.db, "cudnn_nested_calls"), 0)

    def test_classified_from_real_descriptors(self):
        # finalize: 3 tensors, conv descriptor, conv op, graph, engine, engine config, plan
        fin = calls(self, self.db, "cudnnBackendFinalize")
        self.assertEqual([r["op_kind"] for r in fin[:5]], [None] * 5)
        # graph, engine, engine config and plan carry the graph's class: conv forward, fp16 (2)
        self.assertEqual([(r["op_kind"], r["dtype"]) for r in fin[5:]], [(1, 2)] * 4)
        self.assertEqual(len({r["shape"] for r in fin[5:]}), 1)
        ex = calls(self, self.db, "cudnnBackendExecute")[0]
        self.assertEqual((ex["op_kind"], ex["dtype"], ex["plan"]), (1, 2, 1))
        plans = self.query(self.db, "SELECT plan, op_kind, dtype, source FROM cudnn_plans")
        # cuDNN 9.19 does not give a graph's nodes back: classified from what the program built
        self.assertEqual(self.status("get graph ops"), [3000])
        self.assertEqual(plans, [(1, 1, 2, 1)])

    def test_legacy_descriptors_read(self):
        conv = calls(self, self.db, "cudnnConvolutionForward")[0]
        find = calls(self, self.db, "cudnnFindConvolutionForwardAlgorithm")[0]
        bn = calls(self, self.db, "cudnnBatchNormalizationForwardInference")[0]
        self.assertEqual((conv["op_kind"], conv["dtype"]), (1, 2))
        self.assertEqual(conv["shape"], find["shape"])
        self.assertIsNotNone(conv["shape"])
        self.assertEqual((bn["op_kind"], bn["dtype"]), (2, 2))

    def test_report(self):
        r = self.report_json(self.db)
        rows = {(x["op_kind"], x["function"]): x for x in r["cudnn"]}
        self.assertEqual(rows[("conv_fwd", "cudnnConvolutionForward")]["errors"], 1)
        self.assertEqual(rows[(None, "cudnnCreate")]["calls"], 1)
        self.assertIn("calls", r["run"]["collector_cudnn"])


if __name__ == "__main__":
    main()
