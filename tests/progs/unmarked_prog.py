"""An eager PyTorch program that marks nothing (tests/torch/test_unmarked.py).
  unmarked_prog.py loop     torchvision ResNet-18, 14 forwards under no_grad, then 14 under
                            inference_mode; prints each forward's time (ns) by its own timer
  unmarked_prog.py varying  the same model, 14 forwards at a random batch size each (1-6);
                            prints each forward's time (its input made too) as
                            "inference_mode ..."
  unmarked_prog.py loader   a small MLP over a DataLoader (batches of 32, the short last one
                            dropped), 12 epochs of 31 forwards; prints each forward's time as
                            "inference_mode ..."
  unmarked_prog.py once     one forward
  unmarked_prog.py pairs    14 record_function("iteration") marks, each around two forwards
  unmarked_prog.py prep     14 forwards under inference_mode, each after making its input and
                            preparing it on the host (a busy loop) for 20 ms or as long as the
                            forward before took, whichever is longer, so that the preparation is
                            at least a third of the loop on a machine of any speed; prints each
                            forward's time as "inference_mode ..." and each preparation's as
                            "between ..."
  unmarked_prog.py everynth 40 forwards under inference_mode, every 5th (from the 5th) on an
                            input of 9 times the pixels; prints each forward's time as
                            "inference_mode ..." (a request loop whose every so many requests
                            are larger: the allocations repeat every 5 forwards)
  unmarked_prog.py everynthnoisy
                            the same, each forward 0-100 ms longer at random (a spin inside it):
                            a loaded machine's spread, the larger forwards still slower
  unmarked_prog.py argmax    60 forwards of an MLP (4 blocks 256 -> 512 -> 256) under no_grad,
                            each result read back by argmax().tolist(); prints each forward's time
                            as "no_grad ..." (its layers alike but for their widths)
  unmarked_prog.py randomlen the same, 100 forwards on inputs of random length 8-48; prints the
                            times, then each forward's length as "sizes ..."
  unmarked_prog.py seg       60 requests of a small conv net at batch 2 under inference_mode,
                            each output upsampled, softmaxed, argmaxed and counted; prints the
                            forwards' times ("seg ...") and the whole requests' ("request ...")
  unmarked_prog.py othermodel 14 forwards of the model under no_grad, then 40 of a small MLP
                            under inference_mode (no phase runs what the other does)
  unmarked_prog.py twoloops 12 forwards under inference_mode at batch 1, then 12 at batch 3;
                            prints each loop's forward times as "loop1 ..." and "loop2 ..."
"""
import random
import sys
import time

import torch
import torchvision

torch.set_num_threads(1)
torch.manual_seed(0)
random.seed(0)
model = torchvision.models.resnet18().eval()


def forward(batch):
    return model(torch.randn(batch, 3, 64, 64))


what = sys.argv[1]
if what == "loop":
    for name, ctx in (("no_grad", torch.no_grad), ("inference_mode", torch.inference_mode)):
        with ctx():
            own = []
            x = torch.randn(1, 3, 64, 64)
            for _ in range(14):
                t0 = time.perf_counter_ns()
                y = model(x)
                own.append(time.perf_counter_ns() - t0)
            print(name, *own, flush=True)
elif what == "prep":
    with torch.inference_mode():
        own, between = [], []
        for _ in range(14):
            t0 = time.perf_counter_ns()
            x = torch.randn(1, 3, 64, 64)
            prep = max([20_000_000] + own[-1:])
            while time.perf_counter_ns() - t0 < prep:
                pass
            t1 = time.perf_counter_ns()
            y = model(x)
            own.append(time.perf_counter_ns() - t1)
            between.append(t1 - t0)
        print("inference_mode", *own, flush=True)
        print("between", *between, flush=True)
elif what == "varying":
    with torch.inference_mode():
        own = []
        for _ in range(14):
            t0 = time.perf_counter_ns()
            y = forward(random.randint(1, 6))
            own.append(time.perf_counter_ns() - t0)
        print("inference_mode", *own, flush=True)
elif what in ("everynth", "everynthnoisy"):
    if what == "everynthnoisy":
        # A busy machine inside every forward: its layer2 spins 0-100 ms more at random (a
        # fixed seed), so the small forwards' times range about 1.8x.
        base = random.Random(1)

        def spin(module, inputs, output):
            end = time.perf_counter_ns() + int(base.uniform(0, 100e6))
            while time.perf_counter_ns() < end:
                pass

        model.layer2.register_forward_hook(spin)
    with torch.inference_mode():
        own = []
        small, large = torch.randn(1, 3, 64, 64), torch.randn(1, 3, 192, 192)
        for i in range(40):
            x = large if i % 5 == 4 else small
            t0 = time.perf_counter_ns()
            y = model(x)
            own.append(time.perf_counter_ns() - t0)
        print("inference_mode", *own, flush=True)
elif what in ("argmax", "randomlen"):
    # An MLP of 4 blocks (256 -> 512 -> 256) on (1, L, 256) inputs, each forward's result read
    # back with argmax().tolist(): argmax at L 16 every forward, or randomlen at L drawn in 8..48.
    mlp = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                                    torch.nn.Linear(512, 256)) for _ in range(4)],
                              torch.nn.Linear(256, 10)).eval()
    draw = random.Random(7)
    with torch.no_grad():
        own, sizes = [], []
        for _ in range(60 if what == "argmax" else 100):
            n = 16 if what == "argmax" else draw.randint(8, 48)
            x = torch.randn(1, n, 256)
            t0 = time.perf_counter_ns()
            y = mlp(x)
            own.append(time.perf_counter_ns() - t0)
            sizes.append(n)
            y.argmax(-1).tolist()
        print("no_grad", *own, flush=True)
        if what == "randomlen":
            print("sizes", *sizes, flush=True)
elif what == "seg":
    # A segmentation loop: a small conv net at batch 2, then its output upsampled, softmaxed,
    # argmaxed and counted (bincount) each time; prints each forward's time, then each whole
    # request's (forward and post-processing), "seg ..." and "request ..."
    import torch.nn.functional as F
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(32, 21, 1)).eval()
    own, whole = [], []
    with torch.inference_mode():
        for _ in range(60):
            x = torch.randn(2, 3, 64, 64)
            t0 = time.perf_counter_ns()
            y = net(x)
            t1 = time.perf_counter_ns()
            probs = F.interpolate(y, size=(192, 192), mode="bilinear",
                                  align_corners=False).softmax(1)
            mask = probs.argmax(1)
            probs.max(1).values.mean().item()
            torch.bincount(mask.flatten(), minlength=21).tolist()
            own.append(t1 - t0)
            whole.append(time.perf_counter_ns() - t0)
    print("seg", *own, flush=True)
    print("request", *whole, flush=True)
elif what == "othermodel":
    with torch.no_grad():
        x = torch.randn(1, 3, 64, 64)
        for _ in range(14):
            y = model(x)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.inference_mode():
        x = torch.randn(4, 64)
        for _ in range(40):
            y = mlp(x)
elif what == "twoloops":
    with torch.inference_mode():
        for name, batch in (("loop1", 1), ("loop2", 3)):
            x, own = torch.randn(batch, 3, 64, 64), []
            for _ in range(12):
                t0 = time.perf_counter_ns()
                y = model(x)
                own.append(time.perf_counter_ns() - t0)
            print(name, *own, flush=True)
elif what == "loader":
    # A DataLoader over 1000 samples in batches of 32, the last short one dropped, 12 epochs of
    # 31 forwards of a small MLP; the loader's set-up at each epoch's start allocates (its
    # shuffled indices) but runs no forward.
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()
    data = torch.utils.data.TensorDataset(torch.randn(1000, 64), torch.randint(0, 10, (1000,)))
    loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True, drop_last=True)
    own = []
    with torch.inference_mode():
        for epoch in range(12):
            for x, y in loader:
                t0 = time.perf_counter_ns()
                out = mlp(x)
                own.append(time.perf_counter_ns() - t0)
    print("inference_mode", *own, flush=True)
elif what == "once":
    with torch.inference_mode():
        y = forward(1)
elif what == "pairs":
    with torch.inference_mode():
        x = torch.randn(1, 3, 64, 64)
        for _ in range(14):
            with torch.autograd.profiler.record_function("iteration"):
                y = model(x)
                y = model(x)
print("done", flush=True)
