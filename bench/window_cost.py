"""window_cost.py: what a run costs outside its recording windows (docs/windows.md,
docs/performance.md). A small eager MLP (about 30 operator calls a forward) at batch 1, 3000
forwards under inference_mode, run alternately plain, under infprof with every window closed
(INFPROF_WINDOW_START=closed), and under infprof recording (the default); prints the median
forward of each run and of each configuration. Then the same three for a client of
tests/progs/server_prog.py (300 requests, one at a time): the client's median latency. A
benchmark: figures, no assertion.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/window_cost.py [ROUNDS]"""
import os
import sys
import tempfile

from alternate import report, run_alternately

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "progs",
                      "server_prog.py")

PROG = r"""
import time, torch
torch.set_num_threads(1)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
                          for _ in range(10)]).eval()
x = torch.randn(1, 64)
t = []
with torch.inference_mode():
    for _ in range(3000):
        t0 = time.perf_counter_ns()
        m(x)
        t.append(time.perf_counter_ns() - t0)
t.sort()
print(t[len(t) // 2])
"""


def main():
    build = os.environ.get("INFPROF_BUILD", "build")
    lib = os.path.join(build, "lib", "libinfprof.so")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="infprof-window-cost-")
    configs = {"plain": {}, "closed": {"LD_PRELOAD": lib, "INFPROF_WINDOW_START": "closed"},
               "recording": {"LD_PRELOAD": lib}}
    report("MLP forward", run_alternately(configs, lambda _: ["/usr/bin/python3", "-c", PROG],
                                          rounds, tmp))
    # The client unprofiled: the library goes to the server only (BENCH_PRELOAD).
    served = {name: {("BENCH_PRELOAD" if k == "LD_PRELOAD" else k): v for k, v in extra.items()}
              for name, extra in configs.items()}
    report("server request (client's)",
           run_alternately(served, lambda _: ["/usr/bin/python3", "-c", CLIENT, SERVER], rounds,
                           tmp, "s"))


# The server (tests/progs/server_prog.py) under the configuration's environment, and 340 requests
# one at a time from here: the client's median latency of the last 300, in ns.
CLIENT = r"""
import os, statistics, subprocess, sys, time, urllib.request
env = dict(os.environ)
if env.get("BENCH_PRELOAD"):
    env["LD_PRELOAD"] = env["BENCH_PRELOAD"]
p = subprocess.Popen(["/usr/bin/python3", sys.argv[1]], stdout=subprocess.PIPE, env=env)
port = int(p.stdout.readline().split()[1])
lat = []
for i in range(340):
    t0 = time.perf_counter_ns()
    urllib.request.urlopen(f"http://127.0.0.1:{port}/infer", timeout=30).read()
    if i >= 40:
        lat.append(time.perf_counter_ns() - t0)
urllib.request.urlopen(f"http://127.0.0.1:{port}/quit", timeout=30).read()
p.wait()
print(statistics.median(lat))
"""


if __name__ == "__main__":
    main()
