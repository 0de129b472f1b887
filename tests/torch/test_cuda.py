"""On a GPU, with samples built against a CUDA libtorch: infprof's peak allocated memory per phase
equals the sample's own torch.cuda.max_memory_allocated() figure for that phase (reset at the
phase's start), and the autocast phases own their GEMM and convolution kernels. Skips where
the sample cannot use CUDA: a CPU-only libtorch, or no device. Never run on the build machine."""
import re

from harness import main
from torchlib import PHASE, SAMPLE_INFER, TorchCase, need, refs

ARGS = ["--device", "cuda", "--iters", "5", "--batch", "8"]


class Cuda(TorchCase):
    def setUp(self):
        super().setUp()
        need(SAMPLE_INFER)
        probe = self.run_prog([SAMPLE_INFER, *ARGS, "--modes", "grad", "--precisions", "off",
                               "--iters", "1"], preload=False, timeout=300)
        if probe.rc != 0:
            self.skipTest("the sample cannot run on CUDA here: "
                          + probe.err.decode(errors="replace").strip()[:200])

    def test_peak_memory_and_autocast_kernels(self):
        r = self.run_prog([SAMPLE_INFER, *ARGS], timeout=600)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db()
        report = self.phases_by_label(db)
        for x in refs(r.out):
            p = report[x["phase"]]
            self.assertEqual(p["iterations"], x["iterations"], x["phase"])
            self.assertEqual(p["peak_allocated_by_device"].get("cuda:0"),
                             x["max_memory_allocated"], x["phase"])
            if x["autocast"] == "off":
                continue
            names = [n for (n,) in self.query(
                db, "SELECT DISTINCT s.value FROM kernels k JOIN launch_sigs g ON g.id = k.sig"
                    " JOIN strings s ON s.id = g.name_id WHERE k.phase = ?", PHASE[x["phase"]])]
            heavy = [n for n in names if re.search(r"gemm|conv|cutlass|xmma|cudnn", n, re.I)]
            self.assertTrue(heavy, (x["phase"], names[:20]))


if __name__ == "__main__":
    main()
