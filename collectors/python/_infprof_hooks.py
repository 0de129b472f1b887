# _infprof_hooks.py: the Python half of collectors/torch_python.c (docs/python.md). In a Python
# program that marks no iteration, the outermost nn.Module call is one.
#
# Cost (docs/performance.md): PyTorch's global module hooks take every module call off its fast
# path, so they are armed only while no iteration is open. The first module call seen while armed
# is the outermost one (the root): the hooks are disarmed for the length of its forward (its inner
# modules keep their fast path) and hooks on that one module, removed at its end, close the
# iteration and re-arm them (and see the same model called on another thread meanwhile). A new
# root (a second model, an int8 copy) is seen at its first call.
#
# Not iterations: calls made while a DataLoader makes a batch (the library knows: its scope is
# open), inside torch.jit.trace (its check calls are set-up), torchvision transforms, losses,
# quantization observers (quantize_dynamic calls them) and a lone layer without weights called on
# its own (nn.Softmax on the model's output). DataLoader worker processes say so and record no
# iteration.
#
# Series: the module's class ("ResNet"), its precision when not float32 ("MLP float16"), a
# quantized copy ("MLP quantized"), TorchScript ("MLP traced", "MLP scripted", "MLP frozen", or
# the file it was loaded from), then "#2", "#3" for further instances under one name. Batch: the
# leading dimension of the first tensor argument (a list of tensors: its length).
#
# Threads: while one thread calls models the hooks are armed only between its iterations; once a
# second thread does, they stay armed (each thread's iteration of its own, its inner calls paying
# PyTorch's slow path) and a thread's potential root is checked on its stack: a call that began
# before its thread was watched is counted as unseen, never timed from the middle.
import collections
import ctypes
import functools
import sys
import threading
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
_end.restype = ctypes.c_int  # 1: another Python thread worked meanwhile, watch every thread
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
_gc = _lib.infprof_py_gc  # a garbage collection starts (1) or stops (0)
_gc.argtypes = (ctypes.c_int, ctypes.c_int)
_gc.restype = None
_missed = _lib.infprof_py_unseen  # a module call on a thread not watched yet: not timed
_missed.argtypes = ()
_missed.restype = None
_all = _lib.infprof_py_threads  # every thread is watched from now on
_all.argtypes = ()
_all.restype = None

PY_HOOKED, PY_NO_HOOKS, PY_WORKER, PY_BROKEN = 3, 4, 6, 8

_Tensor = torch.Tensor
_pre_global = _mm._global_forward_pre_hooks
# A key of our own in torch's hook dicts (the program's handles take the next ones).
_ID = torch.utils.hooks.RemovableHandle(collections.OrderedDict()).id
_exc_info = sys.exc_info

_roots = {}  # thread -> [module, label, batch, pending]: its open iteration
_owner = None  # the one thread that has called models so far
_threads = False  # several have: the hooks stay armed, a potential root is checked on the stack
_unseen = set()  # threads inside a call that began before they were watched
_hooked = {}  # id(module) -> its open iterations (its own hooks stay while any is open)
_off = False  # an error of ours took the hooks out (_broken)
_names = {}  # id(module) -> (weakref, label bytes or None (never an iteration), training flag)
# Layers that act otherwise in train(): a model called in train() mode with one of them is named
# "Net train()", and the report says so where it ran without grad (advice train_mode_in_inference).
_TRAIN_LAYERS = tuple(c for c in (getattr(torch.nn.modules.dropout, "_DropoutNd", None),
                                  getattr(torch.nn.modules.batchnorm, "_BatchNorm", None)) if c)
_taken = {}  # label -> weak references to the instances numbered under it
_origin = weakref.WeakKeyDictionary()  # TorchScript module -> "traced", file name, ...
_ident = threading.get_ident
_getframe = sys._getframe
_CALL = _mm.Module._call_impl.__code__


def _arm():
    _pre_global[_ID] = _hook_pre


def _disarm():
    _pre_global.pop(_ID, None)


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
            if m.training and any(isinstance(s, _TRAIN_LAYERS) for s in m.modules()):
                base += " train()"
        except Exception:
            pass
    # Its own number under this name when it has one (named again after train() and eval():
    # once "Drop #2" for the same model back in eval()); else the first free one: an instance
    # gone (a model made per request) gives its number to the next, so a server that rebuilds
    # its model keeps one series.
    refs = _taken.setdefault(base, [])
    n = next((k for k, r in enumerate(refs) if r() is m), None)
    if n is None:
        n = 0
        while n < len(refs) and refs[n]() is not None:
            n += 1
        try:
            ref = weakref.ref(m)
        except TypeError:
            ref = lambda: m  # noqa: E731
        if n == len(refs):
            refs.append(ref)
        else:
            refs[n] = ref
    text = base if n == 0 else "%s #%d" % (base, n + 1)
    # Whole, for the library to cut on a character with a hash of all of it (two 300-byte class
    # names alike for 255 bytes were cut here to one name); a NUL (a Python str may hold one),
    # which would end the C string there, written as \0 (the report's escape).
    return text.replace("\0", "\\0").encode("utf-8", "replace")[:65536]


def _name_of(m):
    key = id(m)
    got = _names.get(key)
    if got is not None and got[0]() is m and got[2] == getattr(m, "training", False):
        return got[1]
    label = None if _skip(m) else _label(m)
    try:
        ref = weakref.ref(m)
    except TypeError:
        ref = lambda: m  # noqa: E731
    _names[key] = (ref, label, getattr(m, "training", False))  # a frozen module has none
    return label


# PyTorch 2.1+ calls a forward hook marked "always called" when forward raises; before, a pre-hook
# on the root notices its next call instead (_enter).
_ALWAYS = "_forward_hooks_always_called" in torch.nn.Module().__dict__
_OURS = ("_forward_hooks", "_forward_pre_hooks", "_forward_hooks_always_called")


def _nested():
    """The calling module call is inside another one on this thread (two _call_impl frames)."""
    f, n = _getframe(2), 0
    while f is not None:
        if f.f_code is _CALL:
            n += 1
            if n == 2:
                return True
        f = f.f_back
    return False


def _pre(module, inputs):
    """Global pre-hook. One thread: armed only while no iteration is open, so module is the
    outermost call. Several: armed throughout; a thread's first call is checked on its stack."""
    global _owner, _threads
    try:
        tid = _ident()
        if tid in _roots:
            return None  # several threads: inside this thread's iteration
        if not _threads and _owner is not None and tid != _owner:
            _threads = True  # a second thread calls models: stay armed from now on
            _all()
            if not _off:
                _pre_global[_ID] = _hook_pre
        if _threads and _nested():
            if tid not in _unseen:  # it began before we watched this thread: not timed, counted
                _unseen.add(tid)
                _missed()
            return None
        got = _names.get(id(module))
        if got is not None and got[0]() is module and got[2] == getattr(module, "training", False):
            label = got[1]
        else:
            label = _name_of(module)  # new, or train() / eval() since
        if label is None:
            return None
        # The batch before the iteration begins: a tensor subclass's shape runs Python code (a
        # signal handler's exception from there left an iteration begun and never ended).
        b = 0
        if inputs:
            a = inputs[0]
            if isinstance(a, _Tensor):
                s = a.shape  # a torch.Size, empty for a 0-dim tensor
                b = s[0] if s else 0
                if len(s) == 1:  # a batch only beside a shorter 1-dim tensor (torch_pyfast.c)
                    c = inputs[1] if len(inputs) > 1 else None
                    c = c.shape if isinstance(c, _Tensor) else ()
                    b = c[0] if len(c) == 1 and 0 < c[0] < b else 0
            elif isinstance(a, (list, tuple)) and a and isinstance(a[0], _Tensor):
                b = len(a)
        if not _begin():
            return None
        if _unseen:
            _unseen.discard(tid)
        key = id(module)
        n = _hooked.get(key, 0)
        # _enter runs for this very call too when the module's hooks are already there.
        # The exception being handled as it begins: it raised when another one is at its end.
        _roots[tid] = [module, label, b, n > 0, 0, _exc_info()[1]]
        if not _threads:
            _owner = tid
            _pre_global.pop(_ID, None)
        _hooked[key] = n + 1
        if n:
            return None
        d = module.__dict__
        try:
            d["_forward_hooks"][_ID] = _hook_post
            d["_forward_pre_hooks"][_ID] = _enter
            always = d.get("_forward_hooks_always_called") if _ALWAYS else None
            if always is not None:  # a module unpickled from an older torch has none
                always[_ID] = True
        except Exception:
            _close(module, tid, 0)
        return None
    except Exception as e:
        _failed(e)
    return None


def _from_signal_handler(e):
    """The exception came from a Python signal handler of the program's (a SIGTERM handler that
    raises, a SIGALRM deadline), which ran while our hook did: some frame of its traceback is
    a handler's."""
    try:
        import signal

        codes = set()
        for n in signal.valid_signals():
            h = signal.getsignal(n)
            code = getattr(h, "__code__", None) or getattr(getattr(h, "__func__", None),
                                                            "__code__", None)
            if code is not None:
                codes.add(code)
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in codes:
                return True
            tb = tb.tb_next
    except Exception:
        pass
    return False


def _failed(e):
    """An exception inside one of our hooks: the program's own (its signal handler raised while
    we ran) goes on untouched; ours takes the hooks out (fail open)."""
    if _from_signal_handler(e):
        raise e
    _broken()


def _broken():
    """An error of ours inside a hook: the hooks take themselves out for good (fail open), and
    the run says so; the program's call goes on as if we were not there."""
    global _off
    _off = True
    _pre_global.pop(_ID, None)
    for r in list(_roots.values()):
        d = getattr(r[0], "__dict__", {})
        for k in ("_forward_hooks", "_forward_pre_hooks", "_forward_hooks_always_called"):
            if isinstance(d.get(k), dict):
                d[k].pop(_ID, None)
    _roots.clear()
    _hooked.clear()
    try:
        _state(PY_BROKEN)
    except Exception:
        pass


def _close(module, tid, ok):
    """This thread's iteration on module ends; its hooks go when none is open on it. Another
    Python thread did torch work while it ran (the library saw it: the hooks were disarmed, its
    module calls unseen): every thread is watched from now on."""
    global _threads
    r = _roots.pop(tid)
    if _end(r[1], r[2], ok) and not _threads:
        _threads = True
        if not _off:
            _pre_global[_ID] = _hook_pre
    key = id(module)
    n = _hooked.pop(key, 1) - 1
    if n > 0:
        _hooked[key] = n
    else:
        d = module.__dict__
        for k in _OURS:
            hooks = d.get(k)
            if hooks is not None:
                hooks.pop(_ID, None)
    if not _threads and not _roots and not _off:
        _pre_global[_ID] = _hook_pre


def _post(module, inputs, output):
    """The root's own forward hook, there while an iteration on it is open: its outermost call
    on this thread ended (a call of it from inside, recursive or from a hook, only counts)."""
    try:
        tid = _ident()
        r = _roots.get(tid)
        if r is not None and r[0] is module:
            if r[4]:
                r[4] -= 1
            else:
                _close(module, tid, _exc_info()[1] is r[5])
        return None
    except Exception as e:
        _failed(e)
    return None


def _enter(module, inputs):
    """The root's own pre-hook, there while an iteration on it is open. The same thread: a call
    from inside its running call (recursion) is part of the iteration; before PyTorch 2.1, with
    no call of it on the stack, its last call raised (no forward hook ran): no iteration; this
    call is one.
    Another thread: a second thread calls the model (the hooks were disarmed: this call is its
    outermost); from now on every thread is watched."""
    try:
        tid = _ident()
        r = _roots.get(tid)
        if r is not None:
            if r[0] is not module:
                return None  # its own iteration's inner call of this module
            if r[3]:  # the call that _pre just began
                r[3] = False
                return None
            # Called again while its outermost call runs (recursion, a hook of the program's
            # calling it): inside the iteration. Before 2.1 it may also mean the last call
            # raised: then no call of it is on the stack.
            if _ALWAYS or _nested():
                r[4] += 1
                return None
            _close(module, tid, 0)
        _pre(module, inputs)
        r = _roots.get(tid)
        if r is not None:
            r[3] = False  # this was its pre-hook
        return None
    except Exception as e:
        _failed(e)
    return None


# The hooks armed: _pre and _post, or the library's builtins that do what they do for the case
# every forward of a one-thread program takes and call them for any other (collectors/
# torch_pyfast.c), made once install() runs.
_hook_pre, _hook_post = _pre, _post


def _fast():
    global _hook_pre, _hook_post
    try:
        make = _lib.infprof_py_fast
        make.argtypes = (ctypes.py_object, ctypes.c_int)
        make.restype = ctypes.c_void_p
        state = (globals(), _names, _roots, _hooked, _pre_global, _ID, _enter, _Tensor,
                 weakref.ref, _ALWAYS, _pre, _post, _broken, _failed, _close)
        p, q = make(state, 0), make(state, 1)
        if p and q:
            _hook_pre = ctypes.cast(p, ctypes.py_object).value
            _hook_post = ctypes.cast(q, ctypes.py_object).value
    except Exception:
        pass


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


def _collected(phase, info):
    # gc.callbacks: the collector's pauses, which make the iterations they fall in slow.
    _gc(1 if phase == "start" else 0, info.get("generation", -1))


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
    try:
        import gc

        gc.callbacks.append(_collected)
    except Exception:
        pass
    _fast()
    _arm()
    _state(PY_HOOKED)
