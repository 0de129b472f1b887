"""CMake 4's world on CI's CMake 3.25: CUDAToolkit_INCLUDE_DIRS is a list of two folders there
(include;include/cccl). Configures the project with tests/build/cmake4 first on the module path
(CMake's own FindCUDAToolkit, then the list made as CMake 4 makes it) and builds the library and
the CLI, every generated source included: a list-valued variable spliced into a custom command's
shell line fails here, as it failed on the GPU machine."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import BUILD, main

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cached(name):
    """A value of the main build's CMake cache (where it found CUDA)."""
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"{name}:[A-Z]+=(.*)$", line.strip())
            if m:
                return m.group(1)
    return ""


class Cmake4World(unittest.TestCase):
    def test_two_folder_include_list_builds(self):
        tmp = tempfile.mkdtemp(prefix="infprof-cmake4-")
        try:
            nvcc = cached("CUDAToolkit_NVCC_EXECUTABLE") or shutil.which("nvcc") or ""
            args = ["cmake", "-S", SRC, "-B", tmp, "-G", "Ninja", "-DBUILD_TESTING=OFF",
                    "-DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON",
                    f"-DCMAKE_MODULE_PATH={SRC}/tests/build/cmake4",
                    "--trace-expand", f"--trace-source={SRC}/CMakeLists.txt"]
            if nvcc:
                args.append(f"-DCUDAToolkit_ROOT={os.path.dirname(os.path.dirname(nvcc))}")
            conf = subprocess.run(args, capture_output=True, text=True, timeout=300)
            self.assertEqual(conf.returncode, 0, conf.stdout + conf.stderr)
            # The condition under test really holds: the project saw a two-folder list.
            seen = re.search(r"set\(INFPROF_CUDA_INCLUDE ([^)]*)\)", conf.stderr)
            self.assertIsNotNone(seen, "trace of set(INFPROF_CUDA_INCLUDE ...) not found")
            self.assertIn("/cccl", seen.group(1))
            self.assertIn(";", seen.group(1))
            build = subprocess.run(["cmake", "--build", tmp, "--target", "infprof", "infprof_cli"],
                                   capture_output=True, text=True, timeout=600)
            self.assertEqual(build.returncode, 0, build.stdout[-4000:] + build.stderr[-4000:])
            with open(os.path.join(tmp, "gen", "api_names.c")) as f:
                names = f.read()
            self.assertIn('"cudaLaunchKernel"', names)
            self.assertIn('"cuLaunchKernel"', names)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
