"""bench/python_hooks.py: what the Python module hooks (collectors/python/_infprof_hooks.py) add
per forward and per inner module call (docs/performance.md, "Python module hooks").

    /usr/bin/python3 bench/python_hooks.py build/lib/libinfprof.so

Runs itself four times under the library: INFPROF_PYTHON=0 (no hooks: the baseline), =1 (ours:
their common path in C), =1 with INFPROF_PYTHON_FAST=0 (ours all in Python), and =0 with PyTorch's global hooks left armed through every call (what a plain pair of global
hooks would cost), each timing two models under no_grad: one module (a forward's fixed cost) and
a Sequential of 200 Identity modules (per inner call: the difference over 200). Median of 15
rounds of 2000 calls. Prints the figures; asserts nothing.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(always_armed):
    import torch
    import torch.nn as nn

    if always_armed:
        from torch.nn.modules import module as mm

        mm.register_module_forward_pre_hook(lambda m, i: None)
        mm.register_module_forward_hook(lambda m, i, o: None)
    x = torch.zeros(1)
    one = nn.Sequential(nn.Identity()).eval()
    deep = nn.Sequential(*[nn.Identity() for _ in range(200)]).eval()
    out = {}
    with torch.no_grad():
        for name, model, n in (("one", one, 2000), ("deep", deep, 200)):
            rounds = []
            for _ in range(15):
                t0 = time.perf_counter_ns()
                for _ in range(n):
                    model(x)
                rounds.append((time.perf_counter_ns() - t0) / n)
            out[name] = statistics.median(rounds)
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure(sys.argv[2] == "armed")))
        return
    lib = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/lib/libinfprof.so")
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for label, py, mode in (("none", "0", "plain"), ("ours", "1", "plain"),
                                ("ours, Python", "1 slow", "plain"),
                                ("always armed", "0", "armed")):
            env = dict(os.environ, LD_PRELOAD=lib, INFPROF_PYTHON=py.split()[0],
                       INFPROF_PYTHON_FAST="0" if "slow" in py else "1",
                       INFPROF_OUTPUT=os.path.join(d, label.replace(" ", "_").replace(",", "")
                                                   + ".db"))
            got = subprocess.run([sys.executable, __file__, "--child", mode], env=env,
                                 capture_output=True, text=True, check=True)
            res[label] = json.loads(got.stdout.strip().splitlines()[-1])
    base = res["none"]
    print("%-14s %14s %18s %22s" % ("", "forward (ns)", "200-module fwd", "per inner call (ns)"))
    for label, r in res.items():
        fwd = r["one"] - base["one"]
        inner = (r["deep"] - base["deep"] - fwd) / 200
        print("%-14s %14.0f %18.0f %22s" % (label, r["one"], r["deep"],
                                           "-" if label == "none" else "%+.0f" % inner))
        if label != "none":
            print("%-14s %14s" % ("", "%+.0f added" % fwd))


if __name__ == "__main__":
    main()
