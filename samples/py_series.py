#!/usr/bin/env python3
"""py_series.py: several configurations of one model in one process, each forward marked
"iteration <configuration>" (a record_function scope; an NVTX range too on CUDA), so infprof
reports each as a series of its own (docs/report.md, "Series") and they share one process and
one device state. For the inference study (scripts/study.sh) and a look at series by hand.

    py_series.py [--device cpu|cuda] [--model conv|resnet50|mlp] [--iters N] [--warmup N]
                 [--batches 1,8,32]

Under torch.inference_mode(), for conv and resnet50: each batch size, then at the middle batch
channels_last, the model left in train() mode, and on CUDA cudnn.benchmark turned on (a setting
infprof sees by itself: the series name gets "cudnn.benchmark=on"). For mlp: fp32 and its
torch.quantization.quantize_dynamic int8 copy (CPU) at each batch size. Prints one reference
line per configuration, the program's own timer around forward + synchronize:

    ref {"series": "batch=8 channels_last", "iterations": 20, "p50_ms": 1.234, "mean_ms": 1.3}
"""
import argparse
import json
import statistics
import sys
import time

import torch


def model_of(name):
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None), (3, 224, 224)
    if name == "conv":
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(32, 64, 3, padding=1),
            torch.nn.BatchNorm2d(64), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(), torch.nn.Linear(64, 10)), (3, 64, 64)
    if name == "mlp":
        return torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                   torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                   torch.nn.Linear(1024, 10)), (512,)
    sys.exit(f"py_series.py: unknown model {name!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--model", default="conv")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batches", default="1,8,32")
    a = ap.parse_args()
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("py_series.py: --device cuda but CUDA is not available")
    torch.manual_seed(0)
    model, shape = model_of(a.model)
    model = model.to(a.device).eval()
    batches = [int(b) for b in a.batches.split(",")]
    mid = batches[len(batches) // 2]

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def mark(name):
        if cuda:
            return torch.cuda.nvtx.range(name)
        return torch.profiler.record_function(name)

    def series(name, m, x):
        for _ in range(a.warmup):
            m(x)
        sync()
        ms = []
        for _ in range(a.iters):
            with mark(f"iteration {name}"):
                t0 = time.perf_counter()
                m(x)
                sync()
                ms.append((time.perf_counter() - t0) * 1e3)
        srt = sorted(ms)
        print("ref " + json.dumps({"series": name, "iterations": len(ms),
                                   "p50_ms": round(srt[(len(srt) - 1) // 2], 4),
                                   "mean_ms": round(statistics.fmean(ms), 4)}), flush=True)

    with torch.inference_mode():
        if a.model == "mlp":
            int8 = (torch.quantization.quantize_dynamic(model, {torch.nn.Linear},
                                                        dtype=torch.qint8) if not cuda else None)
            for b in batches:
                x = torch.randn(b, *shape, device=a.device)
                series(f"fp32 batch={b}", model, x)
                if int8 is not None:
                    series(f"int8 batch={b}", int8, x)
            return
        for b in batches:
            series(f"batch={b}", model, torch.randn(b, *shape, device=a.device))
        x = torch.randn(mid, *shape, device=a.device)
        model.to(memory_format=torch.channels_last)
        series(f"batch={mid} channels_last", model,
               x.contiguous(memory_format=torch.channels_last))
        model.to(memory_format=torch.contiguous_format)
        model.train()
        series(f"batch={mid} train", model, x)
        model.eval()
        if cuda:
            torch.backends.cudnn.benchmark = True
            series(f"batch={mid}", model, x)
            torch.backends.cudnn.benchmark = False


if __name__ == "__main__":
    main()
