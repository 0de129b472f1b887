"""The CUPTI collector against a stand-in libcupti.so.13 (tests/progs/stub_cupti.c), driven the
way the CUDA driver drives an injected tool (tests/progs/cupti_app.c calls InitializeInjection):
the normal path stores exactly what CUPTI delivered, and every failure path ends as documented
(docs/cupti.md) with the host program unaffected: same exit status, stdout and stderr."""
import ctypes.util
import os
import re
import shutil
from harness import LIB, Case, main, prog

STUB = os.path.join(os.path.dirname(prog("cupti_app")), "stub", "libcupti.so.13")
PER_THREAD = 1000
LAUNCHES = 2 * PER_THREAD          # kernel_a and kernel_b
COPIES = PER_THREAD // 10          # 64 KiB each
RECORDS = 2 * (LAUNCHES + COPIES)  # an API record and a work record each


class Stub(Case):
    def app(self, mode="", extra_stderr=0, **env):
        """Run the app without and with the library; return the traced run after checking that
        the program could not tell, but for `extra_stderr` lines of ours."""
        argv = [prog("cupti_app"), STUB, str(PER_THREAD)]
        plain = self.run_prog(argv, preload=False, STUB_CUPTI=mode)
        self.log = os.path.join(self.dir, "stub.log")
        env.setdefault("INFPROF_CUPTI_PATH", STUB)
        traced = self.run_prog(argv, STUB_CUPTI=mode, STUB_CUPTI_LOG=self.log, **env)
        self.assertEqual(plain.rc, 3)
        self.assertEqual((traced.rc, traced.out), (plain.rc, plain.out))
        ours = [l for l in traced.err.splitlines() if l.startswith(b"infprof:")]
        self.assertEqual(len(ours), extra_stderr, traced.err)
        self.assertEqual([l for l in traced.err.splitlines() if not l.startswith(b"infprof:")],
                         plain.err.splitlines())
        self.ours = [l.decode() for l in ours]
        self.db = traced.db()
        return traced

    def stub_log(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def count(self, table):
        return self.query(self.db, f"SELECT count(*) FROM {table}")[0][0]

    def status(self):
        return self.meta(self.db, "collector.cupti")

    # ---- the normal path ----------------------------------------------------------------------

    def test_default_mode_records_the_work_without_api_records(self):
        # The default leaves CUPTI's API records off (docs/performance.md): every kernel and
        # copy is still there, tied to its thread's phase by the launch callback.
        self.app()
        self.assertEqual(self.count("kernels"), LAUNCHES)
        self.assertEqual(self.count("memcpy"), COPIES)
        self.assertEqual(self.count("cuda_api"), 0)
        self.assertEqual(self.meta(self.db, "cupti_records"), LAUNCHES + COPIES)
        self.assertEqual(self.meta(self.db, "cupti_unattributed_records"), 0)
        self.assertNotIn("enable 5", self.stub_log())  # CUPTI_ACTIVITY_KIND_RUNTIME
        self.assertEqual(self.meta(self.db, "cupti_attribution"), "callbacks")
        api = {a["name"]: a for a in self.report_json(self.db)["cuda_api"]}
        self.assertEqual(api["cudaLaunchKernel"]["launches"], LAUNCHES)

    def test_exact_records_attributed_to_their_threads(self):
        self.app(INFPROF_MODE="full")
        self.assertTrue(self.status().startswith("on: " + STUB), self.status())
        self.assertIn("(clock infprof)", self.status())
        by_name = dict(self.query(self.db, "SELECT s.value, count(*) FROM kernels k JOIN"
                                           " launch_sigs g ON g.id = k.sig JOIN strings s"
                                           " ON s.id = g.name_id GROUP BY s.value"))
        self.assertEqual(by_name, {"kernel_a": PER_THREAD, "kernel_b": PER_THREAD})
        self.assertEqual(self.query(self.db, "SELECT count(*), sum(bytes) FROM memcpy"),
                         [(COPIES, COPIES * 65536)])
        self.assertEqual(self.count("cuda_api"), LAUNCHES + COPIES)
        self.assertEqual(self.meta(self.db, "cupti_records"), RECORDS)
        for key in ("cupti_dropped_records", "cupti_buffers_refused", "cupti_buffer_errors",
                    "cupti_unattributed_records", "dropped_events"):
            self.assertEqual(self.meta(self.db, key), 0, key)
        # Each thread's kernels join to API calls of one thread; kernel_b's thread made the copies.
        tids = dict(self.query(self.db, "SELECT s.value, group_concat(DISTINCT a.tid) FROM"
                                        " kernels k JOIN cuda_api a ON a.corr = k.corr JOIN"
                                        " launch_sigs g ON g.id = k.sig JOIN strings s"
                                        " ON s.id = g.name_id GROUP BY s.value"))
        self.assertNotEqual(tids["kernel_a"], tids["kernel_b"])
        self.assertNotIn(",", tids["kernel_a"] + tids["kernel_b"])
        self.assertEqual(self.query(self.db, "SELECT DISTINCT a.tid FROM memcpy m JOIN cuda_api a"
                                             " ON a.corr = m.corr"), [(int(tids["kernel_b"]),)])
        # One clock: GPU records fall inside the run, after the call that issued them.
        dur = self.meta(self.db, "duration_ns")
        self.assertEqual(self.query(self.db, "SELECT count(*) FROM kernels k JOIN cuda_api a ON"
                                             " a.corr = k.corr WHERE k.start < a.start + 2000"
                                             " OR k.start < 0 OR k.start > ?", dur)[0][0], 0)
        lat = self.query(self.db, "SELECT a.launches, a.latency_min FROM api_summary a JOIN"
                                  " strings s ON s.id = a.name_id WHERE s.value ="
                                  " 'cudaLaunchKernel'")
        self.assertEqual(lat[0][0], LAUNCHES)
        self.assertGreaterEqual(lat[0][1], 2000)

    def test_cupti_is_driven_as_designed(self):
        self.app()
        log = self.stub_log()
        enables = [int(l.split()[1]) for l in log if l.startswith("enable ")]
        self.assertEqual(log[0], "subscribe infprof")
        self.assertEqual(enables[0], 10)          # CONCURRENT_KERNEL, first
        self.assertNotIn(3, enables)              # never KIND_KERNEL (serialises kernels)
        self.assertNotIn(51, enables)             # never GRAPH_TRACE (hides graph nodes)
        self.assertLess(log.index("timestamp_callback accepted"), log.index("enable 10"))
        self.assertIn("flush_period 500", log)
        # The forced flush at exit delivered what was still in CUPTI's hands.
        self.assertEqual(log[-1], "flush_all 1")
        self.assertNotIn("unsubscribe", log)

    def test_without_api_records_attribution_and_latency_remain(self):
        # INFPROF_CUDA_API=0: no RUNTIME/DRIVER activity; the issue callback alone ties work to
        # its thread and gives the call's start.
        self.app(INFPROF_CUDA_API=0)
        enables = [int(l.split()[1]) for l in self.stub_log() if l.startswith("enable ")]
        self.assertNotIn(4, enables)
        self.assertNotIn(5, enables)
        self.assertEqual(self.count("cuda_api"), 0)
        self.assertEqual(self.count("kernels"), LAUNCHES)
        self.assertEqual(self.meta(self.db, "cupti_unattributed_records"), 0)
        api = {a["name"]: a for a in self.report_json(self.db)["cuda_api"]}
        a = api["cudaLaunchKernel"]
        # Calls unknown (null, not 0: a text 'Calls 0' beside latencies read as no call at all).
        self.assertEqual((a["calls"], a["total_ns"], a["launches"]), (None, None, LAUNCHES))
        self.assertGreaterEqual(a["latency_min_ns"], 2000)
        self.assertEqual(api["cudaMemcpyAsync"]["launches"], COPIES)

    def test_records_mode_attributes_without_any_callback(self):
        # INFPROF_ATTRIBUTION=records: no callback is enabled; the API records of the issuing
        # calls only, which here come in buffers of their own, delivered last (api_late), and all
        # the work is still tied to its call, with its launch latency.
        # (A long flush period: the wait for a call, four of them, cannot expire on a slow host.)
        self.app("api_late", INFPROF_ATTRIBUTION="records", INFPROF_CUPTI_FLUSH_MS="60000")
        log = self.stub_log()
        self.assertEqual([l for l in log if l.startswith("callback ")], [])
        self.assertIn("enable_api 0 211 1", log)   # cudaLaunchKernel_v7000
        self.assertIn("enable_api 1 307 1", log)   # cuLaunchKernel
        enables = [int(l.split()[1]) for l in log if l.startswith("enable ")]
        self.assertNotIn(4, enables)               # not every driver call...
        self.assertNotIn(5, enables)               # ...nor every runtime call
        self.assertEqual(self.meta(self.db, "cupti_attribution"), "records")
        self.assertEqual(self.count("kernels"), LAUNCHES)
        self.assertEqual(self.count("memcpy"), COPIES)
        self.assertEqual(self.count("cuda_api"), 0)
        self.assertEqual(self.meta(self.db, "cupti_unattributed_records"), 0)
        # (Waiting across writer cycles is held to exact numbers in cupti.test_replay_kinds.)
        self.assertEqual(self.meta(self.db, "cupti_records_wait_expired"), 0)
        api = {a["name"]: a for a in self.report_json(self.db)["cuda_api"]}
        self.assertEqual(api["cudaLaunchKernel"]["launches"], LAUNCHES)
        self.assertGreaterEqual(api["cudaLaunchKernel"]["latency_min_ns"], 2000)
        self.assertEqual(api["cudaMemcpyAsync"]["launches"], COPIES)

    # ---- someone else holds CUPTI, or chose passive ------------------------------------------

    def test_another_subscriber_makes_us_passive(self):
        self.app("multi", extra_stderr=1)
        self.assertIn("CUPTI for Nsight Systems (stub)", self.ours[0])
        self.assertIn("passive", self.ours[0])
        self.assertEqual(self.status(), "passive: CUPTI already in use by CUPTI for Nsight"
                                        " Systems (stub)")
        self.assertEqual(self.stub_log(), ["subscribe infprof"])  # nothing enabled
        self.assertEqual(self.count("kernels"), 0)
        self.assertIn("CUDA activity not recorded", self.report_json(self.db)["run"]["warnings"])

    def test_a_holder_without_a_name_is_named_from_its_library(self):
        fake = os.path.join(os.path.dirname(prog("cupti_app")), "tool",
                            "libsanitizer-collection.so")
        self.app("multi anonymous", extra_stderr=1, LD_PRELOAD=f"{LIB}:{fake}")
        self.assertEqual(self.status(), "passive: CUPTI already in use by compute-sanitizer"
                                        " (libsanitizer-collection.so is loaded)")
        self.assertNotIn("<not provided>", self.ours[0])

    def test_a_holder_that_cannot_be_named_is_said_so(self):
        self.app("multi anonymous", extra_stderr=1)
        self.assertIn("another CUPTI client that gave no name", self.status())
        self.assertNotIn("<not provided>", self.ours[0])

    def test_another_injection_makes_us_passive(self):
        self.app(extra_stderr=1, CUDA_INJECTION64_PATH="/opt/other-tool/libinjection.so")
        self.assertIn("/opt/other-tool/libinjection.so", self.ours[0])
        self.assertTrue(self.status().startswith("passive: another CUDA injection"))
        self.assertEqual(self.stub_log(), [])

    def test_passive_by_choice(self):
        self.app(INFPROF_CUPTI=0)
        self.assertEqual(self.status(), "passive: INFPROF_CUPTI=0")
        self.assertEqual(self.stub_log(), [])

    # ---- CUPTI refuses something -------------------------------------------------------------

    def test_subscribe_failure_is_quiet(self):
        self.app("subscribe_fail")
        self.assertRegex(self.status(), r"^off: cuptiSubscribe failed: .*\(15\)$")
        self.assertEqual(self.stub_log(), ["subscribe infprof"])

    def test_kernel_activity_refused(self):
        self.app("enable_fail")
        self.assertRegex(self.status(), r"^off: enabling CONCURRENT_KERNEL failed: .*\(14\)$")
        log = self.stub_log()
        self.assertEqual(log[-1], "unsubscribe")
        self.assertEqual([l for l in log if l.startswith("enable")], ["enable 10"])
        self.assertEqual(self.count("kernels"), 0)
        self.assertEqual(self.meta(self.db, "events_recorded"), 0)  # no callback left enabled

    def test_one_kind_refused_the_rest_recorded(self):
        self.app("memory2_fail")
        self.assertIn("not available: MEMORY2", self.status())
        self.assertTrue(self.status().startswith("on: "))
        self.assertEqual(self.count("kernels"), LAUNCHES)

    def test_buffer_callbacks_refused(self):
        self.app("register_fail")
        self.assertEqual(self.status(), "off: cannot register the buffer callbacks")
        self.assertEqual(self.stub_log()[-1], "unsubscribe")

    def test_own_clock_refused_calibrated_offset(self):
        self.app("no_timestamp")
        self.assertIn("(clock calibrated)", self.status())
        # The stub's clock is 1e15 ns away from ours: calibrated back into the run.
        dur = self.meta(self.db, "duration_ns")
        bad = self.query(self.db, "SELECT count(*) FROM kernels WHERE start < 0 OR start > ?", dur)
        self.assertEqual(bad[0][0], 0)
        self.assertEqual(self.count("kernels"), LAUNCHES)

    def test_library_missing_is_quiet(self):
        self.app(INFPROF_CUPTI_PATH=os.path.join(self.dir, "nowhere", "libcupti.so.13"))
        self.assertTrue(self.status().startswith("off: cannot load CUPTI:"), self.status())

    def test_library_without_the_activity_api(self):
        self.app(INFPROF_CUPTI_PATH=ctypes.util.find_library("m"))
        self.assertEqual(self.status(), "off: cannot load CUPTI: libcupti lacks the activity API")

    # ---- records lost, counted ---------------------------------------------------------------

    def test_dropped_records_reach_the_header(self):
        self.app("dropped=17")
        self.assertEqual(self.meta(self.db, "cupti_dropped_records"), 17)
        self.assertEqual(self.count("kernels"), LAUNCHES)
        r = self.report_json(self.db)
        self.assertEqual(r["run"]["cupti_dropped_records"], 17)
        self.assertIn("17 CUPTI records dropped", r["run"]["warnings"])

    def test_pool_runs_dry_every_record_accounted_for(self):
        # Two 64 KiB buffers that CUPTI keeps until the flush at exit: the rest is refused.
        self.app("hold", INFPROF_CUPTI_BUFFERS=2, INFPROF_CUPTI_BUFFER_KB=64, INFPROF_MODE="full")
        stored = self.count("kernels") + self.count("memcpy") + self.count("cuda_api")
        dropped = self.meta(self.db, "cupti_dropped_records")
        self.assertGreater(dropped, 0)
        self.assertEqual(stored + dropped, RECORDS)
        self.assertGreaterEqual(self.meta(self.db, "cupti_buffers_refused"), 1)
        self.assertEqual(self.meta(self.db, "cupti_buffers_completed"), 2)
        warnings = self.report_json(self.db)["run"]["warnings"]
        self.assertIn(f"{dropped} CUPTI records dropped", warnings)
        self.assertIn("CUPTI buffer requests refused", warnings)

    def test_unreadable_record_counted(self):
        self.app("bad_record", INFPROF_MODE="full")
        lost = [int(l.split()[1]) for l in self.stub_log() if l.startswith("lost_after_bad")]
        self.assertEqual(len(lost), 1)
        stored = self.count("kernels") + self.count("memcpy") + self.count("cuda_api")
        self.assertEqual(stored + lost[0], RECORDS)
        self.assertEqual(self.meta(self.db, "cupti_buffer_errors"), 1)
        self.assertIn("could not be read to the end",
                      self.report_json(self.db)["cuda_activity"]["warnings"])


class PipCuda(Case):
    """CUPTI found where a pip-installed PyTorch's CUDA is (issue 55): no toolkit path, no
    INFPROF_CUPTI_PATH; the stub CUPTI in a fake site-packages, the program having loaded torch's
    libtorch_cuda.so (its RUNPATH names nvidia/cuda_cupti/lib) or a CUDA runtime from it. This
    machine's /usr/local/cuda has a real libcupti.so.13, after them in the search."""
    STANDS = os.path.join(os.path.dirname(prog("cupti_app")), "pipcuda")

    def site(self, layout):
        """Files copied into a fake site-packages: {relative path: source}."""
        root = os.path.realpath(os.path.join(self.dir, "site-packages"))
        for rel, src in layout.items():
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(src, dst)
        return root

    def found(self, load, cupti):
        argv = [prog("cupti_app"), cupti, "100"]
        plain = self.run_prog(argv, preload=False, CUPTI_APP_LOAD=load)
        r = self.run_prog(argv, CUPTI_APP_LOAD=load, INFPROF_CUPTI_PATH="")
        self.assertUnnoticed(plain, r)
        db = r.db()
        self.assertEqual(self.query(db, "SELECT count(*) FROM kernels")[0][0], 200)
        return self.meta(db, "collector.cupti")

    def test_through_torchs_runpath(self):
        root = self.site({"torch/lib/libtorch_cuda.so": os.path.join(self.STANDS,
                                                                     "libtorch_cuda.so"),
                          "nvidia/cuda_cupti/lib/libcupti.so.13": STUB})
        cupti = os.path.join(root, "nvidia", "cuda_cupti", "lib", "libcupti.so.13")
        status = self.found(os.path.join(root, "torch", "lib", "libtorch_cuda.so"), cupti)
        self.assertTrue(status.startswith(f"on: {cupti} (in the RUNPATH of torch's"
                                          " libtorch_cuda.so)"), status)
        # The run header says it (the path is in the Command line too: the CUPTI line's).
        text = self.cli("report", os.path.join(self.dir, "infprof.db")).out.decode()
        self.assertRegex(text, r"\n  CUPTI +on:\s+" + re.escape(cupti) + r"\s+\(in the RUNPATH")

    def test_beside_a_cuda_13_runtime(self):
        root = self.site({"nvidia/cu13/lib/libcudart.so.13": os.path.join(self.STANDS,
                                                                          "libcudart.so.13"),
                          "nvidia/cu13/lib/libcupti.so.13": STUB})
        lib = os.path.join(root, "nvidia", "cu13", "lib")
        status = self.found(os.path.join(lib, "libcudart.so.13"),
                            os.path.join(lib, "libcupti.so.13"))
        self.assertTrue(status.startswith(f"on: {lib}/libcupti.so.13 (beside the loaded"
                                          " libcudart.so.13)"), status)

    def test_in_cu13_beside_cudnns_package(self):
        # CUDA 13 wheels (their RECORD files): libcupti.so.13 in nvidia/cu13/lib, cuDNN in
        # nvidia/cudnn/lib; a program that has loaded only cuDNN from there.
        root = self.site({"nvidia/cudnn/lib/libcudnn.so.9": os.path.join(self.STANDS,
                                                                       "libcudart.so.13"),
                          "nvidia/cu13/lib/libcupti.so.13": STUB})
        cupti = os.path.join(root, "nvidia", "cu13", "lib", "libcupti.so.13")
        status = self.found(os.path.join(root, "nvidia", "cudnn", "lib", "libcudnn.so.9"), cupti)
        self.assertTrue(status.startswith(f"on: {cupti} (pip's nvidia/cu13, beside the loaded"
                                          " libcudnn.so.9)"), status)

    def test_in_the_pip_package_beside_the_runtimes(self):
        root = self.site({"nvidia/cuda_runtime/lib/libcudart.so.13":
                          os.path.join(self.STANDS, "libcudart.so.13"),
                          "nvidia/cuda_cupti/lib/libcupti.so.13": STUB})
        cupti = os.path.join(root, "nvidia", "cuda_cupti", "lib", "libcupti.so.13")
        status = self.found(os.path.join(root, "nvidia", "cuda_runtime", "lib",
                                         "libcudart.so.13"), cupti)
        self.assertTrue(status.startswith(f"on: {cupti} (pip's nvidia/cuda_cupti, beside the"
                                          " loaded libcudart.so.13)"), status)


if __name__ == "__main__":
    main()
