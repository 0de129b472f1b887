"""alternate.py: what the Python benchmarks share (window_cost.py, operators_cost.py,
mlp_cost.py): run a program under several configurations in turn, round after round (a machine's
drift falls on all of them alike), each printing one number; print each configuration's median
against the first's; and the timed MLP two of them run.

run_lockstep goes further: one process per configuration, all alive at once, taking turns a chunk
of forwards each (a few milliseconds), so that every configuration meets the machine in the same
state. This VM's speed moves by 5-30% between runs seconds apart; turns milliseconds apart
compare what separate runs cannot resolve (2026-11-29: separate runs spread the defaults' cost
over +2.8% to +9.3% between benches). A process keeps some luck of its own for its whole life
(its memory's layout: two plain processes in lockstep differ by up to 3%), so a bench runs
several sessions of new processes and takes the median of their medians."""
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


def run_lockstep(configs, argv_of, rounds, tmp, prefix=""):
    """configs: name -> extra environment; argv_of(name, rd, wr): the command of a program that
    reads one byte from fd rd for each turn, runs its chunk and writes its time in ns as a line to
    fd wr, and exits at end of file. Every configuration is started at once; each round gives
    each a turn, the order rotated round after round. Returns name -> the chunk times, one per
    round, in round order (so that rounds can be paired)."""
    procs = {}
    try:
        for name, extra in configs.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
                   and k != "LD_PRELOAD"}
            env.update(extra, INFPROF_OUTPUT=os.path.join(tmp, f"{prefix}{name}.db"))
            go_r, go_w = os.pipe()
            back_r, back_w = os.pipe()
            p = subprocess.Popen(argv_of(name, go_r, back_w), env=env, pass_fds=(go_r, back_w),
                                 stdout=subprocess.DEVNULL)
            os.close(go_r)
            os.close(back_w)
            procs[name] = (p, go_w, os.fdopen(back_r))
        for name, (p, _, back) in procs.items():  # each warmed up and waiting
            if back.readline().strip() != "ready":
                raise RuntimeError(f"{name}: the program did not start")
        got = {k: [] for k in configs}
        names = list(configs)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                _, go, back = procs[name]
                os.write(go, b"g")
                got[name].append(float(back.readline()))
        return got
    finally:
        for p, go, back in procs.values():
            os.close(go)
            back.close()
        for name, (p, _, _) in procs.items():
            if p.wait() != 0:
                raise RuntimeError(f"{name}: exit status {p.returncode}")


def lockstep_ratios(got, base="plain"):
    """Each configuration's chunk time against the base's in the same round: the median of the
    rounds' ratios less 1."""
    b = got[base]
    return {name: statistics.median([x / y for x, y in zip(v, b)]) - 1 for name, v in got.items()}


def lockstep_report(sessions, turns):
    """sessions: lockstep_ratios of each session (new processes each: a process's own luck, its
    memory's layout, moves it by a few percent for its whole life, 2026-11-29)."""
    print(f"{len(sessions)} sessions of {turns} turns, each configuration against plain in the"
          " same turn: the median over the sessions of each session's median [the sessions']")
    for name in sessions[0]:
        v = [s[name] * 100 for s in sessions]
        print(f"  {name:22s} {statistics.median(v):+6.2f}%  [{', '.join(f'{x:+.1f}' for x in v)}]")


def _mlp(layers, width):
    """The MLP both programs below build: `layers` Linear(width) + ReLU pairs, input x."""
    return f"""import os, sys, time, torch
torch.set_num_threads(1)
layers = []
for _ in range({layers}):
    layers += [torch.nn.Linear({width}, {width}), torch.nn.ReLU()]
m = torch.nn.Sequential(*layers).eval()
x = torch.randn(1, {width})
"""


def mlp_program(layers, width, grad="no_grad", keep_from=0):
    """The timed MLP the benchmarks run (mlp_cost.py, operators_cost.py): `layers` Linear(width)
    + ReLU pairs at batch 1 under torch.<grad>(), argv: CONFIG N; CONFIG torch.profiler wraps it
    in torch.profiler (CPU). Prints the mean forward in ns, the first N * keep_from left out."""
    return _mlp(layers, width) + f"""
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


def mlp_lockstep_program(layers, width, grad="no_grad"):
    """The same MLP for run_lockstep: argv CONFIG RD WR CHUNK WARM; WARM forwards first, then a
    line "ready", then CHUNK timed forwards a turn (the time of each forward alone, summed, as
    the program's own timer would take it)."""
    return _mlp(layers, width) + f"""
rd, wr, chunk, warm = map(int, sys.argv[2:6])
prof = None
if sys.argv[1] == "torch.profiler":
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    prof.__enter__()
with torch.{grad}():
    for _ in range(warm):
        m(x)
    os.write(wr, b"ready\\n")
    while os.read(rd, 1):
        t = 0
        for _ in range(chunk):
            t0 = time.perf_counter_ns()
            m(x)
            t += time.perf_counter_ns() - t0
        os.write(wr, b"%d\\n" % t)
if prof:
    prof.__exit__(None, None, None)
"""
