#!/usr/bin/env python3
"""py_infer.py: a Python PyTorch program running the seeds' inference settings, for infprof's
tests and studies. Prints, per phase, the same reference line as the C++ samples (forward +
synchronize timed on the host, p50 and mean; max_memory_allocated on CUDA):

    ref {"phase": "no_grad | autocast bf16", "grad_mode": "no_grad", "autocast": "bf16",
         "iterations": 20, "p50_ms": 1.234, "mean_ms": 1.301, "max_memory_allocated": 123456}

Each timed forward is marked "iteration batch=N", which infprof counts as one iteration
(INFPROF_ITERATION_RANGE): an NVTX range where torch.cuda.nvtx is there (a CUDA build), with
--mark record_function a torch.profiler.record_function scope instead, with --mark none (or
--no-nvtx) not at all. --script runs the model as TorchScript (torch.jit.script): each call, the
warm-up's too, is then an iteration to infprof without any mark. --warmup iterations run first
in each phase, untimed and unmarked. --times adds each timed forward's own time, in order, to the
reference line ("ms": [...]).

    py_infer.py [--device cpu|cuda] [--model resnet50|resnet18|conv|transformer] [--batch N]
                [--iters N] [--warmup N] [--modes grad,no_grad,inference_mode]
                [--precisions off,fp16,bf16] [--no-eval] [--channels-last]
                [--cudnn-benchmark] [--compile] [--script] [--cuda-graph]
                [--mark nvtx|record_function|none] [--no-nvtx] [--times]

PY_INFER_TORCH_PROFILER=1 runs everything under torch.profiler (CPU and CUDA activities), for
comparing overheads (bench/overhead.py).
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import torch

GRAD = {"grad": contextlib.nullcontext, "no_grad": torch.no_grad,
        "inference_mode": torch.inference_mode}
DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


def model_of(name):
    if name in ("resnet50", "resnet18"):
        import torchvision
        return getattr(torchvision.models, name)(weights=None), (3, 224, 224)
    if name == "conv":
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(32, 64, 3, padding=1),
            torch.nn.BatchNorm2d(64), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(), torch.nn.Linear(64, 10)), (3, 64, 64)
    if name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
        return torch.nn.TransformerEncoder(layer, 2), (64, 256)
    sys.exit(f"py_infer.py: unknown model {name!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--modes", default="grad,no_grad,inference_mode")
    ap.add_argument("--precisions", default=None)
    ap.add_argument("--no-eval", action="store_true")
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--cudnn-benchmark", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--script", action="store_true")
    ap.add_argument("--cuda-graph", action="store_true")
    ap.add_argument("--mark", choices=("nvtx", "record_function", "none"), default="nvtx")
    ap.add_argument("--no-nvtx", action="store_true")
    ap.add_argument("--times", action="store_true")
    a = ap.parse_args()
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("py_infer.py: --device cuda but CUDA is not available")
    # CPU autocast is bf16 only in older PyTorch: off and bf16 by default there.
    precisions = (a.precisions or ("off,fp16,bf16" if cuda else "off,bf16")).split(",")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    model, shape = model_of(a.model)
    model = model.to(a.device)
    if not a.no_eval:
        model.eval()
    x = torch.randn(a.batch, *shape, device=a.device)
    if a.channels_last and x.dim() == 4:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    if a.compile:
        model = torch.compile(model)
    if a.script:
        model = torch.jit.script(model)
    # How each timed forward is marked: a context manager factory, or None.
    name = f"iteration batch={a.batch}"
    mark = None
    if a.no_nvtx or a.mark == "none":
        pass
    elif a.mark == "record_function":
        mark = lambda: torch.profiler.record_function(name)  # noqa: E731
    elif cuda:
        mark = lambda: torch.cuda.nvtx.range(name)  # noqa: E731
    print("model " + json.dumps({"name": a.model, "input_bytes": x.numel() * x.element_size()}),
          flush=True)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    for mode in a.modes.split(","):
        for prec in precisions:
            label = f"{mode} | autocast {prec}"
            ac = (torch.autocast(a.device, dtype=DTYPE[prec]) if prec != "off"
                  else contextlib.nullcontext())
            with GRAD[mode](), ac:
                if cuda:
                    sync()
                    torch.cuda.reset_peak_memory_stats()
                forward = lambda: model(x)  # noqa: E731
                if a.cuda_graph and cuda:
                    # Captured once per phase (after warm-up on a side stream), then replayed.
                    static = x.clone()
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            model(static)
                    torch.cuda.current_stream().wait_stream(s)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        out = model(static)
                    forward = graph.replay
                for _ in range(a.warmup):
                    forward()
                sync()
                ms = []
                for _ in range(a.iters):
                    with mark() if mark else contextlib.nullcontext():
                        t0 = time.perf_counter()
                        out = forward()
                        sync()
                        t1 = time.perf_counter()
                    ms.append((t1 - t0) * 1e3)
                del out
                peak = torch.cuda.max_memory_allocated() if cuda else None
            srt = sorted(ms)
            ref = {"phase": label, "grad_mode": mode, "autocast": prec, "iterations": len(ms),
                   "p50_ms": round(srt[(len(srt) - 1) // 2], 4),
                   "mean_ms": round(statistics.fmean(ms), 4), "max_memory_allocated": peak}
            if a.times:
                ref["ms"] = [round(x, 4) for x in ms]
            print("ref " + json.dumps(ref), flush=True)


if __name__ == "__main__":
    if os.environ.get("PY_INFER_TORCH_PROFILER") == "1":
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
        with profile(activities=acts):
            main()
    else:
        main()
