"""Phases from libtorch's guards and autocast setters, with no change to the program: labels and
order, nesting, threads in different modes at once, per-phase peak CPU tensor memory (exact:
torch_modes holds one tensor of a known size per phase), TorchScript calls as iterations, and a
program that notices nothing."""
from harness import main
from torchlib import (AOTI_APP, LABEL, PHASE, STATIC_BYTES, TORCH_MODES, TORCH_VERSION, TorchCase,
                      compress, need)


class Phases(TorchCase):
    def run_modes(self, *args, **env):
        need(TORCH_MODES)
        plain = self.run_prog([TORCH_MODES, *args], preload=False)
        traced = self.run_prog([TORCH_MODES, *args], **env)
        self.assertEqual(plain.rc, 0, plain.err)
        # The program notices nothing: same status, same bytes out and err.
        self.assertUnnoticed(plain, traced)
        return traced.db()

    def peaks(self, db):
        return {label: p["peak_allocated_by_device"]["cpu"]
                for label, p in self.phases_by_label(db).items()}

    def test_sequence(self):
        db = self.run_modes("sequence")
        seq = [LABEL[p] for _, p, _, _ in self.spans(db, self.main_tid(db))]
        self.assertEqual(compress(seq), [
            "grad | autocast off", "grad | autocast bf16", "grad | autocast off",
            "no_grad | autocast off", "no_grad | autocast bf16", "no_grad | autocast off",
            "grad | autocast off", "inference_mode | autocast off",
            "inference_mode | autocast bf16", "inference_mode | autocast off",
            "grad | autocast off", "grad | autocast fp16", "grad | autocast bf16",
            "grad | autocast off"])
        # The autocast shadow: each span says which autocast put it there (dtype codes).
        self.assertEqual(self.query(db, "SELECT DISTINCT cpu_autocast, cuda_autocast FROM"
                                        " phase_spans WHERE phase = ? ORDER BY 1",
                                    PHASE["grad | autocast bf16"]), [(0, 15), (15, 0)])
        self.assertEqual(self.query(db, "SELECT DISTINCT cuda_autocast FROM phase_spans"
                                        " WHERE phase = ?", PHASE["grad | autocast fp16"]),
                         [(5,)])
        # Peak allocated per phase: the one tensor it held, over the static one always live.
        # grad | bf16 held 2 MB (CPU autocast) and later 8 MB (CUDA autocast).
        self.assertEqual(self.peaks(db), {
            "grad | autocast off": STATIC_BYTES + 1000000,
            "grad | autocast bf16": STATIC_BYTES + 8000000,
            "no_grad | autocast off": STATIC_BYTES + 3000000,
            "no_grad | autocast bf16": STATIC_BYTES + 4000000,
            "inference_mode | autocast off": STATIC_BYTES + 5000000,
            "inference_mode | autocast bf16": STATIC_BYTES + 6000000,
            "grad | autocast fp16": STATIC_BYTES + 7000000,
        })
        # Each allocation carries the phase of the thread that made it.
        rows = dict(self.query(db, "SELECT bytes, phase FROM tensor_memory WHERE bytes >= 1000000"))
        self.assertEqual(rows[4000000], PHASE["no_grad | autocast bf16"])
        self.assertEqual(rows[8000000], PHASE["grad | autocast bf16"])
        # A free reports the negative size and the allocator's total after it.
        self.assertEqual(self.query(db, "SELECT allocated FROM tensor_memory WHERE bytes = ?",
                                    -5000000), [(STATIC_BYTES,)])
        self.assertEqual(self.meta(db, "dropped_events"), 0)

    def test_nested_guards(self):
        db = self.run_modes("nested")
        seq = [LABEL[p] for _, p, _, _ in self.spans(db, self.main_tid(db))]
        # NoGradGuard inside InferenceMode stays inference_mode; autocast inside no_grad is its
        # own phase and no_grad comes back after it.
        self.assertEqual(compress(seq), [
            "grad | autocast off", "inference_mode | autocast off", "grad | autocast off",
            "no_grad | autocast off", "no_grad | autocast bf16", "no_grad | autocast off",
            "grad | autocast off"])
        phase_of = dict(self.query(db, "SELECT bytes, phase FROM tensor_memory WHERE bytes > 0"))
        self.assertEqual(phase_of[300000], PHASE["inference_mode | autocast off"])
        self.assertEqual(phase_of[400000], PHASE["inference_mode | autocast off"])
        self.assertEqual(phase_of[600000], PHASE["no_grad | autocast bf16"])
        self.assertEqual(phase_of[700000], PHASE["no_grad | autocast off"])
        self.assertEqual(self.peaks(db), {
            "grad | autocast off": STATIC_BYTES + 100000,
            "inference_mode | autocast off": STATIC_BYTES + 400000,
            "no_grad | autocast off": STATIC_BYTES + 700000,
            "no_grad | autocast bf16": STATIC_BYTES + 600000,
        })

    def test_libtorch_internal_guards_are_not_phases(self):
        db = self.run_modes("internal")
        # nn::Linear initialises its weights under libtorch's own NoGradGuard: the program
        # itself was in grad mode, then in inference mode, and nothing else.
        seq = [LABEL[p] for _, p, _, _ in self.spans(db, self.main_tid(db))]
        self.assertEqual(compress(seq), ["grad | autocast off", "inference_mode | autocast off",
                                         "grad | autocast off"])
        self.assertGreaterEqual(self.meta(db, "torch_internal_setter_calls"), 4)
        phase_of = dict(self.query(db, "SELECT bytes, phase FROM tensor_memory WHERE bytes > 0"))
        self.assertEqual(phase_of[2000], PHASE["grad | autocast off"])
        self.assertEqual(phase_of[3000], PHASE["inference_mode | autocast off"])

    def test_two_threads_in_different_modes_at_once(self):
        db = self.run_modes("threads")
        main_tid = self.main_tid(db)
        by_tid = {}
        for tid, phase, start, end in self.spans(db):
            by_tid.setdefault(tid, []).append((phase, start, end))
        workers = {tid: v for tid, v in by_tid.items() if tid != main_tid}
        self.assertEqual(len(workers), 2, by_tid)
        first = {v[0][0]: (tid, v[0]) for tid, v in workers.items()}
        self.assertEqual(sorted(first), [PHASE["no_grad | autocast off"],
                                         PHASE["inference_mode | autocast off"]])
        (tid_a, (_, a0, a1)) = first[PHASE["no_grad | autocast off"]]
        (tid_b, (_, b0, b1)) = first[PHASE["inference_mode | autocast off"]]
        self.assertTrue(a0 < b1 and b0 < a1, "the two phases overlap in time")
        # Each thread's tensor carries its own thread and phase.
        self.assertEqual(self.query(db, "SELECT tid, phase FROM tensor_memory WHERE bytes = ?",
                                    1100000), [(tid_a, PHASE["no_grad | autocast off"])])
        self.assertEqual(self.query(db, "SELECT tid, phase FROM tensor_memory WHERE bytes = ?",
                                    2200000), [(tid_b, PHASE["inference_mode | autocast off"])])
        # A thread that exits closes its spans: none stays open to the end of the run.
        for tid, spans in workers.items():
            self.assertIsNotNone(spans[-1][2], (tid, spans))
        # Both tensors were live at once, in both phases; the main thread's later 9.9 MB belongs
        # to grad only, after both workers had left.
        self.assertEqual(self.peaks(db), {
            "no_grad | autocast off": STATIC_BYTES + 1100000 + 2200000,
            "inference_mode | autocast off": STATIC_BYTES + 1100000 + 2200000,
            "grad | autocast off": STATIC_BYTES + 9900000,
        })

    def test_torchscript_calls_are_iterations(self):
        db = self.run_modes("jit", "6")
        rows = self.query(db, "SELECT phase, count(*), min(source), max(source) FROM iterations"
                              " GROUP BY phase ORDER BY phase")
        # Six calls per grad mode returned; the two that raised in each are not iterations, and
        # the calls after them still count (the hook's depth was unwound with the exception).
        self.assertEqual(rows, [(PHASE["grad | autocast off"], 6, 1, 1),
                                (PHASE["no_grad | autocast off"], 6, 1, 1),
                                (PHASE["inference_mode | autocast off"], 6, 1, 1)])
        self.assertIterationsInsideSpans(db)
        report = self.phases_by_label(db)
        for label in ("grad | autocast off", "no_grad | autocast off",
                      "inference_mode | autocast off"):
            p = report[label]
            self.assertEqual(p["iterations"], 6)
            self.assertGreater(p["throughput_per_s"], 0)
            self.assertLessEqual(p["latency_p50_ns"], p["latency_p95_ns"])
            self.assertLessEqual(p["latency_p95_ns"], p["latency_p99_ns"])
        self.assertIn("TorchScript: Method::operator() (C++11 ABI)", self.meta(db, "torch_api"))

    def test_batch_setting_gives_items_per_second(self):
        db = self.run_modes("jit", "3", INFPROF_BATCH=16)
        self.assertEqual(self.query(db, "SELECT DISTINCT batch FROM iterations"), [(16,)])
        p = self.phases_by_label(db)["no_grad | autocast off"]
        # The report rounds rates: equal to a thousandth.
        self.assertAlmostEqual(p["items_per_s"] / p["throughput_per_s"], 16, delta=0.016)

    def test_api_metadata(self):
        db = self.run_modes("sequence")
        api = self.meta(db, "torch_api")
        # The libtorch the program was built against decides which API it calls and exports.
        if TORCH_VERSION >= (2, 4):
            world = ("autocast: 2.4+ API", "autocast setters seen: 2.4+",
                     "reportMemoryUsageToProfiler(void*, long, size_t, size_t, Device) (2.x)")
        else:
            world = ("autocast: 1.13 API", "autocast setters seen: 1.13",
                     "reportMemoryUsageToProfiler(void*, long, long, long, Device) (1.13)")
        for part in ("c10::GradMode/InferenceMode::is_enabled in libc10.so",
                     "GradMode::set_enabled", "AutogradState::set_tls_state", *world,
                     "CPU memory: on"):
            self.assertIn(part, api)
        self.assertRegex(self.meta(db, "collector.torch"), r"^on: .*libc10\.so")

    def test_static_tensor_freed_at_exit(self):
        # Allocated by a static initialiser, freed by a static destructor after we finished: the
        # CPU allocator must not warn about a block it never saw (stderr compared in run_modes).
        self.run_modes("prealloc")

    def test_aoti_runs_are_iterations(self):
        # AOTInductor's entry points (tests/progs/aoti_fake.h, PyTorch 2.x's signatures): the
        # package's run in grad (3), its boxed_run, Python's path, in no_grad (2), the runner's
        # run in inference_mode (4, and one that throws: none). The package's runs call the
        # runner's inside: counted once.
        need(AOTI_APP)
        plain = self.run_prog([AOTI_APP], preload=False)
        traced = self.run_prog([AOTI_APP])
        self.assertEqual(plain.rc, 0, plain.err)
        self.assertUnnoticed(plain, traced)
        db = traced.db()
        self.assertIn("AOTInductor: model runs seen", self.meta(db, "torch_api"))
        self.assertEqual(self.query(db, "SELECT phase, source, count(*) FROM iterations"
                                        " GROUP BY 1, 2 ORDER BY 1"),
                         [(PHASE["grad | autocast off"], 4, 3),
                          (PHASE["no_grad | autocast off"], 4, 2),
                          (PHASE["inference_mode | autocast off"], 4, 4)])
        self.assertIterationsInsideSpans(db)

    def test_record_function_scopes(self):
        # RECORD_USER_SCOPE("iteration batch=4"), each holding an "inner" scope: 3 in grad, 2 in
        # no_grad; 2 scopes named "other" are none. From main's first line (the first scope comes
        # before any other libtorch call).
        db = self.run_modes("scopes")
        self.assertIn("record_function scopes: on", self.meta(db, "torch_api"))
        self.assertEqual(self.query(db, "SELECT phase, source, batch, count(*) FROM iterations"
                                        " GROUP BY 1, 2, 3 ORDER BY 1"),
                         [(PHASE["grad | autocast off"], 3, 4, 3),
                          (PHASE["no_grad | autocast off"], 3, 4, 2)])
        self.assertIterationsInsideSpans(db)

    def test_record_function_off(self):
        off = self.run_modes("scopes", INFPROF_RECORD_FUNCTION=0)
        self.assertEqual(self.query(off, "SELECT count(*) FROM iterations"), [(0,)])
        self.assertNotIn("record_function", self.meta(off, "torch_api"))

    def test_threads_still_allocating_at_exit(self):
        # Finding 10 of "never harm the host": main returns while four threads make and free CPU
        # blocks. Without us libtorch never touches its reporter's table; with profiling on, the
        # threads used it after the exit handlers destroyed it (a crash in most runs, libtorch's
        # "unknown size" warning in others). A race, so several runs; each must be unnoticed.
        for _ in range(8):
            db = self.run_modes("exitthreads")
            self.assertGreater(self.query(db, "SELECT count(*) FROM tensor_memory")[0][0], 1000)

    def test_cpu_memory_off(self):
        db = self.run_modes("sequence", INFPROF_CPU_MEMORY=0)
        self.assertEqual(self.query(db, "SELECT count(*) FROM tensor_memory"), [(0,)])
        self.assertIn("CPU memory: off", self.meta(db, "torch_api"))
        # Phases come from the guards all the same.
        self.assertEqual(len(self.phases_by_label(db)), 7)

    def test_torch_off(self):
        db = self.run_modes("jit", "3", INFPROF_TORCH=0)
        self.assertEqual(self.meta(db, "collector.torch"), "off: INFPROF_TORCH=0")
        self.assertIsNone(self.meta(db, "torch_api"))
        for table in ("phase_spans", "phases", "tensor_memory", "iterations"):
            self.assertEqual(self.query(db, f"SELECT count(*) FROM {table}"), [(0,)], table)

    def test_poll_off(self):
        db = self.run_modes("jit", "3", INFPROF_POLL=0)
        self.assertEqual(self.query(db, "SELECT count(*) FROM iterations"), [(9,)])
        self.assertEqual(len(self.phases_by_label(db)), 3)


if __name__ == "__main__":
    main()
