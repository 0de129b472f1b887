"""Many processes read as one (report/multi/multi_procs.c): 8 ranks of one job
(tests/progs/rank_prog.py), one made slower by a known amount (4 ms of host work in each
forward) and one holding a known extra tensor (64 MiB). `infprof report` over the 8 databases
puts the Summary over all of them first, names the straggler and the highest peak with figures
that match the programs' own, and keeps each process's own report behind --each."""
import os
import subprocess
import unittest

from harness import CLI, TORCH_PYTHON, Case, main

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "rank_prog.py")
SLOW, BIG = 3, 5  # which ranks


class Many(Case):
    def test_straggler_and_peak_named(self):
        if not os.path.exists(TORCH_PYTHON):
            raise unittest.SkipTest("no /usr/bin/python3")
        dbs, own, procs, steady, spread = [], {}, [], {}, {}
        for k in range(8):
            db = os.path.join(self.dir, f"rank{k}.db")
            args = [TORCH_PYTHON, PROG, "4" if k == SLOW else "0", "64" if k == BIG else "0"]
            procs.append((k, db, subprocess.Popen(args, cwd=self.dir,
                                                  env=self.env(True, INFPROF_OUTPUT=db,
                                                               RANK=k, WORLD_SIZE=8),
                                                  stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE)))
            if len(procs) == 2 or k == 7:  # two at a time: the machine's two cores
                for j, path, p in procs:
                    out, err = p.communicate(timeout=300)
                    if p.returncode and b"No module named" in err:
                        raise unittest.SkipTest("python3 has no torch")
                    self.assertEqual(p.returncode, 0, err)
                    own[path] = int(out.split()[-1])
                    words = out.split()
                    spread[path] = (int(words[3]), int(words[4]))  # its own p10, p90
                    steady[path] = spread[path][1] <= 1.5 * spread[path][0]
                    dbs.append(path)
                procs = []
        r = self.cli("report", "--format", "json", *dbs)
        self.assertEqual(r.rc, 0, r.err)
        import json
        report = json.loads(r.out)
        job = report["job"]
        rows = {row["process"]: row for row in report["processes"]}
        label = {db: row["process"] for db, row in zip(dbs, report["processes"])}
        slow_db, big_db = dbs[SLOW], dbs[BIG]
        # The straggler: the slow rank, its p50 the program's own within 5%, its ratio to the
        # median the programs' own ratio within 10%. Where the other ranks' own p50s were
        # themselves spread (a machine loaded by other work: 0.64-1.68x once under ctest -j2),
        # declining to single one out is the honest answer, said so.
        others_own = [own[d] for d in dbs if d != slow_db]
        calm = max(others_own) <= 1.25 * min(others_own)
        named = job["straggler_process"] is not None
        together = job["straggler"].split(" processes stand out together")[0].isdigit()
        if calm:
            self.assertEqual(job["straggler_process"], label[slow_db], job)
        elif named:  # loaded: the rank the programs' own timers found slowest (once rank 5)
            slow_db = max(dbs, key=lambda d: own[d])
            self.assertEqual(job["straggler_process"], label[slow_db], (job, own))
        elif together:  # loaded: others as slow as it (CI once: ranks 2, 3, 5 at 8.47-8.52 ms)
            alike = [d for d in dbs if rows[label[d]]["stands_out"]
                     and rows[label[d]]["stands_out"].startswith("slow, 1 of")]
            self.assertIn(slow_db, alike, (job, own))
            self.assertIn(max(dbs, key=lambda d: own[d]), alike, (job, own))
            print(f"a loaded machine: the ranks' own p50s {sorted(own.values())};"
                  f" {len(alike)} named together")
        else:
            self.assertIn("too widely to single one out", job["straggler"], job)
            print(f"a loaded machine: the ranks' own p50s {sorted(others_own)}; none named")
        # Named by the rank its launcher gave it (torchrun's RANK), then its pid.
        for k, db in enumerate(dbs):
            self.assertTrue(label[db].startswith(f"rank {k}, pid "), label[db])
        # The highest peak: the rank holding 64 MiB more than the others (within 5%).
        self.assertEqual(job["peak_process"], label[big_db], job)
        peaks = sorted(rows[label[d]]["peak_allocated_bytes"] for d in dbs if d != big_db)
        extra = rows[label[big_db]]["peak_allocated_bytes"] - peaks[len(peaks) // 2]
        self.assertAlmostEqual(extra, 64 << 20, delta=0.05 * (64 << 20))
        # The first screen is the job's; each process's own report only with --each.
        text = self.cli("report", *dbs).out.decode()
        self.assertTrue(text.startswith("Summary (all processes)\n"), text[:200])
        if named:
            self.assertRegex(text.split("\n\n")[0], rf"Straggler +{label[slow_db]}: p50"
                                                    r" [0-9.]+ms, [0-9.]+x the median process's")
        self.assertNotIn("Run 1 of 8", text)
        each = self.cli("report", "--each", *dbs).out.decode()
        self.assertIn("Run 1 of 8", each)
        self.assertLess(len(text.splitlines()), len(each.splitlines()) / 3)
        if not named:
            return
        mine = rows[label[slow_db]]
        # The mark is inside the program's timer. Where the programs' own times were steady, the
        # p50 is held to 5% (and the ratio to 10%). On a machine loaded by other work the two
        # medians are over different iterations (ours leaves out the warm-up it detects and the
        # captured ones, the program its first 5) of a spread sample (CI once: ours 14.26 ms
        # against its own 12.68): ours is then held to the program's own p10-p90.
        p10, p90 = spread[slow_db]
        self.assertGreater(mine["latency_p50_ns"], 0.95 * p10 - 300_000, (mine, p10, p90))
        self.assertLess(mine["latency_p50_ns"], 1.05 * p90 + 300_000, (mine, p10, p90))
        others = sorted(own[d] for d in dbs if d != slow_db)
        own_ratio = own[slow_db] / others[len(others) // 2]
        if all(steady.values()):
            self.assertAlmostEqual(mine["latency_p50_ns"], own[slow_db],
                                   delta=0.05 * own[slow_db] + 300_000)
            self.assertAlmostEqual(job["straggler_ratio"], own_ratio, delta=0.1 * own_ratio,
                                   msg=job)
        else:
            print(f"a loaded machine: p50 ours {mine['latency_p50_ns']} vs its own"
                  f" {own[slow_db]}, ratio {job['straggler_ratio']:.2f} vs {own_ratio:.2f}")
        self.assertEqual(mine["stands_out"], "slowest")


if __name__ == "__main__":
    main()
