"""operators_cost.py: what recording PyTorch operators costs (issue "Operators by default";
docs/performance.md). A tiny-op eager MLP at batch 1 (288 operator calls a forward), 3000
forwards under inference_mode, run alternately: plain; under infprof's defaults (operators
sampled: every call of 1 iteration in 4); the defaults without operators (INFPROF_OPERATORS=0);
those without CPU tensor memory either (INFPROF_CPU_MEMORY=0); with every operator recorded
(INFPROF_OPERATORS=1); under torch.profiler (CPU activity). Prints each configuration's mean
forward (sampling's cost falls on 1 forward in 4: a median would hide it), what it adds, and per
operator call (the calls a forward makes, counted from the exact run's database). A benchmark:
figures, no assertion.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/operators_cost.py [ROUNDS]"""
import os
import sqlite3
import sys
import tempfile

from alternate import mlp_program, report, run_alternately

PROG = mlp_program(24, 32, "inference_mode")  # 48 modules, 288 operator calls a forward


def main():
    build = os.environ.get("INFPROF_BUILD", "build")
    lib = os.path.join(build, "lib", "libinfprof.so")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="infprof-ops-cost-")
    configs = {"plain": {}, "defaults": {"LD_PRELOAD": lib},
               "no operators": {"LD_PRELOAD": lib, "INFPROF_OPERATORS": "0"},
               "no op, no CPU mem": {"LD_PRELOAD": lib, "INFPROF_OPERATORS": "0",
                                     "INFPROF_CPU_MEMORY": "0"},
               "every call": {"LD_PRELOAD": lib, "INFPROF_OPERATORS": "1"},
               "torch.profiler": {}}
    got = run_alternately(configs, lambda name: ["/usr/bin/python3", "-c", PROG, name, "3000"],
                          rounds, tmp)
    db = sqlite3.connect(os.path.join(tmp, "every call0.db"))
    calls = db.execute("SELECT count(*) FROM torch_operators").fetchone()[0] / 3000
    print(f"operator calls a forward: {calls:.0f}")
    report("mean forward", got, per=calls)


if __name__ == "__main__":
    main()
