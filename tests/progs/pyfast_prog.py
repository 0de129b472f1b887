"""pyfast_prog.py: module calls of every shape the Python module hooks meet, for the differential
test of their common path in C (tests/torch/test_pyfast.py, collectors/torch_pyfast.c). Prints,
as its last line, a JSON object: the hook armed in torch's global pre-hooks after the loop, and
the program's own hooks' calls on the root (which must run, in order, as without us)."""
import gc
import json
import sys
import threading

import torch
from torch import nn
from torch.nn.modules import module as mm

torch.set_num_threads(1)
torch.manual_seed(0)
own = []


class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.l, self.d = nn.Linear(8, 8), nn.Dropout(0.1)

    def forward(self, x):
        return self.d(self.l(x))


class Many(nn.Module):  # a list of tensors: its batch is the list's length
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, xs):
        return [self.l(x) for x in xs]


class Again(nn.Module):  # calls itself once from inside its own call
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x, inner=False):
        y = self.l(x)
        return y if inner else self(y, inner=True)


class Raises(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        if x.shape[0] == 7:
            raise ValueError("seven")
        return self.l(x)


class Buffer(nn.Module):  # no input at all
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.register_buffer("x", torch.randn(4, 8))

    def forward(self):
        return self.l(self.x)


once = {"flip": 1, "thread": 1}


class Odd(torch.Tensor):
    """An input whose shape, read by our hooks, runs Python code (what: its subclass's)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__self__", None) is torch.Tensor.shape and once.pop(cls.what, 0):
            cls.then()
        return super().__torch_function__(func, types, args, kwargs or {})


class Flip(Odd):  # a model called in train() and back
    what = "flip"

    @staticmethod
    def then():
        drop.train()
        drop(x2)
        drop.eval()


class Thread(Odd):  # a second thread's first call
    what = "thread"

    @staticmethod
    def then():
        t = threading.Thread(target=lambda: seq(x5))
        t.start()
        t.join()


x2, x5 = torch.randn(2, 8), torch.randn(5, 8)
seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval()
drop = Drop().eval()
with torch.no_grad():
    for _ in range(4):
        seq(x2)
    for _ in range(3):
        seq(x5)  # another batch: the C path reads it
    seq(torch.tensor(3.0).expand(8).clone()[None])  # batch 1 through a view
    drop(x2)
    drop.train()
    drop(x2)  # train(): another label
    drop.eval()
    drop(x5)
    Many()([x2, x2, x2])  # batch 3, Python's path
    Buffer()()  # no input: batch 0
    Again()(x2)  # one iteration, the inner call inside it
    r = Raises()
    r(x2)
    try:
        r(torch.randn(7, 8))
    except ValueError:
        pass
    r(x5)
    for k in range(3):  # made and dropped each time: one series, its address reused or not
        m = nn.Sequential(nn.Linear(8, 8))
        m(x2)
        del m
        gc.collect()
    # The program's own hooks on a root: they run, in order, beside ours, and go when removed.
    h1 = seq.register_forward_pre_hook(lambda mod, inp: own.append("pre"))
    h2 = seq.register_forward_hook(lambda mod, inp, out: own.append("post"))
    for _ in range(3):
        seq(x2)
    h1.remove()
    seq(x2)
    h2.remove()
    seq(x2)
    own.append("end")
    try:  # called from an except block: an iteration all the same
        raise KeyError("handled")
    except KeyError:
        seq(x2)
    caught = 0
    drop(x5.as_subclass(Flip))  # inside the shape read: drop in train(), then this call
    armed = [getattr(h, "__name__", "?") for h in mm._global_forward_pre_hooks.values()]
    seq(x2.as_subclass(Thread))  # inside the shape read: a second thread's first call
    # A second thread calls a model: from then on every thread is watched (Python's path).
    t = threading.Thread(target=lambda: [seq(x5) for _ in range(2)])
    t.start()
    t.join()
    seq(x2)
    left = {k: len(getattr(seq, k)) for k in ("_forward_hooks", "_forward_pre_hooks")}
    armed_end = [getattr(h, "__name__", "?") for h in mm._global_forward_pre_hooks.values()]
print(json.dumps({"armed": armed, "own": own, "left": left, "caught": caught,
                  "armed_end": armed_end}))
sys.stdout.flush()
