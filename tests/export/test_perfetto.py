"""`infprof export --format perfetto` (and the JSON trace's names): a Perfetto-native protobuf trace of the H100 Python fixture
that protoc decodes against Perfetto's field numbers (perfetto_subset.proto) with no field left
unknown, at most 170 bytes per kernel (150 on the TorchScript ResNet-50), every GPU activity on its stream's track, the phases and
memory counters on theirs; --max-mb keeps it under the cap and says what it left out."""
import json
import os
import re
import shutil
import subprocess
import unittest

from export_common import h100_copy
from harness import Case, main, prog

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOC = shutil.which("protoc")  # Debian's protobuf-compiler (scripts/deps.sh)


def decode(path):
    with open(path, "rb") as f:
        p = subprocess.run([PROTOC, "--decode=perfetto.protos.Trace", "-I" + HERE,
                            os.path.join(HERE, "perfetto_subset.proto")],
                           stdin=f, capture_output=True)
    if p.returncode != 0:
        raise AssertionError("protoc could not decode %s: %s" % (path, p.stderr.decode()))
    return p.stdout.decode()


def packets(text):
    """Each top-level packet's text."""
    return re.findall(r"^packet \{\n(.*?)^\}\n", text, re.S | re.M)


@unittest.skipUnless(PROTOC, "protoc is missing: apt-get install protobuf-compiler")
class Perfetto(Case):
    def fixture(self, name):
        return h100_copy(self.dir, name)

    def test_python_fixture(self):
        db = self.fixture("resnet50-b1-python-eager")
        out = os.path.join(self.dir, "trace.pftrace")  # the extension picks the format
        r = self.cli("export", db, "-o", out)
        self.assertEqual(r.rc, 0, r.err)
        text = decode(out)
        self.assertNotRegex(text, r"(?m)^\s*\d+:", "a field Perfetto does not define")
        kernels = self.query(db, "SELECT count(*) FROM kernels")[0][0]
        gpu = kernels + self.query(db, "SELECT (SELECT count(*) FROM memcpy) +"
                                       " (SELECT count(*) FROM memset)")[0][0]
        size = os.path.getsize(out)
        # 150 bytes a kernel is the TorchScript ResNet-50's goal (test_trivial_api_calls...);
        # this eager run also holds about two tensor memory counter values a kernel: 159.
        self.assertLessEqual(size / kernels, 170, "%d bytes for %d kernels" % (size, kernels))

        tracks, names = {}, {}
        for m in re.finditer(r"track_descriptor \{\n\s*uuid: (\d+)\n(?:\s*name: \"([^\"]*)\")?",
                             text):
            tracks[m.group(1)] = m.group(2) or ""
        for m in re.finditer(r"event_names \{\n\s*iid: (\d+)\n\s*name: \"((?:[^\"\\]|\\.)*)\"",
                             text):
            names[m.group(1)] = m.group(2)
        begins = {}
        for p in packets(text):
            t = re.search(r"track_uuid: (\d+)", p)
            if "TYPE_SLICE_BEGIN" in p and t:
                kind = tracks.get(t.group(1), "")
                kind = "stream" if kind.startswith("GPU ") else kind
                begins[kind] = begins.get(kind, 0) + 1
        self.assertEqual(begins.get("stream"), gpu)  # every kernel, copy and memset
        phases = self.query(db, "SELECT count(*) FROM phase_spans")[0][0]
        self.assertEqual(begins.get("phases"), phases)
        labels = {l for (l,) in self.query(db, "SELECT label FROM phases")}
        self.assertTrue(labels <= set(names.values()), labels - set(names.values()))
        # Kernel names demangled, as people read them.
        self.assertTrue(any(n.startswith("void at::native::") for n in names.values()))
        self.assertFalse(any(n.startswith("_ZN") for n in names.values()))
        self.assertIn('tensor memory allocated cuda:0', text)
        self.assertIn("TYPE_COUNTER", text)
        for p in packets(text):  # every event says what it is, on its sequence
            if "track_event {" in p:
                self.assertRegex(p, r"type: TYPE_", p)
                # trace_processor drops a TrackEvent packet without it (track_event_tokenizer.cc)
                self.assertIn("trusted_packet_sequence_id: 1", p)
        self.assertIn('process_name: "python3"', text)

    def test_overlapping_kernels_keep_their_durations(self):
        # The ResNet-50 TorchScript fixture has 58 kernels that start before the previous one on
        # their stream ends (programmatic dependent launch). Paired per track as a trace viewer
        # does (events sorted by time, stably; an end closes the innermost open slice), every
        # GPU slice must have its own row's duration.
        db = self.fixture("resnet50-b32-script")
        out = os.path.join(self.dir, "r50.pftrace")
        r = self.cli("export", db, "-o", out, "--max-mb", "0")
        self.assertEqual(r.rc, 0, r.err)
        text = decode(out)
        names, parent = {}, {}
        for m in re.finditer(r"track_descriptor \{\n\s*uuid: (\d+)\n(?:\s*name: \"([^\"]*)\"\n)?"
                             r"(?:\s*parent_uuid: (\d+))?", text):
            names[m.group(1)] = m.group(2) or ""
            parent[m.group(1)] = m.group(3)
        events = {}
        for order, p in enumerate(packets(text)):
            t = re.search(r"track_uuid: (\d+)", p)
            ts = re.search(r"^\s*timestamp: (\d+)", p, re.M)
            kind = re.search(r"type: (TYPE_SLICE_BEGIN|TYPE_SLICE_END)", p)
            if t and ts and kind:
                events.setdefault(t.group(1), []).append((int(ts.group(1)), order,
                                                          kind.group(1)))
        got = []
        for uuid, evs in events.items():
            if not names.get(uuid, "").startswith("GPU "):
                continue
            stack = []
            for ts, _, kind in sorted(evs):
                if kind == "TYPE_SLICE_BEGIN":
                    stack.append(ts)
                else:
                    got.append(ts - stack.pop())
        want = [d for (d,) in self.query(db, "SELECT dur FROM kernel_rows UNION ALL"
                                             " SELECT dur FROM memcpy UNION ALL"
                                             " SELECT dur FROM memset")]
        self.assertEqual(len(got), len(want))
        wrong = sum(1 for a, b in zip(sorted(got), sorted(want)) if a != b)
        self.assertEqual(wrong, 0, "GPU slices with another duration than their row")
        self.assertTrue(any("(overlap 1)" in n for n in names.values()))

    def test_cap_cuts_and_says_so(self):
        db = self.fixture("resnet50-b32-script")
        out = os.path.join(self.dir, "cut.pftrace")
        r = self.cli("export", db, "-o", out, "--max-mb", "1")
        self.assertEqual(r.rc, 0, r.err)
        self.assertLessEqual(os.path.getsize(out), 1 << 20)
        self.assertRegex(r.err.decode(), r"infprof: the trace was cut: \d+ events from [\d.]+m?s"
                                         r" on left out \(--max-mb: 1.00MiB\)")
        text = decode(out)
        self.assertIn('name: "infprof: trace cut"', text)
        self.assertIn("iteration id", text)  # iterations with their ids, before the cut
        # The whole trace is bigger: the cap did cut.
        whole = os.path.join(self.dir, "whole.perfetto-trace")
        self.assertEqual(self.cli("export", db, "-o", whole, "--max-mb", "0").rc, 0)
        self.assertGreater(os.path.getsize(whole), 1 << 20)

    def test_names_are_valid_utf8_with_nothing_hidden(self):
        # The .pftrace wrote names as raw bytes (6 not UTF-8, 18 with ESC sequences in one run)
        # where the JSON trace escaped them: now the report's one rule, as text shows them.
        text = b"iteration \xc2\x9b31m red \x1b[0m \xc0 caf\xc3\xa9 \xe2\x80\xae"
        r = self.run_prog([prog("nvtx_ranges"), "2", text], INFPROF_OUTPUT="h.db")
        self.assertEqual(r.rc, 0, r.err)
        out = os.path.join(self.dir, "h.pftrace")
        e = self.cli("export", "--format", "perfetto", r.db("h.db"), "-o", out)
        self.assertEqual(e.rc, 0, e.err)
        with open(out, "rb") as f:
            raw = f.read()
        # (the file is binary: its own bytes may be anything; the name's raw sequences may not)
        for bad in (b"red \x1b[0m", b"\xc2\x9b31m", b" \xc0 caf", b"\xa9 \xe2\x80\xae"):
            self.assertNotIn(bad, raw)
        self.assertIn(b"iteration \\u009b31m red \\x1b[0m \\xc0 caf\xc3\xa9 \\u202e", raw)
        decode(out)  # protoc reads every string field

    def test_json_trace_names_too(self):
        # The Chrome JSON trace shows the same demangled kernel names.
        db = self.fixture("resnet50-b1-python-eager")
        out = os.path.join(self.dir, "t.json")
        self.assertEqual(self.cli("export", db, "-o", out).rc, 0)
        with open(out) as f:
            names = {e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"}
        self.assertTrue(names)
        self.assertFalse([n for n in names if n.startswith("_Z")])
        self.assertTrue(any(n.startswith("void at::native::") for n in names))

    def test_json_trace_has_the_iterations(self):
        # Every source of iterations (TorchScript calls here, which have no NVTX range), on a
        # track of their own per thread.
        for name in ("resnet50-b32-script", "transformer-b8", "convnet-b32-noeval"):
            db = self.fixture(name)
            out = os.path.join(self.dir, name + ".json")
            self.assertEqual(self.cli("export", db, "-o", out).rc, 0)
            with open(out) as f:
                events = json.load(f)["traceEvents"]
            got = [e for e in events if e.get("cat") == "iteration"]
            want = self.query(db, "SELECT count(*) FROM iterations")[0][0]
            self.assertGreater(want, 0, name)
            self.assertEqual(len(got), want, name)
            tracks = {e["tid"] for e in events if e.get("ph") == "M" and
                      e.get("args", {}).get("name", "").endswith(" iterations")}
            self.assertTrue({e["tid"] for e in got} <= tracks, name)

    def test_operators_in_both_traces(self):
        # tests/progs/ops_fixture.c: aten::conv2d around aten::cudnn_convolution, kernels in
        # each and one outside. The JSON trace has the operators on their thread's track,
        # nested as they ran (as torch.profiler's cpu_op), and each kernel names the operator
        # it was launched in; the .pftrace has them on the thread's "operators" track and the
        # kernel's operator as an annotation.
        db = os.path.join(self.dir, "ops.db")
        r = self.run_prog([prog("ops_fixture"), "nested", db], preload=False,
                          INFPROF_OPERATORS="1")
        self.assertEqual(r.rc, 0, r.err)
        out = os.path.join(self.dir, "ops.json")
        self.assertEqual(self.cli("export", db, "-o", out).rc, 0)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        ops = {e["name"]: e for e in events if e.get("cat") == "cpu_op"}
        self.assertEqual(set(ops), {"aten::conv2d", "aten::cudnn_convolution"})
        outer, inner = ops["aten::conv2d"], ops["aten::cudnn_convolution"]
        self.assertEqual(outer["tid"], inner["tid"])
        self.assertLessEqual(outer["ts"], inner["ts"])
        self.assertGreaterEqual(outer["ts"] + outer["dur"], inner["ts"] + inner["dur"])
        self.assertEqual((outer["args"]["depth"], inner["args"]["depth"]), (0, 1))
        kernels = {e["name"]: e["args"].get("operator") for e in events
                   if e.get("cat") == "kernel"}
        self.assertEqual(kernels, {"outer": "aten::conv2d", "inner": "aten::cudnn_convolution",
                                   "after": "aten::conv2d", "none": None})
        if not PROTOC:
            return
        pf = os.path.join(self.dir, "ops.pftrace")
        self.assertEqual(self.cli("export", db, "-o", pf).rc, 0)
        text = decode(pf)
        evs, names = self.events_by_track(text)
        track = [u for u, n in names.items() if n == "operators"]
        self.assertEqual(len(track), 1, names)
        kinds = [k for _, k, _ in evs[track[0]]]
        self.assertEqual(kinds, ["TYPE_SLICE_BEGIN", "TYPE_SLICE_BEGIN", "TYPE_SLICE_END",
                                 "TYPE_SLICE_END"])
        values = set(re.findall(r"str: \"(aten::[a-z_0-9]+)\"", text))
        self.assertEqual(values, {"aten::conv2d", "aten::cudnn_convolution"})
        self.assertIn('name: "operator"', text)

    def test_trivial_api_calls_left_out_and_counted(self):
        # The real ResNet-50 TorchScript run held 909,469 CUDA API calls for 56,523 kernels,
        # 496,370 of them cudaGetDevice (245 ns each); its trimmed copy here keeps only the calls
        # that launched work. The trivial ones are put back (500,000 cudaGetDevice of 245 ns,
        # with a few of 2 us, which are kept): at defaults the .pftrace stays under 150 bytes a
        # kernel with every kernel, copy, memset, phase, iteration and NVTX range, says how many
        # calls it left out, and --all-api keeps them all.
        import sqlite3
        db = self.fixture("resnet50-b32-script")
        con = sqlite3.connect(db)
        con.execute("INSERT INTO strings (value) VALUES ('cudaGetDevice')")
        name = con.execute("SELECT max(id) FROM strings").fetchone()[0]
        tid, t0 = con.execute("SELECT tid, min(start) FROM cuda_api").fetchone()
        corr = con.execute("SELECT max(corr) FROM cuda_api").fetchone()[0] + 1
        con.executemany("INSERT INTO cuda_api (corr, start, dur, tid, name_id, cbid, domain, ret,"
                        " phase) VALUES (?, ?, ?, ?, ?, 17, 1, 0, 1)",
                        ((corr + i, t0 + 100 * i, 2000 if i % 1000 == 0 else 245, tid, name)
                         for i in range(500_000)))
        con.commit()
        con.close()
        kernels = self.query(db, "SELECT count(*) FROM kernels")[0][0]
        out = os.path.join(self.dir, "r.pftrace")
        r = self.cli("export", db, "-o", out)
        self.assertEqual(r.rc, 0, r.err)
        self.assertIn(b"infprof: 499500 CUDA API calls under 1 us that launched nothing"
                      b" (cudaGetDevice and the like) left out; --all-api keeps them", r.err)
        size = os.path.getsize(out)
        self.assertLessEqual(size / kernels, 150, "%d bytes for %d kernels" % (size, kernels))
        text = decode(out)
        self.assertEqual(text.count('name: "cudaGetDevice"'), 1)  # interned once, 500 kept
        everything = os.path.join(self.dir, "all.pftrace")
        r = self.cli("export", db, "--all-api", "-o", everything)
        self.assertEqual(r.rc, 0, r.err)
        self.assertNotIn(b"left out", r.err)
        self.assertGreater(os.path.getsize(everything), size + 500_000 * 4)
        # The JSON trace leaves the same calls out.
        js = os.path.join(self.dir, "r.json")
        r = self.cli("export", db, "-o", js)
        self.assertEqual(r.rc, 0, r.err)
        with open(js) as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual(sum(1 for e in events if e.get("name") == "cudaGetDevice"), 500)

    def events_by_track(self, text):
        """uuid -> [(timestamp, kind, packet text)] in file order, and uuid -> track name."""
        names = {}
        for m in re.finditer(r"track_descriptor \{\n\s*uuid: (\d+)\n(?:\s*name: \"([^\"]*)\")?",
                             text):
            names[m.group(1)] = m.group(2) or ""
        events = {}
        for p in packets(text):
            t = re.search(r"track_uuid: (\d+)", p)
            ts = re.search(r"^\s*timestamp: (\d+)", p, re.M)
            kind = re.search(r"type: (TYPE_\w+)", p)
            if t and ts and kind:
                events.setdefault(t.group(1), []).append((int(ts.group(1)), kind.group(1), p))
        return events, names

    def test_every_track_in_time_order(self):
        # Each track's packets stand in time order in the file, so a reader that does not sort
        # pairs every begin with its own end: the thread tracks carry NVTX ranges, cuDNN and
        # CUDA API calls, which nest; the GPU tracks' slices pair to their rows' durations.
        for name in ("resnet50-b1-python-eager", "resnet50-b32-script", "transformer-b8",
                     "convnet-b32-noeval"):
            db = self.fixture(name)
            out = os.path.join(self.dir, name + ".pftrace")
            r = self.cli("export", db, "-o", out, "--max-mb", "0")
            self.assertEqual(r.rc, 0, r.err)
            events, names = self.events_by_track(decode(out))
            got, open_left = [], 0
            for uuid, evs in events.items():
                stamps = [ts for ts, _, _ in evs]
                self.assertEqual(stamps, sorted(stamps), (name, names.get(uuid)))
                stack = []
                for ts, kind, _ in evs:  # file order, as it stands
                    if kind == "TYPE_SLICE_BEGIN":
                        stack.append(ts)
                    elif kind == "TYPE_SLICE_END":
                        begun = stack.pop()
                        if names.get(uuid, "").startswith("GPU "):
                            got.append(ts - begun)
                open_left += len(stack)
            want = [d for (d,) in self.query(db, "SELECT dur FROM kernel_rows UNION ALL"
                                                 " SELECT dur FROM memcpy UNION ALL"
                                                 " SELECT dur FROM memset")]
            self.assertEqual(sorted(got), sorted(want), name)
            # Slices left open are those whose rows never ended (NVTX ranges, phase spans).
            unended = self.query(db, "SELECT (SELECT count(*) FROM nvtx_ranges WHERE end IS NULL"
                                     " AND kind != 3)")[0][0]
            self.assertLessEqual(open_left, unended + 8, name)

    def test_arguments_and_counters_as_in_the_json(self):
        # What the JSON trace has, the .pftrace has: each kernel's launch (grid, block,
        # registers, shared memory, phase) as an interned annotation, each copy's bytes, and the
        # tensor and device memory counters with the JSON's values.
        import sqlite3
        db = self.fixture("convnet-b32-noeval")
        out = os.path.join(self.dir, "c.pftrace")
        self.assertEqual(self.cli("export", db, "-o", out, "--max-mb", "0").rc, 0)
        text = decode(out)
        values = dict(re.findall(r"debug_annotation_string_values \{\n\s*iid: (\d+)\n"
                                 r"\s*str: \"([^\"]*)\"", text))
        con = sqlite3.connect(db)
        want = {}
        for corr, gx, gy, gz, bx, by, bz in con.execute(
                "SELECT k.corr, grid_x, grid_y, grid_z, block_x, block_y, block_z FROM kernels k"
                " JOIN launch_sigs g ON g.id = k.sig"):
            want[corr] = f"grid {gx}x{gy}x{gz}, block {bx}x{by}x{bz}, "
        events, names = self.events_by_track(text)
        kernels = 0
        for uuid, evs in events.items():
            if not names.get(uuid, "").startswith("GPU "):
                continue
            for _, kind, p in evs:
                if kind != "TYPE_SLICE_BEGIN":
                    continue
                corr = int(re.search(r"correlation_id: (\d+)", p).group(1))
                iid = re.search(r"string_value_iid: (\d+)", p)
                if corr in want and iid:
                    self.assertTrue(values[iid.group(1)].startswith(want[corr]), (p, want[corr]))
                    kernels += 1
                elif not iid:
                    self.assertRegex(p, r"int_value: \d+")  # a copy's or memset's bytes
        self.assertEqual(kernels, len(want))
        # Counters: every value of each JSON counter, in the same order.
        js = os.path.join(self.dir, "c.json")
        self.assertEqual(self.cli("export", db, "-o", js).rc, 0)
        with open(js) as f:
            jev = json.load(f)["traceEvents"]
        series = {"tensor memory allocated cuda:0": ("GPU 0 tensors", "allocated"),
                  "tensor memory allocated cpu": ("CPU tensors", "allocated"),  # index -1
                  "GPU 0 device memory": ("GPU 0 device memory", "bytes")}
        by_name = {v: k for k, v in names.items()}
        for ours, (jname, key) in series.items():
            self.assertIn(ours, by_name, ours)
            got = [int(re.search(r"counter_value: (-?\d+)", p).group(1))
                   for _, kind, p in events[by_name[ours]] if kind == "TYPE_COUNTER"]
            theirs = [e["args"][key] for e in jev if e.get("ph") == "C" and e["name"] == jname
                      and key in e["args"]]
            dedup = [v for i, v in enumerate(theirs) if i == 0 or v != theirs[i - 1]]
            self.assertGreater(len(got), 1, ours)
            self.assertEqual(got, dedup, ours)

    def test_bad_input(self):
        db = self.fixture("resnet50-b1-python-eager")
        r = self.cli("export", db, "-o", os.path.join(self.dir, "t"), "--format", "xml")
        self.assertOneErrorLine(r, "--format takes json or perfetto")
        r = self.cli("export", db, "-o", os.path.join(self.dir, "t.pftrace"), "--flows")
        self.assertOneErrorLine(r, "--flows is for the JSON trace")
        kept = os.path.join(self.dir, "kept.pftrace")
        with open(kept, "w") as f:
            f.write("mine")
        r = self.cli("export", db, "-o", kept)
        self.assertEqual(r.rc, 2)
        with open(kept) as f:
            self.assertEqual(f.read(), "mine")


if __name__ == "__main__":
    main()
