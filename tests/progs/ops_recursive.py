"""Operators nested deeper than infprof's 64-deep operator stack: a custom operator
(torch.library, Python implementation) that calls itself through the dispatcher N levels deep,
so every level is a RecordFunction operator scope around the next. Prints its result and exits
0. Usage: ops_recursive.py [DEPTH] [REPEATS]"""
import sys

import torch

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 80
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

lib = torch.library.Library("infprof_test", "DEF")
lib.define("rec(Tensor x, int n) -> Tensor")


def rec(x, n):
    if n <= 0:
        return x + 1
    return torch.ops.infprof_test.rec(x, n - 1) * 1


lib.impl("rec", rec, "CPU")
x = torch.ones(4)
with torch.inference_mode():
    for _ in range(REPEATS):
        y = torch.ops.infprof_test.rec(x, DEPTH)
print("result", float(y[0]))
