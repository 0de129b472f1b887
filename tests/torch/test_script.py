"""The usual deployment path: a torchvision model scripted by Debian's python3-torch /
python3-torchvision, run by infprof-sample-script under the library. Every forward is a
TorchScript Method call, counted as an iteration (source 1) in the phase of its thread."""
import os
import subprocess
import sys
import unittest

from harness import main
from torchlib import CPU_PHASES, LABEL, SAMPLE_SCRIPT, TorchCase, compress, need, refs

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_MODEL = os.path.join(HERE, "..", "..", "samples", "torchvision_script.py")


class Script(TorchCase):
    @classmethod
    def setUpClass(cls):
        probe = subprocess.run([sys.executable, "-c", "import torch, torchvision"],
                               capture_output=True)
        if probe.returncode != 0:
            raise unittest.SkipTest("python3 cannot import torch and torchvision")

    def test_torchvision_resnet(self):
        need(SAMPLE_SCRIPT)
        made = subprocess.run([sys.executable, MAKE_MODEL, "--model", "resnet18", "--out",
                               "model.pt"], cwd=self.dir, capture_output=True, timeout=300,
                              env=self.env(False))
        self.assertEqual(made.returncode, 0, made.stderr)
        argv = [SAMPLE_SCRIPT, "model.pt", "--shape", "3,64,64", "--batch", "1", "--iters", "3"]
        r = self.run_prog(argv, timeout=300, INFPROF_BATCH=1)
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(r.err, b"")
        ref = refs(r.out)
        db = r.db()
        self.assertEqual([x["phase"] for x in ref], CPU_PHASES)
        got = self.query(db, "SELECT phase, source, batch FROM iterations ORDER BY start")
        self.assertEqual({(s, b) for _, s, b in got}, {(1, 1)})
        self.assertEqual(compress([LABEL[p] for p, _, _ in got]), [x["phase"] for x in ref])
        self.assertIterationsInsideSpans(db)
        report = self.phases_by_label(db)
        for x in ref:
            p = report[x["phase"]]
            self.assertEqual(p["iterations"], x["iterations"], x["phase"])
            self.assertAlmostEqual(p["latency_p50_ns"] / 1e6, x["p50_ms"],
                                   delta=0.1 * x["p50_ms"] + 0.5, msg=x["phase"])
            self.assertGreater(p["peak_allocated_by_device"]["cpu"], 0)
        self.assertIn("TorchScript: Method::operator()", self.meta(db, "torch_api"))


if __name__ == "__main__":
    main()
