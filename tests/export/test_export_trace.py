"""`infprof export` on a fixture database built through the real pipeline: the trace parses,
every row becomes one event on the right track with exact times and args, slices nest on every
track, and program strings (control characters, invalid UTF-8) come out as valid JSON."""
from decimal import Decimal

from export_common import ExportCase, GPU_PID_BASE, PHASE_TID_BASE, load, ns
from harness import main, prog

EVIL = b"bad\x01name\xff\xfe\"q\\ caf\xc3\xa9 \xc0\xaf \xed\xa0\x80 end"


class RichTrace(ExportCase):
    def setUp(self):
        super().setUp()
        self.db = self.fixture("rich")
        self.doc, self.path, _ = self.export(self.db)
        self.pid = self.meta(self.db, "pid")
        self.gpu = self.pid + GPU_PID_BASE
        self.label = dict(self.query(self.db, "SELECT id, label FROM phases"))

    def test_perfetto_rules_and_nesting(self):
        self.assertPerfettoReadable(self.doc)

    def test_processes_and_tracks(self):
        names = self.track_names(self.doc)
        self.assertEqual(names[(self.pid, None)], "fixture_export")
        self.assertEqual(names[(self.gpu, None)], "GPU")
        self.assertEqual(names[(self.gpu, 1)], "GPU 0 stream 7")
        self.assertEqual(names[(self.gpu, 2)], "GPU 1 stream 13")
        for tid, phase in self.query(self.db, "SELECT tid, phase FROM phase_spans"):
            self.assertTrue(names[(self.pid, tid + PHASE_TID_BASE)].endswith(" phases"))
        main_tid = self.query(self.db, "SELECT tid FROM threads t JOIN strings s ON"
                                       " s.id = t.name_id WHERE s.value = 'fixture_export'")[0][0]
        self.assertEqual(main_tid, self.pid)
        self.assertEqual(names[(self.pid, main_tid)], "fixture_export")

    def test_kernels_exact(self):
        kernels = self.events(self.doc, "X", "kernel")
        rows = self.query(self.db, "SELECT k.corr, k.start, k.dur, k.phase, s.device, s.stream,"
                                   " CAST(n.value AS BLOB) FROM kernels k JOIN launch_sigs s"
                                   " ON s.id = k.sig"
                                   " JOIN strings n ON n.id = s.name_id")
        self.assertEqual(len(kernels), len(rows))
        self.assertEqual(len(rows), 7)
        by_corr = {e["args"]["correlation"]: e for e in kernels}
        for corr, start, dur, phase, device, stream, name in rows:
            e = by_corr[corr]
            self.assertEqual((ns(e["ts"]), ns(e["dur"])), (start, dur))
            self.assertEqual((e["pid"], e["tid"]), (self.gpu, 1 if device == 0 else 2))
            self.assertEqual((e["args"]["device"], e["args"]["stream"]), (device, stream))
            self.assertEqual(e["args"]["grid"], [80, 2, 1])
            self.assertEqual(e["args"]["block"], [256, 1, 1])
            self.assertEqual(e["args"]["registers per thread"], 64)
            self.assertEqual(e["args"]["shared memory"], 3072)
            self.assertEqual(e["args"]["phase"], self.label[phase])
            self.assertEqual(e["name"], name.decode("utf-8", "replace"))
        self.assertEqual((ns(by_corr[2]["ts"]), ns(by_corr[2]["dur"])), (12000, 3000))
        self.assertEqual(by_corr[4]["args"]["phase"], "no_grad | autocast fp16")

    def test_program_strings_escaped(self):
        kernel = [e for e in self.events(self.doc, "X", "kernel") if e["args"]["correlation"] == 6]
        self.assertEqual(kernel[0]["name"], EVIL.decode("utf-8", "replace"))
        raw = open(self.path, "rb").read()
        raw.decode("utf-8")  # strict: every byte sequence valid
        self.assertFalse([b for b in raw if b < 0x20 and b != 0x0a])
        self.assertIn(b'"bad\\u0001name\\ufffd\\ufffd\\"q\\\\ caf\xc3\xa9 ', raw)
        nvtx = [e for e in self.events(self.doc, "X", "nvtx") if e["name"].startswith("step")]
        self.assertEqual(nvtx[0]["name"], 'step "1" \\ batch=2')

    def test_copies_and_memsets(self):
        (copy,) = self.events(self.doc, "X", "gpu_memcpy")
        self.assertEqual(copy["name"], "Memcpy HtoD (Pageable -> Device)")
        self.assertEqual((copy["pid"], copy["tid"]), (self.gpu, 1))
        self.assertEqual((ns(copy["ts"]), ns(copy["dur"])), (22000, 800))
        self.assertEqual((copy["args"]["bytes"], copy["args"]["correlation"]), (4096, 30))
        self.assertEqual(copy["args"]["memory bandwidth (GB/s)"], Decimal("5.12"))  # 4096 / 800
        (memset,) = self.events(self.doc, "X", "gpu_memset")
        self.assertEqual(memset["name"], "Memset (Device)")
        self.assertEqual((ns(memset["ts"]), ns(memset["dur"]), memset["args"]["bytes"]),
                         (24000, 200, 1024))

    def test_api_and_cudnn_calls(self):
        api = self.events(self.doc, "X", "cuda_runtime") + self.events(self.doc, "X", "cuda_driver")
        rows = self.query(self.db, "SELECT a.corr, a.start, a.dur, a.tid, s.value, a.domain"
                                   " FROM cuda_api a JOIN strings s ON s.id = a.name_id")
        self.assertEqual(len(api), len(rows))
        by_corr = {e["args"]["correlation"]: e for e in api}
        for corr, start, dur, tid, name, domain in rows:
            e = by_corr[corr]
            self.assertEqual((e["pid"], e["tid"], e["name"]), (self.pid, tid, name))
            self.assertEqual((ns(e["ts"]), ns(e["dur"])), (start, dur))
            self.assertEqual(e["cat"], "cuda_driver" if domain == 2 else "cuda_runtime")
        self.assertEqual(by_corr[7]["name"], "cuLaunchKernel")
        (cudnn,) = self.events(self.doc, "X", "cudnn")
        self.assertEqual((cudnn["name"], cudnn["tid"], ns(cudnn["ts"]), ns(cudnn["dur"])),
                         ("cudnnConvolutionForward", self.pid, 14000, 2000))

    def test_nvtx(self):
        push = {e["name"]: e for e in self.events(self.doc, "X", "nvtx")}
        self.assertEqual(set(push), {'step "1" \\ batch=2', "infer"})
        step = push['step "1" \\ batch=2']
        self.assertEqual((ns(step["ts"]), ns(step["dur"]), step["tid"]), (5000, 23000, self.pid))
        self.assertEqual((step["args"]["category"], step["args"]["color"]), (3, "#00ff00"))
        (never,) = self.events(self.doc, "B", "nvtx")
        self.assertEqual((never["name"], ns(never["ts"])), ("never popped", 29000))
        (mark,) = self.events(self.doc, "i", "nvtx")
        self.assertEqual((mark["name"], ns(mark["ts"]), mark["s"]), ("ready", 20000, "t"))
        (b,) = self.events(self.doc, "b", "nvtx")
        (e,) = self.events(self.doc, "e", "nvtx")
        self.assertEqual((b["name"], b["id"], b["args"]["domain"]), ("async load", e["id"], "app"))
        self.assertEqual((ns(b["ts"]), ns(e["ts"]), b["tid"]), (25000, 45000, self.pid))
        self.assertEqual(e["tid"], push["infer"]["tid"])  # ended on the other thread
        self.assertNotEqual(e["tid"], self.pid)

    def test_phase_spans(self):
        spans = self.events(self.doc, "X", "phase")
        rows = self.query(self.db, "SELECT tid, phase, start, end FROM phase_spans")
        self.assertEqual(len(spans), len(rows))
        self.assertEqual(len(rows), 2)
        got = {(e["tid"], e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in spans}
        self.assertEqual(got, {(t + PHASE_TID_BASE, self.label[p], s, end)
                               for t, p, s, end in rows})

    def test_memory_counters(self):
        def series(name):
            return [(ns(e["ts"]), e["args"]) for e in self.events(self.doc, "C")
                    if e["name"] == name]
        self.assertEqual(series("GPU 0 tensors"),
                         [(9500, {"allocated": 4096, "reserved": 1048576}),
                          (12500, {"allocated": 12288, "reserved": 3145728}),
                          (31000, {"allocated": 8192, "reserved": 2097152})])
        self.assertEqual(series("GPU 1 tensors"),
                         [(41500, {"allocated": 2048, "reserved": 2097152})])
        self.assertEqual(series("CPU tensors"), [(26000, {"allocated": 100})])
        # cudaMalloc'ed device memory as a running sum; the pinned host allocation is not in it.
        self.assertEqual(series("GPU 0 device memory"),
                         [(9000, {"bytes": 1 << 20}), (11000, {"bytes": 3 << 20}),
                          (30000, {"bytes": 2 << 20})])
        pids = {e["name"]: e["pid"] for e in self.events(self.doc, "C")}
        self.assertEqual(pids["GPU 0 tensors"], self.gpu)
        self.assertEqual(pids["CPU tensors"], self.pid)

    def test_other_data(self):
        other = self.doc["otherData"]
        self.assertEqual(other["start_unix_ns"], self.meta(self.db, "start_unix_ns"))
        self.assertEqual((other["host_pid"], other["gpu_pid"]), (self.pid, self.gpu))
        self.assertEqual(other["cut"], {"phase": None, "from_ns": None, "to_ns": None})

    def test_flows(self):
        doc, _, r = self.export(self.db, "--flows", out="flows.json")
        self.assertPerfettoReadable(doc)
        starts = {e["id"]: e for e in self.events(doc, "s")}
        ends = {e["id"]: e for e in self.events(doc, "f")}
        self.assertEqual(set(starts), {1, 2, 3, 4, 5, 6, 7, 30, 31})
        self.assertEqual(set(starts), set(ends))
        api = dict(((c, (t, s)) for c, t, s in self.query(self.db,
                                                          "SELECT corr, tid, start FROM cuda_api")))
        for corr, s in starts.items():
            self.assertEqual((s["pid"], s["tid"], ns(s["ts"])), (self.pid, *api[corr]))
            self.assertEqual((ends[corr]["pid"], ends[corr]["bp"]), (self.gpu, "e"))
        self.assertEqual(ns(ends[2]["ts"]), 12000)
        # Without --flows there are none.
        self.assertFalse(self.events(self.doc, "s") + self.events(self.doc, "f"))
        self.assertNotIn(b"no launch arrows", r.err)  # this run kept its API calls

    def test_flows_without_api_records_say_so(self):
        # At the default settings no API call is kept, so no arrow can start anywhere: a trace
        # without arrows, and one line saying why and what to set.
        r = self.run_prog([prog("fixture"), "nvtx-noapi", "n.db"], preload=False)
        self.assertEqual(r.rc, 0, r.err)
        doc, _, out = self.export(r.db("n.db"), "--flows", out="noapi.json")
        self.assertFalse(self.events(doc, "s") + self.events(doc, "f"))
        self.assertIn(b"infprof: --flows:", out.err)
        self.assertIn(b"INFPROF_CUDA_API=1", out.err)


if __name__ == "__main__":
    main()
