/*
 * torch_pyfast.c: the Python module hooks' common path in C (docs/python.md, issue 49). On a
 * small eager model the hooks' Python (_pre on the root's call, _post and _close at its end) was
 * most of the defaults' cost: about 19 k instructions a forward of a 20-layer MLP, 1.2% of it.
 *
 * The Python side (collectors/python/_infprof_hooks.py) hands us its state once (infprof_py_fast)
 * and arms the two builtins made here in place of its _pre and _post. Each does what the Python
 * one does for the case every forward of a one-thread program takes, on the very same objects
 * (_roots, _hooked, torch's hook dicts), and hands any other case to the Python one unchanged:
 *  - pre (the global pre-hook): one thread so far, that thread, no iteration open, the module
 *    already named (_names, same instance, same training flag), its first input a tensor or none.
 *    Else the Python _pre, before anything was done.
 *  - post (the root's forward hook): its outermost call ends, the one open iteration of it. Else
 *    the Python _post.
 * An error of the C API (none is expected) is the Python side's: its _broken takes the hooks out.
 *
 * CPython's C API as torch_pyapi.h has it; torch's hook dicts (OrderedDicts before PyTorch 2.0)
 * only through the abstract object protocol, never PyDict_* (which would bypass an OrderedDict's
 * order). Under the GIL.
 */
#include "torch_config.h"
#include "torch_internal.h"
#include "torch_pyapi.h"
#include "../profiler/config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define IP_EXPORT __attribute__((visibility("default")))

/* What the Python side handed over (infprof_py_fast), in its order. */
enum {
    CTX_GLOBALS,    /* the hooks module's globals: _threads, _off, _owner */
    CTX_NAMES,      /* id(module) -> (weakref, label or None, training flag) */
    CTX_ROOTS,      /* thread -> [module, label, batch, pending, depth] */
    CTX_HOOKED,     /* id(module) -> iterations open on it */
    CTX_PRE_GLOBAL, /* torch's global forward pre-hooks */
    CTX_ID,         /* our key in torch's hook dicts */
    CTX_ENTER,      /* the root's own pre-hook (_enter) */
    CTX_TENSOR,     /* torch.Tensor */
    CTX_WEAKREF,    /* weakref.ref */
    CTX_ALWAYS,     /* PyTorch 2.1+: a forward hook marked always called */
    CTX_PRE,        /* the Python _pre */
    CTX_POST,       /* the Python _post */
    CTX_BROKEN,     /* the Python _broken */
    CTX_FAILED,     /* the Python _failed: an exception inside a hook */
    CTX_CLOSE,      /* the Python _close */
    CTX_N
};
static PyO *ctx[CTX_N], *fn[2];
static PyO *s_threads, *s_off, *s_owner, *s_training, *s_shape, *s_dict, *s_fwd, *s_fwd_pre,
    *s_always;

#define PYF_EQ 2 /* Py_EQ */

static PyO *none_ref(void)
{
    ip_py.incref(ip_py.none);
    return ip_py.none;
}

static PyO *call_py(PyO *f, PyO *const *args, intptr_t nargs)
{
    return nargs == 2 ? ip_py.call(f, args[0], args[1], NULL)
                      : ip_py.call(f, args[0], args[1], args[2], NULL);
}

/* An error inside our own path: the Python side's _broken takes the hooks out (fail open). */
static PyO *broken(void)
{
    ip_py.clear();
    PyO *r = ip_py.call(ctx[CTX_BROKEN], NULL);
    if (r) ip_py.decref(r);
    ip_py.clear();
    return none_ref();
}

/* The same once an iteration was begun here: it ends, not one (as _pre's _close(module, tid, 0)).
 */
static PyO *abandon(void)
{
    infprof_py_end("", 0, 0);
    return broken();
}

static int global_is(PyO *name, PyO *value)
{
    return ip_py.dict_get(ctx[CTX_GLOBALS], name) == value;
}

/* Reading a module's training flag or its input's shape may run Python code (a TorchScript
 * module's __getattr__, a tensor subclass's __torch_function__), and with it a signal handler of
 * the program's, another thread, or our own hooks. What such a read raised is handled as _pre
 * handles it (the fresh-eyes check of 2026-11-29 lost Ctrl-C here): what is not an Exception
 * (KeyboardInterrupt, SystemExit) goes on to the program; an Exception goes to _failed, which
 * raises it again when a signal handler of the program's raised it and takes the hooks out
 * otherwise. NULL: raised. */
static PyO *raised(void)
{
    if (!ip_py.matches(*ip_py.exc_exception)) return NULL;
    PyO *t = NULL, *v = NULL, *tb = NULL;
    ip_py.fetch(&t, &v, &tb);
    ip_py.normalize(&t, &v, &tb);
    if (v && tb) ip_py.set_tb(v, tb);
    PyO *r = v ? ip_py.call(ctx[CTX_FAILED], v, NULL) : none_ref();
    if (t) ip_py.decref(t);
    if (v) ip_py.decref(v);
    if (tb) ip_py.decref(tb);
    return r;
}

/* The module's training flag as getattr(module, "training", False) gives it (a new reference);
 * NULL: the read raised something else than AttributeError (pending). */
static PyO *training_of(PyO *module)
{
    PyO *t = ip_py.getattr(module, s_training);
    if (!t) {
        if (!ip_py.matches(*ip_py.exc_attribute)) return NULL;
        ip_py.clear();
        ip_py.incref(ip_py.no);
        t = ip_py.no;
    }
    return t;
}

/* The length of a 1-dim tensor, 0 for anything else; -2 the read raised (pending). */
static long long length_1d(PyO *a)
{
    int is = ip_py.isinstance(a, ctx[CTX_TENSOR]);
    if (is <= 0) return is < 0 ? -2 : 0;
    PyO *s = ip_py.getattr(a, s_shape);
    if (!s) return -2;
    long long n = 0;
    intptr_t dims = ip_py.size(s);
    if (dims == 1) {
        PyO *d0 = ip_py.seq_get(s, 0);
        n = d0 ? ip_py.as_ll(d0) : -2;
        if (d0) ip_py.decref(d0);
        if (n < 0 && d0) ip_py.clear(), n = 0; /* a symbolic size: unknown */
    } else if (dims < 0) {
        n = -2;
    }
    ip_py.decref(s);
    return n;
}

/* The batch of the call's inputs: the leading dimension of its first tensor, 0 for no input, a
 * 0-dim tensor or unknown; -1 another first input (the Python side's to read); -2 the read
 * raised (pending). A 1-dim first tensor tells a batch only beside a shorter 1-dim one, that
 * one's length (EmbeddingBag's tokens and offsets: one offset a sample); alone, or beside one as
 * long (a sequence's tokens and positions, or a recommender's user and item ids), none: it may
 * as well be one sample's (a server's text model read its token count as its batch, 9 to 536
 * where its requests came 1 to 8 at a time: a fresh-eyes check). */
static long long batch_of(PyO *inputs)
{
    intptr_t n = ip_py.size(inputs);
    if (n < 0) return -2;
    if (n == 0) return 0;
    PyO *a = ip_py.tuple_get(inputs, 0);
    if (!a) return -2;
    int is = ip_py.isinstance(a, ctx[CTX_TENSOR]);
    if (is < 0) return -2;
    if (!is) return -1;
    PyO *s = ip_py.getattr(a, s_shape);
    if (!s) return -2;
    long long b = 0;
    intptr_t dims = ip_py.size(s);
    if (dims > 0) {
        PyO *d0 = ip_py.seq_get(s, 0);
        b = d0 ? ip_py.as_ll(d0) : -1;
        if (d0) ip_py.decref(d0);
        if (b < 0) /* a symbolic size: unknown, as the Python side's end reads it */
            ip_py.clear(), b = 0;
    } else if (dims < 0) {
        ip_py.decref(s);
        return -2;
    }
    ip_py.decref(s);
    if (dims == 1 && b > 0) {
        PyO *c = n > 1 ? ip_py.tuple_get(inputs, 1) : NULL;
        if (n > 1 && !c) return -2;
        long long m = c ? length_1d(c) : 0;
        if (m == -2) return -2;
        b = m > 0 && m < b ? m : 0;
    }
    return b;
}

/* The hooks' state lets the common path run: one thread so far and this is it, no iteration
 * open, the hooks not taken out. Runs no Python code. */
static int one_thread_idle(unsigned long me)
{
    PyO *owner = ip_py.dict_get(ctx[CTX_GLOBALS], s_owner);
    if (!global_is(s_threads, ip_py.no) || !global_is(s_off, ip_py.no) || !owner ||
        owner == ip_py.none || ip_py.dict_size(ctx[CTX_ROOTS]) != 0 ||
        ip_py.dict_size(ctx[CTX_HOOKED]) != 0)
        return 0;
    long long o = ip_py.as_ll(owner);
    if (o == -1 && ip_py.occurred()) ip_py.clear();
    return (unsigned long long)o == (unsigned long long)me;
}

/* The label of a module named before, when this is still that instance with training flag t (a
 * new reference); NULL otherwise. *never: named, and never an iteration. Runs no Python code. */
static PyO *known_label(PyO *module, PyO *t, int *never)
{
    *never = 0;
    PyO *key = ip_py.long_from_ptr(module);
    if (!key) return ip_py.clear(), NULL;
    PyO *got = ip_py.dict_get(ctx[CTX_NAMES], key);
    ip_py.decref(key);
    if (!got) return NULL;
    PyO *ref = ip_py.tuple_get(got, 0), *label = ip_py.tuple_get(got, 1),
        *flag = ip_py.tuple_get(got, 2);
    if (!ref || !label || !flag || ip_py.isinstance(ref, ctx[CTX_WEAKREF]) != 1)
        return ip_py.clear(), NULL;
    if (ip_py.weak_get(ref) != module) return ip_py.clear(), NULL;
    if (flag != t && ip_py.compare(flag, t, PYF_EQ) != 1) return ip_py.clear(), NULL;
    if (label == ip_py.none) *never = 1;
    ip_py.incref(label);
    return label;
}

/* pre(module, inputs): the global forward pre-hook. */
static PyO *pyf_pre(PyO *self, PyO *const *args, intptr_t nargs)
{
    (void)self;
    if (nargs != 2) return none_ref();
    PyO *module = args[0], *inputs = args[1];
    unsigned long me = (unsigned long)pthread_self(); /* threading.get_ident() */
    if (!one_thread_idle(me)) return call_py(ctx[CTX_PRE], args, nargs);
    /* The reads that may run Python code first, then every check again: what ran may have
     * changed the state (a second thread's first call, the module renamed). */
    PyO *t = training_of(module);
    if (!t) return raised();
    long long b = batch_of(inputs);
    if (b == -2) {
        ip_py.decref(t);
        return raised();
    }
    int never = 0;
    PyO *label = b >= 0 && one_thread_idle(me) ? known_label(module, t, &never) : NULL;
    ip_py.decref(t);
    if (never) {
        ip_py.decref(label);
        return none_ref();
    }
    if (!label) return call_py(ctx[CTX_PRE], args, nargs);
    if (!infprof_py_begin()) {
        ip_py.decref(label);
        return none_ref();
    }
    /* From here on as _pre: the root, its hooks, the global one disarmed. The root's record
     * keeps the exception being handled as it began (sys.exc_info()[1]): it raised when another
     * one is being handled at its end (a model called from an except block was taken for one
     * that raised). */
    PyO *et = NULL, *ev = NULL, *etb = NULL;
    ip_py.exc_info(&et, &ev, &etb);
    if (et) ip_py.decref(et);
    if (etb) ip_py.decref(etb);
    if (!ev) ip_py.incref(ip_py.none), ev = ip_py.none;
    PyO *tid = ip_py.long_from_ul(me), *key = ip_py.long_from_ptr(module), *r = ip_py.list_new(6),
        *one = ip_py.long_from_l(1), *bo = ip_py.long_from_l((long)b), *zero = ip_py.long_from_l(0);
    if (!tid || !key || !r || !one || !bo || !zero) goto fail;
    ip_py.incref(module), ip_py.incref(ip_py.no);
    ip_py.list_set(r, 0, module), ip_py.list_set(r, 1, label), ip_py.list_set(r, 2, bo),
        label = bo = NULL;
    ip_py.list_set(r, 3, ip_py.no), ip_py.list_set(r, 4, zero), ip_py.list_set(r, 5, ev),
        zero = ev = NULL;
    if (ip_py.dict_set(ctx[CTX_ROOTS], tid, r) || ip_py.dict_set(ctx[CTX_HOOKED], key, one))
        goto fail;
    if (ip_py.delitem(ctx[CTX_PRE_GLOBAL], ctx[CTX_ID])) ip_py.clear();
    PyO *d = ip_py.getattr(module, s_dict);
    int bad = !d;
    if (d) {
        PyO *fwd = ip_py.dict_get(d, s_fwd), *pre = ip_py.dict_get(d, s_fwd_pre),
            *always = ctx[CTX_ALWAYS] == ip_py.yes ? ip_py.dict_get(d, s_always) : NULL;
        bad = !fwd || !pre || ip_py.setitem(fwd, ctx[CTX_ID], fn[1]) ||
              ip_py.setitem(pre, ctx[CTX_ID], ctx[CTX_ENTER]) ||
              (always && always != ip_py.none && ip_py.setitem(always, ctx[CTX_ID], ip_py.yes));
        ip_py.decref(d);
    }
    PyO *out = NULL;
    if (bad) { /* as _pre: its hooks could not go on it, this call is no iteration */
        ip_py.clear();
        out = ip_py.call(ctx[CTX_CLOSE], module, tid, ip_py.no, NULL);
        if (out) ip_py.decref(out);
    }
    ip_py.decref(tid), ip_py.decref(key), ip_py.decref(r), ip_py.decref(one);
    if (bad && !out) return broken();
    return none_ref();
fail:
    if (tid) ip_py.decref(tid);
    if (key) ip_py.decref(key);
    if (r) ip_py.decref(r);
    if (one) ip_py.decref(one);
    if (bo) ip_py.decref(bo);
    if (zero) ip_py.decref(zero);
    if (ev) ip_py.decref(ev);
    if (label) ip_py.decref(label);
    return abandon();
}

/* post(module, inputs, output): the root's own forward hook. */
static PyO *pyf_post(PyO *self, PyO *const *args, intptr_t nargs)
{
    (void)self;
    if (nargs != 3) return none_ref();
    PyO *module = args[0];
    if (!global_is(s_threads, ip_py.no) || !global_is(s_off, ip_py.no))
        return call_py(ctx[CTX_POST], args, nargs);
    PyO *tid = ip_py.long_from_ul((unsigned long)pthread_self());
    if (!tid) return broken();
    PyO *r = ip_py.dict_get(ctx[CTX_ROOTS], tid);
    if (!r || ip_py.list_get(r, 0) != module) { /* not its iteration's call: nothing to do */
        ip_py.decref(tid);
        ip_py.clear();
        return none_ref();
    }
    PyO *depth = ip_py.list_get(r, 4);
    if (!depth || ip_py.as_ll(depth) != 0) { /* a call of it from inside its own ends */
        ip_py.decref(tid);
        ip_py.clear();
        return call_py(ctx[CTX_POST], args, nargs);
    }
    /* _close(module, tid, ok): its iteration ends, its hooks go when none is open on it. It
     * raised when another exception is being handled than as it began (PyTorch 2.1+ calls an
     * always-called hook from its except block). */
    PyO *t = NULL, *v = NULL, *tb = NULL;
    ip_py.exc_info(&t, &v, &tb);
    PyO *began = ip_py.list_get(r, 5);
    int ok = began ? (v ? v : ip_py.none) == began : !v;
    if (!began) ip_py.clear();
    if (t) ip_py.decref(t);
    if (v) ip_py.decref(v);
    if (tb) ip_py.decref(tb);
    ip_py.incref(r);
    int bad = ip_py.dict_del(ctx[CTX_ROOTS], tid);
    ip_py.decref(tid);
    PyO *label = ip_py.list_get(r, 1), *b = ip_py.list_get(r, 2);
    const char *text = label ? ip_py.bytes(label) : NULL;
    long long batch = b ? ip_py.as_ll(b) : 0;
    if (!text || batch < 0) ip_py.clear();
    /* Another Python thread did torch work meanwhile: every thread is watched from now on (as
     * _close does), the global hook armed below and kept. */
    int all = infprof_py_end(text ? text : "", batch < 0 ? 0 : batch, ok) &&
              global_is(s_threads, ip_py.no);
    ip_py.decref(r);
    PyO *key = ip_py.long_from_ptr(module);
    if (bad || !key) {
        if (key) ip_py.decref(key);
        return broken();
    }
    PyO *n = ip_py.dict_get(ctx[CTX_HOOKED], key);
    long long left = n ? ip_py.as_ll(n) - 1 : 0;
    if (n && ip_py.dict_del(ctx[CTX_HOOKED], key)) bad = 1;
    if (left > 0) {
        PyO *lo = ip_py.long_from_l((long)left);
        bad |= !lo || ip_py.dict_set(ctx[CTX_HOOKED], key, lo);
        if (lo) ip_py.decref(lo);
    } else {
        PyO *d = ip_py.getattr(module, s_dict);
        if (!d) {
            bad = 1;
        } else {
            PyO *names[3] = {s_fwd, s_fwd_pre, s_always};
            for (int k = 0; k < 3; k++) {
                PyO *hooks = ip_py.dict_get(d, names[k]);
                if (hooks && hooks != ip_py.none && ip_py.delitem(hooks, ctx[CTX_ID]))
                    ip_py.clear();
            }
            ip_py.decref(d);
        }
    }
    ip_py.decref(key);
    if (bad || (all && ip_py.dict_set(ctx[CTX_GLOBALS], s_threads, ip_py.yes))) return broken();
    if (ip_py.dict_size(ctx[CTX_ROOTS]) == 0 && global_is(s_off, ip_py.no) &&
        (all || global_is(s_threads, ip_py.no)) &&
        ip_py.setitem(ctx[CTX_PRE_GLOBAL], ctx[CTX_ID], fn[0]))
        return broken();
    return none_ref();
}

static struct ip_py_method_def defs[2] = {
    {"infprof_pre", (void *)pyf_pre, IP_PY_METH_FASTCALL,
     "infprof_pre(module, inputs)\n--\n\ninfprof's global forward pre-hook (the library's C)."},
    {"infprof_post", (void *)pyf_post, IP_PY_METH_FASTCALL,
     "infprof_post(module, inputs, output)\n--\n\ninfprof's forward hook on the outermost"
     " module (the library's C)."},
};

/* The Python side's state (a tuple in CTX_* order), once; then builtin `which` (0 pre, 1 post),
 * a borrowed reference we keep. NULL: anything missing, the Python hooks stay. Under the GIL
 * (ctypes.PyDLL). */
IP_EXPORT void *infprof_py_fast(void *state, int which);
void *infprof_py_fast(void *state, int which)
{
    if (which < 0 || which > 1 || !ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_PYTHON_FAST))
        return NULL;
    if (!fn[0]) {
        if (!state || !ip_py_resolve() || !ip_py.weak_get || ip_py.size(state) != CTX_N) {
            if (ip_py.clear) ip_py.clear();
            return NULL;
        }
        for (int k = 0; k < CTX_N; k++)
            if (!(ctx[k] = ip_py.tuple_get(state, k))) return ip_py.clear(), NULL;
        ip_py.incref(state); /* kept: its items stay ours */
        s_threads = ip_py.intern("_threads"), s_off = ip_py.intern("_off"),
        s_owner = ip_py.intern("_owner");
        s_training = ip_py.intern("training"), s_shape = ip_py.intern("shape"),
        s_dict = ip_py.intern("__dict__"), s_fwd = ip_py.intern("_forward_hooks"),
        s_fwd_pre = ip_py.intern("_forward_pre_hooks"),
        s_always = ip_py.intern("_forward_hooks_always_called");
        PyO *where = ip_py.unicode("_infprof_hooks"); /* their __module__, as the Python hooks' */
        PyO *post = where ? ip_py.new_fn(&defs[1], NULL, where) : NULL,
            *pre = where ? ip_py.new_fn(&defs[0], NULL, where) : NULL;
        if (!s_threads || !s_off || !s_owner || !s_training || !s_shape || !s_dict || !s_fwd ||
            !s_fwd_pre || !s_always || !pre || !post) {
            ip_py.clear();
            return NULL; /* a few references leaked at most, once */
        }
        fn[1] = post;
        fn[0] = pre;
    }
    return fn[which];
}
