"""compare_runs.py: does `infprof compare` tell a change from run-to-run variation (issue 51,
docs/compare.md)? An unmarked CPU loop (a ~25 ms MLP forward, as users write it, its own timer
around each forward) is run under `infprof run --repeat R` for a base and a new side, and the
sides compared, TRIES times:

  aa      both sides unchanged: any "faster" or "slower" is a false verdict
  sleep   the new side sleeps SLEEP_MS inside forward(): it must read "slower", the latency's
          change near the program's own (the medians of its own timer, each side's runs pooled)

Usage: INFPROF_BUILD=build /usr/bin/python3 bench/compare_runs.py [TRIES] [RUNS] [SLEEP_MS]
Prints one line per try and a tally; nothing is asserted (tests/compare/test_compare_runs.py
checks the statistics on exact data)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

BUILD = os.environ.get("INFPROF_BUILD", "build")
CLI = os.path.join(BUILD, "bin", "infprof")

PROGRAM = """
import os, sys, time, torch
torch.set_num_threads(1)
torch.manual_seed(0)
sleep = float(os.environ.get("SLEEP_MS", "0")) / 1000


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024),
                                                              torch.nn.ReLU())
                                          for _ in range(6)])

    def forward(self, x):
        if sleep:
            time.sleep(sleep)
        return self.body(x)


m, x = Model().eval(), torch.randn(4, 1024)
own = []
with torch.no_grad():
    for i in range(70):
        t0 = time.perf_counter_ns()
        m(x)
        own.append(time.perf_counter_ns() - t0)
print(" ".join(str(v) for v in own[5:]))
"""


def side(tmp, name, runs, sleep_ms):
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
           and k != "LD_PRELOAD"}
    env["SLEEP_MS"] = str(sleep_ms)
    db = os.path.join(tmp, name + ".db")
    p = subprocess.run([CLI, "run", "--repeat", str(runs), "-o", db, "--", sys.executable, "-c",
                        PROGRAM], env=env, capture_output=True, text=True, check=True)
    own = [int(v) for line in p.stdout.split("\n") if line.strip() for v in line.split()]
    stem, ext = os.path.splitext(db)
    return [db] + [f"{stem}.{r}{ext}" for r in range(2, runs + 1)], statistics.median(own)


def main():
    tries = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    sleep_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 2
    tally = {}
    for t in range(tries):
        for case, new_sleep in (("aa", 0), ("sleep", sleep_ms)):
            with tempfile.TemporaryDirectory(prefix="infprof-cmp-") as tmp:
                base, own_b = side(tmp, "base", runs, 0)
                new, own_n = side(tmp, "new", runs, new_sleep)
                p = subprocess.run([CLI, "compare", "--format", "json", *base, "--", *new],
                                   capture_output=True, text=True, check=True)
                r = json.loads(p.stdout)
                for row in r["series"]:
                    if row.get("status") != "both":
                        continue
                    lat = 1 / row["speedup"] if row.get("speedup") else float("nan")
                    print(f"try {t + 1} {case}: {row['series'] or '(unnamed)'} {row['verdict']},"
                          f" latency {lat:.3f}x (95%: {1 / row['speedup_hi']:.3f}-"
                          f"{1 / row['speedup_lo']:.3f}x), runs {row['run_p50s_base']} ->"
                          f" {row['run_p50s_new']}; the program's own {own_n / own_b:.3f}x",
                          flush=True)
                    tally.setdefault(case, []).append(row["verdict"])
    for case, v in tally.items():
        print(case, {w: v.count(w) for w in sorted(set(v))})


if __name__ == "__main__":
    main()
