"""A benchmark program shaped like a real one (tests/torch/test_series.py): several
configurations in one process, each forward marked with record_function("iteration <label>").
  series_prog.py batch   the same MLP at batch 1, 8 and 64 under inference_mode
  series_prog.py int8    an fp32 MLP, then its quantize_dynamic int8 copy
  series_prog.py modes   the same two under no_grad, then the fp32 one under inference_mode
                         (marked "iteration fp32" and "iteration int8"; printed as
                         no_grad:fp32, no_grad:int8, inference_mode:fp32)
  series_prog.py gaps    one MLP, 20 forwards marked "iteration prep" each after 4 ms of host
                         work preparing its input (a busy loop), then 20 marked "iteration tight"
                         back to back, then 40 marked "iteration burst" back to back but for
                         every 10th, after 20 ms of host work (a queue that fills in bursts);
                         prints, after each label's forward times, its own times between
                         forwards ("between <label>")
  series_prog.py settings  one MLP, every forward marked "iteration" alone: the float32 matmul
                         precision set to "high" first; 12 forwards, then cudnn.benchmark on and
                         12 more, then 12 inside `torch.backends.cudnn.flags(benchmark=False)`
                         (the mark around it): the settings tell the series apart
  series_prog.py tf32    one MLP, every forward marked "iteration" alone: 12 forwards, then 12
                         with `torch.backends.cudnn.flags(allow_tf32=False)` inside the mark
  series_prog.py small   one MLP at batch 1, 12 forwards marked "iteration batch=1", then 12
                         marked "iteration batch=4" each running 8 forwards at batch 1: the
                         smallest batch gives the most items/s
  series_prog.py many    two labels of 80 characters that differ only in their last, 4 forwards
                         each, then 130 labels "cfg<k>", 2 forwards each: more series than the
                         report holds (REPORT_MAX_SERIES, 128)
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


def spin_ms(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def gaps():
    m = mlp(256)
    for label, prep_ms, every, n in (("prep", 4, 1, 20), ("tight", 0, 1, 20),
                                     ("burst", 20, 10, 40)):
        own, between, last_end = [], [], None
        for k in range(n):
            t0 = time.perf_counter_ns()
            if prep_ms and k % every == every - 1:
                spin_ms(prep_ms)
            x = torch.randn(16, 256)
            t1 = time.perf_counter_ns()
            with torch.autograd.profiler.record_function(f"iteration {label}"):
                m(x)
            t2 = time.perf_counter_ns()
            if last_end is not None:
                between.append(t1 - last_end)
            own.append(t2 - t1)
            last_end = t2
        print(label, *own, flush=True)
        print("between", label, *between, flush=True)


def settings():
    torch.set_float32_matmul_precision("high")
    m, x = mlp(256), torch.randn(8, 256)
    own = {"cudnn.benchmark=off": [], "cudnn.benchmark=on": []}

    def forward(config, flags):
        t0 = time.perf_counter_ns()
        with torch.autograd.profiler.record_function("iteration"):
            if flags:
                with torch.backends.cudnn.flags(enabled=True, benchmark=False):
                    m(x)
            else:
                m(x)
        own[config].append(time.perf_counter_ns() - t0)

    for _ in range(12):
        forward("cudnn.benchmark=off", False)
    torch.backends.cudnn.benchmark = True
    for _ in range(12):
        forward("cudnn.benchmark=on", False)
    for _ in range(12):
        forward("cudnn.benchmark=off", True)
    for label, times in own.items():
        print(label, *times, flush=True)


def tf32():
    m, x = mlp(256), torch.randn(8, 256)
    own = {"cudnn.allow_tf32=on": [], "cudnn.allow_tf32=off": []}
    for config in own:
        for _ in range(12):
            t0 = time.perf_counter_ns()
            with torch.autograd.profiler.record_function("iteration"):
                if config.endswith("off"):
                    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
                        m(x)
                else:
                    m(x)
            own[config].append(time.perf_counter_ns() - t0)
    for label, times in own.items():
        print(label, *times, flush=True)


def small():
    m, x = mlp(256), torch.randn(1, 256)
    own = {"batch=1": [], "batch=4": []}
    for label, calls in (("batch=1", 1), ("batch=4", 8)):
        for _ in range(12):
            t0 = time.perf_counter_ns()
            with torch.autograd.profiler.record_function(f"iteration {label}"):
                for _ in range(calls):
                    m(x)
            own[label].append(time.perf_counter_ns() - t0)
    for label, times in own.items():
        print(label, *times, flush=True)


def many():
    m, x = mlp(16), torch.randn(1, 16)
    base = "x" * 79
    for label in (base + "a", base + "b"):
        timed(m, x, label, 4)
    for k in range(130):
        timed(m, x, f"cfg{k}", 2)


def modes():
    m = mlp(512)
    q = torch.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
    x = torch.randn(64, 512)
    for mode, ctx, models in (("no_grad", torch.no_grad, ((m, "fp32"), (q, "int8"))),
                              ("inference_mode", torch.inference_mode, ((m, "fp32"),))):
        with ctx():
            for model, label in models:
                own = []
                for _ in range(25):
                    t0 = time.perf_counter_ns()
                    with torch.autograd.profiler.record_function(f"iteration {label}"):
                        model(x)
                    own.append(time.perf_counter_ns() - t0)
                print(f"{mode}:{label}", *own, flush=True)


def main():
    what = sys.argv[1]
    if what == "modes":
        return modes()
    with torch.inference_mode():
        if what in ("settings", "tf32", "small", "many"):
            return globals()[what]()
        if what == "gaps":
            return gaps()
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
