"""rank_prog.py SLOW_MS EXTRA_MIB: one rank of a job: a small MLP, 40 forwards under
inference_mode, each marked record_function("iteration"); SLOW_MS of host work (a busy loop)
inside each forward's mark, EXTRA_MIB of tensor held through the loop. Prints the program's own
p50 of its forwards (perf_counter around the mark, the first 5 left out) as "own p50 NS", after
"own p10 p90 NS NS" (how steady the machine let them be)."""
import sys
import time

import torch

torch.set_num_threads(1)
slow, extra = float(sys.argv[1]), int(sys.argv[2])
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 256)).eval()
held = torch.empty(extra * 1024 * 1024 // 4) if extra else None
x = torch.randn(16, 256)
own = []
with torch.inference_mode():
    for _ in range(40):
        t0 = time.perf_counter_ns()
        with torch.autograd.profiler.record_function("iteration"):
            end = time.perf_counter() + slow / 1000
            while time.perf_counter() < end:
                pass
            model(x)
        own.append(time.perf_counter_ns() - t0)
own = sorted(own[5:])
print("own p10 p90", own[len(own) // 10], own[len(own) * 9 // 10], flush=True)
print("own p50", own[len(own) // 2], flush=True)
