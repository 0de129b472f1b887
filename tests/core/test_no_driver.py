"""No GPU, no driver (this machine, CI): a CUDA program runs untouched and the database says why
CUDA collection is off, in one quiet line of metadata."""
from harness import Case, main, prog


class NoDriver(Case):
    def test_cuda_program_without_driver(self):
        plain = self.run_prog([prog("cudart_probe")], preload=False)
        traced = self.run_prog([prog("cudart_probe")])
        self.assertUnnoticed(plain, traced)
        status = self.meta(traced.db(), "collector.cupti")
        if b"ok" in plain.out:
            self.skipTest("a CUDA driver is present here")
        self.assertIn("no CUDA driver", status)
        self.assertEqual(self.query(traced.db(), "SELECT count(*) FROM kernels")[0][0], 0)
        r = self.report_json(traced.db())
        self.assertIn("no CUDA driver", r["run"]["warnings"])

    def test_passive_when_asked(self):
        r = self.run_prog([prog("cudart_probe")], INFPROF_CUPTI=0)
        self.assertEqual(self.meta(r.db(), "collector.cupti"), "passive: INFPROF_CUPTI=0")


if __name__ == "__main__":
    main()
