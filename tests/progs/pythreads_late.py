"""pythreads_late.py: another thread calls a model only while the first thread's forward is open
(tests/torch/test_pyfast.py, docs/python.md "Threads"). A second thread, the hooks' owner, runs B
K times; each of its forwards waits inside until the main thread has called A once. With one
thread watched the hooks are disarmed for the length of each B forward, so A's calls were never
seen (2026-11-29: a model's whole series missing, "Lost nothing"). Prints {"a": K, "b": K}."""
import json
import threading

import torch

K = 12
inside, turn = threading.Event(), threading.Event()


class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        return self.lin(x)


class B(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.lin(x)
        inside.set()  # the main thread calls A now, while this forward is open
        turn.wait()
        turn.clear()
        return y


a, b = A().eval(), B().eval()


def run_b():
    with torch.no_grad():
        for _ in range(K):
            b(torch.randn(2, 16))


t = threading.Thread(target=run_b)
t.start()
with torch.no_grad():
    for _ in range(K):
        inside.wait()
        inside.clear()
        a(torch.randn(3, 16))
        turn.set()
t.join()
print(json.dumps({"a": K, "b": K}))
