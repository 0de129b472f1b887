"""Python programs shaped like real ones, unmarked (tests/torch/test_pyloop.py). Each prints what
it measures itself as one JSON line: the forward's time (perf_counter around model(x), ns), the
wait for the DataLoader's next batch, the loop's wall time and how many items went through (the
loader: each forward's start and end too).

  pyloop_prog.py loader   a DataLoader (num_workers=0, batch 4) whose dataset decodes a PNG,
                          resizes, converts and normalises it (torchvision transforms, then an
                          nn.Module of the program's own), around
                          torchvision's mobilenet_v3_small under no_grad, 16 batches
  pyloop_prog.py quant    an MLP: 25 fp32 forwards, then 25 of its quantize_dynamic int8 copy
  pyloop_prog.py sleep MS the MLP, MS ms of time.sleep inside forward(), 30 forwards (a class
                          of its own, SleepyMLP, whatever MS: one series name for compare)
  pyloop_prog.py jit      a traced MLP and its frozen copy, called in turn in one loop, 20 each
  pyloop_prog.py jitload  the MLP traced, saved to mlp_traced.pt (in the current directory),
                          loaded with torch.jit.load and called 15 times
  pyloop_prog.py twice    two instances of the MLP class in turn, 20 each
  pyloop_prog.py prefixed an MLP of class iteration_MLP and one of class MLP, in turn, 20 each
                          (a class name is a name: never stripped as a mark's "iteration")
  pyloop_prog.py workers  the loader, num_workers=2
  pyloop_prog.py post     20 steps: 3 ms of host work making the input, the MLP, then an
                          nn.Softmax module on its output
  pyloop_prog.py predict  a predictor class (no nn.Module) whose @torch.no_grad() predict()
                          calls the MLP; the loop around it, in grad mode, makes each input
  pyloop_prog.py threads  a ThreadPoolExecutor of 2 threads, 60 requests, one forward each
  pyloop_prog.py fallback a primary MLP that raises on its 10th call, then 20 calls of a
                          fallback MLP (the program catches the error)
  pyloop_prog.py rebuild  12 requests, each building a fresh MLP (the last one dropped) and
                          calling it twice
  pyloop_prog.py functional  no nn.Module: 25 forwards of matmuls and relu written by hand
  pyloop_prog.py recursive  a module that calls itself, 3 levels deep, 40 calls
  pyloop_prog.py hookcall a model whose own forward hook (the program's) calls it once more, 30
                          calls
  pyloop_prog.py raises   the MLP, 20 calls, every fifth with an input of the wrong width (it
                          raises; the program catches it)
  pyloop_prog.py pipeline 40 images, each loaded (3 ms of sleep), then 4 forwards of Tiny and 4
                          of the MLP: each model's rate over the run's wall less the other
                          model's forwards, by its own clock (the loading is both models' wait)
  pyloop_prog.py blocks   two configurations in blocks, three rounds: 30 forwards of a small
                          Linear (class Tiny), then 6 of SleepyMLP (12 ms each); the loop rate of
                          each in its blocks, by its own clock (batch 16 over the mean time from
                          one forward's start to the next one's within a block)
"""
import io
import json
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)


BANDS = {}  # each p50 printed -> its sample's 40th and 60th percentiles (a loaded machine's)


def p50(v):
    s = sorted(v)
    n = len(s)
    p = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) // 2
    if n:
        BANDS[str(p)] = [s[int(0.4 * (n - 1))], s[-(-6 * (n - 1) // 10)]]
    return p


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(512, 1024)
        self.b = nn.Linear(1024, 1024)
        self.c = nn.Linear(1024, 10)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(512, 10)

    def forward(self, x):
        return self.l(x)


class SleepyMLP(MLP):
    def __init__(self, sleep_ms):
        super().__init__()
        self.sleep = sleep_ms / 1000.0

    def forward(self, x):
        if self.sleep:
            time.sleep(self.sleep)
        return super().forward(x)


def timed(model, x, n):
    own = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        model(x)
        own.append(time.perf_counter_ns() - t0)
    return own


class Jitter(nn.Module):
    """A transform of the program's own, an nn.Module called inside the dataset."""

    def forward(self, x):
        return x + 0.01 * torch.randn_like(x)


def loader_run(workers):
    import torchvision
    import torchvision.transforms as T
    from PIL import Image

    class Pictures(torch.utils.data.Dataset):
        def __init__(self):
            g = torch.Generator().manual_seed(1)
            self.png = []
            for _ in range(8):
                img = (torch.rand(3, 384, 384, generator=g) * 255).to(torch.uint8)
                buf = io.BytesIO()
                Image.fromarray(img.permute(1, 2, 0).numpy()).save(buf, format="PNG")
                self.png.append(buf.getvalue())
            self.t = T.Compose([T.Resize(128), T.CenterCrop(112), T.ToTensor(),
                                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
                                Jitter()])

        def __len__(self):
            return 64

        def __getitem__(self, i):
            return self.t(Image.open(io.BytesIO(self.png[i % 8])).convert("RGB")), i % 10

    model = torchvision.models.mobilenet_v3_small().eval()
    dl = torch.utils.data.DataLoader(Pictures(), batch_size=4, num_workers=workers)
    fw, wait, items, spans = [], [], 0, []
    with torch.no_grad():
        t_start = time.perf_counter_ns()
        it = iter(dl)
        while True:
            t0 = time.perf_counter_ns()
            try:
                x, _ = next(it)
            except StopIteration:
                break
            t1 = time.perf_counter_ns()
            model(x)
            t2 = time.perf_counter_ns()
            wait.append(t1 - t0)
            fw.append(t2 - t1)
            spans.append([t1, t2])
            items += x.shape[0]
        wall = time.perf_counter_ns() - t_start
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    return {"forward_p50": p50(fw), "n": len(fw), "wait_p50": p50(wait), "wait_total": sum(wait),
            "forward_total": sum(fw), "wall": wall, "items": items, "spans": spans,
            "param_bytes": params}


what = sys.argv[1]
x = torch.randn(16, 512)
if what in ("loader", "workers"):
    out = loader_run(2 if what == "workers" else 0)
elif what == "quant":
    m = MLP().eval()
    q = torch.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    with torch.no_grad():
        a = timed(m, x, 25)
        b = timed(q, x, 25)
    out = {"fp32_p50": p50(a), "int8_p50": p50(b), "n": [len(a), len(b)]}
elif what == "sleep":
    m = SleepyMLP(float(sys.argv[2])).eval()
    with torch.no_grad():
        a = timed(m, x, 30)
    out = {"forward_p50": p50(a), "n": len(a), "times": a}
elif what == "post":
    m, post = MLP().eval(), nn.Softmax(dim=1)
    a, prep = [], []
    with torch.no_grad():
        for _ in range(20):
            t0 = time.perf_counter_ns()
            xi = torch.randn(16, 512)
            while time.perf_counter_ns() - t0 < 3_000_000:
                pass
            prep.append(time.perf_counter_ns() - t0)
            a += timed(m, xi, 1)
            post(m.c.weight[:1])
    out = {"forward_p50": p50(a), "n": len(a), "prep_p50": p50(prep)}
elif what == "predict":
    class Predictor:
        def __init__(self):
            self.m = MLP().eval()

        @torch.no_grad()
        def predict(self, x):
            return self.m(x)

    pr, a = Predictor(), []
    for _ in range(30):
        xi = torch.randn(16, 512) * 2
        a += timed(pr.predict, xi, 1)
    out = {"forward_p50": p50(a), "n": len(a)}
elif what == "threads":
    import threading
    from concurrent.futures import ThreadPoolExecutor

    m, lock, a = MLP().eval(), threading.Lock(), []

    def handle(_):
        xi = torch.randn(16, 512)
        with torch.no_grad():
            t0 = time.perf_counter_ns()
            m(xi)
            d = time.perf_counter_ns() - t0
        with lock:
            a.append(d)

    with ThreadPoolExecutor(max_workers=2) as ex:
        list(ex.map(handle, range(60)))
    out = {"forward_p50": p50(a), "n": len(a)}
elif what == "fallback":
    class Primary(MLP):
        calls = 0

        def forward(self, x):
            Primary.calls += 1
            if Primary.calls == 10:
                raise RuntimeError("primary failed")
            return super().forward(x)

    first, second, a = Primary().eval(), MLP().eval(), []
    with torch.no_grad():
        for _ in range(9):
            first(x)
        try:
            first(x)
        except RuntimeError:
            pass
        a += timed(second, x, 20)
    out = {"fallback_p50": p50(a), "n": [9, len(a)]}
elif what == "jitload":
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(MLP().eval(), x), "mlp_traced.pt")
        loaded = torch.jit.load("mlp_traced.pt")
        a = timed(loaded, x, 15)
    out = {"forward_p50": p50(a), "n": len(a)}
elif what == "rebuild":
    import gc

    a = []
    with torch.no_grad():
        for _ in range(12):
            m = MLP().eval()
            a += timed(m, x, 2)
            del m
            gc.collect()
    out = {"forward_p50": p50(a), "n": len(a)}
elif what == "functional":
    w1, w2 = torch.randn(512, 1024), torch.randn(1024, 10)

    def fwd(xi):
        return torch.relu(xi @ w1) @ w2

    with torch.no_grad():
        a = timed(fwd, x, 25)
    out = {"forward_p50": p50(a), "n": len(a)}
elif what in ("recursive", "hookcall"):
    class Tree(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(512, 512)

        def forward(self, xi, depth=3):
            y = torch.tanh(self.lin(xi))
            return y + self(y, depth - 1) if what == "recursive" and depth > 0 else y

    m, busy = Tree().eval(), [False]

    def again(mod, inputs, output):
        if not busy[0]:
            busy[0] = True
            mod(output)
            busy[0] = False

    if what == "hookcall":
        m.register_forward_hook(again)
    with torch.no_grad():
        a = timed(m, x, 40 if what == "recursive" else 30)
    out = {"forward_p50": p50(a), "n": len(a)}
elif what == "raises":
    m = MLP().eval()
    bad = torch.randn(16, 7)
    a = []
    with torch.no_grad():
        for i in range(20):
            if i % 5 == 4:
                try:
                    m(bad)
                except RuntimeError:
                    pass
                continue
            a += timed(m, x, 1)
    out = {"forward_p50": p50(a), "ok": len(a)}
elif what == "pipeline":
    tiny, mlp = Tiny().eval(), MLP().eval()
    busy = {"tiny": 0, "mlp": 0}
    with torch.no_grad():
        t0 = time.perf_counter_ns()
        for _ in range(40):
            time.sleep(0.003)
            for name, m in (("tiny", tiny), ("mlp", mlp)):
                for _ in range(4):
                    s = time.perf_counter_ns()
                    m(x)
                    busy[name] += time.perf_counter_ns() - s
        wall = time.perf_counter_ns() - t0
    out = {name: 16 * 160 * 1e9 / (wall - busy["mlp" if name == "tiny" else "tiny"])
           for name in busy}
elif what == "blocks":
    tiny, sleepy = Tiny().eval(), SleepyMLP(12).eval()
    starts = {"tiny": [], "sleepy": []}
    with torch.no_grad():
        for _ in range(3):
            for name, m, n in (("tiny", tiny, 30), ("sleepy", sleepy, 6)):
                block = []
                for _ in range(n):
                    block.append(time.perf_counter_ns())
                    m(x)
                starts[name].append(block)
    out = {}
    for name, blocks in starts.items():
        cycles = [b[i + 1] - b[i] for b in blocks for i in range(len(b) - 1)]
        out[name] = 16 * 1e9 / (sum(cycles) / len(cycles))
elif what in ("jit", "twice", "prefixed"):
    m = MLP().eval()
    with torch.no_grad():
        if what == "jit":
            first = torch.jit.trace(m, x)
            second = torch.jit.freeze(torch.jit.script(MLP().eval()))
        elif what == "prefixed":
            first, second = type("iteration_MLP", (MLP,), {})().eval(), m
        else:
            first, second = m, MLP().eval()
        a, b = [], []
        for _ in range(20):
            a += timed(first, x, 1)
            b += timed(second, x, 1)
    out = {"first_p50": p50(a), "second_p50": p50(b), "n": [len(a), len(b)]}
out["bands"] = BANDS
print(json.dumps(out), flush=True)
