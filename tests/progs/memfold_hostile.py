"""memfold_hostile.py CASE: programs that leave a forward without its end, for
tests/torch/test_memory_fold.py (found by a fresh-eyes check of the folded reports, 2026-11-29).
Each allocates the same run after run. CASE:
- raise: a model whose third forward raises (PyTorch 1.13 closes that iteration only at the
  module's next call, never here), then 50 forwards of another model;
- thread_exit: a thread whose sixth forward ends the thread (sys.exit inside it);
- exit_inside: os._exit(4) inside the eighth forward, after a 4 MB allocation;
- fork_inside: os.fork() inside the fifth forward, the child runs ten forwards of another model
  inside it and leaves with os._exit(7);
- shared: a thread inside its forward while the main thread receives an 8 MB tensor from another
  process through shared memory (libtorch's MapAllocator reports it with a total of 0);
- phases: forwards that enter grad mode without an allocation inside (a phase span with no report:
  its peak is the level it was entered with), with a single allocation, and autocast;
- daemon: a daemon thread allocates 20 MB inside its forward and waits there; the main thread
  leaves with sys.exit(0) (what a server's inference thread holds at its end);
- sigterm: the program's own SIGTERM inside a forward, after it allocated 20 MB;
- long: forwards of 20 ms that allocate and free every 2 ms (each longer than a fold may last)."""
import os
import sys
import threading
import time

import torch

torch.set_num_threads(1)
case = sys.argv[1]
x = torch.randn(8, 64)


class M(torch.nn.Module):
    def __init__(self, hook=None):
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)
        self.n = 0
        self.hook = hook

    def forward(self, x):
        self.n += 1
        y = self.lin(x)
        big = torch.empty(999999 if self.n == 8 else 1000)
        if self.hook:
            self.hook(self.n)
        return y + big[:64]


def raise_at_3(n):
    if n == 3:
        raise ValueError("bad input")


def exit_thread_at_6(n):
    if n == 6:
        sys.exit()


def exit_at_8(n):
    if n == 8:
        print("leaving", flush=True)
        os._exit(4)


other = torch.nn.Linear(64, 64)


def fork_at_5(n):
    if n != 5:
        return
    pid = os.fork()
    if pid == 0:
        for _ in range(10):
            other(x)
        t = torch.empty(77777)
        del t
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status), flush=True)


def loop(model, n):
    with torch.no_grad():
        for _ in range(n):
            try:
                model(x)
            except ValueError:
                pass


if case == "raise":
    loop(M(raise_at_3), 3)
    loop(other, 50)
elif case == "thread_exit":
    t = threading.Thread(target=loop, args=(M(exit_thread_at_6), 10))
    t.start()
    t.join()
    loop(other, 5)
elif case == "exit_inside":
    loop(M(exit_at_8), 10)
elif case == "fork_inside":
    loop(M(fork_at_5), 10)
elif case == "shared":
    import torch.multiprocessing as mp

    def produce(q, done):
        q.put(torch.ones(2_000_000))
        done.wait()

    ctx = mp.get_context("fork")
    q, done = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=produce, args=(q, done))
    p.start()
    time.sleep(0.5)  # the producer has put its tensor (the queue's thread mapped it)

    def slow(n):
        time.sleep(0.3)  # the main thread receives the block meanwhile

    t = threading.Thread(target=lambda: torch.inference_mode()(loop)(M(slow), 1))
    t.start()
    time.sleep(0.05)
    s = q.get()
    t.join()
    done.set()
    p.join()
    print("sum", float(s.sum()))
elif case == "phases":

    class Phases(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)

        def forward(self, x):
            a = self.lin(x)
            big = torch.empty(50000)  # the forward's peak, then down
            del big
            keep = torch.empty(3000)  # up a little: none of the fold's extremes
            with torch.enable_grad():  # a grad span without a report
                a.view(-1)
            with torch.enable_grad():  # one with a single report
                s = torch.empty(20000)
            del s
            with torch.autocast("cpu", dtype=torch.bfloat16):
                b = self.lin(a)
            return b.float() + keep[:64]

    loop(Phases().eval(), 40)
elif case == "daemon":
    hold, started = threading.Event(), threading.Event()

    def hold_inside(n):
        big = torch.empty(5_000_000)  # 20 MB, held while the thread waits inside its forward
        started.set()
        hold.wait()
        del big

    threading.Thread(target=loop, args=(M(hold_inside), 1), daemon=True).start()
    started.wait()
    print("leaving", flush=True)
    sys.exit(0)
elif case == "sigterm":
    import signal

    def term(n):
        if n == 3:
            big = torch.empty(5_000_000)
            print("terminating", flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            del big

    loop(M(term), 5)
elif case == "long":

    class Long(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)  # a model: a module with parameters

        def forward(self, x):
            x = self.lin(x)
            keep = []
            for i in range(10):
                keep.append(torch.empty(10000 * (i + 1)))
                time.sleep(0.002)
                if i % 3 == 2:
                    keep.pop(0)
            return x + 1

    loop(Long(), 5)
print("done", case)
