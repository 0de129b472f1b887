/*
 * torch_pyapi.h: CPython's C API as the library calls it (torch_pyapi.c): looked up in the
 * process, never linked (the interpreter exports it; a libtorch program has none). Only functions
 * of the stable ABI, and PyMethodDef's layout (stable too). Used by the Python bridge's builtins
 * (torch_python.c) and the module hooks' common path (torch_pyfast.c), under the GIL.
 */
#ifndef INFPROF_TORCH_PYAPI_H
#define INFPROF_TORCH_PYAPI_H

#include <stdint.h>

typedef void PyO; /* PyObject */

struct ip_py_method_def {
    const char *name;
    void *meth;
    int flags;
    const char *doc;
};
enum { IP_PY_METH_NOARGS = 0x0004, IP_PY_METH_FASTCALL = 0x0080 };

struct ip_py_api {
    PyO *(*new_fn)(struct ip_py_method_def *, PyO *, PyO *);
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
    PyO *(*bool_from)(long); /* PyBool_FromLong */
    int (*isinstance)(PyO *, PyO *);
    PyO *(*weak_get)(PyO *); /* PyWeakref_GetObject: borrowed; NULL where gone (3.15) */
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
    void *(*gil_this)(void); /* PyGILState_GetThisThreadState, without the GIL; NULL none */
};
extern struct ip_py_api ip_py;

/* 1 once every function is found (PyWeakref_GetObject may be missing: weak_get NULL); 0 not a
 * Python process, or an interpreter without one of them. Under the GIL. */
int ip_py_resolve(void);

#endif
