"""setup.py: builds the native parts with CMake when pip builds the package (pyproject.toml).

The library and the command line are built in Release, without the tests and the libtorch
samples, into INFPROF_PIP_BUILD_DIR (default build-pip/cmake, beside the checkout's own build/),
then copied with the Python hooks into the package's _native/ folder in the layout of a CMake
install (bin/, lib/, share/infprof/python/), so that each finds the others by its own path. The
wheel is tagged for this platform and any Python 3: nothing in it is a Python extension.

Without a CUDA toolkit, CMake builds on infprof's own CUDA declarations (vendor/cuda/).

Environment: CMAKE (the cmake to run), INFPROF_CMAKE_ARGS (more configure arguments, e.g.
-DINFPROF_VENDORED_CUDA=ON), CMAKE_GENERATOR (CMake's own), CMAKE_BUILD_PARALLEL_LEVEL.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build-pip"), exist_ok=True)  # setup.cfg's egg_base


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(infprof VERSION ([0-9.]+)", f.read())
    if not m:
        sys.exit("setup.py: no project(infprof VERSION ...) in CMakeLists.txt")
    return m.group(1)


def fresh_tree(tree):
    """A CMake tree configured for another source folder (a copied checkout, its build-pip/ with
    it) cannot be reused: CMake refuses it. Start that one again; any other is kept (rebuilds
    are incremental)."""
    cache = os.path.join(tree, "CMakeCache.txt")
    try:
        with open(cache) as f:
            home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", f.read(), re.M)
    except OSError:
        return
    if home and os.path.realpath(home.group(1)) != os.path.realpath(ROOT):
        print(f"setup.py: {tree} was configured for {home.group(1)}: starting it again",
              flush=True)
        shutil.rmtree(tree)


class build_native(build_py):
    """build_py, then CMake's build of the library and the command line into the package."""

    def run(self):
        super().run()
        cmake = os.environ.get("CMAKE") or shutil.which("cmake")
        if not cmake:
            sys.exit("setup.py: cmake is needed to build infprof (Debian: apt install cmake)")
        tree = os.environ.get("INFPROF_PIP_BUILD_DIR") or os.path.join(ROOT, "build-pip", "cmake")
        fresh_tree(tree)
        config = [cmake, "-S", ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
                  "-DBUILD_TESTING=OFF", "-DINFPROF_SAMPLES=OFF"]
        config += shlex.split(os.environ.get("INFPROF_CMAKE_ARGS", ""))
        parallel = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        for cmd in (config, [cmake, "--build", tree, "--target", "infprof", "infprof_cli",
                             "--parallel", parallel]):
            print(" ".join(cmd), flush=True)
            subprocess.check_call(cmd)
        native = os.path.join(self.build_lib, "infprof", "_native")
        shutil.rmtree(native, ignore_errors=True)
        for rel in ("bin/infprof", "lib/libinfprof.so", "share/infprof/python"):
            src, dst = os.path.join(tree, rel), os.path.join(native, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.isdir(src):
                shutil.copytree(src, dst)
            else:
                shutil.copy2(src, dst)  # keeps the executable bit, which the wheel records


class native_distribution(Distribution):
    def has_ext_modules(self):
        return True  # a platform wheel, installed in platlib


cmdclass = {"build_py": build_native}
try:
    from wheel.bdist_wheel import bdist_wheel

    class bdist_wheel_any_python(bdist_wheel):
        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat  # no Python extension: any Python 3 on this platform

    cmdclass["bdist_wheel"] = bdist_wheel_any_python
except ImportError:
    pass

setup(version=project_version(), cmdclass=cmdclass, distclass=native_distribution)
