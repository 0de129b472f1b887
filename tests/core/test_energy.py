"""The energy collector (docs/energy.md) against a stand-in libnvidia-ml.so.1
(tests/progs/stub_nvml.c) whose counters follow a script: tests/progs/energy_app.c runs two
phases at known power, clocks and throttle reasons, and the report's figures must equal the
script's; phase changes are read at their edges; each failure (no NVML, no energy counter or
function, permission, MIG) gives its documented reason; the sampler never runs on a program
thread."""
import os
import shutil
from harness import LIB, Case, main, prog

STUBS = os.path.dirname(prog("energy_app"))
STUB = os.path.join(STUBS, "stubnvml", "libnvidia-ml.so.1")
STUB_OLD = os.path.join(STUBS, "stubnvml_old", "libnvidia-ml.so.1")
NO_GRAD, INFERENCE = "no_grad | autocast off", "inference_mode | autocast off"
# The script (energy_app.c): per phase, watts, SM MHz, throttled share, 5 iterations of 60 ms.
SCRIPT = {NO_GRAD: (100.0, 1500.0, 0.0), INFERENCE: (300.0, 1200.0, 100.0)}
BATCH = 8


class Energy(Case):
    def app(self, stub=STUB, period=1000, iterations=None, **env):
        """Runs the scripted program; a period longer than the whole run leaves only the start,
        the phase changes and the end as readings, so every figure rests on the edges."""
        self.db = os.path.join(self.dir, "e.db")
        self.tids = os.path.join(self.dir, "tids")
        self.log = os.path.join(self.dir, "nvml.log")
        args = [str(iterations)] if iterations else []
        r = self.run_prog([prog("energy_app"), self.db, STUB, self.tids] + args, preload=False,
                          INFPROF_NVML_PATH=stub, INFPROF_ENERGY_MS=period,
                          STUB_NVML_LOG=self.log, **{"INFPROF_NVML": "start", **env})
        self.assertEqual(r.rc, 0, r.err)
        return r

    def rows(self):
        return {(e["phase"], e["device"]): e for e in self.report_json(self.db)["energy"]}

    def edge_delay(self, db):
        """The longest gap between a phase change and the first reading after it."""
        return max(min(t - s for (t,) in self.query(db, "SELECT t FROM energy_samples"
                                                        " WHERE gpu = 1 AND t >= ?", s))
                   for (s,) in self.query(db, "SELECT start FROM phase_spans"
                                              " WHERE phase IN (4, 7)"))

    def misread(self, db):
        """The largest share of a phase whose readings may be the other phase's: twice the edge
        delay over the shorter phase (a loaded machine delays the sampler's wake-up)."""
        secs = min(e["seconds"] for e in self.report_json(db)["energy"] if e["device"] == "cuda:1")
        return 2 * self.edge_delay(db) / 1e9 / secs

    def assertNear(self, got, want, rel, what):
        self.assertIsNotNone(got, what)
        self.assertLessEqual(abs(got - want), rel * want + 1e-9, f"{what}: {got} vs {want}")

    # ---- the figures equal the script's -------------------------------------------------------

    def test_per_phase_figures_equal_the_script(self):
        self.app()
        rows = self.rows()
        # J per iteration is over the steady iterations (warm-up apart, as every figure): the
        # expected values use their mean, not every iteration's (a loaded machine's sleeps vary).
        ids = {NO_GRAD: 4, INFERENCE: 7}
        lat = {ids[p["label"]]: p["latency_mean_ns"] for p in self.report_json(self.db)["phases"]
               if p["label"] in ids}
        # The one inexactness: the edge reading comes a little after the phase change (the
        # sampler's wake-up, at most a 1 ms gap after the previous reading), and that instant is
        # counted at the old values. Bound it by the delay the database shows.
        delay = self.edge_delay(self.db)
        self.assertLess(delay, 30_000_000)  # read at the edge, not at the next period (1 s)
        series = {s["phase"]: s for s in self.report_json(self.db)["series"]}
        for label, (watts, sm, throttled) in SCRIPT.items():
            e = rows[(label, "cuda:1")]
            off = 2 * delay / 1e9 / e["seconds"]  # the share of the phase that may be misread
            self.assertNear(e["avg_power_w"], watts, 0.005 + 3 * off, label + " avg W")
            self.assertNear(e["energy_j"], watts * e["seconds"], 0.005 + 3 * off, label + " J")
            self.assertEqual(e["peak_power_w"], watts, label)
            self.assertNear(e["sm_clock_mhz"], sm, 0.005 + off, label + " SM MHz")
            self.assertLessEqual(abs(e["throttled_pct"] - throttled), 0.5 + 100 * off, label)
            self.assertEqual(e["source"], "counter")
            phase = 4 if label == NO_GRAD else 7
            per_iter = watts * lat[phase] / 1e9
            tol = 0.02 + 3 * off
            self.assertNear(e["j_per_iteration"], per_iter, tol, label + " J/iter")
            self.assertNear(e["mj_per_item"], per_iter * 1000 / BATCH, tol, label + " mJ/item")
            self.assertNear(e["items_per_j"], BATCH / per_iter, tol, label + " items/J")
            # The phase's one series: the same figures, per series (what compare holds).
            s = series[label]
            self.assertEqual(s["energy_device"], "cuda:1")
            self.assertNear(s["j_per_iteration"], e["j_per_iteration"], 0.001, label + " series")
            self.assertNear(s["mj_per_item"], e["mj_per_item"], 0.001, label + " series mJ")
        self.assertEqual(rows[(INFERENCE, "cuda:1")]["reasons"], 0x4)  # SW power cap
        ratio = self.report_json(self.db)["energy_vs_baseline"]
        self.assertEqual(len(ratio), 1, ratio)
        # 3x the power, times whatever the iterations' lengths differ by (sleeps under load).
        self.assertNear(ratio[0]["energy_ratio"], 3.0 * lat[7] / lat[4],
                        0.02 + 3 * self.misread(self.db), "energy ratio")
        p50 = {ids[p["label"]]: p["latency_p50_ns"] for p in self.report_json(self.db)["phases"]
               if p["label"] in ids}
        self.assertNear(ratio[0]["speedup"], p50[4] / p50[7], 0.005, "speed-up")
        summary = self.report_json(self.db)["summary"]
        summary = summary[0] if isinstance(summary, list) else summary
        # 100% and 1200 vs 1500 MHz, give or take the readings in force in the first instant
        # of a phase, which may be the other phase's (a loaded machine delays the edge reading).
        self.assertRegex(summary["clocks"], r"inference/off ran throttled (9\d|100)% of the time"
                                            r" on cuda:1 \(SW power cap\)")
        self.assertRegex(summary["clocks"], r"inference/off at SM 1(19\d|20\d|21\d) MHz vs"
                                            r" 1(4[5-9]\d|50\d) in no_grad/off: distrust a"
                                            r" small speed-up")

    def test_a_phase_begun_before_the_first_gpu_use_keeps_its_row(self):
        # A program that moves its model to the GPU inside its no_grad block: the GPU's first
        # reading comes 60 ms into the phase. The phase keeps its figures, over the time read,
        # and the table says how much was not (it once lost its whole row, then J/iter).
        self.app(ENERGY_APP_LATE_GPU="1")
        rows = self.rows()
        e = rows[(NO_GRAD, "cuda:1")]
        span = [(s, t) for (s, t) in self.query(self.db, "SELECT start, end FROM phase_spans"
                                                         " WHERE phase = 4")]
        first = self.query(self.db, "SELECT min(t) FROM energy_samples WHERE gpu = 1")[0][0]
        self.assertGreater(first, span[0][0] + 50_000_000)  # the hostile case holds
        read = (span[0][1] - first) / 1e9
        self.assertAlmostEqual(e["seconds"], read, delta=0.002)
        self.assertNear(e["avg_power_w"], 100.0, 0.02, "avg W over the time read")
        lat = {p["label"]: p["latency_mean_ns"] for p in self.report_json(self.db)["phases"]}
        self.assertNear(e["j_per_iteration"], 100.0 * lat[NO_GRAD] / 1e9, 0.05, "J/iter")
        self.assertNear(rows[(INFERENCE, "cuda:1")]["j_per_iteration"],
                        300.0 * lat[INFERENCE] / 1e9, 0.05, "inference J/iter")
        r = self.cli("report", self.db)
        self.assertEqual(r.rc, 0, r.err)
        text = r.out.decode()
        self.assertRegex(text, r"figures over the time read only: no_grad/off on cuda:1:"
                               r" 0\.(0[5-9]|1)\d+ s outside the GPU's readings")
        self.assertNotIn("inference/off on cuda:1:", text)

    def test_power_and_clocks_over_time_equal_the_script(self):
        # The HTML page's power and clock charts (report/run/timeline.c): inside each phase,
        # away from its edges (a bucket there holds readings of both), every bucket is the
        # script's figure.
        self.app(period=20)
        report = self.report_json(self.db)
        margin = 40_000_000 + self.edge_delay(self.db)
        for label, (watts, sm, _) in SCRIPT.items():
            phase = 4 if label == NO_GRAD else 7
            (start, end), = self.query(self.db, "SELECT min(start), max(end) FROM phase_spans"
                                                " WHERE phase = ?", phase)
            for key, col, want in (("power_timeline", "watts", watts),
                                   ("clock_timeline", "sm_clock_mhz", sm)):
                got = [r[col] for r in report[key] if r["device"] == "cuda:1"
                       and start + margin <= r["t_ns"] <= end - margin]
                self.assertGreater(len(got), 5, (key, label, report[key]))
                for v in got:
                    self.assertNear(v, want, 0.01, f"{key} {label}")

    def test_a_counter_slower_than_its_readings_draws_no_impossible_power(self):
        # NVML's counter moves about every 100 ms on an H100 or H200 and is read every 20 ms: an
        # H200 run's power over time read 8,278 W for a 700 W GPU (two readings around one move).
        # Power is drawn between the counter's moves: within a quarter of the script's (a move is
        # seen up to a reading late), never above the 700 W limit, and the phases' energy holds.
        self.app(period=20, iterations=15, STUB_NVML="coarse=100")
        report = self.report_json(self.db)
        watts = [r["watts"] for r in report["power_timeline"] if r["device"] == "cuda:1"]
        self.assertTrue(watts)
        self.assertLessEqual(max(watts), 700, watts)
        for label, (want, _, _) in SCRIPT.items():
            phase = 4 if label == NO_GRAD else 7
            (start, end), = self.query(self.db, "SELECT min(start), max(end) FROM phase_spans"
                                                " WHERE phase = ?", phase)
            got = [r["watts"] for r in report["power_timeline"] if r["device"] == "cuda:1"
                   and start + 250_000_000 <= r["t_ns"] <= end - 50_000_000]
            self.assertGreater(len(got), 3, (label, report["power_timeline"]))
            for v in got:
                self.assertNear(v, want, 0.3, f"power over time, {label}")
            e = self.rows()[(label, "cuda:1")]
            self.assertNear(e["avg_power_w"], want, 0.15, label + " avg W")
        self.assertIsNone(report["run"]["warnings"])  # nothing above the limit to drop

    def test_power_above_the_limit_is_dropped_and_counted(self):
        # A GPU capped at 250 W that reads 300 W: no machine gives that reading. It is left out
        # of every figure, never drawn, and the run header says how many.
        self.app(period=20, STUB_NVML="limit=250")
        report = self.report_json(self.db)
        (limit,), = self.query(self.db, "SELECT power_limit_mw FROM energy_gpus WHERE gpu = 1")
        self.assertEqual(limit, 250_000)
        watts = [r["watts"] for r in report["power_timeline"] if r["device"] == "cuda:1"]
        self.assertTrue(watts)  # no_grad's 100 W
        self.assertLessEqual(max(watts), 250, watts)
        for e in report["energy"]:
            self.assertLessEqual(e["peak_power_w"] or 0, 250, e)
        self.assertRegex(report["run"]["warnings"] or "",
                         r"\d+ power readings above the GPU's 250 W limit were left out of every"
                         r" figure")

    def test_phase_changes_are_read_at_their_edges(self):
        self.app()
        edges = [s for (s,) in self.query(self.db, "SELECT start FROM phase_spans"
                                                   " WHERE phase IN (4, 7) ORDER BY start")]
        reads = [t for (t,) in self.query(self.db, "SELECT t FROM energy_samples"
                                                   " WHERE gpu = 1 AND kind = 2 ORDER BY t")]
        self.assertEqual(len(edges), 2)
        for s in edges:
            after = [t - s for t in reads if t >= s]
            self.assertTrue(after, (s, reads))
            # Read after the change, before the phase's first iteration ended (60 ms).
            self.assertLess(min(after), 60_000_000, (s, reads))
        kinds = dict(self.query(self.db, "SELECT kind, count(*) FROM energy_samples"
                                         " WHERE gpu = 1 GROUP BY kind"))
        self.assertEqual(kinds.get(0), 1)  # start
        self.assertEqual(kinds.get(3), 1)  # end

    def test_only_the_gpus_the_process_used_are_sampled(self):
        self.app(period=20)
        used = dict(self.query(self.db, "SELECT gpu, cuda_device FROM energy_gpus"))
        self.assertEqual(used, {0: -1, 1: 1})
        kinds0 = [k for (k,) in self.query(self.db, "SELECT kind FROM energy_samples"
                                                    " WHERE gpu = 0")]
        self.assertEqual(kinds0, [0])  # read once, when NVML was loaded
        periodic = self.query(self.db, "SELECT count(*) FROM energy_samples"
                                       " WHERE gpu = 1 AND kind = 1")[0][0]
        self.assertGreater(periodic, 5)  # 600 ms of phases at 20 ms
        self.assertEqual(self.meta(self.db, "energy_readings_dropped"), 0)

    def test_more_gpus_than_the_table_holds(self):
        # 24 GPUs: the first 16 are read (IP_ENERGY_GPUS), the rest left out, the run unharmed.
        self.app(STUB_NVML="gpus=24")
        self.assertEqual(self.query(self.db, "SELECT count(*), max(gpu) FROM energy_gpus"),
                         [(16, 15)])
        self.assertIn("24 GPUs, 16 read", self.meta(self.db, "energy.gpu"))

    def test_compare_gives_the_energy_ratio(self):
        self.app()
        base = self.db
        os.rename(base, os.path.join(self.dir, "base.db"))
        base = os.path.join(self.dir, "base.db")
        # J per iteration is over the steady iterations (warm-up apart, as every figure): the
        # expected ratio uses their mean, which a loaded machine moves from run to run.
        def steady_mean(db):
            return {p["label"]: p["latency_mean_ns"] for p in self.report_json(db)["phases"]}
        lat_b, off_b = steady_mean(base), self.misread(base)
        self.app(ENERGY_APP_POWER_SCALE=2)
        lat_n, off = steady_mean(self.db), off_b + self.misread(self.db)
        r = self.cli("compare", "--format", "json", base, self.db)
        self.assertEqual(r.rc, 0, r.err)
        import json
        rows = {e["phase"]: e for e in json.loads(r.out)["energy"]}
        for label in (NO_GRAD, INFERENCE):
            # Two runs, each with edge readings a loaded machine may delay (the sampler's
            # wake-up): the bound widens by the share of each phase that may be misread.
            self.assertNear(rows[label]["j_per_iteration_ratio"],
                            2.0 * lat_n[label] / lat_b[label], 0.03 + 3 * off, label)
            self.assertNear(rows[label]["avg_power_w_ratio"], 2.0, 0.01 + 3 * off, label)
        # Per series, energy per item: twice the power over iterations of whatever length.
        series = {s["phase"]: s for s in json.loads(r.out)["series"]}
        for label in (NO_GRAD, INFERENCE):
            self.assertNear(series[label]["mj_per_item_ratio"],
                            2.0 * lat_n[label] / lat_b[label], 0.03 + 3 * off, label + " series")

    # ---- never on a program thread ------------------------------------------------------------

    def test_sampling_never_runs_on_a_program_thread(self):
        self.app(period=5)
        with open(self.tids) as f:
            program = {int(l) for l in f.read().split()}
        with open(self.log) as f:
            callers = [tuple(map(int, l.split())) for l in f.read().splitlines()]
        self.assertEqual(len(program), 2)
        self.assertTrue(callers)
        sampler = self.meta(self.db, "energy_sampler_tid")
        # Only the sampler calls NVML (the program's own stubnvml_set is not an NVML call).
        self.assertEqual({tid for tid, _ in callers}, {sampler})
        self.assertFalse(program & {tid for tid, _ in callers})
        self.assertTrue(all(blocked == 1 for _, blocked in callers), callers)

    # ---- failures: one line in the run header, the program untouched --------------------------

    def header(self):
        run = self.report_json(self.db)["run"]
        return run["collector_energy"] if isinstance(run, dict) else run[0]["collector_energy"]

    def test_no_nvml(self):
        self.app(stub=os.path.join(self.dir, "missing", "libnvidia-ml.so.1"))
        self.assertIn("GPU: cannot load", self.header())
        self.assertEqual(self.query(self.db, "SELECT count(*) FROM energy_samples")[0][0], 0)
        self.assertEqual(self.report_json(self.db)["energy"], [])

    def test_permission_denied(self):
        self.app(STUB_NVML="noperm")
        self.assertIn("nvmlInit failed: Insufficient Permissions (4); permission denied",
                      self.header())
        self.assertEqual(self.report_json(self.db)["energy"], [])

    def test_no_energy_counter_falls_back_to_power(self):
        self.app(STUB_NVML="noenergy")
        status = self.query(self.db, "SELECT status FROM energy_gpus WHERE gpu = 1")[0][0]
        self.assertIn("no energy counter: Not Supported (3), not supported on this GPU", status)
        e = self.rows()[(NO_GRAD, "cuda:1")]
        self.assertEqual(e["source"], "power")
        self.assertNear(e["avg_power_w"], 100.0, 0.02, "from power")

    def test_missing_energy_function(self):
        self.app(stub=STUB_OLD)
        status = self.query(self.db, "SELECT status FROM energy_gpus WHERE gpu = 1")[0][0]
        self.assertIn("nvmlDeviceGetTotalEnergyConsumption not in this NVML", status)
        self.assertEqual(self.rows()[(INFERENCE, "cuda:1")]["source"], "power")

    def test_mig(self):
        self.app(STUB_NVML="mig")
        self.assertEqual(self.query(self.db, "SELECT mig, status FROM energy_gpus WHERE gpu = 1"),
                         [(1, "MIG mode: figures are the whole GPU's, shared with its other"
                              " instances")])

    # ---- when NVML is loaded: before CUDA starts, or never (docs/energy.md) --------------------
    # On an H100 a process whose NVML was initialised after its CUDA had started hung at its next
    # cuBLAS start, every run (docs/validation/2026-11-25-gpu-nvml-hang.md).

    def fake_cuda_lib(self, name):
        """A library whose file name is a CUDA library's (its contents are any small library's)."""
        path = os.path.join(self.dir, name)
        shutil.copy(os.path.join(STUBS, "libnvtxlib.so"), path)
        return path

    def test_nvml_is_never_loaded_once_cuda_has_started(self):
        # energy_app has no CUDA library loaded at start: its first CUDA work comes first.
        self.app(INFPROF_NVML="auto")
        self.assertIn("GPU: not read: CUDA started before NVML was loaded", self.header())
        self.assertIn("INFPROF_NVML=start", self.header())
        # The whole line, the CPU's part last (it was cut at 200 bytes once).
        self.assertTrue(self.header().endswith("; CPU: " + self.meta(self.db, "energy.cpu")),
                        self.header())
        self.assertFalse(os.path.exists(self.log))  # not one NVML call
        self.assertEqual(self.query(self.db, "SELECT count(*) FROM energy_samples WHERE gpu >= 0"),
                         [(0,)])

    def test_a_cuda_library_at_start_loads_nvml_before_the_program_runs(self):
        self.app(INFPROF_NVML="auto", LD_PRELOAD=self.fake_cuda_lib("libcudart.so.13"))
        self.assertIn("GPU: NVML", self.header())
        watts = self.rows()[(NO_GRAD, "cuda:1")]["avg_power_w"]
        # The other phase's 300 W may hold for the edge reading's delay (a loaded machine's).
        self.assertNear(watts, SCRIPT[NO_GRAD][0], 0.02 + 3 * self.misread(self.db),
                        "loaded at start, read at first use")
        with open(self.log) as f:  # loaded on the sampler's thread, every signal blocked
            self.assertEqual({line.split()[1] for line in f}, {"1"})

    def test_nvml_off(self):
        self.app(INFPROF_NVML="off")
        self.assertIn("GPU: not read: INFPROF_NVML=off", self.header())
        self.assertFalse(os.path.exists(self.log))

    def test_the_header_says_why_in_a_process_that_used_no_gpu(self):
        # A CPU program: the setting or the failure is named, not "the process used no GPU".
        stub = os.path.join(self.dir, "missing", "libnvidia-ml.so.1")
        plain = self.run_prog([prog("host"), "threads"], preload=False)
        for i, (nvml, path, want) in enumerate((("off", STUB, "off: GPU: not read: INFPROF_NVML=off"),
                                 ("start", stub, "off: GPU: cannot load " + stub),
                                 ("start", STUB, "off: GPU: NVML driver 999.99-stub,"
                                                 " 2 GPUs; the process used no GPU"))):
            r = self.run_prog([prog("host"), "threads"], INFPROF_NVML=nvml,
                              INFPROF_NVML_PATH=path, INFPROF_ENERGY_MS=5,
                              INFPROF_OUTPUT=f"n{i}.db")
            self.assertUnnoticed(plain, r)
            energy = self.meta(os.path.join(self.dir, f"n{i}.db"), "collector.energy")
            self.assertTrue(energy.startswith(want), (nvml, energy))

    def test_off(self):
        self.app(period=0)
        self.assertEqual(self.header(), "off: INFPROF_ENERGY_MS=0")
        self.assertIsNone(self.meta(self.db, "energy_sampler_tid"))
        self.assertFalse(os.path.exists(self.log))

    def test_preloaded_cpu_program_unnoticed_and_never_loads_nvml(self):
        argv = [prog("host"), "threads"]
        plain = self.run_prog(argv, preload=False)
        log = os.path.join(self.dir, "nvml.log")
        traced = self.run_prog(argv, INFPROF_NVML_PATH=STUB, INFPROF_ENERGY_MS=5,
                               STUB_NVML_LOG=log)
        self.assertUnnoticed(plain, traced)
        db = traced.db()
        # No CUDA use: NVML is never loaded, no GPU is read.
        self.assertIn("GPU: not loaded: the process used no GPU", self.meta(db, "collector.energy"))
        self.assertFalse(os.path.exists(log))
        self.assertEqual(self.query(db, "SELECT count(*) FROM energy_samples WHERE gpu >= 0"),
                         [(0,)])

    # ---- the CPU: RAPL and cpufreq where readable, else the reason ---------------------------

    def test_cpu_rapl_and_cpufreq(self):
        root = os.path.join(self.dir, "sys")
        rapl = os.path.join(root, "class", "powercap", "intel-rapl:0")
        os.makedirs(rapl)
        with open(os.path.join(rapl, "energy_uj"), "w") as f:
            f.write("5000000\n")
        with open(os.path.join(rapl, "max_energy_range_uj"), "w") as f:
            f.write("262143328850\n")
        for cpu, khz in ((0, 2000000), (1, 3000000)):
            d = os.path.join(root, "devices", "system", "cpu", f"cpu{cpu}", "cpufreq")
            os.makedirs(d)
            with open(os.path.join(d, "scaling_cur_freq"), "w") as f:
                f.write(f"{khz}\n")
        self.app(INFPROF_ENERGY_SYSFS=root)
        self.assertEqual(self.meta(self.db, "energy.cpu"), "RAPL 1 package, cpufreq 2 CPUs")
        self.assertEqual(self.query(self.db, "SELECT DISTINCT energy_mj, sm_clock FROM"
                                             " energy_samples WHERE gpu = -1"), [(5000, 2500)])
        e = self.rows()[(NO_GRAD, "cpu")]
        self.assertEqual(e["sm_clock_mhz"], 2500)
        self.assertEqual(e["energy_j"], 0)  # the file did not change

    def test_cpu_reason_when_absent(self):
        self.app(INFPROF_ENERGY_SYSFS=os.path.join(self.dir, "nothing"))
        self.assertIn("no energy: no RAPL under", self.meta(self.db, "energy.cpu"))
        self.assertIn("no clocks: cpufreq not readable", self.meta(self.db, "energy.cpu"))

    def test_older_database_reads(self):
        import lzma, shutil
        src = os.path.join(os.path.dirname(__file__), "..", "data", "h100", "transformer-b8.db.xz")
        db = os.path.join(self.dir, "old.db")
        with lzma.open(src) as i, open(db, "wb") as o:
            shutil.copyfileobj(i, o)
        self.assertEqual(self.report_json(db)["energy"], [])


if __name__ == "__main__":
    main()
