"""The Python module hooks' common path in C (collectors/torch_pyfast.c): the same iterations,
labels and batches as the Python hooks it stands in for, over module calls of every shape
(tests/progs/pyfast_prog.py: two batch sizes, train() and back, a list of tensors, no input, a
call of a model from inside its own, a forward that raises, models made and dropped, the
program's own hooks on the root, a second thread); the program's own hooks run in order and
go when removed, and ours leave nothing behind on its modules."""
import glob
import json
import os
import unittest

from harness import Case, TORCH_PYTHON, main

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "pyfast_prog.py")
LATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "pythreads_late.py")

# What the program's calls are, by their label and batch (None: no input), in order (its second
# thread's two calls of Sequential at batch 5 are on another thread, listed where they ran). The
# model back in eval() after train() is its series again (it once read "Drop #2"); a model called
# from an except block is an iteration; the last five: inputs whose shape runs Python code
# (tests/progs/pyfast_prog.py's Odd).
EXPECTED = ([("Sequential", 2)] * 4 + [("Sequential", 5)] * 3 + [("Sequential", 1)]
            + [("Drop", 2), ("Drop train()", 2), ("Drop", 5), ("Many", 3), ("Buffer", None),
               ("Again", 2), ("Raises", 2), ("Raises", 5)]
            + [("Sequential #2", 2)] * 3 + [("Sequential", 2)] * 6
            + [("Drop train()", 2), ("Drop", 5), ("Sequential", 5), ("Sequential", 2)]
            + [("Sequential", 5)] * 2 + [("Sequential", 2)])
OWN = ["pre", "post"] * 3 + ["post", "end"]


class PyFast(Case):
    def run_once(self, fast):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        db = f"{fast}.db"
        r = self.run_prog([TORCH_PYTHON, PROG], timeout=300, INFPROF_OUTPUT=db,
                          INFPROF_PYTHON_FAST=fast)
        if r.rc != 0 and b"No module named" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        out = json.loads(r.out.decode().strip().splitlines()[-1])
        rows = self.query(r.db(db), "SELECT coalesce(s.value, ''), i.batch, i.tid, i.source"
                                    " FROM iterations i LEFT JOIN strings s ON s.id = i.label_id"
                                    " ORDER BY i.start")
        return out, rows, r

    def test_the_c_path_counts_what_the_python_hooks_count(self):
        results = {}
        for fast in ("0", "1"):
            out, rows, r = self.run_once(fast)
            self.assertEqual(out["own"], OWN, out)  # the program's own hooks, as without us
            self.assertEqual(out["left"], {"_forward_hooks": 0, "_forward_pre_hooks": 0}, out)
            self.assertEqual(out["armed"], ["infprof_pre" if fast == "1" else "_pre"], out)
            self.assertEqual({x[3] for x in rows}, {5}, rows)  # python module calls
            self.assertEqual([(x[0], x[1]) for x in rows], EXPECTED, rows)
            main_tid = rows[0][2]
            self.assertEqual([x[2] != main_tid for x in rows],
                             [False] * (len(EXPECTED) - 5) + [True, False, True, True, False],
                             rows)
            # The hook stays armed after a second thread's first call made inside our read of
            # an input's shape (the C path once disarmed it for good there).
            self.assertEqual(out["armed_end"], out["armed"], out)
            self.assertEqual(self.meta(r.db(f"{fast}.db"), "python_module_calls_open_at_end"),
                             0)
            self.assertIn(self.meta(r.db(f"{fast}.db"), "python_module_calls_unseen"), (None, 0, "0"))
            results[fast] = [(x[0], x[1]) for x in rows]
        self.assertEqual(results["0"], results["1"])

    def late(self, mode, fast):
        """pythreads_late.py in mode: what it says it called (its output's lines: a forked
        child's, then its own), and for each database (the main one first) the series'
        iterations, meta python_threads_watched_late and the Lost line."""
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        db = f"{mode}{fast}.db"
        r = self.run_prog([TORCH_PYTHON, LATE, mode], timeout=120, INFPROF_OUTPUT=db,
                          INFPROF_PYTHON_FAST=fast)
        if r.rc != 0 and b"No module named" in r.err:
            raise unittest.SkipTest("python3 has no torch")
        self.assertEqual(r.rc, 0, r.err)
        said = [json.loads(line) for line in r.out.decode().splitlines()]
        got = []
        for path in [r.db(db)] + sorted(glob.glob(r.db(f"{mode}{fast}-*.db"))):
            series = dict(self.query(path, "SELECT s.value, count(*) FROM iterations i JOIN"
                                           " strings s ON s.id = i.label_id GROUP BY 1"))
            text = self.cli("report", path).out.decode()
            lost = " ".join(text.split("Lost", 1)[1].split("Findings", 1)[0].split())
            got.append((series, int(self.meta(path, "python_threads_watched_late")), lost))
        return said, got

    def test_a_thread_that_calls_models_only_during_another_forward_is_watched(self):
        # A is called on the main thread only while the watched thread's B forward is open (the
        # hooks disarmed). Its first call is unseen, and said so; the allocator's report from it
        # has the hooks watch every thread once that B forward ends, so A's other 11 calls are
        # iterations (before: none of them, and "Lost nothing").
        for fast in ("0", "1"):
            said, ((series, late, lost),) = self.late("late", fast)
            self.assertEqual(series, {"A": said[-1]["A"] - 1, "B": said[-1]["B"]}, fast)
            self.assertEqual(late, 1, fast)
            self.assertIn("module calls of other threads not seen for", lost)

    def test_a_call_missed_before_a_second_thread_calls_the_watched_model_is_said(self):
        # Y runs once while the watched thread's first forward of X is open, then a third thread
        # calls X: the hooks watch every thread from there, and Y's call is said, not lost
        # silently (its count was dropped on that path: "Lost nothing").
        for fast in ("0", "1"):
            said, ((series, late, lost),) = self.late("third", fast)
            self.assertEqual(series, {"X": said[-1]["X"]}, fast)
            self.assertEqual(late, 1, fast)
            self.assertIn("module calls of other threads not seen for", lost)

    def test_a_forked_child_counts_its_own(self):
        said, got = self.late("fork", "1")
        self.assertEqual(len(got), 2, got)
        (series, late, _), (child, child_late, child_lost) = got
        self.assertEqual(series, {"A": said[-1]["A"] - 1, "B": said[-1]["B"]})
        self.assertEqual(late, 1)
        self.assertEqual(child, {"A": said[0]["A"]})
        self.assertEqual(child_late, 0)  # it had the parent's count
        self.assertNotIn("other threads", child_lost)

    def test_plain_run_prints_the_same(self):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        plain = self.run_prog([TORCH_PYTHON, PROG], preload=False, timeout=300)
        if plain.rc != 0 and b"No module named" in plain.err:
            raise unittest.SkipTest("python3 has no torch")
        out, _, traced = self.run_once("1")
        mine = json.loads(plain.out.decode().strip().splitlines()[-1])
        self.assertEqual((mine["own"], mine["left"]), (out["own"], out["left"]))
        self.assertEqual(mine["armed"], [])
        self.assertEqual(plain.err, traced.err)


if __name__ == "__main__":
    main()
