"""Operator calls (INFPROF_OPERATORS=1, collectors/torch_ops.c) against torch.profiler in the
same run: a Python program profiles its own fp32 MLP, its quantize_dynamic int8 copy and the
fp32 model scripted (TorchScript, called from Python) with torch.profiler (CPU activity) while
recorded by infprof (two RecordFunction observers at once). Between the program's aten::digamma
marks, each phase's operators must have torch.profiler's names, its call counts exactly for
every operator above 1% of the window's self time, and self CPU time within 10% for those, call
by call: a loaded machine that preempts the program between torch.profiler's callback and ours
gives one call a few hundred us more in one of the two (seen: int8 aten::relu, aten::aminmax,
+0.9 ms on one call in a CI run), so the two calls of each operator that disagree most are left
out of the sums compared, and so are the calls torch.profiler mis-nested (a child whose end
rounds 1 us past its parent's becomes its grandparent's: the parent's self time then holds the
whole child, an aten::linear 14 ms for its aten::addmm's; a CI run failed on the script's
aten::linear, 130 ms of self time in torch.profiler's calls against 0.12 ms in ours).
torch.profiler (1.13's kineto) loses one or two zero-length calls of a thousand
(aten::resolve_conj: 118 or 119 of the 120 two per addmm make): for those, its count may be lower
by at most 5%, never higher, and infprof's count is the program's own. Self time is compared
within 10% plus 1% of the window (one stall, see below). quantized::linear_dynamic only in the
int8 phase, aten::addmm/aten::linear only in the fp32 one. By default whole iterations are
sampled, and INFPROF_OPERATORS=0 records none."""
import json
import os
import unittest

from harness import TORCH_PYTHON, main
from torchlib import SAMPLE_SCRIPT, TorchCase, need, refs

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "ops_profiler.py")
PYTHON = TORCH_PYTHON
ITERS = 50


class Operators(TorchCase):
    def run_program(self, **extra):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        r = self.run_prog([PYTHON, PROG, str(ITERS)], timeout=300, **extra)
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        return r

    def window(self, db, label):
        """{name: [calls, self_us, [each call's self_us]]} of the operators between the two
        digamma marks of the phase labelled `label`."""
        rows = self.query(db, "SELECT o.start, o.self, s.value FROM torch_operators o"
                              " JOIN strings s ON s.id = o.name_id JOIN phases p ON p.id = o.phase"
                              " WHERE p.label = ? ORDER BY o.start", label)
        marks = [i for i, (_, _, n) in enumerate(rows) if n == "aten::digamma"]
        self.assertEqual(len(marks), 2, label)
        got = {}
        for _, self_ns, name in rows[marks[0] + 1:marks[1]]:
            if "::" not in name:  # as the program keeps torch.profiler's ('detach' has none)
                continue
            c = got.setdefault(name, [0, 0.0, []])
            c[0] += 1
            c[1] += self_ns / 1000.0
            c[2].append(self_ns / 1000.0)
        return got

    def test_same_operators_as_torch_profiler(self):
        r = self.run_program(INFPROF_OPERATORS=1)
        ref = json.loads(r.out)
        db = r.db()
        self.assertIn("operators: on", self.meta(db, "torch_api"))
        self.assertEqual(self.meta(db, "torch_operator_overflow"), 0)
        for key, label in (("fp32", "no_grad | autocast off"),
                           ("int8", "inference_mode | autocast off"),
                           ("script", "grad | autocast off")):
            got = self.window(db, label)
            want = ref[key]
            self.assertEqual(sorted(got), sorted(want), key)
            total = sum(v[1] for v in want.values())
            for name, (calls, t, each, nested) in want.items():
                if t > 0.01 * total:
                    n = got[name][0]
                    # torch.profiler, the anchor, loses a call now and then on a loaded machine
                    # (2026-11-29, a busy loop beside it: 298 or 299 of int8's 300 aten::fill_,
                    # 6 a forward); ours is then whole forwards' worth, at most 1% above.
                    self.assertTrue(n == calls or (n % ITERS == 0 and 0 < n - calls <= n / 100),
                                    f"{key} {name}: {n} against {calls}")
                    self.assertEqual(len(each), calls, f"{key} {name}")
                    # Call by call, the 3% that disagree most (at least two) left out: a
                    # preemption between the two profilers' callbacks (a loaded machine: three
                    # calls of 150 apart by 0.3 ms, one by 29-57 ms); 10% plus 1% of the window
                    # on the rest. Calls a loss leaves unpaired: their sums.
                    # The calls torch.profiler mis-nested (a child's end rounded past theirs, its
                    # whole time then their self time) are not compared; at most a quarter.
                    if n == calls:
                        self.assertLessEqual(len(nested), calls // 4, f"{key} {name}")
                        pairs = [p for i, p in enumerate(zip(got[name][2], each))
                                 if i not in set(nested)]
                        pairs = sorted(pairs, key=lambda p: abs(p[0] - p[1]))
                        drop = max(2, len(pairs) * 3 // 100) if len(pairs) > 10 else 0
                        pairs = pairs[:len(pairs) - drop]
                    else:
                        pairs = [(sum(got[name][2]), sum(each))]
                    ours, theirs = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
                    self.assertAlmostEqual(ours, theirs, delta=0.1 * theirs + 0.01 * total,
                                           msg=f"{key} {name}")
                else:
                    self.assertLessEqual(calls, got[name][0], f"{key} {name}")
                    self.assertGreaterEqual(calls, 0.95 * got[name][0], f"{key} {name}")
        fp32 = self.window(db, "no_grad | autocast off")
        int8 = self.window(db, "inference_mode | autocast off")
        self.assertIn("quantized::linear_dynamic", int8)
        self.assertNotIn("aten::addmm", int8)
        self.assertNotIn("aten::linear", int8)
        self.assertEqual(fp32["aten::addmm"][0], 3 * ITERS)
        self.assertEqual(fp32["aten::linear"][0], 3 * ITERS)
        self.assertEqual(fp32["aten::resolve_conj"][0], 2 * 3 * ITERS)
        self.assertEqual(int8["quantized::linear_dynamic"][0], 3 * ITERS)
        self.assertNotIn("quantized::linear_dynamic", fp32)
        script = self.window(db, "grad | autocast off")
        self.assertEqual(script["aten::addmm"][0], 3 * ITERS)
        # Depth and self time hold together: linear's self time excludes the addmm it calls.
        rows = self.query(db, "SELECT count(*) FROM torch_operators o JOIN strings s"
                              " ON s.id = o.name_id WHERE s.value = 'aten::addmm' AND depth = 0")
        self.assertEqual(rows[0][0], 0)

    def test_report_operators_section(self):
        # The report's Operators section (report/run/operators.c): per phase, by self time, with
        # calls per iteration (the program marks each forward as an iteration).
        r = self.run_program(INFPROF_OPERATORS=1)
        rows = self.report_json(r.db())["operators"]
        by = {(x["phase"], x["operator"]): x for x in rows}
        q = by[("inference_mode | autocast off", "quantized::linear_dynamic")]
        self.assertEqual(q["calls"], 3 * ITERS)
        self.assertAlmostEqual(q["calls_per_iteration"], 3.0)
        a = by[("no_grad | autocast off", "aten::addmm")]
        self.assertAlmostEqual(a["calls_per_iteration"], 3.0)
        self.assertGreater(a["self_share_pct"], 50)
        self.assertNotIn(("inference_mode | autocast off", "aten::addmm"), by)
        # Per phase: quantized operators did the GEMM work in the int8 phase only.
        ph = {x["phase"]: x for x in self.report_json(r.db())["operator_phases"]}
        self.assertEqual(ph["inference_mode | autocast off"]["precision"], "int8")
        self.assertEqual(ph["no_grad | autocast off"]["precision"], "float")
        self.assertEqual(ph["grad | autocast off"]["precision"], "float")
        self.assertEqual(ph["no_grad | autocast off"]["casts_per_iteration"], 0)
        # Ordered by self time within each phase.
        fp32 = [x["self_cpu_ns"] for x in rows if x["phase"] == "no_grad | autocast off"]
        self.assertEqual(fp32, sorted(fp32, reverse=True))

    def test_cpp_torchscript_program(self):
        # A C++ libtorch program (infprof-sample-script: Method::operator() from C++) running a
        # scripted 3-layer MLP: against the program's own counts, 3 aten::addmm per forward in
        # every phase, in each of its iterations; aten::linear 3 per forward in fp32 and twice
        # that under autocast (the autocast kernel re-dispatches it), with casts (_to_copy).
        need(SAMPLE_SCRIPT)
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        made = self.run_prog([PYTHON, "-c", "import torch, torch.nn as nn\n"
                              "m = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256,"
                              " 256), nn.ReLU(), nn.Linear(256, 10)).eval()\n"
                              "torch.jit.script(m).save('mlp.pt')"], preload=False, timeout=300)
        if made.rc != 0 and b"No module named 'torch'" in made.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(made.rc, 0, made.err)
        r = self.run_prog([SAMPLE_SCRIPT, "mlp.pt", "--shape", "512", "--batch", "4", "--iters",
                           "5", "--modes", "grad,no_grad"], timeout=300, INFPROF_OPERATORS=1)
        self.assertEqual(r.rc, 0, r.err)
        want = {x["phase"]: x["iterations"] for x in refs(r.out)}
        got = self.query(r.db(), "SELECT p.label, (SELECT count(*) FROM iterations i"
                         " WHERE i.phase = p.id), sum(s.value = 'aten::addmm' AND o.iter > 0),"
                         " sum(s.value = 'aten::linear' AND o.iter > 0),"
                         " sum(s.value = 'aten::_to_copy' AND o.iter > 0)"
                         " FROM torch_operators o JOIN strings s ON s.id = o.name_id"
                         " JOIN phases p ON p.id = o.phase GROUP BY p.id")
        got = {label: rest for label, *rest in got}
        self.assertEqual(sorted(want), sorted(k for k, v in got.items() if v[0]))
        for label, iters in want.items():
            n, addmm, linear, casts = got[label]
            self.assertEqual(n, iters, label)
            self.assertEqual(addmm, 3 * iters, label)
            if "bf16" in label:
                self.assertEqual(linear, 6 * iters, label)
                self.assertGreater(casts, 0, label)
            else:
                self.assertEqual(linear, 3 * iters, label)
                self.assertEqual(casts, 0, label)
        # The report's casts per iteration: the same count, per iteration.
        ph = {x["phase"]: x for x in self.report_json(r.db())["operator_phases"]}
        for label, iters in want.items():
            self.assertAlmostEqual(ph[label]["casts_per_iteration"], got[label][3] / iters)
            self.assertEqual(ph[label]["precision"], "float")

    def test_sampled_by_default(self):
        # By default only whole iterations' operators, 1 in 4 (test_operators_sampled.py), and
        # none of the program's own between its marks outside those; INFPROF_OPERATORS=0: none.
        r = self.run_program()
        db = r.db()
        self.assertEqual(self.meta(db, "torch_operators_mode"), "sampled")
        self.assertEqual(self.query(db, "SELECT count(*) FROM torch_operators WHERE iter NOT IN"
                                        " (SELECT iter FROM torch_operator_windows)")[0][0], 0)
        os.remove(db)
        r = self.run_program(INFPROF_OPERATORS="0")
        self.assertNotIn("operators", self.meta(r.db(), "torch_api") or "")
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM torch_operators")[0][0], 0)


if __name__ == "__main__":
    main()
