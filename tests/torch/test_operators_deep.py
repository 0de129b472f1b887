"""Operators nested deeper than the 64-deep per-thread operator stack (tests/progs/
ops_recursive.py: a custom operator calling itself through the dispatcher 80 levels deep): the
program runs as without infprof (same exit status and output), the calls past the stack are
counted in meta torch_operator_overflow, the recorded ones stop at depth 63, and the report
marks the operator figures suspect. And the operator at a phase's tensor-memory peak
(tests/progs/ops_peak.py: the peak is reached by the output of aten::cat)."""
import os
import unittest

from harness import TORCH_PYTHON, main
from torchlib import TorchCase

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "ops_recursive.py")
PEAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "ops_peak.py")
PYTHON = TORCH_PYTHON


class DeepOperators(TorchCase):
    def test_overflow_counted_and_marked(self):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        argv = [PYTHON, PROG, "80", "3"]
        plain = self.run_prog(argv, preload=False, timeout=300)
        if plain.rc != 0 and b"No module named 'torch'" in plain.err:
            raise unittest.SkipTest("python3 has no torch")
        traced = self.run_prog(argv, timeout=300, INFPROF_OPERATORS=1)
        self.assertEqual((traced.rc, traced.out), (plain.rc, plain.out))
        self.assertEqual(plain.rc, 0, plain.err)
        db = traced.db()
        self.assertGreater(self.meta(db, "torch_operator_overflow"), 0)
        depth, calls = self.query(db, "SELECT max(depth), count(*) FROM torch_operators"
                                      " o JOIN strings s ON s.id = o.name_id"
                                      " WHERE s.value = 'infprof_test::rec'")[0]
        self.assertEqual(depth, 63)
        self.assertEqual(calls, 3 * 64)  # 81 levels a call, the outer 64 recorded
        phases = self.report_json(db)["operator_phases"]
        self.assertTrue(phases)
        for ph in phases:
            self.assertEqual(ph["suspect"], "nested past 64")
        text = self.cli("report", db)
        self.assertEqual(text.rc, 0)
        self.assertIn(b"operator calls nested deeper than 64 were not recorded", text.out)

    def test_operator_at_the_memory_peak(self):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        plain = self.run_prog([PYTHON, PEAK], preload=False, timeout=300)
        if plain.rc != 0 and b"No module named 'torch'" in plain.err:
            raise unittest.SkipTest("python3 has no torch")
        traced = self.run_prog([PYTHON, PEAK], timeout=300, INFPROF_OPERATORS=1)
        self.assertEqual((traced.rc, traced.out), (plain.rc, plain.out))
        db = traced.db()
        # The allocation of 16 MB carries aten::cat (the report names the first report that
        # reached the phase's peak, a later small one may tie it).
        self.assertIn(("aten::cat",), self.query(
            db, "SELECT s.value FROM tensor_memory t JOIN strings s ON s.id = t.op"
                " WHERE t.bytes = 16000000"))
        phases = {p["phase"]: p for p in self.report_json(db)["operator_phases"]}
        self.assertEqual(phases["no_grad | autocast off"]["memory_peak_operator"], "aten::cat")

        # The peak is the memory device's (report/run/memory.c): with a GPU in the run, the
        # operator at the peak is the one that reached the GPU's peak, even where the CPU's
        # allocated total was larger (one definition of the peak, never the larger device).
        import shutil
        import sqlite3
        gpu_db = os.path.join(self.dir, "with_gpu.db")
        shutil.copy(db, gpu_db)
        con = sqlite3.connect(gpu_db)
        # On the thread that made the CPU allocation (a thread allocates on the GPU in its own
        # phase spans: report/run/phases.c).
        phase, ts, tid = con.execute("SELECT phase, ts, tid FROM tensor_memory t JOIN strings s"
                                     " ON s.id = t.op WHERE s.value = 'aten::cat'").fetchone()
        con.execute("INSERT INTO strings (value) VALUES ('aten::gpu_only_op')")
        sid = con.execute("SELECT id FROM strings WHERE value = 'aten::gpu_only_op'").fetchone()[0]
        con.execute("INSERT INTO tensor_memory (ts, tid, phase, device_type, device_index, ptr,"
                    " bytes, allocated, reserved, op) VALUES (?, ?, ?, 1, 0, 1, 4096, 4096,"
                    " 2097152, ?)", (ts + 1, tid, phase, sid))
        con.execute("INSERT INTO tensor_memory (ts, tid, phase, device_type, device_index, ptr,"
                    " bytes, allocated, reserved, op) VALUES (?, ?, ?, 1, 0, 1, -4096, 0,"
                    " 2097152, ?)", (ts + 2, tid, phase, sid))
        con.commit()
        con.close()
        phases = {p["phase"]: p for p in self.report_json(gpu_db)["operator_phases"]}
        self.assertEqual(phases["no_grad | autocast off"]["memory_peak_operator"],
                         "aten::gpu_only_op")


if __name__ == "__main__":
    main()
