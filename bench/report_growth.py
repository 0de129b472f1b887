"""report_growth.py: how `infprof report` grows with the length of a run (issue 49, "reports
that do not grow with the run"). From one recorded database, copies of other lengths, then the
report's wall time and peak memory on each, text and JSON, the least of ROUNDS alternating
runs. Prints seconds, the ratio to the first copy and MB; asserts nothing.

  cut (the default): copies that end at 40, 60, 80 and 100% of the run (every row timed after
      the cut removed, as if the program had stopped there; the writer's end-of-run summaries
      kept as they are, its operator sums made again from the calls kept);
  repeat: the run 1, 2, 5 and 10 times over, each copy of its rows shifted by the run's length
      (ids of iterations, correlations, external ids and NVTX ranges shifted past the last,
      cumulative counters carried on), the writer's summaries scaled to match: the issue's "a
      run 10 times as long".

usage: INFPROF_BUILD=build /usr/bin/python3 bench/report_growth.py DB [ROUNDS] [cut|repeat]"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

TIME_COLUMNS = ("start", "ts", "t")
FRACTIONS = (0.4, 0.6, 0.8, 1.0)
TIMES = (1, 2, 5, 10)


def tables(con):
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def columns(con, table):
    return [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]


def resum(con):
    """The writer's operator sums (collectors/torch_opsum.c) made again from the calls."""
    if "torch_operator_sums" not in tables(con):
        return
    con.execute("DELETE FROM torch_operator_sums")
    con.execute("INSERT INTO torch_operator_sums SELECT phase, name_id, iter, count(*), sum(self),"
                " sum(dur) FROM torch_operators GROUP BY phase, name_id, iter")
    con.execute("UPDATE meta SET value = (SELECT count(*) FROM torch_operators)"
                " WHERE key = 'torch_operator_sums'")


def cut_copy(src, dst, fraction):
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    end = con.execute("SELECT max(coalesce(end, start)) FROM phase_spans").fetchone()[0] or 0
    cut = int(end * fraction)
    if fraction < 1:
        for table in tables(con):
            col = next((c for c in TIME_COLUMNS if c in columns(con, table)), None)
            if col:
                con.execute(f'DELETE FROM "{table}" WHERE "{col}" > ?', (cut,))
        con.execute("DELETE FROM iteration_cpu WHERE id NOT IN (SELECT id FROM iterations)")
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('duration_ns', ?)", (cut,))
        resum(con)
        con.commit()
        con.execute("VACUUM")
    con.close()
    return cut


# Tables repeated, with what each column becomes in the k-th copy: "t" shifted by k runs,
# "iter"/"corr"/"ext"/"nvtx"/"win" shifted past the last id of that kind (0 and NULL kept: none),
# "cum" a cumulative counter carried on. Columns not named are copied as they are.
REPEAT = {
    "phase_spans": {"start": "t", "end": "t"},
    "iterations": {"id": "iter", "start": "t", "gpu_end": "t", "nvtx": "nvtx"},
    "iteration_cpu": {"id": "iter"},
    "kernel_rows": {"start": "t", "corr": "corr", "iter": "iter", "nvtx": "nvtx"},
    "memcpy": {"start": "t", "corr": "corr"},
    "memset": {"start": "t", "corr": "corr"},
    "memory_segments": {"ts": "t", "corr": "corr"},
    "memory_pools": {"ts": "t", "corr": "corr"},
    "sync": {"start": "t", "corr": "corr"},
    "cuda_api": {"corr": "corr", "start": "t", "nvtx": "nvtx"},
    "external_corr": {"corr": "corr", "ext_id": "ext"},
    "graph_launches": {"start": "t", "corr": "corr"},
    "tensor_memory": {"ts": "t"},
    "torch_operators": {"start": "t", "iter": "iter"},
    "torch_operator_windows": {"start": "t", "iter": "iter"},
    "input_waits": {"start": "t"},
    "gc_pauses": {"start": "t"},
    "nvtx_ranges": {"id": "nvtx", "start": "t", "end": "t", "parent": "nvtx"},
    "cudnn_calls": {"start": "t", "ext_id": "ext"},
    "energy_samples": {"t": "t", "energy_mj": "cum"},
    "cpu_samples": {"t": "t", "cpu_ns": "cum", "sys_ns": "cum", "ours_ns": "cum"},
}
# The writer's summaries: columns that are sums over the run, multiplied.
SCALE = {
    "kernel_summary": ("count", "total"),
    "api_summary": ("count", "total", "errors", "launches", "latency_total"),
    "phase_gpu": ("busy_ns", "work"),
    "operator_kernels": ("kernels", "ns"),
}


def repeat_copy(src, dst, times):
    shutil.copy(src, dst)
    if times == 1:
        return
    con = sqlite3.connect(dst)
    have = tables(con)

    def top(sql):
        return (con.execute(sql).fetchone()[0] or 0) + 1

    run = int(con.execute("SELECT value FROM meta WHERE key = 'duration_ns'").fetchone()[0])
    shift = {
        "iter": top("SELECT max(id) FROM iterations"),
        "corr": max(top(f"SELECT max(corr) FROM {t}") for t in
                    ("kernel_rows", "cuda_api", "external_corr", "memcpy", "memset") if t in have),
        "ext": max(top(f"SELECT max(ext_id) FROM {t}") for t in ("external_corr", "cudnn_calls")
                   if t in have),
        "nvtx": top("SELECT max(id) FROM nvtx_ranges") if "nvtx_ranges" in have else 0,
    }
    for table, change in REPEAT.items():
        if table not in have:
            continue
        cols = columns(con, table)
        last = con.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0]
        if last is None:
            continue
        span = {c: con.execute(f'SELECT max("{c}") - min("{c}") FROM "{table}"').fetchone()[0] or 0
                for c in cols if change.get(c) == "cum"}
        for k in range(1, times):
            exprs = []
            for c in cols:
                kind = change.get(c)
                if kind == "t":
                    exprs.append(f'"{c}" + {k * run}')
                elif kind == "cum":
                    exprs.append(f'"{c}" + {k * (span[c] + 1)}')
                elif kind:
                    exprs.append(f'CASE WHEN "{c}" > 0 THEN "{c}" + {k * shift[kind]} ELSE "{c}"'
                                 ' END')
                else:
                    exprs.append(f'"{c}"')
            names = ", ".join(f'"{c}"' for c in cols)
            con.execute(f'INSERT INTO "{table}" ({names}) SELECT {", ".join(exprs)} FROM'
                        f' "{table}" WHERE rowid <= ?', (last,))
    for table, cols in SCALE.items():
        if table in have:
            con.execute(f'UPDATE "{table}" SET ' + ", ".join(f'"{c}" = "{c}" * {times}'
                                                           for c in cols))
    if "kernel_time" in have:  # its buckets again, the width doubled until the run fits
        width = int(con.execute("SELECT value FROM meta WHERE key = 'kernel_time.width_ns'")
                    .fetchone()[0])
        while run * times > width * 16384:
            width *= 2
        con.execute("DELETE FROM kernel_time")
        con.execute("INSERT INTO kernel_time SELECT start / ?, sum(dur) FROM kernel_rows"
                    " WHERE start >= 0 GROUP BY 1", (width,))
        con.execute("UPDATE meta SET value = ? WHERE key = 'kernel_time.width_ns'", (width,))
    con.execute("UPDATE meta SET value = ? WHERE key = 'duration_ns'", (run * times,))
    resum(con)
    con.commit()
    con.close()


def rows_of(path):
    con = sqlite3.connect(path)
    have = tables(con)
    n = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("kernel_rows", "tensor_memory", "torch_operators", "cudnn_calls") if t in have)
    con.close()
    return n


def timed(argv):
    """Wall seconds and the report's peak RSS in MB."""
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    dt = time.monotonic() - t0
    if p.returncode:
        sys.exit(f"{' '.join(argv)} failed ({p.returncode})")
    return dt, usage.ru_maxrss / 1024


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    mode = sys.argv[3] if len(sys.argv) > 3 else "cut"
    if mode not in ("cut", "repeat"):
        sys.exit(__doc__)
    cli = os.path.join(os.environ.get("INFPROF_BUILD", "build"), "bin", "infprof")
    tmp = tempfile.mkdtemp(prefix="infprof-growth-")
    try:
        copies = []
        for f in (FRACTIONS if mode == "cut" else TIMES):
            dst = os.path.join(tmp, f"{mode}{f}.db")
            if mode == "cut":
                length = cut_copy(src, dst, f)
                label = f"{int(f * 100):3d}% of the run"
            else:
                repeat_copy(src, dst, f)
                con = sqlite3.connect(dst)
                length = int(con.execute("SELECT value FROM meta WHERE key = 'duration_ns'")
                             .fetchone()[0])
                con.close()
                label = f"{f:3d}x the run"
            copies.append((f, dst, length, label))
        best, rss = {}, {}
        for _ in range(rounds):
            for f, dst, _length, _label in copies:
                for fmt in ("text", "json"):
                    dt, mb = timed([cli, "report", "--format", fmt, dst])
                    best[(f, fmt)] = min(best.get((f, fmt), dt), dt)
                    rss[f] = max(rss.get(f, 0), mb)
        first = copies[0][0]
        print(f"{os.path.basename(src)}: report wall time, least of {rounds} alternating runs")
        for f, dst, length, label in copies:
            size = os.path.getsize(dst) / 1e6
            line = "  ".join(f"{fmt} {best[(f, fmt)]:.2f} s ({best[(f, fmt)] / best[(first, fmt)]:.1f}x)"
                             for fmt in ("text", "json"))
            print(f"  {label} ({length / 1e9:6.1f} s, {size:6.1f} MB, {rows_of(dst) / 1e6:5.2f} M"
                  f" rows): {line}; peak RSS {rss[f]:.0f} MB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
