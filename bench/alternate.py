"""alternate.py: what the Python benchmarks share (window_cost.py, operators_cost.py): run a
program under several configurations in turn, round after round (a machine's drift falls on all
of them alike), each printing one number; and print each configuration's median against the
first's."""
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


def report(what, got, per=None):
    """Each configuration's median in us against the first's; per: also ns per that many."""
    base = statistics.median(next(iter(got.values())))
    for name, v in got.items():
        med = statistics.median(v)
        extra = f", {(med - base) / per:.0f} ns a call" if per else ""
        print(f"{what}: {name:17s} median {med / 1000:.1f} us ({(med / base - 1) * 100:+.1f}%"
              f"{extra})  runs: {', '.join(f'{x / 1000:.1f}' for x in v)}")
