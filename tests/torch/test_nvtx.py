"""NVTX out and in, with tests/progs/nvtx_tool.c standing in for Nsight Systems.
Out: every phase is a start/end range in domain 'infprof', named like the phase, ended once.
In: the program's own ranges land in the database, also when a tool was injected first; that tool
still receives them (chaining)."""
import os

from harness import main, prog
from torchlib import NVTX_TOOL, TORCH_MODES, TorchCase, need


class Nvtx(TorchCase):
    def run_with_tool(self, argv, **env):
        need(NVTX_TOOL)
        log = os.path.join(self.dir, "tool.log")
        r = self.run_prog(argv, NVTX_INJECTION64_PATH=NVTX_TOOL, NVTX_TOOL_LOG=log, **env)
        self.assertEqual(r.rc, 0, r.err)
        lines = []
        if os.path.exists(log):  # the tool writes nothing if no NVTX call reached it
            with open(log) as f:
                lines = [line.rstrip("\n").split(" ", 4) for line in f]
        return r, lines

    def emitted(self, lines):
        """{tid: [(id, name)]} of the ranges started in domain infprof, and {id: count} ended."""
        starts, ends = {}, {}
        for w in lines:
            if w[0] == "start" and w[1] == "infprof":
                starts.setdefault(int(w[3]), []).append((int(w[2]), w[4]))
            elif w[0] == "end" and w[1] == "infprof":
                ends[int(w[2])] = ends.get(int(w[2]), 0) + 1
        return starts, ends

    def test_phase_ranges_reach_the_tool(self):
        need(TORCH_MODES)
        r, lines = self.run_with_tool([TORCH_MODES, "nested"])
        self.assertIn(["domain", "infprof"], lines)
        starts, ends = self.emitted(lines)
        tid = self.main_tid(r.db())
        self.assertEqual([name for _, name in starts[tid]], [
            "grad | autocast off", "inference_mode | autocast off", "grad | autocast off",
            "no_grad | autocast off", "no_grad | autocast bf16", "no_grad | autocast off",
            "grad | autocast off"])
        # Each range ends exactly once (the last one when the program exits).
        self.assertEqual(ends, {i: 1 for i, _ in starts[tid]})
        # Ours are not the program's: none of them is in the database's NVTX ranges.
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM nvtx_ranges"), [(0,)])
        self.assertIn("chained to", self.meta(r.db(), "collector.nvtx"))

    def test_worker_threads_end_their_ranges(self):
        need(TORCH_MODES)
        r, lines = self.run_with_tool([TORCH_MODES, "threads"])
        starts, ends = self.emitted(lines)
        main_tid = self.main_tid(r.db())
        workers = {t: v for t, v in starts.items() if t != main_tid}
        self.assertEqual(sorted(v[0][1] for v in workers.values()),
                         ["inference_mode | autocast off", "no_grad | autocast off"])
        # A thread that exits ends its range: no range is left open.
        started = [i for v in starts.values() for i, _ in v]
        self.assertEqual(ends, {i: 1 for i in started})

    def test_emit_off(self):
        need(TORCH_MODES)
        r, lines = self.run_with_tool([TORCH_MODES, "nested"], INFPROF_NVTX_EMIT=0)
        self.assertEqual([w for w in lines if len(w) > 1 and w[1] == "infprof"], [])
        self.assertGreater(self.query(r.db(), "SELECT count(*) FROM phase_spans")[0][0], 0)

    def test_program_ranges_in_database_and_tool(self):
        r, lines = self.run_with_tool([prog("nvtx_ranges"), "3"])
        db = r.db()
        texts = dict(self.query(db, "SELECT s.value, count(*) FROM nvtx_ranges r JOIN strings s"
                                    " ON s.id = r.text_id GROUP BY s.value"))
        self.assertEqual(texts, {"setup": 1, "ready": 1, "iteration batch=4": 3, "inner": 3,
                                 "whole": 1})
        # Domain, nesting and pairing as the program made them.
        self.assertEqual(self.query(db, "SELECT d.id FROM nvtx_domains d JOIN strings s ON"
                                        " s.id = d.name_id WHERE s.value = 'app'"), [(1,)])
        self.assertEqual(self.query(db, "SELECT count(*) FROM nvtx_ranges r JOIN nvtx_ranges p"
                                        " ON p.id = r.parent JOIN strings s ON s.id = p.text_id"
                                        " WHERE r.domain = 1 AND s.value = 'iteration batch=4'"),
                         [(3,)])
        self.assertEqual(self.query(db, "SELECT count(*) FROM iterations WHERE source = 2"),
                         [(3,)])
        # The tool, injected first, still saw every one of them.
        self.assertEqual(sum(1 for w in lines if w[0] == "push" and w[1] == "-"), 4)
        self.assertEqual(sum(1 for w in lines if w[0] == "push" and w[1] == "app"), 3)
        self.assertEqual(sum(1 for w in lines if w[0] == "pop"), 7)
        self.assertEqual([w[0] for w in lines if w[0] in ("start", "end")], ["start", "end"])
        self.assertEqual([w[-1] for w in lines if w[0] == "mark"], ["ready"])

    def test_program_ranges_without_tool(self):
        r = self.run_prog([prog("nvtx_ranges"), "2"])
        self.assertEqual(r.rc, 0)
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM nvtx_ranges"), [(7,)])
        self.assertEqual(self.meta(r.db(), "collector.nvtx"), "on: capturing")

    def test_capture_off_leaves_the_tool_alone(self):
        need(TORCH_MODES)
        r, lines = self.run_with_tool([TORCH_MODES, "nested"], INFPROF_NVTX=0)
        # We do not inject: the tool gets our phase ranges straight from our NVTX calls.
        self.assertEqual(len(self.emitted(lines)[0][self.main_tid(r.db())]), 7)
        self.assertEqual(self.query(r.db(), "SELECT count(*) FROM nvtx_ranges"), [(0,)])


if __name__ == "__main__":
    main()
