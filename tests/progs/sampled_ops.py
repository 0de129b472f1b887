"""sampled_ops.py: a Python inference loop for the sampled operator capture (tests/torch/
test_operators_sampled.py). An eager MLP of L Linear+ReLU layers whose forward also calls
torch.mul a number of times drawn per iteration (seeded: 0 to 8), so one operator's count varies
from one iteration to the next as real models' data-dependent paths do. Unmarked: each outermost
module call is an iteration. Prints one JSON line: the program's own counts (forwards, the
mul calls in all, the Linear layers a forward), its mean forward time and each forward's
(perf_counter_ns).

With GROW, the forward runs its layers twice from the middle iteration on (a model that changes
mid-run: the per-iteration figures are the whole run's, not its first part's).

usage: sampled_ops.py ITERATIONS [SEED] [GROW]"""
import json
import random
import sys
import time

import torch

torch.set_num_threads(1)
L = 6


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(*[m for _ in range(L)
                                          for m in (torch.nn.Linear(64, 64), torch.nn.ReLU())])
        self.extra = 0
        self.twice = False

    def forward(self, x):
        y = self.body(x)
        if self.twice:
            y = self.body(y)
        for _ in range(self.extra):
            y = torch.mul(y, 1.0)
        return y


def main():
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
    net = Net().eval()
    x = torch.randn(4, 64)
    grow = len(sys.argv) > 3 and sys.argv[3] == "GROW"
    muls, linears, times = 0, 0, []
    with torch.inference_mode():
        for i in range(n):
            net.twice = grow and i >= n // 2
            linears += L * (2 if net.twice else 1)
            net.extra = rng.randint(0, 8)
            muls += net.extra
            t0 = time.perf_counter_ns()
            net(x)
            times.append(time.perf_counter_ns() - t0)
    print(json.dumps({"iterations": n, "mul_calls": muls, "linear_layers": L,
                      "linear_calls": linears,
                      "forward_mean_ns": sum(times) / len(times), "forward_ns": times}))


if __name__ == "__main__":
    main()
