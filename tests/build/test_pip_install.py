"""`pip install` for Python users (issue 55): the checkout, as a clone has it, installed with
`pip install --no-build-isolation` into a fresh venv (with the system's site packages, for this
machine's torch), offline and without the CUDA toolkit (vendor/cuda/); then `infprof run` and `python -m infprof run` over a small unmarked
torch loop, whose report holds its iterations; and a wheel of it, whose files sit where an
install finds them. Skipped where pip, venv, setuptools or torch is missing."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from harness import main

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
LOOP = """import torch
m = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
x = torch.randn(4, 32)
with torch.no_grad():
    for _ in range(60):
        m(x)
print("done")
"""


def missing():
    for mod in ("pip", "venv", "setuptools", "wheel", "torch"):
        if subprocess.run([PYTHON, "-c", f"import {mod}"], capture_output=True).returncode:
            return mod
    if not shutil.which("cmake"):
        return "cmake"
    return None


class PipInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gone = missing()
        if gone:
            raise unittest.SkipTest(f"no {gone} for {PYTHON} (Debian: scripts/deps.sh installs"
                                    " python3-pip, python3-venv, python3-setuptools, python3-wheel)")
        cls.tmp = tempfile.mkdtemp(prefix="infprof-pip-")
        cls.src = os.path.join(cls.tmp, "src")
        # The checkout as a clone has it, with this working tree's changes: the tracked and the
        # untracked files git does not ignore, and the repository (for the commit).
        files = subprocess.run(["git", "-C", SRC, "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], capture_output=True, check=True).stdout
        for rel in filter(None, files.decode().split("\0")):
            if os.path.exists(os.path.join(SRC, rel)):
                os.makedirs(os.path.dirname(os.path.join(cls.src, rel)), exist_ok=True)
                shutil.copy2(os.path.join(SRC, rel), os.path.join(cls.src, rel))
        shutil.copytree(os.path.join(SRC, ".git"), os.path.join(cls.src, ".git"), symlinks=True)
        cls.status = cls.git_status()
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", cls.venv], check=True)
        # As in a Python environment without the CUDA toolkit: CMake told not to look for it
        # (it would find /usr/local/cuda by itself), nvcc off the PATH (vendor/cuda/).
        cls.env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("INFPROF_", "CUDA")) and k != "LD_PRELOAD"}
        cls.env.update(INFPROF_PIP_BUILD_DIR=os.path.join(cls.tmp, "cmake"),
                       INFPROF_CMAKE_ARGS="-DINFPROF_VENDORED_CUDA=ON",
                       PATH=":".join(p for p in os.environ.get("PATH", "").split(":")
                                     if p and not os.path.exists(os.path.join(p, "nvcc"))))
        cls.install = subprocess.run([cls.bin("pip"), "install", "--no-build-isolation",
                                      "--no-deps", "--no-index", cls.src], capture_output=True,
                                     text=True, env=cls.env, timeout=900)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def git_status(cls):
        return subprocess.run(["git", "-C", cls.src, "status", "--porcelain"],
                              capture_output=True, text=True).stdout

    @classmethod
    def bin(cls, name):
        return os.path.join(cls.venv, "bin", name)

    def run_in(self, argv, **kw):
        return subprocess.run(argv, capture_output=True, text=True, cwd=self.tmp, env=self.env,
                              timeout=300, **kw)

    def test_installs_and_profiles_an_unmarked_loop(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout[-3000:] +
                         self.install.stderr[-3000:])
        with open(os.path.join(self.tmp, "cmake", "CMakeCache.txt")) as f:
            self.assertIn("INFPROF_VENDORED_CUDA:BOOL=ON", f.read())  # no toolkit was used
        loop = os.path.join(self.tmp, "loop.py")
        with open(loop, "w") as f:
            f.write(LOOP)
        for name, cmd in (("a.db", [self.bin("infprof")]),
                          ("b.db", [self.bin("python"), "-m", "infprof"])):
            with self.subTest(cmd=cmd):
                r = self.run_in(cmd + ["run", "-o", name, "--", self.bin("python"), loop])
                self.assertEqual((r.returncode, r.stdout), (0, "done\n"), r.stderr)
                rep = self.run_in([self.bin("infprof"), "report", "--format", "json", name])
                self.assertEqual(rep.returncode, 0, rep.stderr)
                [s] = json.loads(rep.stdout)["series"]
                self.assertEqual(s["series"], "Sequential")
                self.assertEqual(s["iterations"], 60, s)

    def test_version_is_the_projects_with_its_commit(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr[-3000:])
        with open(os.path.join(SRC, "CMakeLists.txt")) as f:
            version = re.search(r"project\(infprof VERSION ([0-9.]+)", f.read()).group(1)
        head = subprocess.run(["git", "-C", self.src, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        for cmd in ([self.bin("infprof")], [self.bin("python"), "-m", "infprof"]):
            r = self.run_in(cmd + ["--version"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, rf"^infprof {re.escape(version)} \(commit {head}, ")
        r = self.run_in([self.bin("python"), "-c", "import infprof; print(infprof.__version__)"])
        self.assertEqual(r.stdout.strip(), version)

    def test_a_wheel_holds_what_an_install_finds(self):
        out = os.path.join(self.tmp, "wheels")
        r = self.run_in([self.bin("pip"), "wheel", "--no-build-isolation", "--no-deps",
                         "--no-index", "-w", out, self.src])
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        [whl] = os.listdir(out)
        self.assertRegex(whl, r"^infprof-[0-9.]+-py3-none-linux_\w+\.whl$")
        with zipfile.ZipFile(os.path.join(out, whl)) as z:
            infos = {i.filename: i for i in z.infolist()}
            entry = z.read(next(n for n in infos if n.endswith("entry_points.txt"))).decode()
        for name, executable in (("infprof/_native/bin/infprof", True),
                                 ("infprof/_native/lib/libinfprof.so", None),
                                 ("infprof/_native/share/infprof/python/sitecustomize.py", False),
                                 ("infprof/_native/share/infprof/python/_infprof_hooks.py", False),
                                 ("infprof/__main__.py", False)):
            self.assertIn(name, infos)
            if executable:
                self.assertTrue((infos[name].external_attr >> 16) & 0o100, name)
        self.assertIn("infprof = infprof.__main__:main", entry)
        # Nothing of the build was written into the checkout but its own ignored folder.
        self.assertEqual(self.git_status(), self.status)


if __name__ == "__main__":
    main()
