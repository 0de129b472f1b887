"""A benchmark program shaped like a real one (tests/torch/test_series.py): several
configurations in one process, each forward marked with record_function("iteration <label>").
  series_prog.py batch   the same MLP at batch 1, 8 and 64 under inference_mode
  series_prog.py int8    an fp32 MLP, then its quantize_dynamic int8 copy
Prints one line per configuration: its label and its own timer's time (ns) of each forward,
the figures the report's series must agree with."""
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)


def mlp(width):
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width)).eval()


def timed(model, x, label, n):
    own = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        with torch.autograd.profiler.record_function(f"iteration {label}"):
            model(x)
        own.append(time.perf_counter_ns() - t0)
    print(label, *own, flush=True)


def main():
    what = sys.argv[1]
    with torch.inference_mode():
        if what == "batch":
            m = mlp(256)
            for b in (1, 8, 64):
                timed(m, torch.randn(b, 256), f"batch={b}", 25)
        else:
            m = mlp(512)
            q = torch.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
            x = torch.randn(64, 512)
            timed(m, x, "fp32", 25)
            timed(q, x, "int8", 25)


main()
