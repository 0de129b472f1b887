"""Physical bounds on a real H200 run (tests/data/h200, trimmed from ../shared/fixtures/h200):
its report once drew 8,278 W for a 700 W GPU (NVML's counter moves about every 100 ms and was
read every 20 ms: two readings around one move gave five times the power) and 32.4 cores busy on
a 16-core host (the writer thread's CPU clock started again mid-run). Power over time stays under
the GPU's 700 W, cores under 16, with nothing left to drop; and each series' joules per iteration,
read between the counter's moves, is within 5% of what the program measured with NVML itself
(it was 3-10% off when every reading counted)."""
import lzma
import os
import shutil
import tempfile

from harness import Case, main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h200")
# series (phase, name) -> the program's own J per timed forward (README.md)
OWN = {("no_grad | autocast off", "ResNet cudnn.benchmark=off"): 1.734,
       ("inference_mode | autocast fp16", "ResNet cudnn.benchmark=off"): 1.368,
       ("inference_mode | autocast bf16", "ResNet cudnn.benchmark=off batch=64"): 2.854,
       ("inference_mode | autocast fp16", "BertModel cudnn.benchmark=off"): 1.584}


class H200EnergyCpu(Case):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="infprof-h200-")
        cls.db = os.path.join(cls.tmp, "energy-cpu.db")
        with lzma.open(os.path.join(DATA, "energy-cpu.db.xz")) as src, open(cls.db, "wb") as dst:
            shutil.copyfileobj(src, dst)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_power_and_cores_within_the_machine(self):
        report = self.report_json(self.db)
        watts = [r["watts"] for r in report["power_timeline"]]
        self.assertGreater(len(watts), 100)
        self.assertLessEqual(max(watts), 700)
        self.assertGreater(max(watts), 300)  # the busy loops are drawn, not flattened
        for e in report["energy"]:
            self.assertLessEqual(e["peak_power_w"], 700, e)
            self.assertLessEqual(e["avg_power_w"], 700, e)
        cores = [r["program_cores"] + r["infprof_cores"] for r in report["cpu_timeline"]]
        self.assertLessEqual(max(cores), 16)
        self.assertIsNone(report["run"]["warnings"])  # no reading was out of bounds

    def test_joules_per_iteration_against_the_programs_own(self):
        series = {(s["phase"], s["series"]): s for s in self.report_json(self.db)["series"]}
        for key, own in OWN.items():
            self.assertIn(key, series, sorted(series))
            got = series[key]["j_per_iteration"]
            self.assertLess(abs(got / own - 1), 0.05, (key, got, own))


if __name__ == "__main__":
    main()
