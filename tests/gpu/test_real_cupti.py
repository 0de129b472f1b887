"""On a GPU, with the real libcupti: a program that holds CUPTI itself (tests/progs/
cupti_holder.c subscribes as "holder-test" before initialising CUDA) keeps it; infprof says so
once on stderr with the holder's name, stays passive, and the program runs as without us."""
from harness import Case, main, prog
from gpu_common import require_gpu, write_section

HOLDER = prog("cupti_holder")


class RealCupti(Case):
    def test_program_holding_cupti_keeps_it(self):
        plain = self.run_prog([HOLDER], preload=False, timeout=300)
        traced = self.run_prog([HOLDER], timeout=300)
        write_section("real CUPTI: a program holding CUPTI", [
            "```", "without infprof: " + plain.out.decode().strip(),
            "with infprof:    " + traced.out.decode().strip(),
            "infprof stderr:  " + traced.err.decode().strip(),
            "collector.cupti: " + str(self.meta(traced.db(), "collector.cupti")), "```"])
        self.assertEqual(plain.rc, 0, plain.out)
        self.assertIn(b"holder: subscribe 0\n", plain.out)
        self.assertEqual((traced.rc, traced.out), (plain.rc, plain.out),
                         "infprof took CUPTI before the program's own cuptiSubscribe")
        ours = [l for l in traced.err.decode().splitlines() if l.startswith("infprof:")]
        self.assertEqual(len(ours), 1, traced.err)
        self.assertIn("holder-test", ours[0])
        status = self.meta(traced.db(), "collector.cupti")
        self.assertTrue(status.startswith("passive: CUPTI already in use by"), status)
        self.assertIn("holder-test", status)


if __name__ == "__main__":
    require_gpu(HOLDER)
    main()
