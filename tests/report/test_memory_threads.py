"""A phase's peak memory with a second thread in another phase (report/run/phases.c): a
DataLoader's pin-memory thread sits in grad/off, the default, for as long as it runs, making only
CPU allocations, while the main thread runs an inference_mode loop on the GPU. On the H200
fixture its spans made the main thread's inference allocations grad/off's peak (863.6 MiB where
grad/off's own loop reached 683.0). tests/progs/fixture_compare.c's 'pin' scenario: the main
thread takes cuda:0 to 6 MiB in grad/off, then to 9 MiB in inference/bf16 while the other thread
is in grad/off; grad/off's cuda:0 peak is 6 MiB, and no_grad/off, where only the second thread
ever was, has no cuda:0 peak (null, not 0). Each phase runs one iteration (an NVTX
range), so that neither is set-up the Summary leaves out."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compare"))
from compare_common import MIB, build  # noqa: E402
from harness import Case, main  # noqa: E402


class MemoryThreads(Case):
    def test_a_thread_that_never_allocates_there_does_not_hold_its_phase(self):
        db = build(self.dir, "pin", "pin")
        phases = {p["label"]: p for p in self.report_json(db)["phases"]}
        grad = phases["grad | autocast off"]
        inf = phases["inference_mode | autocast bf16"]
        self.assertEqual(grad["peak_allocated_bytes"], 6 * MIB)
        self.assertEqual(grad["peak_allocated_by_device"], {"cuda:0": 6 * MIB, "cpu": MIB})
        self.assertEqual(grad["peak_reserved_bytes"], 8 * MIB)
        self.assertEqual(inf["peak_allocated_bytes"], 9 * MIB)
        # A thread that runs iterations holds every device: the CPU bytes live meanwhile.
        self.assertEqual(inf["peak_allocated_by_device"], {"cuda:0": 9 * MIB, "cpu": MIB})
        # Only the second thread was ever in no_grad/off: no GPU figure, not 0.
        ng = phases["no_grad | autocast off"]
        self.assertIsNone(ng["peak_allocated_bytes"])
        self.assertEqual(ng["peak_allocated_by_device"], {"cuda:0": None, "cpu": MIB})
        rows = {(r["label"], r["device"]): r for r in self.report_json(db)["memory"]}
        self.assertEqual(rows[("grad | autocast off", "cuda:0")]["peak_allocated_bytes"], 6 * MIB)
        self.assertIsNone(rows[("no_grad | autocast off", "cuda:0")]["peak_allocated_bytes"])
        self.assertEqual(rows[("no_grad | autocast off", "cpu")]["peak_allocated_bytes"], MIB)
        text = " ".join(self.cli("report", db).out.decode().split())
        self.assertIn("Peak memory inference/bf16 sets the peak, 9.00MiB allocated on cuda:0",
                      text)

    def test_rowids_far_past_the_rows_and_below_one(self):
        # The report sizes its arrays from the largest rowid (report/base/db.c db_rows_guess),
        # not a count: a rowid set near 2^63, and one below 1, must neither ask for the memory
        # the largest implies nor lose a row.
        import sqlite3
        db = build(self.dir, "pin", "pin")
        con = sqlite3.connect(db)
        with con:
            ts, tid, phase = con.execute("SELECT ts, tid, phase FROM tensor_memory WHERE"
                                         " device_type = 1 AND allocated = ?", (9 * MIB,)).fetchone()
            for rowid, dt, alloc in ((9000000000000000000, 1, 10 * MIB), (-5, 2, 12 * MIB)):
                con.execute("INSERT INTO tensor_memory(rowid, ts, tid, phase, device_type,"
                            " device_index, ptr, bytes, allocated, reserved) VALUES"
                            " (?, ?, ?, ?, 1, 0, 1, 4096, ?, ?)",
                            (rowid, ts + dt, tid, phase, alloc, alloc))
        con.close()
        phases = {p["label"]: p for p in self.report_json(db)["phases"]}
        self.assertEqual(phases["inference_mode | autocast bf16"]["peak_allocated_bytes"],
                         12 * MIB)


if __name__ == "__main__":
    main()
