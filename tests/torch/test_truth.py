"""The phase comparison tells the truth on a program whose truth is known: iterations of fixed
length (timed waits) after a slow warm-up, per phase. The report finds each phase's warm-up
exactly (with any iterations the machine slowed just after it, by the program's own clock), its
steady p50 and throughput within 5%, speed-ups within 5% of the true ratios, and two
identical runs give the same verdicts (docs/report.md)."""
from harness import main
from torchlib import TORCH_MODES, TorchCase, need

TRUTH = {"grad/off": (3, 50.0), "no_grad/off": (2, 37.5), "inference/off": (1, 31.25)}


class Truth(TorchCase):
    def report(self):
        r = self.run_prog([need(TORCH_MODES), "timed"], timeout=120)
        self.assertEqual(r.rc, 0, r.err)
        own = {}
        for line in r.out.decode().splitlines():
            if line.startswith("timed ") and ":" not in line:
                name, *times = line.split()[1:]
                own[name] = [int(t) for t in times]
        return self.report_json(r.db()), own

    def slowed(self, times, warm):
        """How many iterations just after the warm-up the machine itself slowed: by the program's
        own clock 5% or more over its steady median, one after another (a loaded CI's sleep woke
        late: the third no_grad iteration read as warm-up, 3 where the program made 2)."""
        steady = sorted(times[warm:])
        med = steady[len(steady) // 2]
        k = warm
        while k < len(times) - 1 and times[k] >= 1.05 * med:
            k += 1
        return k - warm

    def test_warmup_steady_and_ratios(self):
        verdicts = []
        for run in range(2):
            rep, own = self.report()
            phases = {}
            for p in rep["phases"]:
                short = p["label"].replace("inference_mode", "inference").replace(
                    " | autocast ", "/")
                phases[short] = p
            for short, (warm, ms) in TRUTH.items():
                p = phases[short]
                # The program's warm-up exactly, unless the machine slowed the iterations just
                # after it (then those too, and no more).
                extra = self.slowed(own[short.split("/")[0]], warm)
                self.assertIn(p["warmup_iterations"], {warm, warm + extra}, (short, own))
                # 20 after the warm-up: steady, and those whose operators were captured apart
                self.assertEqual(p["warmup_iterations"] + p["steady_iterations"]
                                 + p["captured_iterations"], warm + 20, short)
                self.assertAlmostEqual(p["latency_p50_ns"] / 1e6, ms, delta=0.05 * ms, msg=short)
                self.assertAlmostEqual(p["throughput_per_s"], 1000 / ms, delta=0.05 * 1000 / ms,
                                       msg=short)
                # Against grad/off (the default baseline): 50 / ms faster.
                self.assertAlmostEqual(p["throughput_ratio"], 50.0 / ms, delta=0.05 * 50.0 / ms,
                                       msg=short)
            iv = rep["inference_vs_no_grad"][0]
            self.assertAlmostEqual(iv["speedup"], 1.2, delta=0.06)
            verdicts.append([p["verdict"] for p in rep["phases"]] + [iv["verdict"]])
        self.assertEqual(verdicts[0], verdicts[1])
        self.assertEqual(verdicts[0], ["baseline", "faster", "faster", "faster"])


if __name__ == "__main__":
    main()
