"""The size of a trace: estimated before writing (exactly for small tables, from a sample of
rows for big ones), a warning with the way to cut it when it is over --max-mb, and a streamed
export whose memory does not grow with the database."""
import os
import pty
import re
import subprocess

from export_common import ExportCase, load
from harness import CLI, main


def estimate_of(r):
    m = re.search(rb"about [\d.]+\w+ \((\d+) bytes\), (\d+) events", r.out)
    return int(m.group(1)), int(m.group(2))


class Estimate(ExportCase):
    def setUp(self):
        super().setUp()
        self.db = self.fixture("rich")

    def test_estimate_is_exact_for_small_tables(self):
        for args in ((), ("--flows",), ("--phase", "grad | autocast off"), ("--from", "20us")):
            with self.subTest(args=args):
                r = self.cli("export", self.db, "--estimate", *args)
                self.assertEqual(r.rc, 0, r.err)
                nbytes, nevents = estimate_of(r)
                doc, path, _ = self.export(self.db, "--force", *args)
                self.assertEqual(nbytes, os.path.getsize(path))
                self.assertEqual(nevents, len(doc["traceEvents"]))
        r = self.cli("export", self.db, "--estimate")
        self.assertRegex(r.out.decode(), r"\n  kernels +[\d.]+KiB +7 events\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["run.db", "trace.json"])

    def test_warning_over_the_limit(self):
        r = self.cli("export", self.db, "-o", "small.json", "--max-mb", "0.001")
        self.assertEqual(r.rc, 0, r.err)
        lines = r.err.decode().splitlines()
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r"^infprof: warning: the trace will be about [\d.]+KiB, over"
                                   r" 1\.02KiB, .*--phase LABEL or --from T --to T")
        self.assertNotIn("\x1b", lines[0])  # no colour off a terminal
        self.assertTrue(lines[1].startswith("infprof: wrote"))
        self.assertTrue(load(os.path.join(self.dir, "small.json"))["traceEvents"])
        for quiet in (("--max-mb", "0"), ()):
            r = self.cli("export", self.db, "-o", "q.json", "--force", *quiet)
            self.assertNotIn(b"warning", r.err)


    def warning_on_terminal(self, **env):
        """Run with stderr on a pseudo-terminal; what it printed there."""
        master, slave = pty.openpty()
        p = subprocess.run([CLI, "export", self.db, "-o", "-", "--max-mb", "0.001"],
                           stdout=subprocess.DEVNULL, stderr=slave, cwd=self.dir,
                           env=self.env(False, **env))
        os.close(slave)
        out = b""
        try:
            while chunk := os.read(master, 4096):
                out += chunk
        except OSError:  # EIO: the terminal's other end is closed
            pass
        os.close(master)
        self.assertEqual(p.returncode, 0)
        return out

    def test_colour_only_on_a_terminal_without_no_color(self):
        self.assertIn(b"\x1b[33mwarning:\x1b[0m", self.warning_on_terminal())
        plain = self.warning_on_terminal(NO_COLOR="1")
        self.assertIn(b"warning:", plain)
        self.assertNotIn(b"\x1b", plain)


class BigDatabase(ExportCase):
    """150,000 kernels and their launches: about 80 MB of trace."""

    def test_estimate_and_bounded_memory(self):
        db = self.fixture("many", "150000")
        r = self.cli("export", db, "--estimate")
        nbytes, nevents = estimate_of(r)
        out = os.path.join(self.dir, "big.json")
        p = subprocess.Popen([CLI, "export", db, "-o", out], stderr=subprocess.PIPE,
                             env=self.env(False))
        _, status, usage = os.wait4(p.pid, 0)
        p.stderr.close()
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        size = os.path.getsize(out)
        self.assertGreater(size, 70 * 2 ** 20)
        self.assertLess(abs(nbytes - size) / size, 0.05)
        rss = usage.ru_maxrss * 1024
        self.assertLess(rss, 40 * 2 ** 20, "the export holds rows in memory")
        doc = load(out)
        self.assertEqual(len(doc["traceEvents"]) - nevents, 0, "sampled event count")
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        self.assertEqual(len(kernels), 150000)
        self.assertEqual({e["tid"] for e in kernels}, {1, 2})


if __name__ == "__main__":
    main()
