"""tail_prog.py KIND: 50 iterations of a small CNN under inference_mode, each marked
record_function("iteration"), every 10th (#9, #19, ...) slow for a known reason:
  gc      gc.collect() with 400k objects alive
  gcmode  the same, the loop in the default grad mode and inference_mode entered inside the
          mark, around the forward only (the collection runs in grad mode)
  python  pure-Python work before the forward (a million-step loop)
  tensor  a 64 MiB temporary tensor made and filled
  shape   the input at 192x192 instead of 64x64
  sleep   a 20 ms sleep after the iteration, outside the mark (no slow iteration)
  wait    a 50 ms sleep inside the mark (the thread waits, off the CPU)
  longwait 2,000 iterations of one Linear layer, every 10th with a 2 ms sleep inside the mark:
          200 slow ones
  gapwait 600 iterations of the same, every 10th with the sleep but for one in 7 of them (#39,
          #109, ...): 51 of 60 places slow, a period with gaps
  preempt the program pinned to one CPU with two child processes spinning there for 100 ms,
          asked through pipes at the start of the iteration (the thread is preempted)
  refault the model's forward adds 1 to a 24 MiB buffer of its own each time, and before the
          mark the buffer's pages are handed back to the system (madvise MADV_DONTNEED, as an
          allocator that trims its heap): the same work, its pages faulted in again
Prints the program's own time of each iteration (perf_counter around the marked block), in ns;
for sleep, a second line: each iteration's thread CPU time (thread_time) around the same block."""
import contextlib, gc, sys, time, torch, torch.nn as nn
torch.set_num_threads(1)
torch.manual_seed(0)
what = sys.argv[1]
m = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1),
                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).eval()
junk = [[i] for i in range(400000)] if what in ("gc", "gcmode") else None
x = torch.randn(4, 3, 64, 64)
if what in ("longwait", "gapwait"):
    m, x = nn.Linear(64, 64).eval(), torch.randn(1, 64)
if what == "preempt":
    import os
    cpu = sorted(os.sched_getaffinity(0))[0]
    os.sched_setaffinity(0, {cpu})
    competitors = []
    for _ in range(2):  # each spins 100 ms on the same CPU each time it is asked
        ask, told = os.pipe()
        done_r, done_w = os.pipe()
        if os.fork() == 0:
            os.close(told)
            for other, _ in competitors:  # the others' write ends: theirs to close
                os.close(other)
            while os.read(ask, 1):
                end = time.perf_counter() + 0.1
                while time.perf_counter() < end:
                    pass
                os.write(done_w, b"d")
            os._exit(0)
        os.close(ask)
        competitors.append((told, done_r))
if what == "refault":
    import ctypes, mmap

    class Refault(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.register_buffer("buf", torch.zeros(24 * 1024 * 1024 // 4))  # its own mapping

        def forward(self, x):
            self.buf.add_(1)
            return self.net(x)

    m = Refault(m).eval()
    libc = ctypes.CDLL("libc.so.6")
    page = mmap.PAGESIZE
    start = (m.buf.data_ptr() + page - 1) // page * page
    length = (m.buf.data_ptr() + m.buf.numel() * 4 - start) // page * page
own, own_cpu = [], []
outer = contextlib.nullcontext() if what == "gcmode" else torch.inference_mode()
inner = torch.inference_mode if what == "gcmode" else contextlib.nullcontext
with outer:
    for i in range(2000 if what == "longwait" else 600 if what == "gapwait" else 50):
        slow = i % 10 == 9 and not (what == "gapwait" and i // 10 % 7 == 3)
        # The thread's CPU clock only where it is printed: on a loaded CPU reading it preempts
        # a thread that has used its slice, there and then (profiler/iteration.c).
        c0 = time.thread_time_ns() if what == "sleep" else 0
        if slow and what == "refault":
            libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(length), 4)  # MADV_DONTNEED
        t0 = time.perf_counter_ns()
        with torch.autograd.profiler.record_function("iteration"):
            if slow and what in ("wait", "longwait", "gapwait"):
                time.sleep(0.05 if what == "wait" else 0.002)
            if slow and what == "preempt":
                for told, _ in competitors:
                    os.write(told, b"x")
            if slow and what in ("gc", "gcmode"):
                gc.collect()
            if slow and what == "python":
                s = 0
                for k in range(1000000):
                    s += k * k
            if slow and what == "tensor":
                tmp = torch.empty(64 * 1024 * 1024 // 4).normal_()
                del tmp
            xi = torch.randn(4, 3, 192, 192) if (slow and what == "shape") else x
            with inner():
                y = m(xi)
        own.append(time.perf_counter_ns() - t0)
        if what == "sleep":
            own_cpu.append(time.thread_time_ns() - c0)
        if slow and what == "preempt":
            for _, done_r in competitors:
                os.read(done_r, 1)  # their spins are over: the next iteration runs alone
        if slow and what == "sleep":
            time.sleep(0.02)
if what == "preempt":
    for told, _ in competitors:
        os.close(told)
        os.wait()
print(" ".join(str(v) for v in own))
if what == "sleep":
    print(" ".join(str(v) for v in own_cpu))
