"""many_dbs.py: what `infprof report A.db B.db ...` costs at many processes (issue "Many
processes read as one"; docs/performance.md, docs/report.md). Makes N copies of one database,
each with its own pid (meta pid and the rows that carry it), and times `infprof report` over
them in text and JSON, with the report's peak resident memory (the child's ru_maxrss). A
benchmark: figures, no assertion.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/many_dbs.py DB [N ...]  (default 10 100 1000)"""
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time


def copies(src, n, tmp):
    paths = []
    for i in range(n):
        p = os.path.join(tmp, f"rank{i:04d}.db")
        if not os.path.exists(p):
            shutil.copy(src, p)
            con = sqlite3.connect(p)
            with con:
                con.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (100000 + i,))
            con.close()
        paths.append(p)
    return paths


def measure(cli, paths, fmt):
    """Seconds and peak RSS (MB) of one report in a fresh process (its ru_maxrss: the largest
    child so far, so each runs under its own python -c wrapper)."""
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter();"
               " subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True);"
               " print(time.perf_counter() - t,"
               " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", wrapper, cli, "report", "--format", fmt,
                          *paths], capture_output=True, check=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main():
    build = os.environ.get("INFPROF_BUILD", "build")
    cli = os.path.join(build, "bin", "infprof")
    src = sys.argv[1]
    ns = [int(x) for x in sys.argv[2:]] or [10, 100, 1000]
    tmp = tempfile.mkdtemp(prefix="infprof-many-")
    try:
        all_paths = copies(src, max(ns), tmp)
        size = os.path.getsize(src) / 1e6
        print(f"one database: {size:.2f} MB ({src})")
        for n in ns:
            for fmt in ("text", "json"):
                secs, mb = measure(cli, all_paths[:n], fmt)
                print(f"{n:5d} processes, {fmt:4s}: {secs:6.2f} s, peak RSS {mb:7.1f} MB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
