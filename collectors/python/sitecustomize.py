# sitecustomize.py: infprof's, first on PYTHONPATH in a profiled Python process
# (collectors/torch_python.c put it there; docs/python.md). It leaves no trace the program can
# see and does nothing until the program imports torch:
#  - PYTHONPATH goes back to the program's value (INFPROF_PYTHONPATH_WAS) and our directory leaves
#    sys.path, so the program's environment and search path are its own;
#  - the program's own sitecustomize (one later on the path: the distribution's, a virtualenv's)
#    runs as it would have, its errors reported by site exactly as without us;
#  - a finder waits for `import torch` and, once torch is loaded, installs the module hooks of
#    _infprof_hooks.py (loaded from this directory by path, never from sys.path). Nothing else
#    is imported before that (not even ctypes): a program without torch runs as it would.
import os as _os
import sys as _sys


def _infprof_restore():
    here = _os.path.dirname(_os.path.abspath(__file__))
    was = _os.environ.pop("INFPROF_PYTHONPATH_WAS", None)
    if was is not None:
        if was.startswith("+"):
            _os.environ["PYTHONPATH"] = was[1:]
        else:
            _os.environ.pop("PYTHONPATH", None)
    keep = []
    for p in _sys.path:
        try:
            ours = _os.path.samefile(p, here) if p else False
        except OSError:
            ours = False
        if not ours:
            keep.append(p)
    _sys.path[:] = keep
    return here


class _InfprofTorchWatch:
    """A meta path finder that only watches for torch: it finds nothing itself."""

    def __init__(self, here):
        self.here = here

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            _sys.meta_path.remove(self)
        except ValueError:
            pass
        import importlib.util

        spec = importlib.util.find_spec("torch")
        loader = getattr(spec, "loader", None) if spec else None
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec
        here = self.here

        def exec_module(module):
            run(module)
            _infprof_hook_torch(here)

        try:
            loader.exec_module = exec_module
        except Exception:
            return spec
        return spec


def _infprof_hook_torch(here):
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "_infprof_hooks", _os.path.join(here, "_infprof_hooks.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.install()
    except Exception:
        pass  # never the program's problem: the library reports the hooks as not installed


def _infprof_site():
    here = _infprof_restore()  # the library sees INFPROF_PYTHONPATH_WAS gone: we ran
    if "torch" in _sys.modules:
        _infprof_hook_torch(here)
    else:
        _sys.meta_path.insert(0, _InfprofTorchWatch(here))


_infprof_site()

# The program's own sitecustomize, if there is one further on: it runs now, as site would have
# run it; an error in it reaches site, which reports it as it always does.
_infprof_self = _sys.modules.pop("sitecustomize", None)
try:
    import sitecustomize  # noqa: F401  (the next one on sys.path)
except ImportError as _e:
    if getattr(_e, "name", None) != "sitecustomize":
        raise
    if _infprof_self is not None:
        _sys.modules["sitecustomize"] = _infprof_self
