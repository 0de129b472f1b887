"""Helpers shared by the torch tests: the libtorch programs (skipped only when libtorch was not
found at build time), the samples' reference lines, phases as the database and the report see
them."""
import json
import os
import unittest

from harness import BUILD, Case, prog

SAMPLE_INFER = os.path.join(BUILD, "bin", "infprof-sample-infer")
SAMPLE_SCRIPT = os.path.join(BUILD, "bin", "infprof-sample-script")
TORCH_MODES = prog("torch_modes")
AOTI_APP = prog("aoti_app")
NVTX_TOOL = prog("nvtx_tool.so")

# Phase ids are fixed: 1 + 3 * grad + autocast.
PHASE = {}
for g, grad in enumerate(("grad", "no_grad", "inference_mode")):
    for a, ac in enumerate(("off", "fp16", "bf16")):
        PHASE[f"{grad} | autocast {ac}"] = 1 + 3 * g + a
LABEL = {v: k for k, v in PHASE.items()}

# The samples' default phases on CPU, in their order: every grad mode, each with autocast off
# and bf16 (CPU autocast is bf16 only in 1.13).
CPU_PHASES = ["grad | autocast off", "grad | autocast bf16", "no_grad | autocast off",
              "no_grad | autocast bf16", "inference_mode | autocast off",
              "inference_mode | autocast bf16"]

# The libtorch the test programs were built against (tests/CMakeLists.txt), as (major, minor).
TORCH_VERSION = tuple(int(v) for v in
                      (os.environ.get("INFPROF_TEST_TORCH_VERSION") or "0.0").split(".")[:2])

# torch_modes allocates one 1000-byte tensor at static initialisation and keeps it to the end.
STATIC_BYTES = 1000


def need(path):
    if not os.path.exists(path):
        raise unittest.SkipTest(f"{os.path.basename(path)} was not built (libtorch not found)")
    return path


def refs(out):
    """The samples' reference lines: 'ref {json}' per phase, in the order they ran."""
    return [json.loads(line[4:]) for line in out.decode().splitlines() if line.startswith("ref ")]


def models(out):
    return [json.loads(line[6:]) for line in out.decode().splitlines()
            if line.startswith("model ")]


def compress(seq):
    out = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


class TorchCase(Case):
    def spans(self, db, tid=None):
        """[(tid, phase, start, end)] in time order."""
        sql = "SELECT tid, phase, start, end FROM phase_spans"
        args = ()
        if tid is not None:
            sql += " WHERE tid = ?"
            args = (tid,)
        return self.query(db, sql + " ORDER BY start, rowid", *args)

    def main_tid(self, db):
        return self.meta(db, "pid")

    def phases_by_label(self, db):
        return {p["label"]: p for p in self.report_json(db)["phases"]}

    def assertIterationsInsideSpans(self, db):
        """Every iteration lies inside one span of its own phase on its own thread: phases
        change exactly where the program changed them, never inside a forward call."""
        bad = self.query(db, """
            SELECT i.tid, i.phase, i.start, i.dur FROM iterations i WHERE NOT EXISTS (
                SELECT 1 FROM phase_spans s WHERE s.tid = i.tid AND s.phase = i.phase
                AND s.start <= i.start AND coalesce(s.end, 1 << 62) >= i.start + i.dur)""")
        self.assertEqual(bad, [])
