"""operators_cost.py: what recording PyTorch operators costs (issue "Operators by default";
docs/performance.md). A tiny-op eager MLP at batch 1 (about 100 operator calls a forward), 3000
forwards under inference_mode, run alternately: plain; under infprof's defaults; with every
operator recorded (INFPROF_OPERATORS=1); under torch.profiler (CPU activity). Prints each
configuration's median forward, what it adds, and per operator call (the calls a forward makes,
counted from the exact run's database). A benchmark: figures, no assertion.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/operators_cost.py [ROUNDS]"""
import os
import sqlite3
import sys
import tempfile

from alternate import report, run_alternately

PROG = r"""
import sys, time, torch
torch.set_num_threads(1)
layers = []
for _ in range(24):
    layers += [torch.nn.Linear(32, 32), torch.nn.ReLU()]
m = torch.nn.Sequential(*layers).eval()
x = torch.randn(1, 32)
prof = None
if sys.argv[1] == "torch.profiler":
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    prof.__enter__()
t = []
with torch.inference_mode():
    for _ in range(3000):
        t0 = time.perf_counter_ns()
        m(x)
        t.append(time.perf_counter_ns() - t0)
if prof:
    prof.__exit__(None, None, None)
t.sort()
print(t[len(t) // 2])
"""


def main():
    build = os.environ.get("INFPROF_BUILD", "build")
    lib = os.path.join(build, "lib", "libinfprof.so")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="infprof-ops-cost-")
    configs = {"plain": {}, "defaults": {"LD_PRELOAD": lib},
               "operators": {"LD_PRELOAD": lib, "INFPROF_OPERATORS": "1"},
               "torch.profiler": {}}
    got = run_alternately(configs, lambda name: ["/usr/bin/python3", "-c", PROG, name], rounds,
                          tmp)
    db = sqlite3.connect(os.path.join(tmp, "operators0.db"))
    calls = db.execute("SELECT count(*) FROM torch_operators").fetchone()[0] / 3000
    print(f"operator calls a forward: {calls:.0f}")
    report("forward", got, per=calls)


if __name__ == "__main__":
    main()
