# fp32 vs int8 MLP, one after another (or alternating), while busy loops load the
# machine during a chosen stretch of iterations (global forward counter).
# usage: int8_load.py ORDER N HIDDEN LOAD_START LOAD_STOP NBUSY
# (a fresh-eyes check's program, 2026-11-30; README.md)
import os, sys, time, statistics, subprocess, torch, torch.nn as nn
torch.manual_seed(0)
ORDER, N, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
LS, LE, NB = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])


def mlp():
    return nn.Sequential(nn.Linear(H, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(),
                         nn.Linear(H, H)).eval()


fp32 = mlp()
int8 = torch.quantization.quantize_dynamic(mlp(), {nn.Linear}, dtype=torch.qint8)
x = torch.randn(32, H)
t = {"fp32": [], "int8": []}
busy, k = [], 0
env = {k2: v for k2, v in os.environ.items()
       if k2 not in ("LD_PRELOAD", "PYTHONPATH") and not k2.startswith("INFPROF")}


def step(name, m):
    global k, busy
    if k == LS:
        busy = [subprocess.Popen(["/usr/bin/python3", "-c", "while 1: pass"], env=env)
                for _ in range(NB)]
    if k == LE:
        for p in busy:
            p.kill()
            p.wait()
        busy = []
    k += 1
    t0 = time.perf_counter()
    m(x)
    t[name].append(time.perf_counter() - t0)


with torch.no_grad():
    if ORDER == "seq":
        for _ in range(N):
            step("fp32", fp32)
        for _ in range(N):
            step("int8", int8)
    else:
        for _ in range(N):
            step("fp32", fp32)
            step("int8", int8)
for p in busy:
    p.kill()
    p.wait()
for kk, v in t.items():
    s = v[5:]
    h = len(s) // 2
    print(f"OWN {kk}: p50 {statistics.median(s)*1e3:.3f} ms  1st half"
          f" {statistics.median(s[:h])*1e3:.3f}  2nd half {statistics.median(s[h:])*1e3:.3f}"
          f"  n={len(s)}")
print(f"OWN ratio fp32/int8 p50:"
      f" {statistics.median(t['fp32'][5:])/statistics.median(t['int8'][5:]):.2f}x")
