/*
 * NumPy glue: the entry points softfp8/_ext.pyx calls (npy_api.h) -- module
 * initialisation and the Python hooks the glue's files need, passed in here
 * once at import (no glue file imports softfp8's Python modules).
 */
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

int sfp8_set_ml_hook(PyObject *ml_equivalent)
{
    sfp8_casts_set_ml_hook(ml_equivalent);
    return 0;
}

PyObject *sfp8_npy_init(PyObject *module)
{
    if (sfp8_npy_import_api() < 0) return NULL;
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
