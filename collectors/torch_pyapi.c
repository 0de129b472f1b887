/*
 * torch_pyapi.c: CPython's C API, looked up once in the process (torch_pyapi.h).
 */
#include "torch_pyapi.h"

#include <dlfcn.h>
#include <stddef.h>

struct ip_py_api ip_py;

#define PYAPI_SYM(field, name) (*(void **)&ip_py.field = dlsym(RTLD_DEFAULT, name)) != NULL

int ip_py_resolve(void)
{
    static int ok = -1;
    if (ok >= 0) return ok;
    *(void **)&ip_py.weak_get = dlsym(RTLD_DEFAULT, "PyWeakref_GetObject");
    *(void **)&ip_py.gil_this = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    return ok = PYAPI_SYM(new_fn, "PyCFunction_NewEx") && PYAPI_SYM(getattr, "PyObject_GetAttr") &&
                PYAPI_SYM(setitem, "PyObject_SetItem") && PYAPI_SYM(delitem, "PyObject_DelItem") &&
                PYAPI_SYM(dict_get, "PyDict_GetItem") && PYAPI_SYM(dict_set, "PyDict_SetItem") &&
                PYAPI_SYM(dict_del, "PyDict_DelItem") && PYAPI_SYM(dict_size, "PyDict_Size") &&
                PYAPI_SYM(long_from_ptr, "PyLong_FromVoidPtr") &&
                PYAPI_SYM(long_from_ul, "PyLong_FromUnsignedLong") &&
                PYAPI_SYM(long_from_l, "PyLong_FromLong") &&
                PYAPI_SYM(as_ll, "PyLong_AsLongLong") && PYAPI_SYM(bool_from, "PyBool_FromLong") &&
                PYAPI_SYM(isinstance, "PyObject_IsInstance") &&
                PYAPI_SYM(compare, "PyObject_RichCompareBool") &&
                PYAPI_SYM(size, "PyObject_Size") && PYAPI_SYM(seq_get, "PySequence_GetItem") &&
                PYAPI_SYM(list_new, "PyList_New") && PYAPI_SYM(list_set, "PyList_SetItem") &&
                PYAPI_SYM(list_get, "PyList_GetItem") && PYAPI_SYM(tuple_get, "PyTuple_GetItem") &&
                PYAPI_SYM(call, "PyObject_CallFunctionObjArgs") &&
                PYAPI_SYM(intern, "PyUnicode_InternFromString") &&
                PYAPI_SYM(bytes, "PyBytes_AsString") && PYAPI_SYM(occurred, "PyErr_Occurred") &&
                PYAPI_SYM(clear, "PyErr_Clear") && PYAPI_SYM(exc_info, "PyErr_GetExcInfo") &&
                PYAPI_SYM(incref, "Py_IncRef") && PYAPI_SYM(decref, "Py_DecRef") &&
                PYAPI_SYM(matches, "PyErr_ExceptionMatches") && PYAPI_SYM(fetch, "PyErr_Fetch") &&
                PYAPI_SYM(normalize, "PyErr_NormalizeException") &&
                PYAPI_SYM(set_tb, "PyException_SetTraceback") &&
                PYAPI_SYM(exc_exception, "PyExc_Exception") &&
                PYAPI_SYM(exc_attribute, "PyExc_AttributeError") &&
                PYAPI_SYM(unicode, "PyUnicode_FromString") && PYAPI_SYM(none, "_Py_NoneStruct") &&
                PYAPI_SYM(yes, "_Py_TrueStruct") && PYAPI_SYM(no, "_Py_FalseStruct");
}
