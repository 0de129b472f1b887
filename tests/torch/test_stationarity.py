"""Verdicts that the run cannot support (report/run/iterations.c: level_shift, phases_overlap).
A phase whose steady iterations shift level mid-run (a machine that slowed down or sped up) gives
no verdict, and says so with the two levels; a faster phase some of whose iterations ran at the
slower one's speed gives its verdict with a caution. Iterations of known length: each is a
record_function("iteration") scope around a sleep of the program's choosing."""
import os
import unittest

from harness import Case, main

PYTHON = "/usr/bin/python3"
PROG = """
import sys, time, torch
def run(ctx, lengths):
    with ctx():
        for ms in lengths:
            with torch.autograd.profiler.record_function("iteration"):
                time.sleep(ms / 1000)
what = sys.argv[1]
if what == "shift":
    run(torch.no_grad, [10] * 20)
    run(torch.inference_mode, [10] * 10 + [20] * 10)
else:
    run(torch.no_grad, [20] * 20)
    run(torch.inference_mode, [20 if i % 5 == 4 else 10 for i in range(20)])
print("done")
"""


class Stationarity(Case):
    def summary(self, what):
        if not os.path.exists(PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        prog = os.path.join(self.dir, "prog.py")
        with open(prog, "w") as f:
            f.write(PROG)
        r = self.run_prog([PYTHON, prog, what], timeout=120, INFPROF_OUTPUT=f"{what}.db")
        if r.rc != 0 and b"No module named 'torch'" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        return self.report_json(r.db(f"{what}.db"))["summary"]

    def test_a_level_shift_gives_no_verdict(self):
        s = self.summary("shift")
        line = s["inference_vs_no_grad"]
        self.assertRegex(line, r"no verdict: inference/off shifted 10\.\d+ms -> 20\.\d+ms mid-run")
        for word in ("faster", "slower", "no clear difference", "the same within"):
            self.assertNotIn(word, line)

    def test_iterations_at_the_other_phases_speed_give_a_caution(self):
        s = self.summary("overlap")
        line = s["inference_vs_no_grad"]
        self.assertIn("caution: 4 of 20 inference/off iterations at no_grad/off's 20.", line)
        self.assertIn("caution", s["fastest"])


if __name__ == "__main__":
    main()
