/* NumPy glue entry points (called from the Cython module softfp8/_ext.pyx). */
#ifndef SOFTFP8_NPY_API_H
#define SOFTFP8_NPY_API_H
#include <Python.h>
PyObject *sfp8_npy_init(PyObject *module);
PyObject *sfp8_make_dtype(PyObject *name, PyObject *scalar_type, int parametric, int float_rank);
PyObject *sfp8_new_descr(PyObject *cls, PyObject *format, PyObject *params);
/* np.finfo's constants of a descriptor that its format holds (dtype.c) */
PyObject *sfp8_finfo_constants(PyObject *descr);
/* getter() -> State; factory(family_index, args, kwargs) -> descr;
   contains_fn(a, b) -> bool; type_of(descr) -> descr.type;
   from_format(format) -> descr (descr.__reduce__) */
int sfp8_set_hooks(PyObject *getter, PyObject *factory, PyObject *contains_fn, PyObject *type_of,
                   PyObject *from_format);
/* ml_equivalent(dtype) -> the softfp8 dtype with the codes of an ml_dtypes
   dtype (softfp8/_interop.py), for the casts between them */
int sfp8_set_ml_hook(PyObject *ml_equivalent);
PyObject *sfp8_register_ufuncs(PyObject *dtype_cls, PyObject *numpy_module, PyObject *own_ufuncs);
/* np.clip loops of one DType (npy/pyscalar.c) */
PyObject *sfp8_register_clip(PyObject *dtype_cls);
PyObject *sfp8_new_op_ufunc(int op);
PyObject *sfp8_matmul_wide_ufunc(void);
/* flags of a product computed outside a ufunc: the sticky cell and np.errstate (context.c) */
PyObject *sfp8_publish_flags(PyObject *cell, unsigned int fl, const char *name);
#endif
