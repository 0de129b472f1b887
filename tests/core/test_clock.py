"""The run's clock (profiler/clock.h, clock.c): where the kernel's clocksource is the TSC, events
are timed by the TSC through a line the writer keeps on CLOCK_MONOTONIC; INFPROF_CLOCK=gettime
keeps clock_gettime. Either way a stage the program times as 300 ms by CLOCK_MONOTONIC
(tests/progs/cpu_burn.c, each stage an NVTX range) lasts at least that long on our clock, and the
metadata says which clock ran and how far the line ever was from CLOCK_MONOTONIC."""
import os
from harness import Case, main, prog

STAGE_MS = 300


def kernel_clocksource():
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            return f.read().strip()
    except OSError:
        return ""


class Clock(Case):
    def run_burn(self, **env):
        db = os.path.join(self.dir, "clock.db")
        r = self.run_prog([prog("cpu_burn"), str(STAGE_MS)], INFPROF_OUTPUT=db, **env)
        self.assertEqual(r.rc, 0, r.err)
        meta = dict(self.query(db, "SELECT key, value FROM meta"))
        spans = {name: end - start for name, start, end in
                 self.query(db, "SELECT s.value, r.start, r.end FROM nvtx_ranges r"
                                " JOIN strings s ON s.id = r.text_id")}
        self.assertEqual(set(spans), {"one", "two", "idle"}, spans)
        for name, dur in spans.items():
            # The program ran the stage for STAGE_MS by CLOCK_MONOTONIC, between the push and
            # the pop: our clock may not read it shorter (beyond 100 ppm), nor much longer.
            self.assertGreaterEqual(dur, STAGE_MS * 1_000_000 * (1 - 1e-4), (name, dur))
            self.assertLess(dur, (STAGE_MS + 150) * 1_000_000, (name, dur))
        return meta

    def test_tsc_where_the_kernel_times_with_it(self):
        meta = self.run_burn()
        if kernel_clocksource() != "tsc" or os.uname().machine != "x86_64":
            self.assertEqual(meta["clock_source"], "clock_gettime", meta)
            return
        self.assertEqual(meta["clock_source"], "tsc", meta)
        # A step at most every 50 ms over a run of about a second.
        self.assertGreaterEqual(int(meta["clock_steps"]), 5, meta)
        self.assertLess(int(meta["clock_max_error_ns"]), 50_000, meta)

    def test_gettime_when_asked(self):
        meta = self.run_burn(INFPROF_CLOCK="gettime")
        self.assertEqual(meta["clock_source"], "clock_gettime", meta)
        self.assertEqual(int(meta["clock_steps"]), 0, meta)

    def test_bad_value_is_one_line(self):
        r = self.run_prog([prog("cpu_burn"), "10"], INFPROF_CLOCK="rdtsc",
                          INFPROF_OUTPUT=os.path.join(self.dir, "bad.db"))
        self.assertEqual(r.rc, 0, r.err)  # the program runs as without us
        self.assertIn(b"INFPROF_CLOCK", r.err)


if __name__ == "__main__":
    main()
