/*
 * NumPy glue: module initialisation and the Python hooks.  This file owns
 * NumPy's C-API tables (SFP8_NPY_IMPORT); the glue's other files use them.
 */
#define SFP8_NPY_IMPORT
#include "glue.h"

int sfp8_set_hooks(PyObject *getter, PyObject *factory, PyObject *contains_fn, PyObject *type_of,
                   PyObject *from_format)
{
    Py_XINCREF(getter);
    Py_XSETREF(state_getter, getter);
    Py_XINCREF(factory);
    Py_XSETREF(descr_factory, factory);
    Py_XINCREF(contains_fn);
    Py_XSETREF(contains_func, contains_fn);
    Py_XINCREF(type_of);
    Py_XSETREF(type_of_func, type_of);
    Py_XINCREF(from_format);
    Py_XSETREF(from_format_func, from_format);
    return 0;
}

PyObject *sfp8_npy_init(PyObject *module)
{
    if (PyArray_ImportNumPyAPI() < 0) return NULL;
    if (PyUFunc_ImportUFuncAPI() < 0) return NULL;
    if (PyType_Ready(&FlagCellType) < 0) return NULL;
    if (PyType_Ready(&StateType) < 0) return NULL;
    ScalarBaseType.tp_base = &PyFloatingArrType_Type;
    if (PyType_Ready(&ScalarBaseType) < 0) return NULL;
    init_builtin_partners();
    Py_INCREF(&FlagCellType);
    Py_INCREF(&StateType);
    Py_INCREF(&ScalarBaseType);
    if (PyModule_AddObject(module, "FlagCell", (PyObject *)&FlagCellType) < 0) return NULL;
    if (PyModule_AddObject(module, "State", (PyObject *)&StateType) < 0) return NULL;
    if (PyModule_AddObject(module, "ScalarBase", (PyObject *)&ScalarBaseType) < 0) return NULL;
    {
        static PyMethodDef m = {"scalar_from_code", (PyCFunction)scalar_from_code, METH_VARARGS,
                                "scalar_from_code(dtype, code)"};
        PyObject *fn = PyCFunction_New(&m, NULL);
        if (!fn || PyModule_AddObject(module, "scalar_from_code", fn) < 0) return NULL;
    }
    Py_RETURN_NONE;
}
