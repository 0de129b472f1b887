#!/usr/bin/env python3
"""What infprof costs a program, measured in one sitting against the floor (docs/performance.md).

The same workload runs plain, under the floor tracer (bench/floor_tracer.c: CUPTI kernel records
only, nothing else), under infprof with its defaults and under infprof with one switch changed
at a time, alternating (each repetition in a rotated order, so drift hits every variant alike),
REPS times each. Prints one Markdown table: the median figure of each variant, its ratio to
plain, the time it adds, that added time as a multiple of the floor's (the goal: at most 1.2),
and what the variant's runs dropped or left unattributed (a cheaper variant that loses work is
no answer). Figures are printed, never asserted. Needs a GPU.

    bench/overhead.py launch                      ns per launch of an empty kernel
    bench/overhead.py script MODEL.pt BATCH       p50 ms of a TorchScript forward + synchronize
                                                  (infprof-sample-script, inference_mode)
    bench/overhead.py python BATCH                ms per eager ResNet-50 forward, bf16 autocast
                                                  (samples/py_infer.py), with torch.profiler too
options: --reps N (5), --build DIR (build), --variants a,b,... (all), --iters N (50),
         --cpus LIST (0-7: every variant pinned alike, taskset)
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# Variants: name -> environment. "lib" and "floor" are filled in with paths.
SWITCHES = [
    ("API records", {"INFPROF_CUDA_API": "1"}),
    ("cuDNN NVTX", {"INFPROF_CUDNN_NVTX": "1"}),
    ("no callbacks", {"INFPROF_CUPTI_CALLBACKS": "0"}),
    ("records", {"INFPROF_ATTRIBUTION": "records"}),
    ("no polling", {"INFPROF_POLL": "0"}),
    ("no NVTX emit", {"INFPROF_NVTX_EMIT": "0"}),
    ("no cuDNN", {"INFPROF_CUDNN": "0"}),
    ("no NVTX capture", {"INFPROF_NVTX": "0"}),
    ("no libtorch", {"INFPROF_TORCH": "0"}),
    ("no CPU memory", {"INFPROF_CPU_MEMORY": "0"}),
    ("full", {"INFPROF_MODE": "full"}),
    ("CUPTI off", {"INFPROF_CUPTI": "0"}),
]


def variants(build):
    lib = os.path.join(build, "lib", "libinfprof.so")
    floor = os.path.join(build, "lib", "libinfprof-floor.so")
    v = [("plain", None), ("floor", {"CUDA_INJECTION64_PATH": floor}),
         ("infprof", {"LD_PRELOAD": lib})]
    for name, env in SWITCHES:
        v.append((f"infprof, {name}", dict(env, LD_PRELOAD=lib)))
    return v


def workload(args):
    """argv, a function from stdout to the figure, the unit."""
    b = args.build
    if args.what == "launch":
        argv = [os.path.join(b, "bin", "infprof-launch-bench"), "--child", "200", "256"]
        return argv, lambda out: float(re.search(r"ns_per_launch (\S+)", out).group(1)), "ns"
    if args.what == "script":
        argv = [os.path.join(b, "bin", "infprof-sample-script"), args.model, "--device", "cuda",
                "--batch", str(args.batch), "--iters", str(args.iters), "--modes",
                "inference_mode", "--precisions", "off"]
        return argv, ref_p50, "ms"
    if args.what == "python":
        argv = [sys.executable, os.path.join(ROOT, "samples", "py_infer.py"), "--device", "cuda",
                "--batch", str(args.batch), "--iters", str(args.iters), "--warmup", "5",
                "--modes", "inference_mode", "--precisions", "bf16"]
        return argv, ref_p50, "ms"
    sys.exit(f"overhead.py: unknown workload {args.what!r} (launch, script, python)")


def ref_p50(out):
    refs = [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ref {")]
    return statistics.median(r["p50_ms"] for r in refs)


def counts(db):
    """(events and records dropped, CUPTI records left unattributed) of a run, or (None, None)."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('dropped_events',"
                                " 'cupti_dropped_records', 'cupti_unattributed_records')"
                                ).fetchall())
        con.close()
        return (int(rows.get("dropped_events") or 0) + int(rows.get("cupti_dropped_records") or 0),
                int(rows.get("cupti_unattributed_records") or 0))
    except sqlite3.Error:
        return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what")
    ap.add_argument("model", nargs="?")
    ap.add_argument("batch", nargs="?", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--variants", default="")
    ap.add_argument("--cpus", default="0-7",
                    help="CPUs every variant runs on (taskset), so placement is alike; '' none")
    ap.add_argument("--torch-profiler", action="store_true",
                    help="(python) add a variant under torch.profiler")
    args = ap.parse_args()
    if args.what == "python":
        args.batch = int(args.model or 1)
    argv, figure, unit = workload(args)
    if args.cpus and shutil.which("taskset"):
        argv = ["taskset", "-c", args.cpus] + argv
    vs = variants(args.build)
    if args.what == "python" or args.torch_profiler:
        vs.insert(2, ("torch.profiler", {"PY_INFER_TORCH_PROFILER": "1"}))
    if args.variants:
        keep = args.variants.split(",")
        vs = [v for v in vs if v[0] in keep or v[0].split(", ")[-1] in keep]
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("INFPROF_") and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    got = {name: [] for name, _ in vs}
    drops = {name: 0 for name, _ in vs}
    loose = {name: 0 for name, _ in vs}
    tmp = tempfile.mkdtemp(prefix="infprof-overhead-")
    for rep in range(args.reps):
        order = vs[rep % len(vs):] + vs[:rep % len(vs)]
        for name, env in order:
            e = dict(base, **(env or {}))
            db = os.path.join(tmp, "run.db")
            if os.path.exists(db):
                os.unlink(db)
            e["INFPROF_OUTPUT"] = db
            p = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                sys.exit(f"overhead.py: {name} failed ({p.returncode}): {p.stderr[-2000:]}")
            got[name].append(figure(p.stdout))
            if env and "LD_PRELOAD" in env and os.path.exists(db):
                d, u = counts(db)
                drops[name] += d or 0
                loose[name] += u or 0
    plain = statistics.median(got["plain"])
    floor = statistics.median(got["floor"]) - plain if "floor" in got else None
    print(f"# {' '.join(os.path.basename(a) for a in argv if a != 'taskset')}")
    print(f"\n{args.reps} repetitions, alternating; figure: median {unit}\n")
    print(f"| variant | median ({unit}) | min - max | x plain | added ({unit}) |"
          " added / floor's | dropped | unattributed |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name, _ in vs:
        m = statistics.median(got[name])
        added = m - plain
        rel = f"{added / floor:.2f}" if floor and name not in ("plain", "floor") else "-"
        print(f"| {name} | {m:.4g} | {min(got[name]):.4g} - {max(got[name]):.4g} |"
              f" {m / plain:.3f} | {added:+.4g} | {rel} | {drops[name]} | {loose[name]} |")


if __name__ == "__main__":
    main()
