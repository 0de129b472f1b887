"""ops_profiler.py: the operator truth program (tests/torch/test_operators.py). Runs an MLP
under torch.profiler (CPU activity), each forward in a record_function('iteration') scope: fp32
under no_grad, its quantize_dynamic int8 copy under inference_mode, and the fp32 model scripted
(TorchScript) under grad mode (three phases); prints torch.profiler's own per-operator figures
(names with '::') as JSON on stdout: {name: [calls, self_cpu_us, [each call's self_cpu_us, in
start order], [the indices of the calls torch.profiler mis-nested]]} for each model. torch.profiler
(1.13) nests by microsecond timestamps: a child whose end rounds 1 us past its parent's is made
its grandparent's child, and the parent's self time then holds the whole child (seen: an
aten::linear with 14 ms of self time, its aten::addmm's; 14 of 150 calls in one run). Those
calls are named, not mended: the anchor's figure is printed as it is. An aten::digamma call just before
and just after each profiled window marks it for the test (the models are built in the same
phases)."""
import json
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, 10)).eval()
int8 = torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
x = torch.randn(64, 512)
iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
out = {}
scripted = torch.jit.script(model)
for label, m, mode in (("fp32", model, torch.no_grad), ("int8", int8, torch.inference_mode),
                       ("script", scripted, torch.enable_grad)):
    with mode():
        torch.digamma(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                with torch.profiler.record_function("iteration"):
                    m(x)
        torch.digamma(x)
    calls, nested = {}, {}
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    for i, e in enumerate(events):
        if "::" not in e.name:
            continue
        each = calls.setdefault(e.name, [])
        # An event that starts inside this call on its thread and ends past it: mis-nested.
        for f in events[i + 1:]:
            if f.time_range.start >= e.time_range.end:
                break
            if f.thread == e.thread and f.time_range.end > e.time_range.end:
                nested.setdefault(e.name, []).append(len(each))
                break
        each.append(e.self_cpu_time_total)
    out[label] = {e.key: [e.count, e.self_cpu_time_total, calls.get(e.key, []),
                          nested.get(e.key, [])]
                  for e in prof.key_averages() if "::" in e.key}
print(json.dumps(out))
