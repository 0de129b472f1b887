#!/usr/bin/env python3
"""py_aoti.py: an AOTInductor model run from Python, for infprof's GPU suite: compiles a model
with torch._inductor.aoti_compile_and_package (once, into PACKAGE, on the device it will run on),
loads the package and runs it in each grad mode, printing per phase the same reference line as
the other samples (each run + synchronize timed on the host, p50 and mean; max_memory_allocated
on CUDA). No iteration is marked: infprof counts each run of the package itself.

    py_aoti.py PACKAGE [--device cuda|cpu] [--model resnet18|conv] [--batch N] [--iters N]
               [--warmup N] [--modes no_grad,inference_mode]

Needs PyTorch 2.6 or later (AOTInductor packages); on CPU it needs a C++ compiler at run time.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

import torch

GRAD = {"grad": torch.enable_grad, "no_grad": torch.no_grad,
        "inference_mode": torch.inference_mode}


def model_of(name):
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18()
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(16, 10))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--modes", default="no_grad,inference_mode")
    a = ap.parse_args()
    try:  # not imported by "import torch" in every version
        importlib.import_module("torch._inductor")
    except ImportError:
        pass
    if not hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"):
        sys.exit(f"py_aoti.py: PyTorch {torch.__version__} has no AOTInductor packages (2.6+)")
    cuda = a.device == "cuda"
    x = torch.randn(a.batch, 3, 64, 64, device=a.device)
    if not os.path.exists(a.package):
        model = model_of(a.model).to(a.device).eval()
        with torch.no_grad():
            ep = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(ep, package_path=a.package)
    runner = torch._inductor.aoti_load_package(a.package)
    print("model " + json.dumps({"name": a.model, "input_bytes": x.numel() * x.element_size()}),
          flush=True)
    for mode in a.modes.split(","):
        label = f"{mode} | autocast off"
        with GRAD[mode]():
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            for _ in range(a.warmup):
                runner(x)
            if cuda:
                torch.cuda.synchronize()
            ms = []
            for _ in range(a.iters):
                t0 = time.perf_counter()
                out = runner(x)
                if cuda:
                    torch.cuda.synchronize()
                ms.append((time.perf_counter() - t0) * 1e3)
            del out
            peak = torch.cuda.max_memory_allocated() if cuda else None
        srt = sorted(ms)
        print("ref " + json.dumps({
            "phase": label, "grad_mode": mode, "autocast": "off", "iterations": len(ms),
            "p50_ms": round(srt[(len(srt) - 1) // 2], 4),
            "mean_ms": round(statistics.fmean(ms), 4), "max_memory_allocated": peak}), flush=True)


if __name__ == "__main__":
    main()
