"""A fake libcudnn.so.9 (tests/progs/fake_cudnn.c, same version node as the real one): arguments
and return values pass through untouched, durations are recorded, calls the library makes through
its own exported names are not counted twice, backend plans are classified (from what the
program built, or read back from the plan), and a missing cuDNN fails open."""
import os
from harness import Case, main, prog
from cudnn_common import calls, counts

FAKE = os.path.join(os.path.dirname(prog("cudnn_fake")), "fakecudnn")


class FakeCudnn(Case):
    def run_fake(self, *args, preload=True, **env):
        return self.run_prog([prog("cudnn_fake"), *args], preload=preload,
                             LD_LIBRARY_PATH=FAKE, **env)

    def same(self, *args, **env):
        plain = self.run_fake(*args, preload=False, **env)
        traced = self.run_fake(*args, **env)
        self.assertUnnoticed(plain, traced)
        self.assertEqual(plain.rc, 0, plain.out.decode())
        return traced

    def test_arguments_and_results_pass_through(self):
        r = self.same("passthrough")
        self.assertNotIn(b"MISMATCH", r.out)
        self.assertIn(b"conv algo 7 2000", r.out)  # an error status comes back as it was
        db = r.db()
        # The program's own calls, each once; the 3 + 2 convolutions the fake's Find functions
        # ran through the exported name are nested: passed through, not counted as calls.
        self.assertEqual(counts(self, db), {
            "cudnnCreate": 1, "cudnnSetStream": 1, "cudnnConvolutionForward": 2,
            "cudnnConvolutionBiasActivationForward": 1,
            "cudnnBatchNormalizationForwardInference": 1,
            "cudnnBatchNormalizationForwardTraining": 1,
            "cudnnBatchNormalizationForwardTrainingEx": 1,
            "cudnnGetConvolutionForwardAlgorithm_v7": 1,
            "cudnnFindConvolutionForwardAlgorithm": 1,
            "cudnnFindConvolutionForwardAlgorithmEx": 1, "cudnnDestroy": 2})
        self.assertEqual(self.meta(db, "cudnn_nested_calls"), 5)
        conv = calls(self, db, "cudnnConvolutionForward")
        self.assertEqual([c["status"] for c in conv], [0, 2000])
        self.assertEqual([c["status"] for c in calls(self, db, "cudnnDestroy")], [0, 2000])
        # The stream set on the handle is known to every later call on it.
        for c in calls(self, db):
            if c["fn"] not in ("cudnnCreate", "cudnnSetStream") and c["handle"]:
                self.assertEqual(c["stream"], 0x5170, c["fn"])
        # What each call works on: fp16 (2) convolutions and batch norms, one shape key.
        kinds = {c["fn"]: (c["op_kind"], c["dtype"]) for c in calls(self, db)}
        self.assertEqual(kinds["cudnnConvolutionForward"], (1, 2))
        self.assertEqual(kinds["cudnnFindConvolutionForwardAlgorithmEx"], (1, 2))
        self.assertEqual(kinds["cudnnBatchNormalizationForwardInference"], (2, 2))
        self.assertEqual(kinds["cudnnBatchNormalizationForwardTrainingEx"], (3, 2))
        self.assertEqual(kinds["cudnnSetStream"], (None, None))
        shapes = {c["shape"] for c in calls(self, db) if c["op_kind"] == 1}
        self.assertEqual(len(shapes), 1)
        self.assertEqual(self.meta(db, "collector.cudnn"), "on: 13 calls, 0 plans")

    def test_durations(self):
        r = self.run_fake("durations", "3000", "3")
        self.assertEqual(r.rc, 0)
        intervals = [int(l.split()[1]) for l in r.out.decode().splitlines()]
        durs = [c["dur"] for c in calls(self, r.db(), "cudnnConvolutionForward")]
        self.assertEqual(len(durs), 3)
        for d, outer in zip(durs, intervals):
            # The fake sleeps 3 ms; our interval lies inside the one the program measured.
            self.assertGreaterEqual(d, 3000000)
            self.assertLessEqual(d, outer)

    def plans(self, db):
        return self.query(db, "SELECT p.plan, p.op_kind, p.dtype, s.value, p.source FROM"
                              " cudnn_plans p JOIN strings s ON s.id = p.detail_id ORDER BY plan")

    def test_backend_plans_classified(self):
        r = self.same("backend")
        db = r.db()
        self.assertEqual(self.plans(db), [
            (1, 1, 2, "conv_fwd+pointwise, 2 nodes", 1),   # heuristics, fp16
            (2, 1, 2, "conv_fwd+pointwise, 2 nodes", 1),   # its second candidate
            (3, 2, 0, "bn_inference, 1 node", 1),          # engine by hand, fp32
            (4, 3, 2, "bn_training, 1 node", 1),
            (5, 4, 9, "sdpa_fwd, 1 node", 1),              # bf16
            (6, 5, 2, "pointwise+matmul, 2 nodes", 1),
            (7, 6, 0, "pointwise, 1 node", 1),
            (8, 7, 0, "norm, 1 node", 1),                  # layer norm: other
            (9, 8, None, "not classified", 0),             # built out of sight, graph unreadable
            (10, 4, 9, "pointwise+matmul+reduction, 6 nodes", 1),  # attention without SDPA
        ])
        ex = calls(self, db, "cudnnBackendExecute")
        per_plan = {}
        for c in ex:
            per_plan[c["plan"]] = per_plan.get(c["plan"], 0) + 1
            self.assertEqual(c["stream"], 0x77)
        self.assertEqual(per_plan, {1: 3, 3: 2, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 2, 10: 1})
        # Classified once: one plan row per plan, whatever the number of executes.
        shapes = dict(self.query(db, "SELECT plan, shape FROM cudnn_plans"))
        self.assertEqual(shapes[1], shapes[2])
        self.assertEqual(len({shapes[p] for p in range(1, 9)}), 7)
        self.assertIsNone(shapes[9])
        self.assertEqual(self.meta(db, "cudnn_untracked"), 0)

    def test_plan_read_back(self):
        # A cuDNN that gives the graph's nodes back: the plan built out of sight is read.
        r = self.same("backend", FAKE_CUDNN_OPS_READABLE=1)
        self.assertEqual(self.plans(r.db())[8], (9, 5, 9, "pointwise+matmul, 2 nodes", 2))

    def test_threads(self):
        r = self.run_fake("threads", "8")
        self.assertEqual(r.rc, 0)
        db = r.db()
        ex = calls(self, db, "cudnnBackendExecute")
        self.assertEqual(len(ex), 8 * 250)
        self.assertEqual({c["plan"] for c in ex}, {1})
        self.assertEqual(len({c["tid"] for c in ex}), 8)
        self.assertEqual(self.meta(db, "dropped_events"), 0)

    def test_disabled(self):
        r = self.same("passthrough", INFPROF_CUDNN=0)
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM cudnn_calls")[0][0], 0)
        self.assertEqual(self.meta(r.db(), "collector.cudnn"), "off: INFPROF_CUDNN=0")

    def test_missing_cudnn_fails_open(self):
        plain = self.run_prog([prog("cudnn_absent")], preload=False)
        self.assertEqual(plain.out, b"no cudnn\n")
        r = self.run_prog([prog("cudnn_absent")])
        self.assertEqual(r.rc, 0)
        self.assertEqual(r.out, b"create 1001\nexecute 1001\nexecute 1001\n")
        self.assertEqual(r.err, b"")
        db = r.db()
        self.assertEqual([c["status"] for c in calls(self, db)], [1001] * 3)
        self.assertEqual(self.meta(db, "cudnn_missing_calls"), 3)
        self.assertIn("not found (first cudnnCreate)", self.meta(db, "collector.cudnn"))


if __name__ == "__main__":
    main()
