"""infprof, a profiler for PyTorch inference on NVIDIA GPUs and CPUs: the Python package.

It carries the native parts, built by CMake when the package is built (setup.py), in _native/:
bin/infprof (the command line), lib/libinfprof.so (the library `infprof run` preloads) and
share/infprof/python (the Python module hooks the library loads), the layout of a CMake install,
so that each finds the others by its own path. `infprof ...` and `python -m infprof ...` run
the command line with the same arguments.
"""
import os

_NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")


def _version():
    try:
        from importlib.metadata import version
        return version("infprof")
    except Exception:  # not installed (a checkout on sys.path)
        return "unknown"


__version__ = _version()


def cli_path():
    """The infprof command line this package carries."""
    return os.path.join(_NATIVE, "bin", "infprof")


def library_path():
    """libinfprof.so, for LD_PRELOAD."""
    return os.path.join(_NATIVE, "lib", "libinfprof.so")
