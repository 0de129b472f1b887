"""infprof-sample-infer under the library (Debian's libtorch 1.13 on CPU): the phases it runs, in
its order, with its labels; exactly its iteration counts; latencies that agree with its own
timing; CPU peak allocated memory consistent with what it holds."""
from harness import main
from torchlib import CPU_PHASES, LABEL, SAMPLE_INFER, TorchCase, compress, models, need, refs

ARGS = ["--iters", "4", "--batch", "2", "--image", "32"]


class Sample(TorchCase):
    def run_sample(self, *args, **env):
        r = self.run_prog([need(SAMPLE_INFER), *ARGS, *args], timeout=300, **env)
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(r.err, b"")
        return r

    def test_phases_iterations_latency_memory(self):
        r = self.run_sample()
        ref = refs(r.out)
        db = r.db()
        # The default phases, in the sample's order.
        self.assertEqual([x["phase"] for x in ref], CPU_PHASES)
        # The phases of the iterations, in time order, are the sample's, in its order.
        order = [LABEL[p] for (p,) in self.query(db, "SELECT phase FROM iterations ORDER BY"
                                                     " start")]
        self.assertEqual(compress(order), [x["phase"] for x in ref])
        self.assertIterationsInsideSpans(db)
        self.assertEqual(self.query(db, "SELECT DISTINCT source, batch FROM iterations"),
                         [(2, 2)])

        report = self.phases_by_label(db)
        m = models(r.out)
        held = sum(x["state_bytes"] + x["input_bytes"] for x in m)
        for x in ref:
            p = report[x["phase"]]
            self.assertEqual((p["grad_mode"], p["autocast"]), (x["grad_mode"], x["autocast"]))
            self.assertEqual(p["iterations"], x["iterations"], x["phase"])
            # The same forward calls timed twice, by the program and by its NVTX ranges.
            ours = p["latency_p50_ns"] / 1e6
            self.assertAlmostEqual(ours, x["p50_ms"], delta=0.1 * x["p50_ms"] + 0.5,
                                   msg=x["phase"])
            # Weights, buffers and inputs are live throughout: every phase's peak holds them.
            self.assertGreaterEqual(p["peak_allocated_by_device"]["cpu"], held, x["phase"])
            self.assertIsNone(x["max_memory_allocated"])  # CPU: the sample has no reference
        # Outputs that require grad keep their graph's activations alive: grad mode peaks above
        # inference mode, which frees each intermediate as soon as it is used.
        self.assertGreater(report["grad | autocast off"]["peak_allocated_bytes"],
                           report["inference_mode | autocast off"]["peak_allocated_bytes"])

    def test_flags(self):
        r = self.run_sample("--model", "conv", "--modes", "inference_mode,no_grad",
                            "--precisions", "off", "--no-eval", "--channels-last")
        ref = refs(r.out)
        self.assertEqual([x["phase"] for x in ref], ["inference_mode | autocast off",
                                                     "no_grad | autocast off"])
        self.assertEqual([x["name"] for x in models(r.out)], ["conv"])
        got = self.query(r.db(), "SELECT phase, count(*) FROM iterations GROUP BY phase"
                                 " ORDER BY min(start)")
        self.assertEqual([(LABEL[p], n) for p, n in got],
                         [("inference_mode | autocast off", 4), ("no_grad | autocast off", 4)])

    def test_bad_flag(self):
        r = self.run_prog([need(SAMPLE_INFER), "--modes", "sideways"], preload=False)
        self.assertEqual(r.rc, 2)
        self.assertIn(b"usage:", r.err)


if __name__ == "__main__":
    main()
