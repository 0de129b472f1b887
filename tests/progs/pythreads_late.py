"""pythreads_late.py: other threads call models only while the first thread's forward is open
(tests/torch/test_pyfast.py, docs/python.md "Threads"). With one thread watched the hooks are
disarmed for the length of its forward, so another thread's calls then reach no hook of ours
(2026-11-29: a model's whole series missing, "Lost nothing").

usage: pythreads_late.py [late | third | fork]
  late (the default): a second thread, the hooks' owner, runs B K times; each of its forwards
         waits inside until the main thread has called A once. A's first call is unseen, and
         told; the allocator's report from it has every thread watched once that B forward
         ends. Prints {"A": K, "B": K}.
  third: a thread's first call of X is held open while a second thread runs Y once, then a third
         thread calls X: the hooks watch every thread from that call (the Python side sees a
         second thread call a model), and Y's call, made before, is still told (its count was
         dropped on that path). Prints {"X": 2, "Y": 1}.
  fork:  late, then a forked child runs A 5 times on its one thread: its database is its own,
         with nothing late (it once had the parent's count). The child prints {"A": 5}."""
import json
import os
import sys
import threading

import torch

K = 12


class Lin(torch.nn.Module):
    def __init__(self, hold=None):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.hold = hold  # thread name -> (entered, go): that thread's forward waits inside

    def forward(self, x):
        y = self.lin(x)
        wait = (self.hold or {}).get(threading.current_thread().name)
        if wait:
            wait[0].set()
            wait[1].wait()
            wait[1].clear()
        return y


class A(Lin):
    pass


class B(Lin):
    pass


class X(Lin):
    pass


class Y(Lin):
    pass


def late():
    inside, turn = threading.Event(), threading.Event()
    a, b = A().eval(), B({"owner": (inside, turn)}).eval()

    def run_b():
        with torch.no_grad():
            for _ in range(K):
                b(torch.randn(2, 16))

    t = threading.Thread(target=run_b, name="owner")
    t.start()
    with torch.no_grad():
        for _ in range(K):
            inside.wait()
            inside.clear()
            a(torch.randn(3, 16))
            turn.set()
    t.join()
    return a


def third():
    held, go, y_done = threading.Event(), threading.Event(), threading.Event()
    x, y = X({"first": (held, go)}).eval(), Y().eval()

    def first():
        with torch.no_grad():
            x(torch.randn(2, 16))

    def second():
        held.wait()
        with torch.no_grad():
            y(torch.randn(2, 16))
        y_done.set()

    def last():
        y_done.wait()
        with torch.no_grad():
            x(torch.randn(2, 16))
        go.set()

    ts = [threading.Thread(target=f, name=f.__name__) for f in (first, second, last)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


mode = sys.argv[1] if len(sys.argv) > 1 else "late"
if mode == "third":
    third()
    print(json.dumps({"X": 2, "Y": 1}))
    sys.exit(0)
a = late()
if mode == "fork":
    pid = os.fork()
    if pid == 0:
        with torch.no_grad():
            for _ in range(5):
                a(torch.randn(3, 16))
        print(json.dumps({"A": 5}), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
print(json.dumps({"A": K, "B": K}))
