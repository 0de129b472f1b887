"""libtorch where a plain preload would not find it: loaded RTLD_LOCAL as Python loads it (the
hooks still reach the real functions), not there at all (no phases, no error, the report says
why), and linked into the executable (the status says so)."""
from harness import main, prog
from torchlib import PHASE, TorchCase, need


class NoTorch(TorchCase):
    def same(self, argv):
        plain = self.run_prog(argv, preload=False)
        traced = self.run_prog(argv)
        self.assertEqual((traced.rc, traced.out, traced.err), (plain.rc, plain.out, plain.err))
        return traced.db()

    def test_libtorch_loaded_locally(self):
        db = self.same([need(prog("torch_dlopen"))])
        self.assertEqual([p for _, p, _, _ in self.spans(db)],
                         [PHASE["no_grad | autocast off"], PHASE["grad | autocast off"]])
        self.assertRegex(self.meta(db, "collector.torch"), r"^on: .*libc10\.so")

    def test_program_without_libtorch(self):
        db = self.same([prog("host"), "threads"])
        self.assertEqual(self.meta(db, "collector.torch"), "off: no libtorch in this process")
        self.assertIsNone(self.meta(db, "torch_api"))
        for table in ("phases", "phase_spans", "tensor_memory", "iterations"):
            self.assertEqual(self.query(db, f"SELECT count(*) FROM {table}"), [(0,)], table)
        r = self.cli("report", db)
        self.assertEqual(r.rc, 0, r.err)
        self.assertIn(b"no libtorch phase was seen", r.out)
        self.assertEqual(self.report_json(db)["phases"], [])

    def test_libtorch_linked_statically(self):
        db = self.same([prog("static_torch")])
        self.assertEqual(self.meta(db, "collector.torch"),
                         "off: libtorch is linked statically into the program: its calls cannot"
                         " be interposed")

    def test_libtorch_exported_by_the_program(self):
        db = self.same([prog("static_torch_exported")])
        self.assertEqual(self.meta(db, "collector.torch"),
                         "passive: libtorch is linked into the program: no interposition, grad"
                         " mode by polling only")
        self.assertIn("GradMode/InferenceMode::is_enabled in", self.meta(db, "torch_api"))


if __name__ == "__main__":
    main()
