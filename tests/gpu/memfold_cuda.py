"""memfold_cuda.py: the allocator's reports folded per forward (INFPROF_MEMORY_FOLD, docs/
libtorch.md) against one row per report, on CUDA (tests/gpu/run.sh step 72). Runs
tests/progs/memfold.py on the GPU twice, folded and not, and compares every memory figure the
report gives: the memory section (each phase and device: peak allocated and reserved,
allocations, bytes, largest), each phase's and series' peaks, the operator at a peak; and that
every report and allocation is accounted for. Prints a Markdown table; exits 1 on a difference.
usage: BUILD=build-gpu python3 tests/gpu/memfold_cuda.py OUTDIR"""
import json
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build-gpu"))
PROG = os.path.join(ROOT, "tests", "progs", "memfold.py")
DEVICE = os.environ.get("MEMFOLD_DEVICE", "cuda")  # cpu: to try the script without a GPU


def run(fold, out):
    db = os.path.join(out, f"memfold-cuda-{fold}.db")
    if os.path.exists(db):
        os.remove(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")}
    env.update(LD_PRELOAD=os.path.join(BUILD, "lib", "libinfprof.so"), INFPROF_OUTPUT=db,
               INFPROF_MEMORY_FOLD=str(fold), INFPROF_OPERATORS_EVERY="4",
               INFPROF_OPERATORS_BUDGET="0")
    subprocess.run([sys.executable, PROG, "60", DEVICE], env=env, check=True,
                   capture_output=True)
    rep = json.loads(subprocess.run([os.path.join(BUILD, "bin", "infprof"), "report", "--format",
                                     "json", db], check=True, capture_output=True).stdout)
    con = sqlite3.connect(db)
    real = con.execute("SELECT count(*), coalesce(sum(bytes > 0), 0) FROM tensor_memory"
                       + (" WHERE fold IS NULL" if fold else "")).fetchone()
    folded = con.execute("SELECT coalesce(sum(reports), 0), coalesce(sum(allocs), 0)"
                         " FROM tensor_memory_folds").fetchone()
    con.close()
    peaks = lambda rows: [{k: v for k, v in r.items() if "peak" in k} for r in rows]
    return {"memory": rep["memory"], "phases": peaks(rep["phases"]),
            "series": peaks(rep["series"]), "operator_phases": peaks(rep["operator_phases"]),
            "accounts": (real[0] + folded[0], real[1] + folded[1]), "folded": folded[0]}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    a, b = run(0, out), run(1, out)
    print("## Allocator reports folded per forward, CUDA (tests/progs/memfold.py)\n")
    print("| figure | one row per report | folded | |")
    print("|---|---|---|---|")
    bad = 0
    for key in ("memory", "phases", "series", "operator_phases", "accounts"):
        same = a[key] == b[key]
        bad += not same
        show = lambda v: json.dumps(v)[:300].replace("|", "\\|")
        print(f"| {key} | {show(a[key])} | {show(b[key])} | {'ok' if same else 'DIFFERENT'} |")
    cuda = [m for m in a["memory"] if m.get("device", "").startswith("cuda")]
    print(f"\nreports folded: {b['folded']}; CUDA rows in the memory section: {len(cuda)}")
    if not cuda or not b["folded"]:
        print("FAILED: no CUDA allocator report, or nothing folded")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
