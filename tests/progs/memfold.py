"""memfold.py: a Python program whose allocations are the same run after run, for
tests/torch/test_memory_fold.py: three unmarked loops (each forward an iteration by the module
hooks) in two phases and a third that enters autocast inside its forward (the thread's phase
changes mid-iteration), one whose forward makes a large temporary every 13th call, and outputs
kept every 20th iteration (the level rises between iterations). Prints the number of forwards.
usage: memfold.py [N] [DEVICE] [scope]   (N forwards a loop, 60; DEVICE cpu or cuda:
tests/gpu/run.sh; scope: each forward inside a record_function scope "iteration", an iteration
mark of its own, as a program that marks its loop)"""
import contextlib
import sys

import torch

torch.set_num_threads(1)


class Spiky(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)
        self.n = 0

    def forward(self, x):
        self.n += 1
        y = self.lin(x).relu()
        if self.n % 13 == 0:
            y = y + torch.zeros(4096, 32, device=y.device)[: y.shape[0]]
        return y


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)

    def forward(self, x):
        y = self.lin(x)
        with torch.autocast(DEV, dtype=torch.bfloat16):
            z = self.lin(y)
        return z.float().relu()


n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
DEV = sys.argv[2] if len(sys.argv) > 2 else "cpu"
SCOPE = len(sys.argv) > 3 and sys.argv[3] == "scope"


def mark():
    return (torch.autograd.profiler.record_function("iteration") if SCOPE
            else contextlib.nullcontext())


m1 = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32))
m1, m2, m3 = m1.eval().to(DEV), Spiky().eval().to(DEV), Mixed().eval().to(DEV)
x = torch.randn(8, 32, device=DEV)
keep = []
with torch.no_grad():
    for i in range(n):
        with mark():
            m1(x)
with torch.inference_mode():
    for i in range(n):
        with mark():
            out = m2(x)
        if i % 20 == 0:
            keep.append(out)
with torch.no_grad():
    for i in range(n):
        with mark():
            m3(x)
if DEV == "cuda":
    torch.cuda.synchronize()
print(3 * n)
