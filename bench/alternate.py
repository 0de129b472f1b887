"""alternate.py: what the Python benchmarks share (window_cost.py, operators_cost.py,
mlp_cost.py): run a program under several configurations in turn, round after round (a machine's
drift falls on all of them alike), each printing one number; print each configuration's median
against the first's; and the timed MLP two of them run."""
import os
import statistics
import subprocess


def run_alternately(configs, argv_of, rounds, tmp, prefix=""):
    """configs: name -> extra environment; argv_of(name): the command. Returns name -> the
    numbers each run printed. INFPROF_* and LD_PRELOAD come from the configuration only; each
    run writes its own database under tmp."""
    got = {k: [] for k in configs}
    for r in range(rounds):
        for name, extra in configs.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
                   and k != "LD_PRELOAD"}
            env.update(extra, INFPROF_OUTPUT=os.path.join(tmp, f"{prefix}{name}{r}.db"))
            out = subprocess.run(argv_of(name), env=env, capture_output=True, check=True).stdout
            got[name].append(float(out))
    return got


def mlp_program(layers, width, grad="no_grad", keep_from=0):
    """The timed MLP the benchmarks run (mlp_cost.py, operators_cost.py): `layers` Linear(width)
    + ReLU pairs at batch 1 under torch.<grad>(), argv: CONFIG N; CONFIG torch.profiler wraps it
    in torch.profiler (CPU). Prints the mean forward in ns, the first N * keep_from left out."""
    return f"""
import sys, time, torch
torch.set_num_threads(1)
layers = []
for _ in range({layers}):
    layers += [torch.nn.Linear({width}, {width}), torch.nn.ReLU()]
m = torch.nn.Sequential(*layers).eval()
x = torch.randn(1, {width})
n = int(sys.argv[2])
prof = None
if sys.argv[1] == "torch.profiler":
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    prof.__enter__()
t = []
with torch.{grad}():
    for _ in range(n):
        t0 = time.perf_counter_ns()
        m(x)
        t.append(time.perf_counter_ns() - t0)
if prof:
    prof.__exit__(None, None, None)
t = t[int(n * {keep_from}):]
print(sum(t) / len(t))
"""


def report(what, got, per=None):
    """Each configuration's median in us against the first's; per: also ns per that many."""
    base = statistics.median(next(iter(got.values())))
    for name, v in got.items():
        med = statistics.median(v)
        extra = f", {(med - base) / per:.0f} ns a call" if per else ""
        print(f"{what}: {name:17s} median {med / 1000:.1f} us ({(med / base - 1) * 100:+.1f}%"
              f"{extra})  runs: {', '.join(f'{x / 1000:.1f}' for x in v)}")
