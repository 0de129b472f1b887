"""every_nth.py N NOISE ITERS L: the program behind every5th- and
every10th-longer-noisy-nohooks.db (a fresh-eyes check's, 2026-11-30): an eval MLP of 4 blocks
(256 -> 512 -> 256) and a head, under no_grad, on (1, 16, 256) inputs but every Nth on
(1, L, 256), each result read back by argmax().tolist(); with NOISE, its second block spins 0-50
ms more at random (a loaded machine). Prints each forward's time by its own clock (OWN_TS_MS,
ms)."""
import json
import random
import statistics as st
import sys
import time

import torch


class MLP(torch.nn.Module):
    def __init__(s, d=256, h=512, n=4):
        super().__init__()
        s.blocks = torch.nn.Sequential(*[torch.nn.Sequential(
            torch.nn.Linear(d, h), torch.nn.ReLU(), torch.nn.Linear(h, d)) for _ in range(n)])
        s.head = torch.nn.Linear(d, 10)

    def forward(s, x):
        return s.head(s.blocks(x))


def summarize(ts, larger_idx=None, label=""):
    s = sorted(ts)
    n = len(s)
    print(f"OWN {label} n={n} p50={s[n // 2] / 1e6:.2f}ms mean={sum(ts) / n / 1e6:.2f}ms")
    if larger_idx:
        big = [ts[i] for i in larger_idx]
        print(f"OWN larger n={len(big)} median={st.median(big) / 1e6:.2f}ms")
    print("OWN_TS_MS", json.dumps([round(t / 1e6, 2) for t in ts]))


N, NOISE, ITERS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
L = int(sys.argv[4]) if len(sys.argv) > 4 else 32
torch.set_num_threads(1)
torch.manual_seed(0)
random.seed(1)
m = MLP().eval()
if NOISE:
    def spin(mod, inp, out):  # a loaded machine: 0-50 ms of random extra work inside the forward
        end = time.perf_counter() + random.uniform(0, NOISE / 1000 if NOISE > 1 else 0.05)
        while time.perf_counter() < end:
            pass

    m.blocks[1].register_forward_hook(spin)
ts, larger = [], []
with torch.no_grad():
    for i in range(ITERS):
        n = L if i % N == N - 1 else 16
        if n == L:
            larger.append(i)
        x = torch.randn(1, n, 256)
        t = time.perf_counter_ns()
        y = m(x)
        ts.append(time.perf_counter_ns() - t)
        _ = y.argmax(-1).tolist()
summarize(ts, larger, f"N={N} noise={NOISE} L={L}")
print("larger idx", larger)
