"""tail_prog.py KIND: 50 iterations of a small CNN under inference_mode, each marked
record_function("iteration"), every 10th (#9, #19, ...) slow for a known reason:
  gc      gc.collect() with 400k objects alive
  python  pure-Python work before the forward
  tensor  a 64 MiB temporary tensor made and filled
  shape   the input at 128x128 instead of 64x64
  sleep   a 20 ms sleep after the iteration, outside the mark (no slow iteration)
Prints the program's own time of each iteration (perf_counter around the marked block), in ns."""
import gc, sys, time, torch, torch.nn as nn
torch.set_num_threads(1)
torch.manual_seed(0)
what = sys.argv[1]
m = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1),
                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).eval()
junk = [[i] for i in range(400000)] if what == "gc" else None
x = torch.randn(4, 3, 64, 64)
own = []
with torch.inference_mode():
    for i in range(50):
        slow = i % 10 == 9
        t0 = time.perf_counter_ns()
        with torch.autograd.profiler.record_function("iteration"):
            if slow and what == "gc":
                gc.collect()
            if slow and what == "python":
                s = 0
                for k in range(300000):
                    s += k * k
            if slow and what == "tensor":
                tmp = torch.empty(64 * 1024 * 1024 // 4).normal_()
                del tmp
            xi = torch.randn(4, 3, 128, 128) if (slow and what == "shape") else x
            y = m(xi)
        own.append(time.perf_counter_ns() - t0)
        if slow and what == "sleep":
            time.sleep(0.02)
print(" ".join(str(v) for v in own))
