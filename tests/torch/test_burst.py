"""Nothing lost under load: eight threads at once, each making tensors as fast as it can (two
allocator reports each), switching grad mode every 100 and wrapping each in an NVTX range. At
default settings every report, every range and every phase span lands in the database. With a
buffer budget forced tiny and no wait, events are dropped, and the drops are counted, attributed
to the phase each thread was in, never take a phase change with them, and the report says which
phases they touch."""
from harness import main
from torchlib import PHASE, TORCH_MODES, TorchCase, need

THREADS, N = 8, 10000
GRAD, NO_GRAD = PHASE["grad | autocast off"], PHASE["no_grad | autocast off"]


class Burst(TorchCase):
    def run_burst(self, *extra, n=N, **env):
        r = self.run_prog([need(TORCH_MODES), "burst", str(THREADS), str(n), *extra], timeout=300,
                          **env)
        self.assertEqual(r.rc, 0, r.err)
        return r.db()

    def workers(self, db):
        main_tid = self.main_tid(db)
        return [t for (t,) in self.query(db, "SELECT DISTINCT tid FROM phase_spans WHERE tid != ?",
                                         main_tid)]

    def assertPhasesWhole(self, db, n=N):
        """Each worker: grad, then no_grad and grad in turn, one span per block of 100 and the
        grad mode restored after the last: n / 100 + 1 spans, none missing."""
        workers = self.workers(db)
        self.assertEqual(len(workers), THREADS)
        for tid in workers:
            phases = [p for _, p, _, _ in self.spans(db, tid)]
            self.assertEqual(phases, [GRAD if i % 2 == 0 else NO_GRAD
                                      for i in range(n // 100 + 1)], tid)
        return workers

    def test_defaults_lose_nothing(self):
        db = self.run_burst("nvtx")
        workers = self.assertPhasesWhole(db)
        self.assertEqual(self.meta(db, "dropped_events"), 0)
        for tid in workers:
            self.assertEqual(self.query(db, "SELECT count(*) FROM tensor_memory WHERE tid = ?",
                                        tid)[0][0], 2 * N, tid)
            self.assertEqual(self.query(db, "SELECT count(*) FROM nvtx_ranges WHERE tid = ?",
                                        tid)[0][0], N, tid)
        # Each report in the phase its thread was in when it allocated.
        bad = self.query(db, """SELECT count(*) FROM tensor_memory m WHERE m.tid != ? AND NOT
            EXISTS (SELECT 1 FROM phase_spans s WHERE s.tid = m.tid AND s.phase = m.phase AND
            s.start <= m.ts AND coalesce(s.end, 1 << 62) >= m.ts)""", self.main_tid(db))
        self.assertEqual(bad, [(0,)])
        self.assertEqual(self.query(db, "SELECT count(*) FROM event_drops"), [(0,)])

    def test_tiny_budget_drops_counted_and_attributed(self):
        # Ten times the events of the other test against 4 MiB: more than a writer on any
        # machine drains while eight threads race, with nobody waiting for it.
        db = self.run_burst(n=10 * N, INFPROF_BUFFER_MB=4, INFPROF_BUFFER_WAIT_MS=0)
        self.assertPhasesWhole(db, 10 * N)  # phase changes are never among the drops
        dropped = self.meta(db, "dropped_events")
        self.assertGreater(dropped, 0)
        # Every event was either recorded or counted as dropped.
        recorded = self.query(db, "SELECT count(*) FROM tensor_memory")[0][0]
        main_reports = self.query(db, "SELECT count(*) FROM tensor_memory WHERE tid = ?",
                                  self.main_tid(db))[0][0]
        self.assertEqual(recorded - main_reports + dropped, THREADS * 2 * 10 * N)
        # The drops, by thread and phase: they add up, and each lies in that thread's phase.
        rows = self.query(db, "SELECT tid, phase, count, first, last FROM event_drops")
        self.assertEqual(sum(r[2] for r in rows), dropped)
        for tid, phase, count, first, last in rows:
            self.assertIn(phase, (GRAD, NO_GRAD))
            self.assertLessEqual(first, last)
            for ts in (first, last):
                inside = self.query(db, "SELECT count(*) FROM phase_spans WHERE tid = ? AND"
                                        " phase = ? AND start <= ? AND coalesce(end, 1 << 62) >= ?",
                                    tid, phase, ts, ts)[0][0]
                self.assertEqual(inside, 1, (tid, phase, ts))
        warnings = self.report_json(db)["run"]["warnings"]
        self.assertIn(f"{dropped} events dropped", warnings)
        self.assertIn("grad/off", warnings)


if __name__ == "__main__":
    main()
