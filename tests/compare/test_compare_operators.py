"""`infprof compare` operator deltas (report/compare/compare_operators.c): two runs of
tests/progs/ops_fixture.c (aten::conv2d around aten::cudnn_convolution, kernels inside), their
operator self times then set to known values: operators matched by phase and name, sorted by
the change in self CPU time, with GPU time beside it; runs without operators say so."""
import sqlite3

from harness import Case, main, prog, resum_operators


class CompareOperators(Case):
    def run_fixture(self, name, conv_self, cudnn_self, **env):
        r = self.run_prog([prog("ops_fixture"), "nested", name], preload=False, **env)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db(name)
        con = sqlite3.connect(db)
        with con:
            for op, v in (("aten::conv2d", conv_self), ("aten::cudnn_convolution", cudnn_self)):
                con.execute("UPDATE torch_operators SET self = ? WHERE name_id ="
                            " (SELECT id FROM strings WHERE value = ?)", (v, op))
            resum_operators(con)
        con.close()
        return db

    def test_operator_deltas(self):
        base = self.run_fixture("base.db", 10000, 4000, INFPROF_OPERATORS="1")
        new = self.run_fixture("new.db", 10000, 9000, INFPROF_OPERATORS="1")
        r = self.cli("compare", "--format", "json", base, new)
        self.assertEqual(r.rc, 0, r.err)
        import json
        ops = json.loads(r.out)["operators"]
        self.assertEqual([(o["operator"], o["status"], o["self_cpu_ns_delta"]) for o in ops],
                         [("aten::cudnn_convolution", "both", 5000), ("aten::conv2d", "both", 0)])
        self.assertEqual(ops[0]["gpu_ns_base"], 2000)
        self.assertEqual(ops[0]["gpu_ns_new"], 2000)
        text = self.cli("compare", base, new)
        self.assertEqual(text.rc, 0)
        self.assertIn(b"PyTorch operators, by change in self CPU time", text.out)

    def test_runs_without_operators(self):
        base = self.run_fixture("a.db", 0, 0)
        new = self.run_fixture("b.db", 0, 0)
        r = self.cli("compare", base, new)
        self.assertEqual(r.rc, 0, r.err)
        self.assertIn(b"no operator in either run", r.out)


if __name__ == "__main__":
    main()
