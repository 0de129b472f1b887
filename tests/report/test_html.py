"""`infprof report --format html` and `infprof compare --format html` (docs/report.md, "HTML"):
one file, offline (no script, font, style or image from anywhere else), rendered by headless
Chromium without a console message or a request beyond the page; the DOM holds the Summary's
lines as the text report has them, every chart with its text equivalent (or why there is none),
and the tables. On the H100 fixtures (each page under 2 MB), the advice fixtures, a compare and a
CPU run of a real PyTorch program."""
import json
import lzma
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

from harness import TORCH_PYTHON, Case, main, prog, sanitized

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "h100")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHARTS = ["chart-speedup", "chart-latency", "chart-between", "chart-memory", "chart-gpu",
          "chart-cpu", "chart-power", "chart-clock", "chart-precision", "chart-kernels",
          "chart-operators", "chart-energy"]
CPU_PROGRAM = """import torch
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8))
with torch.inference_mode():
    for batch in (1, 16):
        x = torch.randn(batch, 64)
        for i in range(25):
            with torch.autograd.profiler.record_function(f"iteration batch={batch}"):
                model(x)
"""


class Html(Case):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="infprof-html-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sweep(self, db):
        """fixture_advice's sweep (three phases, two batch sizes) into db."""
        p = subprocess.run([prog("fixture_advice"), "sweep", db], capture_output=True,
                           timeout=60, env={**{k: v for k, v in os.environ.items()
                                               if not k.startswith("INFPROF_")},
                                            "INFPROF_ENERGY_MS": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def page(self, *args, command="report"):
        r = self.cli(command, "--format", "html", *args)
        self.assertEqual(r.rc, 0, r.err)
        self.assertEqual(r.err, b"")
        return r.out.decode()

    def render(self, html, name):
        """The DOM headless Chromium makes of the page, and the page's console messages."""
        if not CHROMIUM:
            self.skipTest("no chromium (scripts/deps.sh installs Debian's)")
        path = os.path.join(self.tmp, name + ".html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--no-first-run",
                            "--enable-logging=stderr", "--v=1", "--user-data-dir=" +
                            os.path.join(self.tmp, "profile-" + name), "--dump-dom",
                            "file://" + path], capture_output=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        log = p.stderr.decode(errors="replace")
        # No request: the page's Content-Security-Policy lets the browser load nothing, and
        # says so on the console for anything the page would have loaded (Chromium's own
        # background fetches, its clock, updates, dictionaries, share its request log, so that
        # log cannot tell the page's apart).
        return p.stdout.decode(), re.findall(r"CONSOLE[^\]]*\] (.*)", log)

    def check_page(self, html, name, text_summary=None, min_figures=4):
        # Offline by construction: nothing refers outside the page.
        self.assertNotRegex(html, r"<script|<link|<img|<iframe|@import|url\(|src=")
        self.assertIn("default-src 'none'", html)
        self.assertIn("base-uri 'none'; form-action 'none'", html)  # what default-src leaves
        for href in re.findall(r'href="([^"]*)"', html):
            self.assertTrue(href.startswith("#"), href)
            self.assertTrue(f'id="{href[1:]}"' in html, href)  # every link lands
        dom, console = self.render(html, name)
        self.assertEqual(console, [])
        # Every figure has a chart with a title and its text equivalent, or says why it has none.
        figures = re.findall(r"<figure id=\"([\w-]+)\"( class=\"none\")?>(.*?)</figure>", dom,
                             re.S)
        self.assertGreaterEqual(len(figures), min_figures)
        for fid, none, body in figures:
            if none:
                self.assertRegex(body, r'<p class="why">no chart: \S', fid)
            else:
                self.assertRegex(body, r"<svg[^>]*role=\"img\"", fid)
                self.assertRegex(body, r"<title id=\"[\w-]+-t\">\S", fid)
                self.assertRegex(body, r'<p class="alt">\S', fid)
        # The first screen's lines, word for word as the text report has them.
        for title, line in (text_summary or {}).items():
            self.assertIn(line, dom.replace("&amp;", "&").replace("&lt;", "<")
                          .replace("&gt;", ">").replace("&quot;", '"'), title)
        return dom, [f[0] for f in figures]

    def summary_lines(self, *args):
        """The first screen's lines (JSON's figures beside them, labels in full, are not)."""
        data_only = ("peak_phase", "peak_device", "saved_phase", "saved_against_phase")
        summary = self.report_json(*args)["summary"]
        return {k: v for k, v in summary.items()
                if isinstance(v, str) and len(v) < 300 and k not in data_only}

    def test_h100_fixtures(self):
        sizes = {}
        for name in sorted(f[:-6] for f in os.listdir(DATA) if f.endswith(".db.xz")):
            db = os.path.join(self.tmp, name + ".db")
            with lzma.open(os.path.join(DATA, name + ".db.xz")) as src, open(db, "wb") as dst:
                shutil.copyfileobj(src, dst)
            html = self.page(db)
            sizes[name] = len(html.encode())
            self.assertLess(sizes[name], 2 << 20, name)
            dom, ids = self.check_page(html, name, self.summary_lines(db))
            self.assertEqual([i for i in CHARTS if i not in ids], [], name)
            self.assertIn('id="table-kernels"', dom)
            self.assertIn('id="table-phases"', dom)
            # Memory over time has a line, and the Summary's peak marked on it.
            self.assertRegex(dom, r'(?s)<figure id="chart-memory">.*?<polyline .*?peak ', name)
            # Kernels per phase (the page asks for them as --by-phase): each phase's top, and
            # the table beside it per phase too; databases from before CPU time was read say so.
            phases = {p["label"] for p in self.report_json(db)["phases"] if p["kernels"]}
            fig = re.search(r'(?s)<figure id="chart-kernels">.*?</figure>', dom).group(0)
            self.assertIn("top 6 of each phase", fig)
            drawn = set(re.findall(r'<text[^>]*>([a-z_]+/[a-z0-9]+): ', fig))
            self.assertEqual(len(drawn), len(phases), (name, drawn, phases))
            self.assertIn("CUDA kernels (by phase)", dom)
            self.assertRegex(dom, r'<figure id="chart-cpu" class="none">.*?before infprof read')
            # Every series drawn: past the legend's colours the last one says how many share
            # it; a distribution per series (up to 12), none left out unsaid; a phase's one
            # unnamed series is named by its phase alone.
            series = [x for x in self.report_json(db)["series"]]
            fig = re.search(r'(?s)<figure id="chart-latency">.*?</figure>', dom).group(0)
            self.assertNotIn("(unnamed)", re.sub(r"(?s)<p class=\"alt\">.*", "", fig))
            if len(series) > 8:
                self.assertIn(" +%d more</text>" % (len(series) - 8), fig.replace("<title>", "</text>"))
            drawn = set(re.findall(r'<figure id="chart-dist-(\d+)"', dom))
            self.assertEqual(len(drawn), min(len(series), 12), name)
        # Two of them compared: the series both ran, side by side with the change.
        dbs = [os.path.join(self.tmp, n + ".db") for n in ("resnet50-b1-python-eager",
                                                           "resnet18-b8-python-cuda")]
        dom, ids = self.check_page(self.page(*dbs, command="compare"), "h100 compare",
                                   min_figures=1)
        fig = re.search(r'(?s)<figure id="chart-compare-latency">.*?</figure>', dom).group(0)
        self.assertRegex(fig, r"inference/bf16 \(unnamed\) p50: [0-9.]+ms -&gt; [0-9.]+ms"
                              r" \(-[0-9.]+%\)")
        fig = re.search(r'(?s)<figure id="chart-compare-kernels">.*?</figure>', dom).group(0)
        self.assertIn("the 12 that changed most", fig)
        print("html sizes:", sizes)

    MEASURE = """<script>
const out = [];
for (const svg of document.querySelectorAll("figure svg")) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBoundingClientRect();
    if (b.width > 0 && (b.left < box.left - 1 || b.right > box.right + 1))
      out.push(svg.closest("figure").id + ": " + t.textContent);
  }
}
document.body.setAttribute("data-clipped", JSON.stringify(out));
</script>"""

    def clipped(self, html, name):
        """The chart labels Chromium lays out past their chart's edge: the page with its
        Content-Security-Policy taken out and a script of ours that measures every <text>."""
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
        dom, console = self.render(html.replace("</body>", self.MEASURE + "</body>"), name)
        self.assertEqual(console, [])
        m = re.search(r'data-clipped="([^"]*)"', dom)
        self.assertIsNotNone(m, dom[:500])
        return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))

    def test_no_label_past_its_chart_and_a_log_scale_where_values_spread(self):
        # compare's page clipped its verdicts at the right edge ("no verdict: the new run's
        # iterations s"), and drew latency per series on a linear scale where one 390 ms p95 hid
        # every other bar (the H200 fixture's ResNet #2, a new input size every 8th call).
        base = os.path.join(self.tmp, "h200-a.db")
        with lzma.open(os.path.join(DATA, "..", "h200", "energy-cpu.db.xz")) as src, \
                open(base, "wb") as dst:
            shutil.copyfileobj(src, dst)
        new = os.path.join(self.tmp, "h200-b.db")
        shutil.copy(base, new)
        con = sqlite3.connect(new)
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'pid'")
        # The new run's ResNet iterations 20% slower for their second half: a level shift, so
        # its verdict is withheld with a long reason.
        con.execute("UPDATE iterations SET dur = dur * 12 / 10 WHERE label_id = (SELECT id FROM"
                    " strings WHERE value = 'ResNet') AND start > (SELECT avg(start) FROM"
                    " iterations)")
        con.commit()
        con.close()
        page = self.page(base, new, command="compare")
        self.assertEqual(self.clipped(page, "h200 compare"), [])
        fig = re.search(r'(?s)<figure id="chart-compare-latency">.*?</figure>', page).group(0)
        self.assertIn("latency (log scale)", fig)
        self.assertEqual(self.clipped(self.page(base), "h200 report"), [])

    def test_advice_fixtures_and_compare(self):
        dbs = {}
        for scenario in ("healthy", "eval", "dropped"):
            db = os.path.join(self.tmp, scenario + ".db")
            p = subprocess.run([prog("fixture_advice"), scenario, db], capture_output=True,
                               timeout=60, env={**{k: v for k, v in os.environ.items()
                                                   if not k.startswith("INFPROF_")},
                                                "INFPROF_ENERGY_MS": "0"})
            self.assertEqual(p.returncode, 0, p.stderr)
            dbs[scenario] = db
            self.check_page(self.page(db), scenario, self.summary_lines(db))
        dom, ids = self.check_page(self.page(dbs["healthy"], dbs["eval"], command="compare"),
                                   "compare", min_figures=1)
        self.assertIn("chart-compare", ids)
        self.assertIn("chart-compare-loop", ids)
        # Side by side, with the change: healthy's and eval's kernels differ by phase.
        for fid in ("chart-compare-latency", "chart-compare-memory", "chart-compare-kernels"):
            self.assertIn(fid, ids)
        fig = re.search(r'(?s)<figure id="chart-compare-latency">.*?</figure>', dom).group(0)
        self.assertRegex(fig, r"p50: ([0-9.]+[um]?s|not run) -&gt; ([0-9.]+[um]?s|not run)"
                              r" \((new|gone|[+-][0-9.]+%)\)")
        self.assertIn("<h1>infprof compare</h1>", dom)
        # Several processes together: the charts draw one run at a time, and say so.
        dom, ids = self.check_page(self.page(dbs["healthy"], dbs["eval"]), "multi",
                                   min_figures=1)
        self.assertEqual(ids, ["chart-runs"])
        self.assertIn("Summary (all processes)", dom)

    def test_a_phase_that_comes_back_is_a_band_each_time(self):
        # no_grad, inference_mode, then no_grad again: the bands behind the charts over time
        # were one per phase, first iteration to last, so no_grad's covered inference_mode's
        # loop between its two stretches.
        db = os.path.join(self.tmp, "back.db")
        self.sweep(db)
        con = sqlite3.connect(db)
        last = con.execute("SELECT max(start + dur) FROM iterations").fetchone()[0]
        first = con.execute("SELECT min(start) FROM iterations WHERE phase = 4").fetchone()[0]
        top = con.execute("SELECT max(id) FROM iterations").fetchone()[0]
        cols = [c[1] for c in con.execute("PRAGMA table_info(iterations)")]
        for row in con.execute("SELECT * FROM iterations WHERE phase = 4").fetchall():
            v = list(row)
            v[cols.index("id")] += top
            v[cols.index("start")] += last + 1000000 - first
            v[cols.index("nvtx")] = None
            con.execute(f"INSERT INTO iterations VALUES ({', '.join('?' * len(v))})", v)
        con.commit()
        con.close()
        page = self.page(db)
        fig = re.search(r'(?s)<figure id="chart-memory">.*?</figure>', page).group(0)
        bands = re.findall(r'<rect [^>]*fill="#(?:e9eef5|f3f3f3)"><title>([^<]*)</title>', fig)
        self.assertEqual(bands, ["no_grad/off", "inference/off", "no_grad/off"], fig[:2000])

    def test_long_names_cut_on_a_character_and_kept_apart(self):
        # Two series whose 300-character Cyrillic names differ at their end: the chart titles
        # were cut at 199 bytes, in the middle of a character, and read alike.
        db = os.path.join(self.tmp, "names.db")
        self.sweep(db)
        con = sqlite3.connect(db)
        for label in ("iteration batch=8", "iteration batch=32"):
            tail = label.split("=")[1]
            con.execute("UPDATE strings SET value = ? WHERE value = ?",
                        ("iteration " + "итерация " * 33 + "конец " + tail, label))
        con.commit()
        con.close()
        raw = self.cli("report", "--format", "html", db).out
        raw.decode("utf-8")  # strict: no half character anywhere
        titles = re.findall(r"<figcaption>Latency distribution, ([^<]*) \(steady iterations\)",
                            raw.decode())
        self.assertEqual(len(titles), 4, titles)
        self.assertEqual(len(set(titles)), 4, titles)
        # Cut in the middle, the tail kept: the hash the long label carries tells them apart.
        self.assertTrue(all(re.search(r" \.\.\. .*~[0-9a-f]{6}$", t) for t in titles), titles)

    def test_cpu_run(self):
        if sanitized():
            self.skipTest("a sanitized library cannot be preloaded into Python (the"
                          " pages of recorded databases are checked in this build)")
        script = os.path.join(self.dir, "cpu.py")
        with open(script, "w") as f:
            f.write(CPU_PROGRAM)
        r = self.run_prog([TORCH_PYTHON, script], timeout=300, INFPROF_OUTPUT="cpu.db")
        if b"No module named 'torch'" in r.err:
            self.skipTest("no Python with torch")
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("cpu.db")
        dom, ids = self.check_page(self.page(db), "cpu", self.summary_lines(db))
        # A CPU run: iterations, their distribution and the time between them are drawn; the GPU
        # charts say why they are not.
        for fid in ("chart-latency", "chart-dist-0", "chart-dist-1", "chart-between"):
            self.assertRegex(dom, fr'<figure id="{fid}"><figcaption>', fid)
        self.assertRegex(dom, r'<figure id="chart-kernels" class="none">.*?no CUDA kernel')
        self.assertIn("inference/off batch=16", dom)
        self.assertIn("chart-sweep\"><figcaption>", dom)  # batch 1 and 16: a sweep


if __name__ == "__main__":
    main()
