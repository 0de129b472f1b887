# _infprof_hooks.py: the Python half of collectors/torch_python.c (docs/python.md). In a Python
# program that marks no iteration, the outermost nn.Module call is one.
#
# Cost (docs/performance.md): PyTorch's global module hooks take every module call off its fast
# path, so they are armed only while no iteration is open. The first module call seen while armed
# is the outermost one (the root): the hooks are disarmed for the length of its forward (its inner
# modules keep their fast path) and a hook on that one module, removed at its end, closes the
# iteration and re-arms them. A new root (a second model, an int8 copy) is seen at its first call.
#
# Not iterations: calls made while a DataLoader makes a batch (the library knows: its scope is
# open), inside torch.jit.trace (its check calls are set-up), torchvision transforms, losses,
# quantization observers (quantize_dynamic calls them) and a lone layer without weights called on
# its own (nn.Softmax on the model's output). DataLoader worker processes say so and record no iteration.
#
# Series: the module's class ("ResNet"), its precision when not float32 ("MLP float16"), a
# quantized copy ("MLP quantized"), TorchScript ("MLP traced", "MLP scripted", "MLP frozen", or
# the file it was loaded from), then "#2", "#3" for further instances under one name. Batch: the
# leading dimension of the first tensor argument (a list of tensors: its length).
#
# Threads: one iteration is open at a time in the process; a root called on another thread while
# one is open is not seen (docs/python.md).
import collections
import ctypes
import functools
import sys
import weakref

import torch
import torch.utils.hooks
from torch.nn.modules import module as _mm

_lib = ctypes.PyDLL(None)  # the GIL stays held: no release and retake per call
_begin = _lib.infprof_py_begin
_begin.argtypes = ()
_begin.restype = ctypes.c_int
_end = _lib.infprof_py_end
_end.argtypes = (ctypes.c_char_p, ctypes.c_longlong, ctypes.c_int)
_end.restype = None
# The same two as builtins the library makes (no ctypes per call), where it can.
try:
    _builtin = _lib.infprof_py_builtin
    _builtin.argtypes = (ctypes.c_int,)
    _builtin.restype = ctypes.c_void_p
    _b, _e = _builtin(0), _builtin(1)
    if _b and _e:
        _begin = ctypes.cast(_b, ctypes.py_object).value
        _end = ctypes.cast(_e, ctypes.py_object).value
except Exception:
    pass
_setup = _lib.infprof_py_setup
_setup.argtypes = (ctypes.c_int,)
_setup.restype = None
_state = _lib.infprof_py_state
_state.argtypes = (ctypes.c_int,)
_state.restype = ctypes.c_int

PY_HOOKED, PY_NO_HOOKS, PY_WORKER = 3, 4, 6

_Tensor = torch.Tensor
_pre_global = _mm._global_forward_pre_hooks
_ID = torch.utils.hooks.RemovableHandle(collections.OrderedDict()).id  # a key of our own in torch's dicts
_exc_info = sys.exc_info

_root = None  # the module whose call is the open iteration, its label and batch
_root_label = b""
_root_batch = 0
_names = {}  # id(module) -> (weakref, label bytes, or None: never an iteration)
_taken = {}  # label -> instances named so far
_origin = weakref.WeakKeyDictionary()  # TorchScript module -> "traced", file name, ...
_armed = False


def _arm():
    global _armed
    _pre_global[_ID] = _pre
    _armed = True


def _disarm():
    global _armed
    _pre_global.pop(_ID, None)
    _armed = False


_NEVER = ("torchvision.transforms", "torch.nn.modules.loss", "torch.ao.quantization",
          "torch.quantization")


def _never(m):
    """Input transforms, losses, quantization observers, or a container of nothing else."""
    if (type(m).__module__ or "").startswith(_NEVER):
        return True
    kids = list(m.children())
    return bool(kids) and all(_never(k) for k in kids)


def _skip(m):
    """Modules that are never an iteration: _never's, and a lone layer with no weights called on
    its own (nn.Softmax on the model's output: post-processing)."""
    if _never(m):
        return True
    if isinstance(m, torch.jit.ScriptModule) or next(m.children(), None) is not None:
        return False  # a frozen module's weights are constants, its layers inlined
    return next(m.parameters(), None) is None and next(m.buffers(), None) is None


def _label(m):
    base = getattr(m, "original_name", None) if isinstance(m, torch.jit.ScriptModule) else None
    if base is not None:
        how = _origin.get(m)
        if how and how.startswith("file:"):
            base = how[5:]
        else:
            traced = isinstance(m, getattr(torch.jit, "TracedModule", ()))
            base = "%s %s" % (base, how or ("traced" if traced else "scripted"))
    else:
        base = type(m).__name__
        try:
            if any("quantized" in (type(s).__module__ or "") for s in m.modules()):
                base += " quantized"
            else:
                p = next(m.parameters(), None)
                if p is not None and p.dtype != torch.float32:
                    base += " " + str(p.dtype).replace("torch.", "")
        except Exception:
            pass
    n = _taken.get(base, 0) + 1
    _taken[base] = n
    text = base if n == 1 else "%s #%d" % (base, n)
    return text.encode("utf-8", "replace")[:255]


def _name_of(m):
    key = id(m)
    got = _names.get(key)
    if got is not None and got[0]() is m:
        return got[1]
    label = None if _skip(m) else _label(m)
    try:
        ref = weakref.ref(m)
    except TypeError:
        ref = lambda: m  # noqa: E731
    _names[key] = (ref, label)
    return label


# PyTorch 2.1+ calls a forward hook marked "always called" when forward raises; before, a pre-hook
# on the root notices its next call instead (_again).
_ALWAYS = "_forward_hooks_always_called" in torch.nn.Module().__dict__


def _pre(module, inputs):
    """Global pre-hook, armed only while no iteration is open: module is the outermost call."""
    global _root, _root_batch, _root_label, _armed
    if _root is not None:
        return None
    got = _names.get(id(module))
    label = got[1] if got is not None and got[0]() is module else _name_of(module)
    if label is None or not _begin():
        return None
    _root = module
    _root_label = label
    b = 0
    if inputs:
        a = inputs[0]
        if isinstance(a, _Tensor):
            b = a.shape[0] if a.dim() else 0
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], _Tensor):
            b = len(a)
    _root_batch = b
    _pre_global.pop(_ID, None)
    _armed = False
    d = module.__dict__
    try:
        d["_forward_hooks"][_ID] = _post
        if _ALWAYS:
            d["_forward_hooks_always_called"][_ID] = True
        else:
            d["_forward_pre_hooks"][_ID] = _again
    except Exception:
        _finish(module, 0)
    return None


_SECOND = "_forward_hooks_always_called" if _ALWAYS else "_forward_pre_hooks"


def _finish(module, ok):
    global _root, _armed
    _end(_root_label, _root_batch, ok)
    d = module.__dict__
    d["_forward_hooks"].pop(_ID, None)
    d[_SECOND].pop(_ID, None)
    _root = None
    _pre_global[_ID] = _pre
    _armed = True


def _post(module, inputs, output):
    """The root's own forward hook, there only while its call is open: the iteration ends."""
    global _root, _armed
    if module is not _root:
        return None
    _end(_root_label, _root_batch, _exc_info()[0] is None)
    d = module.__dict__
    d["_forward_hooks"].pop(_ID, None)
    d[_SECOND].pop(_ID, None)
    _root = None
    _pre_global[_ID] = _pre
    _armed = True
    return None


def _again(module, inputs):
    """The root called again before its end was seen: the last call raised (PyTorch before 2.1
    calls no forward hook then). It was no iteration; this call is one."""
    if module is _root:
        _finish(module, 0)
        _pre(module, inputs)
    return None


def _setup_around(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _setup(1)
        try:
            return fn(*args, **kwargs)
        finally:
            _setup(0)

    return wrapper


def _tag(fn, how):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        try:
            text = how(args, kwargs) if callable(how) else how
            if text:
                _origin[out] = text
        except Exception:
            pass
        return out

    return wrapper


def _loaded_from(args, kwargs):
    f = args[0] if args else kwargs.get("f")
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        import os

        return "file:" + os.path.basename(os.fsdecode(f))
    return None


def _worker(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _disarm()
        _state(PY_WORKER)
        return fn(*args, **kwargs)

    return wrapper


def install():
    if not _state(0):
        return  # the torch collector is off: nothing to record
    if not hasattr(_mm, "_global_forward_pre_hooks"):
        _state(PY_NO_HOOKS)
        return
    jit = torch.jit
    for name in ("trace", "trace_module"):
        if hasattr(jit, name):
            setattr(jit, name, _setup_around(getattr(jit, name)))
    if hasattr(jit, "load"):
        jit.load = _tag(jit.load, _loaded_from)
    for name, how in (("freeze", "frozen"), ("optimize_for_inference", "optimized")):
        if hasattr(jit, name):
            setattr(jit, name, _tag(getattr(jit, name), how))
    try:
        from torch.utils.data._utils import worker

        worker._worker_loop = _worker(worker._worker_loop)
    except Exception:
        pass
    _arm()
    _state(PY_HOOKED)
