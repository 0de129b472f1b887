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
 * CPython's C API is looked up in the process (the interpreter exports it), as torch_python.c
 * does: only functions of the stable ABI are called, and torch's hook dicts (OrderedDicts before
 * PyTorch 2.0) only through the abstract object protocol, never PyDict_* (which would bypass an
 * OrderedDict's order). Under the GIL.
 */
#include "torch_config.h"
#include "../profiler/config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define IP_EXPORT __attribute__((visibility("default")))

typedef void PyO; /* PyObject */

int infprof_py_begin(void);
void infprof_py_end(const char *label, long long batch, int ok);

struct pyf_method_def {
    const char *name;
    void *meth;
    int flags;
    const char *doc;
};
enum { PYF_METH_FASTCALL = 0x0080 };

static struct {
    PyO *(*new_fn)(struct pyf_method_def *, PyO *, PyO *);
    PyO *(*getattr)(PyO *, PyO *);
    int (*setitem)(PyO *, PyO *, PyO *);
    int (*delitem)(PyO *, PyO *);
    PyO *(*dict_get)(PyO *, PyO *); /* borrowed */
    int (*dict_set)(PyO *, PyO *, PyO *);
    int (*dict_del)(PyO *, PyO *);
    intptr_t (*dict_size)(PyO *);
    PyO *(*long_from_ptr)(void *);
    PyO *(*long_from_ul)(unsigned long);
    PyO *(*long_from_l)(long);
    long long (*as_ll)(PyO *);
    int (*isinstance)(PyO *, PyO *);
    PyO *(*weak_get)(PyO *); /* PyWeakref_GetObject: borrowed */
    int (*compare)(PyO *, PyO *, int);
    intptr_t (*size)(PyO *);
    PyO *(*seq_get)(PyO *, intptr_t);
    PyO *(*list_new)(intptr_t);
    int (*list_set)(PyO *, intptr_t, PyO *); /* steals */
    PyO *(*list_get)(PyO *, intptr_t);       /* borrowed */
    PyO *(*tuple_get)(PyO *, intptr_t);      /* borrowed */
    PyO *(*call)(PyO *, ...);                /* PyObject_CallFunctionObjArgs */
    PyO *(*intern)(const char *);
    char *(*bytes)(PyO *);
    PyO *(*occurred)(void);
    void (*clear)(void);
    void (*exc_info)(PyO **, PyO **, PyO **);
    void (*incref)(PyO *);
    void (*decref)(PyO *);
    int (*matches)(PyO *);                 /* PyErr_ExceptionMatches */
    void (*fetch)(PyO **, PyO **, PyO **); /* PyErr_Fetch */
    void (*normalize)(PyO **, PyO **, PyO **);
    int (*set_tb)(PyO *, PyO *);          /* PyException_SetTraceback */
    PyO **exc_exception, **exc_attribute; /* &PyExc_Exception, &PyExc_AttributeError */
    PyO *(*unicode)(const char *);
    PyO *none, *yes, *no;
} c;

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
    c.incref(c.none);
    return c.none;
}

static PyO *call_py(PyO *f, PyO *const *args, intptr_t nargs)
{
    return nargs == 2 ? c.call(f, args[0], args[1], NULL)
                      : c.call(f, args[0], args[1], args[2], NULL);
}

/* An error inside our own path: the Python side's _broken takes the hooks out (fail open). */
static PyO *broken(void)
{
    c.clear();
    PyO *r = c.call(ctx[CTX_BROKEN], NULL);
    if (r) c.decref(r);
    c.clear();
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
    return c.dict_get(ctx[CTX_GLOBALS], name) == value;
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
    if (!c.matches(*c.exc_exception)) return NULL;
    PyO *t = NULL, *v = NULL, *tb = NULL;
    c.fetch(&t, &v, &tb);
    c.normalize(&t, &v, &tb);
    if (v && tb) c.set_tb(v, tb);
    PyO *r = v ? c.call(ctx[CTX_FAILED], v, NULL) : none_ref();
    if (t) c.decref(t);
    if (v) c.decref(v);
    if (tb) c.decref(tb);
    return r;
}

/* The module's training flag as getattr(module, "training", False) gives it (a new reference);
 * NULL: the read raised something else than AttributeError (pending). */
static PyO *training_of(PyO *module)
{
    PyO *t = c.getattr(module, s_training);
    if (!t) {
        if (!c.matches(*c.exc_attribute)) return NULL;
        c.clear();
        c.incref(c.no);
        t = c.no;
    }
    return t;
}

/* The batch of the call's inputs: the leading dimension of its first tensor, 0 for no input or
 * a 0-dim tensor; -1 another first input (the Python side's to read); -2 the read raised
 * (pending). */
static long long batch_of(PyO *inputs)
{
    intptr_t n = c.size(inputs);
    if (n < 0) return -2;
    if (n == 0) return 0;
    PyO *a = c.tuple_get(inputs, 0);
    if (!a) return -2;
    int is = c.isinstance(a, ctx[CTX_TENSOR]);
    if (is < 0) return -2;
    if (!is) return -1;
    PyO *s = c.getattr(a, s_shape);
    if (!s) return -2;
    long long b = 0;
    intptr_t dims = c.size(s);
    if (dims > 0) {
        PyO *d0 = c.seq_get(s, 0);
        b = d0 ? c.as_ll(d0) : -1;
        if (d0) c.decref(d0);
        if (b < 0) /* a symbolic size: unknown, as the Python side's end reads it */
            c.clear(), b = 0;
    } else if (dims < 0) {
        c.decref(s);
        return -2;
    }
    c.decref(s);
    return b;
}

/* The hooks' state lets the common path run: one thread so far and this is it, no iteration
 * open, the hooks not taken out. Runs no Python code. */
static int one_thread_idle(unsigned long me)
{
    PyO *owner = c.dict_get(ctx[CTX_GLOBALS], s_owner);
    if (!global_is(s_threads, c.no) || !global_is(s_off, c.no) || !owner || owner == c.none ||
        c.dict_size(ctx[CTX_ROOTS]) != 0 || c.dict_size(ctx[CTX_HOOKED]) != 0)
        return 0;
    long long o = c.as_ll(owner);
    if (o == -1 && c.occurred()) c.clear();
    return (unsigned long long)o == (unsigned long long)me;
}

/* The label of a module named before, when this is still that instance with training flag t (a
 * new reference); NULL otherwise. *never: named, and never an iteration. Runs no Python code. */
static PyO *known_label(PyO *module, PyO *t, int *never)
{
    *never = 0;
    PyO *key = c.long_from_ptr(module);
    if (!key) return c.clear(), NULL;
    PyO *got = c.dict_get(ctx[CTX_NAMES], key);
    c.decref(key);
    if (!got) return NULL;
    PyO *ref = c.tuple_get(got, 0), *label = c.tuple_get(got, 1), *flag = c.tuple_get(got, 2);
    if (!ref || !label || !flag || c.isinstance(ref, ctx[CTX_WEAKREF]) != 1) return c.clear(), NULL;
    if (c.weak_get(ref) != module) return c.clear(), NULL;
    if (flag != t && c.compare(flag, t, PYF_EQ) != 1) return c.clear(), NULL;
    if (label == c.none) *never = 1;
    c.incref(label);
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
        c.decref(t);
        return raised();
    }
    int never = 0;
    PyO *label = b >= 0 && one_thread_idle(me) ? known_label(module, t, &never) : NULL;
    c.decref(t);
    if (never) {
        c.decref(label);
        return none_ref();
    }
    if (!label) return call_py(ctx[CTX_PRE], args, nargs);
    if (!infprof_py_begin()) {
        c.decref(label);
        return none_ref();
    }
    /* From here on as _pre: the root, its hooks, the global one disarmed. The root's record
     * keeps the exception being handled as it began (sys.exc_info()[1]): it raised when another
     * one is being handled at its end (a model called from an except block was taken for one
     * that raised). */
    PyO *et = NULL, *ev = NULL, *etb = NULL;
    c.exc_info(&et, &ev, &etb);
    if (et) c.decref(et);
    if (etb) c.decref(etb);
    if (!ev) c.incref(c.none), ev = c.none;
    PyO *tid = c.long_from_ul(me), *key = c.long_from_ptr(module), *r = c.list_new(6),
        *one = c.long_from_l(1), *bo = c.long_from_l((long)b), *zero = c.long_from_l(0);
    if (!tid || !key || !r || !one || !bo || !zero) goto fail;
    c.incref(module), c.incref(c.no);
    c.list_set(r, 0, module), c.list_set(r, 1, label), c.list_set(r, 2, bo), label = bo = NULL;
    c.list_set(r, 3, c.no), c.list_set(r, 4, zero), c.list_set(r, 5, ev), zero = ev = NULL;
    if (c.dict_set(ctx[CTX_ROOTS], tid, r) || c.dict_set(ctx[CTX_HOOKED], key, one)) goto fail;
    if (c.delitem(ctx[CTX_PRE_GLOBAL], ctx[CTX_ID])) c.clear();
    PyO *d = c.getattr(module, s_dict);
    int bad = !d;
    if (d) {
        PyO *fwd = c.dict_get(d, s_fwd), *pre = c.dict_get(d, s_fwd_pre),
            *always = ctx[CTX_ALWAYS] == c.yes ? c.dict_get(d, s_always) : NULL;
        bad = !fwd || !pre || c.setitem(fwd, ctx[CTX_ID], fn[1]) ||
              c.setitem(pre, ctx[CTX_ID], ctx[CTX_ENTER]) ||
              (always && always != c.none && c.setitem(always, ctx[CTX_ID], c.yes));
        c.decref(d);
    }
    PyO *out = NULL;
    if (bad) { /* as _pre: its hooks could not go on it, this call is no iteration */
        c.clear();
        out = c.call(ctx[CTX_CLOSE], module, tid, c.no, NULL);
        if (out) c.decref(out);
    }
    c.decref(tid), c.decref(key), c.decref(r), c.decref(one);
    if (bad && !out) return broken();
    return none_ref();
fail:
    if (tid) c.decref(tid);
    if (key) c.decref(key);
    if (r) c.decref(r);
    if (one) c.decref(one);
    if (bo) c.decref(bo);
    if (zero) c.decref(zero);
    if (ev) c.decref(ev);
    if (label) c.decref(label);
    return abandon();
}

/* post(module, inputs, output): the root's own forward hook. */
static PyO *pyf_post(PyO *self, PyO *const *args, intptr_t nargs)
{
    (void)self;
    if (nargs != 3) return none_ref();
    PyO *module = args[0];
    if (!global_is(s_threads, c.no) || !global_is(s_off, c.no))
        return call_py(ctx[CTX_POST], args, nargs);
    PyO *tid = c.long_from_ul((unsigned long)pthread_self());
    if (!tid) return broken();
    PyO *r = c.dict_get(ctx[CTX_ROOTS], tid);
    if (!r || c.list_get(r, 0) != module) { /* not its iteration's call: nothing to do */
        c.decref(tid);
        c.clear();
        return none_ref();
    }
    PyO *depth = c.list_get(r, 4);
    if (!depth || c.as_ll(depth) != 0) { /* a call of it from inside its own ends */
        c.decref(tid);
        c.clear();
        return call_py(ctx[CTX_POST], args, nargs);
    }
    /* _close(module, tid, ok): its iteration ends, its hooks go when none is open on it. It
     * raised when another exception is being handled than as it began (PyTorch 2.1+ calls an
     * always-called hook from its except block). */
    PyO *t = NULL, *v = NULL, *tb = NULL;
    c.exc_info(&t, &v, &tb);
    PyO *began = c.list_get(r, 5);
    int ok = began ? (v ? v : c.none) == began : !v;
    if (!began) c.clear();
    if (t) c.decref(t);
    if (v) c.decref(v);
    if (tb) c.decref(tb);
    c.incref(r);
    int bad = c.dict_del(ctx[CTX_ROOTS], tid);
    c.decref(tid);
    PyO *label = c.list_get(r, 1), *b = c.list_get(r, 2);
    const char *text = label ? c.bytes(label) : NULL;
    long long batch = b ? c.as_ll(b) : 0;
    if (!text || batch < 0) c.clear();
    infprof_py_end(text ? text : "", batch < 0 ? 0 : batch, ok);
    c.decref(r);
    PyO *key = c.long_from_ptr(module);
    if (bad || !key) {
        if (key) c.decref(key);
        return broken();
    }
    PyO *n = c.dict_get(ctx[CTX_HOOKED], key);
    long long left = n ? c.as_ll(n) - 1 : 0;
    if (n && c.dict_del(ctx[CTX_HOOKED], key)) bad = 1;
    if (left > 0) {
        PyO *lo = c.long_from_l((long)left);
        bad |= !lo || c.dict_set(ctx[CTX_HOOKED], key, lo);
        if (lo) c.decref(lo);
    } else {
        PyO *d = c.getattr(module, s_dict);
        if (!d) {
            bad = 1;
        } else {
            PyO *names[3] = {s_fwd, s_fwd_pre, s_always};
            for (int k = 0; k < 3; k++) {
                PyO *hooks = c.dict_get(d, names[k]);
                if (hooks && hooks != c.none && c.delitem(hooks, ctx[CTX_ID])) c.clear();
            }
            c.decref(d);
        }
    }
    c.decref(key);
    if (bad) return broken();
    if (c.dict_size(ctx[CTX_ROOTS]) == 0 && global_is(s_off, c.no) && global_is(s_threads, c.no) &&
        c.setitem(ctx[CTX_PRE_GLOBAL], ctx[CTX_ID], fn[0]))
        return broken();
    return none_ref();
}

static struct pyf_method_def defs[2] = {
    {"infprof_pre", (void *)pyf_pre, PYF_METH_FASTCALL,
     "infprof_pre(module, inputs)\n--\n\ninfprof's global forward pre-hook (the library's C)."},
    {"infprof_post", (void *)pyf_post, PYF_METH_FASTCALL,
     "infprof_post(module, inputs, output)\n--\n\ninfprof's forward hook on the outermost"
     " module (the library's C)."},
};

#define PYF_SYM(field, name) (*(void **)&c.field = dlsym(RTLD_DEFAULT, name)) != NULL

static int resolve(void)
{
    return PYF_SYM(new_fn, "PyCFunction_NewEx") && PYF_SYM(getattr, "PyObject_GetAttr") &&
           PYF_SYM(setitem, "PyObject_SetItem") && PYF_SYM(delitem, "PyObject_DelItem") &&
           PYF_SYM(dict_get, "PyDict_GetItem") && PYF_SYM(dict_set, "PyDict_SetItem") &&
           PYF_SYM(dict_del, "PyDict_DelItem") && PYF_SYM(dict_size, "PyDict_Size") &&
           PYF_SYM(long_from_ptr, "PyLong_FromVoidPtr") &&
           PYF_SYM(long_from_ul, "PyLong_FromUnsignedLong") &&
           PYF_SYM(long_from_l, "PyLong_FromLong") && PYF_SYM(as_ll, "PyLong_AsLongLong") &&
           PYF_SYM(isinstance, "PyObject_IsInstance") && PYF_SYM(weak_get, "PyWeakref_GetObject") &&
           PYF_SYM(compare, "PyObject_RichCompareBool") && PYF_SYM(size, "PyObject_Size") &&
           PYF_SYM(seq_get, "PySequence_GetItem") && PYF_SYM(list_new, "PyList_New") &&
           PYF_SYM(list_set, "PyList_SetItem") && PYF_SYM(list_get, "PyList_GetItem") &&
           PYF_SYM(tuple_get, "PyTuple_GetItem") && PYF_SYM(call, "PyObject_CallFunctionObjArgs") &&
           PYF_SYM(intern, "PyUnicode_InternFromString") && PYF_SYM(bytes, "PyBytes_AsString") &&
           PYF_SYM(occurred, "PyErr_Occurred") && PYF_SYM(clear, "PyErr_Clear") &&
           PYF_SYM(exc_info, "PyErr_GetExcInfo") && PYF_SYM(incref, "Py_IncRef") &&
           PYF_SYM(decref, "Py_DecRef") && PYF_SYM(matches, "PyErr_ExceptionMatches") &&
           PYF_SYM(fetch, "PyErr_Fetch") && PYF_SYM(normalize, "PyErr_NormalizeException") &&
           PYF_SYM(set_tb, "PyException_SetTraceback") &&
           PYF_SYM(exc_exception, "PyExc_Exception") &&
           PYF_SYM(exc_attribute, "PyExc_AttributeError") &&
           PYF_SYM(unicode, "PyUnicode_FromString") && PYF_SYM(none, "_Py_NoneStruct") &&
           PYF_SYM(yes, "_Py_TrueStruct") && PYF_SYM(no, "_Py_FalseStruct");
}

/* The Python side's state (a tuple in CTX_* order), once; then builtin `which` (0 pre, 1 post),
 * a borrowed reference we keep. NULL: anything missing, the Python hooks stay. Under the GIL
 * (ctypes.PyDLL). */
IP_EXPORT void *infprof_py_fast(void *state, int which);
void *infprof_py_fast(void *state, int which)
{
    if (which < 0 || which > 1 || !ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_PYTHON_FAST))
        return NULL;
    if (!fn[0]) {
        if (!state || !resolve() || c.size(state) != CTX_N) {
            if (c.clear) c.clear();
            return NULL;
        }
        for (int k = 0; k < CTX_N; k++)
            if (!(ctx[k] = c.tuple_get(state, k))) return c.clear(), NULL;
        c.incref(state); /* kept: its items stay ours */
        s_threads = c.intern("_threads"), s_off = c.intern("_off"), s_owner = c.intern("_owner");
        s_training = c.intern("training"), s_shape = c.intern("shape"),
        s_dict = c.intern("__dict__"), s_fwd = c.intern("_forward_hooks"),
        s_fwd_pre = c.intern("_forward_pre_hooks"),
        s_always = c.intern("_forward_hooks_always_called");
        PyO *where = c.unicode("_infprof_hooks"); /* their __module__, as the Python hooks' */
        PyO *post = where ? c.new_fn(&defs[1], NULL, where) : NULL,
            *pre = where ? c.new_fn(&defs[0], NULL, where) : NULL;
        if (!s_threads || !s_off || !s_owner || !s_training || !s_shape || !s_dict || !s_fwd ||
            !s_fwd_pre || !s_always || !pre || !post) {
            c.clear();
            return NULL; /* a few references leaked at most, once */
        }
        fn[1] = post;
        fn[0] = pre;
    }
    return fn[which];
}
