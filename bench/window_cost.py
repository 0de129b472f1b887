"""window_cost.py: what a run costs outside its recording windows (docs/windows.md,
docs/performance.md). A small eager MLP (about 30 operator calls a forward) at batch 1, 3000
forwards under inference_mode, run alternately plain, under infprof with every window closed
(INFPROF_WINDOW_START=closed), and under infprof recording (the default); prints the median
forward of each run and of each configuration. Then the same three for a client of
tests/progs/server_prog.py (300 requests, one at a time): the client's median latency. A
benchmark: figures, no assertion.

usage: INFPROF_BUILD=build /usr/bin/python3 bench/window_cost.py [ROUNDS]"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

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
    got = {k: [] for k in configs}
    for r in range(rounds):
        for name, extra in configs.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
                   and k != "LD_PRELOAD"}
            env.update(extra, INFPROF_OUTPUT=os.path.join(tmp, f"{name}{r}.db"))
            out = subprocess.run(["/usr/bin/python3", "-c", PROG], env=env, capture_output=True,
                                 check=True).stdout
            got[name].append(int(out))
    report("MLP forward", got)
    got = {k: [] for k in configs}
    for r in range(rounds):
        for name, extra in configs.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("INFPROF_")
                   and k != "LD_PRELOAD"}
            env.update(extra, INFPROF_OUTPUT=os.path.join(tmp, f"s{name}{r}.db"))
            p = subprocess.Popen(["/usr/bin/python3", SERVER], env=env, stdout=subprocess.PIPE)
            port = int(p.stdout.readline().split()[1])
            lat = []
            for i in range(340):
                t0 = time.perf_counter_ns()
                urllib.request.urlopen(f"http://127.0.0.1:{port}/infer", timeout=30).read()
                if i >= 40:
                    lat.append(time.perf_counter_ns() - t0)
            urllib.request.urlopen(f"http://127.0.0.1:{port}/quit", timeout=30).read()
            p.wait()
            got[name].append(statistics.median(lat))
    report("server request (client's)", got)


def report(what, got):
    base = statistics.median(got["plain"])
    for name, v in got.items():
        med = statistics.median(v)
        print(f"{what}: {name:10s} median {med / 1000:.1f} us ({(med / base - 1) * 100:+.1f}%)"
              f"  runs: {', '.join(f'{x / 1000:.1f}' for x in v)}")


if __name__ == "__main__":
    main()
