"""mlp_cost.py: what infprof's defaults add to a small eager model (issue "Faster where it counts",
docs/performance.md "Defaults on a small model"). A 20-layer MLP (Linear 64 + ReLU, 41 module
calls a forward) at batch 1 under no_grad, unmarked: each forward is an iteration by the Python
module hooks, as a user's loop is.

Three measures, because this machine's speed moves by 5-30% between runs of the same program:
- wall, in lockstep (the default): ROUNDS sessions; in each, one process per configuration, all
  alive at once, taking turns of 50 forwards each (about 6 ms), 60 turns (alternate.run_lockstep):
  each configuration's time against plain's in the same turn, the median over the turns, then
  the median over the sessions. The configurations: plain; the defaults; the defaults with the
  writer storing nothing; each default collector off in turn; torch.profiler (CPU activity, the
  anchor); plain again (what the bench resolves);
- --separate: the mean forward of each configuration, run alternately as separate programs,
  ROUNDS runs each (minimum and median over the runs): what earlier sessions measured, too
  coarse here to resolve 3%;
- --instructions: the instructions the program's main thread executes per forward, counted by
  valgrind's callgrind, which does not move with the machine: each configuration run with 200
  and with 1200 forwards, the difference over 1000 (start-up falls out). Slow: a few minutes a
  configuration. The cost of a system call (one getrusage per iteration edge) and of cache misses
  is not in it.

Prints figures; asserts nothing.

--against=LIB adds the defaults with another build of libinfprof.so (a change measured against
the build it changes, alternately, in one bench); its share/ must lie beside its lib/ as in a
build tree (the Python hooks are found there).

usage: INFPROF_BUILD=build /usr/bin/python3 bench/mlp_cost.py [ROUNDS] [--separate]
       [--instructions] [--against=OTHER/lib/libinfprof.so] [--only=NAME,NAME...]

--only=NAME,... runs those configurations alone beside plain (in lockstep)."""
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from alternate import (lockstep_ratios, lockstep_report, mlp_lockstep_program, mlp_program,
                       run_alternately, run_lockstep)

PROG = mlp_program(20, 64, "no_grad", keep_from=0.05)  # the MLP, the first 5% out
LOCKSTEP = mlp_lockstep_program(20, 64, "no_grad")
LOCKSTEP_TURNS = 60


def configs(lib, against=None):
    on = {"LD_PRELOAD": lib}
    other = {"defaults of --against": {"LD_PRELOAD": against}} if against else {}
    return {"plain": {}, "defaults": dict(on), **other,
            "writer stores nothing": {"MLP_COST_PRELOAD": lib},  # preloaded past the shell
            "python hooks off": dict(on, INFPROF_PYTHON="0"),
            "python hooks in Python": dict(on, INFPROF_PYTHON_FAST="0"),
            "operators off": dict(on, INFPROF_OPERATORS="0"),
            "CPU memory off": dict(on, INFPROF_CPU_MEMORY="0"),
            # what is left without the two largest parts: the Python hooks with the iteration
            # edges (and the library), and the library alone (its writer, RecordFunction scopes)
            "hooks alone": dict(on, INFPROF_CPU_MEMORY="0", INFPROF_OPERATORS="0"),
            "library alone": dict(on, INFPROF_CPU_MEMORY="0", INFPROF_PYTHON="0"),
            "memory not folded": dict(on, INFPROF_MEMORY_FOLD="0"),
            "operators 1 in 4": dict(on, INFPROF_OPERATORS_EVERY="4"),
            # the operators' budget before 2026-11-30 (1% of the time; 0.25% since)
            "operators budget 1%": dict(on, INFPROF_OPERATORS_BUDGET="1"),
            "torch.profiler": {}}


def argv(name, *lockstep):
    cmd = (["/usr/bin/python3", "-c", LOCKSTEP, name] + [str(a) for a in lockstep] + ["50", "300"]
           if lockstep else ["/usr/bin/python3", "-c", PROG, name, "3000"])
    if name == "writer stores nothing":
        # The hooks as with the defaults, the writer draining and counting but storing nothing:
        # a file-size limit just above the new database's size stops its storing at once
        # (profiler/writer.c, "came near the file-size limit"). Storage's share of the cost. The
        # shell is not profiled: the program's database is the one named.
        return ["bash", "-c", 'ulimit -f 1536; export LD_PRELOAD="$MLP_COST_PRELOAD"; exec "$@"',
                "bash"] + cmd
    return cmd


def stored_nothing(tmp, paths):
    """Did the file-size limit stop the writer's storing in each run? (else the row would be a
    claim)"""
    stopped = 0
    for path in paths:
        path = os.path.join(tmp, path)
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                stopped += db.execute("SELECT count(*) FROM meta WHERE key = 'file_size_stop_ns'"
                                      ).fetchone()[0] > 0
        except sqlite3.Error:
            pass
    if stopped < len(paths):
        print(f"warning: the writer stored on in {len(paths) - stopped} of the {len(paths)} runs "
              f"of 'writer stores nothing': that row is not what it says")


def lockstep(lib, rounds, tmp, against=None, only=None):
    sessions = []
    cfg = dict(configs(lib, against), **{"plain again": {}})  # what the bench resolves
    if only:
        cfg = {k: v for k, v in cfg.items() if k in only or k == "plain"}
    for r in range(rounds):
        got = run_lockstep(cfg, argv, LOCKSTEP_TURNS, tmp, prefix=f"s{r}-")
        sessions.append(lockstep_ratios(got))
    if "writer stores nothing" in cfg:
        stored_nothing(tmp, [f"s{r}-writer stores nothing.db" for r in range(rounds)])
    print("turns of 50 forwards, one process per configuration, in lockstep")
    lockstep_report(sessions, LOCKSTEP_TURNS)


def wall(lib, rounds, tmp, against=None):
    got = run_alternately(configs(lib, against), argv, rounds, tmp)
    stored_nothing(tmp, [f"writer stores nothing{r}.db" for r in range(rounds)])
    base_min, base_med = min(got["plain"]), statistics.median(got["plain"])
    print(f"mean forward, {rounds} alternating runs of 3000 forwards each (the first 5% left out)")
    for name, v in got.items():
        print(f"  {name:17s} min {min(v) / 1000:7.1f} us ({(min(v) / base_min - 1) * 100:+6.1f}%)"
              f"  median {statistics.median(v) / 1000:7.1f} us"
              f" ({(statistics.median(v) / base_med - 1) * 100:+6.1f}%)"
              f"  runs: {', '.join(f'{x / 1000:.0f}' for x in v)}")


def main_thread_instructions(name, extra, n, tmp):
    out = os.path.join(tmp, f"cg.{name.replace(' ', '_')}.{n}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
           and k != "LD_PRELOAD"}
    # One string hash seed for every run: with a random one, the interpreter's own work (its dict
    # lookups) moved one build by 10 k instructions a forward between runs (2026-11-29: +2.89%
    # and +3.87%), more than the effects measured.
    env.update(extra, INFPROF_OUTPUT=os.path.join(tmp, f"cg-{name.replace(' ', '_')}-{n}.db"),
               PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"))
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={out}", "/usr/bin/python3", "-c", PROG, name, str(n)],
                   env=env, capture_output=True, check=True)
    with open(out + "-01") as f:
        for line in f:
            m = re.match(r"(?:summary|totals): (\d+)", line)
            if m:
                return int(m.group(1))
    raise RuntimeError("no summary in " + out)


def instructions(lib, tmp):
    if not shutil.which("valgrind"):
        print("instructions: valgrind not found (Debian: valgrind)")
        return
    want = {k: v for k, v in configs(lib).items()
            if k not in ("torch.profiler", "writer stores nothing")}
    jobs = [(name, extra, n) for name, extra in want.items() for n in (200, 1200)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        counts = list(pool.map(lambda j: main_thread_instructions(*j, tmp), jobs))
    per = {}
    for (name, _, n), c in zip(jobs, counts):
        per.setdefault(name, {})[n] = c
    per = {k: (v[1200] - v[200]) / 1000 for k, v in per.items()}
    base = per["plain"]
    print("instructions a forward, main thread (callgrind, 1200 forwards less 200)")
    for name, v in per.items():
        print(f"  {name:17s} {v / 1000:8.1f} k ({(v / base - 1) * 100:+5.1f}%)")


def main():
    build = os.environ.get("INFPROF_BUILD", "build")
    lib = os.path.abspath(os.path.join(build, "lib", "libinfprof.so"))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 5
    against = next((os.path.abspath(a.split("=", 1)[1]) for a in sys.argv[1:]
                    if a.startswith("--against=")), None)
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--only=")),
                None)
    if only and any(k not in dict(configs(lib, against), **{"plain again": {}}) for k in only):
        sys.exit(f"mlp_cost.py: --only names a configuration that is not one of: "
                 f"{', '.join(configs(lib, against))}, plain again")
    tmp = tempfile.mkdtemp(prefix="infprof-mlp-cost-")
    try:
        if "--instructions" in sys.argv:
            instructions(lib, tmp)
        elif "--separate" in sys.argv:
            wall(lib, rounds, tmp, against)
        else:
            lockstep(lib, rounds, tmp, against, only)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
