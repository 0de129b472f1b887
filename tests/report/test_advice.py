"""The Advice section on databases built by tests/progs/fixture_advice.c through the real writer:
each rule fires on the scenario built to trigger it, with the exact figures it measured, and stays
quiet on the healthy scenario, whose near misses sit just under every threshold. Every scenario's
report is held, section by section, to golden files in every output format the CLI has
registered (text, JSON, CSV, Markdown and HTML today, read from its help: a new format is held
without an edit here; golden/SECTION/SCENARIO.EXT, golden_util.py).

Regenerate the golden files after an intended change with
    INFPROF_UPDATE_GOLDEN=1 ctest -R report.   (or: python3 test_advice.py --update)
"""
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import unittest

import subprocess

from harness import Case, main, prog, resum_operators

sys.path.insert(0, os.path.dirname(__file__))
import golden_util  # noqa: E402

# Scenario -> the rules it must fire, in report order (docs/report.md).
SCENARIOS = {
    "healthy": [],
    "grad": [("grad_mode_in_inference", "grad | autocast off")],
    "autocast": [("autocast_fp32_compute", "no_grad | autocast fp16"),
                 ("autocast_fp32_compute", "inference_mode | autocast bf16")],
    "layout": [("layout_conversions", "inference_mode | autocast off")],
    "search": [("cudnn_search_repeats", None)],
    "nobench": [("cudnn_benchmark_off", None)],
    "eval": [("train_mode_in_inference", "inference_mode | autocast off")],
    "launch": [("launch_bound", "no_grad | autocast off"),
               ("launch_bound", "inference_mode | autocast off")],
    "pageable": [("pageable_copies", None)],
    "sync": [("synchronous_copies", None)],
    "dropped": [("records_dropped", None)],
    "compiled": [],
}
# Held to golden files too (their rules are tested elsewhere: TailCauses below): the sections of
# the slow iterations and their causes, the batch sweep, inference_mode against no_grad, the
# memory segments, energy, the operators, a server's requests and the recording windows, empty in
# every scenario above.
GOLDEN_ONLY = ["tail-malloc", "sweep", "sweep-energy", "sweep-ops", "sweep-server",
               "sweep-windows"]


def add_energy(db):
    """A GPU's energy readings every 0.5 ms, as NVML gives them (a cumulative counter, the power,
    the clocks): 300 W under no_grad, 270 W under inference_mode (the sweep's phase change at
    10 ms). The fixture's own readings are off (they differ by machine)."""
    con = sqlite3.connect(db)
    con.execute("INSERT INTO energy_gpus(gpu, cuda_device, name, uuid, mig, status,"
                " power_limit_mw) VALUES (0, 0, 'Fake H100', 'GPU-fake', 0, '', 700000)")
    mj = 1_000_000
    for i in range(41):
        t = i * 500_000
        watts = 300 if t < 10_000_000 else 270
        mj += watts // 2 if i else 0  # mJ in 0.5 ms
        con.execute("INSERT INTO energy_samples(gpu, t, kind, energy_mj, power_mw, sm_clock,"
                    " mem_clock, temp) VALUES (0, ?, 1, ?, ?, 1980, 2619, 50)",
                    (t, mj, watts * 1000))
    con.commit()
    con.close()


def add_operators(db):
    """PyTorch operators recorded on every call (INFPROF_OPERATORS=1) in each iteration of the
    sweep, at fixed times (a run's are the machine's): aten::linear (70% of the iteration, 10%
    its own) around aten::addmm (60%), then aten::relu (20%)."""
    con = sqlite3.connect(db)
    base = con.execute("SELECT coalesce(max(id), 0) FROM strings").fetchone()[0]
    for i, name in enumerate(["aten::linear", "aten::addmm", "aten::relu"]):
        con.execute("INSERT INTO strings(id, value) VALUES (?, ?)", (base + 1 + i, name))
    rows = con.execute("SELECT id, tid, phase, start, dur FROM iterations ORDER BY id").fetchall()
    for it, tid, phase, start, dur in rows:
        lin, mm, relu = dur * 70 // 100, dur * 60 // 100, dur * 20 // 100
        t = start + dur // 20
        for at, d, own, depth, name in ((t, lin, lin - mm, 0, 1),
                                        (t + (lin - mm) // 2, mm, mm, 1, 2),
                                        (t + lin, relu, relu, 0, 3)):
            con.execute("INSERT INTO torch_operators(start, dur, self, tid, phase, iter, depth,"
                        " name_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (at, d, own, tid, phase, it, depth, base + name))
    resum_operators(con)
    con.commit()
    con.close()


def add_server(db):
    """The sweep's inference_mode batch=8 series served from 4 threads, every other request
    starting half a request early (two in flight at once): a server's Requests section."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, tid, start, dur FROM iterations WHERE phase = 7 AND batch = 8"
                       " ORDER BY id").fetchall()
    for k, (it, tid, start, dur) in enumerate(rows):
        con.execute("UPDATE iterations SET tid = ?, start = ? WHERE id = ?",
                    (tid + 1 + k % 4, start - (k % 2) * dur // 2, it))
    con.commit()
    con.close()


def add_windows(db):
    """Two recording windows, from the run's start to `infprof window` at 5 ms (the no_grad
    iterations), and from `infprof window` at 9 ms to the run's end at 20 ms (the inference_mode
    ones). The writer closes the last window as it writes it, 0.9 ms after the run's end was taken
    here: the report holds it to the run ("30.19ms of the run's 29.41ms" once)."""
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = 20000000 WHERE key = 'duration_ns'")  # a run's varies
    con.execute("DELETE FROM windows")
    con.execute("INSERT INTO windows(id, start, end, opened_by, closed_by, open_at_close)"
                " VALUES (1, 0, 5000000, 1, 4, 0), (2, 9000000, 20900000, 4, 8, 0)")
    con.commit()
    con.close()


# A golden-only scenario built from another's run (fixture scenario, what is added after).
DERIVED = {"sweep-energy": ("sweep", add_energy), "sweep-ops": ("sweep", add_operators),
           "sweep-server": ("sweep", add_server), "sweep-windows": ("sweep", add_windows)}


def registered_formats():
    """Every output format the CLI has registered (report/render/formats.c), read from its help:
    a new one goes through the golden files without an edit here (text's files end in .txt)."""
    from harness import BUILD
    r = subprocess.run([os.path.join(BUILD, "bin", "infprof"), "report", "--help"],
                       capture_output=True, text=True)
    m = re.search(r"\[--format ([a-z|]+)\]", r.stdout + r.stderr)
    if not m:
        raise RuntimeError("no --format list in infprof report --help")
    return {f: "txt" if f == "text" else f for f in m.group(1).split("|")}


FORMATS = registered_formats()
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def setUpModule():
    global DBDIR
    DBDIR = tempfile.mkdtemp(prefix="infprof-advice-")
    for name in list(SCENARIOS) + GOLDEN_ONLY:
        scenario, then = DERIVED.get(name, (name, None))
        p = subprocess.run([prog("fixture_advice"), scenario, name + ".db"], cwd=DBDIR,
                           capture_output=True, timeout=60,
                           env={**{k: v for k, v in os.environ.items()
                                   if not k.startswith("INFPROF_") and k != "LD_PRELOAD"},
                                # GPUs and RAPL differ by machine: no energy readings here
                                "INFPROF_ENERGY_MS": "0"})
        if p.returncode != 0:
            raise RuntimeError(f"fixture_advice {name}: {p.returncode} {p.stderr.decode()}")
        if then:
            then(os.path.join(DBDIR, name + ".db"))


def tearDownModule():
    shutil.rmtree(DBDIR, ignore_errors=True)


def db_of(name):
    return os.path.join(DBDIR, name + ".db")


class AdviceCase(Case):
    def raw(self, name, fmt, db=None):
        r = self.cli("report", "--format", fmt, db or db_of(name))
        self.assertEqual(r.rc, 0, r.err.decode())
        self.assertEqual(r.err, b"")
        return r.out.decode()

    def report(self, name, fmt="json", db=None):
        out = self.raw(name, fmt, db)
        return json.loads(out) if fmt == "json" else out

    def advice(self, name, rule=None, db=None):
        rows = self.report(name, db=db)["advice"]
        return [a for a in rows if a["rule"] == rule] if rule else rows


class Golden(AdviceCase):
    """Every scenario's report, section by section (`--section KEY` for every key of its JSON,
    golden/KEY/SCENARIO.EXT), normalised only where a run legitimately differs: a new section adds
    its own files and changes no other."""


def _golden_test(name):
    def test(self):
        # The timelines' buckets follow the run's own length, which a fixture run takes in real
        # time: held to the run's figures in test_h100_fixtures instead.
        keys = [k for k in self.report(name)
                if k != "json_schema_version" and not k.endswith("_timeline")]
        self.assertGreater(len(keys), 20)
        for key in keys:
            for fmt, ext in FORMATS.items():
                with self.subTest(section=key, format=fmt):
                    r = self.cli("report", "--format", fmt, "--section", key, db_of(name))
                    self.assertEqual(r.rc, 0, r.err.decode())
                    got = golden_util.normalise(fmt, r.out.decode(), key)
                    golden_util.check(self, os.path.join(GOLDEN, key, f"{name}.{ext}"), got)
        # No file left for a section the report no longer has.
        for key in os.listdir(GOLDEN):
            if os.path.isdir(os.path.join(GOLDEN, key)) and key not in keys:
                self.assertFalse(os.path.exists(os.path.join(GOLDEN, key, f"{name}.json")),
                                 f"golden/{key} is for a section the report no longer has")
    return test


for _name in list(SCENARIOS) + GOLDEN_ONLY:
    setattr(Golden, f"test_{_name.replace('-', '_')}", _golden_test(_name))


class Fires(AdviceCase):
    def test_each_scenario_fires_exactly_its_rules(self):
        for name, want in SCENARIOS.items():
            with self.subTest(scenario=name):
                got = [(a["rule"], a["phase"]) for a in self.advice(name)]
                self.assertEqual(got, want)

    def test_every_rule_has_its_numbers_and_a_setting(self):
        for name in SCENARIOS:
            for a in self.advice(name):
                self.assertIsInstance(a["evidence"], dict)
                self.assertTrue(a["evidence"], a)
                self.assertTrue(a["try"], a)
                self.assertTrue(a["finding"].endswith("."), a)

    def test_grad_mode(self):
        [a] = self.advice("grad", "grad_mode_in_inference")
        e = a["evidence"]
        self.assertEqual((e["iterations"], e["forward_kernels"], e["backward_kernels"]), (5, 15, 0))
        self.assertEqual(e["compared_with"], "inference_mode | autocast off")
        self.assertEqual((e["latency_p50_ns"], e["compared_latency_p50_ns"]), (60000, 40000))
        self.assertEqual(e["latency_ratio"], 1.5)
        self.assertEqual((e["peak_allocated_bytes"], e["compared_peak_allocated_bytes"]),
                         (10 << 20, 8 << 20))
        # 20 us more per iteration, 5 iterations; 2 MiB of activations kept for autograd.
        self.assertEqual((a["saving_ns"], a["saving_bytes"]), (100000, 2 << 20))
        self.assertIn("p50 latency 60.00us against 40.00us in inference/off (1.50x)", a["finding"])

    def test_triton_kernels_are_unknown_not_fp32(self):
        # 90 us of Triton GEMM (type unknown) and 30 us of cuBLAS bf16 GEMM: "100% bf16" of the
        # 25% whose type is known, never "25% bf16"; the pointwise kernel is no convolution.
        r = self.report("compiled")
        self.assertEqual(r["summary"]["autocast"],
                         "inference/bf16 100%* of GEMM and convolution time in the type asked"
                         " for; * of the time whose type the kernel names say: inference/bf16"
                         " 25% (the rest is Triton kernels, which name no dtype)")
        rows = {x["operation"]: x for x in r["precision"]}
        self.assertEqual((rows["gemm"]["bf16"], rows["gemm"]["unknown"]), (25, 75))
        self.assertNotIn("conv", rows)
        self.assertIn("every Triton kernel", self.raw("compiled", "text"))

    def test_autocast(self):
        cpu, cuda = self.advice("autocast", "autocast_fp32_compute")
        self.assertEqual((cuda["evidence"]["cuda_autocast"], cuda["evidence"]["fp32_ns"],
                          cuda["evidence"]["bf16_ns"], cuda["evidence"]["fp32_share_pct"]),
                         (1, 120000, 30000, 80))
        self.assertEqual((cpu["evidence"]["cuda_autocast"], cpu["evidence"]["tf32_ns"],
                          cpu["evidence"]["fp16_ns"]), (0, 30000, 10000))
        self.assertIn("CPU only", cpu["finding"])
        self.assertIn("kCUDA", cpu["try"])
        self.assertIn("kBFloat16", cuda["try"])

    def test_layout(self):
        [a] = self.advice("layout", "layout_conversions")
        e = a["evidence"]
        self.assertEqual((e["conversion_kernels"], e["conversion_ns"], e["conv_ns"]),
                         (6, 24000, 120000))
        self.assertEqual(a["saving_ns"], 24000)
        self.assertIn("channels_last", a["try"].lower())

    def test_cudnn_search_repeats(self):
        [a] = self.advice("search", "cudnn_search_repeats")
        e = a["evidence"]
        self.assertEqual((e["searches"], e["late_searches"], e["late_search_ns"],
                          e["researched_shapes"], e["late_shapes"]), (3, 2, 55000, 1, 1))
        self.assertIn("setBenchmarkCuDNN(false)", a["try"])

    def test_cudnn_benchmark_off(self):
        [a] = self.advice("nobench", "cudnn_benchmark_off")
        e = a["evidence"]
        self.assertEqual((e["conv_executions"], e["searches"], e["heuristic_queries"]), (6, 0, 1))
        self.assertIn("setBenchmarkCuDNN(true)", a["try"])

    def test_train_mode(self):
        [a] = self.advice("eval", "train_mode_in_inference")
        e = a["evidence"]
        self.assertEqual((e["cudnn_bn_training_calls"], e["bn_statistics_kernels"],
                          e["dropout_kernels"], e["dropout_kernel_ns"]), (2, 2, 2, 10000))
        self.assertIn("eval()", a["try"])

    def test_launch_bound(self):
        wall, iters = self.advice("launch", "launch_bound")
        # No iterations: the phase's wall time is the window.
        e = wall["evidence"]
        self.assertEqual((e["window"], e["window_ns"], e["gpu_busy_ns"], e["kernels"],
                          e["kernels_under_10us"], e["kernels_over_100us"]),
                         ("phase", 4020000, 600000, 200, 200, 0))
        self.assertAlmostEqual(e["gpu_busy_pct"], 100 * 600000 / 4020000, places=3)
        self.assertIn("CUDA graph", wall["try"])
        # Iterations: the steady ones' union (2 ms; no warm-up here), not the phase's 9 ms, is
        # the window.
        e = iters["evidence"]
        self.assertEqual((e["window"], e["window_ns"], e["gpu_busy_ns"], e["kernels"]),
                         ("steady iterations", 2000000, 300000, 100))
        self.assertEqual(e["gpu_busy_pct"], 15)

    def test_pageable(self):
        [a] = self.advice("pageable", "pageable_copies")
        e = a["evidence"]
        self.assertEqual((e["copies"], e["to_device"], e["from_device"], e["bytes"], e["copy_ns"],
                          e["gpu_busy_ns"], e["copies_outside_iterations"]),
                         (4, 2, 2, 2 * (3 << 20) + 2 * 4096, 24000, 64000, 0))

    def test_sync(self):
        [a] = self.advice("sync", "synchronous_copies")
        e = a["evidence"]
        self.assertEqual((e["calls"], e["by_function"]),
                         (12, {"cudaMemcpy": 11, "cudaMemcpyToSymbol": 1}))

    def test_sync_at_default_settings(self):
        # No CUDA API records (the default): the calls are counted from the issue callback's
        # events, and the host time is said to be unknown rather than 0.
        r = self.run_prog([prog("fixture_advice"), "sync-default", "s.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        [a] = self.advice(None, "synchronous_copies", db=r.db("s.db"))
        e = a["evidence"]
        self.assertEqual((e["calls"], e["by_function"], e["host_ns"]),
                         (12, {"cudaMemcpy": 11, "cudaMemcpyToSymbol": 1}, None))
        self.assertIn("host time was not recorded", a["finding"])
        self.assertEqual([x["rule"] for x in self.advice(None, db=r.db("s.db"))],
                         ["synchronous_copies"])

    def test_dropped(self):
        [a] = self.advice("dropped", "records_dropped")
        e = a["evidence"]
        self.assertEqual((e["cupti_dropped_records"], e["cupti_buffers_refused"],
                          e["dropped_events"]), (5, 1, 0))
        self.assertIn("INFPROF_CUPTI_BUFFERS (now 2)", a["try"])


class TailCauses(AdviceCase):
    """issue 52: each GPU-side cause of a tail, from the slow iterations' own records against the
    typical ones (fixture_advice's tail-* scenarios: 3 of 30 iterations take 250 us instead of
    100, with a 150 us cudaMalloc, cudaDeviceSynchronize, cudaMemcpy or cuDNN search inside, or
    nothing recorded), and a case where none of them applies."""

    WANT = {"malloc": ("cuda_malloc", "cudaMalloc and cudaFree"),
            "sync": ("synchronisation", "CUDA synchronisations"),
            "copy": ("copies", "cudaMemcpy"),
            "search": ("cudnn_search", "cuDNN autotuning")}

    ACTS = {"malloc": "run the largest input once before the loop",
            "sync": "look for .item(), .cpu() or a synchronize in the loop",
            "copy": "pin the host tensor and copy with non_blocking=True",
            "search": "fix the input size, or turn cudnn.benchmark off for this model"}

    def test_each_gpu_cause_and_none(self):
        for what in list(self.WANT) + ["none"]:
            with self.subTest(what=what):
                r = self.run_prog([prog("fixture_advice"), "tail-" + what, what + ".db"],
                                  preload=False)
                self.assertEqual(r.rc, 0, r.err)
                report = self.report_json(r.db(what + ".db"))
                [tail] = report["tails"]
                self.assertEqual(tail["slow_iterations"], 3, tail)
                causes = [c["cause"] for c in report["tail_causes"]]
                if what == "none":  # none of the four: the symptom only, said as such
                    self.assertFalse(set(causes) & {c for c, _ in self.WANT.values()}, causes)
                    self.assertEqual(causes, ["gpu_idle"], causes)
                    continue
                key, words = self.WANT[what]
                first = report["tail_causes"][0]
                self.assertEqual(first["cause"], key, report["tail_causes"])
                self.assertGreaterEqual(first["share_pct"], 95, first)
                self.assertNotIn("gpu_idle", causes)  # explained, so not the symptom too
                self.assertIn(words, report["summary"]["tail"])
                self.assertIn(self.ACTS[what], report["summary"]["tail"])  # what to do


    def test_a_lower_gpu_clock(self):
        # The slow iterations' kernel ran 3.5x as long, and the GPU's SM clock read 565 MHz then
        # against 1980 MHz (energy readings added here, one at each iteration's start): the
        # clock is named, with the share of the extra the lower clock explains, before "the same
        # kernels, longer".
        r = self.run_prog([prog("fixture_advice"), "tail-clock", "c.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        db = r.db("c.db")
        con = sqlite3.connect(db)
        con.execute("INSERT INTO energy_gpus(gpu, cuda_device, name, uuid, mig, status)"
                    " VALUES (0, 0, 'Fake H100', '', 0, '')")
        for i in range(31):
            slow = i in (8, 16, 24)
            con.execute("INSERT INTO energy_samples(gpu, t, kind, sm_clock) VALUES (0, ?, 1, ?)",
                        (100_000 + i * 300_000, 565 if slow else 1980))
        con.commit()
        con.close()
        report = self.report_json(db)
        causes = report["tail_causes"]
        self.assertEqual(causes[0]["cause"], "gpu_clock", causes)
        self.assertGreaterEqual(causes[0]["share_pct"], 90, causes)
        self.assertIn("565 MHz", causes[0]["detail"])
        self.assertIn("the GPU's clock lowered", report["summary"]["tail"])
        self.assertIn("the Energy section names the reasons", report["summary"]["tail"])
        # The same readings at one clock throughout: no clock cause, the kernels longer.
        con = sqlite3.connect(db)
        con.execute("UPDATE energy_samples SET sm_clock = 1980")
        con.commit()
        con.close()
        causes = [c["cause"] for c in self.report_json(db)["tail_causes"]]
        self.assertNotIn("gpu_clock", causes)
        self.assertEqual(causes[0], "longer_kernels", causes)


class Quiet(AdviceCase):
    """The healthy run holds a near miss for each rule: the rule saw the evidence and stayed
    quiet because it is under the threshold, not because it was missing."""

    def q(self, sql):
        return self.query(db_of("healthy"), sql)

    def test_no_rule_fires(self):
        self.assertEqual(self.advice("healthy"), [])
        text = self.report("healthy", "text")
        self.assertIn("Advice (rules and thresholds: docs/report.md)\n  (none)\n"
                      "  no rule found evidence above its threshold\n", text)

    def test_the_near_misses_are_there(self):
        # A grad phase with forward work beside a no-grad phase, but with its backward.
        self.assertEqual(self.q("SELECT count(*) FROM kernels k JOIN strings s ON s.id = k.name_id"
                                " WHERE k.phase = 1 AND s.value LIKE '%Backward%'"), [(2,)])
        # One NCHW->NHWC conversion (under 2 and 5% of convolution time).
        self.assertEqual(self.q("SELECT count(*) FROM kernels k JOIN strings s ON s.id ="
                                " k.name_id WHERE s.value LIKE '%nchwToNhwc%'"), [(1,)])
        # The weights from pageable memory before any iteration (not counted), one small input
        # from pageable memory in an iteration (under 1% of the GPU's busy time); 4 cudaMemcpy
        # calls (under 10).
        self.assertEqual(self.q("SELECT start, dur FROM memcpy WHERE src_kind = 1 ORDER BY 1"),
                         [(20000, 100000), (501000, 1000)])
        self.assertEqual(self.q("SELECT min(start) FROM iterations"), [(500000,)])
        self.assertEqual(self.q("SELECT sum(busy_ns) FROM phase_gpu"), [(606000,)])  # 1 us is 0.17% of it
        self.assertEqual(self.q("SELECT a.count FROM api_summary a JOIN strings s ON s.id ="
                                " a.name_id WHERE s.value = 'cudaMemcpy'"), [(4,)])
        # cuDNN searched once, during warm-up; batch-norm in inference mode only.
        f = self.report("healthy")["cudnn_findings"]
        self.assertEqual((f["algorithm_searches"], f["late_searches"],
                          f["bn_training_at_inference"]), (1, 0, 0))


    def test_grad_iterations_without_kernels_are_no_evidence(self):
        # The same iterations in grad mode with no CUDA activity recorded (a CPU run): a training
        # loop would look the same, so the rule must not claim "no backward kernel".
        db = os.path.join(self.dir, "cpu.db")
        shutil.copy(db_of("grad"), db)
        con = sqlite3.connect(db)
        con.executescript("DELETE FROM kernel_rows; DELETE FROM kernel_summary;"
                          " UPDATE meta SET value = 'off: no CUDA' WHERE key = 'collector.cupti';")
        con.close()
        r = self.report(None, "json", db)
        self.assertEqual([p["iterations"] for p in r["phases"]], [5, 5])
        self.assertEqual(r["advice"], [])


class Rendering(AdviceCase):
    def test_text_fits_100_columns_and_wraps_without_loss(self):
        for name in SCENARIOS:
            text = self.report(name, "text")
            for line in text.splitlines():
                self.assertLessEqual(len(line), 100, (name, line))
            block = text[text.index("\nAdvice ("):]
            joined = " ".join(l.strip() for l in block.splitlines())
            for a in self.advice(name):
                self.assertIn(a["finding"], joined)
                self.assertIn("Try: " + a["try"] + ".", joined)

    def test_csv_and_md_carry_the_rows(self):
        csv = self.report("grad", "csv")
        self.assertIn("# advice\nrule,phase,finding,evidence,try,saving_ns,saving_bytes\n"
                      '"grad_mode_in_inference","grad | autocast off",', csv)
        md = self.report("grad", "md")
        self.assertIn("| Rule | Phase | Finding | Try | Measured cost |", md)
        self.assertIn("| grad_mode_in_inference | grad/off | grad/off ran 5 iterations", md)

    def test_program_strings_are_escaped(self):
        # An API name is a string from the database: make it hostile and read the report.
        db = os.path.join(self.dir, "evil.db")
        shutil.copy(db_of("sync"), db)
        con = sqlite3.connect(db)
        con.execute("UPDATE strings SET value = 'cudaMemcpy\x1b[2J\"x' WHERE value = 'cudaMemcpy'")
        con.commit()
        con.close()
        text = self.report(None, "text", db)
        self.assertNotIn("\x1b", text)
        self.assertIn("cudaMemcpy\\x1b[2J\"x", text)
        for line in text.splitlines():
            self.assertLessEqual(len(line), 100, line)
        [a] = self.report(None, "json", db)["advice"]
        self.assertEqual(a["evidence"]["by_function"]["cudaMemcpy\x1b[2J\"x"], 11)
        for fmt in ("csv", "md"):
            self.assertNotIn("\x1b", self.report(None, fmt, db))

    def test_a_name_too_long_for_the_evidence_keeps_it_valid(self):
        db = os.path.join(self.dir, "long.db")
        shutil.copy(db_of("sync"), db)
        con = sqlite3.connect(db)
        con.execute("UPDATE strings SET value = 'cudaMemcpyToSymbol' || ? WHERE value ="
                    " 'cudaMemcpyToSymbol'", ("\u00e9" * 3000,))
        con.commit()
        con.close()
        [a] = self.report(None, "json", db)["advice"]  # parses: the evidence is whole JSON
        self.assertEqual((a["evidence"]["calls"], a["evidence"]["by_function"]),
                         (12, {"cudaMemcpy": 11}))
        self.assertIn("(cudaMemcpy 11, ...)", a["finding"])
        # The whole text is valid UTF-8: long names are shortened between characters.
        text = self.cli("report", db).out.decode("utf-8")
        block = text[text.index("\nAdvice ("):]
        self.assertIn("(cudaMemcpy 11, ...)", block)
        for line in block.splitlines():
            self.assertLessEqual(len(line), 100, line)


class SampledOperators(AdviceCase):
    def test_an_estimate_past_its_iterations_own_time_is_held_to_it(self):
        # Sampled operators (1 iteration in 4): the captured iterations happened to be the slow
        # ones, 2 ms against 80 us, their operators 95% of them; scaled to every iteration the
        # estimate put more operator time in the phase than its iterations lasted (5.73 s in a
        # phase of 4.78 s on a DataLoader loop). Held to the iterations' own time, and said.
        db = os.path.join(self.dir, "sampled.db")
        shutil.copy(db_of("sweep"), db)
        con = sqlite3.connect(db)
        for key, value in (("torch_operators_mode", "sampled"), ("torch_operators_every", "4"),
                           ("torch_operators_budget_pct", "0")):
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        sid = con.execute("SELECT coalesce(max(id), 0) + 1 FROM strings").fetchone()[0]
        con.execute("INSERT INTO strings(id, value) VALUES (?, 'aten::addmm')", (sid,))
        rows = con.execute("SELECT id, tid, phase, start FROM iterations WHERE phase = 4 AND"
                           " batch = 8 ORDER BY id").fetchall()
        for it, tid, phase, start in rows[1::4]:
            con.execute("UPDATE iterations SET dur = 2000000 WHERE id = ?", (it,))
            con.execute("INSERT INTO torch_operator_windows(start, dur, iter, tid, phase)"
                        " VALUES (?, 2000000, ?, ?, ?)", (start, it, tid, phase))
            con.execute("INSERT INTO torch_operators(start, dur, self, tid, phase, iter, depth,"
                        " name_id) VALUES (?, 1900000, 1900000, ?, ?, ?, 0, ?)",
                        (start + 50000, tid, phase, it, sid))
        resum_operators(con)
        con.commit()
        con.close()
        report = self.report("sampled", db=db)
        ph, = [x for x in report["operator_phases"] if x["phase"] == "no_grad | autocast off"]
        lat = sum(i["latency_ns"] for i in report["iterations"]
                  if i["phase"] == "no_grad | autocast off")
        self.assertEqual(ph["self_cpu_ns"], lat)  # held to it: 3 x 1.9 ms x 24 / 3 unheld
        op, = [x for x in report["operators"] if x["phase"] == "no_grad | autocast off"]
        self.assertLessEqual(op["self_cpu_ns"], lat)
        text = self.report("sampled", "text", db=db)
        self.assertRegex(text, r"held\s+to\s+its\s+iterations'\s+own\s+time\s+\(the\s+captured"
                               r"\s+ones\s+ran\s+long,\s+the\s+scaled\s+estimate\s+past\s+it\):"
                               r"\s+no_grad/off")


class Processes(AdviceCase):
    def test_no_straggler_among_different_work_and_one_band_everywhere(self):
        # Three unrelated programs once read "Straggler pid 25180: 13.70x the median process's
        # 3.51ms", the median a phase pooling two batch sizes; and the Processes note gave its
        # band without the top process ("0.05-0.05x" beside the Summary's "0.05-1.95x").
        dbs = [db_of(n) for n in ("sweep", "healthy", "tail-malloc")]
        r = self.cli("report", "--format", "json", *dbs)
        self.assertEqual(r.rc, 0, r.err)
        job = json.loads(r.out)["job"]
        self.assertIsNone(job["straggler_process"], job)
        self.assertRegex(job["straggler"], r"^none named: their p50s spread [0-9.]+-[0-9.]+x the"
                                           r" median's \((their main phases differ|a main phase"
                                           r" pools several)", job)
        text = self.cli("report", *dbs, COLUMNS="200").out.decode()
        band = re.search(r"their p50s spread ([0-9.]+-[0-9.]+x)", text).group(1)
        self.assertRegex(text, r"every rank's p50 within " + re.escape(band) + " the median")

    def ranks(self, slow):
        """8 copies of one run, each its own pid, rank k's iterations slowed by slow.get(k)."""
        dbs = []
        for k in range(8):
            db = os.path.join(self.dir, f"rank{k}.db")
            shutil.copy(db_of("healthy"), db)
            con = sqlite3.connect(db)
            con.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (200000 + k,))
            # a spread the machine makes (1.00-1.03x), the slow ones on top of it
            f = (1 + 0.004 * k) * slow.get(k, 1)
            con.execute("UPDATE iterations SET dur = CAST(dur * ? AS INTEGER)", (f,))
            con.commit()
            con.close()
            dbs.append(db)
        r = self.cli("report", "--format", "json", *dbs)
        self.assertEqual(r.rc, 0, r.err)
        report = json.loads(r.out)
        return dbs, report["job"], {row["process"]: row for row in report["processes"]}

    def test_several_alike_slow_ranks_are_named_together_not_one_of_them(self):
        # CI once: ranks 2, 3 and 5 of 8 at 8.47, 8.52 and 8.50 ms by their own timers, the
        # others 4.1-4.4: the Summary named rank 5 alone "1.94x the median (the others
        # 0.90-1.94x)", another rank beside it at 1.94x.
        dbs, job, rows = self.ranks({2: 1.95, 3: 1.96, 5: 1.94})
        self.assertIsNone(job["straggler_process"], job)
        self.assertRegex(job["straggler"], r"^3 processes stand out together: p50 1\.9[0-9]-1\.9"
                                           r"[0-9]x the median process's [0-9.]+(us|ms) \(", job)
        for k in (2, 3, 5):
            self.assertIn(f"pid {200000 + k}", job["straggler"])
        out = {p: r["stands_out"] for p, r in rows.items()}
        self.assertEqual(sorted(p for p, s in out.items() if s), sorted(
            p for p in out if any(f"pid {200000 + k}" in p for k in (2, 3, 5))), out)
        self.assertEqual({s for s in out.values() if s}, {"slow, 1 of 3 alike"}, out)
        text = self.cli("report", *dbs).out.decode()
        self.assertIn("3 processes stand out together", text)

    def test_the_slowest_of_two_slow_ranks_is_named_when_it_is_clearly_slowest(self):
        dbs, job, rows = self.ranks({2: 1.5, 6: 2.0})
        self.assertIn(f"pid {200006}", job["straggler_process"], job)
        self.assertRegex(job["straggler"], r"the others 0\.9[0-9]-1\.[45][0-9]x", job)


class Requests(AdviceCase):
    def test_every_thread_of_a_server_is_counted(self):
        # A ThreadingHTTPServer serves each connection on a thread of its own: 200 threads read
        # "Threads 64" (a fixed list that stopped there) with no word of a cap.
        db = os.path.join(self.dir, "many.db")
        shutil.copy(db_of("sweep-server"), db)
        con = sqlite3.connect(db)
        cols = [c[1] for c in con.execute("PRAGMA table_info(iterations)")]
        row = con.execute("SELECT * FROM iterations WHERE phase = 7 AND batch = 8 ORDER BY id"
                          " LIMIT 1").fetchone()
        last = con.execute("SELECT max(start + dur) FROM iterations").fetchone()[0]
        for k in range(200):
            v = list(row)
            v[cols.index("id")], v[cols.index("tid")] = 10000 + k, 900000 + k
            v[cols.index("start")], v[cols.index("nvtx")] = last + 1000 + k * 40000, None
            con.execute(f"INSERT INTO iterations VALUES ({', '.join('?' * len(v))})", v)
        con.commit()
        con.close()
        req, = self.report("many", db=db)["requests"]
        self.assertEqual((req["threads"], req["requests"]), (204, 212), req)


if __name__ == "__main__":
    golden_util.UPDATE = golden_util.UPDATE or "--update" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--update"]
    main()
