"""Inference loop with known injected causes of slow iterations.

usage: prog.py MODE [N] [OUT.json]
  a: every 10th input is a 4x larger batch (32 instead of 8)
  b: gc.collect() in a forward pre-hook every 50th forward, ~50k dicts (~150k objects) Python objects alive
  c: time.sleep(0.005) between forwards every 20th iteration (outside the forward)
  d: two background threads burn CPU (hashlib, GIL released) 200 ms of every 1000 ms
  p: one background Python thread busy-loops (holds the GIL) 200 ms of every 1000 ms
  e: control, nothing injected
"""
import gc
import hashlib
import json
import sys
import threading
import time

import torch

mode = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
out = sys.argv[3] if len(sys.argv) > 3 else f"truth_{mode}.json"

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 10),
).eval()

small = torch.randn(8, 256)
big = torch.randn(32, 256)

# ---- b: many Python objects alive + gc.collect in a forward pre-hook
junk = None
gc_times = {}
cur_iter = [0]
if mode == "b":
    junk = [{"k": i, "v": [i, str(i)]} for i in range(50_000)]

    def pre_hook(mod, inp):
        if cur_iter[0] % 50 == 49:
            t = time.perf_counter_ns()
            gc.collect()
            gc_times[cur_iter[0]] = time.perf_counter_ns() - t
    model.register_forward_pre_hook(pre_hook)

# ---- d / p: background CPU burners
bursts = []
stop = threading.Event()


def burner_hash(record):
    buf = b"x" * (1 << 20)
    while not stop.is_set():
        t0 = time.perf_counter_ns()
        while time.perf_counter_ns() - t0 < 200_000_000:
            hashlib.sha256(buf).digest()
        t1 = time.perf_counter_ns()
        if record:
            bursts.append((t0, t1))
        stop.wait(0.8)


def burner_py():
    while not stop.is_set():
        t0 = time.perf_counter_ns()
        x = 0
        while time.perf_counter_ns() - t0 < 200_000_000:
            for _ in range(1000):
                x += 1
        t1 = time.perf_counter_ns()
        bursts.append((t0, t1))
        stop.wait(0.8)


threads = []
if mode == "d":
    threads = [threading.Thread(target=burner_hash, args=(i == 0,), daemon=True) for i in range(2)]
elif mode == "p":
    threads = [threading.Thread(target=burner_py, daemon=True)]

rows = []
loop_t0 = time.perf_counter_ns()
with torch.no_grad():
    for t in threads:
        t.start()
    for i in range(N):
        cur_iter[0] = i
        cause = None
        x = small
        if mode == "a" and i % 10 == 9:
            x = big
            cause = "big_input_4x"
        if mode == "b" and i % 50 == 49:
            cause = "gc_collect_in_pre_hook"
        t0 = time.perf_counter_ns()
        y = model(x)
        t1 = time.perf_counter_ns()
        sleep_after = 0
        if mode == "c" and i % 20 == 19:
            s0 = time.perf_counter_ns()
            time.sleep(0.005)
            sleep_after = time.perf_counter_ns() - s0
        rows.append({"i": i, "start_ns": t0 - loop_t0, "fwd_ns": t1 - t0,
                     "batch": x.shape[0], "cause": cause, "sleep_after_ns": sleep_after,
                     "gc_ns": gc_times.get(i, 0)})
loop_t1 = time.perf_counter_ns()
stop.set()
for t in threads:
    t.join()

# iterations overlapping a burst
for r in rows:
    a = loop_t0 + r["start_ns"]
    b = a + r["fwd_ns"]
    ov = sum(max(0, min(b, e) - max(a, s)) for s, e in bursts)
    r["burst_overlap_ns"] = ov
    if ov > 0 and r["cause"] is None:
        r["cause"] = "cpu_burst_contention" if mode == "d" else "gil_busy_thread"


def pct(v, p):
    v = sorted(v)
    k = max(0, -(-len(v) * p // 100) - 1)  # nearest rank
    return v[int(k)]


def stats(v):
    if not v:
        return None
    return {"n": len(v), "p50_ms": pct(v, 50) / 1e6, "p95_ms": pct(v, 95) / 1e6,
            "p99_ms": pct(v, 99) / 1e6, "mean_ms": sum(v) / len(v) / 1e6,
            "max_ms": max(v) / 1e6}


fw = [r["fwd_ns"] for r in rows]
res = {
    "mode": mode, "N": N, "loop_wall_s": (loop_t1 - loop_t0) / 1e9,
    "sum_fwd_s": sum(fw) / 1e9,
    "all": stats(fw),
    "after_first_20": stats(fw[20:]),
    "clean_iters": stats([r["fwd_ns"] for r in rows if r["cause"] is None]),
    "injected_iters": stats([r["fwd_ns"] for r in rows if r["cause"] is not None]),
    "n_injected": sum(1 for r in rows if r["cause"] is not None),
    "injected_indices_first": [r["i"] for r in rows if r["cause"] is not None][:30],
    "by_batch": {str(b): stats([r["fwd_ns"] for r in rows if r["batch"] == b]) for b in sorted({r["batch"] for r in rows})},
    "bursts": [((s - loop_t0) / 1e9, (e - loop_t0) / 1e9) for s, e in bursts],
    "gc_ms": {k: v / 1e6 for k, v in gc_times.items()},
    "sleep_total_s": sum(r["sleep_after_ns"] for r in rows) / 1e9,
    "rows": rows,
}
with open(out, "w") as f:
    json.dump(res, f)
summ = {k: v for k, v in res.items() if k not in ("rows", "bursts", "gc_ms")}
print(json.dumps(summ, indent=1))
