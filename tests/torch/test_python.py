"""A Python PyTorch program (samples/py_infer.py with Debian's python3-torch) under the library:
libtorch found though Python loads it privately, every phase of the program in its order, tensor
memory per phase, the program unaffected, and, with no iteration marked, a report that says how
to mark them."""
import os
import shutil
import unittest

from harness import main
from torchlib import CPU_PHASES, TorchCase, refs

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "py_infer.py")
PYTHON = "/usr/bin/python3"


class PythonProgram(TorchCase):
    def test_phases_memory_and_iteration_hint(self):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        argv = [PYTHON, SAMPLE, "--device", "cpu", "--model", "conv", "--iters", "3",
                "--warmup", "1"]
        plain = self.run_prog(argv, preload=False, timeout=300)
        if plain.rc != 0 and b"No module named 'torch'" in plain.err:
            raise unittest.SkipTest("python3 has no torch")
        traced = self.run_prog(argv, timeout=300)
        self.assertEqual(plain.rc, 0, plain.err)
        self.assertEqual(traced.rc, 0, traced.err)
        self.assertEqual([x["phase"] for x in refs(traced.out)], CPU_PHASES)
        db = traced.db()
        self.assertRegex(self.meta(db, "collector.torch"), r"^on: .*libc10")
        phases = self.phases_by_label(db)
        self.assertEqual(sorted(phases), sorted(CPU_PHASES))
        for label in CPU_PHASES:
            self.assertGreater(phases[label]["peak_allocated_by_device"]["cpu"], 0, label)
        # The model's activations kept for backward: grad peaks above inference_mode.
        self.assertGreater(phases["grad | autocast off"]["peak_allocated_bytes"],
                           phases["inference_mode | autocast off"]["peak_allocated_bytes"])
        text = self.cli("report", db).out.decode()
        self.assertIn("no iteration was seen", text)
        self.assertIn("torch.cuda.nvtx.range_push('iteration')", text.replace("\n  ", " "))


if __name__ == "__main__":
    main()
