"""report_growth.py: how `infprof report` grows with the length of a run (issue 49, "reports
that do not grow with the run"). From one recorded database, copies that end at a fraction of
its run (40, 60, 80 and 100%) (every row timed after the cut removed, as if the program had stopped there; the writer's
end-of-run summaries kept as they are), then the report's wall time on each, text and JSON,
minimum of ROUNDS alternating runs. Prints seconds and the ratio to the shortest copy; asserts
nothing.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/report_growth.py DB [ROUNDS]"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

TIME_COLUMNS = ("start", "ts", "t")
FRACTIONS = (0.4, 0.6, 0.8, 1.0)


def cut_copy(src, dst, fraction):
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    end = con.execute("SELECT max(coalesce(end, start)) FROM phase_spans").fetchone()[0] or 0
    cut = int(end * fraction)
    if fraction < 1:
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")\
                .fetchall():
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
            col = next((c for c in TIME_COLUMNS if c in cols), None)
            if col:
                con.execute(f'DELETE FROM "{table}" WHERE "{col}" > ?', (cut,))
        con.execute("DELETE FROM iteration_cpu WHERE id NOT IN (SELECT id FROM iterations)")
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('duration_ns', ?)", (cut,))
        con.commit()
        con.execute("VACUUM")
    con.close()
    return cut


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cli = os.path.join(os.environ.get("INFPROF_BUILD", "build"), "bin", "infprof")
    tmp = tempfile.mkdtemp(prefix="infprof-growth-")
    try:
        copies = []
        for f in FRACTIONS:
            dst = os.path.join(tmp, f"cut{int(f * 100)}.db")
            cut = cut_copy(src, dst, f)
            copies.append((f, dst, cut))
        best = {}
        for _ in range(rounds):
            for f, dst, _cut in copies:
                for fmt in ("text", "json"):
                    t0 = time.monotonic()
                    subprocess.run([cli, "report", "--format", fmt, dst], check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    dt = time.monotonic() - t0
                    best[(f, fmt)] = min(best.get((f, fmt), dt), dt)
        print(f"{os.path.basename(src)}: report wall time, minimum of {rounds} alternating runs")
        for f, dst, cut in copies:
            size = os.path.getsize(dst) / 1e6
            con = sqlite3.connect(dst)
            rows = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                       for t in ("kernel_rows", "tensor_memory", "torch_operators", "cudnn_calls")
                       if con.execute("SELECT 1 FROM sqlite_master WHERE name = ?",
                                      (t,)).fetchone())
            con.close()
            line = "  ".join(f"{fmt} {best[(f, fmt)]:.2f} s ({best[(f, fmt)] / best[(FRACTIONS[0], fmt)]:.1f}x)"
                             for fmt in ("text", "json"))
            print(f"  {int(f * 100):3d}% of the run ({cut / 1e9:5.1f} s, {size:5.1f} MB,"
                  f" {rows / 1e6:.2f} M rows): {line}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
