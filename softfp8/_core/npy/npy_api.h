/* NumPy glue entry points (called from the Cython module softfp8/_ext.pyx). */
#ifndef SOFTFP8_NPY_API_H
#define SOFTFP8_NPY_API_H
#include <Python.h>
PyObject *sfp8_npy_init(PyObject *module);
PyObject *sfp8_make_dtype(PyObject *name, PyObject *scalar_type, int parametric, int float_rank);
PyObject *sfp8_new_descr(PyObject *cls, PyObject *format, PyObject *params);
/* getter() -> State; factory(family_index, args, kwargs) -> descr;
   contains_fn(a, b) -> bool; type_of(descr) -> descr.type;
   from_format(format) -> descr (descr.__reduce__) */
int sfp8_set_hooks(PyObject *getter, PyObject *factory, PyObject *contains_fn, PyObject *type_of,
                   PyObject *from_format);
PyObject *sfp8_register_ufuncs(PyObject *dtype_cls, PyObject *numpy_module, PyObject *own_ufuncs);
/* np.clip loops of one DType (npy/pyscalar.c) */
PyObject *sfp8_register_clip(PyObject *dtype_cls);
PyObject *sfp8_new_op_ufunc(int op);
PyObject *sfp8_matmul_wide_ufunc(void);
#endif
