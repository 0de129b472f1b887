"""The CUDA declarations infprof carries (vendor/cuda/: its own cupti.h, cuda.h and cudnn.h, and
NVIDIA's NVTX3, Apache-2.0) against NVIDIA's headers, and a build on them alone (issue 55).

- Every constant the vendored headers define (enum members and macros), every field of their
  structs (offset and size) and every struct's size equal NVIDIA's, compiled once against each.
- vendor/cuda/api_names.c is the table CMake generates from the toolkit's CUPTI.
- With the toolkit out of sight (INFPROF_VENDORED_CUDA=ON, nvcc not on PATH, no CUDA_HOME), the
  library and the CLI build, nothing they compile reads the toolkit, and that build profiles a
  CPU torch loop.
The comparisons skip where the toolkit is not installed; the build does not."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import BUILD, main

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENDOR = os.path.join(SRC, "vendor", "cuda", "include")


def toolkit_include():
    """The toolkit's include folder the main build used, if any."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"INFPROF_CUPTI_INCLUDE:PATH=(.+)$", line.strip())
                if m and os.path.exists(os.path.join(m.group(1), "cupti.h")):
                    return m.group(1)
    except OSError:
        pass
    return "/usr/local/cuda/include" if os.path.exists("/usr/local/cuda/include/cupti.h") else ""


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def constants(text):
    """Enum members and object-like macros a vendored header defines."""
    text = strip_comments(text)
    names = re.findall(r"(?<![\w.])([A-Z][A-Z0-9_]+)\s*=(?!=)", text)  # however it is laid out
    names += re.findall(r"^#define\s+([A-Za-z][A-Za-z0-9_]+)\s+\S", text, re.M)
    skip = ("FORCE_INT", "INFPROF_", "IP_", "CUPTIAPI")
    return sorted({n for n in names if not any(s in n for s in skip)})


def fields(text):
    """{struct: [field or outer.inner]} of the vendored header's typedef'd structs."""
    out = {}
    text = strip_comments(text)
    for body, name in re.findall(r"typedef struct[^{;]*\{(.*?)\n\} (\w+);", text, re.S):
        got, outer = [], None
        for line in body.split("\n"):
            if re.match(r"^    struct\b.*\{$", line):
                outer = []
                continue
            m = re.match(r"^    \} (\w+);$", line)
            if m and outer is not None:
                got += [m.group(1) + "." + f for f in outer]
                outer = None
                continue
            m = re.match(r"^\s+[^;()]*?\b(\w+)\s*(\[\d+\])?;$", line)
            if m and not m.group(1).startswith("ip_pad"):
                (outer if outer is not None else got).append(m.group(1))
        out[name] = got
    return out


def probe_source(header):
    with open(os.path.join(VENDOR, header)) as f:
        text = f.read()
    src = f"#include <{header}>\n#include <stddef.h>\n#include <stdio.h>\nint main(void)\n{{\n"
    for c in constants(text):
        src += f'    printf("{c} %lld\\n", (long long)({c}));\n'
    for struct, names in fields(text).items():
        src += f'    printf("sizeof {struct} %zu\\n", sizeof({struct}));\n'
        for f in names:
            src += (f'    printf("{struct}.{f} %zu %zu\\n", offsetof({struct}, {f}),'
                    f" sizeof((({struct} *)0)->{f}));\n")
    return src + "    return 0;\n}\n"


class VendoredCuda(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="infprof-vendored-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def run_probe(self, header, include):
        c = os.path.join(self.tmp, "probe.c")
        exe = os.path.join(self.tmp, "probe")
        with open(c, "w") as f:
            f.write(probe_source(header))
        r = subprocess.run(["cc", "-std=c11", "-I", include, c, "-o", exe], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, f"{header} against {include}:\n{r.stderr}")
        return subprocess.run([exe], capture_output=True, text=True, check=True).stdout

    def test_constants_and_layouts_are_nvidias(self):
        real = toolkit_include()
        if not real:
            self.skipTest("no CUDA toolkit: nothing to compare the vendored headers with")
        for header in ("cupti.h", "cuda.h", "cudnn.h"):
            with self.subTest(header=header):
                ours = self.run_probe(header, VENDOR)
                theirs = self.run_probe(header, real)
                self.assertIn("CUDA_SUCCESS 0" if header == "cuda.h" else " 0\n", ours)
                self.assertGreater(len(ours.splitlines()), 8, ours)
                self.assertEqual(ours, theirs)

    def test_the_probe_sees_every_record_field_infprof_reads(self):
        # A field missing from the parse would go unchecked: Kernel10's and Memory4's nested.
        with open(os.path.join(VENDOR, "cupti.h")) as f:
            got = fields(f.read())
        self.assertIn("registersPerThread", got["CUpti_ActivityKernel10"])
        self.assertIn("memoryPoolConfig.address", got["CUpti_ActivityMemory4"])
        self.assertIn("correlationId", got["CUpti_CallbackData"])

    def test_api_names_are_the_toolkits(self):
        real = toolkit_include()
        if not real:
            self.skipTest("no CUDA toolkit: nothing to generate the table from")
        out = os.path.join(self.tmp, "api_names.c")
        r = subprocess.run(["cmake", f"-DINCLUDE={real}", f"-DOUT={out}", "-P",
                            os.path.join(SRC, "cmake", "gen_api_names.cmake")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as a, open(os.path.join(SRC, "vendor", "cuda", "api_names.c")) as b:
            self.assertEqual(a.read(), b.read(), "regenerate vendor/cuda/api_names.c")

    def test_builds_and_runs_without_the_toolkit(self):
        tree = os.path.join(self.tmp, "build")
        path = ":".join(p for p in os.environ.get("PATH", "").split(":")
                        if p and not os.path.exists(os.path.join(p, "nvcc")))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUDA", "INFPROF_", "NVCC")) and k != "LD_PRELOAD"}
        env["PATH"] = path
        conf = subprocess.run(["cmake", "-S", SRC, "-B", tree, "-DINFPROF_VENDORED_CUDA=ON",
                               "-DINFPROF_SAMPLES=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                              capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(conf.returncode, 0, conf.stdout + conf.stderr)
        self.assertIn("vendor/cuda/", conf.stdout)
        build = subprocess.run(["cmake", "--build", tree, "--target", "infprof", "infprof_cli",
                                "--parallel", str(os.cpu_count() or 1)],
                               capture_output=True, text=True, env=env, timeout=900)
        self.assertEqual(build.returncode, 0, build.stdout[-4000:] + build.stderr[-4000:])
        # Nothing compiled reads the toolkit: every header is vendor/cuda/'s or the system's.
        deps = subprocess.run(["find", tree, "-name", "*.d"], capture_output=True, text=True)
        for d in deps.stdout.split():
            with open(d) as f:
                self.assertNotIn("/usr/local/cuda", f.read(), d)
        with open(os.path.join(tree, "CMakeCache.txt")) as f:
            self.assertNotRegex(f.read(), r"CUDAToolkit_INCLUDE_DIR:PATH=/")
        # And it profiles: a CPU torch loop, its iterations counted.
        python = "/usr/bin/python3"
        if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode:
            self.skipTest("no torch for the run half")
        loop = os.path.join(self.tmp, "loop.py")
        with open(loop, "w") as f:
            f.write("import torch\nm = torch.nn.Linear(16, 16).eval()\nx = torch.randn(2, 16)\n"
                    "with torch.no_grad():\n    for _ in range(40):\n        m(x)\n")
        cli = os.path.join(tree, "bin", "infprof")
        r = subprocess.run([cli, "run", "-o", "v.db", "--", python, loop], cwd=self.tmp,
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        rep = subprocess.run([cli, "report", "--format", "json", "v.db"], cwd=self.tmp,
                             capture_output=True, text=True, env=env, timeout=300)
        [s] = json.loads(rep.stdout)["series"]
        self.assertEqual(s["iterations"], 40, s)


if __name__ == "__main__":
    main()
