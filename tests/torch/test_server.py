"""A real server profiled in windows opened and closed while it serves (docs/windows.md): Python's
ThreadingHTTPServer with a small torch model (tests/progs/server_prog.py), started with
`infprof run --closed`, and a bounded client here (two threads, a fixed number of requests,
each timed, none may fail). Windows are opened and closed with `infprof window PID start|stop`
between the client's rounds; each request is an iteration (its handler's forward, a module call).
Inside the windows infprof's per-request p50 is within 5% of the server's own; outside nothing
is recorded. (What a closed run costs is a benchmark's figure, bench/window_cost.py, never a
timed assertion here.)"""
import os
import statistics
import subprocess
import threading
import time
import unittest
import urllib.request

from harness import CLI, TORCH_PYTHON, Case, main

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs", "server_prog.py")


class Server(Case):
    def start(self, db, closed=True):
        args = [CLI, "run", "-o", db] + (["--closed"] if closed else []) + ["--", TORCH_PYTHON,
                                                                            PROG]
        # Operators off: sampled ones make 1 request in 4 slower (+45% on this tiny model), and
        # the calm-machine check below (the server's own p10-p90) then reads a loaded machine
        # as calm (it failed so once under ctest -j2); windows are this test's subject.
        p = subprocess.Popen(args, cwd=self.dir,
                             env=self.env(False, INFPROF_WINDOW_DIR=self.dir,
                                          INFPROF_OPERATORS="0"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        line = p.stdout.readline().decode()
        if not line.startswith("port "):
            err = p.stderr.read().decode()
            if "No module named" in err:
                raise unittest.SkipTest("python3 has no torch")
            self.fail(f"the server did not start: {line!r} {err}")
        # The program's pid: the child of `infprof run` (it runs the program and waits).
        # (from /proc: pgrep's procps may be missing on a fresh machine)
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            pid = int(f.read().split()[0])
        return p, int(line.split()[1]), pid

    def round(self, port, n, threads=2):
        """n requests over `threads` client threads; each timed by the client, with the
        server's own forward time and number."""
        out, errors = [], []

        def worker(k):
            for _ in range(k):
                t0 = time.perf_counter_ns()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/infer", timeout=30) as r:
                        num, _, own = r.read().decode().split()
                except Exception as e:  # the client must see no error
                    errors.append(repr(e))
                    continue
                out.append((int(num), int(own), time.perf_counter_ns() - t0))

        ts = [threading.Thread(target=worker, args=(n // threads,)) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errors, [])
        return out

    def window(self, pid, what):
        r = self.cli("window", str(pid), what, "--wait", "10", INFPROF_WINDOW_DIR=self.dir)
        self.assertEqual(r.rc, 0, r.err)
        return r.out.decode()

    def quit(self, p, port):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/quit", timeout=30).read()
        p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0)

    def test_windows_while_serving(self):
        db = os.path.join(self.dir, "server.db")
        p, port, pid = self.start(db)
        self.round(port, 40)                       # warm-up, outside any window
        self.assertIn("opened window 1", self.window(pid, "start"))
        # One client thread in window 1: with two, a handler waits for the GIL after its forward
        # before the server's own timer reads, which the forward itself does not include.
        inside = self.round(port, 200, threads=1)
        self.assertIn("closed window 1", self.window(pid, "stop"))
        self.round(port, 60)                       # outside again
        self.assertIn("opened window 2", self.window(pid, "start"))
        inside2 = self.round(port, 100)
        self.assertIn("closed window 2", self.window(pid, "stop"))
        self.quit(p, port)
        report = self.report_json(db)
        wins = report["windows"]
        self.assertEqual([(w["opened_by"], w["closed_by"]) for w in wins],
                         [("infprof window", "infprof window")] * 2, wins)
        # Every request inside a window, and none outside, is an iteration (a window may catch
        # one in flight at its edges, which the client sent just before or after).
        counted = [w["iterations"] for w in wins]
        for got, want in zip(counted, (len(inside), len(inside2))):
            self.assertLessEqual(abs(got - want), 2, (counted, len(inside), len(inside2)))
        # The per-request p50 of window 1 (one client thread) against the server's own, within 5%.
        one = self.report_json(db, "--window", "1")
        series = [s for s in one["series"] if s["steady_iterations"]]
        self.assertEqual(len(series), 1, one["series"])
        ours = series[0]["latency_p50_ns"]
        owns = sorted(o for _, o, _ in inside)
        own = statistics.median(owns)
        # The forward is inside the server's timer: never longer than it.
        self.assertLess(ours, 1.05 * own, (ours, own))
        # Within 5% on a machine calm enough that the server's own times are steady (under
        # ctest -j2 beside a build its timer also holds the thread switches after the forward,
        # 4 ms of them once): otherwise said, not asserted.
        if owns[len(owns) * 9 // 10] > 1.5 * owns[len(owns) // 10]:
            print(f"the machine is loaded (the server's own p10-p90 {owns[len(owns) // 10]}-"
                  f"{owns[len(owns) * 9 // 10]} ns): p50 ours {ours} vs its {own} not held to 5%")
        else:
            self.assertLess(abs(ours - own), 0.05 * own, (ours, own))
        self.assertRegex(report["summary"]["windows"], r"^recorded in 2 windows, ")
        # Requests: from many handler threads (one a connection), at most two in flight (the
        # client's two threads in window 2), the count the client sent inside the windows.
        req, = report["requests"]
        self.assertGreaterEqual(req["threads"], 2, req)
        self.assertLessEqual(abs(req["requests"] - len(inside) - len(inside2)), 4, req)
        self.assertLessEqual(req["max_concurrency"], 2, req)
        self.assertGreater(req["mean_concurrency"], 0.1, req)
        self.assertGreaterEqual(req["waiting_pct"], 0, req)
        # Requests per second over the time recorded (the windows), not over the gap between
        # them: the whole run's rate lies between the two windows' own.
        rates = [self.report_json(db, "--window", str(n))["requests"][0]["requests_per_s"]
                 for n in (1, 2) if self.report_json(db, "--window", str(n))["requests"]]
        if rates:
            self.assertLess(req["requests_per_s"], 1.1 * max(rates), (req, rates))
        # A server waits for requests, not for input: no input_bound advice.
        self.assertNotIn("input_bound", [a["rule"] for a in report["advice"]])


if __name__ == "__main__":
    main()
